#!/usr/bin/python3
# pairing_score.py - pairing accuracy of `vmtrace export --sqlite` against a
# guest workload's own log of its I/O (examples/python-virtio/pairing.py:
# file offsets + the file's extents = the disk bytes of each I/O; a raw
# image: QEMU's file offset = the disk byte).  A request the workload made
# (its sector range and direction are one logged I/O's) is paired right
# when the QEMU syscalls linked to it are of its direction (a write may add
# its read-modify-write reads), each lies on its range, and together they
# cover it: exact by offset, not by overlap in time.  The syscalls' offsets
# come from the host recording's own events in the database (instants),
# so the same scorer judges a database of any vmtrace version: with the
# request_links table all linked syscalls, else the one of host_io_begin.
#
# QEMU's submissions whose offsets no syscall carries (aio=native's
# io_submit, aio=io_uring's SQEs) are judged by the host block layer's
# events in the database: the block_bio_queue of the operation (an
# operation that is a bio), or the bios the submitting thread queued right
# after an io_uring submit event (the kernel issues the SQE there); a
# bio's byte on a raw block device is QEMU's offset; on an image file in
# a host file system, the file offset its extents give (EXTENTS.tsv: the
# host recording's extents.tsv, read here on its own terms - FIEMAP's
# disk bytes, written extents only; a bio they do not map is not right).
#
# Requests with no host I/O linked and no QEMU read/write syscall near
# their range in their window anywhere in the recording are counted apart
# (unrecorded: the truth is not in the data; e.g. a worker QEMU spawned
# mid-run did the I/O before the recorder's next poll followed it).
#
# usage: pairing_score.py OUT.db [pairing.json [EXTENTS.tsv]]   (prints one line of figures
# and "accuracy=P"; exit 0)
import json, sqlite3, sys

db = sqlite3.connect(sys.argv[1])
db.execute("CREATE INDEX IF NOT EXISTS score_instants_ts ON instants(ts)")
# no workload log: every read and write request is judged (the default
# example's: its truth is where QEMU's own syscalls say they went)
log = json.load(open(sys.argv[2])) if len(sys.argv) > 2 else None
ext = log["extents"] if log else []

def disk(off, n):
    for lo, ph, ln in ext:
        if lo <= off and off + n <= lo + ln:
            return ph + off - lo
    return None

