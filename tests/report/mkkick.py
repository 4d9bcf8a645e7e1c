#!/usr/bin/python3
# mkkick.py - the kick fixture of tests/report/t-report-kick: the event
# lists of a host and a guest kernel trace.dat (for tests/merge/gen-tracedat)
# with one fsync (inside the Python call app.save of gen-trace -D 2 -n 4, as
# mkthrottle.py) whose one write request is issued, then the thread blocks;
# the vCPU writes the sync marker port 0x5f0, the CMOS index port 0x70 and
# the POST port 0x80 (none a device notify) before the driver's real kick,
# a write to the legacy virtio-pci queue-notify port 0xc050; then QEMU's
# pwrite64, the MSI, the guest irq and the completion.  expected.json has
# the fsync's parts (ns) and the kick's instant and port as designed here.
# One TSC for host and guest (2 GHz: 2 ticks per ns).
#
# usage: mkkick.py OUTDIR
import sys
import evlist

out = sys.argv[1]
S, STEP, HZ_NS = 1_000_000_000, 2_000_000, 2
GTID, VCPU_TID, IO_TID = 200, 4243, 4250
SLEEP, R = 1, 0
NOTIFY = 0xc050
L = evlist.Lists(HZ_NS)
host, guest, h, g = L.host, L.guest, L.h, L.g

t0 = S // HZ_NS
L.start(t0, 1, VCPU_TID, GTID)

B = (S + STEP) // HZ_NS          # app.save's call: B .. B + 1 ms
F = B + 300_000                 # the fsync
DEV = "dev=265289728"
seg = []
def part(a, b, p):
    seg.append((a, b, p))

def pio(at, port, size, val, dur=300):
    h(1, F + at - 100, VCPU_TID, "kvm/kvm_exit", "exit_reason=30 isa=1 guest_rip=0 vcpu_id=0")
    h(1, F + at, VCPU_TID, "kvm/kvm_pio", "rw=1 port=%#x size=%d count=1 val=%#x" % (port, size, val))
    h(1, F + at + dur - 100, VCPU_TID, "kvm/kvm_entry", "vcpu_id=0")

g(F, GTID, "syscalls/sys_enter_fsync", "fd=3")
g(F + 10_000, GTID, "block/block_rq_insert", "%s sector=8 nr_sector=8 bytes=4096" % DEV)
g(F + 10_500, GTID, "block/block_rq_issue", "%s sector=8 nr_sector=8 bytes=4096" % DEV)
g(F + 11_000, GTID, "sched/sched_switch",
  "prev_pid=%d prev_prio=120 prev_state=%d next_pid=0 next_prio=120" % (GTID, SLEEP))
# not notifies: a sync marker (the thread runs: an exit of its vCPU), then
# with the thread blocked the CMOS index and the POST port
pio(5_000, 0x5f0, 4, 0x56000007)
part(0, 4_900, "guest_cpu")
part(4_900, 5_200, "exit_kernel")
part(5_200, 11_000, "guest_cpu")
pio(15_000, 0x70, 1, 0x8f)
pio(25_000, 0x80, 1, 0)
# the driver's kick: the blocked thread waits on the driver until here
pio(40_000, NOTIFY, 2, 0)
part(11_000, 40_000, "guest_driver")
part(40_000, 100_000, "qemu_before_host_io")
h(0, F + 100_000, IO_TID, "syscalls/sys_enter_pwrite64", "fd=12 buf=0 count=4096 pos=4096")
h(0, F + 110_000, IO_TID, "syscalls/sys_exit_pwrite64", "ret=4096")
part(100_000, 110_000, "host_io")
h(0, F + 112_000, IO_TID, "kvm/kvm_msi_set_irq", "address=0xfee00000 data=0x4022")
part(110_000, 112_000, "host_done_to_inject")
g(F + 115_000, 0, "irq/irq_handler_entry", "irq=11")
part(112_000, 115_000, "inject_to_guest_irq")
g(F + 116_000, 0, "block/block_rq_complete", "%s sector=8 nr_sector=8 error=0" % DEV)
part(115_000, 116_000, "guest_irq_to_complete")
g(F + 116_200, 0, "sched/sched_wakeup", "pid=%d prio=120 target_cpu=0" % GTID)
part(116_000, 116_200, "blocked_other")
g(F + 116_500, 0, "irq/irq_handler_exit", "irq=11 ret=1")
g(F + 120_000, 0, "sched/sched_switch",
  "prev_pid=0 prev_prio=120 prev_state=%d next_pid=%d next_prio=120" % (R, GTID))
part(116_200, 120_000, "guest_runnable")
g(F + 130_000, GTID, "syscalls/sys_exit_fsync", "ret=0")
part(120_000, 130_000, "guest_cpu")
parts = evlist.parts_of(seg, 130_000)
evlist.write_fixture(out, [(VCPU_TID, "CPU 0/KVM"), (IO_TID, "worker")], L,
                     {"fsync": {"begin": F, "dur": 130_000, "parts": parts},
                     "kick": {"ts": F + 40_000, "port": NOTIFY}},
                     [(GTID, "python3")])
