#!/bin/bash
# vmtrace run on a 3-thread program built -pg, -pg -mfentry and
# -finstrument-functions: uftrace replay (per thread) and graph of the
# nanosecond copy show the exact call tree, dump --chrome is balanced JSON,
# vmtrace.meta says clock=tsc with the TSC rate; --entries-only records
# entries and no exits.
# timeout: 120
set -eu
. "$VT_SRC/tests/guest/mcount-lib.sh"
need_uftrace

for v in mt-pg mt-fentry mt-cyg; do
	d="$VT_TMP/$v"
	"$VT_BIN" run -o "$d" --ns -- "$GPROGS/$v" >"$VT_TMP/out"
	grep -q '^sink=33$' "$VT_TMP/out"
	grep -q '^clock=tsc$' "$d/vmtrace.meta"
	grep -q '^tsc.hz=[1-9][0-9]*$' "$d/vmtrace.meta"
	grep -q '^clock=ns$' "$d.ns/vmtrace.meta"
	tids=$(cd "$d" && ls *.dat | sed 's/\.dat$//' | sort -n)
	[ "$(echo "$tids" | wc -l)" = 3 ] || { echo "want 3 threads, got: $tids"; exit 1; }
	pid=$(echo "$tids" | head -1)
	for t in $tids; do
		replay_tid "$d.ns" "$t" >"$VT_TMP/tree"
		if [ "$t" = "$pid" ]; then exp=mt-main.txt; else exp=mt-worker.txt; fi
		same_text "$v tid $t" "$EXPECT/$exp" "$VT_TMP/tree"
	done
	uftrace graph -d "$d.ns" -f none --no-pager | grep -v '^#' | sed '/^$/d' \
		>"$VT_TMP/graph"
	sed "s/PROG/$v/" "$EXPECT/mt-graph.txt" | sed '/^$/d' >"$VT_TMP/graph.expect"
	same_text "$v graph" "$VT_TMP/graph.expect" "$VT_TMP/graph"
	chrome_balanced "$d.ns" 30
	# durations in the ns copy are TSC ticks / tsc.hz
	uftrace replay -d "$d.ns" --no-pager | grep -q ' us \[\|ms \['
	echo "$v: ok"
done

# no -o: ./vmtrace-mcount (docs/cli.md, Default output), said on stderr
mkdir -p "$VT_TMP/dflt" && cd "$VT_TMP/dflt"
"$VT_BIN" run -- "$GPROGS/mt-pg" >/dev/null 2>"$VT_TMP/run.err"
grep -qx 'vmtrace: run: trace in vmtrace-mcount' "$VT_TMP/run.err" || { cat "$VT_TMP/run.err"; exit 1; }
[ "$(ls vmtrace-mcount/*.dat | wc -l)" = 3 ]
echo "run without -o: ok"
# -b: a bare number is KB, as record's (docs/cli.md, Units); B for bytes
for b in 128:131072 128K:131072 8192B:8192; do
	"$VT_BIN" run -f -o b -b "${b%%:*}" -- "$GPROGS/mt-pg" >/dev/null
	grep -qx "mcount.bufsize=${b#*:}" b/vmtrace.meta || { grep bufsize b/vmtrace.meta; exit 1; }
done
echo "run -b: ok"

# linked in instead of preloaded, no `vmtrace run`: $VMTRACE_DIR or ./vmtrace-mcount
mkdir -p "$VT_TMP/linked" && cd "$VT_TMP/linked"
gcc -std=gnu11 -O1 -fno-inline -pg -pthread -o mt-linked "$VT_SRC/tests/guest/progs/mt.c" \
	-L"$VT_BUILD/lib" -Wl,-rpath,"$VT_BUILD/lib" -lvmtrace-mcount
./mt-linked >/dev/null
grep -q '^clock=tsc$' vmtrace-mcount/vmtrace.meta
replay_tid vmtrace-mcount "$(ls vmtrace-mcount/*.dat | sort -t/ -k2 -n | head -1 | sed 's|.*/||; s|\.dat||')" \
	>"$VT_TMP/tree"
same_text "linked in" "$EXPECT/mt-main.txt" "$VT_TMP/tree"
chrome_balanced vmtrace-mcount 30
cd "$VT_TMP"
echo "linked in: ok"

# entries only: six leaf() entries in all, no exit records
d="$VT_TMP/entries"
"$VT_BIN" run -o "$d" --entries-only -- "$GPROGS/mt-pg" >/dev/null
uftrace dump -d "$d" --no-pager >"$VT_TMP/dump"
[ "$(grep -c '\[entry\] leaf(' "$VT_TMP/dump")" = 6 ]
if grep -q '\[exit \]' "$VT_TMP/dump"; then
	echo "FAIL: --entries-only recorded exit records"; exit 1
fi
echo "entries-only: ok"
