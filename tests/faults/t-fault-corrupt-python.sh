#!/bin/bash
# One byte changed at 1000 random offsets of a real Python tracer directory
# (/usr/bin/python3 -m vmtrace: info, task.txt, the .dat, vmtrace-python.sym,
# the .map, vmtrace.meta): `vmtrace info -r` and `vmtrace merge` never crash
# and never fail silently.
# timeout: 300
set -eu
. "$VT_SRC/tests/faults/lib.sh"
[ -d "$VT_BUILD/python/vmtrace" ] || skip "python tracer not built ($VT_BUILD/python)"

cat >"$VT_TMP/fib.py" <<'PYEOF'
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)
fib(8)
PYEOF
d="$VT_TMP/py"
vt_py -S -m vmtrace -o "$d" "$VT_TMP/fib.py"
run_ok "info of the intact trace" "$VT_BIN" info -r "$d"
files=$(cd "$d" && ls info task.txt *.dat *.sym *.map vmtrace.meta)
"$MUTATE" --count "$MUTANTS" "$d" $files \
	-- "$VT_BIN" info -r "{dir}" \
	-- "$VT_BIN" merge "{dir}" -o "{out}.json" -q

# A writer ended by os._exit (as a SIGKILL would): its records are only in
# <TID>.stage (lib/pystage.h), the .dat is preallocated zeroes.  One byte
# changed in the .stage or the .dat: info, merge and finalize never crash
# nor fail silently.
cat >"$VT_TMP/exit.py" <<'PYEOF'
import os, sys, vmtrace
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)
vmtrace.start(sys.argv[1])
fib(8)
os._exit(0)
PYEOF
k="$VT_TMP/pyk"
vt_py -S "$VT_TMP/exit.py" "$k"
stage=$(cd "$k" && ls *.stage)
dat=${stage%.stage}.dat
"$VT_BIN" merge "$k" -o "$VT_TMP/k.json" -q 2>"$VT_TMP/err" || fail "merge of the intact killed dir"
grep -q "note: $k/$stage: [1-9][0-9]* records not yet folded" "$VT_TMP/err" ||
	fail "merge does not note the staged records: $(cat "$VT_TMP/err")"
all=$(json_events "$VT_TMP/k.json")
"$MUTATE" --count $((MUTANTS / 4)) "$k" "$stage" "$dat" \
	-- "$VT_BIN" info -r "{dir}" \
	-- "$VT_BIN" merge "{dir}" -o "{out}.json" -q \
	-- "$VT_BIN" finalize -f "{dir}"

# The header of the stage broken four ways: merge warns naming the stage
# and exits 3, keeping the .dat's records (none here: the .dat's tail only);
# finalize fails naming it, changes neither file.
corrupt() {	# NAME PYTHON-EXPR-ON-b (bytes of the stage) -> the new bytes
	local c="$VT_TMP/pyk-$1"
	rm -rf "$c"
	cp -a "$k" "$c"
	"$PY" -c 'import sys; p=sys.argv[1]; b=open(p,"rb").read(); b='"$2"'; open(p,"wb").write(b)' \
		"$c/$stage"
	echo "$c"
}
for how in 'magic:b"X"+b[1:]' 'short:b[:8]' 'offset:b[:8]+bytes([3])+b[9:]' \
	   'large:b+bytes(16)'; do
	name=${how%%:*}
	c=$(corrupt "$name" "${how#*:}")
	rc=0
	"$VT_BIN" merge "$c" -o "$c.json" -q 2>"$VT_TMP/err" || rc=$?
	[ $rc = 3 ] || fail "merge with a stage broken ($name): exit $rc, want 3: $(cat "$VT_TMP/err")"
	grep -q "$c/$stage" "$VT_TMP/err" || fail "merge ($name): message does not name the stage"
	json_events "$c.json" >/dev/null || fail "merge ($name): no readable JSON"
	sum=$(cat "$c/$stage" "$c/$dat" | md5sum)
	run_fails "finalize with a stage broken ($name)" "$c/$stage" "$VT_BIN" finalize "$c"
	[ "$(cat "$c/$stage" "$c/$dat" | md5sum)" = "$sum" ] ||
		fail "finalize changed the files of a broken stage ($name)"
done

# A stage cut inside its records (a cut stream): the records before the cut
# are read (merge exit 0) and folded; uftrace replays the fold.
c=$(corrupt cut 'b[:16+16*40+5]')
"$VT_BIN" merge "$c" -o "$c.json" -q 2>"$VT_TMP/err" || fail "merge of a cut stage: $(cat "$VT_TMP/err")"
grep -q "$stage: 40 records not yet folded" "$VT_TMP/err" || fail "cut stage: $(cat "$VT_TMP/err")"
n=$(json_events "$c.json")
[ "$n" -lt "$all" ] || fail "cut stage: $n events, the whole stage gave $all"
"$VT_BIN" finalize -q "$c" || fail "finalize of a cut stage"
[ "$(stat -c %s "$c/$dat")" = $((40 * 16)) ] || fail "cut stage: folded .dat of $(stat -c %s "$c/$dat") bytes"
"$VT_BIN" convert "$c" "$c.ns" >/dev/null
command -v uftrace >/dev/null || skip "uftrace not installed (make deps)"
uftrace replay -d "$c.ns" -f none --no-pager 2>/dev/null | grep -q '__main__.fib' ||
	fail "uftrace cannot replay the folded cut stage"
echo "ok: broken and cut stages"
