#!/bin/bash
# Recursion deeper than the shadow stack: with --depth 8, recurse(200)
# records exactly 8 levels, balanced, and the program's result is right;
# with the default limit (1023), recurse(3000) is cut at 1023 levels,
# entries == exits; vmtrace.meta counts the calls not recorded.
# timeout: 120
set -eu
. "$VT_SRC/tests/guest/mcount-lib.sh"
need_uftrace

d="$VT_TMP/deep8"
"$VT_BIN" run -o "$d" --depth 8 -- "$GPROGS/deep-pg" 200 >"$VT_TMP/out"
grep -q '^depth=200$' "$VT_TMP/out"
uftrace replay -d "$d" -f tid --no-pager | sed -n 's/^ *\[ *[0-9]*\] | //p' >"$VT_TMP/tree"
same_text "depth 8" "$EXPECT/deep8.txt" "$VT_TMP/tree"
chrome_balanced "$d" 16
# 201 recurse() calls, 7 recorded: the rest counted in vmtrace.meta
grep -q '^mcount.skipped=194$' "$d/vmtrace.meta"

d="$VT_TMP/deepmax"
"$VT_BIN" run -o "$d" -- "$GPROGS/deep-pg" 3000 >"$VT_TMP/out"
grep -q '^depth=3000$' "$VT_TMP/out"
uftrace dump -d "$d" --no-pager >"$VT_TMP/dump"
e=$(grep -c '\[entry\] recurse(' "$VT_TMP/dump")
x=$(grep -c '\[exit \] recurse(' "$VT_TMP/dump")
echo "default limit: $e entries, $x exits of recurse"
[ "$e" = 1022 ] && [ "$x" = 1022 ]
grep -q '^mcount.skipped=1979$' "$d/vmtrace.meta"
chrome_balanced "$d" 2046
