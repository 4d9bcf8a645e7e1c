#!/bin/bash
# Bad input: clear messages and the documented exit codes.
set -eu
. "$VT_SRC/tests/align/lib.sh"
expect() {	# expect CODE PATTERN -- command...
	local want=$1 pat=$2; shift 3
	set +e; "$@" >out.txt 2>err.txt; local rc=$?; set -e
	cat err.txt
	[ "$rc" = "$want" ] || { echo "exit $rc, want $want: $*"; exit 1; }
	grep -qF -- "$pat" err.txt || { echo "no '$pat' in stderr: $*"; exit 1; }
}
expect 2 'expected HOSTDIR' -- "$VT_BIN" align
expect 2 'bad frequency' -- "$VT_BIN" align --tsc-hz x .
expect 1 'guest directory nosuch' -- "$VT_BIN" align . nosuch
mkdir empty
# nothing at all: no frequency, then no source
expect 1 'frequency unknown' -- "$VT_BIN" align empty empty
expect 1 'no usable clock source' -- "$VT_BIN" align --tsc-hz 2000000000 empty empty

# no host meta: the frequency must come from the option
"$MKFIX" h g -n 20 -o 42 -M >t.json
expect 1 'frequency unknown' -- "$VT_BIN" align h g
"$VT_BIN" align h g --tsc-hz 2096001000 --json >a.json
check_json a.json t.json 'j["host_hz_from"] == "option --tsc-hz"' 'j["method"] == "markers"'

# corrupt guest markers: the valid ones are used, exit 3 (partial)
cp g/markers.dat good.dat
printf 'VTMKjunkjunkjunk' >>g/markers.dat
dd if=/dev/urandom of=g/markers.dat bs=48 seek=3 count=1 conv=notrunc 2>/dev/null
set +e; "$VT_BIN" align h g --tsc-hz 2096001000 --json >a.json 2>err.txt; rc=$?; set -e
[ "$rc" = 3 ] || { echo "corrupt markers: exit $rc, want 3"; exit 1; }
check_json a.json t.json 'j["markers"]["rejected_records"] == 2' 'j["markers"]["pairs"] == 19'

# a host trace.dat that is not one
cp good.dat g/markers.dat
echo garbage >h/trace.dat
expect 1 'trace.dat' -- "$VT_BIN" align h g --tsc-hz 2096001000
# a markers.dat that is a directory
rm h/trace.dat; rm g/markers.dat; mkdir g/markers.dat
expect 1 'markers.dat' -- "$VT_BIN" align h g --tsc-hz 2096001000

# a host trace recorded in a nanosecond clock cannot be related to guest TSCs
"$MKFIX" hl gl -n 5 -C '[local] global counter x86-tsc' >/dev/null
expect 1 "trace clock 'local'" -- "$VT_BIN" align hl gl

# every bad option: exit 2, the option named
expect 2 "bad frequency 'y'" -- "$VT_BIN" align --guest-tsc-hz y h g
expect 2 "bad port '0x10000'" -- "$VT_BIN" align --port 0x10000 h g
expect 2 "bad fd '-1'" -- "$VT_BIN" align --marker-fd -1 h g
expect 2 "bad offset '12x'" -- "$VT_BIN" align --offset 12x h g
expect 2 "--source 'nosuch': one of markers, debugfs, tracepoint, tsync" -- "$VT_BIN" align --source nosuch h g
expect 2 "--source 'user': one of markers, debugfs, tracepoint, tsync" -- "$VT_BIN" align --source user h g
expect 2 'unknown option (see vmtrace align --help)' -- "$VT_BIN" align --nosuch h g
expect 2 'expected HOSTDIR [GUESTDIR]' -- "$VT_BIN" align h g extra
"$VT_BIN" align --help | grep -q -- '--marker-fd FD' || fail "align --help"
# an input that is neither a directory nor a file
expect 1 'host directory /dev/null: not a directory nor a trace.dat file' -- "$VT_BIN" align /dev/null
expect 1 'guest directory /dev/null: not a directory nor a trace.dat file' -- "$VT_BIN" align hl /dev/null

# the options that steer the model, against a fixture whose truth is known
"$MKFIX" ho go -n 20 -o 5000 -t 5000 -d 5000 >to.json
# --offset: the user's line is chosen, every other source cross-checked
"$VT_BIN" align ho go --offset 5000 --json >a.json
check_json a.json to.json \
	'j["method"] == "user"' 'j["segments"][0]["offset_tsc"] == 5000' \
	'all(s["agrees"] for s in j["sources"] if s["source"] != "user")'
"$VT_BIN" align ho go --offset 9000000 --json >a.json 2>err.txt
check_json a.json to.json 'j["segments"][0]["offset_tsc"] == 9000000' \
	'sum("SOURCES DISAGREE" in w for w in j["warnings"]) == 3'
