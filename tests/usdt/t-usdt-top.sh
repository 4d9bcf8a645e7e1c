#!/bin/bash
# `vmtrace top --python -p PID` live on Debian's python3.11: the key
# callback the script calls 1000 times per sort is the top row, its rate is
# 1000x the once-per-sort function's; every probe and the instance are gone
# after --once, after SIGINT and when the process exits; on the 3.13 build
# (no function markers) it refuses with exit 5 and says why.
# timeout: 120
set -eu
PY=/usr/bin/python3.11
[ -x $PY ] || { echo "skip: no $PY"; exit 77; }
readelf -n $PY | grep -q 'Provider: python' || { echo "skip: $PY has no USDT markers"; exit 77; }
[ -w /sys/kernel/tracing/uprobe_events ] || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null || true
[ -w /sys/kernel/tracing/uprobe_events ] || { echo "skip: no writable uprobe_events (not root or no tracefs)"; exit 77; }
S=$VT_SRC/tests/usdt/scripts
. $S/common.sh
no_instance_left() {
	if ls /sys/kernel/tracing/instances | grep -q vmtrace_top_; then
		echo "FAIL: tracefs instance left behind ($1)"; exit 1
	fi
}

$PY $S/hot.py 6 >hot.txt &
py=$!
sleep 0.5
$VT_BIN top --python -p $py --once -i 1.5s -n 5 >top.txt 2>top.err || { cat top.err; exit 1; }
cat top.txt
no_probes_left "top --once"
no_instance_left "top --once"
sed -n 3p top.txt | grep -q ' hotfn (.*hot.py)$' || { echo "hotfn is not the top row"; exit 1; }
hot=$(awk '/ hotfn \(/ {print $2}' top.txt)
cold=$(awk '/ coldfn \(/ {print $2}' top.txt)
echo "hotfn $hot coldfn $cold"
# hotfn runs 1000 times per coldfn call; the interval may cut one sort
[ "$cold" -gt 0 ] && [ $((hot / cold)) -ge 980 ] && [ $((hot / cold)) -le 1020 ]

# SIGINT while it runs
$VT_BIN top --python -p $py -i 500 >top2.txt 2>&1 &
top=$!
sleep 1.5
kill -INT $top
wait $top
no_probes_left "top SIGINT"
no_instance_left "top SIGINT"
grep -q 'hotfn' top2.txt

wait $py
# the process exits: top ends by itself
$PY $S/hot.py 2 >/dev/null &
py=$!
sleep 0.3
rc=0
timeout 30 $VT_BIN top --python -p $py -i 500 >top3.txt 2>top3.err || rc=$?
[ $rc -eq 0 ] || { cat top3.err; echo "top exit $rc"; exit 1; }
grep -q "process $py exited" top3.err
no_probes_left "process exited"
no_instance_left "process exited"
wait $py

P13=${VT_CPY313_PREFIX:-/var/cache/vmtrace/cpython-3.13}/bin/python3.13
if [ -x $P13 ]; then
	$P13 $S/hot.py 3 >/dev/null &
	py=$!
	sleep 0.5
	rc=0; $VT_BIN top --python -p $py --once 2>top4.err || rc=$?
	cat top4.err
	[ $rc -eq 5 ] && grep -q "no function markers" top4.err
	no_probes_left "3.13 refused"
	wait $py
else
	echo "note: no 3.13 build at $P13: its refusal not checked"
fi
echo ok
