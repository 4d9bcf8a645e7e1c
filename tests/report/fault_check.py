#!/usr/bin/python3
# fault_check.py - the truth of an injected fault, from the RAW events,
# independently of vmtrace: reads `trace-cmd report` text of the host and
# guest kernel trace.dat files and, for the FIRST call of a `vmtrace report`
# headline (its begin and duration on the host timeline, its guest tid),
# computes the share of the call the injected cause took, then checks that
# the report names that cause first with a share within TOL (relative) of
# the truth.  Guest timestamps (guest TSC) are put on the host's with the
# vCPU's TSC offset from the host's raw kvm_write_tsc_offset event (guest
# TSC = host TSC + offset); ns = TSC ticks * 1e9 / TSC_HZ on both.
#
# usage: fault_check.py MODE REPORT.txt HOST.rep GUEST.rep TSC_HZ QEMU_TIDS [TOL]
#   QEMU_TIDS: QEMU's threads (comma-separated; "-": every thread but the
#   vCPUs'): only their disk syscalls are QEMU's
#        fault_check.py --events MODE host|guest   the events MODE reads,
#                       for `trace-cmd report -F` (the rest is not needed)
# MODE:
#   qemu-wait       QEMU throttling: per guest block request in flight
#                   during the call, the time from its kick (the vCPU's
#                   write to the notify address, learned as the address
#                   written first after most issues) to QEMU's first disk
#                   syscall for it (pread64/pwrite64/preadv/pwritev/
#                   fallocate on its byte range and direction, raw image:
#                   file offset = sector * 512; a flush: fdatasync/fsync);
#                   truth = the union of those intervals within the call
#                   while the call's thread was blocked (from its switch-out
#                   in a sleeping state to its wakeup: the guest's own sched
#                   events; running or runnable it waited for a CPU, not for
#                   QEMU) (report part qemu_before_host_io)
#   host-disk       a slow backing store: the union of QEMU's disk
#                   syscalls (entry .. exit) within the call (host_io)
#   guest-runnable  guest contention: the call's thread runnable-not-
#                   running in the guest (switched out R/R+, or woken while
#                   sleeping, until switched in: the guest's own sched
#                   events) and its vCPU thread not preempted on the host
#                   (the host's sched events) (guest_runnable)
# Exit 0: named first, within TOL (default 0.15); 1 otherwise.
import collections, re, sys

DISK = {"pread64": "R", "preadv": "R", "preadv2": "R", "pwrite64": "W", "pwritev": "W",
        "pwritev2": "W", "fallocate": "W", "fdatasync": "F", "fsync": "F"}
if sys.argv[1] == "--events":
    sysc = ["sys_%s_%s" % (d, k) for k in DISK for d in ("enter", "exit")]
    need = {"qemu-wait": (["kvm_write_tsc_offset", "kvm_mmio", "kvm_pio"] + sysc,
                          ["block_rq_issue", "block_rq_complete", "sched_switch", "sched_wakeup"]),
            "host-disk": (["kvm_write_tsc_offset"] + sysc, ["block_rq_issue"]),
            "guest-runnable": (["kvm_write_tsc_offset", "sched_switch", "sched_wakeup"],
                               ["sched_switch", "sched_wakeup"])}
    print(",".join(need[sys.argv[2]][sys.argv[3] == "guest"]))
    sys.exit(0)
mode, rep, hostrep, guestrep, hz, qtids = sys.argv[1:7]
hz = int(hz)
qtids = None if qtids == "-" else {int(t) for t in qtids.split(",")}
tol = float(sys.argv[7]) if len(sys.argv) > 7 else 0.15
# the part's id and its label in the first line (the disk's is named by
# QEMU's syscall: "host fdatasync", "host pwrite64", ...)
PART = {"qemu-wait": ("qemu_before_host_io", r"QEMU before host syscall$"),
        "host-disk": ("host_io", r"host (?!done to injection)\w+$"),
        "guest-runnable": ("guest_runnable", r"guest runnable$")}
