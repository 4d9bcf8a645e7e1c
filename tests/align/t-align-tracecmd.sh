#!/bin/bash
# A trace-cmd host-guest pair (trace.dat + trace-GUEST.dat, no vmtrace
# files; tests/align/mktcpair writes it the way trace-cmd 3.x does: GUEST,
# TRACEID, TSC2NSEC options on the host, TIME_SHIFT on the guest):
# - `vmtrace align HOST.dat GUEST.dat` takes trace-cmd's time sync as the
#   source "tsync" (its offset exactly the truth), the host frequency from
#   TSC2NSEC, the vCPU thread from GUEST; the inside check finds every
#   guest event inside its vCPU's [kvm_entry, kvm_exit];
# - a wrong time sync (TIME_SHIFT 45 us off) or a wrong --offset fails the
#   inside check loudly, with how far outside;
# - the same with the guest file as v7 zstd (Debian's trace-cmd convert);
# - `vmtrace merge` places each guest event where trace-cmd itself puts it
#   (`trace-cmd report` of the guest file applies TIME_SHIFT), and `vmtrace
#   report` takes the pair;
# - the host's GUEST options naming several guests, none of this one, many
#   vCPUs; a pair in a ns clock; TIME_SHIFT with no or too many samples,
#   or a sample of scaling 0 (refused).
set -u
. "$VT_SRC/tests/align/lib.sh"
MK="$VT_BUILD/tests/align/mktcpair"
W=$VT_TMP/w
mkdir -p "$W"
cd "$W" || exit 1
bad=0
ok() { echo "ok   $*"; }
no() { echo "FAIL $*"; bad=1; }

"$MK" host.dat guest.dat >truth.json || fail "mktcpair"
"$VT_BIN" align host.dat guest.dat --json >a.json 2>a.err || fail "align: $(cat a.err)"
check_json a.json truth.json \
	'j["method"] == "tsync"' \
	'[s["source"] for s in j["segments"]] == ["tsync"] and j["segments"][0]["vcpu"] == 0' \
	'j["segments"][0]["offset_tsc"] == t["offset"]' \
	'j["host_hz_from"] == "trace.dat TSC2NSEC option" and abs(j["host_hz"] - t["hz"]) < 1000' \
	'j["inside"]["events"] == t["runs"] and j["inside"]["inside"] == t["runs"]' \
	'j["inside"]["worst_outside_ns"] == 0' \
	'-31000 < j["inside"]["shift_lo_ns"] < -29000 and 29000 < j["inside"]["shift_hi_ns"] < 31000' \
	'any("GUEST option" in n for n in j["notes"]) and any("TIME_SHIFT" in n for n in j["notes"])' ||
	bad=1
"$VT_BIN" align host.dat guest.dat >a.txt 2>&1
grep -q "inside check: 200 of 200 guest events (100.00%)" a.txt && ok "text: inside 200 of 200" ||
	no "text: $(grep inside a.txt)"

# a wrong time sync, and a wrong --offset: caught without any marker
"$MK" h45.dat g45.dat -s 45 >t45.json || fail "mktcpair -s"
"$VT_BIN" align h45.dat g45.dat --json >b.json 2>b.err
check_json b.json t45.json \
	'j["method"] == "tsync" and j["segments"][0]["offset_tsc"] == t["offset"] - t["tsync_error_ticks"]' \
	'j["inside"]["inside"] == 0 and 14000 < j["inside"]["worst_outside_ns"] < 16000' || bad=1
grep -q "INSIDE CHECK FAILS: 199 of 199 guest events" b.err && ok "wrong tsync: said loudly" ||
	no "wrong tsync: $(cat b.err)"
"$VT_BIN" align host.dat guest.dat --offset "$(($(python3 -c 'import json; print(json.load(open("truth.json"))["offset"])') + 100000))" \
	--json >c.json 2>c.err
check_json c.json truth.json 'j["method"] == "user" and j["inside"]["inside"] < j["inside"]["events"]' \
	'any("tsync says" in w for w in j["warnings"])' || bad=1

# --source: the source asked for is chosen where it has a line
"$VT_BIN" align host.dat guest.dat --source tsync --json >s.json 2>/dev/null &&
	check_json s.json truth.json 'j["method"] == "tsync"' || bad=1
"$VT_BIN" align host.dat guest.dat --source bogus >s.out 2>&1; rc=$?
[ $rc = 2 ] && grep -q "one of markers, debugfs, tracepoint, tsync" s.out &&
	ok "--source bogus: named, exit 2" || no "--source bogus: exit $rc: $(cat s.out)"

