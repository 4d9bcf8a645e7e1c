#!/bin/bash
# Truncated/corrupt inputs: merged up to the last complete record with a
# warning naming the file, exit code 3 (VT_EXIT_PARTIAL), output valid and
# balanced.  Missing inputs and bad options fail cleanly (1 / 2).
set -eu
. "$VT_SRC/tests/merge/common.sh"
cd "$VT_TMP"
mk_host h 64
# cut the last record in half
dat=h/1000.dat
truncate -s $(( $(stat -c %s $dat) - 8 )) $dat
rc=0; "$VT_BIN" merge h -o cut.json 2>err.txt || rc=$?
cat err.txt
[ "$rc" = 3 ] || { echo "FAIL: exit $rc, want 3"; exit 1; }
grep -q "1000.dat" err.txt
json_check cut.json >/dev/null
n=$(grep -c '"ph":"[BE]"' cut.json); [ "$n" = 64 ] || { echo "FAIL: $n B/E events, want 64 (63 + 1 closing)"; exit 1; }

# a corrupt record in the middle (bad magic): events before it survive
mk_host c 64
printf '\xff\xff\xff\xff\xff\xff\xff\xff' | dd of=c/1000.dat bs=1 seek=$((16 * 20 + 8)) conv=notrunc 2>/dev/null
rc=0; "$VT_BIN" merge c -o bad.pftrace 2>err2.txt || rc=$?
cat err2.txt
[ "$rc" = 3 ] || { echo "FAIL: exit $rc on a corrupt record, want 3"; exit 1; }
protoc --decode=perfetto.protos.Trace -I "$VT_SRC/merge" "$VT_SRC/merge/perfetto_subset.proto" \
	<bad.pftrace | grep -c TYPE_SLICE_BEGIN

rc=0; "$VT_BIN" merge nosuchdir -o x.json 2>err3.txt || rc=$?
[ "$rc" = 1 ] && grep -q nosuchdir err3.txt || { cat err3.txt; echo "FAIL: missing input rc=$rc"; exit 1; }
rc=0; "$VT_BIN" merge h -o x.weird 2>/dev/null || rc=$?
[ "$rc" = 2 ] || { echo "FAIL: unknown format rc=$rc"; exit 1; }
rc=0; "$VT_BIN" merge h 2>/dev/null || rc=$?
[ "$rc" = 2 ] || { echo "FAIL: no -o rc=$rc"; exit 1; }
echo ok
