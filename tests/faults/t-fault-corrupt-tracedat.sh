#!/bin/bash
# One byte changed at 1000 random offsets of a host recording's trace.dat
# (tests/align/mkfixture: kvm events, pio markers, write_tsc_offset):
# `vmtrace merge`, `vmtrace align` and `vmtrace info` never crash and never
# fail silently; the recordings in tests/faults/regress/ (each once crashed
# merge) go through merge and info first; then 1/3 as many mutants of a
# trace.dat v7 compressed with zlib (trace-cmd's, tests/lib/fixtures/tc-zlib).
# Half as many again change a byte of the pages' events only (--events).
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
# the same with the byte taken from the events of the pages (headers and
# payloads: what the fuzz inputs and the offsets above rarely reach)
"$MUTATE" --count "$((MUTANTS / 2))" --seed 26 --events 1 "$VT_TMP/w/host" trace.dat \
	-- "$VT_BIN" merge "{dir}" -o "{out}.json" -q \
	-- "$VT_BIN" align "{dir}" "{base}/guest" \
	-- "$VT_BIN" info "{dir}"
# the same for a compressed v7 file (trace-cmd's zlib, tests/lib/fixtures):
# corrupt section and chunk headers, streams that do not inflate, a BUFFER
# option pointing anywhere
mkdir -p "$VT_TMP/z/host" "$VT_TMP/z/guest"
FX=$VT_SRC/tests/lib/fixtures/tc-zlib
cp "$FX/trace-zlib.dat" "$VT_TMP/z/host/trace.dat"
cp "$FX/vmtrace.meta" "$VT_TMP/z/host/"
cp "$FX/markers.dat" "$VT_TMP/z/guest/"
run_ok "merge of the intact zlib recording" "$VT_BIN" merge "$VT_TMP/z/host" -o "$VT_TMP/zok.json" -q
"$MUTATE" --count "$((MUTANTS / 3))" "$VT_TMP/z/host" trace.dat \
	-- "$VT_BIN" merge "{dir}" -o "{out}.json" -q \
	-- "$VT_BIN" align "{dir}" "$VT_TMP/z/guest"