# the guest file compressed (v7, zstd): the same answer
if trace-cmd convert -i guest.dat -o guest7.dat --file-version 7 --compression zstd >conv.log 2>&1; then
	"$VT_BIN" align host.dat guest7.dat --json >d.json 2>d.err || no "align v7: $(cat d.err)"
	sed 's/guest7\.dat/guest.dat/g' d.json | cmp -s - a.json && ok "v7 zstd guest file: same result" ||
		{ no "v7 zstd guest file differs"; diff <(sed 's/guest7\.dat/guest.dat/g' d.json) a.json | head -3; }
else
	no "trace-cmd convert: $(tail -2 conv.log)"
fi

# merge: each guest event where trace-cmd report puts it (TIME_SHIFT applied)
"$VT_BIN" merge host.dat guest.dat -o m.json -q 2>m.err || no "merge: $(cat m.err)"
trace-cmd report guest.dat 2>/dev/null | grep softirq_entry >tc.txt
"$PY" - m.json tc.txt a.json <<'EOF' && ok "merge: 200 guest events where trace-cmd report puts them" || no "merge vs trace-cmd report"
import json, re, sys
a = json.load(open(sys.argv[3]))       # the host frequency vmtrace decided
ev = json.load(open(sys.argv[1]))
ev = ev["traceEvents"] if isinstance(ev, dict) else ev
ours = sorted(e["ts"] for e in ev if e.get("name") == "softirq_entry")
theirs = []
for line in open(sys.argv[2]):
    # trace-cmd 3.3 prints the 5 latency flags (first one never a digit:
    # "d..2.") between the CPU and the stamp, glued to it; 3.1 does not
    m = re.search(r"\]\s*(?:[^\d\s].{4})?\s*(\d+):", line)
    if m:   # trace-cmd's stamp: guest TSC + TIME_SHIFT offset = host TSC
        theirs.append(int(m.group(1)) * 1e6 / a["host_hz"])   # us, as Chrome JSON
theirs.sort()
if len(ours) != 200 or len(theirs) != 200:
    print("counts", len(ours), len(theirs)); sys.exit(1)
worst = max(abs(a - b) for a, b in zip(ours, theirs))
print("largest difference %.3f us" % worst)
sys.exit(0 if worst < 0.01 else 1)
EOF
"$VT_BIN" report host.dat guest.dat >r.txt 2>r.err && grep -q "VM exits per vCPU" r.txt &&
	grep -q "align    guest: tsync" r.err && ok "report takes the pair (align: tsync)" ||
	no "report: $(tail -3 r.err) $(grep -i align r.txt)"
# the host's GUEST options: three guests, the one with the guest file's
# trace id (the first) taken; two, neither with it (or the guest file has none): the
# vCPU threads by name ("CPU 0/KVM"), said so; one listing 5000 vCPUs
# (4096 threads kept): each time the same map, every event inside
"$MK" hg.dat gg.dat -g 3 >tg.json || fail "mktcpair -g 3"
"$VT_BIN" align hg.dat gg.dat --json >g.json 2>/dev/null
check_json g.json tg.json 'j["method"] == "tsync" and j["segments"][0]["offset_tsc"] == t["offset"]' \
	'"host: hg.dat: guest \"guest\" (trace-cmd GUEST option): 1 vCPU threads" in j["notes"]' \
	'j["inside"]["events"] == j["inside"]["inside"] == t["runs"]' || bad=1
# one GUEST option, of another trace id: the only one taken all the same
"$MK" hg.dat gg.dat -T 0x99 >tg.json || fail "mktcpair -T 0x99"
"$VT_BIN" align hg.dat gg.dat --json >g.json 2>/dev/null
check_json g.json tg.json 'j["segments"][0]["offset_tsc"] == t["offset"]' \
	'"host: hg.dat: guest \"guest\" (trace-cmd GUEST option): 1 vCPU threads" in j["notes"]' || bad=1
# a host file as the guest's: its TSC2NSEC gives the guest frequency
"$VT_BIN" align hg.dat hg.dat --offset 0 --json >g.json 2>/dev/null
check_json g.json tg.json 'abs(j["guest_hz"] - t["hz"]) < 1000' || bad=1
for opt in "-T 0x99" "-T 0"; do
	"$MK" hg.dat gg.dat -g 2 $opt >tg.json || fail "mktcpair -g 2 $opt"
	"$VT_BIN" align hg.dat gg.dat --json >g.json 2>/dev/null
	check_json g.json tg.json 'j["segments"][0]["offset_tsc"] == t["offset"]' \
		'"host: hg.dat: 2 guests in its GUEST options, none with the guest file'"'"'s trace id: vCPU threads from their names" in j["notes"]' \
		'j["inside"]["events"] == j["inside"]["inside"] == t["runs"]' || bad=1
