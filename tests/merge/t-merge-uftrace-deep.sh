#!/bin/bash
# uftrace output of calls nested deeper than uftrace's 1023 levels
# (merge/sink_uftrace.c): gen-trace's one call chain 1100 deep, with a
# LOST record (an instant) at depth 11 and one at depth 1051.  The calls
# at depths 0..1022 are written, each exit at its entry's depth; the 77
# deeper ones and the deep instant are left out, and merge warns with
# their count; the shallow instant is kept.  The same input to JSON keeps
# all 1100 (the limit is uftrace's alone).
set -eu
. "$VT_SRC/tests/merge/common.sh"
command -v uftrace >/dev/null || { echo "uftrace not installed"; exit 77; }
cd "$VT_TMP"
fail() { echo "FAIL: $*"; exit 1; }
"$GEN" deep -n 2200 -D 1100 -c ns -s 1000000 -d 100
# record i (0..2199) at 1000000 + 100 i: entries 0..1099, then exits;
# a LOST (type 2, count in the address bits) after entries 11 and 1051
"$PY" - deep/1000.dat <<'PYEOF'
import struct, sys
p = sys.argv[1]
d = open(p, "rb").read()
assert len(d) == 2200 * 16, len(d)
lost = lambda t, n: struct.pack("<QQ", t, 2 | (5 << 3) | (n << 16))
recs = [d[i * 16:(i + 1) * 16] for i in range(2200)]
recs.insert(1051, lost(1000000 + 100 * 1050 + 50, 9))
recs.insert(11, lost(1000000 + 100 * 10 + 50, 3))
open(p, "wb").write(b"".join(recs))
PYEOF
rc=0
"$VT_BIN" merge deep -o out 2>err.txt || rc=$?
[ $rc = 0 ] || { cat err.txt; fail "merge to uftrace: exit $rc"; }
grep -qF "out: 77 slices nested deeper than uftrace's 1023 levels left out" err.txt ||
	{ cat err.txt; fail "no warning of the 77 calls left out"; }
uftrace dump -d out --no-pager >raw.txt
"$PY" - raw.txt <<'PYEOF'
import re, sys
st, entries, deepest, lost = [], 0, -1, []
for l in open(sys.argv[1]):
    m = re.search(r"\[(entry|exit )\] (.*)\(\S*\) depth: (\d+)", l)
    if not m:
        continue
    name, depth = m.group(2), int(m.group(3))
    if m.group(1) == "entry":
        if name.startswith("uftrace: records lost"):
            lost.append(depth)
        if depth != len(st):
            sys.exit("FAIL: entry of %s at depth %d, %d open" % (name, depth, len(st)))
        st.append((name, depth))
        entries += 1
        deepest = max(deepest, depth)
    elif not st or st.pop() != (name, depth):
        sys.exit("FAIL: exit of %s at depth %d has no entry there" % (name, depth))
if st:
    sys.exit("FAIL: %d entries never exited" % len(st))
# 1023 calls (depths 0..1022) and the shallow instant (an entry and exit)
if entries != 1024 or deepest != 1022 or lost != [11]:
    sys.exit("FAIL: %d entries, deepest %d, instants at %s" % (entries, deepest, lost))
print("1023 calls to depth 1022, the instant at depth 11 kept, the one at 1051 left out")
PYEOF
"$VT_BIN" merge deep -o deep.json -q
"$PY" - deep.json <<'PYEOF'
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
b = sum(e["ph"] == "B" for e in ev)
i = sum(e["ph"] == "i" for e in ev)
if b != 1100 or i != 2:
    sys.exit("FAIL: JSON has %d calls and %d instants, want 1100 and 2" % (b, i))
PYEOF
echo "ok"
