#!/bin/bash
# Hypercall markers without KVM: mkfixture's kvm_hypercall events, in-band
# (the guest's readings in the registers, 64- and 32-bit ABI, two emitters
# interleaved, a call the host missed) and by address (markers.dat names
# the hypercall nr).  The in-band brackets the aligner rebuilds from the
# host trace alone must be exactly the readings the guest took (the same
# fixture with -g also writes them to markers.dat).
set -eu
. "$VT_SRC/tests/align/lib.sh"

# same_pairs ALIGN.json MARKERS.DAT [SEQ...]: the pairs of ALIGN.json are
# the records of MARKERS.DAT (seq, both readings), but for the SEQs left out
same_pairs() {
	"$PY" - "$@" <<'PYEOF'
import json, struct, sys
j = json.load(open(sys.argv[1]))
d = open(sys.argv[2], "rb").read()
skip = {int(x) for x in sys.argv[3:]}
want = {}
for o in range(0, len(d), 48):
    magic, ver, kind, size, addr, val, cpu, seq, b, a = struct.unpack_from("<IHBBQIIQQQ", d, o)
    if seq not in skip:
        want[seq] = (b, a, kind)
got = {p["seq"]: (p["tsc_guest_before"], p["tsc_guest_after"]) for p in j["pairs"]}
bad = 0
for s in sorted(set(want) | set(got)):
    w = want.get(s)
    if w is None or s not in got:
        print("FAIL seq %d: %s" % (s, "not in markers.dat" if w is None else "no pair"))
        bad += 1
    elif got[s] != w[:2] or w[2] != 3:
        print("FAIL seq %d: pair bracket %s, guest's readings %s (kind %d)" % (s, got[s], w[:2], w[2]))
        bad += 1
print("%d pairs, %d records compared" % (len(got), len(want)))
sys.exit(1 if bad or not got else 0)
PYEOF
}

# 64-bit ABI: 20 markers, the host trace alone
"$MKFIX" h64 g64 -n 20 -o 777 -k >t64.json
"$MKFIX" r64 ref64 -n 20 -o 777 -k -g >/dev/null
[ "$(stat -c %s g64/markers.dat)" = 0 ] || fail "-k wrote guest records"
"$VT_BIN" align h64 g64 --json --pairs >a64.json 2>err64.txt
check_json a64.json t64.json \
	'j["method"] == "markers"' \
	'j["markers"]["pairs"] == 20 and j["markers"]["guest"] == 20' \
	'abs(ns(j["segments"][0]["offset_tsc"] - t["offset"])) <= j["bound_ns"]' \
	'all(p["vcpu"] == 0 for p in j["pairs"])' \
	'"host: h64/trace.dat: 20 in-band hypercall markers (the guest'"'"'s readings carried in kvm_hypercall)" in j["notes"]'
same_pairs a64.json ref64/markers.dat
if grep -q 'dropped' err64.txt; then fail "64-bit: markers dropped: $(cat err64.txt)"; fi

# the guest's markers.dat holds the same markers: used, the 21 readings (20
# markers and the closing call) not made into markers twice
"$VT_BIN" align r64 ref64 --json --pairs >ar64.json 2>/dev/null
check_json ar64.json t64.json \
	'j["markers"]["pairs"] == 20 and j["markers"]["guest"] == 20' \
	'any("21 in-band hypercall readings; the guest'"'"'s markers.dat has the same markers" in n for n in j["notes"])'
same_pairs ar64.json ref64/markers.dat

# 32-bit ABI (readings split over two registers, seq in nr), no KVM
# sources, the host missed marker 5's call: marker 4 lost its "after"
"$MKFIX" h32 g32 -n 20 -o -5000000000 -K -T -D -H 5 >t32.json
"$MKFIX" r32 ref32 -n 20 -o -5000000000 -K -T -D -g >/dev/null
"$VT_BIN" align h32 g32 --json --pairs >a32.json 2>err32.txt
check_json a32.json t32.json \
	'j["method"] == "markers"' \
	'j["markers"]["pairs"] == 18 and j["markers"]["guest"] == 18 and j["markers"]["host"] == 19' \
	'abs(ns(j["segments"][0]["offset_tsc"] - t["offset"])) <= j["bound_ns"]' \
	'any("1 of 19 host marker observations have no guest record" in w for w in j["warnings"])'
same_pairs a32.json ref32/markers.dat 4 5
grep -q 'h32/trace.dat: 1 in-band hypercall markers without a valid closing reading dropped' err32.txt ||
	fail "32-bit: no warning of the dropped marker: $(cat err32.txt)"

# two emitters interleaved (a guest's two processes): each call pairs with
# the next of its own chain, seqs 0..9 and 1000..1009
"$MKFIX" h2 g2 -n 20 -o 4242 -k -2 >t2.json
"$MKFIX" r2 ref2 -n 20 -o 4242 -k -2 -g >/dev/null
"$VT_BIN" align h2 g2 --json --pairs >a2.json 2>err2.txt
check_json a2.json t2.json \
	'j["markers"]["pairs"] == 20' \
	'sorted(p["seq"] for p in j["pairs"]) == list(range(10)) + list(range(1000, 1010))' \
	'abs(ns(j["segments"][0]["offset_tsc"] - t["offset"])) <= j["bound_ns"]'
same_pairs a2.json ref2/markers.dat
if grep -q 'dropped' err2.txt; then fail "two chains: markers dropped: $(cat err2.txt)"; fi

# by address: markers.dat names hypercall nr 0x1f, the host sees it with the
# marker value in a0
"$MKFIX" ha ga -n 16 -o 99 -a -T -D >ta.json
"$VT_BIN" align ha ga --json >aa.json 2>/dev/null
check_json aa.json ta.json \
	'j["method"] == "markers"' \
	'j["markers"]["pairs"] == 16' \
	'abs(ns(j["segments"][0]["offset_tsc"] - t["offset"])) <= j["bound_ns"]' \
	'"host: 0 kvm_mmio writes and 16 kvm_hypercall at the guest'"'"'s marker addresses" in j["notes"]'
echo "hypercall markers: 64-bit, 32-bit, two chains, by address"
