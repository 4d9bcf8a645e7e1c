#!/bin/bash
# trace-cmd's own host-guest mode on a real KVM (the KVM lab where there is
# none), side by side with vmtrace on the same runs (issues #16, #19):
# tests/align/tracecmd-pair.sh boots a Linux guest running `trace-cmd agent`
# (vhost-vsock) and records with `trace-cmd record -A` once per round - the
# kvm time-sync protocol, ptp forced on the x86-tsc clock, kvm written as v7
# zstd - while the guest emits 100 vmtrace hypercall markers per round (the
# truth: rdtsc brackets around an action the host timestamps).  On each pair
# as trace-cmd wrote it (host trace.dat, guest trace-guest.dat, no vmtrace
# file but the markers):
# - `vmtrace align` reads both (v7 zstd included), pairs 100 of 100 markers,
#   reports trace-cmd's TIME_SHIFT as the tsync source, and its inside check
#   finds every guest event inside a host [kvm_entry, kvm_exit] of its vCPU;
# - held out, every other marker lies inside the bound vmtrace proves from
#   the others; trace-cmd's own map is measured against every bracket;
# - `vmtrace merge` and `vmtrace report` take the pair; trace-cmd's own map
#   (`--source tsync`) goes through the inside check too;
# - the ptp round on the local (ns) clock: aligned by trace-cmd's
#   TIME_SHIFT alone, its error measured by the inside check;
# - vmtrace's own recorder, run beside trace-cmd (`vmtrace record -p QEMU`),
#   reads the same offset from debugfs as trace-cmd's kvm protocol;
# - the kvm pair rewritten with zlib (tests/lib/td-zlib.py, as trace-cmd
#   writes it: Debian's trace-cmd has zstd only) gives the same results.
# Prints one table row per round (docs/benchmarks.md keeps them).
# timeout: 1200
# san: skip: the lab's guest image carries vmtrace, which an ASan build cannot run there; vmtrace's side of a trace-cmd pair runs under ASan in align/t-align-tracecmd
# uses: lab (boots a KVM lab of its own: not beside the lab batch)
set -u
. "$VT_SRC/tests/align/lib.sh"
[ "$(id -u)" = 0 ] || skip "not root: the KVM lab and trace-cmd record need root"
command -v trace-cmd >/dev/null || fail "trace-cmd not installed (make deps)"
OUT=$VT_TMP/out
ROUNDS="kvm ptp-tsc kvm-zstd"	# x86-tsc: the markers relate
mkdir -p "$OUT"
# the lab sees only its output directory under /tmp: run from there
(cd "$OUT" && VT_TCPAIR_RUNS="$ROUNDS ptp" "$VT_SRC/tests/align/tracecmd-pair.sh" "$OUT") >pair.log 2>&1
rc=$?
tail -5 pair.log
[ $rc = 0 ] || { tail -30 pair.log; fail "tracecmd-pair.sh exit $rc"; }
# the KVM host's TSC rate as its kernel calibrated it (trace-cmd's files
# state none unless recorded with --tsc2nsec)
mhz=$(grep -o 'calibration: [0-9.]* MHz' "$OUT/host.txt" | grep -o '[0-9.]*' | head -1)
[ -n "$mhz" ] || fail "no TSC calibration in $OUT/host.txt"
HZ=$(awk -v m="$mhz" 'BEGIN { printf "%.0f", m * 1e6 }')
bad=0
echo "round | pairs | vmtrace bound | vmtrace held-out worst outside | trace-cmd (tsync) vs markers | tsync outside brackets | inside check, vmtrace's map | inside check, trace-cmd's map"
for r in $ROUNDS; do
	d=$OUT/$r
	mkdir -p "g-$r" "h-$r"
	cp "$d/trace-guest.dat" "g-$r/trace.dat"
	cp "$d/markers.dat" "g-$r/markers.dat"
	every_other "$d/markers.dat" "h-$r/markers.dat"
	cp "$d/trace-guest.dat" "h-$r/trace.dat"
	"$VT_BIN" align "$d/trace.dat" "g-$r" --tsc-hz "$HZ" --json --pairs >"full-$r.json" 2>"full-$r.err" ||
		{ cat "full-$r.err"; fail "$r: vmtrace align"; }
	"$VT_BIN" align "$d/trace.dat" "h-$r" --tsc-hz "$HZ" --json --pairs >"half-$r.json" 2>/dev/null ||
		fail "$r: vmtrace align (half)"
	# trace-cmd's own map (its TIME_SHIFT as it applies it) through the inside check
	"$VT_BIN" align "$d/trace.dat" "g-$r" --tsc-hz "$HZ" --source tsync --json >"tsync-$r.json" \
		2>/dev/null || fail "$r: vmtrace align --source tsync"
	check_json "full-$r.json" "full-$r.json" \
		'j["method"] == "markers" and j["markers"]["pairs"] == 100' \
		'any(s["source"] == "tsync" for s in j["sources"])' \
		'j["inside"] is not None and j["inside"]["events"] > 100 and j["inside"]["fraction"] == 1.0' ||
		bad=1
	case $r in kvm*)	# the kvm protocol reads KVM's own offset: it agrees
		check_json "full-$r.json" "full-$r.json" \
			'all(s["agrees"] for s in j["sources"] if s["source"] == "tsync")' || bad=1;;
	esac
	held_out "full-$r.json" "half-$r.json" >"held-$r.txt" || { cat "held-$r.txt"; bad=1; }
	# trace-cmd's map (the tsync line) against every marker's bracket
	"$PY" - "full-$r.json" "held-$r.txt" "$r" "tsync-$r.json" <<'EOF' || bad=1
