#!/bin/bash
# timeout: 600
# needs: kvm
# docs/own-vm.md followed as written, on a guest that is not the example's:
# its own /init (tests/examples/own-vm/init: what a distribution's boot gives
# - kernel file systems, udev's /dev/virtio-ports link, a data disk) and its
# own application (own-vm/myapp.py: durable saves, write + fsync), on the
# python-virtio example's kernel and base image (Debian's kernel, busybox,
# the host's python3).  QEMU is started by hand with the guide's
# virtio-serial options, the host recorder attaches to it by pid (the
# guide's host-record block), the guest runs the guide's guest block, then
# the host runs the guide's host-after block: every block of the guide
# marked `guide-test` runs as it is written there.  Checked: the guest's
# traces came out whole, the alignment is proven by the guide's hypercall
# markers, the report's requests are paired with QEMU's I/O, the merged
# Perfetto file decodes, and uftrace reads the guest's Python calls.
# san: skip: the guest image carries vmtrace, which an ASan build cannot run in the guest; each step's vmtrace command runs under ASan in its own tests
set -eu
. "$VT_SRC/tests/lib/kvm.sh"
kvm_or_lab "$@"
need_kvm
fail() { echo "FAIL: $*"; exit 1; }
PY=/usr/bin/python3
[ -x "$VT_BIN" ] && [ -d "$VT_BUILD/python" ] || { echo "SKIP: vmtrace or its Python extension is not built"; exit 77; }
EX=$VT_SRC/examples/python-virtio
CACHE=$VT_BUILD/examples/python-virtio
HERE=$VT_SRC/tests/examples/own-vm
cd "$VT_TMP"

# the guide's blocks, by name
"$PY" - "$VT_SRC/docs/own-vm.md" <<'PYEOF'
import re, sys
doc = open(sys.argv[1]).read()
blocks = re.findall(r'<!-- guide-test: ([\w-]+) -->\n```\w*\n(.*?)```', doc, re.S)
names = [n for n, _ in blocks]
want = ["qemu-options", "host-record", "guest", "host-after"]
if sorted(names) != sorted(want):
    sys.exit("docs/own-vm.md's guide-test blocks are %s, want %s" % (names, want))
for n, body in blocks:
    open("guide-%s.sh" % n, "w").write(body)
print("guide blocks: " + ", ".join("%s (%d lines)" % (n, b.count("\n")) for n, b in blocks))
PYEOF

# the example's kernel and base image (cached), our own top: /init, the app,
# the guide's guest block, vmtrace and its Python extension
make -s --no-print-directory -C "$EX" O="$VT_BUILD" image >image.log 2>&1 ||
	{ tail image.log; fail "the example's image did not build"; }
. "$VT_SRC/examples/common/mkroot.sh"
root=$VT_TMP/top
mkdir -p "$root/opt/app" "$root/opt/vmtrace/bin" "$root/opt/vmtrace/python" "$root/data"
install -m 0755 "$HERE/init" "$root/init"
install -m 0644 "$HERE/myapp.py" "$root/opt/app/myapp.py"
install -m 0644 guide-guest.sh "$root/opt/app/guide-guest.sh"
cp "$VT_BIN" "$root/opt/vmtrace/bin/vmtrace"
vt_root_copy_libs "$root" "$VT_BIN"
cp -a "$VT_BUILD/python/." "$root/opt/vmtrace/python/"
for f in $(find "$root/opt/vmtrace/python" -name '*.so'); do vt_root_copy_libs "$root" "$f"; done
vt_root_cpio "$root" top.cpio
cat "$CACHE/base.cpio" top.cpio >initrd.img
truncate -s 64M disk.img && mke2fs -q -t ext4 -F disk.img

# QEMU as a user starts it, with the guide's options (their line breaks and
# backslashes are the shell's)
VM_NAME=ownvm$$
read -r -a opts <<<"$(tr -d '\\\n' <guide-qemu-options.sh)"
rm -f /var/tmp/guest.stream
qemu-system-x86_64 -name "$VM_NAME,debug-threads=on" -accel kvm -cpu host -smp 1 -m 1024 \
	-nodefaults -nographic -no-reboot -monitor none -serial file:console.log \
	-kernel "$CACHE/vmlinuz" -initrd initrd.img -append "console=ttyS0 quiet panic=-1" \
	-drive file=disk.img,format=raw,if=virtio "${opts[@]}" >qemu.log 2>&1 &
qemu=$!
sleep 1
kill -0 $qemu 2>/dev/null || { cat qemu.log; fail "QEMU did not start with the guide's options: ${opts[*]}"; }
export PATH=$VT_BUILD/bin:$PATH
# the guide's host-record block, in this shell (RECORDER is used later)
. ./guide-host-record.sh
[ -n "${RECORDER:-}" ] && [ "$QEMU_PID" = "$qemu" ] || fail "host-record: QEMU_PID '$QEMU_PID', QEMU is $qemu"
# the guest runs the guide's guest block and powers off
timeout 400 tail --pid=$qemu -f /dev/null || { kill $qemu; tail -20 console.log; fail "the guest did not finish"; }
wait $qemu || true
grep -a "own-vm-guest" console.log | tail -20
grep -qa "own-vm-guest: guide done: exit 0" console.log || fail "the guide's guest block failed (console above)"
# the guide's host-after block, as written
rc=0
. ./guide-host-after.sh >after.log 2>&1 || rc=$?
cat after.log
[ $rc = 0 ] || fail "the guide's host-after block: exit $rc"

# what the guide promises
[ -f guest/python/info ] && [ -f guest/kernel/trace.dat ] && [ -f guest/markers/markers.dat ] ||
	fail "guest/ lacks python/, kernel/ or markers/: $(ls guest)"
uftrace replay -d guest/python 2>/dev/null | grep -q "save" || fail "uftrace replay of guest/python has no save()"
"$VT_BIN" align host guest/markers --json >align.json
"$PY" - align.json <<'PYEOF' || fail "alignment not proven"
import json, sys
j = json.load(open(sys.argv[1]))
b = j.get("bound_ns")
assert b is not None and 0 < b < 1e6, "bound %s" % b
assert j["markers"]["pairs"] >= 3, j["markers"]
print("alignment: %d marker pairs, bound %.1f us" % (j["markers"]["pairs"], b / 1e3))
PYEOF
grep -q "save" report.txt || fail "report.txt names no call of myapp.py"
n=$(grep -Eo '^  [A-Z.]+ +[0-9]+ requests' report.txt | awk '{s += $2} END {print s + 0}')
[ "$n" -gt 0 ] || fail "the report has no block requests"
grep -Eq '^  [A-Z.]*K[A-Z.]*H[A-Z.]*D' report.txt || fail "no request paired with its kick and QEMU's I/O"
[ -s report.html ] || fail "no report.html"
protoc --decode_raw <run.pftrace | head -c 4096 | grep -q . || fail "run.pftrace does not decode"
echo "ok: docs/own-vm.md as written: $n guest requests reported, traces out over virtio-serial, markers, report and merge"
