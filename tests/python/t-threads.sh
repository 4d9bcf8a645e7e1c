#!/bin/bash
# Every thread writes its own <TID>.dat, including one started before
# tracing began; task.txt and info list them.
set -eu
. "$VT_SRC/tests/python/common.sh"

vt_py "$SCRIPTS/threads.py" "$VT_TMP/d" || vt_fail "script exited $?"
n=$(ls "$VT_TMP/d"/*.dat | wc -l)
[ "$n" = 3 ] || vt_fail "$n .dat files, want 3 (main, early, late)"
[ "$(vt_calls "$VT_TMP/d" "__main__.early_work ")" = 1 ] || vt_fail "early_work (thread started before tracing) not recorded"
[ "$(vt_calls "$VT_TMP/d" "__main__.late_work ")" = 1 ] || vt_fail "late_work not recorded"
[ "$(grep -c '^TASK' "$VT_TMP/d/task.txt")" = 3 ] || vt_fail "task.txt: $(cat "$VT_TMP/d/task.txt")"
echo "ok: 3 threads on $("$PY" -V 2>&1)"
