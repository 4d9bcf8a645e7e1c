#!/bin/bash
# --lines: line events only in modules matching a prefix; none elsewhere.
set -eu
. "$VT_SRC/tests/python/common.sh"

vt_py -m vmtrace -o "$VT_TMP/d" --clock ns --lines linemod "$SCRIPTS/lines.py" || vt_fail "vmtrace exited $?"
sym=$VT_TMP/d/vmtrace-python.sym
grep -q ' T linemod.work:4 ' "$sym" || vt_fail "no line symbol for linemod.work line 4"
grep -q ' T __main__.other:[0-9]' "$sym" && vt_fail "lines recorded in __main__ (not in --lines)"
# the loop body line ran 3 times, each a "call" under work()
n=$(vt_calls "$VT_TMP/d" "linemod.work:5 ")
[ "$n" = 3 ] || vt_fail "linemod.work:5 ran $n times, want 3"
vt_replay "$VT_TMP/d" -F '^linemod\.work ' | grep -q 'linemod.work:6' || vt_fail "line 6 not under work() in replay"
# without --lines: no line symbols at all
vt_py -m vmtrace -o "$VT_TMP/e" --clock ns "$SCRIPTS/lines.py" || vt_fail "vmtrace exited $?"
grep -q ' T linemod.work:' "$VT_TMP/e/vmtrace-python.sym" && vt_fail "line symbols without --lines"
echo "ok: line filtering on $("$PY" -V 2>&1)"
