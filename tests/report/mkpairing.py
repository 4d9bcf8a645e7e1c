#!/usr/bin/python3
# mkpairing.py - the pairing fixture of tests/report/t-report-pairing.sh:
# writes the event lists of a host trace.dat and a guest kernel trace.dat
# (for tests/merge/gen-tracedat) where each guest block request is served
# by KNOWN QEMU operations, in the ways that defeat pairing by time: two
# vCPUs with requests in flight at once, host syscalls out of issue order,
# throttling delays, a split write, a merged preadv, a read-modify-write, a
# flush (issued at sector 0, completed at sector 2^64-1) with a write at
# sector 0 in flight, an iothread named "IO io0", a foreign process named
# qemu-nbd reading the same file offset, another device's kicks and MSI,
# LAPIC MMIO writes, the timer vector injected in between.  expected.json
# holds per request the truth: its QEMU operations, kick address, MSI.
# One clock for host and guest: 1 tick = 1 ns (tsc.hz 1e9).
#
# usage: mkpairing.py OUTDIR [uring|native|uring-bio|native-bio|uring-ext|native-ext]
#   uring: QEMU's operations are io_uring requests (submit_req by the QEMU
#   thread, complete in interrupt context) instead of syscalls
#   native: they are Linux AIO io_submit calls (no offset, no completion)
#   uring-bio, native-bio: the same on a host block device (7:0), with the
#   host block layer's events: the bio each submission queues (its disk
#   bytes) and the block_rq_complete that ends it; the truth is exact again
#   uring-ext, native-ext: the same on an image file (QEMU's fd 12) on a
#   file system on partition 8:1 of disk 8:0 (starting at 1 MiB): the bios
#   are at the disk's bytes of the file's extents, which extents.tsv
#   (docs/format/extents.md) gives as `vmtrace record` reads them at the
#   start and the end: one extent allocated during the run (unwritten at
#   the start), and three stray QEMU bios after the last request - in an
#   extent unwritten at both readings, in one that moved between them,
#   outside every extent - counted, not mapped; QEMU's fdatasync on another
#   fd of the image than the one extents.tsv names
import json, os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from evlist import write

out = sys.argv[1]
MODE = sys.argv[2] if len(sys.argv) > 2 else ""
URING = MODE.startswith("uring")        # QEMU aio=io_uring
NATIVE = MODE.startswith("native")      # QEMU aio=native
BIO = MODE.endswith("-bio") or MODE.endswith("-ext")  # ... on a host block device
EXT = MODE.endswith("-ext")             # ... an image file on it
HDEV = (8 << 20) if EXT else (7 << 20)  # the host's sda or loop0 (the kernel's dev_t)
PART_START = 1 << 20                    # sda1's first byte on sda
MIB = 1 << 20
# the image file's extents: (logical, physical on sda1, length, flags at
# the start, flags at the end; None: not in that reading)
EXTENTS = [(0, 200 * MIB, 8 * MIB, 0, 0),
           (8 * MIB, 64 * MIB, 16 * MIB, 0, 0),
           (24 * MIB, 300 * MIB, 8 * MIB, 0x800, 0x1),   # allocated in the run
           (32 * MIB, 400 * MIB, MIB, 0x800, 0x800)]     # unwritten throughout
MOVED = [(40 * MIB, 500 * MIB, MIB, 0, None), (48 * MIB, 500 * MIB, MIB, None, 0)]

def disk_byte(off, length):
    """the disk byte of file bytes [off, off + length) (one extent)"""
    if not EXT:
        return off
    for lo, ph, ln, _, _ in EXTENTS:
        if lo <= off and off + length <= lo + ln:
            return PART_START + ph + off - lo
    raise SystemExit("mkpairing: no extent for %d+%d" % (off, length))
uring_ud = 0xffff888000000000
DEV, FD = 265289728, 12
QEMU, VCPU, WORKER, IOTH, KWORKER, NBD = 4242, (4243, 4244), (4250, 4251), 4260, 77, 5000
HCPU = {VCPU[0]: 0, VCPU[1]: 1, WORKER[0]: 2, WORKER[1]: 3, IOTH: 4, KWORKER: 5, NBD: 6,
        QEMU: 7}
