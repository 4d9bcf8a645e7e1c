# evlist.py - shared by the tests/report fixture generators (mkfixture.py,
# mkpairing.py): writes an event list for tests/merge/gen-tracedat.
def write(path, comms, evs):
    """comms: (tid, name); evs: (cpu, ts, tid, "sys/event", "field=value ...")"""
    with open(path, "w") as f:
        for c in comms:
            f.write("comm %d %s\n" % c)
        for e in sorted(evs, key=lambda e: (e[0], e[1])):
            f.write("ev %d %d %d %s %s\n" % e)
