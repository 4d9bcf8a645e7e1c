#!/usr/bin/python3
# preempt_check.py - the vCPU-preempted time of calls, computed from the RAW
# host scheduling events, independently of vmtrace: reads `trace-cmd report`
# text of the host trace.dat, takes the vCPU threads' runnable-not-running
# intervals (switched out in state R/R+, or woken while blocked, until
# switched in again; a switch-out with no switch-in since, or any other
# event of the vCPU thread itself, ends one: a switch-in missing in the file), converts their x86-tsc stamps to ns with the host
# TSC frequency, and for each headline call of a `vmtrace report` text (its
# begin and duration on the host timeline) compares the overlap with the
# report's "vCPU preempted during the call" figure.  When HOST.rep also
# holds QEMU's disk syscalls (pread64/pwrite64/preadv/pwritev(2)/fdatasync/
# fsync/fallocate enter and exit), each line also gives the part of the raw
# figure outside them: the preemption no host disk work hid (while QEMU's
# disk syscall runs, a call waiting on that I/O waits for the disk, however
# the vCPU fares - the critical path gives that time to the I/O).
#
# usage: preempt_check.py REPORT.txt HOST.rep TSC_HZ VCPU_TID[,TID...] NAME [TOL_NS]
#   NAME: the calls checked (e.g. fsync); exit 1 on a disagreement > TOL_NS
#   (default 0), 2 when no such call is in the report
import bisect, re, sys

rep, hostrep, hz = sys.argv[1], sys.argv[2], int(sys.argv[3])
vtids = {int(t) for t in sys.argv[4].split(",")}
name, tol = sys.argv[5], int(sys.argv[6]) if len(sys.argv) > 6 else 0
sw = re.compile(r"[\]\s](\d+): sched_switch:\s+.*?:(\d+) \[-?\d+\] (\S+) ==> .*?:(\d+) \[")
wk = re.compile(r"[\]\s](\d+): sched_wakeup:\s+.*?:(\d+) \[")
own = re.compile(r"-(\d+)\s+\[\d+\]\s*(\d+): (\w+):")
DISK = "pread64|pwrite64|preadv|pwritev|preadv2|pwritev2|fdatasync|fsync|fallocate"
sc = re.compile(r"-(\d+)\s+\[\d+\]\s*(\d+): sys_(enter|exit)_(%s):" % DISK)
open_sc, disk = {}, []                  # per tid: its disk syscall's start
state, since, pre = {}, {}, []          # per vCPU tid: 'run', 'rq', 'blk'
lost = 0
for l in open(hostrep, errors="replace"):
    m = sc.search(l)
    if m:
        t, ts = int(m.group(1)), int(m.group(2)) * 10**9 // hz
        if m.group(3) == "enter":
            open_sc[t] = ts
        elif t in open_sc:
            disk.append((open_sc.pop(t), ts))
        continue
    m = sw.search(l)
    if m:
        ts = int(m.group(1)) * 10**9 // hz
        prev, st, nxt = int(m.group(2)), m.group(3), int(m.group(4))
        if prev in vtids:
            if state.get(prev) == "rq":
                # switched out again with no switch-in in the file (an
                # event lost): runnable up to here, as vmtrace counts it
                pre.append((since[prev], ts))
                lost += 1
            state[prev] = "rq" if st.startswith("R") else "blk"
            since[prev] = ts
        if nxt in vtids:
            if state.get(nxt) == "rq":
                pre.append((since[nxt], ts))
            state[nxt] = "run"
        continue
    m = own.search(l)
    if m and int(m.group(1)) in vtids and state.get(int(m.group(1))) in ("rq", "blk"):
        # an event of the vCPU thread itself: it runs (its switch-in is
        # missing in the file), as vmtrace takes it
        t, ts = int(m.group(1)), int(m.group(2)) * 10**9 // hz
        if state[t] == "rq":
            pre.append((since[t], ts))
            lost += 1
        state[t] = "run"
    m = wk.search(l)
    if m and int(m.group(2)) in vtids:
        t = int(m.group(2))
        if state.get(t) == "blk":
            state[t], since[t] = "rq", int(m.group(1)) * 10**9 // hz

def ns(s):
    a, b = s.split("."); return int(a) * 1000 + int(b)
txt = open(rep).read()
calls = re.findall(r"^  %s ([\d.]+) ms = .*\n +\S+ \d+ tid \d+ at ([\d.]+) us: (.*); "
                   r"vCPU preempted during the call ([\d.]+) us(?:; woken by .*)?$" % re.escape(name), txt, re.M)
if not calls:
    print("no %s in the report's headline" % name); sys.exit(2)
# the disk syscalls' union: sorted, disjoint
union = []
for x, y in sorted(disk):
    if union and x <= union[-1][1]:
        union[-1][1] = max(union[-1][1], y)
    else:
        union.append([x, y])
ends = [v for _, v in union]
def hidden(x, y):                       # the part of [x, y) in a disk syscall
    h, i = 0, bisect.bisect_right(ends, x)
    while i < len(union) and union[i][0] < y:
        h += max(0, min(y, union[i][1]) - max(x, union[i][0]))
        i += 1
    return h
bad = 0
for _, begin, parts, got in calls:
    a = ns(begin)
    b = a + sum(ns(v) for v in re.findall(r"=([\d.]+)", parts))
    ind = sum(max(0, min(y, b) - max(x, a)) for x, y in pre)
    out = ind - sum(hidden(max(x, a), min(y, b)) for x, y in pre if x < b and y > a)
    ok = abs(ind - ns(got)) <= tol
    bad += not ok
    print("%s %s at %d ns, %.3f ms: vCPU preempted %d ns (report), %d ns (raw sched events)%s%s"
          % ("ok  " if ok else "FAIL", name, a, (b - a) / 1e6, ns(got), ind,
             ", %d ns of it outside QEMU's disk syscalls" % out if disk else "",
             "" if ok else " <-"))
print("%d %s calls, %d preempted intervals of vCPU threads %s (%d ended by the thread's own event: "
      "switch-in missing in the file), %d disk syscalls of QEMU" % (len(calls), name, len(pre),
                                                               sorted(vtids), lost, len(disk)))
sys.exit(1 if bad else 0)
