# evlist.py - shared by the tests/report fixture generators (mkfixture.py,
# mkpairing.py, mkcrit.py, mkthrottle.py, mkkick.py): the host and guest
# event lists on one TSC, and their files for tests/merge/gen-tracedat.
def write(path, comms, evs):
    """comms: (tid, name); evs: (cpu, ts, tid, "sys/event", "field=value ...")"""
    with open(path, "w") as f:
        for c in comms:
            f.write("comm %d %s\n" % c)
        for e in sorted(evs, key=lambda e: (e[0], e[1])):
            f.write("ev %d %d %d %s %s\n" % e)


class Lists:
    """The host and guest kernel events of a fixture, stamped on one TSC of
    hz_ns ticks per ns (the guest's on guest CPU 0)."""

    def __init__(self, hz_ns):
        self.hz_ns, self.host, self.guest = hz_ns, [], []

    def h(self, cpu, ns, tid, ev, f=""):
        self.host.append((cpu, ns * self.hz_ns, tid, ev, f))

    def g(self, ns, tid, ev, f=""):
        self.guest.append((0, ns * self.hz_ns, tid, ev, f))

    def start(self, t0, hcpu, vcpu_tid, gtid):
        """At t0 the vCPU thread is switched in on host CPU hcpu and enters
        the guest; 20 ns later the guest thread gtid is switched in."""
        self.h(hcpu, t0, 0, "sched/sched_switch",
               "prev_pid=0 prev_prio=120 prev_state=0 next_pid=%d next_prio=120" % vcpu_tid)
        self.h(hcpu, t0 + 10, vcpu_tid, "kvm/kvm_entry", "vcpu_id=0")
        self.g(t0 + 20, 0, "sched/sched_switch",
               "prev_pid=0 prev_prio=120 prev_state=0 next_pid=%d next_prio=120" % gtid)


def parts_of(seg, dur):
    """{part: ns} of segments (begin, end, part) that tile [0, dur) exactly
    (asserted: no gap, no overlap)"""
    seg.sort()
    assert seg[0][0] == 0 and seg[-1][1] == dur
    assert all(seg[i][1] == seg[i + 1][0] for i in range(len(seg) - 1)), seg
    parts = {}
    for a, b, p in seg:
        parts[p] = parts.get(p, 0) + b - a
    return parts


def write_fixture(out, host_comms, lists, expected, guest_comms):
    """out/host.txt, out/guest.txt (the event lists of @lists) and
    out/expected.json"""
    import json, os
    write(os.path.join(out, "host.txt"), host_comms, lists.host)
    write(os.path.join(out, "guest.txt"), guest_comms, lists.guest)
    json.dump(expected, open(os.path.join(out, "expected.json"), "w"), indent=1)
