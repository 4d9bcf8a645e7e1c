#!/usr/bin/python3
# mkcrit.py - the critical-path fixture of tests/report: the event lists of
# a host trace.dat and a guest kernel trace.dat (for tests/merge/gen-tracedat)
# around K Python calls app.save (gen-trace -D 2, as mkfixture.py: call k at
# S + (4k+1)*STEP .. S + (4k+2)*STEP ticks, 1 ms), each with an fsync whose
# time goes through KNOWN states: guest CPU, VM exits, the vCPU thread
# preempted on the host (while the guest thread runs, during the host disk
# syscall, and while the injected irq waits), the block request's stages,
# the guest thread runnable-not-running, a guest irq.  expected.json has
# each call's and each fsync's parts (ns) as designed here, the segment
# list below being the truth, and the vCPU-preempted time during each.
# One TSC for host and guest (2 GHz: 2 ticks per ns).
#
# usage: mkcrit.py OUTDIR K [dm] [qemu] [byname]
#   dm: each fsync's request is a write (not a flush) that QEMU serves with
#   aio=native on a host whose own disk is a virtio disk too (a nested
#   host: its vda is 253:0, the guest's vda's number): io_submit, the bio
#   it queues and the host's block_rq_complete of it - at the guest
#   request's device number and sector.  The parts are the flush's: the
#   host's block events complete none of the guest's requests.
#   qemu: the call's first VM exit goes on to QEMU (kvm_userspace_exit 5 us
#   after its kvm_exit, an MMIO QEMU emulates): exit_kernel, then exit_qemu
#   until the kvm_entry.
#   byname: the host's sched_switch events carry prev_comm and next_comm (as
#   the kernel's do; "CPU 0/KVM" for the vCPU thread), and host CPU 3
#   switches between threads whose names only look like a vCPU's ("CPU
#   -1/KVM", "CPU 5000/KVM", "CPU 1/", "CPU 0/KVM-x"): not vCPUs.
#   othervm: with byname, another VM's vCPU thread (OTHER_TID, named "CPU
#   0/KVM" too, not among QEMU's threads the meta lists) runs on host CPU
#   3, switched in before the traced vCPU is first seen and preempted by a
#   hog during every call: not the traced VM's vCPU.
import json, os, sys
import evlist

out, K = sys.argv[1], int(sys.argv[2])
DM = "dm" in sys.argv[3:]
QEMU_EXIT = "qemu" in sys.argv[3:]
BYNAME = "byname" in sys.argv[3:]
OTHERVM = "othervm" in sys.argv[3:]
OTHER_TID, OTHER_HOG = 5243, 9998
DECOYS = {4301: "CPU\\s-1/KVM", 4302: "CPU\\s5000/KVM", 4303: "CPU\\s1/", 4304: "CPU\\s0/KVM-x"}
DEV = 253 << 20                 # the kernel's dev_t of 253:0 (guest and, in dm, host)
S, STEP, HZ_NS = 1_000_000_000, 2_000_000, 2
CALL_NS = STEP // HZ_NS
GTID, VCPU_TID, IO_TID, HOG_TID = 200, 4243, 4250, 9999
COMM = {0: "swapper/1", VCPU_TID: "CPU\\s0/KVM", HOG_TID: "hog", **DECOYS,
        OTHER_TID: "CPU\\s0/KVM", OTHER_HOG: "hog2"}
HCPU_V, HCPU_IO = 1, 0          # host CPUs of the vCPU thread and QEMU's I/O thread
R, RPLUS, SLEEP = 0, 0x100, 1    # prev_state: runnable, preempted ("R+"), S

L = evlist.Lists(HZ_NS)
host, guest, h, g = L.host, L.guest, L.h, L.g

def switch(cpu, ns, prev, state, nxt, side):
    f = "prev_pid=%d prev_prio=120 prev_state=%d next_pid=%d next_prio=120" % (prev, state, nxt)
    if side == "host":
        if BYNAME:
            f = "prev_comm=%s %s next_comm=%s" % (COMM[prev], f, COMM[nxt])
        h(cpu, ns, prev, "sched/sched_switch", f)
    else:
        g(ns, prev, "sched/sched_switch", f)