import json, re, sys
j = json.load(open(sys.argv[1])); hz = j["host_hz"]
ts = [s for s in j["sources"] if s["source"] == "tsync"][0]
mk = [s for s in j["sources"] if s["source"] == "markers"][0]
worst = 0.0
for p in j["pairs"]:
    # trace-cmd's line (its offset at tsc_host, its slope: ptp interpolates)
    g = lambda h: h + ts["offset_tsc"] + (ts["slope"] - 1) * (h - ts["tsc_host"])
    out = max(p["tsc_guest_before"] - g(p["tsc_host"]), g(p["tsc_host"]) - p["tsc_guest_after"], 0)
    worst = max(worst, out * 1e9 / hz)
held = open(sys.argv[2]).read()
m = re.search(r"worst excursion ([0-9.]+) ns", held)
ins = j["inside"]
tin = json.load(open(sys.argv[4]))["inside"]
print("%s | %d | %.1f us | %s | %+.1f us | %.1f us | %d/%d, shift [%.1f, %.1f] us | %d/%d, worst outside %.1f us" % (
    sys.argv[3], j["markers"]["pairs"], j["bound_ns"] / 1e3,
    ("%.1f us" % (float(m.group(1)) / 1e3)) if m else "?",
    (ts["offset_tsc"] - mk["offset_tsc"]) * 1e6 / hz, worst / 1e3,
    ins["inside"], ins["events"], ins["shift_lo_ns"] / 1e3, ins["shift_hi_ns"] / 1e3,
    tin["inside"], tin["events"], tin["worst_outside_ns"] / 1e3))
EOF
	# vmtrace's own recorder ran beside trace-cmd (kvm rounds): its debugfs
	# reading is the offset trace-cmd's kvm protocol read, to the tick
	if [ -d "$d/vmtrace-host" ]; then
		"$VT_BIN" align "$d/vmtrace-host" "g-$r" --json >"own-$r.json" 2>"own-$r.err" ||
			{ cat "own-$r.err"; fail "$r: vmtrace align of vmtrace's own recording"; }
		"$PY" - "own-$r.json" "full-$r.json" "$r" <<'EOF' || bad=1
import json, sys
o, f = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
db = [s for s in o["sources"] if s["source"] == "debugfs"]
ts = [s for s in f["sources"] if s["source"] == "tsync"]
mk = [s for s in o["sources"] if s["source"] == "markers"]
ok = o["markers"]["pairs"] == 100 and db and ts and mk and db[0]["offset_tsc"] == ts[0]["offset_tsc"]
print("%s, vmtrace record beside trace-cmd: %d pairs, bound %.1f us, debugfs %s, debugfs = trace-cmd's tsync: %s, debugfs minus markers %+.1f us" % (
    sys.argv[3], o["markers"]["pairs"], o["bound_ns"] / 1e3, db[0]["offset_tsc"] if db else None,
    "yes" if ok else "NO", (db[0]["diff_ns"] or 0) / 1e3 if db else 0))
