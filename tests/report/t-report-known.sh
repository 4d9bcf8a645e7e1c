#!/bin/bash
# vmtrace report on a fixture with KNOWN per-stage latencies (mkfixture.py:
# synthetic host + guest trace.dat in this kernel's event formats, guest
# Python uftrace data): every stage's count/p50/p90/p99/max is found to the
# ns, every link is present, the slowest requests come in the right order
# with their Python stack, the sync-marker PIO is not taken for a kick, the
# exits per vCPU and the Python wait time add up (unknown without the
# guest kernel trace); the text goes to -o too.
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

# the guest's Python calls without its kernel trace: their waiting (time
# in syscalls) is unknown, not 0 and not drawn as running in --html
mkdir nok && cp -r g nok/ && rm nok/g/trace.dat
"$VT_BIN" report h nok/g --no-align -q -n 5 -o nok.txt --html nok.html
grep -Eq '^ +40 +[0-9.]+ +- +- +- +app\.save' nok.txt ||
	{ grep -A4 '^Time per function' nok.txt; echo "FAIL: app.save's waiting without a guest kernel trace not unknown"; exit 1; }
grep -q "#bab0ac' title='running and waiting unknown" nok.html ||
	{ echo "FAIL: --html: app.save's unknown waiting not drawn as unknown"; exit 1; }

# PVM: no kvm_exit/kvm_entry events: exit-causing events counted instead,
# and said so; the chain is unchanged
mkdir pvm && grep -v -e kvm_exit -e kvm_entry host.txt >pvm/host.txt
"$GTD" pvm/trace.dat <pvm/host.txt
cp h/vmtrace.meta pvm/
"$VT_BIN" report pvm g --no-align -q >pvm.txt
grep -q "no kvm_exit events (PVM" pvm.txt
grep -Eq '^  0 +kvm_pio +80 ' pvm.txt || { grep -A4 "VM exits" pvm.txt; echo "FAIL: PVM pio count"; exit 1; }
grep -q "  PSQIKHDJRCXE        40 requests" pvm.txt
# the guest alone (no host recording): the host links are reported
# missing, not guessed; the guest-side stages are still exact
"$VT_BIN" report g -q >guest.txt
grep -q "  PSQI....RCXE        40 requests" guest.txt
for l in kick host_io_begin host_io_end inject; do
	grep -Eq "^  missing $l +in 40 of 40 requests" guest.txt || { echo "FAIL: $l not missing"; exit 1; }
done
p50=$("$PY" -c 'import json,sys; print(json.load(open("expected.json"))["stages"]["irq_to_complete"]["p50"])')
awk -v want="$p50" '$1 == "irq_to_complete" { split($(NF-3), a, "."); got = a[1] * 1000 + a[2] }
	END { if (got != want) { print "FAIL: guest-only irq_to_complete p50 " got " want " want; exit 1 } }' guest.txt
echo "ok: PVM exit counting, guest-only input"
