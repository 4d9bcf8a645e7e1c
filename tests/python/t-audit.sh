#!/bin/bash
# The setprofile backend installs its C hooks on every thread through the
# sys.setprofile audit event: an audit hook that refuses it makes
# vmtrace.start() raise the hook's own error with nothing left installed,
# and a later start() traces (uftrace report sees the call).
set -eu
. "$VT_SRC/tests/python/common.sh"

[ "$(vt_py -c 'import vmtrace; print(vmtrace.backend)')" = setprofile ] ||
	vt_skip "$PY uses sys.monitoring: no sys.setprofile audit event"
vt_py "$SCRIPTS/audit.py" "$VT_TMP/d" || vt_fail "audit.py exited $?"
[ "$(vt_calls "$VT_TMP/d" "__main__.f ")" = 1 ] || vt_fail "f() not traced after the refused start"
echo "ok: a refusing audit hook on $("$PY" -V 2>&1)"
