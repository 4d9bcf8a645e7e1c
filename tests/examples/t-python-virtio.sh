#!/bin/bash
# timeout: 900
# The whole python-virtio workflow (what `make runkvm` runs): guest image
# (cached), boot (KVM if it boots, else TCG), host recording around QEMU,
# guest traces streamed out over virtio-serial while it traces, align, merge.  Checks the merged
# outputs with consumers we did not write (python3 json, trace-cmd report,
# protoc --decode_raw): guest Python slices and host events are in the
# merged timeline, the alignment error bound is reported and below the
# bound for the accelerator used (20 us KVM, 100 us TCG), and every guest
# marker's bracket holds its host twin mapped through the model, within
# that bound.
set -eu
out=$VT_TMP/out
for c in record marker align merge; do
	"$VT_BIN" $c --help >/dev/null 2>&1 || [ $? -ne 5 ] ||
		{ echo "SKIP: 'vmtrace $c' is not built yet"; exit 77; }
done
[ -d "$VT_BUILD/python" ] || { echo "SKIP: the Python extension ($VT_BUILD/python) is not built yet"; exit 77; }
make -s --no-print-directory -C "$VT_SRC/examples/python-virtio" O="$VT_BUILD" \
	OUTDIR="$out" VT_BOOT_TIMEOUT=20 ROUNDS=3 MB=2 run | tee run.log
accel=$(sed -n 's/^accel=//p' "$out/run.txt")
grep -q "slowest guest functions" run.log
# the summary finds I/O inside write_file (its fsync waits for the disk)
awk '/__main__.write_file/ { found = 1; if ($4 + 0 <= 0) bad = 1 }
     END { exit !(found && !bad) }' run.log ||
	{ echo "summary shows no I/O time inside write_file"; exit 1; }
grep -q "alignment *markers: error bound" run.log

# the guest kernel recording reads too, and saw the block layer
trace-cmd report "$out/guest/kernel/trace.dat" 2>/dev/null | grep -m1 -q 'block_'
# the Perfetto file decodes as protobuf
protoc --decode_raw <"$out/merged.pftrace" | head -c 4096 | grep -q .

# Streamed while tracing, seen from both sides:
# - host: the QEMU-written copy of the stream grew while the guest's
#   workload ran (run.sh samples its size until the guest says it ended);
# - guest TSC: DATA frames of the Python tracer's store were made between
#   the first and the last sync marker (read from markers.dat with python3's
#   struct) and before the tracer's last record was written (its
#   per-thread .dat, or the .stage holding its newest records).
"$VT_BIN" unpack --list "$out/guest.stream" >frames.txt
/usr/bin/python3 - "$out" frames.txt <<'PY'
import os, re, struct, sys
out, frames_txt = sys.argv[1:3]
sizes = [int(l.split()[1]) for l in open(out + "/stream-growth.txt")]
grew = sorted(set(s for s in sizes if s > 0))
assert len(grew) >= 2, "the host's stream file did not grow while the workload ran: %s" % sizes
m = open(out + "/guest/markers/markers.dat", "rb").read()
before = [struct.unpack_from("<IHBBQIIQQQ", m, o)[8] for o in range(0, len(m) - 47, 48)]
frames = [l.split() for l in open(frames_txt)]
stores = {f[3] for f in frames if f[2] == "DATA" and re.fullmatch(r"python/\d+\.(dat|stage)", f[3])}
assert stores, "no Python store in the stream"
# the Python tracer's last record, in TSC ticks: its .tsc (the raw stamps
# a finished directory keeps beside the ns .dat), else its .dat
dats = [n for n in stores if n.endswith(".dat")]
def raw(n):
    p = out + "/guest/" + n[:-4] + ".tsc"
    return open(p if os.path.exists(p) else out + "/guest/" + n, "rb").read()
last_rec_tsc = max(struct.unpack_from("<Q", d, len(d) - 16)[0] for d in map(raw, dats))
early = sorted(int(f[1]) for f in frames if f[3] in stores and int(f[5]) > 0 and
               before[0] < int(f[1]) < min(before[-1], last_rec_tsc))
assert early, "no Python store data sent while the workload ran"
marks = sum(1 for t in before if early[0] < t < early[-1])
print("ok: stream grew %d times on the host during the run; %d Python store frames "
      "sent mid-run, %d markers interleaved with them" % (len(grew), len(early), marks))
PY

