#!/bin/bash
# After fork() the child writes DIR/fork-<PID>, never the parent's files.
set -eu
. "$VT_SRC/tests/python/common.sh"

child=$(vt_py -m vmtrace -o "$VT_TMP/d" --clock ns "$SCRIPTS/forks.py") || vt_fail "vmtrace exited $?"
[ -d "$VT_TMP/d/fork-$child" ] || vt_fail "no $VT_TMP/d/fork-$child"
[ "$(vt_calls "$VT_TMP/d/fork-$child" "__main__.child_work ")" = 1 ] || vt_fail "child_work not in the child's trace"
[ "$(vt_calls "$VT_TMP/d" "__main__.child_work ")" = 0 ] || vt_fail "child_work in the parent's trace"
[ "$(vt_calls "$VT_TMP/d" "__main__.parent_work ")" = 1 ] || vt_fail "parent_work not in the parent's trace"
ls "$VT_TMP/d/$child.dat" 2>/dev/null && vt_fail "child wrote into the parent's directory"
vt_replay "$VT_TMP/d/fork-$child" >/dev/null || vt_fail "replay of the child: $(cat "$VT_TMP/replay.err")"
echo "ok: fork on $("$PY" -V 2>&1)"
