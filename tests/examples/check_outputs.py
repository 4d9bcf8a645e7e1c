"""Checks an example's outputs (tests/examples): the alignment and the merged
timeline, read with python3's json (a consumer vmtrace did not write).

usage: check_outputs.py [--qemu-syscalls] OUT GUEST_FUNCTION HOST_EVENT_PREFIX

- OUT/align.json: method "markers", error bound below the limit of the
  accelerator in OUT/run.txt (20 us KVM, 250 us KVM in the KVM lab, an
  emulated host, accel_host=lab; 100 us TCG), at least 3 marker
  pairs, and every pair's host instant, mapped through the model, inside
  its guest TSC bracket widened by the bound;
- OUT/merged.json: guest slices named GUEST_FUNCTION*, host events named
  HOST_EVENT_PREFIX*, and the guest slices inside the host recording's span;
- with --qemu-syscalls, OUT/host/trace.dat, read by trace-cmd: its saved
  command lines name
  QEMU's main thread qemu-system-x86, and `trace-cmd report` shows
  syscalls of that pid.  Found by pid, not by the name report prints:
  libtraceevent's sched plugins register the comm of a sched_wakeup or
  sched_switch they print, and when the file's first events are the idle
  task's (whose name needs no lookup) that registration comes before the
  file's own command lines are indexed, leaving two names for one pid; the
  one report then prints is either ("vmtrace", the recorder's child before
  its exec: 2 runs of t-python-virtio-fallback) - trace-cmd's own
  recordings of a command have the same pre-exec events.
"""
import json
import subprocess
import sys

KVM_LIMIT_NS = 20000
LAB_LIMIT_NS = 250000
TCG_LIMIT_NS = 100000
GUEST_PID_BASE = 10000000
MIN_PAIRS = 3


def check_host_tracedat(path):
    """QEMU's main thread by its saved command line, and its syscalls in
    trace-cmd report; returns (pid, number of sys_enter events)"""
    lines = subprocess.run(["trace-cmd", "dump", "--cmd-lines", path], capture_output=True,
                           text=True, check=True).stdout.splitlines()
    pids = [l.split(None, 1)[0] for l in lines if l.split(None, 1)[1:] == ["qemu-system-x86"]]
    assert pids, "%s: no qemu-system-x86 in its saved command lines" % path
    rep = subprocess.run(["trace-cmd", "report", path], capture_output=True, text=True,
                         check=True).stdout.splitlines()
    tag = "-%s " % pids[0]
    n = sum(1 for l in rep if tag in l.split("[", 1)[0] and " sys_enter_" in l)
    assert n, "%s: trace-cmd report shows no syscall of QEMU (pid %s)" % (path, pids[0])
    return pids[0], n


def main():
    args = sys.argv[1:]
    qemu_syscalls = args[:1] == ["--qemu-syscalls"]
    out, guest_fn, host_prefix = args[qemu_syscalls:qemu_syscalls + 3]
    run = dict(l.strip().split("=", 1) for l in open(out + "/run.txt") if "=" in l)
    accel = run["accel"]
    limit = KVM_LIMIT_NS if accel == "kvm" else TCG_LIMIT_NS
    if accel == "kvm" and run.get("accel_host") == "lab":
        limit = LAB_LIMIT_NS
    a = json.load(open(out + "/align.json"))
    bound = a["bound_ns"]
    assert a["method"] == "markers", a["method"]
    assert 0 <= bound < limit, "bound %.1f ns not below %d ns (%s)" % (bound, limit, accel)
    pairs = [p for p in a["pairs"] if not p["outlier"]]
    assert len(pairs) >= MIN_PAIRS, "only %d marker pairs" % len(pairs)
    assert a["markers"]["pairs"] == a["markers"]["guest"], a["markers"]
    bound_ticks = bound * a["host_hz"] / 1e9
    for p in pairs:
        seg = [s for s in a["segments"] if s["tsc_host_start"] <= p["tsc_host"] and
               (s["tsc_host_end"] is None or p["tsc_host"] < s["tsc_host_end"])][0]
        g = seg["ref_tsc_guest"] + seg["slope"] * (p["tsc_host"] - seg["ref_tsc_host"])
        lo = p["tsc_guest_before"] - bound_ticks
        hi = p["tsc_guest_after"] + bound_ticks
        assert lo <= g <= hi, "marker %d: host twin maps to guest TSC %d, outside [%d, %d]" % (
            p["seq"], g, lo, hi)

    d = json.load(open(out + "/merged.json"))
    ev = d["traceEvents"] if isinstance(d, dict) else d
    guest = [e for e in ev if e.get("ph") in ("B", "X") and e.get("pid", 0) >= GUEST_PID_BASE
             and e.get("name", "").startswith(guest_fn)]
    assert guest, "no guest slice %s* in merged.json" % guest_fn
    # the host's syscalls: instants as recorded, or (merge's "syscalls"
    # track, lane 2 of the thread) slices named after the syscall
    host = [e for e in ev if e.get("ph") in ("i", "B", "X") and
            0 < e.get("pid", 0) < GUEST_PID_BASE and (e.get("name", "").startswith(host_prefix) or
            (host_prefix.startswith("sys_enter") and e.get("tid", 0) // 10**9 == 2))]
    assert host, "no host event %s* in merged.json" % host_prefix
    t0, t1 = min(e["ts"] for e in host), max(e["ts"] for e in host)
    assert all(t0 <= e["ts"] <= t1 for e in guest), "guest slices outside the host events' span"
    print("ok: %s, bound %.2f us, %d markers, %d %s slices, %d host %s* events"
          % (accel, bound / 1e3, len(pairs), len(guest), guest_fn, len(host), host_prefix))
    if qemu_syscalls:
        print("ok: %d QEMU syscalls (pid %s) in trace-cmd report"
              % check_host_tracedat(out + "/host/trace.dat")[::-1])


if __name__ == "__main__":
    main()