host_ev=sys_enter_
[ "$accel" = kvm ] && host_ev=kvm_
# the host side: trace-cmd reads the host recording, and it has QEMU's
# syscalls (check_outputs.py --qemu-syscalls)
/usr/bin/python3 "$VT_SRC/tests/examples/check_outputs.py" --qemu-syscalls "$out" __main__.write_file "$host_ev"
# Under KVM (the machine's, or the KVM lab's): the merged timeline has what
# a KVM host gives - vCPU exits with their reasons, the virtio notification
# exits, the interrupt injections, the in-band hypercall markers - and
# flows from guest kicks to the exits and from injections to guest irqs,
# in both outputs (Perfetto checked by protoc + perfetto_check.py: every
# flow end started before, timestamps never going back); the report links
# kicks and injections.
if [ "$accel" = kvm ]; then
	protoc --proto_path="$VT_SRC/merge" --decode=perfetto.protos.Trace \
		"$VT_SRC/merge/perfetto_subset.proto" <"$out/merged.pftrace" >pf.txt
	/usr/bin/python3 "$VT_SRC/tests/merge/perfetto_check.py" pf.txt --json pf.json
	/usr/bin/python3 - "$out/merged.json" pf.txt <<'PY'
import collections, json, re, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"] if isinstance(d, dict) else d
names = collections.Counter(e.get("name", "") for e in ev if e.get("ph") in ("i", "B", "X"))
kvm = {n: c for n, c in names.items() if n.startswith(("kvm_", "exit: "))}
reasons = [n for n in kvm if n.startswith("exit: ")]
print("kvm events in merged.json: %d (%d names), exit reasons: %s" % (sum(kvm.values()), len(kvm), sorted(reasons)[:8]))
for need in ("kvm_hypercall", "kvm_inj_virq", "kvm_msi_set_irq", "kvm_write_tsc_offset"):
    assert kvm.get(need), "no %s in merged.json" % need
assert any(kvm.get(n) for n in ("kvm_pio", "kvm_mmio", "kvm_fast_mmio")), "no virtio notification exits"
assert len(reasons) >= 3, "exit reasons: %s" % reasons
flows = collections.Counter(e["name"] for e in ev if e.get("ph") == "f")
starts = {e["id"] for e in ev if e.get("ph") == "s"}
assert flows["kick"] > 0 and flows["irq"] > 0, "flows in merged.json: %s" % dict(flows)
assert all(e["id"] in starts for e in ev if e.get("ph") == "f"), "a flow end without a start"
pf = open(sys.argv[2]).read()
nterm = len(re.findall(r"terminating_flow_ids:", pf))
assert nterm == sum(flows.values()), "Perfetto has %d flow ends, JSON %d" % (nterm, sum(flows.values()))
print("flows: %s in merged.json, %d in merged.pftrace" % (dict(flows), nterm))
PY
	"$VT_BIN" report "$out/host" "$out/guest/kernel" "$out/guest/python" "$out/guest/markers" >report.txt
	grep -E "^  (issue_to_kick|kick_to_host_io|inject_to_irq) " report.txt
	for st in issue_to_kick kick_to_host_io inject_to_irq; do
		n=$(awk -v s=$st '$1 == s && / -> / { print $(NF - 4); exit }' report.txt)
		[ "${n:-0}" -gt 0 ] || { echo "FAIL: report has no $st links"; exit 1; }
	done
	awk '/^VM exits per vCPU/ { f = 1; next } f && /exit: / { n++ } END { exit !(n >= 3) }' report.txt ||
		{ echo "FAIL: the report's VM exits per vCPU table is empty"; exit 1; }
fi
# one VM: the Python slices and the guest kernel's syscalls of the workload's
# thread share one process and thread (merge groups guest inputs by VM)
/usr/bin/python3 - "$out/merged.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"] if isinstance(d, dict) else d
py = {(e["pid"], e["tid"]) for e in ev if e.get("ph") == "B" and e.get("name", "").startswith("__main__.write_file")}
# the guest kernel's syscalls: merge's "syscalls" track of the thread (its
# lane 2: tid + 2 * 10^9) or, for a syscall it could not pair, the instant
sc = {(e["pid"], e["tid"] % 1000000000) for e in ev if e.get("pid", 0) >= 10000000 and
      ((e.get("ph") == "B" and e["tid"] // 1000000000 == 2) or
       (e.get("ph") == "i" and e.get("name", "").startswith("sys_enter_")))}
assert py and py <= sc, "Python thread %s not among the guest kernel's syscall threads" % py
assert all(p < 20000000 for p, _ in py | sc), "guest inputs on two machines"
print("ok: Python slices and guest syscalls on one thread track", sorted(py))
PY
