#!/bin/bash
# `vmtrace marker`: options and bad input (exit codes, messages); where
# this machine runs under KVM, hypercall markers (any user, no port
# access): records appended, seq continued past corrupt records, a
# markers.dat that is a symlink refused (a full disk: faults/
# t-fault-full-disk-marker); and
# (inside a QEMU guest only, where the VMM ignores the marker port) PIO
# emission.
set -eu
. "$VT_SRC/tests/align/lib.sh"
# expect_exit CODE PATTERN -- command...: tests/align/lib.sh
# records FILE N FIRST KIND ADDR: FILE holds N valid records, seq FIRST on
records() {
	"$PY" - "$@" <<'PYEOF'
import os, struct, sys
path, n, first, kind, addr = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5], 0)
d = open(path, "rb").read()
recs = [d[o:o + 48] for o in range(0, len(d) - 47, 48) if d[o:o + 6] == b"VTMK\x01\x00"]
assert len(recs) == n, "%s: %d records, want %d" % (path, len(recs), n)
for i, r in enumerate(recs):
    magic, ver, k, size, a, val, cpu, seq, b, af = struct.unpack("<IHBBQIIQQQ", r)
    assert ver == 1 and k == kind and size == 4 and a == addr, (i, ver, k, size, hex(a))
    assert seq == first + i and val == (0x56 << 24 | seq), (i, seq, hex(val))
    assert 0 < b <= af, (i, b, af)
    assert cpu == 0xffffffff or cpu < os.cpu_count(), (i, cpu)
print("%s: %d records, seq %d..%d, kind %d at 0x%x" % (path, n, first, first + n - 1, kind, addr))
PYEOF
}
expect_exit 2 "marker: bad count '0' (1..1000000)" -- "$VT_BIN" marker -n 0 -o d
"$VT_BIN" marker --help | grep -q 'markers.dat' || fail "no help"
expect_exit 2 "marker: bad interval 'x' (ms)" -- "$VT_BIN" marker --interval x -o d
expect_exit 2 "marker: bad interval '3600001' (ms)" -- "$VT_BIN" marker --interval 3600001 -o d
expect_exit 2 "marker: bad interval '2h' (ms)" -- "$VT_BIN" marker --interval 2h -o d
expect_exit 2 "marker: bad port '0x10000'" -- "$VT_BIN" marker --port 0x10000 -o d
# an outl at 0xfffd would reach past port 0xffff: refused before ioperm
# (which said EINVAL, reported as "no port access")
expect_exit 2 'marker: bad port 0xfffd: a PIO marker writes 4 ports (0..0xfffc)' -- \
	"$VT_BIN" marker --port 0xfffd -o d
expect_exit 2 'usage: vmtrace marker' -- "$VT_BIN" marker --chardev --hypercall -o d
expect_exit 2 'usage: vmtrace marker' -- "$VT_BIN" marker -o d extra
[ ! -e d ] || fail "a refused command created its directory"
touch file
expect_exit 1 'marker: file/d: cannot create: Not a directory' -- "$VT_BIN" marker --hypercall -o file/d
# no port access without root (ioperm refused: EPERM, or ENOSYS where the
# kernel or a container has none): said so, and what needs neither
chmod o+x "$VT_TMP"
mkdir -m 777 nobody
expect_nobody() {
	set +e; setpriv --reuid 65534 --regid 65534 --clear-groups "$VT_BIN" marker -o nobody/m "$@" \
		>out.txt 2>err.txt; local rc=$?; set -e
	[ "$rc" = 4 ] || [ "$rc" = 5 ] || fail "marker as nobody: exit $rc, want 4 or 5 ($(cat err.txt))"
	grep -qF "port markers need root / CAP_SYS_RAWIO, x86; --hypercall needs neither" err.txt ||
		fail "marker as nobody: $(cat err.txt)"
}
if command -v setpriv >/dev/null; then
	expect_nobody
	grep -qF 'marker: ioperm(0x5f0): ' err.txt || fail "PIO as nobody: $(cat err.txt)"
	expect_nobody --chardev
	grep -qF 'marker: ioperm(0xe9): ' err.txt || fail "chardev as nobody: $(cat err.txt)"
