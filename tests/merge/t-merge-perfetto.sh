#!/bin/bash
# Perfetto output decoded by protoc with merge/perfetto_subset.proto (the
# published field numbers) and checked by tests/merge/perfetto_check.py for
# what Perfetto's importer needs (descriptors before events, pid/tid,
# interned names defined first, incremental state, balanced slices, flows).
# Default: guests are processes named "guest: ..." on the one machine, with
# pids moved above the host's, no machine_id; --machine-id puts the guest on
# machine 1 with its own pids.
set -eu
. "$VT_SRC/tests/merge/common.sh"
cd "$VT_TMP"
mk_host h 64 -M kvm.vm0.vcpu0.tsc_offset.nr=1 -M "kvm.vm0.vcpu0.tsc_offset.0=500000000 999999000 start"
mk_guest g 32 1500000000 1000
decode() {
	protoc --decode=perfetto.protos.Trace -I "$VT_SRC/merge" "$VT_SRC/merge/perfetto_subset.proto" \
		<"$1" >"$2"
}
"$VT_BIN" merge h g -o out.pftrace 2>err.txt
decode out.pftrace out.txt
"$PY" "$VT_SRC/tests/merge/perfetto_check.py" out.txt --json sum.json
"$VT_BIN" merge h g -o mid.pftrace -q --machine-id
decode mid.pftrace mid.txt
"$PY" "$VT_SRC/tests/merge/perfetto_check.py" mid.txt --machine-ids --json mid.json
"$PY" - out.txt sum.json mid.json <<'PYEOF'
import json, re, sys
def fail(m): sys.exit("FAIL: " + m)
text = open(sys.argv[1]).read()
s = json.load(open(sys.argv[2])); m = json.load(open(sys.argv[3]))
got = sorted((p["name"], p["pid"], p["machine"]) for p in s)
if got != [("guest: pid 200", 10000200, 0), ("host: pid 1000", 1000, 0)]: fail("processes %s" % got)
got = sorted((p["name"], p["pid"], p["machine"]) for p in m)
if got != [("guest: pid 200", 200, 1), ("host: pid 1000", 1000, 0)]: fail("--machine-id processes %s" % got)
names = sorted(set(re.findall(r'event_names \{\s*iid: \d+\s*name: "([^"]*)"', text)))
if names != ["main", "py_a", "py_b", "work"]: fail("names %s" % names)
nb = text.count("TYPE_SLICE_BEGIN"); ne = text.count("TYPE_SLICE_END")
if (nb, ne) != (48, 48): fail("begin/end %d/%d, want 48/48" % (nb, ne))
ts = [int(t) for t in re.findall(r'timestamp: (\d+)', text)]
if ts[0] != 500000000: fail("first timestamp %d, want 500000000 ns" % ts[0])
print("ok: %d slices" % nb)
PYEOF
# --no-machine-id is the default (kept for old scripts)
"$VT_BIN" merge h g -o nomid.pftrace -q --no-machine-id
cmp out.pftrace nomid.pftrace
# a name longer than the sink's 1024-byte limit is cut, and said so (never
# silently): protoc reads the 1024 bytes back
long=$(printf 'f%.0s' $(seq 2000))
"$GEN" lg -n 4 -D 2 -z 2000000000 -s 1000000000 -d 1000 -f "$long" >/dev/null
"$VT_BIN" merge lg -o long.pftrace -q 2>long.err
grep -q "names or strings longer than 1024 bytes were cut" long.err ||
	{ cat long.err; echo "FAIL: a cut name went unsaid"; exit 1; }
protoc --decode=perfetto.protos.Trace -I "$VT_SRC/merge" "$VT_SRC/merge/perfetto_subset.proto" \
	<long.pftrace | grep -qE "name: \"f{1024}\"" || { echo "FAIL: the cut name is not 1024 bytes"; exit 1; }
echo "ok: a 2000-byte name cut to 1024, with a warning"
