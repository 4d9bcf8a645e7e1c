# A workload whose USDT-visible events are known: imports, gc collections,
# thread targets, key callbacks and a Python-to-Python call.
# usage: workload.py [SLEEP_S [profile]]  (profile: run under sys.setprofile)
import gc
import sys
import threading

import json          # noqa: F401  (import markers: json, json.decoder, ...)
import fractions     # noqa: F401


def worker(n):
    return sum(range(n))


def keyfn(x):
    return -x


def inner():
    return 1


def outer():
    return inner()


def main():
    for gen in (0, 1, 2):
        gc.collect(gen)
    threads = [threading.Thread(target=worker, args=(1000,)) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    sorted([3, 1, 2], key=keyfn)
    outer()
    if len(sys.argv) > 1:
        import time
        time.sleep(float(sys.argv[1]))


if len(sys.argv) > 2 and sys.argv[2] == "profile":
    threading.setprofile(lambda *a: None)
    sys.setprofile(lambda *a: None)
main()
