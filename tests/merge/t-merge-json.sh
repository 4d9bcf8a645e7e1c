#!/bin/bash
# Chrome JSON output: parsed by python3's json, B/E balanced and ordered per
# thread, process/thread names as M events; a single input converts alone
# (format from the .json extension), and many threads merge in time order.
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
