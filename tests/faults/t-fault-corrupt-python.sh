#!/bin/bash
# One byte changed at 1000 random offsets of a real Python tracer directory
# (/usr/bin/python3 -m vmtrace: info, task.txt, the .dat, vmtrace-python.sym,
# the .map, vmtrace.meta): `vmtrace info -r` and `vmtrace merge` never crash
# and never fail silently.
# timeout: 300
set -eu
. "$VT_SRC/tests/faults/lib.sh"
[ -d "$VT_BUILD/python/vmtrace" ] || skip "python tracer not built ($VT_BUILD/python)"

cat >"$VT_TMP/fib.py" <<'PYEOF'
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)
fib(8)
PYEOF
d="$VT_TMP/py"
vt_py -S -m vmtrace -o "$d" "$VT_TMP/fib.py"
run_ok "info of the intact trace" "$VT_BIN" info -r "$d"
files=$(cd "$d" && ls info task.txt *.dat *.sym *.map vmtrace.meta)
"$MUTATE" --count "$MUTANTS" "$d" $files \
	-- "$VT_BIN" info -r "{dir}" \
	-- "$VT_BIN" merge "{dir}" -o "{out}.json" -q
