"""Strict checks of what vmtrace writes for other programs to parse.

Usage: /usr/bin/python3 strict_check.py FILE... [--want-args-array]

  *.json      decoded as strict UTF-8, parsed by json with NaN/Infinity
              refused, every string (keys too) re-encoded strictly (a lone
              surrogate from a \\ud800 escape fails);
  *.pftrace   walked at the protobuf wire level (not through our code nor
              protoc's text): every length-delimited field is either a
              message of the schema below or a string, and every string is
              strict UTF-8; a field the schema does not know fails.
  --want-args-array: some syscall's `args` (raw_syscalls sys_enter's
              unsigned long[6]) must be there, and every `args` is an array
              of integers (JSON) / unnamed integer annotations (Perfetto).
Prints one line per file; exit 1 with "FAIL: ..." at the first problem.
"""
import json
import sys

# message -> {field: message name, or "s" for a string}; field numbers of
# merge/perfetto_subset.proto
SCHEMA = {
    "Trace": {1: "TracePacket"},
    "TracePacket": {11: "TrackEvent", 12: "InternedData", 60: "TrackDescriptor"},
    "TrackEvent": {4: "DebugAnnotation", 23: "s"},
    "DebugAnnotation": {6: "s", 10: "s", 11: "DebugAnnotation", 12: "DebugAnnotation"},
    "TrackDescriptor": {2: "s", 3: "ProcessDescriptor", 4: "ThreadDescriptor"},
    "ProcessDescriptor": {6: "s"},
    "ThreadDescriptor": {5: "s"},
    "InternedData": {2: "EventName", 3: "DebugAnnotationName"},
    "EventName": {2: "s"},
    "DebugAnnotationName": {2: "s"},
}


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def varint(b, i):
    v = shift = 0
    while True:
        if i >= len(b):
            raise ValueError("varint past the end")
        c = b[i]
        i += 1
        v |= (c & 0x7f) << shift
        shift += 7
        if c < 0x80:
            return v, i


def walk(b, msg, path, st):
    """Fields of message @msg in bytes @b; returns [(field, value)]."""
    out = []
    i = 0
    while i < len(b):
        key, i = varint(b, i)
        f, wt = key >> 3, key & 7
        if wt == 0:
            v, i = varint(b, i)
        elif wt == 1:
            v, i = int.from_bytes(b[i:i + 8], "little"), i + 8
        elif wt == 5:
            v, i = int.from_bytes(b[i:i + 4], "little"), i + 4
        elif wt == 2:
            n, i = varint(b, i)
            v, i = b[i:i + n], i + n
            if i > len(b):
                raise ValueError("%s.%d: length past the end" % (msg, f))
            kind = SCHEMA[msg].get(f)
            if kind is None:
                fail("%s: %s field %d (length-delimited) not in the schema" % (path, msg, f))
            if kind == "s":
                try:
                    v = v.decode("utf-8")
                except UnicodeDecodeError as e:
                    fail("%s: %s field %d: invalid UTF-8 %r (%s)" % (path, msg, f, v[:80], e))
                st["strings"] += 1
            else:
                v = (kind, walk(v, kind, path, st))
        else:
            raise ValueError("%s: wire type %d" % (msg, wt))
        out.append((f, v))
    return out


def check_pftrace(path, want_args):
    st = {"strings": 0}
    try:
        trace = walk(open(path, "rb").read(), "Trace", path, st)
    except ValueError as e:
        fail("%s: %s" % (path, e))
    names = {}	# annotation name iid -> name
    arrays = 0
    for _, (_, pkt) in trace:
        for f, v in pkt:
            if f == 12:
                for g, (_, ent) in v[1]:
                    d = dict(ent)
                    if g == 3:
                        names[d.get(1)] = d.get(2)
        for f, v in pkt:
            if f != 11:
                continue
            for g, w in v[1]:
                if g != 4:
                    continue
                d = w[1]
                name = names.get(dict(d).get(1))
                if name != "args":
                    continue
                elems = [x for h, x in d if h == 12]
                if not elems or any([k for k, _ in e[1]] not in ([3], [4]) for e in elems):
                    fail("%s: an 'args' annotation that is no array of integers: %r" % (path, d))
                arrays += 1
    if want_args and not arrays:
        fail("%s: no 'args' array annotation" % path)
    return "%d strings, %d args arrays" % (st["strings"], arrays)


def strings(o):
    if isinstance(o, str):
        yield o
    elif isinstance(o, dict):
        for k, v in o.items():
            yield k
            yield from strings(v)
    elif isinstance(o, list):
        for v in o:
            yield from strings(v)


def check_json(path, want_args):
    raw = open(path, "rb").read()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        fail("%s: not UTF-8: %s (bytes %r)" % (path, e, raw[max(0, e.start - 20):e.end + 20]))

    def nonfinite(c):
        fail("%s: %s is not JSON" % (path, c))
    try:
        doc = json.loads(text, parse_constant=nonfinite)
    except json.JSONDecodeError as e:
        fail("%s: %s" % (path, e))
    n = 0
    for s in strings(doc):
        try:
            s.encode("utf-8")
        except UnicodeEncodeError as e:
            fail("%s: string with a lone surrogate %r: %s" % (path, s[:60], e))
        n += 1
    arrays = 0
    evs = doc.get("traceEvents", []) if isinstance(doc, dict) else []
    for e in evs:
        a = e.get("args") if isinstance(e, dict) else None
        if isinstance(a, dict) and "args" in a:
            v = a["args"]
            if not isinstance(v, list) or not all(isinstance(x, int) for x in v):
                fail("%s: 'args' is no array of integers: %r" % (path, e))
            arrays += 1
    if want_args and not arrays:
        fail("%s: no 'args' array" % path)
    return "%d strings, %d args arrays" % (n, arrays)


def main():
    want = "--want-args-array" in sys.argv
    files = [a for a in sys.argv[1:] if not a.startswith("--")]
    if not files:
        fail("no files")
    for p in files:
        r = check_pftrace(p, want) if p.endswith(".pftrace") else check_json(p, want)
        print("ok: %s: %s" % (p, r))


main()