GTID = (300, 301)
NOTIFY = (0xfe003000, 0xfe003004)       # virtio-pci notify address of queue 0 / 1
NET_PORT = 0xc000                       # another device's legacy notify port
MSI_ADDR = (0xfee00000, 0xfee01000)     # MSI address per queue (destination vCPU)
MSI_DATA = (0x4023, 0x4024)             # ... and data (vector 0x23, 0x24)
NET_MSI = 0x4025
MS = 1_000_000

host, guest, truth = [], [], []
nreq = 0

def hev(tid, ts, ev, f):
    host.append((HCPU[tid], ts, tid, ev, f))

def kick(vcpu, ts, addr):
    t = VCPU[vcpu]
    hev(t, ts - 300, "kvm/kvm_exit", "exit_reason=1024 isa=1 vcpu_id=%d" % vcpu)
    if addr == NET_PORT:
        hev(t, ts, "kvm/kvm_pio", "rw=1 port=%d size=2 count=1 val=0" % addr)
    else:
        hev(t, ts, "kvm/kvm_mmio", "type=2 len=2 gpa=%d val=0" % addr)
    hev(t, ts + 300, "kvm/kvm_entry", "vcpu_id=%d" % vcpu)

def lapic_eoi(vcpu, ts):
    hev(VCPU[vcpu], ts, "kvm/kvm_mmio", "type=2 len=4 gpa=%d val=0" % 0xfee000b0)

