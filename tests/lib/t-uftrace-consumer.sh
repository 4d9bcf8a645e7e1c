#!/bin/bash
# t-uftrace-consumer: uftrace data written by lib/uftrace_write.c (through the
# mkuftrace helper: a known 2-thread call tree, ns clock) is read by the real
# uftrace 0.13: info, replay, graph, report, dump, dump --chrome (balanced
# B/E per thread, checked with python3).  Every symbol path: a synthetic
# image with a hand-made .sym + map, the helper's own ELF symbols with
# /proc/self/maps, and with a map made from its ELF program headers.
# timeout: 60
set -eu
MK="$VT_BUILD/tests/helpers/mkuftrace"
command -v uftrace >/dev/null || { echo "uftrace not installed"; exit 77; }
[ -x "$MK" ] || { echo "missing $MK (make test builds it)"; exit 1; }
cd "$VT_TMP"

fail() { echo "FAIL: $*"; exit 1; }

check_dir() {	# DIR PREFIX: function names are PREFIX{main,foo,bar,baz}
	local d=$1 p=$2
	uftrace info -d "$d" >info.out || fail "uftrace info -d $d"
	grep -q "number of tasks *: 2" info.out || fail "info: task count"

	uftrace replay -d "$d" >replay.out 2>&1 || { cat replay.out; fail "uftrace replay"; }
	cat replay.out
	# thread A: main { foo { bar } foo { bar } }, thread B: baz { bar }
	[ "$(grep -c "\[ *4242\] | *${p}bar() {" replay.out)" = 2 ] || fail "replay: 2 bar calls in A"
	grep -q "10.000 us \[ *4242\] | } /\* ${p}main \*/" replay.out || fail "replay: main 10 us"
	grep -q "5.000 us \[ *4243\] | } /\* ${p}baz \*/" replay.out || fail "replay: baz 5 us"
	grep -q "3.000 us \[ *4242\] |   } /\* ${p}foo \*/" replay.out || fail "replay: foo 3 us at depth 1"
	# per thread, the tree
	uftrace replay -d "$d" --tid 4243 >b.out
	grep -q "${p}main" b.out && fail "replay --tid 4243 shows thread A"
	grep -q "1.000 us \[ *4243\] |   ${p}bar();" b.out || fail "replay --tid 4243: bar under baz"

	uftrace graph -d "$d" >graph.out || fail "uftrace graph"
	cat graph.out
	grep -Eq "10.000 us : +\+-\(1\) ${p}main" graph.out || fail "graph: main"
	grep -Eq "6.000 us : +\| \(2\) ${p}foo" graph.out || fail "graph: foo x2 under main"
	grep -Eq "5.000 us : +\+-\(1\) ${p}baz" graph.out || fail "graph: baz"

	uftrace report -d "$d" >report.out || fail "uftrace report"
	grep -Eq "3.000 us +3.000 us +3 +${p}bar" report.out || fail "report: bar 3 calls"

	uftrace dump -d "$d" >dump.out || fail "uftrace dump"
	[ "$(grep -c "\[entry\]" dump.out)" = 7 ] || fail "dump: 7 entries"
	[ "$(grep -c "\[exit \]" dump.out)" = 7 ] || fail "dump: 7 exits"

	uftrace dump --chrome -d "$d" >chrome.json || fail "uftrace dump --chrome"
	/usr/bin/python3 - "$p" <<'PY' || fail "chrome JSON"
import json, sys
p = sys.argv[1]
ev = json.load(open("chrome.json"))["traceEvents"]
depth, names = {}, {}
for e in ev:
    if e["ph"] not in "BE":
        continue
    tid = e.get("tid", e["pid"])
    st = names.setdefault(tid, [])
    if e["ph"] == "B":
        st.append(e["name"])
    else:
        assert st and st.pop() == e["name"], ("unbalanced", tid, e)
assert all(not s for s in names.values()), names
b = [e for e in ev if e["ph"] == "B"]
assert len(b) == 7, len(b)
assert {e["name"] for e in b} == {p + n for n in ("main", "foo", "bar", "baz")}
print("chrome: %d B/E pairs balanced on %d threads" % (len(b), len(names)))
PY
}

rm -rf synth self
"$MK" synth synth
check_dir synth ""
"$MK" self self
check_dir self "mk_"
grep -q "^# path name: $VT_BUILD/tests/helpers/mkuftrace" self/mkuftrace.sym || fail "sym path name"
"$MK" elf elf
check_dir elf "mk_"
echo "uftrace 0.13 reads both directories"
