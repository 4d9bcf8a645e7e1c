#!/bin/bash
# Exact pairing of guest block requests with QEMU's work, on a fixture with
# KNOWN answers (mkpairing.py: two vCPUs, requests in flight at once, host
# syscalls out of order, throttling, a split write, a merged preadv, a
# read-modify-write, a flush completed at sector 2^64-1 next to a write at
# sector 0, an iothread "IO io0", a foreign qemu-nbd process reading the
# same offset, another device's kicks and MSI, the timer vector): every
# request's QEMU syscalls (thread, offset, length), kick (time, notify
# address) and injection (time, thread, MSI data) read back from
# `vmtrace export --sqlite` (table request_links) equal the truth, each link
# says how it was matched, nothing is a guess; the text report counts the
# methods.  Then the same host recording without the offsets, and with
# QEMU aio=io_uring (io_uring tracepoints: each operation submit ->
# complete) and aio=native (io_submit: no end): time guesses, counted and
# said so.  Last, both on a host block device with the host's block events
# (the bio each submission queues, its block_rq_complete): exact again,
# io_uring's operations submit -> complete, Linux AIO's bio -> completion.
set -eu
. "$VT_SRC/tests/report/common.sh"
command -v sqlite3 >/dev/null || { echo "no sqlite3 CLI (apt-get install sqlite3)"; exit 77; }
for ev in syscalls/sys_enter_pread64 syscalls/sys_enter_preadv syscalls/sys_enter_fdatasync \
	kvm/kvm_msi_set_irq kvm/kvm_mmio; do
	[ -r /sys/kernel/tracing/events/$ev/format ] || { echo "no tracefs event format $ev"; exit 77; }
done
cd "$VT_TMP"
mkdir -p h g
"$PY" "$VT_SRC/tests/report/mkpairing.py" .
"$GTD" h/trace.dat <host.txt
"$GTD" g/trace.dat <guest.txt
cp host.meta h/vmtrace.meta
cp guest.meta g/vmtrace.meta
"$VT_BIN" report h g --no-align -q >rep.txt
"$VT_BIN" export --sqlite out.db h g --no-align -q
sed -n '/^How the links/,/^$/p' rep.txt
# links DB: each request's kick, QEMU operations and injection
links() {
	sqlite3 -batch -noheader -separator '|' "$1" \
		"SELECT r.sector, r.nr_sector, r.rwbs, l.link, l.ts, l.method, l.tid, l.syscall, l.offset,
			l.length, l.address, l.data
		   FROM request_links l JOIN requests r ON r.id = l.request_id
		  WHERE l.link IN ('kick', 'host_io', 'inject') ORDER BY r.id, l.link, l.ts"
}
links out.db >links.txt
# check.py LINKS EXPECTED.json REPORT.txt RULE: every link as the truth has
# it, the methods counted in the report, RULE its offset rule line
cat >check.py <<'PYEOF'
import json, sys
exp = json.load(open(sys.argv[2])); txt = open(sys.argv[3]).read()
got = {}
for l in open(sys.argv[1]):
    sec, nr, rwbs, link, ts, how, tid, sysc, off, ln, addr, data = l.rstrip("\n").split("|")
    got.setdefault((int(sec), int(nr), rwbs), []).append(
        (link, int(ts), how, int(tid) if tid else None, sysc or None, int(off) if off else None,
         int(ln) if ln else None, int(addr) if addr else None, int(data) if data else None))
bad = 0
for q in exp["requests"]:
    key = (q["sector"], q["nr_sector"], q["rwbs"])
    rows = got.get(key, [])
    want = [("host_io", o["ts"], q["method"], o["tid"], o["syscall"], o["offset"], o["length"],
             None, None) for o in q["host_io"]]
    want.append(("inject", q["inject"], "msi", q["inject_tid"], None, None, None,
                 None, q["inject_data"]))
    want.append(("kick", q["kick"], "notify-addr", None, None, None, None, q["kick_addr"], None))
    g = sorted([(r[0], r[1], r[2], r[3] if r[0] != "kick" else None, r[4], r[5], r[6],
                 r[7] if r[0] == "kick" else None, r[8] if r[0] == "inject" else None)
                for r in rows])
    for r in rows:      # the MSI's address names its destination vCPU
        if r[0] == "inject" and r[7] not in (0xfee00000, 0xfee01000):
            g.append(("bad msi address", r[7]))
    if g != sorted(want):
        bad += 1
        print("FAIL: request %s:\n  got  %s\n  want %s" % (key, g, sorted(want)))
