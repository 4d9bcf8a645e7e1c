#!/bin/bash
# Generators and asyncio coroutines: every resume is an entry, every yield an
# exit, so await gaps show (on sys.monitoring marked by address bit 1).
set -eu
. "$VT_SRC/tests/python/common.sh"

vt_py -m vmtrace -o "$VT_TMP/d" --clock ns "$SCRIPTS/gens.py" || vt_fail "vmtrace exited $?"
n=$(vt_calls "$VT_TMP/d" "__main__.gen ")
[ "$n" = 3 ] || vt_fail "gen: $n entries, want 3 (start + 2 resumes)"
n=$(vt_calls "$VT_TMP/d" "__main__.sub ")
[ "$n" -ge 4 ] || vt_fail "sub: $n entries, want >= 4 (2 coroutines, each resumed after sleep)"
n=$(vt_calls "$VT_TMP/d" "__main__.amain ")
[ "$n" -ge 2 ] || vt_fail "amain: $n entries, want >= 2"
vt_replay "$VT_TMP/d" >/dev/null || vt_fail "replay: $(cat "$VT_TMP/replay.err")"
if [ "$(vt_py -c 'import vmtrace; print(vmtrace.backend)')" = sys.monitoring ]; then
	vt_py - "$VT_TMP/d" <<'P' || vt_fail "no yield records (addr bit 1) for gen"
import glob, struct, sys
d = sys.argv[1]
base = 0x100000000
gen = [int(l.split()[0], 16) + base for l in open(d + "/vmtrace-python.sym")
       if " T __main__.gen " in l][0]
recs = open(glob.glob(d + "/[0-9]*.dat")[0], "rb").read()
bits = [struct.unpack_from("<QQ", recs, i)[1] for i in range(0, len(recs), 16)]
yields = [b for b in bits if b & 3 == 1 and b >> 16 == gen + 2]
resumes = [b for b in bits if b & 3 == 0 and b >> 16 == gen + 2]
sys.exit(0 if len(yields) == 2 and len(resumes) == 2 else 1)
P
fi
echo "ok: generators and coroutines on $("$PY" -V 2>&1)"
