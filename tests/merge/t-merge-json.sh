#!/bin/bash
# Chrome JSON output: parsed by python3's json, B/E balanced and ordered per
# thread, process/thread names as M events; a single input converts alone
# (format from the .json extension), and many threads merge in time order;
# a function name with a quote, a backslash and control characters comes
# back exactly through python3's strict json.
set -eu
. "$VT_SRC/tests/merge/common.sh"
cd "$VT_TMP"
"$GEN" many -n 4000 -t 8 -D 5 -z 1000000000 -s 100 -d 7
"$VT_BIN" merge many -o one.json 2>err.txt
grep -q "trace *many *4000 events" err.txt || { cat err.txt; echo "FAIL: summary"; exit 1; }
json_check one.json >/dev/null
"$PY" - one.json <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"]
m = [e for e in ev if e["ph"] == "M"]
assert sum(e["name"] == "thread_name" for e in m) == 8, m
assert sum(e["name"] == "process_name" for e in m) == 1, m
ts = [e["ts"] for e in ev if e["ph"] in "BE"]
assert ts == sorted(ts), "not merged in time order"
assert len(ts) == 4000, len(ts)
print("ok")
PYEOF
# names are escaped: a symbol with '"', '\' and control characters
"$GEN" esc -n 20 -t 1 >/dev/null
"$PY" - esc/gen-trace-prog.sym <<'PYEOF'
import sys
p = sys.argv[1]; s = open(p, "rb").read()
open(p, "wb").write(s.replace(b" T f1\n", b" T f1\"q\x01\x1fz\\b\n"))
PYEOF
"$VT_BIN" merge esc -o esc.json 2>/dev/null
"$PY" - esc.json <<'PYEOF'
import json, sys
names = {e.get("name") for e in json.load(open(sys.argv[1]))["traceEvents"]}
assert 'f1"q\x01\x1fz\\b' in names, names
print("escaped names: ok")
PYEOF
