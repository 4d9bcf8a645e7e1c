#!/usr/bin/python3
# pairing.py - the guest workload of the pairing lab test
# (tests/report/t-report-pairing-lab.sh; init runs it with VT_WORKLOAD=pairing
# instead of workload.py): several threads do O_DIRECT reads and writes of
# 4-16 KiB at random aligned offsets of one preallocated file, so several
# requests are in flight at once, and log each as truth: the file offset,
# its length, the direction, and where the file's extents lie on the disk
# (FIEMAP), so the disk byte of each I/O is known without the traces.
#
# usage: pairing.py --dir DIR --log OUT.json [--threads N] [--ops N] [--mb N]
import argparse, fcntl, json, mmap, os, random, struct, threading, time

FS_IOC_FIEMAP = 0xC020660B
FIEMAP_FLAG_SYNC = 1
FIEMAP_EXTENT_LAST = 1
MAX_EXTENTS = 256
BLOCK = 4096


def extents(fd, size):
    """the file's extents as (logical, physical, length) bytes"""
    hdr = struct.pack("=QQIIII", 0, size, FIEMAP_FLAG_SYNC, 0, MAX_EXTENTS, 0)
    buf = bytearray(hdr + b"\0" * (56 * MAX_EXTENTS))
    fcntl.ioctl(fd, FS_IOC_FIEMAP, buf)
    n = struct.unpack_from("=I", buf, 20)[0]
    out = []
    for i in range(n):
        lo, ph, ln = struct.unpack_from("=QQQ", buf, 32 + 56 * i)
        out.append((lo, ph, ln))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--ops", type=int, default=75)
    ap.add_argument("--mb", type=int, default=16)
    a = ap.parse_args()
    path = os.path.join(a.dir, "pairing.dat")
    size = a.mb << 20
    # written once through the page cache and synced: real extents, no
    # unwritten ones to convert while the measured I/O runs
    with open(path, "wb") as f:
        chunk = os.urandom(1 << 20)
        for _ in range(a.mb):
            f.write(chunk)
        f.flush()
        os.fsync(f.fileno())
    fd = os.open(path, os.O_RDWR | os.O_DIRECT)
    ext = extents(fd, size)
    log, lock = [], threading.Lock()

    def worker(k):
        rnd = random.Random(1000 + k)
        buf = mmap.mmap(-1, 4 * BLOCK)          # page-aligned for O_DIRECT
        for _ in range(a.ops):
            n = rnd.choice((1, 1, 2, 4)) * BLOCK
            off = rnd.randrange(0, size - n, BLOCK)
            write = rnd.random() < 0.4
            mv = memoryview(buf)[:n]
            t = time.monotonic_ns()
            got = os.pwritev(fd, [mv], off) if write else os.preadv(fd, [mv], off)
            with lock:
                log.append({"thread": k, "off": off, "len": n, "dir": "W" if write else "R",
                            "ret": got, "t": t})
            mv.release()

    ths = [threading.Thread(target=worker, args=(k,)) for k in range(a.threads)]
    for t in ths:
        t.start()
    for t in ths:
        t.join()
    os.close(fd)
    with open(a.log, "w") as f:
        json.dump({"extents": ext, "ops": log, "file_size": size}, f)
    print("pairing: %d O_DIRECT I/Os by %d threads, %d extents" % (len(log), a.threads, len(ext)))


if __name__ == "__main__":
    main()
