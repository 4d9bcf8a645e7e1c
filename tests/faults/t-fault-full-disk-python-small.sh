#!/bin/bash
# A disk with less than one 4 MiB .dat chunk free (2 MB tmpfs) under the
# Python tracer: it must still record what fits (smaller chunks when a
# 4 MiB one does not fit), exit non-zero naming the directory and "No space
# left", and the records kept must be read by `vmtrace info`, `vmtrace
# merge` and uftrace replay (after `vmtrace convert`).
# Skips while guest/python/store.c allocates only whole 4 MiB chunks (then
# nothing at all is recorded here): needs small-chunk fallback in store.c.
# timeout: 120
set -eu
. "$VT_SRC/tests/faults/lib.sh"
command -v uftrace >/dev/null || skip "uftrace not installed (make deps)"
[ -d "$VT_BUILD/python/vmtrace" ] || skip "python tracer not built ($VT_BUILD/python)"
small_tmpfs "$VT_TMP/disk" 2m

d="$VT_TMP/disk/py"
rc=0
vt_py -m vmtrace -o "$d" "$VT_SRC/tests/python/scripts/busy.py" 3 0 >"$VT_TMP/out" 2>"$VT_TMP/err" || rc=$?
sed 's/^/    /' "$VT_TMP/err" | head -5
[ $rc -ne 0 ] && [ $rc -lt 128 ] || fail "python tracer on a 2 MB disk: exit $rc (want a clean failure)"
grep -q "$d.*No space left\|No space left.*$d" "$VT_TMP/err" ||
	fail "python tracer on a 2 MB disk: no message naming $d and 'No space left'"
rc=0; "$VT_BIN" info "$d" >"$VT_TMP/out" 2>"$VT_TMP/err" || rc=$?
n=$(sed -n 's/^ *records: *\([0-9]*\).*/\1/p' "$VT_TMP/out" | head -1)
echo "records kept on a disk with less than one 4 MiB chunk free: ${n:-0} (info exit $rc)"
[ "${n:-0}" -gt 0 ] || skip "needs small-chunk fallback in store.c (nothing recorded with < 4 MiB free)"
[ "$n" -ge 10000 ] || fail "only $n records kept in ~1.5 MB of free space"
run_ok "merge after the full disk" "$VT_BIN" merge "$d" -o "$VT_TMP/py.json" -q
run_ok "convert after the full disk" "$VT_BIN" convert "$d" "$VT_TMP/py.ns"
c=$(uftrace replay -d "$VT_TMP/py.ns" --no-pager | grep -c '__main__.tick' || true)
echo "uftrace replays $c tick() calls"
[ "$c" -ge 1000 ] || fail "uftrace replays only $c tick() calls"
