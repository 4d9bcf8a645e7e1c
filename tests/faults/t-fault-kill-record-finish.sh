#!/bin/bash
# SIGKILL of `vmtrace record` mid-run, then `vmtrace record --finish DIR`:
# trace-cmd report reads the recovered trace.dat and holds every one of a
# known number of trace_marker writes made before the kill, both those the
# recorder had already spliced to its raw files and those that were only
# in the kernel ring buffer; vmtrace.meta says record.recovered=1; the
# tracefs instance, raw files and state are gone.  Then the reaper path: a
# second killed recorder's buffered pages are saved into its directory by
# the next `vmtrace record`, and --finish still gets every marker.  And
# --finish refuses a directory whose recorder still runs.
# timeout: 120
set -eu
. "$VT_SRC/tests/faults/lib.sh"
[ "$(id -u)" = 0 ] || skip "not root: the recorder needs tracefs instances"
[ -d /sys/kernel/tracing/instances ] || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null ||
	skip "no tracefs at /sys/kernel/tracing"
command -v trace-cmd >/dev/null || skip "trace-cmd not installed (make deps)"
T=/sys/kernel/tracing/instances
PAD=$(printf '%0100d' 0)

# start_rec DIR: a recorder of DIR in the background (pid in $rec)
start_rec() {
	"$VT_BIN" record -o "$1" -e sched:sched_process_exit -b 256 -- sleep 60 \
		>/dev/null 2>"$VT_TMP/rec.err" &
	rec=$!
	# started: its instance exists and its record.state is written (the
	# latter comes a little later: under load the gap is visible)
	for _ in $(seq 100); do [ -d "$T/vmtrace-$rec" ] && [ -f "$1/record.state" ] && break; sleep 0.1; done
	[ -d "$T/vmtrace-$rec" ] && [ -f "$1/record.state" ] ||
		fail "recorder did not start: $(cat "$VT_TMP/rec.err")"
}

# marks CPU FIRST LAST [PAD]: write markers "vtmark N" into the instance
marks() {
	taskset -c "$1" bash -c 'exec 3>"$1"; for i in $(seq "$2" "$3"); do echo "vtmark $i $4" >&3; done' \
		_ "$T/vmtrace-$rec/trace_marker" "$2" "$3" "${4:-}"
}

kill_rec() {
	local child
	child=$(pgrep -P "$rec" || true)
	kill -KILL "$rec"
	wait "$rec" 2>/dev/null || true
	[ -z "$child" ] || kill -KILL $child 2>/dev/null || true
}

# count_marks FILE: distinct vtmark numbers trace-cmd report finds
count_marks() {
	trace-cmd report "$1" 2>/dev/null | grep -o 'vtmark [0-9]*' | sort -u | wc -l
}

d="$VT_TMP/killed"
start_rec "$d"
run_fails "--finish while the recorder runs" "still running" "$VT_BIN" record --finish "$d"
# 3000 markers of ~110 bytes on cpu0 pass buffer_percent (50 % of 256 KB):
# the recorder splices them to trace.cpu0.raw; 500 more stay in the kernel
marks 0 1 3000 "$PAD"
for _ in $(seq 50); do [ "$(stat -c %s "$d/trace.cpu0.raw")" -gt 0 ] && break; sleep 0.1; done
raw=$(cat "$d"/trace.cpu*.raw | wc -c)
marks 1 3001 3500
kill_rec
echo "killed recorder $rec: $raw bytes of raw pages on disk, the rest in $T/vmtrace-$rec"
[ "$raw" -gt 0 ] || fail "the recorder wrote no raw page before the kill"
[ -f "$d/record.state" ] || fail "no $d/record.state"
rc=0; "$VT_BIN" record --finish "$d" 2>"$VT_TMP/err" || rc=$?
cat "$VT_TMP/err"
[ $rc = 0 ] || fail "--finish exit $rc"
n=$(count_marks "$d/trace.dat")
echo "trace-cmd report: $n of 3500 markers"
[ "$n" = 3500 ] || fail "$n of 3500 markers in the recovered trace.dat"
grep -qx 'record.recovered=1' "$d/vmtrace.meta" || fail "vmtrace.meta lacks record.recovered=1"
grep -qx 'record.recover_instance=drained' "$d/vmtrace.meta" || fail "instance not marked drained"
[ ! -d "$T/vmtrace-$rec" ] || fail "instance vmtrace-$rec left after --finish"
ls "$d"/trace.cpu*.raw "$d/record.state" 2>/dev/null && fail "raw files or state left in $d"
run_fails "--finish of a finished recording" "nothing to finish|complete" \
	"$VT_BIN" record --finish "$d"
run_ok "merge of the recovered recording" "$VT_BIN" merge "$d" -o "$VT_TMP/k.json" -q

# reaper: the next recorder saves the killed one's buffered pages first
d2="$VT_TMP/killed2"
start_rec "$d2"
marks 1 1 400
kill_rec
"$VT_BIN" record -o "$VT_TMP/next" -e sched:sched_process_exit -- true 2>"$VT_TMP/err" ||
	fail "next record: $(cat "$VT_TMP/err")"
cat "$VT_TMP/err"
grep -q "saved the buffered pages.*$d2" "$VT_TMP/err" || fail "the reaper did not save into $d2"
[ ! -d "$T/vmtrace-$rec" ] || fail "stale instance vmtrace-$rec not removed"
rc=0; "$VT_BIN" record --finish "$d2" 2>"$VT_TMP/err" || rc=$?
cat "$VT_TMP/err"
[ $rc = 0 ] || fail "--finish after the reaper: exit $rc"
n=$(count_marks "$d2/trace.dat")
echo "trace-cmd report after the reaper: $n of 400 markers"
[ "$n" = 400 ] || fail "$n of 400 markers after the reaper saved them"
echo "ok: nothing recorded before the kill is lost"
