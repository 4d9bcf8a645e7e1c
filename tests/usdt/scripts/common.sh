# Sourced by tests/usdt/t-*.sh: shared checks of `vmtrace record --python`.

# Fail when any uprobe event of ours is still defined; $1 says after what.
no_probes_left() {
	if grep -q 'vmtrace_py_' /sys/kernel/tracing/uprobe_events; then
		echo "FAIL: uprobes left behind ($1):"; grep vmtrace_py_ /sys/kernel/tracing/uprobe_events
		exit 1
	fi
}

# Probes are gone after SIGINT to the recorder and after the traced
# interpreter $1 is killed (both keep a trace.dat).
check_cleanup() {
	local PY=$1 rec py rc
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
	py=
	for _ in $(seq 50); do py=$(pgrep -P $rec || true); [ -n "$py" ] && break; sleep 0.1; done
	[ -n "$py" ] || { echo "traced python did not start"; exit 1; }
	sleep 1
	kill -KILL $py
	rc=0; wait $rec || rc=$?
	[ $rc -eq 137 ] || { echo "recorder exit $rc, want 137 (the command's SIGKILL)"; exit 1; }
	no_probes_left "traced process killed"
	[ -s out3/trace.dat ]

	# 4. -p PID: the file is found through /proc/PID/maps; the recorder
	# ends by itself when the process exits
	$PY $S/workload.py 3 >/dev/null &
	py=$!
	sleep 1
	timeout 20 $VT_BIN record --python -o out4 -p $py 2>err4.txt || { cat err4.txt; exit 1; }
	grep -q "python markers of" err4.txt
	no_probes_left "-p PID exited"
	[ -s out4/trace.dat ]
}
