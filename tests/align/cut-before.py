#!/usr/bin/python3
# cut-before.py TRACE.DAT TS: truncate a one-CPU trace.dat at the start of
# the ring-buffer page holding host time TS: that event and every later one
# are gone, as a full disk or a killed copy leaves a file (the reader then
# clips the CPU's data).  The data pages are the page-aligned run at the
# file's end whose base times rise; the header before them is left alone.
import os, struct, sys

PAGE = 4096
path, ts = sys.argv[1], int(sys.argv[2])
size = os.path.getsize(path)
pages = []
with open(path, "rb") as f:
    for off in range(0, size - 16 + 1, PAGE):
        f.seek(off)
        pages.append((off, struct.unpack("<Q", f.read(8))[0]))
run = []
for off, base in reversed(pages):
    if base == 0 or (run and base > run[-1][1]):
        break
    run.append((off, base))
run.reverse()
keep = [off for off, base in run if base <= ts]
if not keep or len(keep) == len(run):
    sys.exit("cut-before: host time %d is not inside the data pages of %s" % (ts, path))
os.truncate(path, keep[-1])
print("cut-before: %s cut at byte %d: %d of %d data pages kept" % (path, keep[-1], len(keep) - 1, len(run)))
