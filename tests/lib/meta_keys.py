"""tests/lib/meta_keys.py: the vmtrace.meta schema, checked from the code.

lib/meta_keys.h owns the key names: one VT_MK_x constant a fixed key, one
VT_MK_FMT_x printf format a key with numbers in it.  The code names a key
by its constant, never by a string literal: a vt_meta_get*/set*/del call
(or a wrapper of one: a function passing its `const char *key` on) whose
key is a string literal fails here, and so does a key built by snprintf
from a literal format.  The constants are read from the header and
resolved at the call sites: the key itself (VT_MK_x, or each one of
`c ? VT_MK_A : VT_MK_B`), or, for a buffer, the format of the last
snprintf into it before the call, in the same function.

Every key the code reads (or deletes) must be written by some producer of
the project (not by a test fixture: a fixture once hid a reader asking for
tsc.source, a key no writer writes) or be documented as given by the user,
every key a producer writes must be in the tables of docs/format/meta.md
(docs/*.md), and so must every key the header names.  Keys are compared
in a normal form: a printf conversion, or a number or placeholder letter
ending a dotted segment (vm0, vcpuN, thread%d, .1, .K), becomes '#'.
Prints what it found; exit 1 with the offending keys.
"""
import os
import re
import sys

SRC = sys.argv[1]
DIRS = ["align", "merge", "host", "guest", "lib", "tools"]
HEADER = "lib/meta_keys.h"
# the generic reader/writer (and its prototypes), `vmtrace meta K=V`
GENERIC = ("lib/meta.c", "lib/meta.h", "tools/cmd_meta.c")
PRIMS = {"vt_meta_get": "read", "vt_meta_get_u64": "read", "vt_meta_get_i64": "read",
         "vt_meta_get_double": "read", "vt_meta_set": "write", "vt_meta_set_u64": "write",
         "vt_meta_del": "read"}
LIT = re.compile(r'"(?:[^"\\\n]|\\.)*"')
MK = re.compile(r'\bVT_MK_\w+\b')


def norm(k):
    k = re.sub(r'%[-0-9.]*(?:ll|l|z)?[duxs]', '#', k)
    segs = []
    for s in k.split("."):
        s = re.sub(r'(?<=[a-z_])(?:[0-9]+|[A-Z])$', '#', s)
        s = re.sub(r'^(?:[0-9]+|[A-Z])$', '#', s)
        segs.append(s)
    return ".".join(segs)


def strip_comments(t):
    """Comments become spaces (newlines kept): offsets stay, strings stay."""
    out, i, n = [], 0, len(t)
    while i < n:
        c = t[i]
        if c == '"' or c == "'":
            j = i + 1
            while j < n and t[j] != c and t[j] != "\n":
                j += 2 if t[j] == "\\" else 1
            out.append(t[i:j + 1])
            i = j + 1
        elif t.startswith("/*", i):
            j = t.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r'[^\n]', ' ', t[i:j]))
            i = j
        elif t.startswith("//", i):
            j = t.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def args_at(t, i):
    """The arguments of the call whose '(' is at t[i], as text; None if unbalanced."""
    args, depth, start, j = [], 0, i + 1, i
    while j < len(t):
        c = t[j]
        if c == '"' or c == "'":
            k = j + 1
            while k < len(t) and t[k] != c:
                k += 2 if t[k] == "\\" else 1
            j = k
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                args.append(t[start:j].strip())
                return args
        elif c == "," and depth == 1:
            args.append(t[start:j].strip())
            start = j + 1
        j += 1
    return None


def func_start(t, pos):
    """Where the function holding pos begins (its '{' at column 0)."""
    return t.rfind("\n{", 0, pos) + 1


consts, fail = {}, []
hdr = strip_comments(open(os.path.join(SRC, HEADER), encoding="utf-8").read())
for name, val in re.findall(r'#define\s+(VT_MK_\w+)\s+("(?:[^"\\]|\\.)*")\s*$', hdr, re.M):
    consts[name] = val[1:-1]
for d in re.findall(r'#define\s+(VT_MK_\w+)', hdr):
    if d not in consts:
        fail.append("FAIL: %s: %s is not one string literal" % (HEADER, d))
seen = {}
for name, val in consts.items():
    if val in seen:
        fail.append("FAIL: %s: %s and %s both spell %s" % (HEADER, seen[val], name, val))
    seen[val] = name
    if name.startswith("VT_MK_FMT_") != ("%" in val):
        fail.append("FAIL: %s: %s = \"%s\": a format is named VT_MK_FMT_*, a fixed key is not"
                    % (HEADER, name, val))

