#!/bin/bash
# A thread that leaves through pthread_exit() three calls deep: its
# unfinished frames get exit records at thread exit (time of exit), the
# main thread goes on, the trace stays balanced.
# timeout: 60
set -eu
. "$VT_SRC/tests/guest/mcount-lib.sh"
need_uftrace

d="$VT_TMP/threxit"
"$VT_BIN" run -o "$d" -- "$GPROGS/threxit-pg" >"$VT_TMP/out"
grep -q '^after$' "$VT_TMP/out"
: >"$VT_TMP/tree"
for t in $(cd "$d" && ls *.dat | sed 's/\.dat$//' | sort -n); do
	replay_tid "$d" "$t" >>"$VT_TMP/tree"
done
same_text threxit "$EXPECT/threxit.txt" "$VT_TMP/tree"
chrome_balanced "$d" 10
