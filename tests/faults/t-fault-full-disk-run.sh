#!/bin/bash
# A full disk (2 MB tmpfs) under `vmtrace run`: it exits non-zero with a
# message naming the file and "No space left"; the records already written
# stay readable (`vmtrace info`, `vmtrace merge`, uftrace replay after
# `vmtrace convert` to another disk).
# timeout: 120
set -eu
. "$VT_SRC/tests/faults/lib.sh"
command -v uftrace >/dev/null || skip "uftrace not installed (make deps)"
small_tmpfs "$VT_TMP/disk" 2m

d="$VT_TMP/disk/run"
run_fails "vmtrace run on a full disk" "$d/.*No space left" \
	"$VT_BIN" run -o "$d" -- "$GPROGS/loop-pg" 1000000
run_ok "info after the full disk" "$VT_BIN" info "$d"
n=$(sed -n 's/^ *records: *\([0-9]*\).*/\1/p' "$VT_TMP/out")
echo "records kept: $n"
[ "${n:-0}" -ge 50000 ] || fail "only ${n:-0} records kept on the full disk"
run_ok "merge after the full disk" "$VT_BIN" merge "$d" -o "$VT_TMP/run.json" -q
m=$(json_events "$VT_TMP/run.json")
[ "$m" -ge "$n" ] || fail "merge kept $m events of $n records"
run_ok "convert after the full disk" "$VT_BIN" convert "$d" "$VT_TMP/run.ns"
c=$(uftrace replay -d "$VT_TMP/run.ns" --no-pager | grep -c 'tiny();' || true)
echo "uftrace replays $c tiny() calls"
[ "$c" -ge $((n / 2 - 1)) ] || fail "uftrace replays $c calls of $n records"