texts = {}
for d in DIRS:
    for root, _, files in os.walk(os.path.join(SRC, d)):
        for f in files:
            if f.endswith((".c", ".h")):
                p = os.path.join(root, f)
                rel = os.path.relpath(p, SRC)
                if rel != HEADER and rel not in GENERIC:
                    texts[rel] = strip_comments(open(p, encoding="utf-8", errors="replace").read())

# wrappers: a function defined here that hands its `const char *key` on as
# a primitive's (or another wrapper's) key; its callers' keys are checked
funcs = dict((k, (v, 1)) for k, v in PRIMS.items())
changed = True
while changed:
    changed = False
    for rel, t in texts.items():
        for mo in re.finditer(r'\n[a-z][\w \*]*?\b(\w+)\(([^)]*)\)\n\{', t):
            name, params = mo.group(1), [p.strip() for p in mo.group(2).split(",")]
            if name in funcs:
                continue
            pos = [i for i, p in enumerate(params) if re.fullmatch(r'const char \*\s*key', p)]
            if not pos:
                continue
            body = t[mo.end():t.find("\n}", mo.end())]
            for callee, (kind, kpos) in list(funcs.items()):
                for c in re.finditer(r'\b%s\(' % callee, body):
                    a = args_at(body, c.end() - 1)
                    if a and len(a) > kpos and a[kpos] == "key":
                        funcs[name] = (kind, pos[0])
                        changed = True
                        break
                if name in funcs:
                    break

reads, writes, nuse = {}, {}, 0
CALL = re.compile(r'\b(%s)\(' % "|".join(sorted(funcs, key=len, reverse=True)))
for rel, t in sorted(texts.items()):
    for mo in CALL.finditer(t):
        kind, kpos = funcs[mo.group(1)]
        a = args_at(t, mo.end() - 1)
        if not a or len(a) <= kpos:
            continue
        expr, line = a[kpos], t.count("\n", 0, mo.start()) + 1
        where = "%s:%d" % (rel, line)
        if LIT.search(expr):
            fail.append("FAIL: %s: %s(..., %s): a key by a string literal, not by its "
                        "lib/meta_keys.h name" % (where, mo.group(1), expr))
            continue
        names = MK.findall(expr)
        if not names and re.fullmatch(r'[A-Za-z_]\w*', expr):
            # a buffer: the last snprintf into it before the call
            fs = func_start(t, mo.start())
            last = None
            for s in re.finditer(r'\bsnprintf\(\s*%s\s*,' % re.escape(expr), t[fs:mo.start()]):
                last = s
            if last:
                sa = args_at(t, t.index("(", fs + last.start()))
                fmt = sa[2] if sa and len(sa) > 2 else ""
                if LIT.search(fmt):
                    fail.append("FAIL: %s: the key in %s is built from a literal format %s, "
                                "not a lib/meta_keys.h VT_MK_FMT_* name" % (where, expr, fmt))
                    continue
                names = MK.findall(fmt)
        for n in names:
            if n not in consts:
                fail.append("FAIL: %s: %s is not in %s" % (where, n, HEADER))
                continue
            nuse += 1
            (writes if kind == "write" else reads).setdefault(norm(consts[n]), set()).add(rel)

# the documented keys: the first column of the docs' key tables (several
# keys in a cell: `a.x`, `.y` is a.x's sibling a.y); a key read that no
# producer writes is allowed where its row says the user gives it (a
# `--marker-fd` or "optional, guest data" row; not any row with "user"
# or "optional" in it: record.cpu_ms's "user+sys" is no such promise)
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
                if re.search(r'\bthe user\b|--marker-fd|\(optional, guest data\)', line):
                    user_given.add(norm(k))

bad = len(fail)
for msg in fail:
    print(msg)
for k in sorted(reads):
    if k not in writes and k not in user_given:
        print("FAIL: %s is read (%s) but no producer writes it" % (k, ", ".join(sorted(reads[k]))))
        bad += 1
for k in sorted(writes):
    if k not in documented:
        print("FAIL: %s is written (%s) but docs/format/meta.md's table does not list it"
              % (k, ", ".join(sorted(writes[k]))))
        bad += 1
for name, val in sorted(consts.items()):
    if norm(val) not in documented:
        print("FAIL: %s: %s = \"%s\" is in no key table of docs/" % (HEADER, name, val))
        bad += 1
print("meta keys: %d named in %s, %d uses by name, %d read, %d written, %d documented"
      % (len(consts), HEADER, nuse, len(reads), len(writes), len(documented)))
sys.exit(1 if bad else 0)
