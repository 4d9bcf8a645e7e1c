#!/bin/bash
# t-convert: `vmtrace convert` turns a clock=tsc uftrace directory into a
# clock=ns copy that the real uftrace replays with true durations (tsc.hz
# from vmtrace.meta, or --tsc-hz); bad inputs fail clearly; `vmtrace info`
# describes our directories and one written by the real `uftrace record`,
# and flags a truncated .dat (exit 3).
# timeout: 60
set -eu
MK="$VT_BUILD/tests/helpers/mkuftrace"
command -v uftrace >/dev/null || { echo "uftrace not installed"; exit 77; }
cd "$VT_TMP"
fail() { echo "FAIL: $*"; exit 1; }
HZ=2096001000

"$MK" synth tsc $HZ
"$VT_BIN" info tsc | tee info.out
grep -q "^clock: *tsc" info.out || fail "info: clock"
grep -q "TSC Hz: *$HZ" info.out || fail "info: tsc hz"
grep -Eq "4242 +4242 +5 +5 +0 +0 +20960 TSC ticks = 0.000010000 s" info.out || fail "info: task A"

# in TSC ticks, uftrace shows ticks as if they were ns: 20.960 us for main
uftrace replay -d tsc | grep -q "20.960 us \[ *4242\] | } /\* main \*/" || fail "tsc replay"

"$VT_BIN" convert tsc ns
grep -q "^clock=ns" ns/vmtrace.meta || fail "meta clock"
uftrace replay -d ns | tee replay.out
# floor(ticks * 1e9 / hz), as merge converts (lib/tsc.h): 20960 ticks at
# 2096001000 Hz are 9999.995 ns, so main's entry/exit stamps give 9.999 us
grep -q "9.999 us \[ *4242\] | } /\* main \*/" replay.out || fail "converted main 9.999 us"
grep -q "1.000 us \[ *4243\] |   } /\* bar \*/" replay.out || fail "converted bar 1 us"
head -1 ns/task.txt | grep -q "^SESS timestamp=0.999998999 " || fail "task.txt converted"	# 999998999.52 ns

# --tsc-hz overrides: twice the Hz, half the durations
"$VT_BIN" convert --tsc-hz $((HZ * 2)) tsc ns2
uftrace replay -d ns2 | grep -q "4.999 us \[ *4242\] | } /\* main \*/" || fail "--tsc-hz"

# refusals: existing output, ns input, missing meta, same dir, bad option
"$VT_BIN" convert tsc ns 2>err.out && fail "existing output accepted"
grep -q "not empty" err.out || fail "message for existing output"
"$VT_BIN" convert -f ns ns3 2>err.out && fail "ns input accepted"
grep -q "not 'tsc'" err.out || fail "message for ns input"
cp -r tsc nometa && rm nometa/vmtrace.meta
set +e
"$VT_BIN" convert nometa x 2>err.out; rc=$?
set -e
[ $rc = 1 ] || fail "no meta: exit $rc"
grep -q "nometa: no usable vmtrace.meta" err.out || fail "message for missing meta"
"$VT_BIN" convert -f tsc tsc 2>/dev/null && fail "same directory accepted"
[ -s tsc/4242.dat ] || fail "input damaged by a refused convert"
"$VT_BIN" convert --tsc-hz abc tsc y 2>/dev/null && fail "bad --tsc-hz accepted"

# truncated input: partial (exit 3), every complete record kept, uftrace reads it
truncate -s $((16 * 7 + 9)) tsc/4242.dat
set +e
"$VT_BIN" convert tsc trunc 2>err.out; rc=$?
"$VT_BIN" info tsc >/dev/null 2>info.err; rc2=$?
set -e
[ $rc = 3 ] || fail "truncated: exit $rc"
grep -q "4242.dat: truncated last record at offset 112" err.out || { cat err.out; fail "truncation message"; }
[ $rc2 = 3 ] || fail "info on truncated: exit $rc2"
grep -q "4242.dat: ends inside a record at offset 112" info.err || fail "info truncation message"
[ "$(stat -c %s trunc/4242.dat)" = 112 ] || fail "7 complete records"
uftrace replay -d trunc >/dev/null || fail "uftrace on the partial copy"

# a directory written by the real uftrace record
cat >prog.c <<'C'
#include <pthread.h>
static int leaf(int x) { return x * 2; }
static int mid(int x) { return leaf(x) + 1; }
static void *worker(void *p) { (void)p; mid(3); return 0; }
int main(void) { pthread_t t; pthread_create(&t, 0, worker, 0); mid(1); pthread_join(t, 0); return 0; }
C
gcc -pg -O0 -o prog prog.c -lpthread
uftrace record -d real ./prog
"$VT_BIN" info real | tee real.out
grep -q "tasks: *2" real.out || fail "info on uftrace record: 2 tasks"
grep -q "exename: *$VT_TMP/prog" real.out || fail "info on uftrace record: exename"
grep -Eq "records: +[0-9]+ \(([0-9]+) entry, \1 exit" real.out || fail "balanced records"
# names resolved through uftrace's own .sym files and map: the same as
# uftrace replay shows for that data
"$VT_BIN" info -r real >records.out
uftrace replay -d real -F main >replay-real.out
for f in main mid leaf worker; do
	grep -Eq " entry +[0-9]+ $f <0x" records.out || fail "vmtrace info -r: no entry of $f"
done
# the other .sym layout: uftrace 0.14 on (0.17 on Debian 13) writes a size
# column, "ADDR SIZE TYPE NAME"; 0.13 (Debian 12) "ADDR TYPE NAME".  The
# same data in the layout this uftrace did not write gives the same names.
cp -r real other
for f in other/*.sym; do
	awk '/^#/ { print; next }
	     NF == 3 { printf "%s %08x %s %s\n", $1, 16, $2, $3; next }
	     NF == 4 { print $1, $3, $4; next }
	     { print }' "$f" >"$f.new" && mv "$f.new" "$f"
done
"$VT_BIN" info -r other >records-other.out
sed -i 's/^directory: *other$/directory:     real/' records-other.out
cmp -s records.out records-other.out ||
	{ diff records.out records-other.out | head -5; fail "vmtrace info -r: the other .sym layout gives other names"; }
grep -q "mid()" replay-real.out || fail "uftrace replay of the real data"
echo ok
