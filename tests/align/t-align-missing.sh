#!/bin/bash
# A marker missing on each side, TCG-style chardev markers matched by order,
# MMIO markers, and sources alone (no markers): each gives the right model.
set -eu
. "$VT_SRC/tests/align/lib.sh"
"$MKFIX" h1 g1 -n 40 -o 777 -H 7 -G 23 >t1.json
"$VT_BIN" align h1 g1 --json >a1.json
check_json a1.json t1.json \
	'j["markers"]["pairs"] == 38' \
	'abs(ns(j["segments"][0]["offset_tsc"] - t["offset"])) <= j["bound_ns"]' \
	'any("no host twin" in w for w in j["warnings"])' \
	'any("no guest record" in w for w in j["warnings"])'

# TCG: no KVM sources, one-byte writev() of QEMU's vCPU thread; another fd
# writes too; the host missed one write
"$MKFIX" h2 g2 -n 40 -o -5000000000 -c -T -D -H 11 >t2.json
"$VT_BIN" align h2 g2 --json >a2.json
check_json a2.json t2.json \
	'j["method"] == "markers"' \
	'j["markers"]["pairs"] == 39' \
	'abs(ns(j["segments"][0]["offset_tsc"] - t["offset"])) <= j["bound_ns"]' \
	'any("fd 9" in n for n in j["notes"])'

# MMIO markers (kvm_mmio writes at the guest's marker address), PIO noise
"$MKFIX" h4 g4 -n 30 -o 99 -m >t4.json
trace-cmd report h4/trace.dat 2>/dev/null | grep -q 'kvm_mmio:.*gpa 0xfebff000' || fail "fixture: no kvm_mmio"
"$VT_BIN" align h4 g4 --json >a4.json
check_json a4.json t4.json \
	'j["method"] == "markers"' \
	'j["markers"]["pairs"] == 30' \
	'abs(ns(j["segments"][0]["offset_tsc"] - t["offset"])) <= j["bound_ns"]'

# no markers at all: debugfs outranks the lying tracepoint, loudly, unproven
"$MKFIX" h3 g3 -n 10 -o 0 >t3.json
rm g3/markers.dat
"$VT_BIN" align h3 g3 --json >a3.json
check_json a3.json t3.json \
	'j["method"] == "debugfs"' \
	'j["bound_ns"] is None' \
	'j["segments"][0]["offset_tsc"] == t["offset"]' \
	'any("SOURCES DISAGREE" in w for w in j["warnings"])'
