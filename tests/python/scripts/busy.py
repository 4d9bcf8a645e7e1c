# A long-running program for attach/kill/full-disk tests.
import sys
import time


def tick(i):
    return i * 2


def loop(seconds, pause, calls):
    end = time.time() + seconds
    i = 0
    while time.time() < end or i < calls:
        tick(i)
        i += 1
        if pause and i % 100 == 0:
            time.sleep(pause)


print("ready", flush=True)
# argv: seconds to run, seconds to sleep every 100 calls (0: never), and
# the calls to make at least (however slow a loaded machine runs them)
loop(float(sys.argv[1]) if len(sys.argv) > 1 else 30,
     float(sys.argv[2]) if len(sys.argv) > 2 else 0,
     int(sys.argv[3]) if len(sys.argv) > 3 else 0)
