# A workload whose USDT-visible events are known: imports, gc collections
# and functions entered from C (thread targets, key callbacks).
import gc
import sys
import threading

import json          # noqa: F401  (import markers: json, json.decoder, ...)
import fractions     # noqa: F401


def worker(n):
    return sum(range(n))


def keyfn(x):
    return -x


def main():
    for gen in (0, 1, 2):
        gc.collect(gen)
    threads = [threading.Thread(target=worker, args=(1000,)) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    sorted([3, 1, 2], key=keyfn)
    if len(sys.argv) > 1:
        import time
        time.sleep(float(sys.argv[1]))


main()