if mode not in PART:
    sys.exit("unknown mode %s" % mode)
part_id, label = PART[mode]

def fail(m):
    print("FAIL: " + m)
    sys.exit(1)

def ns_of(s):
    a, b = s.split(".")
    return int(a) * 1000 + int(b)

# the report's first headline call
txt = open(rep).read().splitlines()
m1 = re.match(r"^  (.+) ([\d.]+) ms = (.*)$", txt[1])
m2 = re.match(r"^ +\S+ \d+ tid (\d+) at ([\d.]+) us: (.*?); vCPU preempted", txt[2])
if not m1 or not m2:
    fail("no call on the headline's first lines:\n%s\n%s" % (txt[1], txt[2]))
name, first = m1.group(1), m1.group(3)
gtid, A = int(m2.group(1)), ns_of(m2.group(2))
parts = {k: ns_of(v) for k, v in re.findall(r"(\w+)=([\d.]+)", m2.group(3))}
D = sum(parts.values())
B = A + D

# trace-cmd report lines: "COMM-TID [CPU] TS: EVENT: REST"
LINE = re.compile(r"^\s*(.*?)-(\d+)\s+\[(\d+)\]\s*(?:\S+\s+)?(\d+): (\w+):\s*(.*)$")

def events(path):
    for l in open(path, errors="replace"):
        m = LINE.match(l)
        if m:
            yield m.group(1), int(m.group(2)), int(m.group(4)), m.group(5), m.group(6)

def ns(tsc):
    return tsc * 10**9 // hz

def union(iv, a, b):
    iv = sorted((max(x, a), min(y, b)) for x, y in iv if min(y, b) > max(x, a))
    tot, cur = 0, None
    for x, y in iv:
        if cur and x <= cur[1]:
            cur[1] = max(cur[1], y)
        else:
            if cur:
                tot += cur[1] - cur[0]
            cur = [x, y]
    return tot + (cur[1] - cur[0] if cur else 0)

def intersect(iv, keep):
    """the parts of intervals @iv inside some interval of @keep"""
    return [(max(x, c), min(y, d)) for x, y in iv for c, d in keep if min(y, d) > max(x, c)]

def guest_states(gtid):
    """the guest thread's runnable and blocked intervals, from the guest's
    own sched events: switched out runnable (R/R+) or woken while sleeping,
    until switched in (runnable); switched out sleeping until woken
    (blocked)"""
    st, since, rq, blk = None, 0, [], []
    me = re.compile(r":%d \[" % gtid)
    for comm, tid, ts, ev, rest in events(guestrep):
        if ev == "sched_switch":
            m = re.match(r"\s*.*?:(\d+) \[-?\d+\] (\S+) ==> .*?:(\d+) \[", rest)
            if not m:
                continue
            t = gns(ts)
            if int(m.group(1)) == gtid:
                st, since = ("rq" if m.group(2).startswith("R") else "blk"), t
            if int(m.group(3)) == gtid:
                if st == "rq":
                    rq.append((since, t))
                elif st == "blk":
                    blk.append((since, t))
                st = "run"
        elif ev == "sched_wakeup" and me.search(rest) and st == "blk":
            t = gns(ts)
            blk.append((since, t))
            st, since = "rq", t
    if st == "blk":
        blk.append((since, B))
    return rq, blk

def subtract(iv, cut):
    """the parts of intervals @iv outside every interval of @cut"""
    cut = sorted(cut)
    out = []
    for x, y in iv:
        for c, d in cut:
            if d <= x or c >= y:
                continue
            if c > x:
                out.append((x, c))
            x = max(x, d)
            if x >= y:
                break
        if x < y:
            out.append((x, y))
    return out

# host: QEMU's disk syscalls, kicks, the TSC offset, vCPU threads' states
hex_arg = lambda rest, k: (int(re.search(r"\b%s: (0x[0-9a-f]+)" % k, rest).group(1), 16)
                           if re.search(r"\b%s: 0x" % k, rest) else None)
