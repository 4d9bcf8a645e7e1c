#!/bin/bash
# One byte changed at 1000 random offsets of a real `vmtrace run` uftrace
# data directory (info, task.txt, each .dat, .sym, .map): `vmtrace info -r`,
# `vmtrace merge` and `vmtrace convert` never crash (no signal, no sanitizer
# report, no exit >= 128) and never fail silently.
# timeout: 300
set -eu
. "$VT_SRC/tests/faults/lib.sh"

d="$VT_TMP/run"
"$VT_BIN" run -o "$d" -- "$GPROGS/mt-pg" >/dev/null
run_ok "info of the intact trace" "$VT_BIN" info -r "$d"
files=$(cd "$d" && ls info task.txt *.dat *.sym *.map)
"$MUTATE" --count "$MUTANTS" "$d" $files \
	-- "$VT_BIN" info -r "{dir}" \
	-- "$VT_BIN" merge "{dir}" -o "{out}.json" -q \
	-- "$VT_BIN" convert "{dir}" "{out}"