# --source: that source's line, the markers' bound still the tolerance
"$VT_BIN" align ho go --source tracepoint --json >a.json
check_json a.json to.json 'j["method"] == "tracepoint"' 'j["segments"][0]["offset_tsc"] == 5000' \
	'j["bound_ns"] is None' \
	'[s["agrees"] for s in j["sources"] if s["source"] == "markers"] == [True]'
# --fit-slope: fitted from the markers (slope 1 within 10 ppm here)
"$VT_BIN" align ho go --fit-slope --json >a.json
check_json a.json to.json 'j["method"] == "markers"' 'abs(j["segments"][0]["slope"] - 1) < 1e-5' \
	'abs(ns(j["segments"][0]["offset_tsc"] - t["offset"])) <= j["bound_ns"]'
# --guest-tsc-hz: the option's, named; one far from host hz x slope is warned of
"$VT_BIN" align ho go --guest-tsc-hz 1000000000 --json >a.json 2>err.txt
check_json a.json to.json 'j["guest_hz"] == 1000000000' \
	'any("guest tsc.hz 1000000000 differs from host tsc.hz x slope" in w for w in j["warnings"])'
"$VT_BIN" align ho go --guest-tsc-hz 1000000000 >text.txt 2>/dev/null
grep -qF 'guest TSC: 1000000000 Hz (option --guest-tsc-hz)' text.txt || fail "text: $(head -3 text.txt)"
# the text report's pairs: one line per marker, residual and bracket
"$VT_BIN" align ho go --pairs >text.txt
[ "$(grep -c '^  seq .* residual .* ns (bracket +-.* ns)$' text.txt)" = 20 ] || fail "--pairs: $(cat text.txt)"

# a host trace.dat cut short (the recorder killed): what is whole is used,
# said so, exit 3
"$MKFIX" ht gt -n 40 -o 777 >tt.json
truncate -s -3000 ht/trace.dat
set +e; "$VT_BIN" align ht gt --json >a.json 2>err.txt; rc=$?; set -e
[ "$rc" = 3 ] || fail "cut trace.dat: exit $rc, want 3 ($(cat err.txt))"
grep -qF 'ht/trace.dat: CPU data cut short: each CPU is read up to its last whole record' err.txt ||
	fail "cut trace.dat: $(cat err.txt)"
check_json a.json tt.json 'j["markers"]["host"] == 35 and j["markers"]["pairs"] == 35' \
	'j["markers"]["rejected_records"] == 0' \
	'"5 of 40 guest markers have no host twin (not recorded on the host, or lost): ignored" in j["warnings"]' \
	'abs(ns(j["segments"][0]["offset_tsc"] - t["offset"])) <= j["bound_ns"]'

# the text report's edges: a segment that ends (the offset changed before
# marker 10), an outlier's pair flagged (marker 4's readings 1000000 ticks
# late: 1 of the 10 of its segment)
"$MKFIX" hx gx -n 20 -o 5000 -x 10:3000 >tx.json
"$PY" - gx/markers.dat <<'PYEOF'
import struct, sys
d = bytearray(open(sys.argv[1], "rb").read())
for off in (4 * 48 + 32, 4 * 48 + 40):
    struct.pack_into("<Q", d, off, struct.unpack_from("<Q", d, off)[0] + 1000000)
open(sys.argv[1], "wb").write(d)
PYEOF
"$VT_BIN" align hx gx --pairs >text.txt 2>err.txt
[ "$(grep -c '^  seq .* OUTLIER$' text.txt)" = 1 ] || fail "no OUTLIER: $(cat text.txt)"
grep -q '^  seq 4 .* OUTLIER$' text.txt || fail "OUTLIER not seq 4: $(cat text.txt)"
grep -qE '^  vCPU 0   host TSC \[0, [0-9]+\): markers, offset [0-9]+, slope 1.000000000, .* \(9 markers, 1 outliers\)$' text.txt ||
	fail "first segment: $(cat text.txt)"
grep -qE '^  vCPU 0   host TSC \[[1-9][0-9]*, end\): markers, offset [0-9]+, slope 1.000000000, .* \(10 markers, 0 outliers\)$' text.txt ||
	fail "second segment: $(cat text.txt)"
grep -qF 'vCPU 0: 1 of 10 markers contradict the others' err.txt || fail "outlier warning: $(cat err.txt)"
"$VT_BIN" align hx gx --pairs --json >a.json 2>/dev/null
check_json a.json tx.json '[p["seq"] for p in j["pairs"] if p["outlier"]] == [4]' \
	'len(j["pairs"]) == 20'
# no source names a vCPU (no tracepoint, no debugfs, no guest): --offset's
# line is every vCPU's, "all"
"$MKFIX" hn gn -n 5 -o 5000 -T -D >/dev/null
"$VT_BIN" align hn --offset 5000 >text.txt
grep -qE '^  vCPU all user +at host TSC [0-9]+ +offset 5000 +slope 1.000000000  CHOSEN$' text.txt ||
	fail "source view of all vCPUs: $(cat text.txt)"