offset = None
sys_open = {}            # tid -> (enter ns, kind, pos, count)
disk = []                # (enter, exit, kind, pos, len)
writes = []              # (ns, address) of guest writes that can be notifies
vcpu_state, vcpu_since, preempted = {}, {}, []
sw = re.compile(r"(\d+) \[-?\d+\] (\S+) ==> .*?:(\d+) \[")
for comm, tid, ts, ev, rest in events(hostrep):
    t = ns(ts)
    if ev == "kvm_write_tsc_offset":
        # the last one: QEMU writes the offset at the vCPU's creation and
        # again at its reset (and the boot may write it once more): on a
        # loaded machine seconds apart, while the guest's events all come
        # after the last
        offset = int(re.search(r"next=(\d+)", rest).group(1))
        offset = offset - 2**64 if offset >= 2**63 else offset
    elif ev.startswith("sys_enter_") and ev[10:] in DISK and not comm.startswith("CPU ") and \
            (qtids is None or tid in qtids):
        k = ev[10:]
        pos = hex_arg(rest, "pos") if k not in ("fallocate", "preadv", "pwritev") else None
        if k in ("preadv", "pwritev", "preadv2", "pwritev2"):
            pos = hex_arg(rest, "pos_l")
        if k == "fallocate":
            pos = hex_arg(rest, "offset")
        cnt = hex_arg(rest, "len") if k == "fallocate" else hex_arg(rest, "count")
        sys_open[tid] = (t, k, pos, cnt)
    elif ev.startswith("sys_exit_") and ev[9:] in DISK and tid in sys_open:
        t0, k, pos, cnt = sys_open.pop(tid)
        ret = int(rest.split()[0], 16)
        n = ret if k not in ("fallocate", "fdatasync", "fsync") and ret < 2**63 else cnt
        disk.append((t0, t, DISK[k], pos, n))
    elif ev == "kvm_mmio" and rest.startswith("mmio write"):
        writes.append((t, re.search(r"gpa (0x[0-9a-f]+)", rest).group(1)))
    elif ev == "kvm_pio" and rest.startswith("pio_write"):
        port = re.search(r"at (0x[0-9a-f]+)", rest).group(1)
        if int(port, 16) not in (0x5f0, 0xe9):
            writes.append((t, port))
    elif ev == "sched_switch":
        m = sw.search(rest)
        if not m:
            continue
        prev, st, nxt = int(m.group(1)), m.group(2), int(m.group(3))
        pc = re.match(r"\s*(.*?):%d " % prev, rest)
        nc = re.search(r"==> (.*?):%d " % nxt, rest)
        if pc and pc.group(1).startswith("CPU "):
            if vcpu_state.get(prev) == "rq":
                preempted.append((vcpu_since[prev], t))
            vcpu_state[prev], vcpu_since[prev] = ("rq" if st.startswith("R") else "blk"), t
        if nc and nc.group(1).startswith("CPU "):
            if vcpu_state.get(nxt) == "rq":
                preempted.append((vcpu_since[nxt], t))
            vcpu_state[nxt] = "run"
    if ev == "sched_wakeup":
        m = re.match(r"\s*(.*?):(\d+) \[", rest)
        if m and m.group(1).startswith("CPU ") and vcpu_state.get(int(m.group(2))) == "blk":
            vcpu_state[int(m.group(2))], vcpu_since[int(m.group(2))] = "rq", t
if offset is None:
    fail("no kvm_write_tsc_offset in the host recording: guest times cannot be placed")

def gns(tsc):
    return ns(tsc - offset)

if mode == "host-disk":
    iv = [(a, b) for a, b, _, _, _ in disk]
    truth = union(iv, A, B)
    how = "%d QEMU disk syscalls, %d within the call" % (len(disk), sum(1 for a, b in iv if b > A and a < B))
