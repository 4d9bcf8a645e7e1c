#!/bin/bash
# A full disk (64 KB tmpfs) under `vmtrace merge` for each sink (Chrome
# JSON, Perfetto, uftrace directory): exit 1 with a message naming the
# output and "No space left", no success summary; the inputs are untouched.
# timeout: 120
set -eu
. "$VT_SRC/tests/faults/lib.sh"
small_tmpfs "$VT_TMP/disk" 64k

d="$VT_TMP/run"
"$VT_BIN" run -o "$d" -- "$GPROGS/loop-pg" 20000 >/dev/null
sum=$(cat "$d"/* | md5sum)
for out in out.json out.pftrace; do
	run_fails "merge to $out on a full disk" "$VT_TMP/disk/$out.*No space left" \
		"$VT_BIN" merge "$d" -o "$VT_TMP/disk/$out" -q
	rm -f "$VT_TMP/disk/$out"
done
# without -q: the error, but no success summary
run_fails "merge to out.json on a full disk, not quiet" "$VT_TMP/disk/out.json.*No space left" \
	"$VT_BIN" merge "$d" -o "$VT_TMP/disk/out.json"
! grep -q "events ->" "$VT_TMP/err" || fail "success summary printed after a write failure"
rm -f "$VT_TMP/disk/out.json"
run_fails "merge to a uftrace dir on a full disk" "$VT_TMP/disk/outdir.*No space left" \
	"$VT_BIN" merge "$d" -o "$VT_TMP/disk/outdir" -F uftrace -q
[ "$(cat "$d"/* | md5sum)" = "$sum" ] || fail "the input changed"
run_ok "merge of the same input on a roomy disk" "$VT_BIN" merge "$d" -o "$VT_TMP/ok.json" -q
