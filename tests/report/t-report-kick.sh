#!/bin/bash
# Which kvm_pio writes are kicks, on a fixture with a KNOWN kick
# (mkkick.py): between a write request's issue and QEMU's pwrite64 the
# vCPU writes the sync marker port 0x5f0, the CMOS index port 0x70 and the
# POST port 0x80, then the legacy virtio-pci queue-notify port 0xc050.
# Only the last is a kick: the chain's K link is it (instant, port, method
# notify-addr; before: the 0x70 write, 4.5 us after the issue), the report
# counts 1 host kick (before: 3), and the fsync's critical path waits on
# the driver until it (guest_driver 29 us, QEMU before host syscall 60 us;
# before: 4 and 85), every part exact to the ns.
set -eu
. "$VT_SRC/tests/report/common.sh"
cd "$VT_TMP"
mk_fixture_of mkkick.py . 4
"$VT_BIN" report h g --no-align -q -n 5 >rep.txt
grep -qF 'I/O requests: 1 guest block requests; 1 guest syscalls, 1 host kicks, ' rep.txt ||
	{ grep '^I/O requests' rep.txt; echo "FAIL: the host kicks counted"; exit 1; }
grep -Eq '^  kick +1 notify-addr$' rep.txt || { grep '^  kick ' rep.txt; echo "FAIL: kick method"; exit 1; }
grep -Eq '^  issue_to_kick .* 1 +29\.500 +29\.500 +29\.500 +29\.500$' rep.txt ||
	{ grep '^  issue_to_kick' rep.txt; echo "FAIL: issue_to_kick"; exit 1; }
"$VT_BIN" export --sqlite k.db h g --no-align -q
"$PY" - rep.txt expected.json k.db <<'PYEOF'
import json, re, sqlite3, sys
txt = open(sys.argv[1]).read(); exp = json.load(open(sys.argv[2]))
db = sqlite3.connect(sys.argv[3])
def fail(m): sys.exit("FAIL: " + m)
k = db.execute("SELECT ts, method, tid, address FROM request_links WHERE link = 'kick'").fetchall()
want = [(exp["kick"]["ts"], "notify-addr", 4243, exp["kick"]["port"])]
if k != want: fail("kick links %s, want %s (0x%x)" % (k, want, exp["kick"]["port"]))
print("ok: the kick is the write to port 0x%x at %d ns" % (exp["kick"]["port"], exp["kick"]["ts"]))
e = exp["fsync"]
def ns(s):
    a, b = s.split("."); return int(a) * 1000 + int(b)
m = re.search(r"^  fsync [\d.]+ ms = .*\n +guest 1 tid 200 at %d\.%03d us: (.*?);" % (e["begin"] // 1000, e["begin"] % 1000), txt, re.M)
if not m: fail("the fsync at %d ns is not in the headline" % e["begin"])
parts = {k: ns(v) for k, v in re.findall(r"(\w+)=([\d.]+)", m.group(1))}
if parts != e["parts"]:
    for n in sorted(set(parts) | set(e["parts"])):
        if parts.get(n, 0) != e["parts"].get(n, 0):
            print("  %s: %d, want %d" % (n, parts.get(n, 0), e["parts"].get(n, 0)))
    fail("the fsync's parts differ from the fixture's truth")
print("ok: the fsync's %d parts exact to the ns (guest_driver %d ns)" % (len(parts), parts["guest_driver"]))
PYEOF
