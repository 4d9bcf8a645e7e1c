#!/bin/bash
# SIGKILL of the Python tracer (/usr/bin/python3 -m vmtrace) mid-trace:
# the killed directory (preallocated .dat tail, no final info) is read by
# `vmtrace info`, merged by `vmtrace merge` (JSON read back by python's
# json) and replayed by uftrace after `vmtrace convert`; nothing crashes.
# timeout: 120
set -eu
. "$VT_SRC/tests/faults/lib.sh"
command -v uftrace >/dev/null || skip "uftrace not installed (make deps)"
[ -d "$VT_BUILD/python/vmtrace" ] || skip "python tracer not built ($VT_BUILD/python)"

d="$VT_TMP/py-killed"
# (a simple command, not vt_py: $! must be python itself)
LD_PRELOAD=$PY_PRELOAD ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0" PYTHONPATH="$VT_BUILD/python" \
	"$PY" -m vmtrace -o "$d" \
	"$VT_SRC/tests/python/scripts/busy.py" 30 0.001 >"$VT_TMP/py.out" 2>&1 &
pid=$!
for _ in $(seq 100); do grep -q ready "$VT_TMP/py.out" 2>/dev/null && break; sleep 0.1; done
sleep 1
kill -KILL $pid
wait $pid 2>/dev/null || true

run_ok "info of the killed trace" "$VT_BIN" info "$d"
run_ok "merge of the killed trace" "$VT_BIN" merge "$d" -o "$d.json" -q
n=$("$PY" -c 'import json,sys; print(sum(1 for e in json.load(open(sys.argv[1]))["traceEvents"]
	if e.get("name", "").startswith("__main__.tick")))' "$d.json")
echo "merged: $n tick() events"
[ "$n" -ge 100 ] || fail "only $n tick() events merged from the killed trace"
run_ok "convert of the killed trace" "$VT_BIN" convert "$d" "$d.ns"
uftrace replay -d "$d.ns" --no-pager >"$VT_TMP/replay" || fail "uftrace replay of $d.ns"
m=$(grep -c '__main__.tick' "$VT_TMP/replay" || true)
echo "uftrace replays $m tick() calls"
[ "$m" -ge 50 ] || fail "uftrace replays only $m tick() calls"
