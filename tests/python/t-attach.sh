#!/bin/bash
# vmtrace attach PID: trace a running Python process not started for it.
set -eu
. "$VT_SRC/tests/python/common.sh"
cd "$VT_TMP"
command -v gdb >/dev/null || vt_skip "no gdb"
scope=$(cat /proc/sys/kernel/yama/ptrace_scope 2>/dev/null || echo 0)
[ "$scope" -lt 3 ] || vt_skip "ptrace disabled (yama ptrace_scope=$scope)"

# start_target OUT SCRIPT ARGS...: run tests/python/scripts/SCRIPT in the
# background (output in OUT), wait until it says "ready"; its pid in $tpid,
# killed at the end
pids=
trap 'kill $pids 2>/dev/null || true' EXIT
start_target() {
	local out=$1 script=$2

	shift 2
	LD_PRELOAD=$VT_PRELOAD "$PY" "$SCRIPTS/$script" "$@" > "$out" 2>&1 &
	tpid=$!
	pids="$pids $tpid"
	for _ in $(seq 300); do grep -q ready "$out" && break; sleep 0.1; done
	grep -q ready "$out" || vt_fail "$script not ready in 30 s (a loaded machine?): $(cat "$out")"
}

start_target out busy.py 30 0.001
pid=$tpid
rc=0
"$VT_BIN" attach -o "$VT_TMP/d" --duration 1 --pythonpath "$PYDIR" $pid 2>err || rc=$?
if [ $rc = 4 ]; then vt_skip "attach not permitted here: $(cat err)"; fi
[ $rc = 0 ] || vt_fail "attach exit $rc: $(cat err)"
kill -0 $pid || vt_fail "the target died"
# busy.py sleeps every 100 calls: gdb ran the code at a release of the GIL,
# not wherever it stopped the process (inside a bytecode: a crash, rarely)
! grep -q "released no GIL" err || vt_fail "attach did not wait for a GIL release: $(cat err)"
[ "$(vt_calls "$VT_TMP/d" "__main__.tick ")" -gt 50 ] || vt_fail "tick() not traced"
# tracing stopped: the files do not grow any more
s1=$(cat "$VT_TMP"/d/*.dat | wc -c); sleep 0.5; s2=$(cat "$VT_TMP"/d/*.dat | wc -c)
[ "$s1" = "$s2" ] || vt_fail "trace still growing after the attach ended"
# no -o, two processes from one directory: ./vmtrace-python-PID each
# (docs/cli.md, Default output)
start_target out2 busy.py 30 0.001
pid2=$tpid
mkdir two
for p in $pid $pid2; do
	(cd two && "$VT_BIN" attach --duration 0.5 --pythonpath "$PYDIR" $p) 2>err ||
		vt_fail "attach $p without -o: $(cat err)"
	grep -q "into .*/two/vmtrace-python-$p\$" err || vt_fail "attach $p: $(cat err)"
done
for p in $pid $pid2; do
	[ "$(vt_calls "two/vmtrace-python-$p" "__main__.tick ")" -gt 10 ] || vt_fail "no -o: $p's ticks not in two/vmtrace-python-$p"
done
# a process that never releases the GIL (one thread computing): after the
# wait, started where gdb stopped it; it goes on running (the SIGINT that
# stopped it is not passed on: no KeyboardInterrupt)
start_target out3 spin.py
pid3=$tpid
rc=0
"$VT_BIN" attach -o "$VT_TMP/d3" --duration 0.5 --pythonpath "$PYDIR" $pid3 2>err || rc=$?
[ $rc = 0 ] || vt_fail "attach to a spinning process: exit $rc: $(cat err)"
grep -q "process $pid3 released no GIL in 2000 ms: tracing started where it was stopped" err ||
	vt_fail "spinning process: no word of the fallback: $(cat err)"
sleep 0.3
kill -0 $pid3 || vt_fail "the spinning target died: $(cat out3)"
! grep -q KeyboardInterrupt out3 || vt_fail "the SIGINT reached the target: $(cat out3)"
[ "$(vt_calls "$VT_TMP/d3" "__main__.spin_once ")" -gt 10 ] || vt_fail "spin_once() not traced"
# errors: no such process, bad pid
rc=0; "$VT_BIN" attach 12abc 2>err || rc=$?
[ $rc = 2 ] || vt_fail "bad pid: exit $rc"
rc=0; "$VT_BIN" attach 4194304 2>err || rc=$?
[ $rc = 1 ] && grep -q 'no such process' err || vt_fail "missing pid: exit $rc: $(cat err)"
echo "ok: attach on $("$PY" -V 2>&1)"
