#!/bin/bash
# uftrace output: `uftrace replay` (a consumer we did not write) shows host
# and guest threads side by side, with the slice names and ns durations,
# and `uftrace dump --chrome` reads it whole.  Also the format chosen by
# OUT: a path without extension is a uftrace directory.
set -eu
. "$VT_SRC/tests/merge/common.sh"
command -v uftrace >/dev/null || { echo "uftrace not installed"; exit 77; }
cd "$VT_TMP"
mk_host h 16 -M kvm.vm0.vcpu0.tsc_offset.nr=1 -M "kvm.vm0.vcpu0.tsc_offset.0=500000000 999999000 start"
mk_guest g 16 1500000000 1000
"$VT_BIN" merge h g -o merged -q
[ -f merged/info ] && grep -q '^clock=ns$' merged/vmtrace.meta
uftrace replay -d merged >replay.txt
cat replay.txt
grep -Eq '\[ *1000\] \| main\(\) \{' replay.txt
grep -Eq '\[10000200\] \| py_a\(\) \{' replay.txt
# work() lasts 1000 ticks at 2 GHz = 0.500 us; py_b the same after alignment
grep -Eq '0\.500 us \[ *1000\] \|   \} /\* work \*/' replay.txt
grep -Eq '0\.500 us \[10000200\] \|   \} /\* py_b \*/' replay.txt
n=$(grep -c 'main() {' replay.txt); [ "$n" = 4 ] || { echo "FAIL: $n main() calls"; exit 1; }
uftrace dump --chrome -d merged >dump.json
"$PY" -c 'import json,sys; d=json.load(open("dump.json")); assert len(d["traceEvents"]) >= 32'
echo ok