def vexit(ns, reason=123):
    h(HCPU_V, ns, VCPU_TID, "kvm/kvm_exit", "exit_reason=%d isa=2 guest_rip=0 vcpu_id=0" % reason)

def ventry(ns):
    h(HCPU_V, ns, VCPU_TID, "kvm/kvm_entry", "vcpu_id=0")

def preempt(a, b, state=R):
    # the vCPU thread switched out runnable at a, back in at b (a hog ran)
    switch(HCPU_V, a, VCPU_TID, state, HOG_TID, "host")
    switch(HCPU_V, b, HOG_TID, R, VCPU_TID, "host")

# at the start: the vCPU thread runs in guest mode, the guest thread runs
t0 = S // HZ_NS
if OTHERVM:                     # another VM's vCPU runs first, on host CPU 3
    switch(3, t0 - 500, 0, R, OTHER_TID, "host")
switch(HCPU_V, t0, 0, R, VCPU_TID, "host")
ventry(t0 + 10)
switch(0, t0 + 20, 0, R, GTID, "guest")
if BYNAME:                      # the decoys take turns on host CPU 3
    d = sorted(DECOYS)
    for i in range(4 * len(d)):
        switch(3, t0 + 100 + 1000 * i, d[i % len(d) - 1] if i else 0, R, d[i % len(d)], "host")

