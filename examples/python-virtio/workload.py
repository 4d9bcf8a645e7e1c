"""The python-virtio example's guest workload: I/O-bound on purpose.

Several functions write, fsync and read back files on the virtio-blk data
disk, with some CPU work (hashing, compression) between them, so the merged
timeline shows Python calls waiting on guest block I/O that the host's QEMU
serves.  The sync markers come from /init around and during the run
(`vmtrace marker`).  Runs under Debian's python3.11 in the guest; needs only
the standard library.
"""
import argparse
import hashlib
import json
import os
import time
import zlib

CHUNK_BYTES = 64 * 1024


def make_payload(size, seed):
    """CPU work: a deterministic, partly compressible buffer."""
    block = hashlib.sha256(str(seed).encode()).digest() * (CHUNK_BYTES // 32)
    out = bytearray()
    while len(out) < size:
        out += block
    return bytes(out[:size])


def write_file(path, data):
    """Write in chunks, then fsync: the fsync waits for the virtio disk."""
    with open(path, "wb") as f:
        for off in range(0, len(data), CHUNK_BYTES):
            f.write(data[off:off + CHUNK_BYTES])
        f.flush()
        os.fsync(f.fileno())


def append_journal(path, line):
    """Small synchronous appends: one fsync each."""
    with open(path, "a") as f:
        f.write(line + "\n")
        f.flush()
        os.fsync(f.fileno())


def drop_caches():
    """Make the next read come from the disk, not the page cache."""
    try:
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")
    except OSError:
        pass


def read_file(path):
    with open(path, "rb") as f:
        return f.read()


def checksum(data):
    """CPU work on what was read back."""
    return hashlib.sha1(data).hexdigest()


def compress(data):
    """More CPU work: zlib at a middling level."""
    return len(zlib.compress(data, 6))


def one_round(root, i, size):
    path = os.path.join(root, "file-%d.bin" % i)
    data = make_payload(size, i)
    write_file(path, data)
    append_journal(os.path.join(root, "journal.txt"), "wrote %s" % path)
    drop_caches()
    back = read_file(path)
    if checksum(back) != checksum(data):
        raise SystemExit("data read back from %s differs" % path)
    return compress(back)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--dir", required=True, help="mounted data disk")
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--mb", type=int, default=4, help="MiB written per round")
    ap.add_argument("--summary", help="write a JSON summary here")
    args = ap.parse_args()

    t0 = time.monotonic()
    total = 0
    for i in range(args.rounds):
        total += one_round(args.dir, i, args.mb << 20)
    summary = {"rounds": args.rounds, "mb_per_round": args.mb,
               "compressed_bytes": total,
               "seconds": round(time.monotonic() - t0, 3)}
    if args.summary:
        with open(args.summary, "w") as f:
            json.dump(summary, f)
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
