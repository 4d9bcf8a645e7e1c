#!/bin/bash
# merge/reader_uftrace.c on every kind of uftrace record (gen-trace's data
# with records written by hand): an exit of a call entered before the
# recording (dropped), LOST (an instant with the count), EVENT (an instant
# with its id), a call at an address no symbol holds (named by it), calls
# still open at the end (closed at the last record's time), and a file
# that ends inside a record (exit 3, said so, the whole records merged).
set -eu
. "$VT_SRC/tests/merge/common.sh"
cd "$VT_TMP"
fail() { echo "FAIL: $*"; exit 1; }
"$GEN" u -n 8 -D 2 -c ns -s 1000000 -d 100 -f main,work
# add RECORDS...: "T TYPE DEPTH ADDR" each, before (-b) or after the data
add() {
	"$PY" - "$@" <<'PYEOF'
import struct, sys
path, where, recs = sys.argv[1], sys.argv[2], sys.argv[3:]
b = b"".join(struct.pack("<QQ", int(t), int(ty) | (5 << 3) | (int(dp) << 6) | (int(a, 0) << 16))
             for t, ty, dp, a in (r.split() for r in recs))
d = open(path, "rb").read()
open(path, "wb").write(b + d if where == "before" else d + b)
PYEOF
}
add u/1000.dat before '999900 1 0 0x400300'
add u/1000.dat after '1000800 2 0 7' '1000900 3 0 0x1234' '1001000 0 0 0x7777000' '1001100 1 0 0x7777000'
# events: (ph, ts us, name, args)
events() {
	"$PY" - "$1" <<'PYEOF'
import json, sys
for e in json.load(open(sys.argv[1]))["traceEvents"]:
    if e["ph"] != "M":
        print(e["ph"], "%.1f" % e["ts"], e.get("name", "-"), json.dumps(e.get("args", {}), sort_keys=True))
PYEOF
}
"$VT_BIN" merge u -o u.json -q
events u.json >got.txt
cat >want.txt <<'EOF'
B 1000.0 main {}
B 1000.1 work {}
E 1000.2 - {}
E 1000.3 - {}
B 1000.4 main {}
B 1000.5 work {}
E 1000.6 - {}
E 1000.7 - {}
i 1000.8 uftrace: records lost {"count": 7}
i 1000.9 uftrace: event {"id": 4660}
B 1001.0 0x7777000 {}
E 1001.1 - {}
EOF
diff want.txt got.txt || fail "records of u"

# calls still open at the end: closed at the last record's time
cp -r u open
add open/1000.dat after '1001200 0 0 0x400100' '1001300 0 1 0x400200'
"$VT_BIN" merge open -o open.json -q
events open.json | tail -4 >got.txt
printf 'B 1001.2 main {}\nB 1001.3 work {}\nE 1001.3 - {}\nE 1001.3 - {}\n' >want.txt
diff want.txt got.txt || fail "open calls not closed at the end"

# half a record at the end: the whole ones merged, exit 3, said so
cp -r u cut
printf '12345678' >>cut/1000.dat
rc=0
"$VT_BIN" merge cut -o cut.json 2>err.txt || rc=$?
[ $rc = 3 ] || fail "half a record: exit $rc, want 3"
grep -qF 'vmtrace: warning: cut/1000.dat: ends inside a record (truncated)' err.txt || fail "$(cat err.txt)"
events u.json >a.txt
events cut.json >b.txt
diff a.txt b.txt || fail "half a record: the whole records differ"
echo "ok: uftrace records"
