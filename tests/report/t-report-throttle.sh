#!/bin/bash
# vmtrace report's critical path under QEMU throttling, on a fixture with
# KNOWN stages (mkthrottle.py): two write requests of one fsync kicked at
# once, QEMU serving the first, then - after the first one's injection,
# guest irq and completion - the second: the second one's wait is "QEMU
# before host syscall" (it was kicked and QEMU has not started its
# syscall), not "device (stage not recorded)", nor the "guest irq to
# completion" of another virtio device's interrupt.  Every part of the fsync
# exact to the ns; the first line names QEMU first (t-report-faults-lab
# shows the same in the KVM lab against the raw events).
set -eu
. "$VT_SRC/tests/report/common.sh"
cd "$VT_TMP"
mk_fixture_of mkthrottle.py . 4
"$VT_BIN" report h g --no-align -q -n 5 >rep.txt
sed -n '/^Slowest guest syscalls/,/^$/p' rep.txt
"$PY" - rep.txt expected.json <<'PYEOF'
import json, re, sys
txt = open(sys.argv[1]).read(); e = json.load(open(sys.argv[2]))["fsync"]
def ns(s):
    a, b = s.split("."); return int(a) * 1000 + int(b)
m = re.search(r"^  fsync [\d.]+ ms = (.*)\n +guest 1 tid 200 at %d\.%03d us: (.*?);" % (e["begin"] // 1000, e["begin"] % 1000), txt, re.M)
if not m: sys.exit("FAIL: the fsync at %d ns is not in the headline" % e["begin"])
parts = {k: ns(v) for k, v in re.findall(r"(\w+)=([\d.]+)", m.group(2))}
want = {k: v for k, v in e["parts"].items() if v}
print("fsync parts (ns): %s" % parts)
if parts != want:
    for k in sorted(set(parts) | set(want)):
        if parts.get(k, 0) != want.get(k, 0):
            print("  %s: %d, want %d" % (k, parts.get(k, 0), want.get(k, 0)))
    sys.exit("FAIL: the fsync's parts differ from the fixture's truth")
if not m.group(1).startswith("%d%% QEMU before host syscall," % round(100 * want["qemu_before_host_io"] / e["dur"])):
    sys.exit("FAIL: the first line does not name QEMU before host syscall first: %s" % m.group(1))
print("ok: the throttled fsync's %d parts exact to the ns; QEMU before host syscall %.1f%% first"
      % (len(want), 100 * want["qemu_before_host_io"] / e["dur"]))
PYEOF
