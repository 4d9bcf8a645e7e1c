#!/bin/bash
# A real recording (`vmtrace record`, sched_switch + irq events in the
# x86-tsc clock) converted alone: every event trace-cmd report shows is in
# the JSON and Perfetto outputs, at tsc * 1e9 / tsc.hz ns.
# timeout: 120
set -eu
. "$VT_SRC/tests/merge/common.sh"
[ "$(id -u)" = 0 ] || { echo "needs root to record"; exit 77; }
[ -d /sys/kernel/tracing/events ] || { echo "no tracefs at /sys/kernel/tracing"; exit 77; }
cd "$VT_TMP"
# (the recorder is not under test here: its leaks do not fail this test)
ASAN_OPTIONS=detect_leaks=0 "$VT_BIN" record -e sched:sched_switch -e irq -o rec -- sleep 0.3 >rec.log 2>&1 ||
	{ cat rec.log; echo "vmtrace record failed here (see above)"; exit 77; }
# an event line: "comm-pid [CPU] STAMP: ..."; trace-cmd 3.3 prints the 5
# latency flags (the first never a digit: "d..2.") glued to the stamp, 3.1 not
LINE='\[[0-9]{3}\] *([^0-9 ]....)? *([0-9]+): '
trace-cmd report rec/trace.dat 2>/dev/null | grep -E "^ .*$LINE" >report.txt
n=$(wc -l <report.txt)
[ "$n" -gt 0 ] || { echo "FAIL: nothing recorded"; exit 1; }
hz=$(sed -n 's/^tsc.hz=//p' rec/vmtrace.meta)
first=$(sed -E "s/.*$LINE.*/\\2/" report.txt | sort -n | head -1)
"$VT_BIN" merge rec -o rec.json 2>err.txt
grep -q "trace *rec *$n events" err.txt || { cat err.txt; echo "FAIL: want $n events"; exit 1; }
trap 'echo "tsc.hz=$hz"; cat err.txt' ERR
"$PY" - rec.json "$n" "$first" "$hz" <<'PYEOF'
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
n, first, hz = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
pts = [e for e in ev if e["ph"] == "i"]
assert len(pts) == n, (len(pts), n)
want_us = first * 10**9 // hz / 1000.0
got = min(e["ts"] for e in pts)
assert abs(got - want_us) < 0.002, (got, want_us)
sw = [e for e in pts if e["name"] == "sched_switch"]
assert sw and "next_comm" in sw[0]["args"], sw[:1]
print("ok: %d events, first at %.3f us" % (n, got))
PYEOF
"$VT_BIN" merge rec -o rec.pftrace -q
protoc --decode=perfetto.protos.Trace -I "$VT_SRC/merge" "$VT_SRC/merge/perfetto_subset.proto" \
	<rec.pftrace >rec.txt
[ "$(grep -c TYPE_INSTANT rec.txt)" = "$n" ] || { echo "FAIL: perfetto instants"; exit 1; }
echo ok
