#!/bin/bash
# SIGKILL of a `vmtrace run` program mid-trace (and of the whole group,
# vmtrace run included): what was flushed is read by `vmtrace info`,
# merged by `vmtrace merge` (Chrome JSON read back by python's json) and
# replayed by uftrace after `vmtrace convert`; nothing crashes.
# timeout: 120
set -eu
. "$VT_SRC/tests/faults/lib.sh"
command -v uftrace >/dev/null || skip "uftrace not installed (make deps)"

fifo="$VT_TMP/fifo"
mkfifo "$fifo"
check_left() {
	local d=$1 n
	run_ok "info of $d" "$VT_BIN" info "$d"
	grep -q 'tasks\|tid' "$VT_TMP/out" || fail "info of $d shows no task"
	run_ok "merge of $d" "$VT_BIN" merge "$d" -o "$d.json" -q
	n=$(json_events "$d.json")
	echo "merged: $n events"
	[ "$n" -ge 36000 ] || fail "only $n events merged from $d (want every flushed buffer)"
	run_ok "convert of $d" "$VT_BIN" convert "$d" "$d.ns"
	uftrace replay -d "$d.ns" --no-pager >"$VT_TMP/replay" || fail "uftrace replay of $d.ns"
	n=$(grep -c 'tick();' "$VT_TMP/replay" || true)
	echo "uftrace replays $n tick() calls"
	[ "$n" -ge 18000 ] || fail "uftrace replays only $n tick() calls"
}

# the traced program killed: vmtrace run survives and reports it
d="$VT_TMP/prog-killed"
"$VT_BIN" run -o "$d" -- "$GPROGS/killme-pg" 20000 >"$fifo" &
run=$!
read -r line <"$fifo"
kill -KILL "$(pgrep -P "$run" killme-pg)"
rc=0; wait "$run" || rc=$?
[ "$rc" = 137 ] || fail "vmtrace run exit $rc, want 137 (the program's SIGKILL)"
check_left "$d"

# vmtrace run and the program both killed
d="$VT_TMP/all-killed"
"$VT_BIN" run -o "$d" -- "$GPROGS/killme-pg" 20000 >"$fifo" &
run=$!
read -r line <"$fifo"
prog=$(pgrep -P "$run" killme-pg)
kill -KILL "$run" "$prog"
wait "$run" 2>/dev/null || true
check_left "$d"