truth = {}
for o in log["ops"] if log else []:
    b = disk(o["off"], o["len"])
    if b is not None and b % 512 == 0:
        truth[(b // 512, o["len"] // 512, o["dir"])] = truth.get((b // 512, o["len"] // 512, o["dir"]), 0) + 1

# the image file's extents: (dev, disk byte, length, file offset)
fext = []
if len(sys.argv) > 3:
    for l in open(sys.argv[3]):
        f = l.rstrip("\n").split("\t")
        if l.startswith("#") or len(f) != 11 or int(f[10], 16) & 0xf0e:
            continue            # unknown, delalloc, encoded, not aligned, inline, tail, unwritten
        ma, mi = map(int, f[5].split(":"))
        fext.append((ma << 20 | mi, int(f[6]) + int(f[8]), int(f[9]), int(f[7])))
fdevs = {e[0] for e in fext}

def file_range(dev, b, n):
    """the file offset of @n disk bytes at @b of @dev: None when an
    image's disk but no extent holds them; the byte itself elsewhere"""
    if dev not in fdevs:
        return b
    for dv, pb, ln, lo in fext:
        if dv == dev and pb <= b and b + n <= pb + ln:
            return lo + b - pb
    return None

def args(ts, tid, prefix):
    """the fields of the host syscall event @prefix* at @ts on thread @tid"""
    r = db.execute("SELECT i.name, i.args FROM instants i JOIN threads t USING(utid) "
                   "WHERE i.ts = ? AND t.tid = ? AND t.machine = 0 AND i.name LIKE ?",
                   (ts, tid, prefix + "%")).fetchone()
    return (r[0], json.loads(r[1] or "{}")) if r else (None, {})

def bio_range(a):
    """the bytes and direction of a block_bio_queue event's fields"""
    rw = a.get("rwbs", "")
    d = "W" if "W" in rw else "R" if "R" in rw else None
    if not d or not a.get("nr_sector"):
        return None
    off = file_range(a.get("dev"), a["sector"] * 512, a["nr_sector"] * 512)
    return (off, a["nr_sector"] * 512, d) if off is not None else None

def uring_range(ts, tid):
    """the bios @tid queued after its io_uring submit at @ts, before its
    next submit: contiguous from the first"""
    nxt = db.execute("SELECT min(i.ts) FROM instants i JOIN threads t USING(utid) WHERE t.tid = ? "
                     "AND t.machine = 0 AND i.ts > ? AND i.name LIKE 'io_uring_submit%'",
                     (tid, ts)).fetchone()[0]
    rng = None
    for (a,) in db.execute("SELECT i.args FROM instants i JOIN threads t USING(utid) WHERE "
                           "t.tid = ? AND t.machine = 0 AND i.ts > ? AND i.ts < ? AND "
                           "i.name = 'block_bio_queue' ORDER BY i.ts",
                           (tid, ts, nxt if nxt is not None else 1 << 62)):
        b = bio_range(json.loads(a or "{}"))
        if not b:
            break
        if rng is None:
            rng = b
        elif rng[0] + rng[1] == b[0] and rng[2] == b[2]:
            rng = (rng[0], rng[1] + b[1], rng[2])
        else:
            break
    return rng

def syscall_range(ts, tid):
    name, a = args(ts, tid, "sys_enter_p")
    if not name:
        name, a = args(ts, tid, "block_bio_queue")
        if name:
            return bio_range(a)
        name, a = args(ts, tid, "io_uring_submit")
        return uring_range(ts, tid) if name else None
    off = a.get("pos", a.get("pos_l"))
    d = "R" if "read" in name else "W"
    # the bytes done: the exit's return on that thread
    r = db.execute("SELECT i.args FROM instants i JOIN threads t USING(utid) WHERE t.tid = ? "
                   "AND t.machine = 0 AND i.ts > ? AND i.name = ? ORDER BY i.ts LIMIT 1",
                   (tid, ts, name.replace("enter", "exit"))).fetchone()
    ret = json.loads(r[0]).get("ret") if r and r[0] else None
    n = ret if ret and ret < (1 << 62) else a.get("count")
    return (off, n, d) if off is not None and n else None

def recorded(lo, hi, d, t0, t1):
    """1 if the host recording holds a QEMU syscall of direction @d on bytes
    [lo, hi) entered between t0 and t1 (else its I/O is not in the data:
    e.g. done by a worker QEMU spawned before the recorder followed it)"""
    return db.execute(
        "SELECT count(*) FROM instants i JOIN threads t USING(utid) JOIN processes p USING(upid) "
        "WHERE t.machine = 0 AND p.name LIKE 'host: QEMU%' AND i.ts BETWEEN ? AND ? AND "
        "i.name LIKE ? AND "
        "coalesce(json_extract(i.args, '$.pos'), json_extract(i.args, '$.pos_l')) < ? AND "
        "coalesce(json_extract(i.args, '$.pos'), json_extract(i.args, '$.pos_l')) + 1048576 > ?",
        (t0, t1, "sys_enter_pread%" if d == "R" else "sys_enter_pwrite%", hi, lo)).fetchone()[0] > 0 or \
        any(r is not None and r[0] < hi and r[0] + 1048576 > lo for r in (bio_range(json.loads(a)) for (a,) in db.execute(
        "SELECT i.args FROM instants i JOIN threads t USING(utid) JOIN processes p USING(upid) "
        "WHERE t.machine = 0 AND p.name LIKE 'host: QEMU%' AND i.ts BETWEEN ? AND ? AND "
        "i.name = 'block_bio_queue' AND json_extract(i.args, '$.rwbs') LIKE ?",
        (t0, t1, "%" + d + "%"))))
have_links = db.execute("SELECT count(*) FROM sqlite_master WHERE name = 'request_links'").fetchone()[0]
ok = made = total = complete = guess = unrecorded = 0
served = {}     # the linked QEMU operations of the workload's requests, by name
for rid, sector, nr, rwbs, hb, htid, links, iss, done in db.execute(
        "SELECT id, sector, nr_sector, rwbs, host_io_begin, host_tid, links, rq_issue, "
        "rq_complete FROM requests"):
    total += 1
    complete += links is not None and all(c != "." for c in links[3:10])
    d = "W" if rwbs and "W" in rwbs else "R" if rwbs and "R" in rwbs else None
    if (sector, nr, d) not in truth and (log or not d or not nr):
        continue
    if hb is None and iss and done and not recorded(sector * 512, (sector + nr) * 512, d, iss, done):
        unrecorded += 1         # the truth is not in the recording
        continue
    made += 1
    if have_links:
        ops = db.execute("SELECT ts, tid, method, syscall FROM request_links WHERE "
                         "request_id = ? AND link = 'host_io'", (rid,)).fetchall()
        guess += any(m == "time-guess" for _, _, m, _ in ops)
        for *_, n in ops:
            served[n] = served.get(n, 0) + 1
        ops = [(t, u) for t, u, _, _ in ops]
    else:
        ops = [(hb, htid)] if hb is not None else []
    lo, hi = sector * 512, (sector + nr) * 512
    rng = [syscall_range(t, u) for t, u in ops]
    mine = [(o, n) for o, n, dd in filter(None, rng) if dd == d]
    right = bool(ops) and None not in rng and all(
        o < hi and o + n > lo for o, n, _ in rng) and all(lo <= o and o + n <= hi or
                                                          (o <= lo and o + n >= hi) for o, n in mine)
    covered = lo
    for o, n in sorted(mine):
        if o <= covered:
            covered = max(covered, o + n)
    ok += right and covered >= hi
# what QEMU's process did on the host, by event and thread name (the
# back-end's evidence: which operations, from the workers, the main loop
# or an iothread)
seen = db.execute(
    "SELECT i.name || ' (' || CASE WHEN t.name LIKE 'worker%' THEN 'worker' ELSE t.name END "
    "|| ')', count(*) FROM instants i JOIN threads t USING(utid) JOIN processes p "
    "USING(upid) WHERE t.machine = 0 AND p.name LIKE 'host: QEMU%' AND (i.name IN "
    "('sys_enter_io_submit', 'sys_enter_io_getevents', 'sys_enter_io_uring_enter', "
    "'block_bio_queue', 'sys_enter_fdatasync') OR i.name LIKE 'io_uring_submit%' OR "
    "i.name LIKE 'sys_enter_pread%' OR i.name LIKE 'sys_enter_pwrite%') GROUP BY 1 "
    "ORDER BY 2 DESC").fetchall()
uring = db.execute("SELECT i.args FROM instants i WHERE i.name LIKE 'io_uring_submit%'").fetchall()
ops = {}
for (a,) in uring:
    o = json.loads(a or "{}").get("opcode")
    ops[o] = ops.get(o, 0) + 1
print("QEMU's host events: %s; io_uring submits by opcode: %s" %
      (", ".join("%s %d" % r for r in seen) or "none",
       ", ".join("%s: %d" % (k, v) for k, v in sorted(ops.items(), key=lambda x: str(x[0])))
       or "none"), file=sys.stderr)
print("requests=%d workload_requests=%d paired_right=%d guessed=%d complete_chains=%d "
      "unrecorded=%d served_by=%s accuracy=%.1f" %
      (total, made, ok, guess, complete, unrecorded,
       ",".join("%s:%d" % (n.replace(" ", "_"), c) for n, c in
                sorted(served.items(), key=lambda x: -x[1])) or "-",
       100.0 * ok / made if made else 0))
