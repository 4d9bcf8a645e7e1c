#!/bin/bash
# `vmtrace record --python` on Debian's python3.11 (built --with-dtrace):
# gc collections, imports by module name and the function entries/returns
# 3.11 fires (frames entered from C: thread targets, key callbacks) are
# recorded; every uprobe we created is gone after a normal exit, after
# SIGINT to the recorder, and after the traced process is killed.
# timeout: 180
set -eu
PY=/usr/bin/python3.11
[ -x $PY ] || { echo "skip: no $PY"; exit 77; }
readelf -n $PY | grep -q 'Provider: python' || { echo "skip: $PY has no USDT markers"; exit 77; }
[ -w /sys/kernel/tracing/uprobe_events ] || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null || true
[ -w /sys/kernel/tracing/uprobe_events ] || { echo "skip: no writable uprobe_events (not root or no tracefs)"; exit 77; }
S=$VT_SRC/tests/usdt/scripts

no_probes_left() {
	if grep -q 'vmtrace_py_' /sys/kernel/tracing/uprobe_events; then
		echo "FAIL: uprobes left behind ($1):"; grep vmtrace_py_ /sys/kernel/tracing/uprobe_events
		exit 1
	fi
}

# 1. normal exit
$VT_BIN record --python -o out -- $PY $S/workload.py 2>err.txt || { cat err.txt; exit 1; }
cat err.txt
grep -q "frames entered from C" err.txt
no_probes_left "normal exit"
trace-cmd report out/trace.dat >report.txt 2>/dev/null
n_gc=$(grep -c 'gc__start:' report.txt || true)
n_gcd=$(grep -c 'gc__done:' report.txt || true)
echo "gc__start: $n_gc gc__done: $n_gcd"
# three explicit collections, maybe more automatic ones
[ "$n_gc" -ge 3 ] && [ "$n_gc" -eq "$n_gcd" ]
for g in 0 1 2; do grep 'gc__start:' report.txt | grep -q "generation=$g"; done
for m in json fractions decimal; do
	grep 'import__find__load__start:' report.txt | grep -q "module=\"$m\"" ||
		{ echo "import of $m not recorded"; exit 1; }
done
n_w=$(grep 'function__entry:' report.txt | grep -c 'func="worker"' || true)
n_wr=$(grep 'function__return:' report.txt | grep -c 'func="worker"' || true)
n_k=$(grep 'function__entry:' report.txt | grep -c 'func="keyfn"' || true)
echo "worker entries: $n_w returns: $n_wr keyfn entries: $n_k"
[ "$n_w" -eq 3 ] && [ "$n_wr" -eq 3 ] && [ "$n_k" -eq 3 ]

# 2. SIGINT to the recorder while the script sleeps
$VT_BIN record --python -o out2 -- $PY $S/workload.py 30 2>err2.txt &
rec=$!
for _ in $(seq 50); do grep -q vmtrace_py_ /sys/kernel/tracing/uprobe_events && break; sleep 0.1; done
sleep 1
kill -INT $rec
wait $rec || true
no_probes_left "SIGINT"
[ -s out2/trace.dat ]

# 3. the traced process is killed
$VT_BIN record --python -o out3 -- $PY $S/workload.py 30 2>err3.txt &
rec=$!
for _ in $(seq 50); do pgrep -f "workload.py 30" >/dev/null && break; sleep 0.1; done
sleep 1
pkill -KILL -f "workload.py 30"
wait $rec || true
no_probes_left "traced process killed"
[ -s out3/trace.dat ]
echo ok
