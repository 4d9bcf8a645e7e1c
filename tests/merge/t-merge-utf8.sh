#!/bin/bash
# Every JSON vmtrace merge (and align --json) writes loads in a strict
# parser, every string of every .pftrace is valid UTF-8 (tests/merge/
# strict_check.py walks the protobuf itself), on a corpus of:
#   - a trace-cmd v7 host-guest pair (tests/align/mktcpair: zstd guest file),
#   - trace-cmd's zlib-compressed v7 file (tests/lib/fixtures/tc-zlib),
#   - uftrace data whose names hold invalid bytes and a character cut short,
#   - the Python tracer's output with a name cut inside a 2-byte character,
#   - (root, tracefs) a recording of every event system of this machine's
#     kernel, a process named 'ddéééééé' running (the kernel cuts its comm
#     inside the last 'é'): raw_syscalls sys_enter's args must be an array,
#     sched_switch's prev_state letters (recorded again with a larger
#     buffer until no event was lost, so the command's syscalls are there).
# timeout: 300
set -eu
. "$VT_SRC/tests/merge/common.sh"
CHECK="$PY $VT_SRC/tests/merge/strict_check.py"
cd "$VT_TMP"
fail() { echo "FAIL: $*"; exit 1; }
both() {	# OUT INPUTS...: merge the inputs into OUT.json and OUT.pftrace
	local o=$1
	shift
	"$VT_BIN" merge "$@" -o "$o.json" -q 2>"$o.err" || fail "merge $* -> json: $(cat "$o.err")"
	"$VT_BIN" merge "$@" -o "$o.pftrace" -q 2>"$o.err" || fail "merge $* -> pftrace: $(cat "$o.err")"
}

"$VT_BUILD/tests/align/mktcpair" host.dat guest.dat >truth.json || fail "mktcpair"
both pair host.dat guest.dat
"$VT_BIN" align host.dat guest.dat --json >align.json 2>align.err || fail "align: $(cat align.err)"
cp -r "$VT_SRC/tests/lib/fixtures/tc-zlib" zlib
mv zlib/trace-zlib.dat zlib/trace.dat
both zlib zlib
"$GEN" bad -n 64 -D 2 -f $'dd\xc3\xa9\xc3\xa9\xc3',$'x\xffy\xed\xa0\x80z' || fail "gen-trace"
both bad bad
files="pair.json pair.pftrace align.json zlib.json zlib.pftrace bad.json bad.pftrace"
if [ -d "$VT_BUILD/python/vmtrace" ]; then
	pre=	# a sanitizer build's extension needs the ASan runtime first
	if nm -D "$VT_BUILD"/python/vmtrace/_vmtrace*.so 2>/dev/null | grep -q __asan_init; then
		pre="$(gcc -print-file-name=libasan.so) $(gcc -print-file-name=libubsan.so)"
	fi
	LD_PRELOAD=$pre ASAN_OPTIONS=${ASAN_OPTIONS:-}:detect_leaks=0 PYTHONPATH=$VT_BUILD/python \
		$PY -m vmtrace -q -o py "$VT_SRC/tests/python/scripts/inherit_names.py" ||
		fail "the Python tracer exited $?"
	both py py
	files="$files py.json py.pftrace"
fi
$CHECK $files
# the invalid names, cleaned: each invalid byte U+FFFD, the cut 'é' dropped
$PY - bad.json <<'PYEOF'
import json, sys
names = {e.get("name") for e in json.load(open(sys.argv[1]))["traceEvents"]}
for want in ("dd\u00e9\u00e9", "x\ufffdy\ufffd\ufffd\ufffdz"):
    assert want in names, (want, sorted(n for n in names if n)[:20])
print("ok: invalid names cleaned")
PYEOF

[ "$(id -u)" = 0 ] || { echo "(not root: no recording of this kernel's events)"; exit 77; }
mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null ||
	{ echo "no tracefs: no recording of this kernel's events"; exit 77; }
