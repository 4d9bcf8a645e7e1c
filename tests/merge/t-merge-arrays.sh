#!/bin/bash
# Array fields of a trace.dat event, signed and unsigned, in Chrome JSON
# and Perfetto: a fake TRACEFS (this machine's page/event headers, an
# event format of our own: long lat[4], unsigned int pad[2], int many[14])
# for gen-tracedat.  Signed elements stay negative (Chrome: -5; Perfetto:
# int_value, unsigned ones uint_value), and an event's arrays hold at most
# MERGE_ARR_MAX (16) numbers in all: many keeps its first 10.
set -eu
. "$VT_SRC/tests/merge/common.sh"
GTD="$VT_BUILD/tests/merge/gen-tracedat"
cd "$VT_TMP"
fake_tracefs tfs
mkdir -p tfs/events/test/sarr r
T=$(printf '\t')
cat >tfs/events/test/sarr/format <<EOF2
name: sarr
ID: 2001
format:
${T}field:unsigned short common_type;${T}offset:0;${T}size:2;${T}signed:0;
${T}field:unsigned char common_flags;${T}offset:2;${T}size:1;${T}signed:0;
${T}field:unsigned char common_preempt_count;${T}offset:3;${T}size:1;${T}signed:0;
${T}field:int common_pid;${T}offset:4;${T}size:4;${T}signed:1;

${T}field:long lat[4];${T}offset:8;${T}size:32;${T}signed:1;
${T}field:unsigned int pad[2];${T}offset:40;${T}size:8;${T}signed:0;
${T}field:int many[14];${T}offset:48;${T}size:56;${T}signed:1;

print fmt: "lat %ld", REC->lat[0]
EOF2
# gen-tracedat sets a field's first 8 bytes: many=-9 is many[0] -9, many[1] -1
printf 'comm 300 app\nev 0 1000000000 300 test/sarr lat=-5 pad=7 many=-9\n' |
	"$GTD" r/trace.dat "$PWD/tfs"
printf '# vmtrace-meta 1\nclock=tsc\ntsc.hz=2000000000\ndomain=host\n' >r/vmtrace.meta

"$VT_BIN" merge r -o r.json -q
"$PY" - r.json <<'PYEOF' || fail "Chrome JSON"
import json, sys
ev = [e for e in json.load(open(sys.argv[1]))["traceEvents"] if e["ph"] != "M"]
assert len(ev) == 1 and ev[0]["name"] == "sarr", ev
want = {"lat": [-5, 0, 0, 0], "pad": [7, 0], "many": [-9, -1] + [0] * 8}
assert ev[0]["args"] == want, ev[0]["args"]
print("ok   Chrome: lat [-5,0,0,0], pad [7,0], many cut to 10")
PYEOF

"$VT_BIN" merge r -o r.pftrace -q
protoc --decode=perfetto.protos.Trace -I "$VT_SRC/merge" "$VT_SRC/merge/perfetto_subset.proto" \
	<r.pftrace >r.txt
"$PY" - r.txt <<'PYEOF' || fail "Perfetto"
import re, sys
t = open(sys.argv[1]).read()
vals = re.findall(r"array_values \{\s*(int|uint)_value: (-?\d+)", t)
want = [("int", "-5")] + [("int", "0")] * 3 + [("uint", "7"), ("uint", "0")] + \
       [("int", "-9"), ("int", "-1")] + [("int", "0")] * 8
assert vals == want, vals
print("ok   Perfetto: 16 array values, signed as int_value, unsigned as uint_value")
PYEOF
