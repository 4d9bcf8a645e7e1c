#!/bin/bash
# One byte changed at 1000 random offsets of a host recording's trace.dat
# (tests/align/mkfixture: kvm events, pio markers, write_tsc_offset):
# `vmtrace merge`, `vmtrace align` and `vmtrace info` never crash and never
# fail silently.
# timeout: 300
set -eu
. "$VT_SRC/tests/faults/lib.sh"

mkdir -p "$VT_TMP/w"
"$VT_BUILD/tests/align/mkfixture" "$VT_TMP/w/host" "$VT_TMP/w/guest" -n 10 >/dev/null
run_ok "merge of the intact recording" "$VT_BIN" merge "$VT_TMP/w/host" -o "$VT_TMP/ok.json" -q
"$MUTATE" --count "$MUTANTS" "$VT_TMP/w/host" trace.dat \
	-- "$VT_BIN" merge "{dir}" -o "{out}.json" -q \
	-- "$VT_BIN" align "{dir}" "{base}/guest" \
	-- "$VT_BIN" info "{dir}"
