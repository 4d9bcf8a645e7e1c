#!/bin/bash
# SIGKILL of the recorder (`vmtrace record`) mid-trace: what is left (raw
# page files, no trace.dat) makes `vmtrace merge` fail cleanly naming the
# directory and `vmtrace info` not crash; the next `vmtrace record` removes
# the killed recorder's tracefs instance (its ring buffers), refuses the
# directory without --force and records into it with --force (trace-cmd
# report reads the result).
# timeout: 120
set -eu
. "$VT_SRC/tests/faults/lib.sh"
[ "$(id -u)" = 0 ] || skip "not root: the recorder needs tracefs instances"
[ -d /sys/kernel/tracing/instances ] || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null ||
	skip "no tracefs at /sys/kernel/tracing"
command -v trace-cmd >/dev/null || skip "trace-cmd not installed (make deps)"

d="$VT_TMP/killed"
"$VT_BIN" record -o "$d" -e sched -b 256 -- sleep 30 >/dev/null 2>"$VT_TMP/rec.err" &
rec=$!
for _ in $(seq 50); do [ -d "/sys/kernel/tracing/instances/vmtrace-$rec" ] && break; sleep 0.1; done
[ -d "/sys/kernel/tracing/instances/vmtrace-$rec" ] || fail "recorder did not start: $(cat "$VT_TMP/rec.err")"
sleep 1
child=$(pgrep -P $rec || true)
kill -KILL $rec
wait $rec 2>/dev/null || true
[ -z "$child" ] || kill -KILL $child 2>/dev/null || true
ls -l "$d"

rc=0; "$VT_BIN" info "$d" >"$VT_TMP/out" 2>&1 || rc=$?
[ $rc -lt 128 ] || fail "vmtrace info of the killed recording died (exit $rc)"
echo "ok: info of the killed recording (exit $rc)"
run_fails "merge of the killed recording" "$d" "$VT_BIN" merge "$d" -o "$VT_TMP/k.json" -q
run_fails "record into the killed recording without --force" "$d.*--force" \
	"$VT_BIN" record -o "$d" -e sched:sched_switch -- true
"$VT_BIN" record --force -o "$d" -e sched:sched_switch -- sleep 0.2 2>"$VT_TMP/err" ||
	fail "record --force into the killed recording: $(cat "$VT_TMP/err")"
[ ! -d "/sys/kernel/tracing/instances/vmtrace-$rec" ] ||
	fail "the killed recorder's instance vmtrace-$rec is still there"
echo "ok: stale instance vmtrace-$rec removed"
n=$(trace-cmd report "$d/trace.dat" 2>/dev/null | grep -c sched_switch || true)
echo "trace-cmd report: $n sched_switch events after --force"
[ "$n" -gt 0 ] || fail "no events in the re-recorded $d/trace.dat"
ls "$d"/trace.cpu*.raw 2>/dev/null && fail "raw page files of the killed run left in $d"
echo "ok: killed recorder leaves nothing behind once recorded again"
