#!/bin/bash
# What the marker source takes of the host's events and what it leaves
# (mkfixture -e adds events to a fixture with a known answer): PIO reads,
# rep outs, other hypercalls; MMIO reads and other addresses; chardev
# writes of QEMU's I/O thread beside the vCPU thread's, writes of more
# than one byte, more fds than are compared; in-band hypercall chains
# that do not close; guest markers naming more ports than are kept, or
# ports a --port replaces; a pwrite64, a kvm event align has no use for;
# an offset write that is not the vCPU's first, a trace with no clock.
# Each time the fixture's markers still match, and what was left is
# counted or said.
set -eu
. "$VT_SRC/tests/align/lib.sh"
C=5000000000000		# mkfixture's CREATE_TSC
L=$((C + 5000000000))	# after every generated event
V=4242 IO=4243		# its vCPU thread, QEMU's I/O thread
val() { printf '0x%x' $(( (0x56 << 24) | $1 )); }

# PIO: a read of the marker port, a rep outs to it, a hypercall nobody
# names: none is an observation
cat >ev.txt <<EOT
$L $V pio 0 0x5f0 $(val 3) 1
$((L + 10)) $V pio 1 0x5f0 $(val 4) 2
$((L + 20)) $V hc 5 0 0 0 0
EOT
"$MKFIX" h g -n 10 -o 5000 -e ev.txt >t.json
"$VT_BIN" align h g --json >a.json 2>err.txt
check_json a.json t.json 'j["markers"]["host"] == 10 and j["markers"]["pairs"] == 10' \
	'ns(abs(j["segments"][0]["offset_tsc"] - t["offset"])) <= j["bound_ns"]'
if grep -q 'have no guest record' err.txt; then fail "an ignored event counted: $(cat err.txt)"; fi

# MMIO: a read of the marker address, a write elsewhere
cat >ev.txt <<EOT
$L $V mmio 1 0xfebff000 $(val 3)
$((L + 10)) $V mmio 2 0xfebfe000 $(val 4)
EOT
rm -rf h g; "$MKFIX" h g -n 10 -o 5000 -m -e ev.txt >t.json
"$VT_BIN" align h g --json >a.json 2>/dev/null
check_json a.json t.json 'j["markers"]["host"] == 10 and j["markers"]["pairs"] == 10' \
	'any("host: 10 kvm_mmio writes and 0 kvm_hypercall at the guest" in n for n in j["notes"])'

# chardev: the vCPU thread writes fd 9; QEMU's I/O thread also writes fd 9
# (not a vCPU's: left out), the vCPU thread writes 3 bytes once (no marker)
cat >ev.txt <<EOT
$L $IO writev 9
$((L + 10)) $V write 9 3
EOT
rm -rf h g; "$MKFIX" h g -n 10 -o 5000 -c -e ev.txt >t.json
"$VT_BIN" align h g --json >a.json 2>/dev/null
check_json a.json t.json 'j["markers"]["host"] == 10 and j["markers"]["pairs"] == 10' \
	'any("one-byte writes to fd 9 by vCPU threads (10 of 10 guest markers" in n for n in j["notes"])'
# only the I/O thread writes: 65 more fds written once each, after the
# markers; 64 fds are compared (9 and 10 first), --marker-fd 9 decides
"$PY" -c "
for k in range(65):
    print('%d $IO writev %d' % ($L + 10 * k, 100 + k))" >ev.txt
rm -rf h g; "$MKFIX" h g -n 10 -o 5000 -c -w -e ev.txt >t.json
"$VT_BIN" align h g --marker-fd 9 --json >a.json 2>/dev/null
check_json a.json t.json 'j["markers"]["host"] == 10 and j["markers"]["pairs"] == 10' \
	'any("one-byte writes to fd 9 (10 of 10 guest markers" in n for n in j["notes"])'
# a chardev marker in a guest whose host saw no write at all: nothing to pick
rm -rf h g; "$MKFIX" h g -n 10 -o 5000 >t.json
add_marker g 4 0xe9 500 -1 1000 2000
"$VT_BIN" align h g --json >a.json 2>/dev/null
check_json a.json t.json 'j["markers"]["guest"] == 11 and j["markers"]["pairs"] == 10' \
	'not any("write() fd" in n or "chardev markers" in n for n in j["notes"])'

