# evlist.py - what the fixture generators of tests/report share: the
# event-list file tests/merge/gen-tracedat reads (comm lines, then events
# sorted per CPU by time).
def write(path, comms, evs):
    with open(path, "w") as f:
        for c in comms:
            f.write("comm %d %s\n" % c)
        for e in sorted(evs, key=lambda e: (e[0], e[1])):
            f.write("ev %d %d %d %s %s\n" % e)
