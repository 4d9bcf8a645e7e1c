#!/bin/bash
# vmtrace report's critical path on a fixture with KNOWN states
# (mkcrit.py): per Python call app.save and per fsync, every part (guest
# CPU, VM exits, vCPU preempted on the host, guest runnable, guest irq, the
# block request's stages, blocked without I/O) is found to the ns and the
# parts sum to the duration; the vCPU-preempted time during each fsync
# equals the one computed INDEPENDENTLY here from `trace-cmd report` of the
# raw sched_switch events; vCPU and thread state totals; without the guest
# kernel trace the thread's part is "unknown", not 0.  The same parts when
# the fsync's request is a write QEMU serves by aio=native on a host disk
# with the guest disk's device number, the host's block events at the
# guest request's sector (mkcrit.py dm): they complete none of its requests.
# A VM exit that goes on to QEMU (kvm_userspace_exit): exit_kernel, then
# exit_qemu (mkcrit.py qemu).  A vCPU thread known by nothing but the name
# its sched_switch events give it ("CPU 0/KVM"), beside threads whose
# names only look like one: the same headline, one vCPU (mkcrit.py byname).
# -n 1 cuts the thread list, -n 0 the html's headline bars and timeline;
# a report that cannot be written is named.
set -eu
. "$VT_SRC/tests/report/common.sh"
[ -r /sys/kernel/tracing/events/sched/sched_switch/format ] ||
	{ echo "no tracefs event format sched/sched_switch"; exit 77; }
command -v trace-cmd >/dev/null || { echo "trace-cmd not installed"; exit 77; }
cd "$VT_TMP"
K=3
mk_fixture_of mkcrit.py . $((4 * K)) $K
"$VT_BIN" report h g --no-align -q -n 20 >rep.txt
sed -n '1,/^I\/O requests/p' rep.txt
trace-cmd report h/trace.dat >host.rep 2>/dev/null
# check.py REPORT EXPECTED.json: every call's and fsync's parts as designed
cat >check.py <<'PYEOF'
import json, re, sys
txt = open(sys.argv[1]).read(); exp = json.load(open(sys.argv[2]))
def fail(m): sys.exit("FAIL: " + m)
def ns(s):
    a, b = s.split("."); return int(a) * 1000 + int(b)
# the headline: "NAME X ms = ..." then "guest 1 tid 200 at T us: id=us ...; vCPU preempted during the call U us"
got = {}
for m in re.finditer(r"^  (\S+).* ([\d.]+) ms = (.*)\n +guest 1 tid 200 at ([\d.]+) us: (.*); "
                     r"vCPU preempted during the call ([\d.]+) us(?:; woken by (.*))?$", txt, re.M):
    parts = {k: ns(v) for k, v in re.findall(r"(\w+)=([\d.]+)", m.group(5))}
    got[(m.group(1), ns(m.group(4)))] = (parts, ns(m.group(6)), m.group(3), m.group(7))
def check(name, e):
    key = (name, e["begin"])
    if key not in got: fail("%s at %d not in the headline: %s" % (name, e["begin"], sorted(got)))
    parts, pre, line, waker = got[key]
    if name == "fsync" and waker != "an irq": fail("fsync woken by %r, want the idle task's irq" % waker)
    if parts != e["parts"]: fail("%s at %d: parts %s, want %s" % (name, e["begin"], parts, e["parts"]))
    if sum(parts.values()) != e["dur"]: fail("%s: parts sum %d != %d" % (name, sum(parts.values()), e["dur"]))
    if pre != e["preempt_overlap"]: fail("%s: preempt overlap %d want %d" % (name, pre, e["preempt_overlap"]))
    return line
for c in exp["calls"]:
    check("app.save", c)
for f in exp["fsyncs"]:
    line = check("fsync", f)
    if not line.startswith("49%% host %s, 12%% vCPU preempted, 12%% guest runnable" % exp["host_io"]):
        fail("fsync headline line: %r" % line)
print("ok: %d calls and %d fsyncs: every part exact, sums exact" % (len(exp["calls"]), len(exp["fsyncs"])))
n = len(re.findall(r"^  fsync ", txt, re.M))
if n != len(exp["fsyncs"]): fail("%d fsyncs in the headline, want %d" % (n, len(exp["fsyncs"])))
PYEOF
"$PY" check.py rep.txt expected.json
# independent: the vCPU thread's preempted intervals from the raw host
# sched_switch events (trace-cmd report), crossed with each fsync
"$PY" "$VT_SRC/tests/report/preempt_check.py" rep.txt host.rep 2000000000 4243 fsync 0
# vCPU and thread state totals: the vCPU's preempted time is all the hog's
grep -Eq '^  0 +4243 +[0-9.]+ +[0-9.]+ +0\.000 +630\.000 +0\.000 +0\.000$' rep.txt ||
	{ sed -n '/^vCPU states/,/^$/p' rep.txt; echo "FAIL: vCPU state totals"; exit 1; }
