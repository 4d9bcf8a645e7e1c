#!/bin/bash
# A host recording without kvm_entry/kvm_exit (PVM, or not recorded):
# nothing tells a vCPU's guest mode from its VM exits, so the "vCPU states"
# table must not claim guest mode.  mkcrit.py's fixture (K=3) with the
# host's kvm_entry/kvm_exit taken out: the vCPU's on-CPU time is "unknown"
# (before: all "guest mode", unknown 0), its preempted time (from the
# host's sched_switch) still 630 us, guest mode and both exit columns 0,
# and a note names the missing events (text and HTML).  With them (the
# same fixture whole): guest mode, no note.
set -eu
. "$VT_SRC/tests/report/common.sh"
cd "$VT_TMP"
K=3
mkdir -p n/h
mk_fixture_of mkcrit.py . $((4 * K)) $K
grep -vE ' kvm/kvm_(entry|exit) ' host.txt >n/host.txt
if [ "$(grep -c ' kvm/kvm_e' host.txt)" = 0 ] || grep -q ' kvm/kvm_e' n/host.txt; then
	echo "FAIL: the fixture's kvm_entry/kvm_exit not taken out"; exit 1
fi
"$GTD" n/h/trace.dat <n/host.txt
cp h/vmtrace.meta n/h/
note='  no kvm_entry/kvm_exit events (PVM, or not recorded): guest mode and VM exits are not told apart, a vCPU on a CPU is counted as unknown'
row() {	# REPORT: the vCPU 0 row's six columns
	sed -n '/^vCPU states/,/^$/p' "$1" | sed -n 's/^  0 \+4243 \+//p'
}

"$VT_BIN" report h g --no-align -q -n 20 --html full.html >full.txt
"$VT_BIN" report n/h g --no-align -q -n 20 --html none.html >none.txt
sed -n '/^vCPU states/,/^$/p' full.txt none.txt
# the whole recording: guest mode and exits known, no note
read -r gm ek eq pre blk unk <<<"$(row full.txt)"
[ "$pre" = 630.000 ] && [ "$unk" = 0.000 ] && [ "$gm" != 0.000 ] && [ "$ek" != 0.000 ] ||
	{ echo "FAIL: the whole recording's vCPU row: $(row full.txt)"; exit 1; }
grep -qF 'no kvm_entry/kvm_exit' full.txt && { echo "FAIL: a note with kvm_entry/kvm_exit recorded"; exit 1; }
# without kvm_entry/kvm_exit: guest mode and exits unknown, the rest kept;
# the span is the same, so unknown = the whole row's guest + exit time
read -r gm2 ek2 eq2 pre2 blk2 unk2 <<<"$(row none.txt)"
want=$("$PY" -c "print('%.3f' % ($gm + $ek + $eq))")
[ "$gm2 $ek2 $eq2 $pre2 $blk2 $unk2" = "0.000 0.000 0.000 630.000 $blk $want" ] ||
	{ echo "FAIL: no kvm_entry/kvm_exit: vCPU row '$gm2 $ek2 $eq2 $pre2 $blk2 $unk2'," \
		"want '0.000 0.000 0.000 630.000 $blk $want'"; exit 1; }
grep -qxF -- "$note" none.txt || { echo "FAIL: no note naming kvm_entry/kvm_exit"; exit 1; }
grep -qF '<p class=note>No kvm_entry/kvm_exit events (PVM, or not recorded): guest mode and VM exits are not told apart, a vCPU on a CPU is counted as unknown.</p>' none.html ||
	{ echo "FAIL: no HTML note"; exit 1; }
grep -qF 'No kvm_entry/kvm_exit' full.html && { echo "FAIL: an HTML note with them recorded"; exit 1; }
echo "ok: without kvm_entry/kvm_exit the vCPU's $unk2 us on a CPU are unknown, not guest mode"
