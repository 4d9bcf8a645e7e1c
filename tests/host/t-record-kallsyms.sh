#!/bin/bash
# /proc/kallsyms goes into trace.dat only when an event recorded shows a
# kernel address as a symbol (its print format has %ps/%pS/%pB/%pF, or it
# is a probe), or with --kallsyms: kvm, sched_switch, syscalls and block
# events do not need it, and reading and compressing it was a third of a
# KVM recording's CPU (docs/benchmarks.md).  Checked: the kallsyms section
# trace-cmd dump reads, record.kallsyms_bytes, the event counts; workqueue
# events (function %ps) get kallsyms and trace-cmd report names their
# functions; --kallsyms survives a killed recorder (--finish reads it from
# record.state); --finish refuses --kallsyms.
# timeout: 120
set -eu
. "$VT_SRC/tests/host/lib.sh"
need_tracefs

# trace-cmd dump's count of kallsyms bytes in DIR/trace.dat
ks_bytes() {
	trace-cmd dump --kallsyms -i "$1/trace.dat" 2>/dev/null |
		sed -n 's/^.*\[Kallsyms, \([0-9]*\) bytes\].*$/\1/p'
}
want_ks() {	# DIR none|some
	local b m
	b=$(ks_bytes "$1"); m=$(meta record.kallsyms_bytes "$1")
	echo "$1: trace-cmd dump: kallsyms $b bytes, record.kallsyms_bytes=$m ($(meta record.kallsyms "$1"))"
	[ -n "$b" ] || fail "$1: trace-cmd dump shows no kallsyms section"
	[ "$b" = "$m" ] || fail "$1: trace.dat holds $b bytes of kallsyms, the meta says $m"
	if [ "$2" = none ]; then
		[ "$b" = 0 ] || fail "$1: kallsyms stored ($b bytes) though no event needs it"
	else
		[ "$b" -gt 10000 ] || fail "$1: kallsyms not stored ($b bytes)"
		trace-cmd dump --kallsyms -i "$1/trace.dat" 2>/dev/null | grep -q ' [Tt] schedule$' ||
			fail "$1: the kallsyms section has no 'schedule' line"
	fi
}

# sched_switch and syscalls: no symbol printed, no kallsyms
"$VT_BIN" record -o plain -e sched:sched_switch -e syscalls:sys_enter_write \
	-- dd if=/dev/zero of=/dev/null bs=1 count=2000 2>err.txt || { cat err.txt; fail "record"; }
[ "$(meta record.kallsyms plain)" = auto ] || fail "record.kallsyms is not auto"
want_ks plain none
check_counts plain

# workqueue's function (%ps): kallsyms, and trace-cmd report names the
# functions of the work items that ran (kworkers' periodic work: vmstat,
# writeback; no sync, which on a busy machine can take minutes)
"$VT_BIN" record -o wq -e sched:sched_switch -e workqueue -- sleep 1.5 2>err.txt ||
	{ cat err.txt; fail "record wq"; }
want_ks wq some
check_counts wq
trace-cmd report wq/trace.dat 2>/dev/null | grep workqueue_execute_start >wq.txt || true
if [ -s wq.txt ]; then
	head -2 wq.txt
	! grep -q 'function 0x\|function ffff' wq.txt ||
		fail "trace-cmd report shows workqueue functions as addresses"
else
	echo "no workqueue_execute_start recorded (a quiet machine): symbol names not checked"
fi

# --kallsyms: always
"$VT_BIN" record --kallsyms -o all -e sched:sched_switch -- true 2>err.txt ||
	{ cat err.txt; fail "record --kallsyms"; }
[ "$(meta record.kallsyms all)" = always ] || fail "record.kallsyms is not always"
want_ks all some

# a killed recorder's --kallsyms is kept for --finish (in record.state)
"$VT_BIN" record --kallsyms -o killed -e sched:sched_switch -- sleep 60 2>killed.err &
rp=$!
for i in $(seq 100); do [ -e killed/record.state ] && break; sleep 0.1; done
[ -e killed/record.state ] || fail "no record.state after 10 s"
sleep 0.3
child=$(pgrep -P $rp sleep || true)
kill -9 $rp
wait $rp 2>/dev/null || true
[ -z "$child" ] || kill "$child" 2>/dev/null || true
rc=0; "$VT_BIN" record --finish killed 2>fin.txt || rc=$?
cat fin.txt
[ "$rc" = 0 ] || [ "$rc" = 3 ] || fail "--finish: exit $rc"
want_ks killed some
no_instances_left $rp

rc=0; "$VT_BIN" record --finish killed --kallsyms 2>bad.txt || rc=$?
[ "$rc" = 2 ] && grep -q "finish takes only" bad.txt || fail "--finish --kallsyms: exit $rc, $(cat bad.txt)"
echo ok
