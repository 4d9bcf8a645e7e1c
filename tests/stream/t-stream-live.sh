#!/bin/bash
# timeout: 120
# `vmtrace stream` following a trace directory while Debian's python3 writes
# it under the Python tracer (mmap'd per-thread stores), and `vmtrace
# unpack` rebuilding it, checked with consumers we did not write:
#  1. while the traced program runs, the stream already holds its store's
#     records; after a normal end and the streamer's last pass the rebuilt
#     directory equals the original byte for byte (diff -r);
#  2. the traced program SIGKILLed mid-run: the stream still ends whole
#     (END), unpack folds the killed writer's .stage into its .dat (the
#     same bytes `vmtrace finalize` gives) and uftrace replays the calls;
#  3. the streamer itself SIGKILLed mid-run: unpack keeps the prefix
#     (exit 3, message names the stream) and uftrace replays it.
set -eu
. "$VT_SRC/tests/python/common.sh"
cat >work.py <<'PY'
import os, sys, time
def leaf(i):
    return i * 2
def step(n):
    return sum(leaf(i) for i in range(n))
t0 = time.monotonic()
half = False
while time.monotonic() - t0 < float(sys.argv[1]):
    step(50)
    time.sleep(0.0005)
    if not half and time.monotonic() - t0 > float(sys.argv[1]) / 2:
        open(sys.argv[2], "w").close()
        half = True
PY

wait_file() {
	local i=0
	while [ ! -e "$1" ]; do
		[ $i -lt 200 ] || vt_fail "timed out waiting for $1"
		sleep 0.05
		i=$((i + 1))
	done
}

# 1. normal end
mkdir top
"$VT_BIN" stream -i 100 top s1.bin &
sp=$!
vt_py -m vmtrace -o top/py work.py 2 half1 &
pp=$!
wait_file half1
sleep 0.3
kill -0 $pp || vt_fail "the traced program ended too early"
"$VT_BIN" unpack --list s1.bin 2>/dev/null | grep -Eq ' DATA py/[0-9]+\.dat [0-9]+ [1-9]' ||
	vt_fail "no store records in the stream while the program ran"
wait $pp
kill -TERM $sp
wait $sp
"$VT_BIN" unpack s1.bin -o u1
diff -r top u1 || vt_fail "the rebuilt directory differs from the original"
vt_replay u1/py | grep -q 'step' || vt_fail "uftrace cannot replay the rebuilt trace"

# 2. the traced program killed: the streamer still ends the stream
mkdir top2
"$VT_BIN" stream -i 100 top2 s2.bin &
sp=$!
vt_py_bg -m vmtrace -o top2/py work.py 4 half2 &
pp=$!
wait_file half2
sleep 0.3
kill -9 $pp
wait $pp 2>/dev/null || true
kill -TERM $sp
wait $sp
ls top2/py/*.stage >/dev/null 2>&1 || vt_fail "the killed writer left no .stage"
"$VT_BIN" unpack s2.bin -o u2 > unpack2.out
grep -q '1 stage folded' unpack2.out || vt_fail "unpack did not fold the stage: $(cat unpack2.out)"
ls u2/py/*.stage >/dev/null 2>&1 && vt_fail "unpack left a .stage in the rebuilt directory"
tid=$(basename "$(ls u2/py/[0-9]*.dat | head -1)")
n=$(stat -c %s "u2/py/$tid")
[ $((n % 16)) -eq 0 ] && [ "$n" -gt 0 ] || vt_fail "store of $n bytes is not whole records"
# the streamed store is the killed writer's records (its .dat without the
# zeroed tail, then its stage's): what `vmtrace finalize` makes of the
# writer's own directory, byte for byte
cp -a top2 top2f
"$VT_BIN" finalize -q top2f/py
cmp "u2/py/$tid" "top2f/py/$tid" || vt_fail "streamed store differs from the writer's, folded"
[ "$(( n / 16 ))" = "$("$VT_BIN" top --once top2/py | sed -n 's/.* \([0-9]*\) records,.*/\1/p')" ] ||
	vt_fail "the unpacked store does not hold every record top reads in the writer's directory"
"$VT_BIN" convert u2/py ns2 >/dev/null 2>&1 || [ $? -eq 3 ]
uftrace replay -d ns2 -f none 2>/dev/null | grep -q 'step' || vt_fail "uftrace cannot replay the killed run"

# 3. the streamer killed: a prefix without END
mkdir top3
"$VT_BIN" stream -i 100 top3 s3.bin &
sp=$!
vt_py -m vmtrace -o top3/py work.py 2 half3 &
pp=$!
wait_file half3
sleep 0.3
kill -9 $sp
wait $sp 2>/dev/null || true
wait $pp
rc=0
"$VT_BIN" unpack s3.bin -o u3 2>err3 || rc=$?
[ $rc -eq 3 ] || vt_fail "unpack of a cut stream: exit $rc, want 3"
grep -q 's3.bin' err3 || vt_fail "the message does not name the stream: $(cat err3)"
"$VT_BIN" convert u3/py ns3 >/dev/null 2>&1 || [ $? -eq 3 ]
uftrace replay -d ns3 -f none 2>/dev/null | grep -q 'step' || vt_fail "uftrace cannot replay the prefix"
echo "ok: live stream of the Python tracer: whole, traced program killed, streamer killed"