n = len(exp["requests"])
print("pairing: %d of %d requests exact (host syscalls, kick, injection)" % (n - bad, n))
if bad:
    sys.exit(1)
for l in ["host_io_begin ",
          "guesses: 0 links in 0 of %d requests" % n,
          sys.argv[4]]:
    if l not in txt:
        sys.exit("FAIL: report text lacks %r" % l)
import re
m = re.search(r"host_io_begin +(.*)", txt)
want = {"exact-offset": 7, "split": 1, "covering": 2, "rmw": 1, "flush": 1}
have = {k: int(v) for v, k in re.findall(r"(\d+) ([\w-]+)", m.group(1))}
if have != want:
    sys.exit("FAIL: host_io_begin methods %s want %s" % (have, want))
print("ok: every pairing exact; methods counted, no guess")
PYEOF
"$PY" check.py links.txt expected.json rep.txt "QEMU fd 12, file offset = sector * 512 + 0"
# each request's own completion: the flush is completed by its 2^64-1
# completion, not by the write at sector 0
[ "$(sqlite3 out.db "SELECT count(*) FROM requests WHERE rq_complete IS NULL")" = 0 ]
# the host recording without offsets (another back-end's syscalls): the
# host I/O links are time guesses and the report says so
sed -e 's/ count=[0-9]* pos=[0-9]*//' -e 's/ pos_l=[0-9]* pos_h=0//' host.txt >host2.txt
mkdir -p h2 && "$GTD" h2/trace.dat <host2.txt && cp host.meta h2/vmtrace.meta
"$VT_BIN" report h2 g --no-align -q >rep2.txt
grep -q "no offset rule holds" rep2.txt
grep -Eq "^  host_io_begin +1 flush, [0-9]+ time-guess" rep2.txt ||
	{ grep host_io_begin rep2.txt; echo "FAIL: guesses not said"; exit 1; }
echo "ok: without offsets the host I/O is a counted guess"
# QEMU aio=io_uring: each operation from its io_uring_submit_req to the
# io_uring_complete of the same user_data (completed in interrupt
# context); no offsets: read/write links are counted guesses, the flush is
# identified by its FSYNC opcode
mkdir -p u/h && "$PY" "$VT_SRC/tests/report/mkpairing.py" u uring
"$GTD" u/h/trace.dat <u/host.txt && cp host.meta u/h/vmtrace.meta
"$VT_BIN" report u/h g --no-align -q >rep3.txt
"$VT_BIN" export --sqlite u.db u/h g --no-align -q
sqlite3 -batch -noheader -separator '|' u.db \
	"SELECT r.sector, l.ts, l.ts_end, l.method, l.syscall FROM request_links l
	   JOIN requests r ON r.id = l.request_id WHERE l.link = 'host_io'" >u.txt
"$PY" - u.txt u/expected.json rep3.txt <<'PYEOF'
import json, re, sys
exp = json.load(open(sys.argv[2]))["requests"]; txt = open(sys.argv[3]).read()
ops = {(o["ts"], o["ts_end"], o["syscall"]) for q in exp for o in q["host_io"]}
rows = [l.rstrip("\n").split("|") for l in open(sys.argv[1])]
for sec, ts, end, how, sysc in rows:
    if (int(ts), int(end), sysc) not in ops:
        sys.exit("FAIL: io_uring operation %s..%s %s is no submit->complete pair" % (ts, end, sysc))
    if (how == "flush") != (sysc == "io_uring FSYNC" and sec == "-1") or how not in ("flush", "time-guess"):
        sys.exit("FAIL: request %s: %s by %s" % (sec, sysc, how))
m = re.search(r"host_io_begin +1 flush, (\d+) time-guess", txt)
g = re.search(r"guesses: (\d+) links", txt)
if not m or not g or int(m.group(1)) != len(rows) - 1 or int(g.group(1)) != len(rows) - 1:
    sys.exit("FAIL: io_uring guesses not counted: %s" % (m and m.group(0)))
print("ok: io_uring: %d operations submit->complete, %d counted guesses, the flush by opcode"
      % (len(rows), len(rows) - 1))
PYEOF
# QEMU aio=native (Linux AIO): io_submit carries no offset and no syscall
# marks the completion: each read/write request's host I/O is an io_submit
# entry, a counted guess, and D stays missing (not the submit's return)
mkdir -p n/h && "$PY" "$VT_SRC/tests/report/mkpairing.py" n native
"$GTD" n/h/trace.dat <n/host.txt && cp host.meta n/h/vmtrace.meta
"$VT_BIN" export --sqlite n.db n/h g --no-align -q
[ "$(sqlite3 n.db "SELECT count(*) FROM requests WHERE rwbs != 'FF' AND host_io_begin IS NOT NULL
	AND host_io_end IS NULL AND host_syscall = 'io_submit'")" = 11 ] ||
	{ sqlite3 n.db "SELECT sector, links, host_syscall FROM requests"; echo "FAIL: aio=native"; exit 1; }
