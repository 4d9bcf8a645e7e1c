"""tests/lib/meta_keys.py: the vmtrace.meta schema, checked from the code.

Every key the code reads (vt_meta_get*, or a key built with snprintf in a
file that reads) must be written by some producer of the project (not by
a test fixture: a fixture once hid a reader asking for tsc.source, a key
no writer writes), and every key a producer writes must be in the table of
docs/format/meta.md.  Keys are compared in a normal form: a printf
conversion, or a number or placeholder letter ending a dotted segment
(vm0, vcpuN, thread%d, .1, .K), becomes '#'.  Prints what it found; exit 1
with the offending keys.
"""
import os
import re
import sys

SRC = sys.argv[1]
DIRS = ["align", "merge", "host", "guest", "lib", "tools"]
GET = re.compile(r'vt_meta_get(?:_[a-z0-9]+)?\([^,]+,\s*"([^"]+)"')
SET = re.compile(r'vt_meta_set(?:_[a-z0-9]+)?\([^,]+,\s*"([^"]+)"')
FMT = re.compile(r'snprintf\(\s*\w+\s*,[^,]+,\s*"([a-z][a-z0-9_.%]*)"')
KEYLIKE = re.compile(r'"([a-z][a-z0-9_]*(?:%[a-z]+)?(?:\.[a-z0-9_%]+)+)"')


def norm(k):
    k = re.sub(r'%[-0-9.]*(?:ll|l|z)?[duxs]', '#', k)
    segs = []
    for s in k.split("."):
        s = re.sub(r'(?<=[a-z_])(?:[0-9]+|[A-Z])$', '#', s)
        s = re.sub(r'^(?:[0-9]+|[A-Z])$', '#', s)
        segs.append(s)
    return ".".join(segs)


reads, writes = {}, {}
for d in DIRS:
    for root, _, files in os.walk(os.path.join(SRC, d)):
        for f in files:
            if not f.endswith(".c"):
                continue
            p = os.path.join(root, f)
            rel = os.path.relpath(p, SRC)
            text = open(p, encoding="utf-8", errors="replace").read()
            if rel in ("lib/meta.c", "tools/cmd_meta.c"):
                continue	# the generic reader/writer and `vmtrace meta K=V`
            for k in GET.findall(text):
                reads.setdefault(norm(k), set()).add(rel)
            for k in SET.findall(text):
                writes.setdefault(norm(k), set()).add(rel)
            # a key prefix built and handed to a helper that appends
            # ".nr" and ".N" (host/kvmfacts.c's series of readings)
            series = set()
            for fn in re.findall(r'\n(?:static )?int (\w+)\([^)]*\)\n\{(?:(?!\n\}).)*"%s\.nr"', text, re.S):
                for k in re.findall(r'snprintf\(\s*\w+\s*,[^,]+,\s*"([^"]+)"[^;]*;\s*if \(%s\(' % fn, text):
                    series.add(k)
                    writes.setdefault(norm(k) + ".nr", set()).add(rel)
                    writes.setdefault(norm(k) + ".#", set()).add(rel)
            fmts = [k for k in FMT.findall(text) if "." in k and k not in series and "%s" not in k]
            if "vt_meta_get" in text:
                for k in fmts:
                    reads.setdefault(norm(k), set()).add(rel)
            if "vt_meta_set" in text:
                for k in fmts:
                    writes.setdefault(norm(k), set()).add(rel)

# the documented keys: the first column of the docs' key tables (several
# keys in a cell: `a.x`, `.y` is a.x's sibling a.y); a key read that no
# producer writes is allowed where its row says the user gives it
documented, user_given = set(), set()
for root, _, files in os.walk(os.path.join(SRC, "docs")):
    for f in files:
        if not f.endswith(".md"):
            continue
        for line in open(os.path.join(root, f), encoding="utf-8"):
            cells = line.split("|")
            if len(cells) < 4 or not line.startswith("|"):
                continue
            keys = re.findall(r'`([a-zA-Z][\w.%-]*|\.[\w.]+)`', cells[1] + cells[2])
            first = None
            for k in keys:
                if k.startswith("."):
                    if first:
                        k = first.rsplit(".", 1)[0] + k
                    else:
                        continue
                elif "." not in k and not re.match(r'^[a-z_]+$', k):
                    continue
                first = first or k
                documented.add(norm(k))
                if re.search(r'user|by hand|optional;|--marker-fd|\(optional, guest data\)', line):
                    user_given.add(norm(k))

bad = 0
for k in sorted(reads):
    if k not in writes and k not in user_given:
        print("FAIL: %s is read (%s) but no producer writes it" % (k, ", ".join(sorted(reads[k]))))
        bad += 1
for k in sorted(writes):
    if k not in documented:
        print("FAIL: %s is written (%s) but docs/format/meta.md's table does not list it"
              % (k, ", ".join(sorted(writes[k]))))
        bad += 1
print("meta keys: %d read, %d written, %d documented" % (len(reads), len(writes), len(documented)))
sys.exit(1 if bad else 0)
