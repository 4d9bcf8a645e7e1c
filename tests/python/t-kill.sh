#!/bin/bash
# The trace is readable while the program runs (vmtrace top) and after a
# SIGKILL, up to the last complete record.
set -eu
. "$VT_SRC/tests/python/common.sh"
cd "$VT_TMP"

vt_py_bg -m vmtrace -o d "$SCRIPTS/busy.py" 30 0.001 > out 2>&1 &
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

# killed after its stage (lib/pystage.h) was copied into the .dat many
# times, its newest records only in the .stage: lib's reader takes them
# without changing the files (`vmtrace merge` holds as many tick() calls as
# top counts and says where they came from), `vmtrace finalize` folds them
# and plain uftrace then sees them all, no .stage left behind
vt_py_bg -m vmtrace -o d2 "$SCRIPTS/busy.py" 30 0 > out2 2>&1 &
pid=$!
for _ in $(seq 100); do grep -q ready out2 2>/dev/null && break; sleep 0.1; done
sleep 0.3
kill -9 $pid
wait $pid 2>/dev/null || true
ls d2/*.stage > /dev/null 2>&1 || vt_fail "the killed writer left no .stage file"
"$VT_BIN" top --once -n 1000 d2 > top3 || vt_fail "vmtrace top after SIGKILL (copied stage)"
recs=$(sed -n 's/.* \([0-9]*\) records,.*/\1/p' top3)
[ "${recs:-0}" -gt 16383 ] || vt_fail "only ${recs:-0} records: the stage was never copied"
k=$(awk '$4 ~ /^__main__.tick/ { print $3 }' top3)
sum_before=$(cat d2/* | md5sum)
"$VT_BIN" merge d2 -o x.json > merge.out 2> merge.err ||
	vt_fail "merge of the killed dir: $(cat merge.err)"
grep -Eq 'note: d2/[0-9]+\.stage: [1-9][0-9]* records not yet folded, read too' merge.err ||
	vt_fail "merge does not say it read staged records: $(cat merge.err)"
[ "$(cat d2/* | md5sum)" = "$sum_before" ] || vt_fail "merge changed the input directory"
j=$("$PY" -c 'import json,sys; print(sum(1 for e in json.load(open(sys.argv[1]))["traceEvents"]
	if e.get("ph") in ("B", "X") and e.get("name", "").startswith("__main__.tick")))' x.json)
# (top counts finished calls; one tick() may have been entered at the kill)
[ "$j" -ge "$k" ] && [ "$j" -le $((k + 1)) ] || vt_fail "merge holds $j tick() calls, top counts $k"
staged=$(sed -n 's/.*stage: \([0-9]*\) records.*/\1/p' merge.err | head -1)
"$VT_BIN" finalize d2 > fin.out || vt_fail "vmtrace finalize: $(cat fin.out)"
grep -q '1 stage file folded' fin.out || vt_fail "finalize: $(cat fin.out)"
ls d2/*.stage > /dev/null 2>&1 && vt_fail "finalize left a .stage file"
[ "$(( $(cat d2/*.dat | wc -c) / 16 ))" = "$recs" ] ||
	vt_fail "records after finalize: $(( $(cat d2/*.dat | wc -c) / 16 )), top saw $recs"
m2=$(vt_calls d2 "__main__.tick ")
[ "$m2" -ge "$k" ] && [ "$m2" -le $((k + 1)) ] ||
	vt_fail "uftrace after finalize: $m2 tick() calls, top saw $k"
vt_replay d2 | grep -q '__main__.tick' || vt_fail "uftrace replay after finalize: no tick()"
# a second finalize has nothing to do; the folded dir reads the same
"$VT_BIN" finalize -q d2 || vt_fail "second finalize"
[ "$(vt_calls d2 "__main__.tick ")" = "$m2" ] || vt_fail "second finalize changed the records"
echo "ok: live and killed trace readable on $("$PY" -V 2>&1) ($n calls; $recs records, $staged only in the stage, merged and folded)"
