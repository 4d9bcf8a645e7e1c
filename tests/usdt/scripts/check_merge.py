# Checks `vmtrace merge`'s Chrome JSON of a `record --python` run of
# workload.py: python3's json reads it, B/E are rebuilt into slices per
# thread.  usage: check_merge.py FILE.json MODE   (MODE: returns | slices | gc-imports)
import collections
import json
import sys

events = json.load(open(sys.argv[1]))
events = events["traceEvents"] if isinstance(events, dict) else events
mode = sys.argv[2]
stacks = collections.defaultdict(list)
slices = []          # (name, tid, begin, end, depth)
instants = []
for e in sorted((e for e in events if e.get("ph") in "BEi"), key=lambda e: e["ts"]):
    key = (e["pid"], e["tid"])
    if e["ph"] == "B":
        stacks[key].append(e)
    elif e["ph"] == "E":
        if stacks[key]:
            b = stacks[key].pop()
            slices.append((b["name"], e["tid"], b["ts"], e["ts"], len(stacks[key])))
    else:
        instants.append(e)


def named(items, prefix):
    return [s for s in items if s[0].startswith(prefix)]


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


if mode == "returns":       # 3.11 without a hook: returns are instants
    w = [e for e in instants if e["name"].startswith("workload.worker (")]
    k = [e for e in instants if e["name"].startswith("workload.keyfn (")]
    if len(w) != 3 or len({e["tid"] for e in w}) != 3 or len(k) != 3:
        fail("worker/keyfn return instants: %d on %d threads, %d" %
             (len(w), len({e["tid"] for e in w}), len(k)))
    if named(slices, "workload."):
        fail("function slices without entries")
elif mode == "slices":      # under a profile hook: real nested slices
    for f, n in (("worker", 3), ("keyfn", 3), ("outer", 1), ("inner", 1)):
        got = named(slices, "workload.%s (" % f)
        if len(got) != n:
            fail("%s: %d slices, want %d" % (f, len(got), n))
    o = named(slices, "workload.outer (")[0]
    i = named(slices, "workload.inner (")[0]
    if not (o[2] <= i[2] <= i[3] <= o[3] and i[4] == o[4] + 1 and i[1] == o[1]):
        fail("inner is not nested in outer: %r %r" % (o, i))
    if not named(slices, "workload.main (")[0][2] <= o[2]:
        fail("outer starts before main")
if mode in ("returns", "slices", "gc-imports"):
    for g in (0, 1, 2):
        if not named(slices, "gc (generation %d)" % g):
            fail("no gc slice of generation %d" % g)
    for m in ("json", "fractions", "decimal"):
        if not named(slices, "import %s" % m):
            fail("no import slice of %s" % m)
    d = named(slices, "import decimal")[0]
    f = named(slices, "import fractions")[0]
    if not (f[2] <= d[2] and d[3] <= f[3]):
        fail("import decimal is not inside import fractions")
print("merge ok:", len(slices), "slices,", len(instants), "instants")