sys.exit(0 if ok else 1)
EOF
	fi
	"$VT_BIN" merge "$d/trace.dat" "g-$r" --tsc-hz "$HZ" -o "m-$r.json" -q 2>"m-$r.err" ||
		{ cat "m-$r.err"; bad=1; }
	"$VT_BIN" report "$d/trace.dat" "g-$r" --tsc-hz "$HZ" >"r-$r.txt" 2>&1 &&
		grep -q "exit: hypercall" "r-$r.txt" || { echo "FAIL $r: report"; tail -5 "r-$r.txt"; bad=1; }
done
# the ptp round on trace-cmd's default clock (local, ns): no TSC marker
# relates to it, trace-cmd's TIME_SHIFT is the only map, and the inside
# check the only measure of its error
mkdir -p g-ptp
cp "$OUT/ptp/trace-guest.dat" g-ptp/trace.dat
"$VT_BIN" align "$OUT/ptp/trace.dat" g-ptp --json >full-ptp.json 2>full-ptp.err ||
	{ cat full-ptp.err; fail "ptp (local clock): vmtrace align"; }
check_json full-ptp.json full-ptp.json 'j["method"] == "tsync"' \
	'j["host_hz"] == 1000000000 and "ns" in j["host_hz_from"]' \
	'j["inside"] is not None and j["inside"]["events"] > 100' || bad=1
"$PY" - full-ptp.json <<'EOF'
import json, sys
i = json.load(open(sys.argv[1]))["inside"]
print("ptp (local clock) | no markers (TSC) | - | - | - | - | - | %d/%d, worst outside %.1f us" % (
    i["inside"], i["events"], i["worst_outside_ns"] / 1e3))
EOF
"$VT_BIN" merge "$OUT/ptp/trace.dat" "$OUT/ptp/trace-guest.dat" -o m-ptp.json -q 2>m-ptp.err ||
	{ cat m-ptp.err; bad=1; }
grep -q "unaligned" m-ptp.err && { echo "FAIL ptp: merge placed the guest unaligned"; bad=1; }

# the kvm pair written with zlib as trace-cmd does (tests/lib/td-zlib.py on
# trace-cmd convert's plain v7: Debian's trace-cmd writes zstd only): the
# same alignment, inside check and merge as the uncompressed pair
mkdir -p z/g
for f in trace.dat trace-guest.dat; do
	trace-cmd convert -i "$OUT/kvm/$f" -o "z/plain-$f" --file-version 7 --compression none \
		>z/convert.log 2>&1 || { cat z/convert.log; fail "trace-cmd convert $f"; }
	"$PY" "$VT_SRC/tests/lib/td-zlib.py" "z/plain-$f" "z/zlib-$f" || fail "td-zlib $f"
done
cp z/zlib-trace-guest.dat z/g/trace.dat
cp "$OUT/kvm/markers.dat" z/g/markers.dat
"$VT_BIN" align z/zlib-trace.dat z/g --tsc-hz "$HZ" --json --pairs >z/align.json 2>z/align.err ||
	{ cat z/align.err; fail "align of the zlib pair"; }
"$PY" - z/align.json full-kvm.json <<'PYEOF' && echo "ok   zlib pair: the same model, sources and inside check as uncompressed" || bad=1
import json, sys
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
diff = [k for k in ("segments", "sources", "inside", "bound_ns", "markers", "pairs") if a[k] != b[k]]
print("zlib pair differs in", diff) if diff else None
sys.exit(1 if diff else 0)
PYEOF
"$VT_BIN" merge z/zlib-trace.dat z/g --tsc-hz "$HZ" -o z/m.json -q 2>z/m.err || { cat z/m.err; bad=1; }
"$PY" - z/m.json m-kvm.json <<'PYEOF' && echo "ok   zlib pair: merge places every event as for the uncompressed pair" || bad=1
import json, sys
def evs(f):
    j = json.load(open(f))
    j = j["traceEvents"] if isinstance(j, dict) else j
    return sorted((e.get("ts", 0), e.get("name", ""), e.get("ph", "")) for e in j if e.get("ph") != "M")
a, b = evs(sys.argv[1]), evs(sys.argv[2])
print("zlib pair: %d events, uncompressed: %d" % (len(a), len(b)))
sys.exit(0 if a == b and a else 1)
PYEOF
[ $bad = 0 ] || exit 1
echo "trace-cmd's host-guest pairs read, aligned, checked and merged"