calls, fsyncs = [], []
for k in range(K):
    B = (S + (4 * k + 1) * STEP) // HZ_NS
    p1 = 100_000 + 10_000 * k           # vCPU preempted while the thread runs
    seg = []                            # (from, to, part) relative to B: the truth
    def part(a, b, p):
        seg.append((a, b, p))
    # running: guest mode, an exit, the vCPU preempted inside an exit
    part(0, 100_000, "guest_cpu")
    if OTHERVM:                 # the other VM's vCPU preempted meanwhile
        switch(3, B + 10_000, OTHER_TID, R, OTHER_HOG, "host")
        switch(3, B + 700_000, OTHER_HOG, R, OTHER_TID, "host")
    if QEMU_EXIT:
        vexit(B + 100_000, 48)
        h(HCPU_V, B + 105_000, VCPU_TID, "kvm/kvm_userspace_exit", "reason=6 errno=0")
        ventry(B + 120_000)
        part(100_000, 105_000, "exit_kernel")
        part(105_000, 120_000, "exit_qemu")
    else:
        vexit(B + 100_000); ventry(B + 120_000); part(100_000, 120_000, "exit_kernel")
    part(120_000, 149_000, "guest_cpu")
    vexit(B + 149_000, 1); part(149_000, 150_000, "exit_kernel")
    preempt(B + 150_000, B + 150_000 + p1); part(150_000, 150_000 + p1, "vcpu_preempted")
    e = 150_000 + p1 + 1_000
    ventry(B + e); part(150_000 + p1, e, "exit_kernel")
    part(e, 300_000, "guest_cpu")
    # the fsync: a flush request queued, issued, kicked
    g(B + 300_000, GTID, "syscalls/sys_enter_fsync", "fd=3")
    sec, nr = (4096 + 64 * k, 8) if DM else (0, 0)   # dm: a write, else a flush
    rq = "dev=%d sector=%d nr_sector=%d bytes=%d" % (DEV, sec, nr, nr * 512) + \
        (" rwbs=WS" if DM else "")
    g(B + 310_000, GTID, "block/block_rq_insert", rq)
    g(B + 315_000, GTID, "block/block_rq_issue", rq)
    part(300_000, 317_900, "guest_cpu")
    vexit(B + 317_900)
    h(HCPU_V, B + 318_000, VCPU_TID, "kvm/kvm_pio", "rw=1 port=0xc050 size=2 count=1 val=0")
    ventry(B + 318_300); part(317_900, 318_300, "exit_kernel")
    part(318_300, 320_000, "guest_cpu")
    switch(0, B + 320_000, GTID, SLEEP, 0, "guest")        # the thread blocks
    part(320_000, 350_000, "qemu_before_host_io")
    if DM:
        # aio=native: the bio queued in io_submit, on the host's 253:0 at
        # the guest's sector; the host disk completes it in an irq
        h(HCPU_IO, B + 350_000, IO_TID, "syscalls/sys_enter_io_submit", "ctx_id=1 nr=1")
        h(HCPU_IO, B + 350_500, IO_TID, "block/block_bio_queue",
          "dev=%d sector=%d nr_sector=%d rwbs=WS" % (DEV, sec, nr))
        h(HCPU_IO, B + 352_000, IO_TID, "syscalls/sys_exit_io_submit", "ret=1")
    else:
        h(HCPU_IO, B + 350_000, IO_TID, "syscalls/sys_enter_fdatasync", "fd=12")
    preempt(B + 400_000, B + 450_000)                     # hidden behind the disk
    if DM:
        h(HCPU_IO, B + 550_000, 0, "block/block_rq_complete",
          "dev=%d sector=%d nr_sector=%d error=0 rwbs=WS" % (DEV, sec, nr))
    else:
        h(HCPU_IO, B + 550_000, IO_TID, "syscalls/sys_exit_fdatasync", "ret=0")
    part(350_000, 550_000, "host_io")
    h(HCPU_IO, B + 560_000, IO_TID, "kvm/kvm_msi_set_irq", "address=0xfee00000 data=0x4022")
    part(550_000, 560_000, "host_done_to_inject")
    part(560_000, 570_000, "inject_to_guest_irq")
    preempt(B + 570_000, B + 620_000, RPLUS); part(570_000, 620_000, "vcpu_preempted")
    part(620_000, 630_000, "inject_to_guest_irq")
    g(B + 630_000, 0, "irq/irq_handler_entry", "irq=11")
    part(630_000, 640_000, "guest_irq_to_complete")
    # a flush completes at sector 2^64-1
    g(B + 640_000, 0, "block/block_rq_complete", "dev=%d sector=%d nr_sector=%d error=0" %
      (DEV, sec if DM else (1 << 64) - 1, nr) + (" rwbs=WS" if DM else ""))
    g(B + 640_002, 0, "irq/irq_handler_exit", "irq=11 ret=1")
    part(640_000, 650_000, "blocked_other")
    g(B + 650_000, 0, "sched/sched_wakeup", "pid=%d prio=120 target_cpu=0" % GTID)
    part(650_000, 700_000, "guest_runnable")
    switch(0, B + 700_000, 0, R, GTID, "guest")
    g(B + 710_000, GTID, "syscalls/sys_exit_fsync", "ret=0")
    part(700_000, 800_000, "guest_cpu")
    g(B + 800_000, GTID, "irq/irq_handler_entry", "irq=0")
    g(B + 810_000, GTID, "irq/irq_handler_exit", "irq=0 ret=1")
    part(800_000, 810_000, "guest_irq")
    part(810_000, CALL_NS, "guest_cpu")
    # the truth: the segments tile the call exactly
    seg.sort()
    assert seg[0][0] == 0 and seg[-1][1] == CALL_NS
    assert all(seg[i][1] == seg[i + 1][0] for i in range(len(seg) - 1)), seg
    def parts(a, b):
        d = {}
        for x, y, p in seg:
            lo, hi = max(x, a), min(y, b)
            if hi > lo:
                d[p] = d.get(p, 0) + hi - lo
        return d
    pre = [(150_000, 150_000 + p1), (400_000, 450_000), (570_000, 620_000)]
    def overlap(a, b):
        return sum(max(0, min(y, b) - max(x, a)) for x, y in pre)
    calls.append({"begin": B, "dur": CALL_NS, "parts": parts(0, CALL_NS),
                  "preempt_overlap": overlap(0, CALL_NS)})
    fsyncs.append({"begin": B + 300_000, "dur": 410_000, "parts": parts(300_000, 710_000),
                   "preempt_overlap": overlap(300_000, 710_000)})

evlist.write(os.path.join(out, "host.txt"),
             [(VCPU_TID, "CPU 0/KVM"), (IO_TID, "qemu-system-x86"), (HOG_TID, "hog")] +
             ([(OTHER_TID, "CPU 0/KVM"), (OTHER_HOG, "hog2")] if OTHERVM else []), host)
evlist.write(os.path.join(out, "guest.txt"), [(GTID, "python3")], guest)
json.dump({"calls": calls, "fsyncs": fsyncs, "vcpu_tid": VCPU_TID,
           "host_io": "io_submit" if DM else "fdatasync"},
          open(os.path.join(out, "expected.json"), "w"), indent=1)
