#!/bin/bash
# vmtrace export --sqlite on the known-answer fixture, read back with the
# sqlite3 CLI: per-stage count/p50/p90/p99/max computed by SQL over the
# request_stages view equal the text report's figures (and the fixture's);
# the event tables hold what merge put on the timeline (vCPU thread, exit
# slices with args, Python slices, guest kernel instants, processes);
# errors: a missing input leaves no database, usage errors exit 2.
set -eu
. "$VT_SRC/tests/report/common.sh"
command -v sqlite3 >/dev/null || { echo "no sqlite3 CLI (apt-get install sqlite3)"; exit 77; }
cd "$VT_TMP"
mk_fixture . 40
"$VT_BIN" report h g --no-align -q >rep.txt
"$VT_BIN" export --sqlite out.db h g --no-align -q
[ -s out.db ] && [ ! -e out.db.tmp ]
q() { sqlite3 -batch -noheader out.db "$1"; }
: >sql.txt
for st in py_to_sys sys_to_issue queue issue_to_kick kick_to_host_io host_io host_io_to_inject \
	inject_to_irq irq_to_complete complete_to_sys_exit sys_exit_to_py_end device host syscall; do
	# nearest-rank percentile p: the ceil(n*p/100)-th smallest value
	pct() { echo "(SELECT $st FROM request_stages WHERE $st IS NOT NULL ORDER BY $st
		LIMIT 1 OFFSET (SELECT (count($st) * $1 + 99) / 100 - 1 FROM request_stages))"; }
	echo "$st $(q "SELECT count($st), $(pct 50), $(pct 90), $(pct 99), max($st)
		FROM request_stages" | tr '|' ' ')" >>sql.txt
done
cat sql.txt
"$PY" - rep.txt sql.txt expected.json <<'PYEOF'
import json, re, sys
txt = open(sys.argv[1]).read(); exp = json.load(open(sys.argv[3]))
def ns(s):
    a, b = s.split("."); return int(a) * 1000 + int(b)
rep = {}
for l in txt.splitlines():
    m = re.match(r"  (\w+) +.+? +(\d+) +([\d.]+) +([\d.]+) +([\d.]+) +([\d.]+)$", l)
    if m: rep[m.group(1)] = [int(m.group(2))] + [ns(m.group(i)) for i in range(3, 7)]
for l in open(sys.argv[2]):
    st, *v = l.split(); v = [int(x) for x in v]
    e = exp["stages"][st]
    if v != rep.get(st) or v != [e["n"], e["p50"], e["p90"], e["p99"], e["max"]]:
        sys.exit("FAIL: %s: sql %s, report %s, expected %s" % (st, v, rep.get(st), e))
print("ok: SQL per-stage figures == text report == fixture")
PYEOF
[ "$(q "SELECT count(*) FROM requests WHERE links = 'PSQIKHDJRCXE'")" = 40 ]
[ "$(q "SELECT count(*) FROM requests WHERE python_stack = 'app.main (app.py:1) > app.save (app.py:10)'")" = 40 ]
[ "$(q "SELECT t.name FROM threads t JOIN processes p USING(upid) WHERE tid = 4243 AND p.name = 'host: QEMU (pid 4242)'")" = "vCPU 0" ]
[ "$(q "SELECT count(*), sum(dur), min(json_extract(args, '\$.exit_reason')) FROM slices WHERE name = 'exit: io'")" = "40|16000|123" ]
[ "$(q "SELECT count(*), sum(dur) FROM slices WHERE name = 'app.save (app.py:10)'")" = "40|40000000" ]
[ "$(q "SELECT count(*) FROM instants i JOIN threads t USING(utid) WHERE i.name = 'block_rq_issue' AND t.machine = 1 AND t.tid = 200")" = 40 ]
[ "$(q "SELECT count(*) FROM instants WHERE name = 'kvm_pio' AND json_extract(args, '\$.port') = 1520")" = 40 ]
# one SQL query answers "which Python function waits longest on the host disk"
q "SELECT python_stack, sum(host_io_end - host_io_begin) FROM requests GROUP BY 1" | grep -q '^app.main (app.py:1) > app.save (app.py:10)|[0-9]'
echo "ok: tables"
# errors
rc=0; "$VT_BIN" export --sqlite bad.db h nonexistent -q 2>err.txt || rc=$?
[ "$rc" = 1 ] && [ ! -e bad.db ] && [ ! -e bad.db.tmp ] && grep -q nonexistent err.txt ||
	{ cat err.txt; echo "FAIL: missing input rc=$rc"; exit 1; }
rc=0; "$VT_BIN" export h g 2>err.txt || rc=$?
[ "$rc" = 2 ] || { echo "FAIL: export without --sqlite rc=$rc"; exit 1; }
rc=0; "$VT_BIN" report h g --top x 2>err.txt || rc=$?
[ "$rc" = 2 ] || { echo "FAIL: bad --top rc=$rc"; exit 1; }
echo "ok: errors"
