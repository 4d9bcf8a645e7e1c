#!/bin/bash
# Stopping `vmtrace record`: SIGINT stops a system-wide recording cleanly
# (exit 0, trace.dat readable, instance removed); SIGTERM with a command is
# forwarded to it and its status (143) returned; a too-small buffer under
# a syscall storm reports lost events (stderr + meta lost.cpuN) and the
# file still reads, trace-cmd showing the gaps.
# timeout: 120
set -eu
. "$VT_SRC/tests/host/lib.sh"
need_tracefs

"$VT_BIN" record --guest -o int -e sched:sched_switch 2>int.txt &
rec=$!
sleep 1
kill -INT $rec
rc=0
wait $rec || rc=$?
cat int.txt
[ $rc = 0 ] || fail "SIGINT: exit $rc"
no_instances_left $rec
check_counts int

"$VT_BIN" record --guest -o term -- sleep 30 2>term.txt &
rec=$!
# the signal is forwarded to the command: send it once the command runs
# (a loaded machine may take more than a second to get there)
for _ in $(seq 200); do pgrep -P $rec -x sleep >/dev/null && break; sleep 0.1; done
pgrep -P $rec -x sleep >/dev/null || fail "the recorder did not start its command in 20 s"
kill -TERM $rec
rc=0
wait $rec || rc=$?
cat term.txt
[ $rc = 143 ] || fail "SIGTERM: exit $rc, want 143 (sleep killed by the forwarded SIGTERM)"
[ "$(meta record.command_exit term)" = "signal 15" ] || fail "command status not in meta"
no_instances_left $rec
"$TDCOUNT" term/trace.dat >/dev/null || fail "trace.dat after SIGTERM unreadable"

"$VT_BIN" record --guest -o lost -b 1 -e syscalls:sys_enter_getppid \
	-e syscalls:sys_exit_getppid -- "$VT_BUILD/tests/host/sysloop" 500000 >lost.txt 2>&1 ||
	{ cat lost.txt; fail "recording the syscall storm failed"; }
cat lost.txt
grep -q "WARNING: events were lost" lost.txt || fail "no lost-events warning"
total=$(meta lost.total lost)
[ "$total" -gt 0 ] || fail "lost.total = $total"
ev=$(meta events.total lost)
# every getppid call is an enter+exit pair: recorded + lost = 2 * calls,
# plus the getppid calls of other processes' tasks born meanwhile (bash
# calls getppid at start) that the full ring buffer dropped before the
# recorder could discard them (the new-pid window, docs/record.md): a few,
# about as many as it discarded at most (seen: 1-2 with 46-103 discarded)
calls=$(grep -o 'calls [0-9]*' lost.txt | awk '{print $2}')
disc=$(meta record.discarded lost)
extra=$((ev + total - 2 * calls))
echo "events $ev + lost $total = 2 x $calls calls + $extra (discarded: $disc)"
[ $extra -ge 0 ] && [ $extra -le $((disc + 16)) ] ||
	fail "events $ev + lost $total != 2 x $calls calls (+ up to $disc + 16 of other tasks)"
[ "$("$TDCOUNT" lost/trace.dat | sed -n 's/^total //p')" = "$ev" ] || fail "events.total"
trace-cmd report lost/trace.dat 2>/dev/null | grep -q 'EVENTS DROPPED' || fail "trace-cmd sees no gap"
check_counts lost
echo "signals and lost events: OK"
