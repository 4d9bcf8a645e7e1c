#!/bin/bash
# The trace is readable while the program runs (vmtrace top) and after a
# SIGKILL, up to the last complete record.
set -eu
. "$VT_SRC/tests/python/common.sh"
cd "$VT_TMP"

vt_py -m vmtrace -o d "$SCRIPTS/busy.py" 30 0.001 > out 2>&1 &
pid=$!
for _ in $(seq 100); do grep -q ready out 2>/dev/null && break; sleep 0.1; done
sleep 0.5
"$VT_BIN" top --once -n 1000 d > top1 || vt_fail "vmtrace top on the live dir: $(cat top1)"
grep -q '__main__.tick' top1 || vt_fail "top does not show tick(): $(cat top1)"
kill -9 $pid
wait $pid 2>/dev/null || true
"$VT_BIN" top --once -n 1000 d > top2 || vt_fail "vmtrace top after SIGKILL"
n=$(awk '$4 ~ /^__main__.tick/ { print $3 }' top2)
[ "${n:-0}" -gt 100 ] || vt_fail "tick() calls after kill: ${n:-none}: $(cat top2)"
# cut the preallocated tail: plain uftrace then reads every record
vt_py -c 'import sys, vmtrace; vmtrace.finalize(sys.argv[1])' d
m=$(vt_calls d "__main__.tick ")
[ "$m" -ge "$n" ] || vt_fail "uftrace report after finalize: $m tick() calls, top saw $n"
echo "ok: live and killed trace readable on $("$PY" -V 2>&1) ($n calls)"
