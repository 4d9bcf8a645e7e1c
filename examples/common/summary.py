"""Summary printed at the end of an example run.

Reads OUT/ (the example's output directory): where the merged outputs are,
the alignment method and error bound (OUT/align.json), and from
OUT/merged.json (Chrome trace JSON) the slowest guest Python functions with
the time their thread spent in I/O syscalls inside them (the guest kernel's
sys_enter/sys_exit pairs of the same guest thread within each call).
Only the standard library: run with /usr/bin/python3.
"""
import json
import os
import sys

TOP_N = 10
GUEST_PID_BASE = 10000000     # merge's pid of guest N's process P: N*base + P
LANE = 1000000000             # merge's tid of lane L of a thread: L*LANE + tid
DERIVED_LANES = (2, 3)        # a thread's "syscalls" and "thread state" tracks
# guest syscalls that count as I/O time inside a Python call
IO_SYSCALLS = ("read", "write", "pread64", "pwrite64", "readv", "writev",
               "preadv", "pwritev", "fsync", "fdatasync", "sync", "syncfs",
               "sync_file_range", "openat", "close", "ftruncate", "fallocate")
# frames of the interpreter's start-up and of the tracer itself
SKIP_PREFIXES = ("builtins.exec", "import ", "runpy.", "importlib.", "<frozen", "vmtrace.", "__main__.<module>")


def load_events(path):
    with open(path) as f:
        data = json.load(f)
    if isinstance(data, dict):
        return data.get("traceEvents", [])
    return data


def python_calls(events):
    """(name, ts, dur, guest_pid, tid) of every guest function slice (B/E pairs)."""
    calls, stacks = [], {}
    for e in events:
        ph = e.get("ph")
        if ph not in ("B", "E") or e.get("pid", 0) < GUEST_PID_BASE or \
                e.get("tid", 0) // LANE in DERIVED_LANES:
            continue
        key = (e["pid"], e["tid"])
        if ph == "B":
            stacks.setdefault(key, []).append(e)
        elif stacks.get(key):
            b = stacks[key].pop()
            calls.append((b.get("name", "?"), b["ts"], e["ts"] - b["ts"],
                          e["pid"] % GUEST_PID_BASE, e["tid"] % GUEST_PID_BASE))
    return calls


def io_syscalls(events):
    """{(guest pid, tid): [(start, end)]} of I/O syscalls in guest kernel traces:
    the slices of each thread's "syscalls" track (merge makes them of
    sys_enter/sys_exit), or the sys_enter_/sys_exit_ instants themselves."""
    open_, out, slices = {}, {}, {}
    for e in events:
        if e.get("pid", 0) < GUEST_PID_BASE:
            continue
        name = e.get("name", "")
        key = (e["pid"] % GUEST_PID_BASE, e["tid"] % GUEST_PID_BASE)
        if e.get("tid", 0) // LANE == 2 and e.get("ph") in ("B", "E"):
            if e["ph"] == "B" and name in IO_SYSCALLS:
                slices[key] = e["ts"]
            elif e["ph"] == "E" and key in slices:
                out.setdefault(key, []).append((slices.pop(key), e["ts"]))
            continue
        if e.get("ph") != "i":
            continue
        if name.startswith("sys_enter_") and name[10:] in IO_SYSCALLS:
            open_[key] = e["ts"]
        elif name.startswith("sys_exit_") and name[9:] in IO_SYSCALLS and key in open_:
            out.setdefault(key, []).append((open_.pop(key), e["ts"]))
    for v in out.values():
        v.sort()
    return out


def io_inside(call, io):
    _, ts, dur, pid, tid = call
    end = ts + dur
    return sum(min(b, end) - max(a, ts) for a, b in io.get((pid, tid), ())
               if b > ts and a < end)


def print_alignment(out):
    aj = os.path.join(out, "align.json")
    if not os.path.exists(aj):
        return
    with open(aj) as f:
        a = json.load(f)
    m = a.get("markers", {})
    b = a.get("bound_ns")
    bound = "error bound +-%.2f us" % (b / 1e3) if b is not None else "error bound UNPROVEN"
    print("  %-15s %s: %s (%d of %d guest markers matched)"
          % ("alignment", a.get("method"), bound, m.get("pairs", 0), m.get("guest", 0)))
    # every source with its distance from the chosen one (ns)
    for s in a.get("sources", []):
        d = s.get("diff_ns")
        print("  %-15s vCPU %d %-10s offset %d ticks%s"
              % ("  source", s.get("vcpu", 0), s.get("source"), s.get("offset_tsc", 0),
                 "" if d is None else ", %+.3f us from the chosen, %s"
                 % (d / 1e3, "agrees" if s.get("agrees") else "DISAGREES")))
    print("  %-15s %s" % ("align report", os.path.join(out, "align.txt")))


def main():
    out = sys.argv[1]
    print("\n== vmtrace example: results in %s" % out)
    for name in ("merged.pftrace", "merged.json"):
        p = os.path.join(out, name)
        if os.path.exists(p):
            print("  %-15s %s (%d KiB)%s" % (name, p, os.path.getsize(p) // 1024,
                  "  -> open in ui.perfetto.dev" if name.endswith("pftrace") else ""))
    run = os.path.join(out, "run.txt")
    if os.path.exists(run):
        with open(run) as f:
            for line in f:
                k, _, v = line.strip().partition("=")
                print("  %-15s %s" % (k, v))
    print_alignment(out)
    host, guest = os.path.join(out, "host"), os.path.join(out, "guest")
    if os.path.isdir(host) and os.path.isdir(guest):
        print("  %-15s vmtrace report %s %s   (where the slow calls' time went; "
              "--html OUT.html for a page)" % ("next", host, guest))
    mj = os.path.join(out, "merged.json")
    if not os.path.exists(mj):
        print("  (no merged.json: nothing to summarise)")
        return
    events = load_events(mj)
    io = io_syscalls(events)
    per_fn = {}
    for c in python_calls(events):
        if c[0].startswith(SKIP_PREFIXES) or ".<module> (" in c[0]:
            continue
        agg = per_fn.setdefault(c[0], [0, 0.0, 0.0, 0.0])
        agg[0] += 1
        agg[1] += c[2]
        agg[2] = max(agg[2], c[2])
        agg[3] += io_inside(c, io)
    top = sorted(per_fn.items(), key=lambda kv: -kv[1][1])[:TOP_N]
    if io:
        print("  slowest guest functions (I/O = the thread's read/write/fsync/... "
              "syscalls inside the call):")
        print("    %6s %11s %11s %11s %6s  %s" % ("calls", "total ms", "max ms", "I/O ms",
                                                     "I/O%", "function"))
    else:
        print("  slowest guest functions (no guest kernel trace: no I/O time):")
        print("    %6s %11s %11s  %s" % ("calls", "total ms", "max ms", "function"))
    for name, (n, tot, mx, iot) in top:
        if io:
            print("    %6d %11.3f %11.3f %11.3f %5.0f%%  %s"
                  % (n, tot / 1e3, mx / 1e3, iot / 1e3, 100.0 * iot / tot if tot else 0, name))
        else:
            print("    %6d %11.3f %11.3f  %s" % (n, tot / 1e3, mx / 1e3, name))


if __name__ == "__main__":
    main()
