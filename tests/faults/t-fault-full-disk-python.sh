#!/bin/bash
# A full disk (6 MB tmpfs: one 4 MB chunk fits, the next does not) under the
# Python tracer: it exits non-zero with a message naming the directory and
# "No space left"; the records before stay readable (`vmtrace info`,
# `vmtrace merge`, uftrace replay after `vmtrace convert`).
# timeout: 120
set -eu
. "$VT_SRC/tests/faults/lib.sh"
command -v uftrace >/dev/null || skip "uftrace not installed (make deps)"
[ -d "$VT_BUILD/python/vmtrace" ] || skip "python tracer not built ($VT_BUILD/python)"
small_tmpfs "$VT_TMP/disk" 6m

d="$VT_TMP/disk/py"
run_fails "python tracer on a full disk" "$d.*No space left" \
	vt_py -m vmtrace -o "$d" \
	"$VT_SRC/tests/python/scripts/busy.py" 3 0
run_ok "info after the full disk" "$VT_BIN" info "$d"
n=$(sed -n 's/^ *records: *\([0-9]*\).*/\1/p' "$VT_TMP/out")
echo "records kept: $n"
[ "${n:-0}" -ge 100000 ] || fail "only ${n:-0} records kept on the full disk"
run_ok "merge after the full disk" "$VT_BIN" merge "$d" -o "$VT_TMP/py.json" -q
run_ok "convert after the full disk" "$VT_BIN" convert "$d" "$VT_TMP/py.ns"
c=$(uftrace replay -d "$VT_TMP/py.ns" --no-pager | grep -c '__main__.tick' || true)
echo "uftrace replays $c tick() calls"
[ "$c" -ge 10000 ] || fail "uftrace replays only $c tick() calls"
