#!/usr/bin/python3
# mkfixture.py - the known-answer fixture of tests/report: writes the event
# lists of a host trace.dat and a guest kernel trace.dat (for
# tests/merge/gen-tracedat) whose I/O requests have KNOWN per-stage
# latencies, and expected.json with the figures the report must find.
# The guest's Python trace (gen-trace -D 2, STEP ticks per record) has
# app.save calls at S + (4k+1)*STEP .. S + (4k+2)*STEP; request k lives
# inside call k.  One TSC for host and guest (2 GHz: 2 ticks per ns).
#
# usage: mkfixture.py OUTDIR NREQ [stream]
#   stream: for big inputs (tests/bench/b-report.sh): events written as they
#   are made (each CPU's come in time order), no expected.json
import json, os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from evlist import write

out, K = sys.argv[1], int(sys.argv[2])
STREAM = len(sys.argv) > 3 and sys.argv[3] == "stream"
S, STEP = 1_000_000_000, 2_000_000      # ticks (gen-trace -s / -d)
HZ_NS = 2                               # ticks per ns
CALL_NS = STEP // HZ_NS
STAGES = ["py_to_sys", "sys_to_insert", "queue", "issue_to_kick", "kick_to_host_io",
          "host_io", "host_io_to_inject", "inject_to_irq", "irq_to_complete",
          "complete_to_sys_exit"]
EXIT_BEFORE, EXIT_AFTER, VIRQ_AFTER = 100, 300, 200   # ns around the kick / msi
GTID, VCPU_TID, IO_TID = 200, 4243, 4250

def dur(k, j):
    return 1000 * (j + 1) + (k * 7919 * (j + 3)) % 5000

os.makedirs(out, exist_ok=True)
host, guest, reqs = [], [], []
if STREAM:
    hf = open(os.path.join(out, "host.txt"), "w", buffering=1 << 20)
    gf = open(os.path.join(out, "guest.txt"), "w", buffering=1 << 20)
    hf.write("comm %d CPU 0/KVM\ncomm %d qemu-system-x86\n" % (VCPU_TID, IO_TID))
    gf.write("comm %d python3\n" % GTID)
for k in range(K):
    d = [dur(k, j) for j in range(len(STAGES))]
    t = {}
    t["py_begin"] = (S + (4 * k + 1) * STEP) // HZ_NS
    names = ["sys_enter", "rq_insert", "rq_issue", "kick", "host_io_begin",
             "host_io_end", "inject", "guest_irq", "rq_complete", "sys_exit"]
    prev = t["py_begin"]
    for j, nm in enumerate(names):
        prev += d[j]
        t[nm] = prev
    t["py_end"] = t["py_begin"] + CALL_NS
    assert t["sys_exit"] < t["py_end"]
    if not STREAM:
        reqs.append(t)
    T = lambda ns: ns * HZ_NS
    sector = 8 * (k % 1000000)
    # a sync marker write on the same vCPU must not be taken for a kick
    host.append((0, T(t["py_begin"] + 10), VCPU_TID, "kvm/kvm_pio",
                 "rw=1 port=0x5f0 size=4 count=1 val=0x56000001"))
    guest += [
        (0, T(t["sys_enter"]), GTID, "syscalls/sys_enter_write", "fd=3 count=4096"),
        (0, T(t["rq_insert"]), GTID, "block/block_rq_insert",
         "dev=265289728 sector=%d nr_sector=8 bytes=4096" % sector),
        (0, T(t["rq_issue"]), GTID, "block/block_rq_issue",
         "dev=265289728 sector=%d nr_sector=8 bytes=4096" % sector),
        (0, T(t["guest_irq"]), 0, "irq/irq_handler_entry", "irq=11"),
        (0, T(t["guest_irq"]) + 2, 0, "irq/irq_handler_exit", "irq=11 ret=1"),
        (0, T(t["rq_complete"]), 0, "block/block_rq_complete",
         "dev=265289728 sector=%d nr_sector=8 error=0" % sector),
        (0, T(t["sys_exit"]), GTID, "syscalls/sys_exit_write", "ret=4096"),
    ]
    host += [
        (0, T(t["kick"] - EXIT_BEFORE), VCPU_TID, "kvm/kvm_exit",
         "exit_reason=123 isa=2 guest_rip=0xffffffff81000000 vcpu_id=0"),
        (0, T(t["kick"]), VCPU_TID, "kvm/kvm_pio", "rw=1 port=0xc050 size=2 count=1 val=0"),
        (0, T(t["kick"] + EXIT_AFTER), VCPU_TID, "kvm/kvm_entry", "vcpu_id=0"),
        (1, T(t["host_io_begin"]), IO_TID, "syscalls/sys_enter_pwritev", "fd=12 vlen=1"),
        (1, T(t["host_io_end"]), IO_TID, "syscalls/sys_exit_pwritev", "ret=4096"),
        (1, T(t["inject"]), IO_TID, "kvm/kvm_msi_set_irq", "address=0xfee00000 data=0x4022"),
        (0, T(t["inject"] + VIRQ_AFTER), VCPU_TID, "kvm/kvm_inj_virq", "vector=34"),
    ]
    if STREAM:
        for e in guest:
            gf.write("ev %d %d %d %s %s\n" % e)
        for e in host:
            hf.write("ev %d %d %d %s %s\n" % e)
        guest, host = [], []
if STREAM:
    hf.close(); gf.close()
    sys.exit(0)

write(os.path.join(out, "host.txt"), [(VCPU_TID, "CPU 0/KVM"), (IO_TID, "qemu-system-x86")], host)
write(os.path.join(out, "guest.txt"), [(GTID, "python3")], guest)

# expected figures: nearest-rank percentiles over the K requests
LINKS = {"py_to_sys": ("py_begin", "sys_enter"), "sys_to_issue": ("sys_enter", "rq_issue"),
         "queue": ("rq_insert", "rq_issue"), "issue_to_kick": ("rq_issue", "kick"),
         "kick_to_host_io": ("kick", "host_io_begin"),
         "host_io": ("host_io_begin", "host_io_end"),
         "host_io_to_inject": ("host_io_end", "inject"),
         "inject_to_irq": ("inject", "guest_irq"), "irq_to_complete": ("guest_irq", "rq_complete"),
         "complete_to_sys_exit": ("rq_complete", "sys_exit"),
         "sys_exit_to_py_end": ("sys_exit", "py_end"), "device": ("rq_issue", "rq_complete"),
         "host": ("kick", "inject"), "syscall": ("sys_enter", "sys_exit")}

def rank(v, p):
    v = sorted(v)
    r = (len(v) * p + 99) // 100
    return v[max(r, 1) - 1]

exp = {"stages": {}, "requests": reqs, "call_ns": CALL_NS,
       "exit_ns": EXIT_BEFORE + EXIT_AFTER}
for st, (a, b) in LINKS.items():
    v = [t[b] - t[a] for t in reqs]
    exp["stages"][st] = {"n": len(v), "p50": rank(v, 50), "p90": rank(v, 90),
                         "p99": rank(v, 99), "max": max(v)}
exp["slowest"] = sorted(range(K), key=lambda k: (-(reqs[k]["sys_exit"] - reqs[k]["sys_enter"]), k))
exp["wait_ns"] = sum(t["sys_exit"] - t["sys_enter"] for t in reqs)
json.dump(exp, open(os.path.join(out, "expected.json"), "w"), indent=1)
