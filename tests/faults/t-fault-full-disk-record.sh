#!/bin/bash
# A full disk (2 MB tmpfs) under the recorder (`vmtrace record`): it exits
# non-zero with a message naming the file and "No space left", keeps the
# raw pages it captured (trace.cpuN.raw), removes its tracefs instance and
# leaves no half-written trace.dat behind; `vmtrace merge` then fails
# cleanly naming the directory.
# timeout: 120
set -eu
. "$VT_SRC/tests/faults/lib.sh"
[ "$(id -u)" = 0 ] || skip "not root: the recorder needs tracefs instances"
[ -d /sys/kernel/tracing/instances ] || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null ||
	skip "no tracefs at /sys/kernel/tracing"
small_tmpfs "$VT_TMP/disk" 2m

d="$VT_TMP/disk/rec"
run_fails "vmtrace record on a full disk" "$d/.*No space left" \
	"$VT_BIN" record -o "$d" -e sched -b 512 -- sh -c 'for i in $(seq 400); do cat /dev/null; done'
ls -l "$d"
[ ! -e "$d/trace.dat" ] || fail "a half-written $d/trace.dat was left"
kept=$(cat "$d"/trace.cpu*.raw | wc -c)
echo "raw pages kept: $kept bytes"
[ "$kept" -gt 0 ] || [ "$(df --output=avail "$VT_TMP/disk" | tail -1)" -gt 0 ] ||
	fail "the disk is full but no raw page was kept"
ls -d /sys/kernel/tracing/instances/vmtrace-* 2>/dev/null | while read -r i; do
	pid=${i##*-}
	kill -0 "$pid" 2>/dev/null || fail "tracefs instance $i of a finished recorder left behind"
done
run_fails "merge of the full-disk recording" "$d" "$VT_BIN" merge "$d" -o "$VT_TMP/r.json" -q
