#!/bin/bash
# Another VM in the host recording: kvm:* events are recorded system-wide,
# so a second QEMU's vCPU writes its own tsc offset and PIO marker values
# (the same seqs) into the same trace.dat.  vmtrace align must use only the
# events of this recording's vCPU threads (host vmtrace.meta): one segment,
# every marker paired once, the true offset within the bound, no warning,
# and a note saying how many foreign events it ignored.
set -eu
. "$VT_SRC/tests/align/lib.sh"
"$MKFIX" host guest -n 40 -o 12345 -t 12345 -F >truth.json
# trace-cmd (a consumer we did not write) sees both VMs' marker PIOs
n=$(trace-cmd report host/trace.dat 2>/dev/null | grep -c 'pio_write at 0x5f0')
[ "$n" = 80 ] || { echo "trace-cmd sees $n marker PIOs, want 80"; exit 1; }
"$VT_BIN" align host guest --json --pairs >align.json
check_json align.json truth.json \
	'j["method"] == "markers"' \
	'len(j["segments"]) == 1' \
	'j["markers"] == {"guest": 40, "host": 40, "pairs": 40, "rejected_records": 0}' \
	'abs(ns(j["segments"][0]["offset_tsc"] - t["offset"])) <= j["bound_ns"]' \
	'j["warnings"] == []' \
	'any("41 kvm_write_tsc_offset/pio/mmio/hypercall events of threads that are not" in n for n in j["notes"])'
# without the meta's thread list nothing tells the VMs apart: the other
# VM's offset write splits the run and its markers collide (warned)
mv host/vmtrace.meta meta.keep
grep -v '^kvm\.thread\|^kvm\.vcpu_threads' meta.keep >host/vmtrace.meta
"$VT_BIN" align host guest --json >nometa.json 2>/dev/null || true
check_json nometa.json truth.json 'len(j["warnings"]) > 0'