elif mode == "qemu-wait":
    rq = collections.defaultdict(list)      # (dev, sector) -> issues pending
    reqs = []                               # [issue, complete, dir, sector, nr]
    for comm, tid, ts, ev, rest in events(guestrep):
        if ev not in ("block_rq_issue", "block_rq_complete"):
            continue
        m = re.match(r"(\d+,\d+) (\S+) (?:\d+ )?\(.*?\) (\d+) \+ (\d+)", rest)
        if not m:
            continue
        dev, rwbs, sector, nr = m.group(1), m.group(2), int(m.group(3)), int(m.group(4))
        flush = nr == 0 and "F" in rwbs
        key = (dev, "flush" if flush else sector)
        if ev == "block_rq_issue":
            d = "F" if flush else "R" if "R" in rwbs else "W"
            r = [gns(ts), None, d, sector, nr]
            reqs.append(r)
            rq[key].append(r)
        elif rq[key]:
            rq[key].pop(0)[1] = gns(ts)
    mine = [r for r in reqs if r[0] < B and (r[1] is None or r[1] > A)]
    # the notify address: the one written first after most issues
    ws = sorted(writes)
    firsts = collections.Counter()
    wi = 0
    for r in sorted(reqs):
        while wi < len(ws) and ws[wi][0] < r[0]:
            wi += 1
        if wi < len(ws):
            firsts[ws[wi][1]] += 1
    notify = firsts.most_common(1)[0][0] if firsts else None
    kicks = [t for t, a in ws if a == notify]
    iv, unmatched = [], 0
    for issue, done, d, sector, nr in mine:
        k = next((t for t in kicks if t >= issue), None)
        if k is None or (done is not None and k > done):
            unmatched += 1
            continue
        lo, hi = sector * 512, (sector + nr) * 512
        h = None
        for a, b, kd, pos, n in sorted(disk):
            if a < k or (done is not None and a > done):
                continue
            if d == "F" and kd == "F" or d != "F" and kd == d and pos is not None and \
                    pos < hi and pos + (n or 0) > lo:
                h = a
                break
        if h is None:
            unmatched += 1
            continue
        iv.append((k, h))
    _, blk = guest_states(gtid)
    raw = union(iv, A, B)
    truth = union(intersect(iv, blk), A, B)
    how = ("%d guest requests in flight during the call, %d kick-to-syscall intervals "
           "(notify address %s), %d without a kick or syscall; %.1f ms of the call in them, "
           "%.1f ms of it with the thread blocked" % (len(mine), len(iv), notify, unmatched,
                                                    raw / 1e6, truth / 1e6))
elif mode == "guest-runnable":
    iv, _ = guest_states(gtid)
    raw = union(iv, A, B)
    truth = union(subtract(iv, preempted), A, B)
    how = ("guest tid %d runnable %.1f ms of the call (guest sched events), %.1f ms of it with "
           "its vCPU not preempted on the host" % (gtid, raw / 1e6, truth / 1e6))

share, tshare = parts.get(part_id, 0) / D, truth / D
print("first call: %s %.1f ms = %s" % (name, D / 1e6, first))
print("truth from the raw events: %s" % how)
print("%s: %.1f%% of the call (report's critical path) vs %.1f%% (raw events, %.3f ms)"
      % (part_id, 100 * share, 100 * tshare, truth / 1e6))
lead = re.match(r"\d+% (.*?)(?:, \d+% |$)", first)
if not lead or not re.match(label, lead.group(1)):
    fail("the first line names %r first, not %s" % (lead.group(1) if lead else first, part_id))
if not tshare or abs(share - tshare) > tol * tshare:
    fail("%s share %.1f%% is not within %d%% of the truth %.1f%%"
         % (part_id, 100 * share, round(100 * tol), 100 * tshare))
print("ok: %s named first, its share within %d%% of the truth" % (lead.group(1), round(100 * tol)))
