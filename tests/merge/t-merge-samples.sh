#!/bin/bash
# A sampling session's directory (samples.tsv + vmtrace.meta as
# tools/vmtrace-sample writes them; docs/format/samples.md) as a merge
# input: alone (a conversion) and next to a host recording, to Chrome JSON
# (python3 json) and Perfetto (protoc + perfetto_check.py).  Every sample is
# an instant named by its leaf on "samples vCPU N" of the guest's process
# "guest: samples", at its host TSC time converted with the host's
# frequency, with stack / pc / error_ns as args; a corrupt line ends the
# input with exit 3 and a message naming the file; clock=mono-ns is ns,
# also under a meta that says tsc.
set -eu
. "$VT_SRC/tests/merge/common.sh"
cd "$VT_TMP"
# host: 2 GHz, records at 1e9 + i*1000 ticks (500000 us + i*0.5 us)
mk_host h 64
mkdir s
tab=$'\t'
{
	printf '# vmtrace-samples 1\n# clock=tsc rate_hz=100\n'
	printf '# time\terror\tmono_ns\tvcpu\tpc\tstack\n'
	printf '1000002000\t2000\t5\t0\t0x100010\tlong_mode;unikernel_main;unik_spin;spin_round;spin_heavy\n'
	printf '1000002000\t2000\t5\t1\t0x100020\tlong_mode;unikernel_main;unik_spin;spin_round;spin_light\n'
	printf '1000010000\t4000\t9\t0\t0x100011\tlong_mode;unikernel_main;unik_spin;spin_round;spin_heavy\n'
	printf '1000030000\t2000\t12\t1\t0x200000\tlong_mode;vp_notify\n'
} >s/samples.tsv
"$VT_BIN" meta s clock=tsc domain=host producer=vmtrace-sample tsc.hz=2000000000 format=samples

# what one run's events must be: (name, thread, ts_us, stack, pc, error_ns)
cat >want.py <<'PYEOF'
WANT = [
    ("spin_heavy", "samples vCPU 0", 500001.0, "long_mode;unikernel_main;unik_spin;spin_round;spin_heavy", 0x100010, 1000),
    ("spin_light", "samples vCPU 1", 500001.0, "long_mode;unikernel_main;unik_spin;spin_round;spin_light", 0x100020, 1000),
    ("spin_heavy", "samples vCPU 0", 500005.0, "long_mode;unikernel_main;unik_spin;spin_round;spin_heavy", 0x100011, 2000),
    ("vp_notify", "samples vCPU 1", 500015.0, "long_mode;vp_notify", 0x200000, 1000),
]
PYEOF
json_samples() {	# OUT.json PROCESS-NAME
	"$PY" - "$1" "$2" <<'PYEOF'
import json, sys
sys.path.insert(0, ".")
from want import WANT
d = json.load(open(sys.argv[1]))["traceEvents"]
tname = {(e["pid"], e["tid"]): e["args"]["name"] for e in d if e["ph"] == "M" and e["name"] == "thread_name"}
pname = {e["pid"]: e["args"]["name"] for e in d if e["ph"] == "M" and e["name"] == "process_name"}
got = [(e["name"], tname[(e["pid"], e["tid"])], e["ts"], e["args"]["stack"], e["args"]["pc"],
        e["args"]["error_ns"]) for e in d if e["ph"] == "i" and pname[e["pid"]] == sys.argv[2]]
if got != WANT:
    sys.exit("FAIL: sample events\n got %s\nwant %s" % (got, WANT))
print("ok: %d sample events in %s" % (len(got), sys.argv[2]))
PYEOF
}

# alone: a conversion (machine 0, label "trace")
"$VT_BIN" merge s -o alone.json 2>err.txt
grep -q "trace *s *4 events" err.txt || { cat err.txt; echo "FAIL: summary"; exit 1; }
json_check alone.json >/dev/null
json_samples alone.json "trace: samples"

# with the host recording: the guest VM's samples, host clock, no model
"$VT_BIN" merge h s -o both.json 2>err.txt
grep -q "guest *s *4 events" err.txt || { cat err.txt; echo "FAIL: summary"; exit 1; }
grep -q "align    guest: none needed" err.txt || { cat err.txt; echo "FAIL: align line"; exit 1; }
grep -q "flows    0" err.txt || { cat err.txt; echo "FAIL: a sample's leaf made a flow"; exit 1; }
json_check both.json >/dev/null
json_samples both.json "guest: samples"

"$VT_BIN" merge h s -o both.pftrace -q
protoc --decode=perfetto.protos.Trace -I "$VT_SRC/merge" "$VT_SRC/merge/perfetto_subset.proto" \
	<both.pftrace >both.txt
