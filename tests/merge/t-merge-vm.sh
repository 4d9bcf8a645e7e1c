#!/bin/bash
# Inputs are assigned by their vmtrace.meta, not by position, and the guest
# inputs of one merge are one VM:
#  - a host uftrace dir (domain=host, QEMU traced by uftrace-tsc, pid = the
#    recorded QEMU pid), given after the guests, lands in the QEMU process
#    of the host trace.dat: its vCPU thread's calls on a second track of that
#    thread ("vCPU 0 (uftrace)"), never on a guest;
#  - the guest kernel trace.dat (domain=guest) and the guest Python trace
#    (no domain key, as the Python tracer writes it) are one VM: Python
#    slices and kernel syscall events of tid 200 on ONE thread track of one
#    process, no second guest machine;
#  - one clock model per VM: markers.dat in any of the VM's inputs (here a
#    markers-only dir, then inside the kernel dir) places both guest inputs
#    at the true host time; without it both are off by the TSC offset;
#  - DIR@NAME (or meta vm=NAME) splits the guests into two VMs; DIR@host
#    makes a dir the host;
#  - a host meta without QEMU's pid takes it from the uftrace dir's thread
#    (one naming another pid leaves the thread in the uftrace dir's process).
# Perfetto checked with protoc + perfetto_check.py, Chrome JSON with python.
set -eu
. "$VT_SRC/tests/merge/common.sh"
MKFIX="$VT_BUILD/tests/align/mkfixture"
[ -x "$MKFIX" ] || { echo "mkfixture not built: $MKFIX"; exit 1; }
[ -r /sys/kernel/tracing/events/syscalls/sys_enter_write/format ] ||
	{ echo "no tracefs syscall event formats (mount tracefs at /sys/kernel/tracing)"; exit 77; }
cd "$VT_TMP"

OFF=7000000			# guest TSC = host TSC + OFF (the truth)
HZ=2096001000			# mkfixture's host tsc.hz
T0=5000300000000		# host TSC of the first guest event (inside the markers' span)
# the VM's inputs h, qu, gp, gk (tests/merge/common.sh vm_fixture)
VM_OFF=$OFF VM_HZ=$HZ VM_T0=$T0 vm_fixture
mkdir m && cp mk/markers.dat m/		# the VM's markers alone

check() {	# OUT.json OUT.pftrace ALIGNED(1|0)
	protoc --decode=perfetto.protos.Trace -I "$VT_SRC/merge" \
		"$VT_SRC/merge/perfetto_subset.proto" <"$2" >"$2.txt"
	"$PY" "$VT_SRC/tests/merge/perfetto_check.py" "$2.txt" --json "$2.sum"
	"$PY" - "$1" "$2.sum" "$3" $HZ $T0 <<'PYEOF'
import json, sys
def fail(m): sys.exit("FAIL: " + m)
ev = json.load(open(sys.argv[1]))["traceEvents"]
procs = json.load(open(sys.argv[2]))
aligned, hz, t0 = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
by = {p["name"]: p for p in procs}
q = by.get("host: QEMU (pid 4240)")
if not q or q["pid"] != 4240: fail("no QEMU process 4240: %s" % sorted(by))
th = {(t["name"], t["lane"]): t for t in q["threads"]}
if ("vCPU 0", 0) not in th or not th[("vCPU 0", 0)]["events"]: fail("vCPU 0 kernel track %s" % sorted(th))
u = th.get(("vCPU 0 (uftrace)", 1))
if not u or u["tid"] != 4242 or "kvm_cpu_exec" not in u["names"]: fail("vCPU 0 uftrace lane %s" % sorted(th))
if [t for t in q["threads"] if t["tid"] == 4240 and "qemu_main" in t["names"]] == []:
    fail("QEMU main thread calls not in the QEMU process")
guests = [p for p in procs if p["name"].startswith("guest") and p["name"] != "guest: sync markers"]
if len(guests) != 1: fail("guest processes %s" % [p["name"] for p in guests])
# the VM's 40 markers: instants on the guest's "sync markers" track and on
# the host vCPU thread that saw them (tid 4242), a "sync" flow each
sm = [e for e in ev if e.get("name") == "sync marker"]
flows = [e for e in ev if e.get("cat") == "flow" and e["name"] == "sync"]
if aligned:
    if "guest: sync markers" not in by: fail("no guest sync markers process: %s" % sorted(by))
    if sorted({(e["pid"] >= 10000000, e["tid"]) for e in sm}) != [(False, 4242), (True, 15100002)]:
        fail("sync marker tracks %s" % sorted({(e["pid"], e["tid"]) for e in sm}))
    if len(sm) != 80 or len([f for f in flows if f["ph"] == "s"]) != 40 or \
       len([f for f in flows if f["ph"] == "f"]) != 40:
        fail("%d sync marker instants, %d flow events (want 80, 40 + 40)" % (len(sm), len(flows)))
    th4242 = [t for t in q["threads"] if t["tid"] == 4242 and t["lane"] == 0]
    if not th4242 or "sync marker" not in th4242[0]["names"]:
        fail("host sync markers not on the vCPU 0 thread track")
g = guests[0]
if g["name"] != "guest: python3 (pid 200)" or g["pid"] != 10000200: fail("guest process %s" % g)
# the thread's own track, and its syscalls as slices beside it (merge/derive.c)
gth = {t["name"]: t for t in g["threads"]}
if sorted(gth) != ["python3", "syscalls"]: fail("guest threads %s" % g["threads"])
names = gth["python3"]["names"]
if not {"py_a", "py_b"} <= set(names) or gth["python3"]["lane"] != 0:
    fail("Python slices not on the thread's track: %s" % names)
if gth["syscalls"]["names"] != ["write"] or gth["syscalls"]["slices"] != 1 or \
   gth["syscalls"]["tid"] != gth["python3"]["tid"]:
    fail("sys_enter_write..sys_exit_write not one slice 'write' of the thread: %s" % gth["syscalls"])
if any("guest1" in p["name"] or "guest2" in p["name"] for p in procs): fail("positional labels")
# Chrome JSON: the same thread, at the true host time (aligned) or OFF late
pe = [e for e in ev if e.get("pid") == 10000200 and e["ph"] in "Bi"]
tids = {e["tid"] for e in pe}
if tids != {10000200, 10000200 + 2 * 1000000000}: fail("guest tids %s" % tids)
want = {"py_a": t0, "write": t0 + 500}
for e in pe:
    if e["name"] in want:
        exp = want.pop(e["name"]) * 1e6 / hz
        off = abs(e["ts"] - exp)
        if aligned and off > 1.0: fail("%s at %.3f us, want %.3f" % (e["name"], e["ts"], exp))
        if not aligned and off < 1000: fail("%s aligned without markers" % e["name"])
if want: fail("missing %s" % want)
print("ok: %s" % sys.argv[2])
PYEOF
}
# 1+2+3: host uftrace last, Python first, markers from a markers-only dir
"$VT_BIN" merge gp h gk m qu -o a.json 2>a.err
"$VT_BIN" merge gp h gk m qu -o a.pftrace -q
cat a.err
grep -q "align *guest: markers" a.err || { echo "FAIL: no marker model for the VM"; exit 1; }
check a.json a.pftrace 1
# markers.dat inside the kernel dir only: the Python trace uses it too
cp mk/markers.dat gk/
"$VT_BIN" merge h qu gp gk -o b.json -q
"$VT_BIN" merge h qu gp gk -o b.pftrace -q
check b.json b.pftrace 1
rm gk/markers.dat
# no markers: no model, both guest inputs unaligned (still one VM)
"$VT_BIN" merge h qu gp gk -o c.json -q 2>/dev/null
"$VT_BIN" merge h qu gp gk -o c.pftrace -q 2>/dev/null
check c.json c.pftrace 0
# DIR@NAME: two VMs (machines 1 and 2); DIR@host
"$VT_BIN" merge h gp@vm1 gk@vm2 m@vm1 -o d.json 2>d.err
grep -q "align *vm1: markers" d.err || { cat d.err; echo "FAIL: vm1 not aligned"; exit 1; }
"$PY" - d.json <<'PYEOF'
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
M = sorted({(e["pid"], e["args"]["name"]) for e in ev if e["ph"] == "M" and e["name"] == "process_name"})
want = [(4240, "host: QEMU (pid 4240)"), (10000200, "guest vm1: pid 200"),
        (20000200, "guest vm2: python3 (pid 200)")]
