#!/bin/bash
# An offset change mid-trace (kvm_write_tsc_offset + debugfs agree with the
# truth here): two segments, each with markers, each containing the truth;
# the host frequency's source is the one the meta names (tsc.hz_source).
set -eu
. "$VT_SRC/tests/align/lib.sh"
"$MKFIX" host guest -n 40 -o -1000000 -t -1000000 -x 20:123456789 >truth.json
"$VT_BIN" align host guest --json >align.json
check_json align.json truth.json \
	'len(j["segments"]) == 2' \
	'j["segments"][1]["tsc_host_start"] == t["change_tsc_host"]' \
	'abs(ns(j["segments"][0]["offset_tsc"] - t["offset_before_change"])) <= j["segments"][0]["bound_ns"]' \
	'abs(ns(j["segments"][1]["offset_tsc"] - t["offset"])) <= j["segments"][1]["bound_ns"]' \
	'all(s["source"] == "markers" and s["n_markers"] == 20 for s in j["segments"])' \
	'not any("DISAGREE" in w for w in j["warnings"])' \
	'j["host_hz_from"] == "mkfixture"'
