#!/bin/bash
# Perfetto output decoded by protoc with merge/perfetto_subset.proto (the
# published field numbers): one incremental-state-cleared first packet,
# process + thread descriptors for host and guest (guest packets carry
# machine_id 1, guest processes are named "guest1: ..."), interned names
# defined once, begin/end slice counts as written, timestamps in ns.
set -eu
. "$VT_SRC/tests/merge/common.sh"
cd "$VT_TMP"
mk_host h 64 -M kvm.vm0.vcpu0.tsc_offset.nr=1 -M "kvm.vm0.vcpu0.tsc_offset.0=500000000 999999000 start"
mk_guest g 32 1500000000 1000
"$VT_BIN" merge h g -o out.pftrace 2>err.txt
protoc --decode=perfetto.protos.Trace -I "$VT_SRC/merge" "$VT_SRC/merge/perfetto_subset.proto" \
	<out.pftrace >out.txt
"$PY" - out.txt <<'PYEOF'
import re, sys
text = open(sys.argv[1]).read()
pk = re.split(r'^packet \{$', text, flags=re.M)[1:]
def fail(m): sys.exit("FAIL: " + m)
if "sequence_flags: 1" not in pk[0]: fail("first packet does not clear incremental state")
procs = re.findall(r'process_name: "([^"]*)"', text)
if sorted(procs) != ["guest1: pid 200", "host: pid 1000"]: fail("process names %s" % procs)
threads = re.findall(r'thread_name: "([^"]*)"', text)
if len(threads) != 2: fail("thread descriptors %s" % threads)
guest = [p for p in pk if "machine_id: 1" in p]
if not any('process_name: "guest1' in p for p in guest): fail("guest descriptor without machine_id")
names = re.findall(r'event_names \{\s*iid: (\d+)\s*name: "([^"]*)"', text)
iids = [i for i, _ in names]
if len(iids) != len(set(iids)): fail("a name interned twice")
if sorted(n for _, n in names) != ["main", "py_a", "py_b", "work"]: fail("names %s" % names)
nb = text.count("TYPE_SLICE_BEGIN"); ne = text.count("TYPE_SLICE_END")
if (nb, ne) != (48, 48): fail("begin/end %d/%d, want 48/48" % (nb, ne))
ts = [int(t) for t in re.findall(r'timestamp: (\d+)', text)]
if ts != sorted(ts) or ts[0] != 500000000: fail("timestamps not in order from 500000000 ns")
if any(("track_event" in p) != ("sequence_flags: 2" in p) for p in pk[1:] if "track_descriptor" not in p):
    fail("event packet without SEQ_NEEDS_INCREMENTAL_STATE")
print("ok: %d packets, %d slices" % (len(pk), nb))
PYEOF
"$VT_BIN" merge h g -o nomid.pftrace -q --no-machine-id
protoc --decode=perfetto.protos.Trace -I "$VT_SRC/merge" "$VT_SRC/merge/perfetto_subset.proto" \
	<nomid.pftrace >nomid.txt
! grep -q machine_id nomid.txt && grep -q 'process_name: "guest1: pid 200"' nomid.txt
