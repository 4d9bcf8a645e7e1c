#!/bin/bash
# One byte changed at 1000 random offsets of a guest's markers.dat: `vmtrace
# align` and `vmtrace merge` (which aligns with it) never crash and never
# fail silently.
# timeout: 300
set -eu
. "$VT_SRC/tests/faults/lib.sh"

w="$VT_TMP/w"
mkdir -p "$w"
"$VT_BUILD/tests/align/mkfixture" "$w/host" "$w/markers" -n 20 >/dev/null
"$VT_BIN" run -o "$w/guest" -- "$GPROGS/mt-pg" >/dev/null
cp "$w/markers/markers.dat" "$w/guest/"
run_ok "align of the intact traces" "$VT_BIN" align "$w/host" "$w/guest"
"$MUTATE" --count "$MUTANTS" "$w" guest/markers.dat \
	-- "$VT_BIN" align "{dir}/host" "{dir}/guest" --pairs \
	-- "$VT_BIN" merge "{dir}/host" "{dir}/guest" -o "{out}.json" -q
