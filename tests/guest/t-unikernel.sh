#!/bin/bash
# The multiboot test unikernel (build/guest/unikernel.elf) under QEMU TCG
# (and KVM past tests/lib/kvm.sh's gate): it traces its -pg functions into the
# freestanding buffer, writes 4 markers (PIO to port 0x5f0 under TCG,
# in-band hypercalls under KVM), dumps
# everything through isa-debugcon and exits through isa-debug-exit (33 =
# success).  `vmtrace debugcon` decodes it; uftrace replays the exact tree.
# timeout: 300
# needs: kvm
# san: skip: the guest's freestanding runtime is not built with ASan (it runs in the guest); vmtrace debugcon runs under ASan in guest/t-mcount-freestanding and align/t-align-tcg
set -eu
. "$VT_SRC/tests/guest/mcount-lib.sh"
. "$VT_SRC/tests/lib/kvm.sh"
kvm_or_lab "$@"
need_uftrace
command -v qemu-system-x86_64 >/dev/null || { echo "SKIP: no qemu-system-x86_64 (make deps)"; exit 77; }

img="$VT_BUILD/guest/unikernel.elf"
accels=tcg
rc=0
kvm_check || rc=$?
case $rc in
0)	echo "$KVM_WHY"
	if kvm_longmode_check; then accels="tcg kvm"; else echo "note: KVM run skipped: $KVM_WHY"; fi;;
2) echo "FAIL: $KVM_WHY"; exit 1;;
*) echo "note: KVM run skipped: $KVM_WHY";;
esac
for a in $accels; do
	rc=0
	kvm_timeout qemu-system-x86_64 -accel $a -kernel "$img" -m 64 -display none \
		-nodefaults -no-reboot -debugcon file:"$VT_TMP/$a.bin" \
		-device isa-debug-exit,iobase=0xf4,iosize=4 || rc=$?
	[ "$rc" = 33 ] || { echo "FAIL: $a: qemu exit $rc, want 33 (124: not done in $KVM_RUN_SECS s)"; exit 1; }
	d="$VT_TMP/$a"
	"$VT_BIN" debugcon -o "$d" --elf "$VT_BUILD/guest/unikernel64.elf" "$VT_TMP/$a.bin" |
		tee "$VT_TMP/$a.out"
	grep -q ' 50 records (0 lost in the guest), 4 markers' "$VT_TMP/$a.out"
	[ "$(stat -c %s "$d/markers.dat")" = $((4 * 48)) ]
	uftrace replay -d "$d" -f tid --no-pager | sed -n 's/^ *\[ *[0-9]*\] | //p' \
		>"$VT_TMP/tree"
	same_text "unikernel $a" "$EXPECT/unikernel.txt" "$VT_TMP/tree"
	chrome_balanced "$d" 50
	# each work_mark() entry/exit brackets its marker's TSC pair
	$PY - "$d/markers.dat" "$a" <<'PYEOF'
import struct, sys
data = open(sys.argv[1], "rb").read()
prev = 0
for i in range(len(data) // 48):
    magic, ver, kind, size, addr, value, cpu, seq, before, after = \
        struct.unpack_from("<IHBBQIIQQQ", data, 48 * i)
    # TCG: PIO to port 0x5f0 (kind 1); KVM: in-band hypercalls (kind 3, nr 0x56540001)
    want = (1, 0x5f0) if sys.argv[2] == "tcg" else (3, 0x56540001)
    assert magic == 0x4b4d5456 and (kind, addr) == want and seq == i, (i, kind, addr, seq)
    assert value == (0x56 << 24 | i) and prev < before <= after, (value, before, after)
    prev = after
print("markers: %d in order, kind %d at 0x%x" % (len(data) // 48, kind, addr))
PYEOF
	echo "$a: ok"
done

# untrusted input: a flipped payload byte, a cut stream, garbage
bin="$VT_TMP/tcg.bin"
off=$(grep -abo VTDC "$bin" | sed -n 2p | cut -d: -f1)	# the RECORDS frame
cp "$bin" "$VT_TMP/flip.bin"
printf '\xff' | dd of="$VT_TMP/flip.bin" bs=1 seek=$((off + 16 + 40)) conv=notrunc status=none
rc=0; "$VT_BIN" debugcon -o "$VT_TMP/flip" "$VT_TMP/flip.bin" 2>"$VT_TMP/err" || rc=$?
cat "$VT_TMP/err"; [ "$rc" = 3 ] && grep -q "offset $off: frame checksum mismatch" "$VT_TMP/err"
head -c $((off + 100)) "$bin" >"$VT_TMP/cut.bin"
rc=0; "$VT_BIN" debugcon -o "$VT_TMP/cut" "$VT_TMP/cut.bin" 2>"$VT_TMP/err" || rc=$?
cat "$VT_TMP/err"; [ "$rc" = 3 ] && grep -q "no end frame" "$VT_TMP/err"
head -c 100000 /dev/urandom >"$VT_TMP/junk.bin"
rc=0; "$VT_BIN" debugcon -o "$VT_TMP/junk" "$VT_TMP/junk.bin" 2>"$VT_TMP/err" || rc=$?
cat "$VT_TMP/err"; [ "$rc" = 3 ]
rc=0; "$VT_BIN" debugcon -o "$VT_TMP/none" "$VT_TMP/missing.bin" 2>"$VT_TMP/err" || rc=$?
cat "$VT_TMP/err"; [ "$rc" = 1 ] && grep -q "missing.bin: cannot open" "$VT_TMP/err"
echo "bad input: ok"
