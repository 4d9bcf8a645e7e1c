#!/bin/bash
# The project's machines (PVM): kvm_write_tsc_offset says -(host TSC at vCPU
# creation), debugfs and the PIO markers say 0.  vmtrace align must choose
# the markers, contain the truth within its bound and warn loudly.
set -eu
. "$VT_SRC/tests/align/lib.sh"
"$MKFIX" host guest -n 60 -o 0 >truth.json
# the fixture is a valid trace.dat for trace-cmd (a consumer we did not write)
n=$(trace-cmd report host/trace.dat 2>/dev/null | grep -c 'pio_write at 0x5f0')
[ "$n" = 60 ] || { echo "trace-cmd sees $n marker PIOs, want 60"; exit 1; }
"$VT_BIN" align host guest --json --pairs >align.json 2>stderr.txt
cat stderr.txt
check_json align.json truth.json \
	'j["method"] == "markers"' \
	'j["markers"]["pairs"] == 60' \
	'len(j["segments"]) == 1' \
	'abs(ns(j["segments"][0]["offset_tsc"] - t["offset"])) <= j["bound_ns"]' \
	'0 < j["bound_ns"] < 2000' \
	'any("SOURCES DISAGREE" in w and "tracepoint" in w for w in j["warnings"])' \
	'[s["agrees"] for s in j["sources"] if s["source"] == "tracepoint"] == [False]' \
	'[s["agrees"] for s in j["sources"] if s["source"] == "debugfs"] == [True]' \
	'all(abs(p["residual_ns"]) <= p["half_width_ns"] + j["bound_ns"] for p in j["pairs"])'
grep -q 'warning: SOURCES DISAGREE' stderr.txt
# the text report says the same
"$VT_BIN" align host guest >align.txt 2>/dev/null
grep -q '^method: markers (60 marker pairs), bound' align.txt
grep -q 'tracepoint .*DISAGREES' align.txt
