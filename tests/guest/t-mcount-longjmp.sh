#!/bin/bash
# Functions left by longjmp under `vmtrace run` (tests/guest/progs/ljmp.c,
# -pg): thrower3() longjmps out of three hooked frames, three times.  The
# program must run to its end (a return address left hooked would jump
# into the trampoline with a stale shadow frame), and the trace must give
# each abandoned frame an exit: every function 3 entries and 3 exits,
# uftrace dump --chrome balanced.  (The runtime records those exits at
# the next hooked return below them - catcher's - so after_jump() shows
# inside thrower3(); the counts hold either way.)
# timeout: 60
set -eu
. "$VT_SRC/tests/guest/mcount-lib.sh"
need_uftrace

d="$VT_TMP/ljmp"
rc=0
"$VT_BIN" run -o "$d" -- "$GPROGS/ljmp-pg" >"$VT_TMP/out" 2>"$VT_TMP/err" || rc=$?
cat "$VT_TMP/err"
[ $rc = 0 ] || { echo "FAIL: ljmp-pg under vmtrace run exited $rc"; exit 1; }
grep -qx done "$VT_TMP/out" || { echo "FAIL: ljmp-pg did not finish"; exit 1; }
uftrace dump -d "$d" --no-pager >"$VT_TMP/dump"
for f in catcher thrower1 thrower2 thrower3 after_jump; do
	ne=$(grep -c "\[entry\] $f(" "$VT_TMP/dump" || true)
	nx=$(grep -c "\[exit \] $f(" "$VT_TMP/dump" || true)
	echo "$f: $ne entries, $nx exits"
	[ "$ne" = 3 ] && [ "$nx" = 3 ] || { echo "FAIL: $f: want 3 entries and 3 exits"; exit 1; }
done
chrome_balanced "$d" 30
echo "longjmp: ok"
