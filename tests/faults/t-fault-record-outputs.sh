#!/bin/bash
# The recorder runs as root: it never follows a symlink it did not ask for
# and never overwrites a trace without --force.
#  - -o naming a symlink to a directory: refused, the target untouched
#  - an existing trace without --force: refused, trace.dat + meta unchanged
#  - --force over planted symlinks (trace.dat, vmtrace.meta, trace.cpu0.raw
#    pointing at victim files): victims unchanged, regular files written
#  - created with the documented modes: directory 0755, files 0644 (umask 022)
# timeout: 120
set -eu
. "$VT_SRC/tests/faults/lib.sh"
[ "$(id -u)" = 0 ] || skip "not root: the recorder needs tracefs instances"
[ -d /sys/kernel/tracing/instances ] || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null ||
	skip "no tracefs at /sys/kernel/tracing"
command -v trace-cmd >/dev/null || skip "trace-cmd not installed (make deps)"
umask 022
rec() { "$VT_BIN" record -e sched:sched_switch "$@" -- sleep 0.1; }

# a symlink as the output directory
mkdir "$VT_TMP/target"
ln -s "$VT_TMP/target" "$VT_TMP/link"
run_fails "record -o SYMLINK" "link" rec -o "$VT_TMP/link"
run_fails "record --force -o SYMLINK" "link" rec --force -o "$VT_TMP/link"
[ -z "$(ls -A "$VT_TMP/target")" ] || fail "files written through the symlink: $(ls "$VT_TMP/target")"
echo "ok: nothing written through the symlinked directory"

# an existing trace is not replaced without --force
d="$VT_TMP/trace"
rec -o "$d" 2>/dev/null
[ "$(stat -c %a "$d")" = 755 ] || fail "directory mode $(stat -c %a "$d"), documented 755"
for f in trace.dat vmtrace.meta; do
	[ "$(stat -c %a "$d/$f")" = 644 ] || fail "$f mode $(stat -c %a "$d/$f"), documented 644"
done
echo "ok: modes 755 (directory), 644 (trace.dat, vmtrace.meta)"
sum=$(cat "$d/trace.dat" "$d/vmtrace.meta" | md5sum)
run_fails "record over an existing trace" "$d.*--force" rec -o "$d"
[ "$(cat "$d/trace.dat" "$d/vmtrace.meta" | md5sum)" = "$sum" ] || fail "the existing trace changed"
echo "ok: existing trace untouched without --force"

# --force over planted symlinks: the victims stay as they are
for f in trace.dat vmtrace.meta trace.cpu0.raw trace.cpu1.raw; do
	echo "victim $f" >"$VT_TMP/victim-$f"
	rm -f "$d/$f"
	ln -s "$VT_TMP/victim-$f" "$d/$f"
done
rec --force -o "$d" 2>"$VT_TMP/err" || fail "record --force: $(cat "$VT_TMP/err")"
for f in trace.dat vmtrace.meta trace.cpu0.raw trace.cpu1.raw; do
	[ "$(cat "$VT_TMP/victim-$f")" = "victim $f" ] || fail "record --force wrote through the symlink $f"
done
[ -f "$d/trace.dat" ] && [ ! -L "$d/trace.dat" ] && [ ! -L "$d/vmtrace.meta" ] ||
	fail "trace.dat/vmtrace.meta are not regular files"
n=$(trace-cmd report "$d/trace.dat" 2>/dev/null | grep -c sched_switch || true)
[ "$n" -gt 0 ] || fail "trace-cmd report reads no event from the --force recording"
echo "ok: --force replaced planted symlinks without following them ($n events)"
