#!/bin/bash
# A full disk (1 MB tmpfs: less than trace.dat's compressed kallsyms alone,
# so the disk is full either while the pages are spliced or while trace.dat
# is written, never large enough for both) under the recorder (`vmtrace
# record`): it exits
# non-zero with a message naming the file and "No space left", keeps the
# raw pages it captured (trace.cpuN.raw), keeps its tracefs instance (the
# pages still in the kernel) unless it had drained it completely, and
# leaves no half-written trace.dat; `vmtrace
# merge` fails cleanly naming the directory.  `vmtrace record --finish DIR`
# then fails cleanly on the full disk (naming the file, pointing to -o)
# without touching the raw pages or the instance; `--finish DIR -o OTHER`
# drains the instance and writes a trace.dat there that trace-cmd report
# reads with every event the finish counted (exit 0: nothing lost), and
# removes the instance.
# timeout: 120
set -eu
. "$VT_SRC/tests/faults/lib.sh"
[ "$(id -u)" = 0 ] || skip "not root: the recorder needs tracefs instances"
[ -d /sys/kernel/tracing/instances ] || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null ||
	skip "no tracefs at /sys/kernel/tracing"
command -v trace-cmd >/dev/null || skip "trace-cmd not installed (make deps)"
small_tmpfs "$VT_TMP/disk" 1m

d="$VT_TMP/disk/rec"
run_fails "vmtrace record on a full disk" "$d/.*No space left" \
	"$VT_BIN" record -o "$d" -e sched -b 512 -- sh -c 'for i in $(seq 400); do cat /dev/null; done'
ls -l "$d"
[ ! -e "$d/trace.dat" ] || fail "a half-written $d/trace.dat was left"
kept=$(cat "$d"/trace.cpu*.raw | wc -c)
echo "raw pages kept: $kept bytes"
[ "$kept" -gt 0 ] || [ "$(df --output=avail "$VT_TMP/disk" | tail -1)" -gt 0 ] ||
	fail "the disk is full but no raw page was kept"
inst=$(sed -n 's/^record.instance=//p' "$d/record.state")
[ -n "$inst" ] || fail "no record.instance in $d/record.state"
# the disk fills while pages are spliced (then the rest stays in the
# instance) or, on a slower build, only while trace.dat is written (then
# every page was drained into the raw files first and the instance is gone)
if grep -q 'trace.cpu[0-9]*.raw: No space left' "$VT_TMP/err"; then
	[ -d "/sys/kernel/tracing/instances/$inst" ] ||
		fail "the instance $inst (pages in the kernel) was removed"
	kept_inst=1
else
	[ ! -d "/sys/kernel/tracing/instances/$inst" ] || fail "instance $inst left after a complete drain"
	kept_inst=0
fi
run_fails "merge of the full-disk recording" "$d" "$VT_BIN" merge "$d" -o "$VT_TMP/r.json" -q

sum=$(cat "$d"/trace.cpu*.raw | md5sum)
run_fails "--finish on the full disk" "$d.*No space left.*-o OTHERDIR" \
	"$VT_BIN" record --finish "$d"
[ "$(cat "$d"/trace.cpu*.raw | md5sum)" = "$sum" ] || fail "--finish changed the raw pages"
[ ! -e "$d/trace.dat" ] || fail "--finish left a half-written $d/trace.dat"
[ $kept_inst = 0 ] || [ -d "/sys/kernel/tracing/instances/$inst" ] ||
	fail "--finish on the full disk removed $inst"

o="$VT_TMP/other"
rc=0; "$VT_BIN" record --finish "$d" -o "$o" 2>"$VT_TMP/err" || rc=$?
cat "$VT_TMP/err"
[ $rc = 0 ] || fail "--finish -o $o: exit $rc (every page was saved)"
want=$(sed -n 's/.*recovered \([0-9]*\) events.*/\1/p' "$VT_TMP/err")
n=$(trace-cmd report "$o/trace.dat" 2>/dev/null | grep -c ' sched_' || true)
echo "trace-cmd report: $n sched events, --finish counted $want"
[ "$n" -gt 0 ] && [ "$n" = "$want" ] || fail "trace-cmd report reads $n events, want $want"
grep -qx 'record.recovered=1' "$o/vmtrace.meta" || fail "$o/vmtrace.meta lacks record.recovered=1"
[ ! -d "/sys/kernel/tracing/instances/$inst" ] || fail "$inst left after --finish -o"
[ "$(cat "$d"/trace.cpu*.raw | md5sum)" = "$sum" ] || fail "--finish -o changed $d"
run_ok "merge of the recording finished elsewhere" "$VT_BIN" merge "$o" -o "$VT_TMP/o.json" -q