if [m for m in M if m[0] in (4240, 10000200, 20000200)] != want: sys.exit("FAIL: VMs %s" % M)
print("ok: two VMs")
PYEOF
# meta vm=NAME does the same as DIR@NAME
"$VT_BIN" meta gk vm=vm2
"$VT_BIN" merge h gp gk m -o v.json -q
grep -q '"guest vm2: python3 (pid 200)"' v.json && grep -q '"guest: pid 200"' v.json ||
	{ echo "FAIL: meta vm= not used"; exit 1; }
"$VT_BIN" merge gp@host -o e.json -q
"$VT_BIN" merge qu@host gk -o f.json -q 2>/dev/null
grep -q '"guest: python3 (pid 200)"' f.json && grep -q '"host: pid 4240"' f.json
# a host meta without QEMU's pid: the vCPU thread the host uftrace dir
# placed gives it (4240), its trace.dat events on that QEMU's track
cp -r h hp
sed -i '/^kvm.vm0.pid=/d' hp/vmtrace.meta
"$VT_BIN" merge hp qu -o p.json -q
"$PY" - p.json <<'PYEOF'
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
M = {(e["pid"], e["tid"], e["name"]): e["args"]["name"] for e in ev if e["ph"] == "M"}
assert M[(4240, 4242, "process_name")] == "host: QEMU (pid 4240)", M
assert M[(4240, 4242, "thread_name")] == "vCPU 0", M
assert M[(4240, 1000004242, "thread_name")] == "vCPU 0 (uftrace)", M
assert any(e["tid"] == 4242 and e["ph"] != "M" for e in ev), "no trace.dat events on 4242"
print("ok: QEMU's pid from the uftrace dir")
PYEOF
# a meta naming another pid than the uftrace dir's: the thread stays in
# the uftrace dir's process, which is not renamed QEMU's
sed 's/^kvm.vm0.pid=.*/kvm.vm0.pid=4999/' h/vmtrace.meta >hp/vmtrace.meta
"$VT_BIN" merge hp qu -o w.json -q
"$PY" - w.json <<'PYEOF'
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
M = {(e["pid"], e["tid"], e["name"]): e["args"]["name"] for e in ev if e["ph"] == "M"}
assert M[(4240, 4242, "process_name")] == "host: pid 4240", M
assert M[(4240, 4242, "thread_name")] == "vCPU 0", M
assert not any(e["pid"] == 4999 for e in ev), "a process 4999"
print("ok: a meta pid the uftrace dir contradicts")
PYEOF
echo "ok"
