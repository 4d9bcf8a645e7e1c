#!/bin/bash
# A VM saved and restored (QEMU's migration to a file, then a second QEMU
# with -incoming) on a real KVM: one guest's timeline continues in a second
# KVM VM with another TSC offset.  The freestanding marker guest sends
# in-band hypercall markers before and after; `vmtrace align` on the host
# trace alone must give a segment per VM, each proven by its own markers
# with the exact offset (kvm_write_tsc_offset, debugfs) inside the bound,
# and the guest's own markers.dat gives the same model.  Runs on this
# machine's KVM or in the KVM lab (tests/lib/kvm.sh).
# timeout: 300
# needs: kvm
# san: skip: align's segments of a saved and restored VM run under ASan on fixtures in align/t-align-debugfs (two VMs); the recorder on real kvm events in host/t-record-kvm
set -eu
. "$VT_SRC/tests/align/lib.sh"
. "$VT_SRC/tests/lib/kvm.sh"
kvm_or_lab "$@"
need_record
elf=$VT_BUILD/tests/align/marker-guest-hcmig.elf
[ -f "$elf" ] || fail "$elf not built"
need_kvm
mkdir guest
rc=0
kvm_timeout "$VT_BIN" record -o host -- "$VT_SRC/tests/align/save-restore.sh" "$elf" guest || rc=$?
[ $rc = 1 ] || fail "the restored guest did not exit through isa-debug-exit (status $rc; 124: not done in $KVM_RUN_SECS s)"
grep -E '^kvm\.(vms|vm[0-9]+\.(pid|vcpus))=' host/vmtrace.meta
"$VT_BIN" align host
"$VT_BIN" align host --json --pairs >hc.json
echo '{"hz": 1}' >t.json
LIMIT_NS=20000
[ -n "${VT_IN_LAB:-}" ] && LIMIT_NS=250000
# two VMs one after the other: one guest; a segment proven by markers on
# each side of the restore (the first VM's and the second's), the exact
# offset (tracepoint, debugfs: every VM's readings) inside each bound; what
# lies between the second VM's creation and the restore's TSC write has no
# marker: unproven, never silently aligned
check_json hc.json t.json \
	'j["guest_dir"] is None and j["method"] == "markers"' \
	'j["markers"]["pairs"] == 40' \
	'any("one after the other" in n for n in j["notes"])' \
	'any("(every VM)" in n for n in j["notes"])' \
	'len([g for g in j["segments"] if g["source"] == "markers"]) == 2' \
	'all(g["n_markers"] >= 1 for g in j["segments"] if g["source"] == "markers")' \
	"all(0 < g['bound_ns'] < $LIMIT_NS for g in j['segments'] if g['source'] == 'markers')" \
	'all(g["bound_ns"] is None for g in j["segments"] if g["source"] != "markers")' \
	'abs([g for g in j["segments"] if g["source"] == "markers"][1]["offset_tsc"] - [g for g in j["segments"] if g["source"] == "markers"][0]["offset_tsc"]) > j["host_hz"] * 0.4' \
	"all(any(s['source'] == 'debugfs' for s in j['sources'] if s['tsc_host'] == g['ref_tsc_host']) for g in j['segments'] if g['source'] == 'markers')" \
	"all(abs(s['offset_tsc'] - g['offset_tsc']) * 1e9 / j['host_hz'] <= g['bound_ns'] for g in j['segments'] if g['source'] == 'markers' for s in j['sources'] if s['tsc_host'] == g['ref_tsc_host'] and s['source'] in ('tracepoint', 'debugfs'))" \
	"all(s['agrees'] is not False for s in j['sources'])"
# the guest's own markers.dat (dumped by the second VM) holds the same
# markers: the same model
"$VT_BIN" align host guest --json >hcf.json
check_json hcf.json t.json "j['segments'] == json.load(open('hc.json'))['segments']"
# one merge across both VMs: the guest's markers sit on both sides of the
# gap (the second QEMU started >= 0.5 s after the first was gone), none in it
"$VT_BIN" merge host guest -o m.json
"$PY" - m.json hc.json <<'PYEOF'
import json, sys
ev = json.load(open(sys.argv[1]))
ev = ev["traceEvents"] if isinstance(ev, dict) else ev
exits = sorted(e["ts"] for e in ev if e.get("ph") == "B" and (e.get("name") or "").startswith("exit: "))
gaps = [(b - a, a, b) for a, b in zip(exits, exits[1:])]
gap = max(gaps)
print("largest gap between VM exits: %.3f s (%.6f .. %.6f s)" % (gap[0] / 1e6, gap[1] / 1e6, gap[2] / 1e6))
assert gap[0] > 0.4e6, "no gap between the two VMs on the merged timeline"
# the markers: a guest instant and a host instant each, joined by a flow;
# the host ones on the vCPU threads of both QEMUs, none inside the gap
sm = [e for e in ev if e.get("name") == "sync marker"]
host_tids = {e["tid"] for e in sm if e["pid"] < 10000000}
flows = [e for e in ev if e.get("cat") == "flow" and e["name"] == "sync"]
print("sync markers: %d instants, host threads %s, %d flow events" % (len(sm), sorted(host_tids), len(flows)))
assert len(sm) == 80 and len(flows) == 80, "want 40 markers on each side, 40 flows"
assert len(host_tids) == 2, "host markers on %s, want the two QEMUs' vCPU threads" % host_tids
assert not [e for e in sm if gap[1] < e["ts"] < gap[2]], "a marker inside the gap"
# each marker's host instant follows its guest reading (mapped) by its exit
# latency: never before it by more than the bound, never seconds after (a
# restored guest's stamps mapped through the saved VM's offset would be);
# 100 ms: the lab's exits took up to 12.7 ms with a load average of 10
bound_us = max(g["bound_ns"] for g in json.load(open(sys.argv[2]))["segments"] if g["bound_ns"]) / 1e3
g = {e["args"]["seq"]: e["ts"] for e in sm if e["pid"] >= 10000000}
h = {e["args"]["seq"]: e["ts"] for e in sm if e["pid"] < 10000000}
d = [h[k] - g[k] for k in sorted(g) if k in h]
print("host - guest per marker: %.1f .. %.1f us (bound %.1f us)" % (min(d), max(d), bound_us))
assert len(d) == 40 and all(-bound_us <= x <= 100000 for x in d), "markers mapped off their host instants"
PYEOF
