#!/bin/bash
# gc collections (generation, collected) and module imports are recorded.
set -eu
. "$VT_SRC/tests/python/common.sh"

vt_py -m vmtrace -o "$VT_TMP/d" --clock ns "$SCRIPTS/gcimp.py" || vt_fail "vmtrace exited $?"
[ "$(vt_calls "$VT_TMP/d" "import json")" -ge 1 ] || vt_fail "no 'import json' recorded"
vt_replay "$VT_TMP/d" -F '^import json' | grep -q 'json.encoder\|import json.decoder\|import json.scanner' ||
	vt_fail "nested imports of json not under 'import json'"
[ "$(vt_calls "$VT_TMP/d" "gc.collect(gen2)")" -ge 1 ] || vt_fail "gc.collect() not recorded"
awk '$3 == 2 { ok = 1 } END { exit !ok }' "$VT_TMP/d/python-gc.txt" || vt_fail "python-gc.txt has no gen 2 line"
echo "ok: gc and imports on $("$PY" -V 2>&1)"