grep -Eq '^  guest +200 +[0-9.]+ +30\.000 +150\.000 +990\.000 +0\.020  python3$' rep.txt ||
	{ sed -n '/^Thread states/,/^$/p' rep.txt; echo "FAIL: guest thread state totals"; exit 1; }
if grep -Eq '^  host +4243 ' rep.txt; then echo "FAIL: the vCPU thread listed as a plain thread"; exit 1; fi
echo "ok: vCPU and thread state totals"
# -n 1: the first thread and how many more; a report that cannot be
# written (a full disk: /dev/full) names where, exit 1
"$VT_BIN" report h g --no-align -q -n 1 >n1.txt
sed -n '/^Thread states/,/^$/p' n1.txt | grep -qxF '  ... 1 more threads' ||
	{ sed -n '/^Thread states/,/^$/p' n1.txt; echo "FAIL: -n 1: no '... 1 more threads'"; exit 1; }
[ "$(sed -n '/^Thread states/,/^$/p' n1.txt | grep -c '^  guest ')" = 1 ] ||
	{ echo "FAIL: -n 1: not one thread"; exit 1; }
rc=0; "$VT_BIN" report h g --no-align -q -o /dev/full 2>err.txt || rc=$?
[ $rc = 1 ] && grep -qxF 'vmtrace: report: /dev/full: write error: No space left on device' err.txt ||
	{ echo "FAIL: -o /dev/full: exit $rc, $(cat err.txt)"; exit 1; }
rc=0; "$VT_BIN" report h g --no-align -q >/dev/full 2>err.txt || rc=$?
[ $rc = 1 ] && grep -qxF 'vmtrace: report: standard output: write error: No space left on device' err.txt ||
	{ echo "FAIL: >/dev/full: exit $rc, $(cat err.txt)"; exit 1; }
echo "ok: -n 1, a report that cannot be written"

# no guest kernel trace: the thread's states are unknown; only the single
# vCPU's preemption is known
mkdir g2 && cp -r g/. g2/ && rm g2/trace.dat
"$VT_BIN" report h g2 --no-align -q -n 20 >rep2.txt
"$PY" - rep2.txt expected.json <<'PYEOF'
import json, re, sys
txt = open(sys.argv[1]).read(); exp = json.load(open(sys.argv[2]))
def ns(s):
    a, b = s.split("."); return int(a) * 1000 + int(b)