[ "$(sqlite3 n.db "SELECT count(DISTINCT request_id) FROM request_links WHERE method = 'time-guess'")" = 11 ]
[ "$(sqlite3 n.db "SELECT l.method || ' ' || l.syscall FROM request_links l JOIN requests r ON r.id = l.request_id
	WHERE r.rwbs = 'FF' AND l.link = 'host_io'")" = "flush fdatasync" ]
echo "ok: aio=native: 11 io_submit guesses without an end, the flush exact"
# on a host block device, with the host's block events: each submission's
# bio names its disk bytes (io_uring: the bio queued right after the
# submit, the operation still submit -> complete; Linux AIO: the bio,
# queued in io_submit, to its block_rq_complete): exact, no guess
for m in uring-bio native-bio; do
	mkdir -p "$m/h" && "$PY" "$VT_SRC/tests/report/mkpairing.py" "$m" "$m"
	"$GTD" "$m/h/trace.dat" <"$m/host.txt" && cp host.meta "$m/h/vmtrace.meta"
	"$VT_BIN" report "$m/h" g --no-align -q >"$m.rep.txt"
	"$VT_BIN" export --sqlite "$m.db" "$m/h" g --no-align -q
	links "$m.db" >"$m.links.txt"
	"$PY" check.py "$m.links.txt" "$m/expected.json" "$m.rep.txt" \
		"host block device 7:0 (QEMU's bios), byte = sector * 512 + 0" ||
		{ sed -n '/^How the links/,/^$/p' "$m.rep.txt"; echo "FAIL: $m"; exit 1; }
	# Linux AIO: each read/write's host I/O ends at its bio's completion
	[ "$m" = uring-bio ] || [ "$(sqlite3 "$m.db" "SELECT count(*) FROM requests WHERE rwbs != 'FF'
		AND (host_io_end IS NULL OR host_syscall != 'io_submit')")" = 0 ] ||
		{ sqlite3 "$m.db" "SELECT sector, links, host_syscall FROM requests"; echo "FAIL: $m: no end"; exit 1; }
	echo "ok: $m: exact by the host's bios"
done
# an image file on a host file system (partition 8:1 of disk 8:0): the
# bios are at the disk bytes of the file's extents, which the host
# recording's extents.tsv (read at its start and end) maps back to QEMU's
# fd and file offset: exact again; stray bios in an extent unwritten
# throughout, in one that moved between the readings and outside every
# extent are counted, not mapped (docs/report.md, "QEMU's bios")
for m in uring-ext native-ext; do
	mkdir -p "$m/h" && "$PY" "$VT_SRC/tests/report/mkpairing.py" "$m" "$m"
	"$GTD" "$m/h/trace.dat" <"$m/host.txt" && cp host.meta "$m/h/vmtrace.meta"
	cp "$m/extents.tsv" "$m/h/"
	"$VT_BIN" report "$m/h" g --no-align -q >"$m.rep.txt"
	"$VT_BIN" export --sqlite "$m.db" "$m/h" g --no-align -q
	links "$m.db" >"$m.links.txt"
	"$PY" check.py "$m.links.txt" "$m/expected.json" "$m.rep.txt" \
		"QEMU fd 12, file offset = sector * 512 + 0" ||
		{ sed -n '/^How the links/,/^$/p' "$m.rep.txt"; echo "FAIL: $m"; exit 1; }
	grep -q "QEMU's bios on image files (extents.tsv): 12 mapped to file offsets, 2 in unwritten or changed extents, 1 outside the files' extents" "$m.rep.txt" ||
		{ grep "QEMU's bios" "$m.rep.txt"; echo "FAIL: $m: bios not counted"; exit 1; }
	echo "ok: $m: exact by the image file's extents, the unmappable bios counted"
done
# a bad extents.tsv is an error, not silently no mapping
printf '# vmtrace-extents 1\nstart\t1\t2\n' >uring-ext/h/extents.tsv
if "$VT_BIN" report uring-ext/h g --no-align -q >/dev/null 2>bad.err; then
	echo "FAIL: a bad extents.tsv was taken"; exit 1
fi
grep -q "extents.tsv:2: bad extent line" bad.err
echo "ok: a bad extents.tsv is refused"
