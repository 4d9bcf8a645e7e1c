"""The examples' waits while the host is recorded, each one process for its
whole wait (the host recording holds every process's scheduling: a shell
loop of date/grep/stat/sleep put ~10 short-lived processes a second of the
example's own into it).  Only the standard library: /usr/bin/python3.
Each names itself vt-example-wait (its comm, what the host recording
and the merged timeline show), so the example's own helper stands out.

  waits.py line FILE PATTERN SECONDS PID
      until FILE holds PATTERN (exit 0); 1 after SECONDS, or when PID is gone
      without it
  waits.py watch END PID OUT DONE STEP
      every STEP s, until PID is gone, the time END (epoch s) or OUT/console.log
      holding DONE: "<ms since start> <bytes of OUT/guest.stream>" lines into
      OUT/stream-growth.txt
  waits.py exit PID SECONDS
      until PID (any process, not only a child) is gone (exit 0); 1 after
      SECONDS
"""
import os
import select
import sys
import time

# what the examples' own processes are called in the host recording
# (examples/python-virtio/README.md); a comm holds 15 bytes
NAME = "vt-example-wait"


def name_self():
    try:
        with open("/proc/self/comm", "w") as f:
            f.write(NAME)
    except OSError:
        pass


def alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except OSError:
        return False


_seen = {}          # path -> (bytes read so far, their last len(pat) - 1 bytes)


def holds(path, pat):
    """True once the growing file holds pat; each call reads only what was
    appended since the last (a poll must not re-read a whole console log:
    this process shares the recorded host's CPU with the vCPU)."""
    off, tail = _seen.get(path, (0, b""))
    try:
        with open(path, "rb") as f:
            if os.fstat(f.fileno()).st_size < off:
                off, tail = 0, b""          # replaced or cut: from the start
            f.seek(off)
            new = f.read()
    except OSError:
        return False
    buf = tail + new
    _seen[path] = (off + len(new), buf[-(len(pat) - 1):] if len(pat) > 1 else b"")
    return pat in buf


def line(path, pat, secs, pid):
    end = time.time() + float(secs)
    pat, pid = pat.encode(), int(pid)
    while time.time() < end:
        if holds(path, pat):
            return 0
        if not alive(pid):
            return 0 if holds(path, pat) else 1
        time.sleep(0.2)
    return 1


def watch(end, pid, out, done, step):
    end, pid, done, step = int(end), int(pid), done.encode(), float(step)
    t0 = time.time()
    with open(os.path.join(out, "stream-growth.txt"), "w") as g:
        while alive(pid) and time.time() < end and not holds(os.path.join(out, "console.log"), done):
            try:
                size = os.stat(os.path.join(out, "guest.stream")).st_size
            except OSError:
                size = 0
            g.write("%d %d\n" % ((time.time() - t0) * 1000, size))
            g.flush()
            time.sleep(step)
    return 0


def gone(pid, secs):
    """0 once @pid has ended, 1 after @secs: a pidfd wakes it at the exit
    (no polling), else a 0.2 s poll."""
    pid, end = int(pid), time.time() + float(secs)
    try:
        fd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        fd = -1
    if fd >= 0:
        p = select.poll()
        p.register(fd, select.POLLIN)
        while True:
            left = end - time.time()
            if left <= 0:
                return 0 if not alive(pid) else 1
            if p.poll(left * 1000):
                return 0
    while alive(pid):
        if time.time() >= end:
            return 1
        time.sleep(0.2)
    return 0


if __name__ == "__main__":
    name_self()
    cmds = {"line": (line, 4), "watch": (watch, 5), "exit": (gone, 2)}
    if len(sys.argv) < 2 or sys.argv[1] not in cmds or len(sys.argv) != 2 + cmds[sys.argv[1]][1]:
        sys.exit(__doc__)
    sys.exit(cmds[sys.argv[1]][0](*sys.argv[2:]))
