#!/bin/bash
# raw_syscalls:sys_enter/sys_exit in a host trace.dat (gen-tracedat) as
# merge derives them: a slice per syscall on the thread's "syscalls" lane,
# named from the syscall table ("write") or by number past it ("syscall
# 100000"), the enter's args array (an array of numbers) and the exit's
# ret as arguments - in Chrome JSON and Perfetto (decoded by protoc);
# export --sqlite keeps the raw events, the args array as a JSON array.
# sched_switch/sched_wakeup: the thread state lanes merge derives.  Writes
# that fail at a derived slice and at the end of a slice left open.
set -eu
. "$VT_SRC/tests/merge/common.sh"
GTD="$VT_BUILD/tests/merge/gen-tracedat"
[ -r /sys/kernel/tracing/events/raw_syscalls/sys_enter/format ] ||
	{ echo "no tracefs raw_syscalls formats (mount tracefs at /sys/kernel/tracing)"; exit 77; }
cd "$VT_TMP"
fail() { echo "FAIL: $*"; exit 1; }
mkdir r
cat >r.txt <<'EOF'
comm 300 app
ev 0 1000000000 300 raw_syscalls/sys_enter id=1
ev 0 1000002000 300 raw_syscalls/sys_exit id=1 ret=5
ev 0 1000004000 300 raw_syscalls/sys_enter id=100000
ev 0 1000006000 300 raw_syscalls/sys_exit id=100000 ret=-38
EOF
"$GTD" r/trace.dat <r.txt
printf '# vmtrace-meta 1\nclock=tsc\ntsc.hz=2000000000\ndomain=host\n' >r/vmtrace.meta

"$VT_BIN" merge r -o r.json -q
"$PY" - r.json <<'PYEOF' || fail "Chrome JSON"
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
tn = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name"}
got = [(e["ph"], e["ts"], e.get("name"), e.get("args"), tn[(e["pid"], e["tid"])]) for e in ev if e["ph"] != "M"]
want = [("B", 500000.0, "write", {"args": [0] * 6}, "syscalls"),
        ("E", 500001.0, None, {"ret": 5}, "syscalls"),
        ("B", 500002.0, "syscall 100000", {"args": [0] * 6}, "syscalls"),
        ("E", 500003.0, None, {"ret": -38}, "syscalls")]
assert got == want, got
print("ok   Chrome: write and syscall 100000, args array, ret")
PYEOF

"$VT_BIN" merge r -o r.pftrace -q
protoc --decode=perfetto.protos.Trace -I "$VT_SRC/merge" "$VT_SRC/merge/perfetto_subset.proto" \
	<r.pftrace >r.txt
"$PY" "$VT_SRC/tests/merge/perfetto_check.py" r.txt --json r.sum >/dev/null
"$PY" - r.sum r.txt <<'PYEOF' || fail "Perfetto"
import json, sys
s = json.load(open(sys.argv[1])); text = open(sys.argv[2]).read()
th = [t for p in s for t in p["threads"] if t["name"] == "syscalls"]
assert len(th) == 1 and sorted(th[0]["names"]) == ["syscall 100000", "write"], th
assert text.count("TYPE_SLICE_BEGIN") == 2 and text.count("TYPE_SLICE_END") == 2, "slices"
assert text.count("int_value: 0") >= 12 and "int_value: -38" in text, "args and ret"
print("ok   Perfetto: two slices on 'syscalls', the args array and ret")
PYEOF

if command -v sqlite3 >/dev/null; then
	"$VT_BIN" export --sqlite r.db r -q
	got=$(sqlite3 -batch -noheader r.db "SELECT name, ts, args FROM instants ORDER BY ts" | tr '\n' ' ')
	[ "$got" = 'sys_enter|500000000|{"id":1,"args":[0,0,0,0,0,0]} sys_exit|500001000|{"id":1,"ret":5} sys_enter|500002000|{"id":100000,"args":[0,0,0,0,0,0]} sys_exit|500003000|{"id":100000,"ret":-38} ' ] ||
		fail "sqlite instants: $got"