done
"$MK" hg.dat gg.dat -V 5000 >tg.json || fail "mktcpair -V 5000"
"$VT_BIN" align hg.dat gg.dat --json >g.json 2>/dev/null
check_json g.json tg.json 'j["segments"][0]["offset_tsc"] == t["offset"]' \
	'"host: hg.dat: guest \"guest\" (trace-cmd GUEST option): 5000 vCPU threads" in j["notes"]' \
	'j["inside"]["events"] == j["inside"]["inside"] == t["runs"]' || bad=1

# a pair in a ns clock (trace-cmd's ptp: TIME_SHIFT interpolated): host
# ticks are ns; a kvm_pio write to the marker port is no marker there, the
# guest directory's markers are not used (said so)
"$MK" hn.dat gn.dat -C '[local] global counter x86-tsc' -c '[local] global counter x86-tsc' \
	-i -p >tn.json || fail "mktcpair ns"
mkdir -p gnd
cp gn.dat gnd/trace.dat
add_marker gnd 1 0x5f0 0 -1 1000 2000
"$VT_BIN" align hn.dat gnd --json >n.json 2>/dev/null
check_json n.json tn.json 'j["method"] == "tsync" and j["host_hz"] == 1000000000' \
	'j["host_hz_from"] == "trace clock '"'"'local'"'"': ns"' \
	'j["markers"]["guest"] == 0 and j["markers"]["host"] == 0' \
	'"guest: 1 markers not used: their TSC readings cannot be related to the '"'"'local'"'"' (ns) clocks of this pair" in j["notes"]' \
	'any("3 samples over 1 vCPUs, flags 0x1 (interpolated)" in n for n in j["notes"])' || bad=1
"$VT_BIN" align hn.dat gn.dat --json >n.json 2>/dev/null
check_json n.json tn.json 'j["method"] == "tsync" and j["markers"]["guest"] == 0' \
	'not any("markers not used" in n for n in j["notes"])' || bad=1

# TIME_SHIFT with no sample, or more than align takes (2^20): none used,
# no source left (exit 1, what was found printed)
for k in 0 1048577; do
	"$MK" hs.dat gs.dat -N $k >/dev/null || fail "mktcpair -N $k"
	"$VT_BIN" align hs.dat gs.dat >s.out 2>s.err; rc=$?
	[ $rc = 1 ] && grep -qF 'no usable clock source' s.err &&
		grep -qF 'guest: gs.dat: trace-cmd time sync (TIME_SHIFT): 0 samples over 1 vCPUs, flags 0x0' s.err &&
		ok "TIME_SHIFT of $k samples: none used" || no "TIME_SHIFT of $k samples: exit $rc: $(cat s.err)"
done
rm -f hs.dat gs.dat

# a TIME_SHIFT sample of scaling 0 with a fraction bit (host = offset
# whatever the guest TSC: a guest clock standing still) is refused, named;
# the other samples still give the truth; refused alone, no source is left
"$MK" hz.dat gz.dat -S 0:1 >tz.json || fail "mktcpair -S 0:1"
"$VT_BIN" align hz.dat gz.dat --json >z.json 2>z.err || no "align -S 0:1: $(cat z.err)"
check_json z.json tz.json 'j["method"] == "tsync" and j["segments"][0]["offset_tsc"] == t["offset"]' \
	'j["segments"][0]["slope"] == 1.0' \
	'"guest: gz.dat: 1 TIME_SHIFT samples rejected: scaling 0 with fraction bits (a guest TSC that stands still against the host'"'"'s)" in j["notes"]' \
	'any("trace-cmd time sync (TIME_SHIFT): 2 samples" in n for n in j["notes"])' || bad=1
"$MK" hz.dat gz.dat -S 0:1 -N 1 >/dev/null || fail "mktcpair -S 0:1 -N 1"
"$VT_BIN" align hz.dat gz.dat >z.out 2>z.err; rc=$?
[ $rc = 1 ] && grep -qF 'no usable clock source' z.err &&
	grep -qF 'guest: gz.dat: 1 TIME_SHIFT samples rejected: scaling 0 with fraction bits' z.err &&
	ok "TIME_SHIFT scaling 0: refused, named" || no "TIME_SHIFT scaling 0: exit $rc: $(cat z.err)"
rm -f hz.dat gz.dat

[ $bad = 0 ] || exit 1
echo "trace-cmd pair: tsync source, inside check, merge and report"
