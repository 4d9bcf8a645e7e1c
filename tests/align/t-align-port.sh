#!/bin/bash
# --port replaces the marker ports, it does not add to them: the guest's
# markers.dat names port 0x5f0 and the markers sit there; the host trace
# also holds tagged decoy writes (the same seqs, a third of a marker step
# earlier) at port 0x70 (mkfixture's noise).  With no option the records'
# port is used; --port 0x5f0 the same; --port 0x70 only the decoys (said
# so, and debugfs disagrees); --port 0x80 (no write there) matches nothing
# and falls back to debugfs, unproven.
set -eu
. "$VT_SRC/tests/align/lib.sh"
"$MKFIX" h g -n 40 -o 123456 -t 123456 >t.json
step=$((2096001000 / 10))
note="host: --port 0x70 replaces the port the guest's PIO markers name (0x5f0): only 0x70 is searched"

# no option: the port of the guest's records
"$VT_BIN" align h g --json >a.json
check_json a.json t.json 'j["method"] == "markers"' \
	'j["markers"]["host"] == 40 and j["markers"]["pairs"] == 40' \
	'any("40 kvm_pio writes to marker port 0x5f0, " in n for n in j["notes"])' \
	'not any("--port" in n for n in j["notes"])' \
	'abs(ns(j["segments"][0]["offset_tsc"] - t["offset"])) <= j["bound_ns"]' 'j["warnings"] == []'
off=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["segments"][0]["offset_tsc"])' a.json)

# --port 0x5f0: the same observations, the same line
"$VT_BIN" align h g --port 0x5f0 --json >b.json
check_json b.json t.json 'j["markers"]["host"] == 40 and j["markers"]["pairs"] == 40' \
	"j['segments'][0]['offset_tsc'] == $off" 'not any("--port" in n for n in j["notes"])' \
	'j["warnings"] == []'

# --port 0x70: the decoys alone (before: 80 observations, 0x5f0's as well),
# a step/3 later offset, the override noted, debugfs and tracepoint disagree
"$VT_BIN" align h g --port 0x70 --json >c.json 2>err.txt
check_json c.json t.json 'j["markers"]["host"] == 40 and j["markers"]["pairs"] == 40' \
	"j['segments'][0]['offset_tsc'] == $off + $step // 3" \
	"\"$note\" in j['notes']" \
	'any("40 kvm_pio writes to marker port 0x70, " in n for n in j["notes"])' \
	'sum("SOURCES DISAGREE" in w for w in j["warnings"]) == 2' \
	'[s["agrees"] for s in j["sources"] if s["source"] != "markers"] == [False, False]'
"$VT_BIN" align h g --port 0x70 >c.txt 2>/dev/null
grep -qxF "  $note" c.txt || fail "--port 0x70 text: $(cat c.txt)"

# --port 0x80: nothing there, no proven bound (before: 0x5f0's 40 pairs)
"$VT_BIN" align h g --port 0x80 --json >d.json 2>err.txt
check_json d.json t.json 'j["markers"]["host"] == 0 and j["markers"]["pairs"] == 0' \
	'j["method"] == "debugfs"' 'j["bound_ns"] is None' \
	'any("0 kvm_pio writes to marker port 0x80, " in n for n in j["notes"])' \
	'"40 of 40 guest markers have no host twin (not recorded on the host, or lost): ignored" in j["warnings"]'
grep -qF 'warning: 40 of 40 guest markers have no host twin' err.txt || fail "--port 0x80: $(cat err.txt)"
echo "ok: --port replaces the records' port"
