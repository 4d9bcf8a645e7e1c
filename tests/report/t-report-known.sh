#!/bin/bash
# vmtrace report on a fixture with KNOWN per-stage latencies (mkfixture.py:
# synthetic host + guest trace.dat in this kernel's event formats, guest
# Python uftrace data): every stage's count/p50/p90/p99/max is found to the
# ns, every link is present, the slowest requests come in the right order
# with their Python stack, the sync-marker PIO is not taken for a kick, the
# exits per vCPU and the Python wait time add up; the text goes to -o too.
set -eu
. "$VT_SRC/tests/report/common.sh"
cd "$VT_TMP"
mk_fixture . 40
"$VT_BIN" report h g --no-align -q -n 5 >rep.txt
"$VT_BIN" report h g --no-align -q -n 5 -o rep2.txt
cmp rep.txt rep2.txt
cat rep.txt
"$PY" - rep.txt expected.json <<'PYEOF'
import json, re, sys
txt = open(sys.argv[1]).read(); exp = json.load(open(sys.argv[2]))
def fail(m): sys.exit("FAIL: " + m)
def ns(s):
    a, b = s.split("."); return int(a) * 1000 + int(b)
got = {}
for l in txt.splitlines():
    m = re.match(r"  (\w+) +.+? +(\d+) +([\d.]+) +([\d.]+) +([\d.]+) +([\d.]+)$", l)
    if m and m.group(1) in exp["stages"]:
        got[m.group(1)] = dict(n=int(m.group(2)), p50=ns(m.group(3)), p90=ns(m.group(4)),
                               p99=ns(m.group(5)), max=ns(m.group(6)))
for st, e in exp["stages"].items():
    if got.get(st) != e: fail("stage %s: got %s, want %s" % (st, got.get(st), e))
if "  PSQIKHDJRCXE        40 requests" not in txt: fail("links mask")
if re.search(r"^  missing ", txt, re.M): fail("a link reported missing")
slow = [int(m) // 8 for m in re.findall(r"#\d+ [\d.]+ us .* sector (\d+) \+8", txt)]
if slow != exp["slowest"][:5]: fail("slowest %s want %s" % (slow, exp["slowest"][:5]))
if txt.count("python: app.main (app.py:1) > app.save (app.py:10)") != 5: fail("python stacks")
m = re.search(r"\n  0 +exit: io +(\d+) +([\d.]+)", txt)
if not m or int(m.group(1)) != 40 or ns(m.group(2)) != 40 * exp["exit_ns"]: fail("exits %s" % m)
m = re.search(r"\n +40 +([\d.]+) +([\d.]+) +([\d.]+) +[\d.]+% +app.save", txt)
if not m or ns(m.group(1)) != 40 * exp["call_ns"] or ns(m.group(3)) != exp["wait_ns"]:
    fail("app.save time %s" % (m and m.groups(),))
print("ok: %d stages exact, slowest order, stacks, exits, wait time" % len(got))
PYEOF
