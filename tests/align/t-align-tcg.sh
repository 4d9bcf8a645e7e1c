#!/bin/bash
# Real data, TCG: the freestanding marker guest (lib/marker.h's emitter,
# one isa-debugcon byte per marker) runs under `vmtrace record`; the host
# sees QEMU's vCPU thread write each byte.  vmtrace align must match all
# markers, give a bound under 100 us, and a model built from every other
# marker must bracket the held-out ones within its bound.
# timeout: 120
set -eu
. "$VT_SRC/tests/align/lib.sh"
need_record
elf=$VT_BUILD/tests/align/marker-guest.elf
[ -f "$elf" ] || fail "$elf not built"
mkdir guest
rc=0
"$VT_BIN" record -o host -- qemu-system-x86_64 -accel tcg -name mk,debug-threads=on \
	-kernel "$elf" -device isa-debugcon,iobase=0xe9,chardev=mk -chardev file,id=mk,path=mk.out \
	-device isa-debugcon,iobase=0x4e9,chardev=dump \
	-chardev file,id=dump,path=guest/markers.dat \
	-device isa-debug-exit,iobase=0xf4,iosize=4 -display none -serial none -monitor none \
	-nodefaults -no-reboot -m 16 || rc=$?
[ $rc = 1 ] || fail "guest did not exit through isa-debug-exit (qemu status $rc)"
[ "$(stat -c %s guest/markers.dat)" = $((40 * 48)) ] || fail "guest handed out a short markers.dat"
"$VT_BIN" align host guest --json --pairs >full.json
"$VT_BIN" align host guest --pairs
echo '{"hz": 1}' >t.json
check_json full.json t.json \
	'j["method"] == "markers"' \
	'j["markers"]["pairs"] == 40' \
	'0 < j["bound_ns"] < 100000' \
	'all(abs(p["residual_ns"]) <= p["half_width_ns"] + j["bound_ns"] for p in j["pairs"])' \
	'any("by vCPU threads" in n for n in j["notes"])'
# gross sanity: under TCG the guest TSC starts near 0 when QEMU starts, so
# -offset lies between the recording's start and the first marker
start=$(sed -n 's/^record.start_tsc_host=//p' host/vmtrace.meta)
"$PY" -c '
import json, sys
j = json.load(open("full.json")); s = int(sys.argv[1])
off = j["segments"][0]["offset_tsc"]; first = j["pairs"][0]["tsc_host"]
print("offset", off, "record start", s, "first marker", first)
sys.exit(0 if s <= -off <= first else 1)' "$start" || fail "offset implausible"
mkdir half
every_other guest/markers.dat half/markers.dat
"$VT_BIN" align host half --json --pairs >half.json
held_out full.json half.json
