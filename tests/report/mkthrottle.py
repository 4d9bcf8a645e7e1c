#!/usr/bin/python3
# mkthrottle.py - the throttling fixture of tests/report/t-report-throttle:
# the event lists of a host and a guest kernel trace.dat (for
# tests/merge/gen-tracedat) with one fsync (inside the Python call app.save
# of gen-trace -D 2 -n 4, as mkcrit.py) whose two write requests are kicked
# at once and served by QEMU one after the other, as QEMU's throttling does:
# the first one's pwrite64, injection, guest irq and completion, then the
# second one still waiting in QEMU until its own pwrite64 (while another
# virtio device's interrupt comes and goes).  expected.json
# has the fsync's parts (ns) as designed here: the segment list is the
# truth (the wait of the second request is "QEMU before host syscall").
# One TSC for host and guest (2 GHz: 2 ticks per ns).
#
# usage: mkthrottle.py OUTDIR
import sys
import evlist

out = sys.argv[1]
S, STEP, HZ_NS = 1_000_000_000, 2_000_000, 2
GTID, VCPU_TID, IO_TID = 200, 4243, 4250
SLEEP, R = 1, 0
L = evlist.Lists(HZ_NS)
host, guest, h, g = L.host, L.guest, L.h, L.g

t0 = S // HZ_NS
L.start(t0, 1, VCPU_TID, GTID)

B = (S + STEP) // HZ_NS          # app.save's call: B .. B + 1 ms
F = B + 300_000                 # the fsync
seg = []
def part(a, b, p):
    seg.append((a, b, p))
DEV = "dev=265289728"
g(F, GTID, "syscalls/sys_enter_fsync", "fd=3")
for k, sector in enumerate((8, 16)):
    g(F + 10_000 + 1000 * k, GTID, "block/block_rq_insert", "%s sector=%d nr_sector=8 bytes=4096" % (DEV, sector))
    g(F + 10_500 + 1000 * k, GTID, "block/block_rq_issue", "%s sector=%d nr_sector=8 bytes=4096" % (DEV, sector))
part(0, 19_900, "guest_cpu")
h(1, F + 19_900, VCPU_TID, "kvm/kvm_exit", "exit_reason=123 isa=2 guest_rip=0 vcpu_id=0")
h(1, F + 20_000, VCPU_TID, "kvm/kvm_pio", "rw=1 port=0xc050 size=2 count=1 val=0")   # one kick, both
h(1, F + 20_300, VCPU_TID, "kvm/kvm_entry", "vcpu_id=0")
part(19_900, 20_300, "exit_kernel")
part(20_300, 21_000, "guest_cpu")
g(F + 21_000, GTID, "sched/sched_switch",
  "prev_pid=%d prev_prio=120 prev_state=%d next_pid=0 next_prio=120" % (GTID, SLEEP))
part(21_000, 100_000, "qemu_before_host_io")           # both held by QEMU
# QEMU serves one request, then the other: (pwrite at, sector)
for k, (at, sector) in enumerate(((100_000, 8), (300_000, 16))):
    h(0, F + at, IO_TID, "syscalls/sys_enter_pwrite64", "fd=12 buf=0 count=4096 pos=%d" % (sector * 512))
    h(0, F + at + 10_000, IO_TID, "syscalls/sys_exit_pwrite64", "ret=4096")
    part(at, at + 10_000, "host_io")
    h(0, F + at + 12_000, IO_TID, "kvm/kvm_msi_set_irq", "address=0xfee00000 data=0x4022")
    part(at + 10_000, at + 12_000, "host_done_to_inject")
    part(at + 12_000, at + 15_000, "inject_to_guest_irq")
    g(F + at + 15_000, 0, "irq/irq_handler_entry", "irq=11")
    g(F + at + 16_000, 0, "block/block_rq_complete", "%s sector=%d nr_sector=8 error=0" % (DEV, sector))
    if k == 0:
        g(F + at + 16_500, 0, "irq/irq_handler_exit", "irq=11 ret=1")
        part(at + 15_000, at + 16_500, "guest_irq_to_complete")
        # the second request is still in QEMU, kicked, no syscall yet;
        # meanwhile another virtio device (a serial port) interrupts the
        # guest: not the disk's stage
        part(at + 16_500, 300_000, "qemu_before_host_io")
        h(0, F + 200_000, IO_TID + 1, "kvm/kvm_msi_set_irq", "address=0xfee00000 data=0x4021")
        g(F + 202_000, 0, "irq/irq_handler_entry", "irq=10")
        g(F + 203_000, 0, "irq/irq_handler_exit", "irq=10 ret=1")
    else:
        part(at + 15_000, at + 16_000, "guest_irq_to_complete")
        part(at + 16_000, at + 16_200, "blocked_other")         # nothing in flight
        g(F + at + 16_200, 0, "sched/sched_wakeup", "pid=%d prio=120 target_cpu=0" % GTID)
        g(F + at + 16_500, 0, "irq/irq_handler_exit", "irq=11 ret=1")
        part(at + 16_200, 320_000, "guest_runnable")
g(F + 320_000, 0, "sched/sched_switch",
  "prev_pid=0 prev_prio=120 prev_state=%d next_pid=%d next_prio=120" % (R, GTID))
g(F + 330_000, GTID, "syscalls/sys_exit_fsync", "ret=0")
part(320_000, 330_000, "guest_cpu")
parts = evlist.parts_of(seg, 330_000)
evlist.write_fixture(out, [(VCPU_TID, "CPU 0/KVM"), (IO_TID, "worker"), (IO_TID + 1, "qemu-system-x86")], L,
                     {"fsync": {"begin": F, "dur": 330_000, "parts": parts}},
                     [(GTID, "python3")])