for c in exp["calls"]:
    m = re.search(r"^  app\.save .*\n +guest 1 tid 200 at %d\.%03d us: (.*);" % (c["begin"] // 1000, c["begin"] % 1000), txt, re.M)
    if not m: sys.exit("FAIL: app.save at %d not in the guest-python-only headline" % c["begin"])
    parts = {k: ns(v) for k, v in re.findall(r"(\w+)=([\d.]+)", m.group(1))}
    want = {"vcpu_preempted": c["parts"]["vcpu_preempted"] + 50000}
    want["unknown"] = c["dur"] - want["vcpu_preempted"]
    if parts != want: sys.exit("FAIL: without a guest kernel trace: %s, want %s" % (parts, want))
print("ok: without the guest kernel trace: unknown + vCPU preempted, exact")
PYEOF

# HTML: one stacked bar per headline call, its parts' widths in proportion
# to the parts and summing to the bar (600 px), the largest part first
"$VT_BIN" report h g --no-align -q -n 20 --html r.html >/dev/null
"$PY" - r.html expected.json <<'PYEOF'
import json, re, sys
html = open(sys.argv[1]).read(); exp = json.load(open(sys.argv[2]))
rows = re.findall(r"<tr><td class='l mono'>([^<]*)</td><td>[\d.]+</td><td class=l><div class=stk>(.*?)</div>", html)
fs = [bars for name, bars in rows if name == "fsync"]
if len(fs) != len(exp["fsyncs"]): sys.exit("FAIL: %d fsync bars, want %d" % (len(fs), len(exp["fsyncs"])))
for bars in fs:
    w = [(p, float(x)) for p, x in re.findall(r"data-part='(\w+)'[^>]*width:([\d.]+)px", bars)]
    want = sorted(exp["fsyncs"][0]["parts"].items(), key=lambda kv: -kv[1])
    if w[0][0] != want[0][0]: sys.exit("FAIL: first bar %s, want %s" % (w[0][0], want[0][0]))
    if abs(sum(x for _, x in w) - 600) > 1: sys.exit("FAIL: bar widths sum to %.1f px" % sum(x for _, x in w))
    for p, x in w:
        if abs(x - 600.0 * exp["fsyncs"][0]["parts"][p] / exp["fsyncs"][0]["dur"]) > 0.06:
            sys.exit("FAIL: %s bar %.1f px" % (p, x))
print("ok: html stacked bars of %d fsyncs in proportion to their parts" % len(fs))
PYEOF
# -n 0: the block requests' stage histograms, but no headline bars and no
# timeline of the slowest (there is one at -n 20)
"$VT_BIN" report h g --no-align -q -n 0 --html r0.html >/dev/null
grep -qF '<h2>Timeline of the ' r.html || { echo "FAIL: -n 20: no timeline"; exit 1; }
grep -qF '<h2>Per-stage histograms</h2>' r0.html || { echo "FAIL: -n 0: no histograms"; exit 1; }
if grep -qF '<h2>Timeline of the ' r0.html; then echo "FAIL: -n 0: a timeline"; exit 1; fi
if grep -qF '<div class=stk>' r0.html; then echo "FAIL: -n 0: headline bars"; exit 1; fi

# a vCPU thread merge does not know by name or meta (a KVM run where the
# recording saw the thread first as "qemu-system-x86"): found by its
# kvm_exit, the same parts
mkdir -p h3
sed 's/^comm 4243 CPU 0\/KVM$/comm 4243 qemu-system-x86/' host.txt | "$GTD" h3/trace.dat
grep -v '^kvm\.thread\|^kvm\.vcpu_threads' h/vmtrace.meta >h3/vmtrace.meta
"$VT_BIN" report h3 g --no-align -q -n 20 >rep3.txt
if grep -q "no vCPU threads" rep3.txt; then sed -n '/^vCPU states/,/^$/p' rep3.txt; echo "FAIL: the vCPU thread not found by its kvm_exit"; exit 1; fi
diff <(sed -n '1,/^I\/O requests/p' rep.txt) <(sed -n '1,/^I\/O requests/p' rep3.txt) ||
	{ echo "FAIL: the headline differs when the vCPU thread is found by its kvm_exit"; exit 1; }
echo "ok: a vCPU thread found by its kvm_exit: the same headline"

# the host's own block events at the guest request's device number (253:0
# on both sides: a nested host's virtio disk) and sector: QEMU's bio,
# queued in io_submit, and its block_rq_complete on the host - the guest's
# request is still in flight until the guest completes it, every part as
# with the flush
mk_fixture_of mkcrit.py dm $((4 * K)) $K dm
grep -q ' block/block_rq_complete dev=265289728 sector=4096 ' dm/host.txt ||
	{ echo "FAIL: no host block_rq_complete at the guest's 253:0 sector 4096"; exit 1; }
"$VT_BIN" report dm/h dm/g --no-align -q -n 20 >rep4.txt
"$PY" check.py rep4.txt dm/expected.json ||
	{ sed -n '1,/^I\/O requests/p' rep4.txt; echo "FAIL: the host's block events changed the guest's parts"; exit 1; }
echo "ok: host block events on the guest disk's device number and sector: the same parts"

# the call's first VM exit goes on to QEMU: kvm_userspace_exit splits it
# into exit_kernel and exit_qemu, to the ns
mk_fixture_of mkcrit.py qx $((4 * K)) $K qemu
"$VT_BIN" report qx/h qx/g --no-align -q -n 20 >rep5.txt
"$PY" check.py rep5.txt qx/expected.json ||
	{ sed -n '1,/^I\/O requests/p' rep5.txt; echo "FAIL: a VM exit to QEMU"; exit 1; }
grep -q 'exit_qemu=15\.000' rep5.txt || { echo "FAIL: no exit_qemu part"; exit 1; }
echo "ok: a VM exit to QEMU: exit_kernel then exit_qemu, every part exact"

# a vCPU thread merge does not know (no kvm.thread keys, its cmdline name
# QEMU's), named "CPU 0/KVM" by the sched_switch events that switch it in
# before its first kvm_exit; host threads named "CPU -1/KVM", "CPU
# 5000/KVM", "CPU 1/" and "CPU 0/KVM-x" are not vCPUs: the same headline
# as with the meta, one vCPU in the states table, no decoy in it
mk_fixture_of mkcrit.py bn $((4 * K)) $K byname
sed -i 's/^comm 4243 CPU 0\/KVM$/comm 4243 qemu-system-x86/' bn/host.txt
"$GTD" bn/h/trace.dat <bn/host.txt
sed -i '/^kvm\.thread\|^kvm\.vcpu_threads/d' bn/h/vmtrace.meta
"$VT_BIN" report bn/h bn/g --no-align -q -n 20 >rep6.txt
# (the event count after it has the decoys' 16 switches)
diff <(sed '/^I\/O requests/,$d' rep.txt) <(sed '/^I\/O requests/,$d' rep6.txt) ||
	{ echo "FAIL: the headline differs when the vCPU thread is known by its name"; exit 1; }
sed -n '/^vCPU states/,/^$/p' rep6.txt >vst6.txt
grep -Eq '^  0 +4243 ' vst6.txt || { cat vst6.txt; echo "FAIL: thread 4243 not vCPU 0"; exit 1; }
if grep -Eq '^  [0-9]+ +430[1-4] ' vst6.txt; then cat vst6.txt; echo "FAIL: a decoy taken for a vCPU"; exit 1; fi
[ "$(grep -Ec '^  [0-9]+ +[0-9]+ ' vst6.txt)" = 1 ] || { cat vst6.txt; echo "FAIL: not one vCPU"; exit 1; }
echo "ok: a vCPU known by its sched_switch name: the same headline, the look-alike names not vCPUs"

# another VM's vCPU thread with the very name ("CPU 0/KVM"), switched in
# before the traced one is first seen and preempted during every call
# (mkcrit.py othervm): the meta lists QEMU's threads (record.pids and
# record.tgids: 4242's are 4242, 4243, 4250), so it is not the traced
# VM's - the same headline, one vCPU, 5243 not in the table.  Without the
# task list nothing tells the two apart (as before: by name).
# only_traced_vcpu N WHAT: report N of the ov fixture has rep.txt's
# headline and one vCPU, thread 4243 (not the other VM's 5243)
only_traced_vcpu() {
	"$VT_BIN" report ov/h ov/g --no-align -q -n 20 >"rep$1.txt"
	diff <(sed '/^I\/O requests/,$d' rep.txt) <(sed '/^I\/O requests/,$d' "rep$1.txt") ||
		{ echo "FAIL: another VM's vCPU thread changed the headline ($2)"; exit 1; }
	sed -n '/^vCPU states/,/^$/p' "rep$1.txt" >"vst$1.txt"
	[ "$(grep -Ec '^  [0-9]+ +[0-9]+ ' "vst$1.txt")" = 1 ] && grep -Eq '^  0 +4243 ' "vst$1.txt" ||
		{ cat "vst$1.txt"; echo "FAIL: not one vCPU, 4243 ($2)"; exit 1; }
}
mk_fixture_of mkcrit.py ov $((4 * K)) $K byname othervm
sed -i 's/^comm 4243 CPU 0\/KVM$/comm 4243 qemu-system-x86/' ov/host.txt
"$GTD" ov/h/trace.dat <ov/host.txt
sed -i '/^kvm\.thread\|^kvm\.vcpu_threads/d' ov/h/vmtrace.meta
printf 'record.pids=4242,4243,4250,5243\nrecord.tgids=4242,4242,4242,5242\n' >>ov/h/vmtrace.meta
only_traced_vcpu 7 "named CPU 0/KVM in the cmdlines"
# the same when its cmdline name is QEMU's too (known as a vCPU by the
# sched_switch names alone)
sed -i 's/^comm 5243 CPU 0\/KVM$/comm 5243 qemu-system-x86/' ov/host.txt
"$GTD" ov/h/trace.dat <ov/host.txt
only_traced_vcpu 8 "named by its sched events"
echo "ok: another VM's vCPU thread of the same name is not the traced VM's (QEMU's threads listed)"

# no KVM (TCG, "CPU 0/TCG" threads, no kvm.vm0.pid): QEMU is the command
# `vmtrace record --` started (record.command_pid, cmdline), whose tasks
# the meta lists: the other QEMU's "CPU 0/TCG" is still not the traced
# VM's vCPU
sed -i 's#CPU 0/KVM#CPU 0/TCG#; s#CPU\\s0/KVM#CPU\\s0/TCG#g' ov/host.txt
"$GTD" ov/h/trace.dat <ov/host.txt
sed -i '/^kvm\.vm0\.pid=/d' ov/h/vmtrace.meta
printf 'record.command_pid=4242\ncmdline=/usr/bin/qemu-system-x86_64 -accel tcg -m 512\n' >>ov/h/vmtrace.meta
only_traced_vcpu 9 "under TCG names"
echo "ok: under TCG QEMU is the recorded command: another QEMU's CPU 0/TCG is not the traced vCPU"
