#!/bin/bash
# `pip install .` from the checkout works with no network (Debian's
# setuptools, no build isolation) and the installed package traces.
# timeout: 300
set -eu
. "$VT_SRC/tests/python/common.sh"
[ -z "$VT_PRELOAD" ] || vt_skip "sanitizer build: pip builds its own extension"
"$PY" -c "import setuptools" 2>/dev/null || vt_skip "no setuptools for $PY (no network to get one; Debian's setuptools 66 fails on it: install_layout)"
cp -r "$VT_SRC/setup.py" "$VT_SRC/lib" "$VT_SRC/guest" "$VT_TMP/"
mkdir -p "$VT_TMP/src" && mv "$VT_TMP/setup.py" "$VT_TMP/lib" "$VT_TMP/guest" "$VT_TMP/src/"
"$PY" -m pip install --no-build-isolation --no-index --no-deps --target "$VT_TMP/x" "$VT_TMP/src" \
	> "$VT_TMP/pip.log" 2>&1 || vt_fail "pip install: $(tail -n 5 "$VT_TMP/pip.log")"
cd "$VT_TMP"
PYTHONPATH=$VT_TMP/x "$PY" -m vmtrace -o d --clock ns "$SCRIPTS/calls.py" || vt_fail "installed vmtrace exited $?"
[ "$(vt_calls d "__main__.leaf ")" = 2 ] || vt_fail "installed vmtrace did not trace leaf()"
echo "ok: pip install on $("$PY" -V 2>&1)"
