#!/bin/bash
# -m module, --no-c-calls, --max-depth, and the vmtrace.trace() context manager.
set -eu
. "$VT_SRC/tests/python/common.sh"
cd "$VT_TMP"
export PYTHONPATH=$SCRIPTS

vt_py -m vmtrace -o m --clock ns -m ctxmod || vt_fail "-m ctxmod exited $?"
[ "$(vt_calls m "__main__.inner ")" = 1 ] || vt_fail "-m module: inner() not traced"
[ "$(vt_calls m "builtins.len")" -ge 1 ] || vt_fail "C call len() not traced by default"

vt_py -m vmtrace -o n --clock ns --no-c-calls -m ctxmod || vt_fail "--no-c-calls exited $?"
[ "$(vt_calls n "__main__.inner ")" = 1 ] || vt_fail "--no-c-calls: inner() not traced"
[ "$(vt_calls n "builtins.")" = 0 ] || vt_fail "--no-c-calls: builtins traced"

vt_py -m vmtrace -o x --clock ns --max-depth 3 -m ctxmod || vt_fail "--max-depth exited $?"
vt_py - x <<'P' || vt_fail "--max-depth 3: records deeper than depth 2"
import glob, struct, sys
for f in glob.glob(sys.argv[1] + "/*.dat"):
    data = open(f, "rb").read()
    for i in range(0, len(data), 16):
        bits = struct.unpack_from("<QQ", data, i)[1]
        if (bits >> 6) & 1023 > 2:
            sys.exit(1)
P

# no -o: ./vmtrace-python (docs/cli.md, Default output), named on stderr
mkdir dflt && (cd dflt && vt_py -m vmtrace --clock ns -m ctxmod 2>../dflt.err) || vt_fail "no -o: exit $?"
[ "$(vt_calls dflt/vmtrace-python "__main__.inner ")" = 1 ] || vt_fail "no -o: nothing in ./vmtrace-python"
grep -q '^vmtrace: trace in vmtrace-python ' dflt.err || vt_fail "no -o: $(cat dflt.err)"

vt_py "$SCRIPTS/ctxmod.py" ctx "$VT_TMP/c" || vt_fail "context manager script exited $?"
[ "$(vt_calls c "__main__.outer ")" = 1 ] || vt_fail "trace(): outer() traced $(vt_calls c "__main__.outer ") times, want 1"
echo "ok: options on $("$PY" -V 2>&1)"
