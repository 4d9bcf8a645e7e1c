# A busy workload for `vmtrace top --python`: for SECONDS, sorts with a key
# callback (hotfn, called 1000 times per sort) and calls coldfn once per
# sort; prints "hotfn CALLS SECONDS" at the end.  usage: hot.py SECONDS
import sys
import time


def hotfn(x):
    return -x


def coldfn():
    return 0


def main():
    end = time.monotonic() + float(sys.argv[1])
    data = list(range(1000))
    calls = 0
    t0 = time.monotonic()
    while time.monotonic() < end:
        sorted(data, key=hotfn)
        coldfn()
        calls += len(data)
    print("hotfn", calls, time.monotonic() - t0, flush=True)


main()
