#!/bin/bash
# Events an extension fires through the 3.13 monitoring C-API
# (PyMonitoring_FirePyStartEvent ... for a code-like object) are recorded.
set -eu
. "$VT_SRC/tests/python/common.sh"

inc=$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
suf=$("$PY" -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
mkdir -p "$VT_TMP/ext"
gcc -std=gnu11 -Wall -Wextra -Wno-unused-parameter -Werror -O2 -fPIC -shared -I"$inc" -o "$VT_TMP/ext/vtfire$suf" \
	"$SCRIPTS/fire.c" || vt_fail "cannot build the test extension"
PYTHONPATH=$VT_TMP/ext:$PYDIR LD_PRELOAD=$VT_PRELOAD "$PY" -m vmtrace -o "$VT_TMP/d" --clock ns \
	"$SCRIPTS/fired.py" || vt_fail "vmtrace exited $?"
vt_replay "$VT_TMP/d" -F '^__main__\.caller ' > "$VT_TMP/tree"
grep -q 'codelike.compiled_region' "$VT_TMP/tree" || { cat "$VT_TMP/tree"; vt_fail "fired PY_START not recorded under caller()"; }
[ "$(vt_calls "$VT_TMP/d" "codelike.compiled_region")" = 1 ] || vt_fail "want exactly 1 fired region"
echo "ok: monitoring C-API events on $("$PY" -V 2>&1)"
