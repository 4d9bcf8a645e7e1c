#!/bin/bash
# One byte changed at 1000 random offsets of a host recording's trace.dat
# (tests/align/mkfixture: kvm events, pio markers, write_tsc_offset):
# `vmtrace merge`, `vmtrace align` and `vmtrace info` never crash and never
# fail silently; the recordings in tests/faults/regress/ (each once crashed
# merge) go through merge and info first.
# timeout: 300
set -eu
. "$VT_SRC/tests/faults/lib.sh"

mkdir -p "$VT_TMP/w"
"$VT_BUILD/tests/align/mkfixture" "$VT_TMP/w/host" "$VT_TMP/w/guest" -n 10 >/dev/null
# recordings that once crashed a command (tests/faults/regress/NAME/)
for r in "$VT_SRC"/tests/faults/regress/*/; do
	cp -r "$r" "$VT_TMP/regress"
	run_clean "merge of regress/$(basename "$r")" "$VT_BIN" merge "$VT_TMP/regress" -o "$VT_TMP/r.json" -q
	run_clean "info of regress/$(basename "$r")" "$VT_BIN" info "$VT_TMP/regress"
	rm -rf "$VT_TMP/regress" "$VT_TMP/r.json"
done
run_ok "merge of the intact recording" "$VT_BIN" merge "$VT_TMP/w/host" -o "$VT_TMP/ok.json" -q
"$MUTATE" --count "$MUTANTS" "$VT_TMP/w/host" trace.dat \
	-- "$VT_BIN" merge "{dir}" -o "{out}.json" -q \
	-- "$VT_BIN" align "{dir}" "{base}/guest" \
	-- "$VT_BIN" info "{dir}"