fi
# root without CAP_SYS_RAWIO (dropped from the bounding set: ioperm cannot
# succeed, no port is written): EPERM, or ENOSYS without ioperm; the
# message says what root lacks here
expect_root() {
	set +e; setpriv --bounding-set -sys_rawio --inh-caps -sys_rawio "$VT_BIN" marker -o rootm "$@" \
		>out.txt 2>err.txt; local rc=$?; set -e
	[ "$rc" = 4 ] || [ "$rc" = 5 ] || fail "marker as root without CAP_SYS_RAWIO: exit $rc, want 4 or 5 ($(cat err.txt))"
	grep -qF "no port access even as root: a confined guest or a kernel without ioperm; under KVM, --hypercall is the way" err.txt ||
		fail "marker as root without CAP_SYS_RAWIO: $(cat err.txt)"
}
if command -v setpriv >/dev/null && [ "$(id -u)" = 0 ] &&
   setpriv --bounding-set -sys_rawio --inh-caps -sys_rawio true 2>/dev/null; then
	expect_root
	grep -qF 'marker: ioperm(0x5f0): ' err.txt || fail "PIO as root: $(cat err.txt)"
	expect_root --chardev
	grep -qF 'marker: ioperm(0xe9): ' err.txt || fail "chardev as root: $(cat err.txt)"
	[ ! -e rootm/markers.dat ] || fail "a refused marker wrote markers.dat"
fi

# hypercall markers: sent exactly where CPUID says KVM
if lscpu 2>/dev/null | grep -q '^Hypervisor vendor: *KVM$'; then
	"$VT_BIN" marker --hypercall -n 3 --interval 0 -o hc
	records hc/markers.dat 3 0 3 0x56540001
	"$VT_BIN" marker --hypercall -n 2 --interval 10ms -o hc
	records hc/markers.dat 5 0 3 0x56540001
	# an empty markers.dat: seq from 0
	mkdir empty && : >empty/markers.dat
	"$VT_BIN" marker --hypercall -n 1 --interval 0 -o empty
	records empty/markers.dat 1 0 3 0x56540001
	# no -o: ./vmtrace-markers (docs/cli.md, Default output)
	mkdir dflt && (cd dflt && "$VT_BIN" marker --hypercall -n 1)
	records dflt/vmtrace-markers/markers.dat 1 0 3 0x56540001
	# a corrupt record: kept, warned of, the next seq after the last valid one
	printf 'VTMKjunkjunkjunkjunkjunkjunkjunkjunkjunkjunkjunk' >>hc/markers.dat
	"$VT_BIN" marker --hypercall -n 1 -o hc 2>err.txt
	grep -qF 'hc/markers.dat: 1 bad records kept as they are; appending after them' err.txt ||
		fail "corrupt markers.dat: $(cat err.txt)"
	records hc/markers.dat 6 0 3 0x56540001
	# SIGINT between markers: stops at once, what was sent kept (the
	# chain closed), exit 0
	# (sent once the first record is written: the handler is in place)
	"$VT_BIN" marker --hypercall -n 1000 --interval 100 -o hi 2>err.txt &
	pid=$!
	for _ in $(seq 200); do
		[ "$(stat -c %s hi/markers.dat 2>/dev/null || echo 0)" -ge 48 ] && break
		sleep 0.05
	done
	kill -INT $pid
	rc=0; wait $pid || rc=$?
	[ "$rc" = 0 ] || fail "marker stopped by SIGINT: exit $rc ($(cat err.txt))"
	n=$(( $(stat -c %s hi/markers.dat) / 48 ))
	[ "$n" -ge 1 ] && [ "$n" -le 5 ] || fail "SIGINT at the first of 1000 markers 100 ms apart: $n records"
	records hi/markers.dat "$n" 0 3 0x56540001
	mkdir -p hd/markers.dat
	expect_exit 1 'hd/markers.dat' -- "$VT_BIN" marker --hypercall -o hd
	# markers.dat a symlink (to records it could read): not followed to
	# write, exit 1
	mkdir hl && cp empty/markers.dat real.dat && ln -s ../real.dat hl/markers.dat
	expect_exit 1 'marker: hl/markers.dat: cannot open: Too many levels of symbolic links' -- \
		"$VT_BIN" marker --hypercall -o hl
	records real.dat 1 0 3 0x56540001
	echo "hypercall markers sent (KVM)"
else
	expect_exit 5 'marker: --hypercall: not running under KVM (CPUID has no KVM signature): a hypercall would fault' -- \
		"$VT_BIN" marker --hypercall -o hc
fi
virt=$(systemd-detect-virt 2>/dev/null || true)
vendor=$(cat /sys/class/dmi/id/sys_vendor 2>/dev/null || true)
case "$virt:$vendor" in
qemu:*|kvm:*|*:QEMU) ;;
*) skip "not inside a QEMU/KVM guest ($virt): vmtrace marker writes I/O port 0x5f0, only done in a VM whose VMM ignores it (options, bad input and hypercall markers checked)";;
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
