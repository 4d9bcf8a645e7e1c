"""The examples' waits while the host is recorded, each one process for its
whole wait (the host recording holds every process's scheduling: a shell
loop of date/grep/stat/sleep put ~10 short-lived processes a second of the
example's own into it).  Only the standard library: /usr/bin/python3.

  waits.py line FILE PATTERN SECONDS PID
      until FILE holds PATTERN (exit 0); 1 after SECONDS, or when PID is gone
      without it
  waits.py watch END PID OUT DONE STEP
      every STEP s, until PID is gone, the time END (epoch s) or OUT/console.log
      holding DONE: "<ms since start> <bytes of OUT/guest.stream>" lines into
      OUT/stream-growth.txt
"""
import os
import sys
import time


def alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except OSError:
        return False


def holds(path, pat):
    try:
        with open(path, "rb") as f:
            return pat in f.read()
    except OSError:
        return False


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


if __name__ == "__main__":
    cmds = {"line": (line, 4), "watch": (watch, 5)}
    if len(sys.argv) < 2 or sys.argv[1] not in cmds or len(sys.argv) != 2 + cmds[sys.argv[1]][1]:
        sys.exit(__doc__)
    sys.exit(cmds[sys.argv[1]][0](*sys.argv[2:]))
