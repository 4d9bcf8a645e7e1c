#!/bin/bash
# timeout: 300
# examples/unikernel end to end: the freestanding -pg guest (KVM where it
# runs, else TCG), host recording, debugcon hand-off, align, merge.  The
# guest trace replays with uftrace; the merged outputs are checked by
# check_outputs.py: guest function slices and host events present, the
# marker bound below 20 us (KVM) / 100 us (TCG), and every marker's host
# twin inside its guest bracket after alignment.
set -eu
out=$VT_TMP/out
for c in record debugcon align merge; do
	"$VT_BIN" $c --help >/dev/null 2>&1 || [ $? -ne 5 ] ||
		{ echo "SKIP: 'vmtrace $c' is not built yet"; exit 77; }
done
[ -f "$VT_BUILD/lib/libvmtrace-mcount-free.a" ] ||
	{ echo "SKIP: the freestanding runtime ($VT_BUILD/lib/libvmtrace-mcount-free.a) is not built yet"; exit 77; }
make -s --no-print-directory -C "$VT_SRC/examples/unikernel" O="$VT_BUILD" OUTDIR="$out" run | tee run.log
accel=$(sed -n 's/^accel=//p' "$out/run.txt")
grep -q "alignment *markers: error bound" run.log
# the guest's own trace: uftrace replays the call tree
uftrace replay -d "$out/guest/trace" --no-pager >replay.txt
grep -q 'one_round() {' replay.txt
[ "$(grep -c 'one_round() {' replay.txt)" = 8 ]
host_ev=sys_enter_write
[ "$accel" = kvm ] && host_ev=kvm_pio
/usr/bin/python3 "$VT_SRC/tests/examples/check_outputs.py" "$out" one_round "$host_ev"
