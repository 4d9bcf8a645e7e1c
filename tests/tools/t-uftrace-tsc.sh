#!/bin/bash
# t-uftrace-tsc: build uftrace 0.13 (Debian 12 source) with
# patches/uftrace-use-tsc.patch, record a small program with it and check
# that every timestamp is a TSC tick read between two rdtsc reads taken
# before and after the run; the data is read by the system's uftrace.
# Skipped only when the source package cannot be fetched.
# timeout: 900
set -eu
rdtsc=$VT_BUILD/tests/tools/rdtsc
[ -x "$rdtsc" ] || { echo "no $rdtsc (make test builds it)"; exit 1; }

rc=0
"$VT_SRC/tools/build-uftrace-tsc" -q >build.log 2>&1 || rc=$?
if [ $rc -eq 5 ]; then
	cat build.log
	echo "SKIP: the uftrace 0.13 source package cannot be fetched here: $(tail -1 build.log)"
	exit 77
fi
[ $rc -eq 0 ] || { cat build.log; echo "build-uftrace-tsc failed (exit $rc)"; exit 1; }
# idempotent: a second run does nothing
"$VT_SRC/tools/build-uftrace-tsc" | grep -q "up to date"

cat >prog.c <<'EOS'
int leaf(int x) { return x * 2; }
int mid(int x) { return leaf(x) + 1; }
int main(void) { int s = 0; for (int i = 0; i < 3; i++) s += mid(i); return s == 9 ? 0 : 1; }
EOS
gcc -O0 -pg -o prog prog.c

before=$("$rdtsc")
"$VT_SRC/tools/uftrace-tsc" record -d data ./prog
after=$("$rdtsc")

# the system's uftrace (unpatched 0.13) reads the data
/usr/bin/uftrace replay -d data >replay.txt
grep -q 'leaf();' replay.txt && grep -q 'mid()' replay.txt && grep -q 'main()' replay.txt ||
	{ cat replay.txt; echo "replay lacks main/mid/leaf"; exit 1; }
# dump prints each raw timestamp as SECONDS.NANOSECONDS of the 64-bit value
/usr/bin/uftrace dump -d data | awk '/^ *[0-9]+\.[0-9]+ / { t = $1; sub(/\./, "", t); print t }' >ts.txt
n=$(wc -l <ts.txt)
[ "$n" -ge 12 ] || { /usr/bin/uftrace dump -d data; echo "only $n records"; exit 1; }
bad=$(awk -v a="$before" -v b="$after" '$1 < a || $1 > b' ts.txt | wc -l)
[ "$bad" -eq 0 ] || { echo "$bad of $n timestamps outside [$before, $after]:"; head ts.txt; exit 1; }
# and sorted (one thread: monotonic TSC)
sort -n -c ts.txt
echo "$n timestamps within the rdtsc bracket [$before, $after] ($((after - before)) ticks)"

[ "$("$VT_BIN" meta data clock)" = tsc ]
[ "$("$VT_BIN" meta data domain)" = host ]
hz=$("$VT_BIN" meta data tsc.hz)
[ "$hz" = "$("$VT_BIN" tsc -q --no-calibrate)" ]
echo "vmtrace.meta: clock=tsc domain=host tsc.hz=$hz"

# vmtrace convert makes nanoseconds of it; the system's uftrace replays
# both, and main's duration in ticks / (tsc.hz / 1e9) is the one in ns
"$VT_BIN" convert data data.ns
dur() { /usr/bin/uftrace replay -d "$1" -F main --no-pager 2>/dev/null | awk '/} \/\* main \*\// { v = $1; u = $2
	if (u == "ns") v /= 1000; else if (u == "ms") v *= 1000; else if (u == "s") v *= 1e6; print v; exit }'; }
ticks=$(dur data) ns=$(dur data.ns)
awk -v t="$ticks" -v n="$ns" -v hz="$hz" 'BEGIN { want = t * 1e9 / hz; d = n - want; if (d < 0) d = -d
	if (d > 0.002 + want / 100) { print "main: " n " us after convert, want " want; exit 1 }
	print "main: " t " (ticks shown as us) -> " n " us after vmtrace convert" }'

# --clock=mono still records CLOCK_MONOTONIC nanoseconds: close to the
# uptime (which counts the same way here: no suspend)
"${VT_PATCH_BUILD:-$VT_SRC/build}/uftrace-tsc/bin/uftrace" record --clock=mono -d mono ./prog
mono_first=$(/usr/bin/uftrace dump -d mono | awk '/^ *[0-9]+\.[0-9]+ / { t = $1; sub(/\./, "", t); print t; exit }')
awk -v m="$mono_first" '{ d = m - $1 * 1e9; if (d < 0) d = -d; if (d > 60e9) { print "mono timestamp", m, "far from uptime", $1; exit 1 } }' /proc/uptime
echo "--clock=mono: first timestamp $mono_first ns (uptime $(cut -d' ' -f1 /proc/uptime) s)"

# vmtrace merge takes the directory as host TSC: main's entry lands at
# ticks / tsc.hz on the host timeline (Chrome JSON read by Debian's python3)
if "$VT_BIN" merge --help >/dev/null 2>&1; then
	"$VT_BIN" merge -q data -o merged.json
	entry=$(/usr/bin/uftrace dump -d data | awk '/\[entry\] main\(/ { t = $1; sub(/\./, "", t); print t; exit }')
	/usr/bin/python3 - merged.json "$entry" "$hz" <<'EOP'
import json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"] if isinstance(d, dict) else d
ts = [e["ts"] for e in ev if e.get("name") == "main" and e.get("ph") in ("B", "X")]
want_us = int(sys.argv[2]) * 1e6 / int(sys.argv[3])
assert ts and abs(ts[0] - want_us) < 1, (ts, want_us)
print("vmtrace merge: main at %.3f us on the host timeline (ticks / tsc.hz = %.3f)" % (ts[0], want_us))
EOP
else
	echo "vmtrace merge not built: merge check left out"
fi