grep -qE '^  vCPU all host TSC \[0, end\): user, offset 5000, slope 1.000000000, ref ([0-9]+) -> [0-9]+, bound \+-unproven \(0 markers, 0 outliers\)$' text.txt ||
	fail "segment of all vCPUs: $(cat text.txt)"
# a second vCPU thread (vCPU 1, in the meta) whose two markers no line of
# slope 1 +- 0.25 joins: vCPU 1 has no source; its pairs are matched but
# have no residual to show (--pairs lists vCPU 0's)
L=$((5000000000000 + 5000000000))
cat >ev.txt <<EOT
comm 5000 CPU 1/KVM
$L 5000 pio 1 0x5f0 $(printf '0x%x' $(( (0x56 << 24) | 100 ))) 1
$((L + 2096001000)) 5000 pio 1 0x5f0 $(printf '0x%x' $(( (0x56 << 24) | 101 ))) 1
EOT
"$MKFIX" hv gv -n 10 -o 5000 -e ev.txt >tv.json
meta_set hv kvm.vcpu_threads=2 kvm.thread1.tid=5000 kvm.thread1.vcpu=1
add_marker gv 1 0x5f0 100 1 $((L + 5000 - 300)) $((L + 5000 + 300))
add_marker gv 1 0x5f0 101 1 $((L + 2096001000 + 838400400 + 5000 - 300)) \
	$((L + 2096001000 + 838400400 + 5000 + 300))
"$VT_BIN" align hv gv --pairs --json >a.json 2>err.txt
check_json a.json tv.json 'j["markers"]["pairs"] == 12' \
	'[p["seq"] for p in j["pairs"]] == list(range(10))' \
	'[(s["vcpu"], s["source"]) for s in j["segments"]] == [(0, "markers"), (1, "none")]' \
	'"vCPU 1: no usable source for the segment from host TSC 0" in j["warnings"]'
# merge: vCPU 1's two marker stamps have no segment to map them, placed
# with the offset and counted
"$VT_BIN" merge hv gv -o v.json 2>merr.txt || fail "merge hv gv: $(cat merr.txt)"
grep -qxF 'vmtrace: warning: align guest: vCPU 1: no usable source for the segment from host TSC 0' merr.txt &&
	grep -qxF '  align    guest: 2 stamps outside the model, placed with the offset' merr.txt ||
	fail "merge of a vCPU without source: $(cat merr.txt)"
# ... the VM named: the model's warnings and the count name it
"$VT_BIN" merge hv gv@vm1 -o vn.json 2>merr.txt || fail "merge hv gv@vm1: $(cat merr.txt)"
grep -qxF 'vmtrace: warning: align vm1: vCPU 1: no usable source for the segment from host TSC 0' merr.txt &&
	grep -qxF '  align    vm1: 2 stamps outside the model, placed with the offset' merr.txt ||
	fail "merge of a named VM with a vCPU without source: $(cat merr.txt)"
# ... with guest stack samples stamped on the host (domain=host) in the
# same VM: host ticks, not through the model (L ticks: 2387.881 s)
mkdir s
{ printf '# vmtrace-samples 1\n# clock=tsc rate_hz=100\n# time\terror\tmono_ns\tvcpu\tpc\tstack\n'
  printf '%d\t2000\t5\t1\t0x100010\tlong_mode;spin\n' $L; } >s/samples.tsv
"$VT_BIN" meta s clock=tsc domain=host producer=vmtrace-sample tsc.hz=2096001000 format=samples
"$VT_BIN" merge hv gv s -o vs.json 2>merr.txt || fail "merge hv gv s: $(cat merr.txt)"
grep -qE '^  guest +s +1 events, 2387\.880540133 \.\. 2387\.880540133 s$' merr.txt &&
	grep -qxF '  align    guest: 2 stamps outside the model, placed with the offset' merr.txt ||
	fail "merge of host-clock samples in a VM with a model: $(cat merr.txt)"
# ... a guest uftrace directory on the ns clock holding the markers: the
# VM's model is built from them, its events keep their ns stamps; with no
# guest-TSC input to go with, the marker pairs are not shown (no flows)
"$VT_BUILD/tests/merge/gen-trace" u -n 4 -D 1 -c ns -s 2387000000000 -d 1000 -f a -p 77
rm -f u/vmtrace.meta
cp gv/markers.dat u/
"$VT_BIN" merge hv u -o vu.json 2>merr.txt || fail "merge hv u: $(cat merr.txt)"
grep -qE '^  guest +u +4 events, 2387\.000000000 \.\. 2387\.000003000 s$' merr.txt &&
	grep -qxF '  align    guest: markers (12 marker pairs), bound 207 ns (some segments unproven) (clock from u)' merr.txt &&
	grep -qxF '  flows    0' merr.txt || fail "merge of a ns guest input with the markers: $(cat merr.txt)"
"$VT_BIN" align hv gv --pairs >text.txt 2>/dev/null
[ "$(grep -c '^  seq ' text.txt)" = 10 ] || fail "--pairs of a vCPU without source: $(cat text.txt)"