ev=()
for d in /sys/kernel/tracing/events/*/; do
	s=$(basename "$d")
	[ -e "$d/enable" ] && [ "$s" != ftrace ] && ev+=(-e "$s")
done
cp /bin/sleep "ddéééééé"
# Every system's events fill a small ring buffer at once on a busy machine,
# and then the traced command's own events are the ones dropped (one run
# under load kept 3 of its syscalls).  Record again with a larger buffer
# until nothing was lost: the ~30 syscalls the command makes are then all
# in the recording the checks below read.
for kb in 4096 16384 32768; do
	rm -rf all
	ASAN_OPTIONS=detect_leaks=0 "$VT_BIN" record --guest "${ev[@]}" -b $kb -o all -- \
		./ddéééééé 0.05 >rec.log 2>&1 || { cat rec.log; echo "vmtrace record failed here"; exit 77; }
	lost=$(sed -n 's/^lost\.total=//p' all/vmtrace.meta)
	[ "${lost:-0}" = 0 ] && break
	echo "note: -b ${kb}K: $lost events lost (a busy machine), recording again with a larger buffer"
done
[ "${lost:-0}" = 0 ] || fail "3 recordings of every event system lost events (the last, -b ${kb}K: $lost)"
both all all
$CHECK all.json all.pftrace --want-args-array
for f in all pair; do
	protoc --decode=perfetto.protos.Trace -I "$VT_SRC/merge" "$VT_SRC/merge/perfetto_subset.proto" \
		<$f.pftrace >$f.txt || fail "protoc --decode $f.pftrace"
	$PY "$VT_SRC/tests/merge/perfetto_check.py" $f.txt >/dev/null || fail "perfetto_check $f.pftrace"
done
$PY - all.json <<'PYEOF'
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
# the kernel's 15-byte comm fields (sched_switch prev_comm, ...): the 'é'
# it cut in two dropped, the rest kept
comms = {v for e in ev for k, v in e.get("args", {}).items() if k.endswith("comm")}
cut = "dd" + "\u00e9" * 6
assert cut in comms, sorted(c for c in comms if c.startswith("dd"))
assert not [c for c in comms if c.startswith("dd\u00e9") and c != cut], comms
st = {e["args"]["prev_state"] for e in ev if e.get("name") == "sched_switch"}
assert st and all(isinstance(s, str) and s[0] in "RSDTtXZPI" for s in st), st
print("ok: comm cut at a character, prev_state as letters %s" % sorted(st))
# syscalls and thread states (merge/derive.c): balanced slices on their own
# tracks; every Running slice starts at a sched_switch that switched its
# thread in, every other state at one that switched it out (or a wakeup)
tname = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name"}
lanes = {}
for e in ev:
    if e["ph"] in "BE" and tname.get((e["pid"], e["tid"])) in ("syscalls", "thread state"):
        lanes.setdefault((tname[(e["pid"], e["tid"])], e["tid"]), []).append(e)
sys_n = sum(1 for (k, _), l in lanes.items() if k == "syscalls" for e in l if e["ph"] == "B")
for (k, tid), l in lanes.items():
    d = 0
    for e in l:
        d += 1 if e["ph"] == "B" else -1
        assert 0 <= d <= 1, (k, tid, e)
switch_in = {(e["ts"], e["args"]["next_pid"]) for e in ev if e.get("name") == "sched_switch"}
switch_out = {(e["ts"], e["args"]["prev_pid"]) for e in ev if e.get("name") == "sched_switch"}
wake = {(e["ts"], e["args"]["pid"]) for e in ev if e.get("name") in ("sched_waking", "sched_wakeup", "sched_wakeup_new")}
states = 0
for (k, tid), l in lanes.items():
    if k != "thread state":
        continue
    for e in l:
        if e["ph"] != "B":
            continue
        t = (e["ts"], tid % 1000000000)
        if e["name"] == "Running":
            assert t in switch_in, e
        else:
            assert t in switch_out or (e["name"] == "Runnable" and t in wake), e
        states += 1
# (how many depends on what the machine did during the short recording:
# seen 84 to 6581 thread-state slices; the syscalls are the traced
# command's, all of them: the recording lost nothing)
assert sys_n > 10 and states > 10, (sys_n, states)
print("ok: %d syscall slices, %d thread-state slices" % (sys_n, states))
PYEOF
echo ok
