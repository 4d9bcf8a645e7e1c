#!/usr/bin/python3
# tests/faults/mutate.py - the one-byte-corruption driver of the fault tests
# (not a test itself).  Makes COUNT mutants of the input directory SRC, each
# a copy with one byte changed at a random offset of one of its FILEs
# (taken in turn), runs one of the COMMANDs on it (in turn; "{dir}" is the
# mutant directory, "{out}" a fresh output path, "{base}" SRC's parent
# directory) and checks how it ended:
#   - killed by a signal, exit >= 128, a sanitizer report or a hang: FAIL
#   - an exit code not in --ok, or a non-zero exit without a message: FAIL
# With --events 1 the byte is taken from the events of the ring-buffer
# pages of a trace.dat v6 FILE (headers and payloads: each page's committed
# bytes, the flyrecord section's CPU data), not from anywhere in the file.
# usage: mutate.py [--count N] [--seed S] [--jobs J] [--ok CODES] [--events 1]
#                  SRC FILE... -- COMMAND ARGS... [-- COMMAND ARGS...]...
import concurrent.futures, os, random, shutil, struct, subprocess, sys, tempfile, time

TIMEOUT_S = 30
SAN_MARKS = (b"AddressSanitizer", b"LeakSanitizer", b"runtime error:",
             b"UndefinedBehaviorSanitizer")
MAX_FAILS = 5
EXEC_RETRIES = 20
EXEC_RETRY_S = 0.5


def parse(argv):
    opt = {"count": 1000, "seed": 8, "jobs": 3, "ok": {0, 1, 3}}
    i = 0
    while argv[i].startswith("--") and argv[i] != "--":
        k = argv[i][2:]
        opt[k] = {int(c) for c in argv[i + 1].split(",")} if k == "ok" else int(argv[i + 1])
        i += 2
    pos = []
    while argv[i] != "--":
        pos.append(argv[i]); i += 1
    cmds, cur = [], None
    for a in argv[i:]:
        if a == "--":
            cur = []; cmds.append(cur)
        else:
            cur.append(a)
    return opt, pos[0], pos[1:], cmds


def run_cmd(argv):
    """subprocess.run, retried while the program cannot be executed (a
    parallel build relinking it: EACCES/ETXTBSY/ENOENT for a moment)."""
    for _ in range(EXEC_RETRIES):
        try:
            return subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE, timeout=TIMEOUT_S)
        except OSError:
            time.sleep(EXEC_RETRY_S)
    return subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, timeout=TIMEOUT_S)


def run_one(n, src, rel, off, xor, cmd, ok, work):
    d = os.path.join(work, "m%d" % n)
    shutil.copytree(src, d, symlinks=True)
    p = os.path.join(d, rel)
    with open(p, "r+b") as fp:
        fp.seek(off)
        b = fp.read(1)[0] ^ xor
        fp.seek(off)
        fp.write(bytes([b]))
    argv = [a.replace("{dir}", d).replace("{out}", d + ".out")
            .replace("{base}", os.path.dirname(src)) for a in cmd]
    why, rc, err = None, None, b""
    try:
        r = run_cmd(argv)
        rc, err = r.returncode, r.stderr
        if rc < 0 or rc >= 128:
            why = "died (exit %d)" % (rc if rc >= 0 else 128 - rc)
        elif any(m in err for m in SAN_MARKS):
            why = "sanitizer report"
        elif rc not in ok:
            why = "unexpected exit %d" % rc
        elif rc != 0 and not err.strip():
            why = "exit %d without a message" % rc
    except subprocess.TimeoutExpired:
        why = "hung for %d s" % TIMEOUT_S
    if why:
        keep = os.path.join(os.environ.get("VT_TMP", "/tmp"), "mutant-%d" % n)
        shutil.rmtree(keep, ignore_errors=True)
        shutil.copytree(d, keep, symlinks=True)
        why = "%s offset %d: %s: %s (mutant kept in %s)\n%s" % (
            rel, off, " ".join(argv[:2]), why, keep, err.decode(errors="replace")[-1500:])
    shutil.rmtree(d, ignore_errors=True)
    shutil.rmtree(d + ".out", ignore_errors=True) if os.path.isdir(d + ".out") else \
        (os.path.lexists(d + ".out") and os.unlink(d + ".out"))
    return rc, why


PAGE = 4096
COMMIT_MASK = (1 << 27) - 1


def event_ranges(path):
    """[lo, hi) byte ranges of the committed events of @path's pages (a
    trace.dat v6: the CPU (offset, size) pairs after its last "flyrecord")."""
    data = open(path, "rb").read()
    at = data.rfind(b"flyrecord\0")
    if at < 0:
        sys.exit("mutate.py: %s: no flyrecord section" % path)
    ranges, p, end = [], at + len(b"flyrecord\0"), 0
    while p + 16 <= len(data):
        off, size = struct.unpack_from("<QQ", data, p)
        if off % PAGE or off < end or off + size > len(data) or size % PAGE:
            break
        for pg in range(off, off + size, PAGE):
            commit = struct.unpack_from("<Q", data, pg + 8)[0] & COMMIT_MASK
            if 0 < commit <= PAGE - 16:
                ranges.append((pg + 16, pg + 16 + commit))
        end, p = off + size, p + 16
    if not ranges:
        sys.exit("mutate.py: %s: no events in its pages" % path)
    return ranges


def main(argv):
    opt, src, files, cmds = parse(argv)
    rng = random.Random(opt["seed"])
    sizes = {f: os.path.getsize(os.path.join(src, f)) for f in files}
    files = [f for f in files if sizes[f]]
    jobs = []
    ranges = {f: event_ranges(os.path.join(src, f)) for f in files} if opt.get("events") else {}
    for n in range(opt["count"]):
        f = files[n % len(files)]
        if f in ranges:
            lo, hi = ranges[f][rng.randrange(len(ranges[f]))]
            off = rng.randrange(lo, hi)
        else:
            off = rng.randrange(sizes[f])
        jobs.append((n, src, f, off, rng.randrange(1, 256), cmds[n % len(cmds)], opt["ok"]))
    work = tempfile.mkdtemp(prefix="mutate.", dir=os.environ.get("VT_TMP"))
    codes, fails, t0 = {}, [], time.time()
    with concurrent.futures.ThreadPoolExecutor(opt["jobs"]) as ex:
        for rc, why in ex.map(lambda j: run_one(*j, work), jobs):
            codes[rc] = codes.get(rc, 0) + 1
            if why:
                fails.append(why)
    shutil.rmtree(work, ignore_errors=True)
    for w in fails[:MAX_FAILS]:
        print("FAIL: " + w)
    print("%d mutants of %s (%s) in %.1f s: exit codes %s, %d failures" %
          (len(jobs), os.path.basename(src), " ".join(files), time.time() - t0,
           dict(sorted(codes.items(), key=lambda kv: str(kv[0]))), len(fails)))
    return 1 if fails else 0


sys.exit(main(sys.argv[1:]))
