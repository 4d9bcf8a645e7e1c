# Threads: one started before tracing (blocked until it is on), one after.
import sys
import threading

import vmtrace

ready = threading.Event()
go = threading.Event()


def early_work():
    return sum(range(10))


def early():
    ready.set()
    go.wait()
    early_work()


def late_work():
    return sum(range(20))


t1 = threading.Thread(target=early)
t1.start()
ready.wait()
vmtrace.start(sys.argv[1], clock="ns")
go.set()
t2 = threading.Thread(target=late_work)
t2.start()
t2.join()
t1.join()
vmtrace.stop()
