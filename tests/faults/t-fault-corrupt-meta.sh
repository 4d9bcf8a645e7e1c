#!/bin/bash
# One byte changed at 1000 random offsets of vmtrace.meta files (a host
# recording's and a `vmtrace run` guest trace's): `vmtrace info`, `vmtrace
# merge` (host + guest) and `vmtrace align` never crash and never fail
# silently.
# timeout: 300
set -eu
. "$VT_SRC/tests/faults/lib.sh"

w="$VT_TMP/w"
mkdir -p "$w"
"$VT_BUILD/tests/align/mkfixture" "$w/host" "$w/markers" -n 10 >/dev/null
"$VT_BIN" run -o "$w/guest" -- "$GPROGS/mt-pg" >/dev/null
cp "$w/markers/markers.dat" "$w/guest/"
run_ok "merge of the intact traces" "$VT_BIN" merge "$w/host" "$w/guest" -o "$VT_TMP/ok.json" -q
# the mutant directory is a copy of $w: both metas are changed in turn
"$MUTATE" --count "$MUTANTS" "$w" host/vmtrace.meta guest/vmtrace.meta \
	-- "$VT_BIN" info "{dir}/host" \
	-- "$VT_BIN" info "{dir}/guest" \
	-- "$VT_BIN" merge "{dir}/host" "{dir}/guest" -o "{out}.json" -q \
	-- "$VT_BIN" align "{dir}/host" "{dir}/guest"
