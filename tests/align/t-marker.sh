#!/bin/bash
# `vmtrace marker`: options, and (inside a QEMU guest only, where the VMM
# ignores the marker port) real emission: records appended, seq continued.
set -eu
. "$VT_SRC/tests/align/lib.sh"
set +e
"$VT_BIN" marker -n 0 -o d 2>err.txt; rc=$?
set -e
[ $rc = 2 ] && grep -q 'bad count' err.txt || fail "bad count not refused (exit $rc)"
set +e; "$VT_BIN" marker 2>/dev/null; rc=$?; set -e
[ $rc = 2 ] || fail "missing -o not refused (exit $rc)"
"$VT_BIN" marker --help | grep -q 'markers.dat' || fail "no help"
virt=$(systemd-detect-virt 2>/dev/null || true)
vendor=$(cat /sys/class/dmi/id/sys_vendor 2>/dev/null || true)
case "$virt:$vendor" in
qemu:*|kvm:*|*:QEMU) ;;
*) skip "not inside a QEMU/KVM guest ($virt): vmtrace marker writes I/O port 0x5f0, only done in a VM whose VMM ignores it (options checked)";;
esac
[ "$(id -u)" = 0 ] || skip "not root: ioperm needs CAP_SYS_RAWIO"
# a kernel built without ioperm (CONFIG_X86_IOPL_IOPERM=n) says ENOSYS; a
# chroot on such a VM passes the check above once systemd-detect-virt is
# installed (Debian 13's test packages bring it) and sees no container
if ! "$VT_BIN" marker -n 3 --interval 1 -o out 2>err.txt; then
	grep -q 'ioperm(0x5f0): Function not implemented' err.txt &&
		skip "this kernel has no ioperm ($(cat err.txt))"
	cat err.txt
	fail "vmtrace marker failed"
fi
"$VT_BIN" marker -n 2 --interval 0 -o out
"$PY" - out/markers.dat <<'PYEOF'
import struct, sys
d = open(sys.argv[1], "rb").read()
assert len(d) == 5 * 48, len(d)
for i in range(5):
    magic, ver, kind, size, addr, val, cpu, seq, b, a = struct.unpack_from("<IHBBQIIQQQ", d, 48 * i)
    assert magic == 0x4b4d5456 and ver == 1 and kind == 1 and size == 4 and addr == 0x5f0
    assert seq == i and val == (0x56 << 24 | i) and a >= b, (i, seq, val, a, b)
print("5 records, seq 0..4, values tagged")
PYEOF