fi
# sched_switch / sched_wakeup: a "thread state" lane per thread already
# known - app sleeps (S), is woken (Runnable), runs; other is preempted (R)
mkdir s
cat >s.txt <<'EOF'
comm 300 app
comm 301 other
ev 0 1000000000 300 sched/sched_switch prev_comm=app prev_pid=300 prev_prio=120 prev_state=1 next_comm=other next_pid=301 next_prio=120
ev 0 1000002000 301 sched/sched_wakeup comm=app pid=300 prio=120 target_cpu=0
ev 0 1000004000 301 sched/sched_switch prev_comm=other prev_pid=301 prev_prio=120 prev_state=0 next_comm=app next_pid=300 next_prio=120
EOF
"$GTD" s/trace.dat <s.txt
cp r/vmtrace.meta s/
"$VT_BIN" merge s -o s.json -q
"$PY" - s.json <<'PYEOF' || fail "thread states"
import json, sys
from collections import defaultdict
ev = json.load(open(sys.argv[1]))["traceEvents"]
tn = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name"}
pn = {e["pid"]: e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "process_name"}
d = defaultdict(list)
for e in ev:
    if e["ph"] in "BE":
        d[(pn[e["pid"]], tn[(e["pid"], e["tid"])])].append((e["ph"], e["ts"], e.get("name"), e.get("args")))
want = {("trace: app (pid 300)", "thread state"): [
            ("B", 500000.0, "Sleeping", {"prev_state": "S"}), ("E", 500001.0, None, None),
            ("B", 500001.0, "Runnable", None), ("E", 500002.0, None, None),
            ("B", 500002.0, "Running", None), ("E", 500002.0, None, None)],
        ("trace: other (pid 301)", "thread state"): [
            ("B", 500002.0, "Runnable", {"prev_state": "R"}), ("E", 500002.0, None, None)]}
assert dict(d) == want, dict(d)
print("ok   thread state lanes: Sleeping, Runnable, Running; preempted Runnable")
PYEOF

# outputs whose writes fail (/dev/full): the first write comes when the
# buffer (1 MiB) has less than an event's room (128 KiB) left; all the
# events of write syscalls are derived slices.  5333 of them and one left
# open reach that point at the end of the open one (checked on a file:
# the close's E starts past byte 917504, the last B before it); 5400
# reach it at a derived slice.  Either fails, named.
big() {	# N: N write syscalls, then one open, in bN/
	"$PY" - "$1" >b$1.txt <<'PYEOF'
import sys
n, t = int(sys.argv[1]), 1000000000
print("comm 300 app")
for i in range(n):
    print("ev 0 %d 300 raw_syscalls/sys_enter id=1" % t)
    print("ev 0 %d 300 raw_syscalls/sys_exit id=1 ret=5" % (t + 1000))
    t += 2000
print("ev 0 %d 300 raw_syscalls/sys_enter id=1" % t)
PYEOF
	mkdir b$1
	"$GTD" b$1/trace.dat <b$1.txt
	printf '# vmtrace-meta 1\nclock=tsc\ntsc.hz=2000000000\ndomain=host\n' >b$1/vmtrace.meta
}
big 5333
"$VT_BIN" merge b5333 -o b.json -q
s=$(stat -c %s b.json) e=$(tail -n 2 b.json | wc -c) l=$(tail -n 3 b.json | head -n 1 | wc -c)
[ $((s - e - 1)) -gt 917504 ] && [ $((s - e - 1 - l)) -le 917504 ] ||
	fail "b5333: the open slice's end is not the first event past the flush point ($s bytes)"
big 5400
if [ -w /dev/full ]; then
	for n in 5333 5400; do
		rc=0
		"$VT_BIN" merge b$n -o /dev/full -F chrome -q 2>err.txt || rc=$?
		[ $rc = 1 ] || fail "b$n onto /dev/full: exit $rc, want 1"
		grep -qxF 'vmtrace: merge: /dev/full: write failed: No space left on device' err.txt ||
			fail "b$n onto /dev/full: $(cat err.txt)"
	done
fi
echo "ok: raw syscalls, thread states, failed writes"
