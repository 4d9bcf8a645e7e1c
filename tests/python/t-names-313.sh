#!/bin/bash
# On CPython 3.13 (sys.monitoring): tests/python/t-names.sh.
# The tracer's names: a C method inherited from a base class is named by
# the class that defines it (`with open(p, "w")` calls _io._IOBase.__exit__,
# not the first subclass seen, _io.BufferedReader), and a name cut to the
# tracer's 1023-byte buffer inside a 2-byte character stays valid UTF-8 (the
# character dropped) in the .sym file, in uftrace's replay and in merge's
# Chrome JSON.
set -eu
. "$VT_SRC/tests/python/common.sh"

vt_py -m vmtrace -o "$VT_TMP/d" "$SCRIPTS/inherit_names.py" || vt_fail "vmtrace exited $?"
sym=$(ls "$VT_TMP"/d/*.sym)
grep -q ' _io\._IOBase\.__exit__$' "$sym" || vt_fail "no _io._IOBase.__exit__ in $(grep __exit__ "$sym")"
if grep -q '_io\.Buffered[A-Za-z]*\.__exit__' "$sym"; then
	vt_fail "an inherited __exit__ named by a subclass: $(grep __exit__ "$sym")"
fi
"$VT_BIN" merge "$VT_TMP/d" -o "$VT_TMP/d.json" -q || vt_fail "merge exited $?"
/usr/bin/python3 - "$sym" "$VT_TMP/d.json" <<'PYEOF'
import json, sys
sym = open(sys.argv[1], "rb").read().decode("utf-8")	# strict
longs = [l for l in sym.splitlines() if "a\u00e9\u00e9\u00e9" in l]
assert longs, "no long name in the .sym file"
name = longs[0].split(" ", 2)[2]
assert 1000 < len(name.encode()) <= 1023, len(name.encode())
ev = json.loads(open(sys.argv[2], "rb").read().decode("utf-8"))["traceEvents"]
assert any("a\u00e9\u00e9\u00e9" in e.get("name", "") for e in ev), "long name not in the JSON"
print("ok: %d-byte name" % len(name.encode()))
PYEOF
vt_replay "$VT_TMP/d" >"$VT_TMP/replay.txt" || vt_fail "replay: $(cat "$VT_TMP/replay.err")"
grep -q '_io\._IOBase\.__exit__' "$VT_TMP/replay.txt" || vt_fail "uftrace replay has no _io._IOBase.__exit__"
echo ok
