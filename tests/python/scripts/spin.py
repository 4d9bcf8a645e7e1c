# A program that never releases the GIL (one thread, no I/O, no sleep):
# attach cannot wait for a GIL release here (tests/python/t-attach).  One
# traced call per 2000 loop steps: a trace of seconds stays small.
def spin_once(i):
    return i + 1


print("ready", flush=True)
i = 0
while True:
    i = spin_once(i)
    for _ in range(2000):
        pass
