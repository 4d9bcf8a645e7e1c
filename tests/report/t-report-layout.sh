#!/bin/bash
# vmtrace report and merge on the example's own output layout: a guest
# directory that holds no trace itself but python/ (uftrace data), kernel/
# (guest kernel trace.dat) and markers/ (markers.dat) stands for those
# subdirectories.  `vmtrace report ex/host ex/guest` gives exactly the
# report of the same recordings named one by one; a directory with no trace
# data anywhere is still refused, naming it.
set -eu
. "$VT_SRC/tests/report/common.sh"
fail() { echo "FAIL: $*"; exit 1; }
cd "$VT_TMP"
mk_fixture . 20 >/dev/null
mkdir -p ex/guest/python ex/guest/kernel ex/guest/markers ex/guest/logs
cp -r h ex/host
cp g/*.dat g/*.sym g/info g/*.map g/task.txt g/vmtrace.meta ex/guest/python/
rm ex/guest/python/trace.dat
cp g/trace.dat g/vmtrace.meta ex/guest/kernel/
echo "what ran" >ex/guest/logs/guest.txt
"$VT_BIN" report h g --no-align -q -n 5 >named.txt
"$VT_BIN" report ex/host ex/guest --no-align -q -n 5 >layout.txt || fail "report on the example layout: exit $?"
cmp named.txt layout.txt || { diff named.txt layout.txt | head; fail "the layout's report differs"; }
grep -q "PSQIKHDJRCXE        20 requests" layout.txt || fail "chains incomplete: $(grep requests layout.txt)"
"$VT_BIN" merge ex/host ex/guest --no-align -q -o layout.json
"$VT_BIN" merge h g --no-align -q -o named.json
cmp named.json layout.json || fail "merge of the layout differs from the named inputs"
# a DIR@NAME group keeps its name on every subdirectory
"$VT_BIN" merge ex/host ex/guest@vm1 --no-align -q -o named-vm.json
grep -q '"guest vm1' named-vm.json || grep -q 'vm1' named-vm.json || fail "VM name lost"
# nothing anywhere: refused, naming the directory
mkdir -p empty/sub
if "$VT_BIN" report ex/host empty --no-align -q >e.txt 2>e.err; then fail "an empty directory was accepted"; fi
grep -q "empty: no trace.dat" e.err || fail "message does not name the directory: $(cat e.err)"
grep -q "^vmtrace: report: " e.err || fail "message not prefixed by the running command: $(cat e.err)"
echo "ok: report and merge read the example layout (python/, kernel/, markers/) as the named inputs"
