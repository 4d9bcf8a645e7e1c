#!/bin/bash
# merge/reader_uftrace.c on every kind of uftrace record (gen-trace's data
# with records written by hand): an exit of a call entered before the
# recording (dropped), LOST (an instant with the count), EVENT (an instant
# with its id), a call at an address no symbol holds (named by it), calls
# still open at the end (closed at the last record's time), and a file
# that ends inside a record (exit 3, said so, the whole records merged);
# the records vt_uft_stream_run leaves to the record-at-a-time path (an
# event carrying data, the Python tracer's stage: an exit of a call
# entered before dropped, noted), a call at address 0, a task whose .dat
# is no file (exit 3, said so), a recording of QEMU's executable (its
# tasks in process "QEMU (pid N)" with no QEMU pid known).
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
# an event with 10 bytes of data, a call at address 0; then a stage of an
# exit of a call entered before the .dat's end and a call of work
cp -r u slow
"$PY" - slow/1000.dat <<'PYEOF'
import struct, sys
def rec(t, ty, a, more=0):
    return struct.pack("<QQ", t, ty | more << 2 | 5 << 3 | a << 16)
d = open(sys.argv[1], "rb").read()
d += rec(1001200, 3, 0x99, 1) + struct.pack("<H", 10) + b"abcdefghij" + bytes(4)
d += rec(1001300, 0, 0) + rec(1001400, 1, 0)
open(sys.argv[1], "wb").write(d)
st = struct.pack("<QQ", 0x3165676174737476, len(d))
st += rec(1001500, 1, 0x400100) + rec(1001600, 0, 0x400200) + rec(1001700, 1, 0x400200)
open(sys.argv[1][:-4] + ".stage", "wb").write(st)
PYEOF
"$VT_BIN" merge slow -o slow.json 2>err.txt
grep -qF "slow/1000.stage: 3 records not yet folded, read too ('vmtrace finalize' folds them)" \
	err.txt || fail "stage not noted: $(cat err.txt)"
events slow.json | tail -5 >got.txt
cat >want.txt <<'EOF'
i 1001.2 uftrace: event {"id": 153}
B 1001.3 0x0 {}
E 1001.4 - {}
B 1001.6 work {}
E 1001.7 - {}
EOF
diff want.txt got.txt || fail "event with data, address 0, staged records"

# task 1001's .dat a FIFO: warned, the rest merged, exit 3
cp -r u fifo
mkfifo fifo/1001.dat
echo 'TASK timestamp=0.001000000 tid=1001 pid=1000' >>fifo/task.txt
rc=0
"$VT_BIN" merge fifo -o fifo.json 2>err.txt || rc=$?
[ $rc = 3 ] || fail "a FIFO .dat: exit $rc, want 3"
grep -qF 'vmtrace: warning: fifo/1001.dat: not a regular file' err.txt || fail "$(cat err.txt)"
events fifo.json >b.txt
diff a.txt b.txt || fail "a FIFO .dat: the other task's events differ"

# QEMU's executable (with a directory or without) on the host beside a
# guest, no QEMU pid known (TCG): process "host: QEMU (pid 1000)"
"$GEN" qg -n 8 -D 2 -c ns -g -s 1000000 -d 100 -f a,b -p 200 >/dev/null
for exe in /usr/bin/qemu-system-x86_64 qemu-system-aarch64 /usr/bin/qemu-img; do
	rm -rf q
	cp -r u q
	"$PY" - q/info "$exe" <<'PYEOF'
import sys
d = open(sys.argv[1], "rb").read()
open(sys.argv[1], "wb").write(d.replace(b"exename:/usr/bin/gen-trace-prog",
                                        b"exename:" + sys.argv[2].encode()))
PYEOF
	"$VT_BIN" merge q qg -o q.json -q 2>/dev/null
	got=$("$PY" - q.json <<'PYEOF'
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
print(",".join(sorted(e["args"]["name"] for e in ev
                      if e["ph"] == "M" and e["name"] == "process_name")))
PYEOF
)
	case $exe in
	*qemu-system-*) want="guest: pid 200,host: QEMU (pid 1000)";;
	*) want="guest: pid 200,host: pid 1000";;
	esac
	[ "$got" = "$want" ] || fail "exename $exe: processes $got, want $want"
done

echo "ok: uftrace records"
