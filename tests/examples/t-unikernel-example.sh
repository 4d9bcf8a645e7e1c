#!/bin/bash
# timeout: 300
# needs: kvm
# examples/unikernel end to end: the freestanding -pg guest (KVM where it
# runs, else TCG), host recording, debugcon hand-off, align, merge.  The
# guest trace replays with uftrace; the merged outputs are checked by
# check_outputs.py: guest function slices and host events present, the
# marker bound below 20 us (KVM) / 100 us (TCG), and every marker's host
# twin inside its guest bracket after alignment.  Past tests/lib/kvm.sh's
# gate the example must run under KVM (ACCEL=kvm: no silent fall back to
# TCG); otherwise ACCEL=auto must say why not KVM and use TCG.  The
# example's own bounds (boot handshake, run) keep the test bounded.
# san: skip: the example's vmtrace steps run under ASan elsewhere: debugcon decoding in guest/t-mcount-freestanding and faults/t-fault-corrupt-debugcon, recording and aligning a debugcon-marker guest in align/t-align-tcg, merging host and guest in the merge tests; the recorder on real kvm events in host/t-record-kvm
set -eu
. "$VT_SRC/tests/lib/kvm.sh"
kvm_or_lab "$@"
out=$VT_TMP/out
for c in record debugcon align merge; do
	"$VT_BIN" $c --help >/dev/null 2>&1 || [ $? -ne 5 ] ||
		{ echo "SKIP: 'vmtrace $c' is not built yet"; exit 77; }
done
[ -f "$VT_BUILD/lib/libvmtrace-mcount-free.a" ] ||
	{ echo "SKIP: the freestanding runtime ($VT_BUILD/lib/libvmtrace-mcount-free.a) is not built yet"; exit 77; }
want=tcg ACCEL=auto
rc=0
kvm_check || rc=$?
case $rc in
0)	echo "$KVM_WHY"
	if kvm_longmode_check; then want=kvm ACCEL=kvm
	else echo "note: $KVM_WHY: the example must fall back to TCG"; fi;;
2) echo "FAIL: $KVM_WHY"; exit 1;;
*) echo "note: $KVM_WHY: the example must fall back to TCG";;
esac
VT_BOOT_TIMEOUT=$KVM_GATE_SECS VT_RUN_TIMEOUT=$KVM_RUN_SECS \
	make -s --no-print-directory -C "$VT_SRC/examples/unikernel" O="$VT_BUILD" OUTDIR="$out" \
	ACCEL=$ACCEL run | tee run.log
accel=$(sed -n 's/^accel=//p' "$out/run.txt")
[ "$accel" = "$want" ] || { echo "FAIL: the example ran under '$accel', want $want"; exit 1; }
if [ $want = tcg ]; then
	# the reason it gave for not using KVM is the probe's
	grep -q "^unikernel: .* -> using TCG" run.log
	[ -n "$(sed -n 's/^accel_note=//p' "$out/run.txt")" ]
fi
grep -q "alignment *markers: error bound" run.log
# the guest's own trace: uftrace replays the call tree
uftrace replay -d "$out/guest/trace" --no-pager >replay.txt
grep -q 'one_round() {' replay.txt
[ "$(grep -c 'one_round() {' replay.txt)" = 8 ]
host_ev=sys_enter_write
[ "$accel" = kvm ] && host_ev=kvm_hypercall
/usr/bin/python3 "$VT_SRC/tests/examples/check_outputs.py" "$out" one_round "$host_ev"