"$PY" "$VT_SRC/tests/merge/perfetto_check.py" both.txt --json sum.json
"$PY" - sum.json both.txt <<'PYEOF'
import json, re, sys
s = json.load(open(sys.argv[1])); text = open(sys.argv[2]).read()
p = [p for p in s if p["name"] == "guest: samples"]
if len(p) != 1 or p[0]["machine"] != 0 or p[0]["pid"] != 10000000 + 5000000:
    sys.exit("FAIL: samples process %s" % p)
th = sorted((t["name"], t["events"], sorted(t["names"])) for t in p[0]["threads"])
want = [("samples vCPU 0", 2, ["spin_heavy"]), ("samples vCPU 1", 2, ["spin_light", "vp_notify"])]
if th != want:
    sys.exit("FAIL: threads %s, want %s" % (th, want))
for ts in (500001000, 500005000, 500015000):
    if "timestamp: %d\n" % ts not in text:
        sys.exit("FAIL: no packet at %d ns" % ts)
if text.count("TYPE_INSTANT") != 4:
    sys.exit("FAIL: %d instants, want 4" % text.count("TYPE_INSTANT"))
print("ok: perfetto")
PYEOF

# a corrupt line: the samples before it are merged, exit 3, the file named
cp -r s bad
printf '1000040000\t2000\t13\t0\t0xZZ\tlong_mode\n' >>bad/samples.tsv
printf '1000050000\t2000\t14\t0\t0x1\tlong_mode\n' >>bad/samples.tsv
rc=0
"$VT_BIN" merge h bad -o bad.json 2>err.txt || rc=$?
[ $rc -eq 3 ] || { cat err.txt; echo "FAIL: exit $rc, want 3"; exit 1; }
grep -q "bad/samples.tsv:8" err.txt || { cat err.txt; echo "FAIL: message"; exit 1; }
json_samples bad.json "guest: samples"

# a vCPU number past KVM's 4096: the input ends there, said so, exit 3
cp -r s vbad
printf '1000040000\t2000\t13\t4096\t0x1\tlong_mode\n' >>vbad/samples.tsv
rc=0
"$VT_BIN" merge vbad -o vbad.json 2>err.txt || rc=$?
[ $rc -eq 3 ] || { cat err.txt; echo "FAIL: vCPU 4096: exit $rc, want 3"; exit 1; }
grep -q "vbad/samples.tsv: vCPU 4096 out of range (at most 4096 vCPUs)" err.txt ||
	{ cat err.txt; echo "FAIL: vCPU 4096: message"; exit 1; }
json_samples vbad.json "trace: samples"

# clock=mono-ns (a sampler without the TSC): stamps are ns, warned when
# merged with TSC inputs
mkdir m
sed 's/^# clock=tsc /# clock=mono-ns /' s/samples.tsv >m/samples.tsv
"$VT_BIN" meta m clock=mono-ns domain=host producer=vmtrace-sample format=samples
"$VT_BIN" merge m -o mono.json -q
"$PY" - mono.json <<'PYEOF'
import json, sys
ts = [e["ts"] for e in json.load(open(sys.argv[1]))["traceEvents"] if e["ph"] == "i"]
if ts != [1000002.0, 1000002.0, 1000010.0, 1000030.0]:
    sys.exit("FAIL: mono-ns times %s" % ts)
PYEOF
"$VT_BIN" merge h m -o mono2.json 2>err.txt
grep -q "m/samples.tsv: clock mono-ns" err.txt || { cat err.txt; echo "FAIL: no warning"; exit 1; }
# the file's own header wins over a meta that says clock=tsc: still ns
mkdir mt
cp m/samples.tsv mt/
"$VT_BIN" meta mt clock=tsc domain=host producer=vmtrace-sample tsc.hz=2000000000 format=samples
"$VT_BIN" merge mt -o mt.json -q
"$PY" - mt.json <<'PYEOF'
import json, sys
ts = [e["ts"] for e in json.load(open(sys.argv[1]))["traceEvents"] if e["ph"] == "i"]
if ts != [1000002.0, 1000002.0, 1000010.0, 1000030.0]:
    sys.exit("FAIL: mono-ns file, tsc meta: times %s" % ts)
PYEOF
# ... and over a meta that says mono-ns: TSC stamps, at the meta's tsc.hz
mkdir tm
cp s/samples.tsv tm/
"$VT_BIN" meta tm clock=mono-ns domain=host producer=vmtrace-sample tsc.hz=2000000000 format=samples
"$VT_BIN" merge tm -o tm.json -q
json_samples tm.json "trace: samples"
echo "ok"
