#!/bin/bash
# Nested calls, exceptions and C calls give uftrace replay the expected tree
# (t-calls-313.sh: the same on CPython 3.13 with sys.monitoring).
set -eu
. "$VT_SRC/tests/python/common.sh"

vt_py -m vmtrace -o "$VT_TMP/d" --clock ns "$SCRIPTS/calls.py" || vt_fail "vmtrace exited $?"
vt_replay "$VT_TMP/d" -F '^__main__\.top ' > "$VT_TMP/tree" || vt_fail "replay: $(cat "$VT_TMP/replay.err")"
sed -e 's/ ([^)]*)//' -e 's/()//' -e 's/ *$//' "$VT_TMP/tree" |
	awk '/^#/ || /^ *$/ { next } { print } /^} \/\* __main__.top \*\/$/ { exit }' > "$VT_TMP/got"
backend=$(vt_py -c 'import vmtrace; print(vmtrace.backend)')
# setprofile (3.8-3.11) reports only builtin functions as C calls;
# sys.monitoring also calls of types (str(), KeyError()).
if [ "$backend" = sys.monitoring ]; then S='      str.__call__;'; K='      KeyError.__call__;'; else S=; K=; fi
{
cat <<W
__main__.top {
  __main__.middle {
    __main__.leaf {
$S
      builtins.len;
    } /* __main__.leaf */
    __main__.leaf {
$S
      builtins.len;
    } /* __main__.leaf */
  } /* __main__.middle */
  __main__.catcher {
W
if [ -n "$K" ]; then printf '    __main__.boom {\n%s\n    } /* __main__.boom */\n' "$K"; else echo '    __main__.boom;'; fi
cat <<W
  } /* __main__.catcher */
  builtins.sorted;
} /* __main__.top */
W
} | grep -v '^$' > "$VT_TMP/want"
diff -u "$VT_TMP/want" "$VT_TMP/got" || vt_fail "call tree differs"
# boom() was left by an exception: its exit record has address bit 0 set
vt_py - "$VT_TMP/d" <<'P' || vt_fail "no exit-by-exception record for boom"
import glob, struct, sys
d = sys.argv[1]
syms = {}
for line in open(d + "/vmtrace-python.sym"):
    a, t, n = line.rstrip("\n").split(" ", 2)
    if t == "T":
        syms[int(a, 16) + 0x100000000] = n
boom = [a for a, n in syms.items() if n.startswith("__main__.boom ")][0]
recs = open(glob.glob(d + "/[0-9]*.dat")[0], "rb").read()
exits = [struct.unpack_from("<QQ", recs, i)[1] for i in range(0, len(recs), 16)]
exits = [b >> 16 for b in exits if b & 3 == 1]
sys.exit(0 if boom + 1 in exits else 1)
P
# the default TSC clock: vmtrace convert to ns gives uftrace the same tree
vt_py -m vmtrace -o "$VT_TMP/t" "$SCRIPTS/calls.py" || vt_fail "vmtrace (tsc) exited $?"
grep -q '^clock=tsc$' "$VT_TMP/t/vmtrace.meta" || vt_fail "vmtrace.meta: clock is not tsc"
grep -q '^tsc.hz=[1-9]' "$VT_TMP/t/vmtrace.meta" || vt_fail "vmtrace.meta: no tsc.hz"
"$VT_BIN" convert "$VT_TMP/t" "$VT_TMP/tn" || vt_fail "vmtrace convert exited $?"
vt_replay "$VT_TMP/tn" -F '^__main__\.top ' | sed -e 's/ ([^)]*)//' -e 's/()//' -e 's/ *$//' |
	awk '/^#/ || /^ *$/ { next } { print } /^} \/\* __main__.top \*\/$/ { exit }' > "$VT_TMP/got2"
diff -u "$VT_TMP/want" "$VT_TMP/got2" || vt_fail "call tree after convert differs"
echo "ok: call tree of calls.py on $("$PY" -V 2>&1) ($backend)"
