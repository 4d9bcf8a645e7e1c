#!/bin/bash
# uftrace output: `uftrace replay` (a consumer we did not write) shows host
# and guest threads side by side, with the slice names and ns durations,
# and `uftrace dump --chrome` reads it whole; every exit record sits at
# its entry's depth.  Also the format chosen by
# OUT: a path without extension is a uftrace directory; an output that
# cannot be made (a directory with trace files, a path under a file, a
# path too long) fails with exit 1 and leaves the inputs' files alone.
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
# every exit record at its entry's depth (uftrace dump's raw records)
uftrace dump -d merged --no-pager >raw.txt
"$PY" - raw.txt <<'PYEOF'
import re, sys
stacks, n = {}, 0
for l in open(sys.argv[1]):
    m = re.search(r"(\d+): \[(entry|exit )\] (\S+)\(.*depth: (\d+)", l)
    if not m:
        continue
    st = stacks.setdefault(m.group(1), [])
    if m.group(2) == "entry":
        st.append((m.group(3), m.group(4)))
    else:
        n += 1
        if not st or st.pop() != (m.group(3), m.group(4)):
            sys.exit("FAIL: exit of %s at depth %s has no entry there" % (m.group(3), m.group(4)))
assert n >= 16, n
print("%d exits, each at its entry's depth" % n)
PYEOF
uftrace dump --chrome -d merged >dump.json
"$PY" -c 'import json,sys; d=json.load(open("dump.json")); assert len(d["traceEvents"]) >= 32'
# outputs that cannot be made: exit 1 (2 for an existing directory: a
# usage error, --force is the way, as run and convert), said why, nothing
# written
out_fail() {	# PATTERN OUT [RC]
	local rc=0
	"$VT_BIN" merge h g -o "$2" -q 2>err.txt || rc=$?
	[ $rc = "${3:-1}" ] || { cat err.txt; echo "FAIL: -o ${2:0:40}...: exit $rc, want ${3:-1}"; exit 1; }
	grep -qF -- "$1" err.txt || { cut -c1-200 err.txt; echo "FAIL: -o ${2:0:40}...: no '${1:0:80}'"; exit 1; }
}
cp merged/info info.before
out_fail 'merged: directory exists and is not empty (remove it, or give --force' merged 2
cmp -s info.before merged/info || { echo "FAIL: a refused merge rewrote merged/info"; exit 1; }
# --force replaces the trace files (another merge: one input)
"$VT_BIN" merge g -o merged --force -q || { echo "FAIL: merge --force onto merged/"; exit 1; }
cmp -s info.before merged/info && { echo "FAIL: merge --force left merged/info as it was"; exit 1; }
uftrace replay -d merged >/dev/null || { echo "FAIL: uftrace cannot replay the forced merge"; exit 1; }
touch afile
out_fail 'afile/out: cannot create directory: Not a directory' afile/out
# (the message names the path; its reason, "path too long", is cut off
# with the message's end: the path alone fills vt_err's buffer)
long=$(printf 'd%.0s' $(seq 4200))
out_fail "vmtrace: merge: ${long:0:100}" "$long"
[ ! -e "${long:0:255}" ] || { echo "FAIL: a path too long made a directory"; exit 1; }
echo ok
