#!/bin/bash
# The sync markers on merge's timeline (merge/reader_markers.c) for the
# marker kinds the KVM lab makes, from mkfixture's host recordings: in-band
# hypercall markers (the host trace alone), TCG chardev markers written by
# the vCPU thread and by a thread that is no vCPU's.  Each marker is two
# instants "sync marker" - the guest's on "sync markers vCPU N" (or "sync
# markers"), the host's on the thread that saw it or on "host: sync
# markers" / "vCPU N" (or "vCPU unknown") - joined by one "sync" flow, and
# the guest's reading before the action is placed just before the host's
# instant (within the bracket the guest measured).
set -eu
. "$VT_SRC/tests/merge/common.sh"
need_mkfixture
cd "$VT_TMP"

# check OUT.json N GUEST-TRACK HOST-PROCESS HOST-THREAD
check() {
	"$PY" - "$@" <<'PYEOF'
import json, sys
from collections import Counter
out, n, gtrack, hproc, hthread = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
ev = json.load(open(out))["traceEvents"]
pn = {e["pid"]: e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "process_name"}
tn = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name"}
sm = [e for e in ev if e.get("name") == "sync marker"]
where = Counter((pn.get(e["pid"]), tn.get((e["pid"], e["tid"]))) for e in sm)
want = {("guest: sync markers", gtrack): n, (hproc, hthread): n}
if dict(where) != want:
    sys.exit("FAIL: sync marker instants on %s, want %s" % (dict(where), want))
fl = [e for e in ev if e.get("cat") == "flow" and e["name"] == "sync"]
st = {e["id"]: e for e in fl if e["ph"] == "s"}
fi = {e["id"]: e for e in fl if e["ph"] == "f"}
if len(st) != n or set(st) != set(fi):
    sys.exit("FAIL: %d flow starts, %d ends, want %d pairs" % (len(st), len(fi), n))
# each marker: the guest instant (its reading before the action) at most
# its bracket before the host's, never after it (+1 ns of rounding)
g = sorted((e for e in sm if e["pid"] >= 10000000), key=lambda e: e["args"]["seq"])
h = sorted((e for e in sm if e["pid"] < 10000000), key=lambda e: e["args"]["seq"])
for a, b in zip(g, h):
    d_ns = (b["ts"] - a["ts"]) * 1000
    if a["args"]["seq"] != b["args"]["seq"] or not -1 <= d_ns <= a["args"]["guest_bracket_ns"] + 1:
        sys.exit("FAIL: seq %d: guest %.3f us, host %.3f us (bracket %d ns)" %
                 (a["args"]["seq"], a["ts"], b["ts"], a["args"]["guest_bracket_ns"]))
print("ok: %d markers, guest '%s', host '%s' / '%s'" % (n, gtrack, hproc, hthread))
PYEOF
}

# in-band hypercalls: the vCPU thread (tid 4242) saw them, no markers.dat
"$MKFIX" hk gk -n 20 -o 7000000 -k -T -D >/dev/null
"$VT_BIN" merge hk gk -o k.json 2>err.txt
grep -q "align    guest: markers (20 marker pairs)" err.txt || { cat err.txt; echo "FAIL: align line"; exit 1; }
grep -q "flows    20" err.txt || { cat err.txt; echo "FAIL: flows"; exit 1; }
check k.json 20 "sync markers vCPU 0" "host: QEMU (pid 4242)" "vCPU 0"

# chardev writes of the vCPU thread: matched by order, no host thread
# recorded with the marker: the markers' own host track
"$MKFIX" hc gc -n 20 -o 7000000 -c -T -D >/dev/null
"$VT_BIN" merge hc gc -o c.json -q
check c.json 20 "sync markers vCPU 0" "host: sync markers" "vCPU 0"

# chardev writes of QEMU's I/O thread (fd from the meta): no vCPU known
"$MKFIX" hw gw -n 20 -o 7000000 -c -w -T -D >/dev/null
echo 'markers.chardev_fd=9' >>hw/vmtrace.meta
"$VT_BIN" merge hw gw -o w.json -q
check w.json 20 "sync markers" "host: sync markers" "vCPU unknown"