def op(tid, name, t0, t1, off=0, length=0, fd=FD):
    """one QEMU (or foreign) syscall; returns its truth record"""
    if URING and tid != NBD:
        return uring_op(tid, name, t0, t1, off, length)
    if NATIVE and tid != NBD and name != "fdatasync":
        # Linux AIO: io_submit returns at once; the iocb (offset) is in
        # QEMU's memory and the completion is read from the ring in user space
        hev(tid, t0, "syscalls/sys_enter_io_submit", "ctx_id=1 nr=1")
        if BIO:         # the bio it queues names the bytes; its completion
            bio(tid, t0 + 500, t1, name, off, length)
        hev(tid, t0 + 2000, "syscalls/sys_exit_io_submit", "ret=1")
        if BIO:
            return {"syscall": "io_submit", "tid": tid, "ts": t0 + 500, "offset": off,
                    "length": length}
        return {"syscall": "io_submit", "tid": tid, "ts": t0, "offset": None, "length": None}
    if EXT and name == "fdatasync":
        fd = FD + 5     # QEMU holds the image twice: it flushes the other fd
    if name in ("pread64", "pwrite64"):
        f = "fd=%d count=%d pos=%d" % (fd, length, off)
    elif name in ("preadv", "pwritev"):
        f = "fd=%d vlen=%d pos_l=%d pos_h=0" % (fd, max(1, length // 4096), off)
    else:
        f = "fd=%d" % fd
    hev(tid, t0, "syscalls/sys_enter_" + name, f)
    hev(tid, t1, "syscalls/sys_exit_" + name, "ret=%d" % length)
    return {"syscall": name, "tid": tid, "ts": t0, "offset": off if length else None,
            "length": length if length else None}

def bio(tid, ts, t_done, name, off, length):
    """the host block layer's bio of a submission on the host's loop0 and
    its completion (in a kworker) at @t_done"""
    rwbs = "R" if "read" in name else "WS"
    disk_bio(tid, ts, t_done, rwbs, disk_byte(off, length), length)

def disk_bio(tid, ts, t_done, rwbs, byte, length):
    hev(tid, ts, "block/block_bio_queue", "dev=%d sector=%d nr_sector=%d rwbs=%s" %
        (HDEV, byte // 512, length // 512, rwbs))
    hev(KWORKER, t_done, "block/block_rq_complete", "dev=%d sector=%d nr_sector=%d error=0 rwbs=%s"
        % (HDEV, byte // 512, length // 512, rwbs))

def uring_op(tid, name, t0, t1, off, length):
    """the same operation through QEMU's aio=io_uring: submitted by @tid,
    completed in interrupt context (pid 0)"""
    global uring_ud
    uring_ud += 64
    opcode = {"pread64": 1, "preadv": 1, "pwrite64": 2, "pwritev": 2, "fdatasync": 3}[name]
    hev(tid, t0, "io_uring/io_uring_submit_req", "user_data=%d opcode=%d" % (uring_ud, opcode))
    if BIO and length:  # the kernel issues the SQE at once: its bio
        bio(tid, t0 + 300, t1 - 200, name, off, length)
    host.append((HCPU[KWORKER], t1, 0, "io_uring/io_uring_complete",
                 "user_data=%d res=%d" % (uring_ud, length)))
    return {"syscall": "io_uring " + ("READV", "WRITEV", "FSYNC")[opcode - 1], "tid": tid,
            "ts": t0, "ts_end": t1, "offset": off if BIO and length else None,
            "length": length if BIO and length else None}

def msi(tid, ts, q, data=None):
    hev(tid, ts, "kvm/kvm_msi_set_irq", "address=%d data=%d" % (MSI_ADDR[q], data or MSI_DATA[q]))
    # the vCPU's delivery and, just before, the timer's vector
    hev(VCPU[q], ts + 150, "kvm/kvm_inj_virq", "vector=236")
    hev(VCPU[q], ts + 200, "kvm/kvm_inj_virq", "vector=%d" % ((data or MSI_DATA[q]) & 0xff))

def request(vcpu, rwbs, sector, nr, t_issue, t_irq, t_done, ops, kick_t, inj, how,
            done_vcpu=None):
    """guest side of one request; @ops: truth records of the QEMU syscalls
    that served it; @kick_t: time of its notify kick; @inj: (ts, tid)"""
    global nreq
    nreq += 1
    dv = vcpu if done_vcpu is None else done_vcpu
    g = GTID[vcpu]
    issue_sector = 0 if rwbs == "FF" else sector
    guest.append((vcpu, t_issue - 2000, g, "block/block_rq_insert",
                  "dev=%d sector=%d nr_sector=%d bytes=%d rwbs=%s" %
                  (DEV, issue_sector, nr, nr * 512, rwbs)))
    guest.append((vcpu, t_issue, g, "block/block_rq_issue",
                  "dev=%d sector=%d nr_sector=%d bytes=%d rwbs=%s" %
                  (DEV, issue_sector, nr, nr * 512, rwbs)))
    guest.append((dv, t_irq, 0, "irq/irq_handler_entry", "irq=25"))
    done_sector = (1 << 64) - 1 if rwbs == "FF" else sector
    guest.append((dv, t_done, 0, "block/block_rq_complete",
                  "dev=%d sector=%d nr_sector=%d error=0 rwbs=%s" % (DEV, done_sector, nr, rwbs)))
    truth.append({"sector": sector if rwbs != "FF" else -1, "nr_sector": nr, "rwbs": rwbs,
                  "host_io": sorted(ops, key=lambda o: o["ts"]), "method": how,
                  "kick": kick_t, "kick_addr": NOTIFY[vcpu],
                  "inject": inj[0], "inject_tid": inj[1],
                  "inject_data": MSI_DATA[dv]})

T = 1000 * MS
# A: two reads in flight on two vCPUs, served in the other order; a foreign
# process (qemu-nbd, not QEMU's) reads R1's offset first; another device's
# kick and a LAPIC EOI come before R1's notify
lapic_eoi(0, T + 1000)
kick(0, T + 3000, NET_PORT)
kick(0, T + 5000, NOTIFY[0])
kick(1, T + 6000, NOTIFY[1])
nbd = op(NBD, "pread64", T + 20000, T + 30000, 2048 * 512, 4096)
r2 = op(WORKER[1], "pread64", T + 40000, T + 90000, 4096 * 512, 4096)
r1 = op(WORKER[0], "pread64", T + 60000, T + 120000, 2048 * 512, 4096)
msi(WORKER[1], T + 95000, 1)
msi(QEMU, T + 122000, 0, NET_MSI)       # the network card's, in R1's window
msi(KWORKER, T + 125000, 0)             # irqfd: injected from a kworker
request(0, "R", 2048, 8, T, T + 130000, T + 135000, [r1], T + 5000, (T + 125000, KWORKER),
        "exact-offset")
request(1, "R", 4096, 8, T + 1000, T + 100000, T + 104000, [r2], T + 6000, (T + 95000, WORKER[1]),
        "exact-offset")

# B: a write split into two pwrite64 on two workers
T += 10 * MS
kick(0, T + 4000, NOTIFY[0])
a = op(WORKER[1], "pwrite64", T + 20000, T + 70000, 10000 * 512 + 4096, 4096)
b = op(WORKER[0], "pwrite64", T + 22000, T + 60000, 10000 * 512, 4096)
msi(WORKER[1], T + 75000, 0)
request(0, "WS", 10000, 16, T, T + 80000, T + 85000, [a, b], T + 4000, (T + 75000, WORKER[1]),
        "split")

# C: two adjacent reads merged into one preadv
T += 10 * MS
kick(1, T + 4000, NOTIFY[1])
m = op(WORKER[0], "preadv", T + 20000, T + 60000, 20000 * 512, 8192)
msi(WORKER[0], T + 65000, 1)
request(1, "R", 20000, 8, T, T + 70000, T + 75000, [m], T + 4000, (T + 65000, WORKER[0]), "covering")
request(1, "R", 20008, 8, T + 500, T + 70000, T + 76000, [m], T + 4000, (T + 65000, WORKER[0]),
        "covering")

# D: an unaligned 512-byte write: read-modify-write of its 4 KiB block
T += 10 * MS
kick(0, T + 4000, NOTIFY[0])
rd = op(WORKER[0], "pread64", T + 20000, T + 40000, 30000 * 512, 4096)
wr = op(WORKER[0], "pwrite64", T + 45000, T + 70000, 30000 * 512, 4096)
msi(WORKER[0], T + 75000, 0)
request(0, "WS", 30001, 1, T, T + 80000, T + 85000, [rd, wr], T + 4000, (T + 75000, WORKER[0]),
        "rmw")

# E: a flush (issued at sector 0, completed at 2^64-1) and, in flight with
# it, a write at sector 0 completing first
T += 10 * MS
kick(0, T + 4000, NOTIFY[0])
kick(1, T + 9000, NOTIFY[1])
w0 = op(WORKER[1], "pwritev", T + 20000, T + 40000, 0, 4096)
msi(WORKER[1], T + 45000, 1)
fl = op(WORKER[0], "fdatasync", T + 30000, T + 900000)
msi(WORKER[0], T + 905000, 0)
request(0, "FF", 0, 0, T, T + 910000, T + 915000, [fl], T + 4000, (T + 905000, WORKER[0]), "flush")
request(1, "WS", 0, 8, T + 5000, T + 50000, T + 55000, [w0], T + 9000, (T + 45000, WORKER[1]),
        "exact-offset")

# F: throttling: QEMU holds R9 and R10 5 ms, serves R11 (issued later)
# first, then R10, then R9
T += 10 * MS
kick(0, T + 3000, NET_PORT)
kick(0, T + 4000, NOTIFY[0])
kick(1, T + 5000, NOTIFY[1])
kick(0, T + MS + 4000, NOTIFY[0])
r11 = op(WORKER[0], "pread64", T + 5 * MS, T + 5 * MS + 50000, 42000 * 512, 4096)
r10 = op(WORKER[1], "pread64", T + 5 * MS + 10000, T + 5 * MS + 90000, 41000 * 512, 4096)
r9 = op(WORKER[0], "pread64", T + 5 * MS + 60000, T + 5 * MS + 120000, 40000 * 512, 4096)
msi(WORKER[0], T + 5 * MS + 55000, 0)
msi(WORKER[1], T + 5 * MS + 95000, 1)
msi(WORKER[0], T + 5 * MS + 125000, 0)
request(0, "R", 40000, 8, T, T + 5 * MS + 130000, T + 5 * MS + 135000, [r9], T + 4000,
        (T + 5 * MS + 125000, WORKER[0]), "exact-offset")
request(1, "R", 41000, 8, T + 1000, T + 5 * MS + 100000, T + 5 * MS + 104000, [r10], T + 5000,
        (T + 5 * MS + 95000, WORKER[1]), "exact-offset")
request(0, "R", 42000, 8, T + MS, T + 5 * MS + 60000, T + 5 * MS + 64000, [r11], T + MS + 4000,
        (T + 5 * MS + 55000, WORKER[0]), "exact-offset")

# G: an iothread ("IO io0") serves a write and injects
T += 10 * MS
kick(1, T + 4000, NOTIFY[1])
io = op(IOTH, "pwritev", T + 20000, T + 60000, 50000 * 512, 4096)
msi(IOTH, T + 65000, 1)
request(1, "W", 50000, 8, T, T + 70000, T + 75000, [io], T + 4000, (T + 65000, IOTH),
        "exact-offset")

if EXT:
    # H: a write-zeroes (the guest's mke2fs zeroing its journal: rwbs N),
    # which QEMU serves from its thread pool with fallocate on its other
    # fd of the image (extents.tsv's fd line names it); the file system's
    # bio inside the syscall is the syscall's own work
    T += 10 * MS
    kick(0, T + 4000, NOTIFY[0])
    hev(WORKER[0], T + 20000, "syscalls/sys_enter_fallocate",
        "fd=%d mode=3 offset=%d len=%d" % (FD + 5, 60000 * 512, 1024 * 512))
    disk_bio(WORKER[0], T + 21000, T + 30000, "WS", disk_byte(60000 * 512, 4096), 4096)
    hev(WORKER[0], T + 40000, "syscalls/sys_exit_fallocate", "ret=0")
    fa = {"syscall": "fallocate", "tid": WORKER[0], "ts": T + 20000, "offset": 60000 * 512,
          "length": 1024 * 512}
    msi(WORKER[0], T + 45000, 0)
    request(0, "NS", 60000, 1024, T, T + 50000, T + 55000, [fa], T + 4000, (T + 45000, WORKER[0]),
            "exact-offset")

    # stray QEMU bios after the last request: in the extent unwritten at
    # both readings, in the one that moved, outside every extent
    T += 10 * MS
    disk_bio(WORKER[0], T, T + 1000, "WS", PART_START + 400 * MIB + 8192, 4096)
    disk_bio(WORKER[0], T + 2000, T + 3000, "WS", PART_START + 500 * MIB, 4096)
    disk_bio(WORKER[0], T + 4000, T + 5000, "R", PART_START + 900 * MIB, 4096)
    with open(os.path.join(out, "extents.tsv"), "w") as f:
        f.write("# vmtrace-extents 1\n# when\tpid\tfd\tino\tst_dev\tdev\tstart\tlogical\t"
                "physical\tlength\tflags\n")
        for when in (0, 1):
            for x in EXTENTS + MOVED:
                if x[3 + when] is not None:
                    f.write("%s\t%d\t%d\t12345\t8:1\t8:0\t%d\t%d\t%d\t%d\t0x%x\n" %
                            (("start", "end")[when], QEMU, FD, PART_START, x[0], x[1], x[2],
                             x[3 + when]))
            if not when:    # QEMU's other fd of the image
                f.write("fd\t%d\t%d\t12345\t8:1\t8:0\t%d\t0\t0\t0\t0x0\n" %
                        (QEMU, FD + 5, PART_START))
            # the last extent (FIEMAP_EXTENT_LAST), and a small file (a log)
            f.write("%s\t%d\t3\t999\t8:1\t8:0\t%d\t0\t%d\t4096\t0x1\n" %
                    (("start", "end")[when], QEMU, PART_START, 600 * MIB))

write(os.path.join(out, "host.txt"),
      [(QEMU, "qemu-system-x86"), (VCPU[0], "CPU 0/KVM"), (VCPU[1], "CPU 1/KVM"),
       (WORKER[0], "worker"), (WORKER[1], "worker"), (IOTH, "IO io0"), (KWORKER, "kworker/1:2"),
       (NBD, "qemu-nbd")], host)
write(os.path.join(out, "guest.txt"), [(GTID[0], "fio"), (GTID[1], "fio")], guest)
tids = [QEMU, VCPU[0], VCPU[1], WORKER[0], WORKER[1], IOTH]
with open(os.path.join(out, "host.meta"), "w") as f:
    f.write("# vmtrace-meta 1\nclock=tsc\ntsc.hz=1000000000\ndomain=host\nkvm.vms=1\n"
            "kvm.vm0.pid=%d\nkvm.vm0.vcpus=2\nkvm.vcpu_threads=2\n" % QEMU)
    for i in range(2):
        f.write("kvm.thread%d.tid=%d\nkvm.thread%d.pid=%d\nkvm.thread%d.vcpu=%d\n" %
                (i, VCPU[i], i, QEMU, i, i))
    f.write("record.pids=%s\nrecord.tgids=%s\n" % (",".join(map(str, tids)),
                                                   ",".join([str(QEMU)] * len(tids))))
with open(os.path.join(out, "guest.meta"), "w") as f:
    f.write("# vmtrace-meta 1\nclock=tsc\ntsc.hz=1000000000\ndomain=guest\n")
json.dump({"requests": truth, "fd": FD}, open(os.path.join(out, "expected.json"), "w"), indent=1)