# in-band hypercalls (64-bit ABI, 4242's chains 7, 8, 9 after the
# fixture's): a next call with no "after" (0), one whose "after" precedes
# the "before", one whose seq does not follow; each last call has no next:
# 6 dropped, the fixture's 10 made.  The guest's markers.dat holds one PIO
# marker (not a hypercall one): the in-band markers are made all the same.
HC=0x56540001
cat >ev.txt <<EOT
$L $V hc $HC 1000 0 500 $(( (7 << 32) | 1 ))
$((L + 10)) $V hc $HC 2000 0 501 $(( (7 << 32) | 1 ))
$((L + 20)) $V hc $HC 3000 0 600 $(( (8 << 32) | 1 ))
$((L + 30)) $V hc $HC 4000 2999 601 $(( (8 << 32) | 1 ))
$((L + 40)) $V hc $HC 5000 0 700 $(( (9 << 32) | 1 ))
$((L + 50)) $V hc $HC 6000 5001 702 $(( (9 << 32) | 1 ))
EOT
rm -rf h g; "$MKFIX" h g -n 10 -o 5000 -k -e ev.txt >t.json
add_marker g 1 0x5f0 900 -1 1000 2000
"$VT_BIN" align h g --json >a.json 2>err.txt
check_json a.json t.json 'j["markers"]["pairs"] == 10 and j["markers"]["guest"] == 11' \
	'"host: h/trace.dat: 10 in-band hypercall markers (the guest'"'"'s readings carried in kvm_hypercall)" in j["notes"]' \
	'ns(abs(j["segments"][0]["offset_tsc"] - t["offset"])) <= j["bound_ns"]'
grep -qF 'h/trace.dat: 6 in-band hypercall markers without a valid closing reading dropped' err.txt ||
	fail "dropped in-band markers: $(cat err.txt)"

# guest PIO markers at 17 more ports (unmatched): 16 addresses are kept;
# the host's note says the guest's ports are searched
rm -rf h g; "$MKFIX" h g -n 10 -o 5000 >t.json
for k in $(seq 0 16); do add_marker g 1 $((0x100 + k)) $((600 + k)) -1 1000 2000; done
"$VT_BIN" align h g --json >a.json 2>/dev/null
check_json a.json t.json 'j["markers"]["pairs"] == 10 and j["markers"]["guest"] == 27' \
	'any("kvm_pio writes to marker port 0x5f0 (and the guest'"'"'s ports)" in n for n in j["notes"])'
# --port replaces them: said, with the first other port
"$VT_BIN" align h g --port 0x5f0 --json >a.json 2>/dev/null
check_json a.json t.json 'j["markers"]["pairs"] == 10' \
	'"host: --port 0x5f0 replaces the ports the guest'"'"'s PIO markers name (0x100, ...): only 0x5f0 is searched" in j["notes"]'
# chardev: a pwrite64 of one byte by the vCPU thread counts as a write of
# the chardev's fd, as a write() of one byte does (two more observations,
# unmatched; with fd 10's noise 22 one-byte writes); a kvm_msr event
# (kvm, of no use to align) is passed over
cat >ev.txt <<EOT
$L $V pwrite 9 1
$((L + 10)) $V msr 0x10
$((L + 20)) $V write 9 1
EOT
rm -rf h g; "$MKFIX" h g -n 10 -o 5000 -c -e ev.txt >t.json
"$VT_BIN" align h g --json >a.json 2>/dev/null
check_json a.json t.json 'j["markers"]["host"] == 12 and j["markers"]["pairs"] == 10' \
	'any(", 22 one-byte write syscalls" in n for n in j["notes"])' \
	'"2 of 12 host marker observations have no guest record: ignored" in j["warnings"]'

# the trace holds no creation-time offset write of vCPU 0 (the recording
# started after the VM): one later write (previous offset not 0), said
# so; a trace.dat whose trace_clock option is empty: "unknown"
echo "$L $V tsc 0 5000 5000" >ev.txt
rm -rf h g; "$MKFIX" h g -n 10 -o 5000 -T -C '' -e ev.txt >t.json
"$VT_BIN" align h g --json >a.json 2>/dev/null
check_json a.json t.json 'j["markers"]["pairs"] == 10 and j["method"] == "markers"' \
	'"host: vCPU 0: its creation-time kvm_write_tsc_offset is not in the trace (the recording started after the VM): its offset comes from debugfs and markers until the trace'"'"'s first offset write" in j["notes"]' \
	'any("events (clock unknown), 1 kvm_write_tsc_offset" in n for n in j["notes"])'

echo "marker source: ignored PIO/MMIO/hypercall/write events, chardev choices, in-band chains dropped, port sets"
