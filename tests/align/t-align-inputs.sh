#!/bin/bash
# What vmtrace align takes as its inputs: a host trace.dat named as a file
# (the vmtrace.meta beside it, also with no directory part), no GUESTDIR,
# a guest trace.dat as GUESTDIR, a meta listing more vCPU threads than it
# holds, another marker port, paths that JSON must escape; a host meta
# or a guest's that is not one or lacks keys, a guest kernel's trace.dat
# beside the markers.  Each against
# mkfixture's truth (guest TSC = host TSC + 777).
set -eu
. "$VT_SRC/tests/align/lib.sh"
"$MKFIX" h g -n 20 -o 777 >t.json
"$VT_BIN" align h g --json >ref.json 2>/dev/null
check_json ref.json t.json 'j["method"] == "markers"' \
	'abs(ns(j["segments"][0]["offset_tsc"] - t["offset"])) <= j["bound_ns"]'

# the host's trace.dat by name: the meta beside it (tsc.hz from mkfixture)
"$VT_BIN" align h/trace.dat g --json >a.json 2>/dev/null
check_json a.json t.json 'j["host_dir"] == "h/trace.dat"' 'j["host_hz_from"] == "mkfixture"' \
	'j["segments"] == json.load(open("ref.json"))["segments"]'
(cd h && "$VT_BIN" align trace.dat ../g --json >../a.json 2>/dev/null)
check_json a.json t.json 'j["host_hz_from"] == "mkfixture"' \
	'j["segments"] == json.load(open("ref.json"))["segments"]'

# no GUESTDIR: the host's sources alone (debugfs outranks the tracepoint)
"$VT_BIN" align h >text.txt 2>/dev/null
grep -qxF 'vmtrace align: host h, guest (none)' text.txt || fail "no GUESTDIR: $(head -2 text.txt)"
"$VT_BIN" align h --json >a.json 2>/dev/null
check_json a.json t.json 'j["guest_dir"] is None' 'j["method"] == "debugfs"' \
	'j["segments"][0]["offset_tsc"] == t["offset"]' 'j["bound_ns"] is None'

# a guest trace.dat as GUESTDIR (here the host's own file: no time-sync
# data, no markers): read, said so, the host's sources used
"$VT_BIN" align h h/trace.dat --json >a.json 2>/dev/null
check_json a.json t.json '"guest: h/trace.dat: 2 CPUs, clock x86-tsc, no time-sync data" in j["notes"]' \
	'j["method"] == "debugfs"' 'j["segments"][0]["offset_tsc"] == t["offset"]'
# one whose trace_clock option is empty: "unknown"
"$MKFIX" hc gc -n 5 -o 777 -C '' >/dev/null
"$VT_BIN" align h hc/trace.dat --json >a.json 2>/dev/null
check_json a.json t.json '"guest: hc/trace.dat: 2 CPUs, clock unknown, no time-sync data" in j["notes"]'

# kvm.vcpu_threads says 100000, two entries are broken: the one whole
# entry is used, the rest skipped
cp -r h hv
cat >>hv/vmtrace.meta <<'EOF'
kvm.thread1.tid=x
kvm.thread2.tid=4300
kvm.thread2.vcpu=y
EOF
sed -i 's/^kvm.vcpu_threads=.*/kvm.vcpu_threads=100000/' hv/vmtrace.meta
"$VT_BIN" align hv g --json >a.json 2>/dev/null
check_json a.json t.json 'j["segments"] == json.load(open("ref.json"))["segments"]' \
	'j["markers"]["pairs"] == 20'

# --port 0x80 (no writes there): it replaces the guest's port, nothing
# pairs, the host's sources alone (t-align-port: each case)
"$VT_BIN" align h g --port 0x80 --json >a.json 2>/dev/null
check_json a.json t.json \
	'any("0 kvm_pio writes to marker port 0x80, " in n for n in j["notes"])' \
	'j["markers"]["pairs"] == 0' 'j["method"] == "debugfs"' 'j["bound_ns"] is None'

# the host meta: not one (exit 1, named); tsc.hz 0 (no frequency); no
# tsc.hz.source ("meta"); no record start/stop (the trace's span)
cp -r h hm
echo garbage >hm/vmtrace.meta
expect_exit 1 'hm/vmtrace.meta: not a vmtrace metadata file' -- "$VT_BIN" align hm g
rm -r hm; cp -r h hm
meta_set hm tsc.hz=0
expect_exit 1 'host TSC frequency unknown' -- "$VT_BIN" align hm g
rm -r hm; cp -r h hm
meta_set hm tsc.hz_source= record.start_tsc_host= record.stop_tsc_host=
grep -q '^record\.st' hm/vmtrace.meta && fail "meta keys not removed"
"$VT_BIN" align hm g --json >a.json 2>/dev/null
check_json a.json t.json 'j["host_hz_from"] == "meta"' 'j["host_hz"] == t["hz"]' \
	'j["method"] == "markers"' 'j["markers"]["pairs"] == 20' \
	'abs(ns(j["segments"][0]["offset_tsc"] - t["offset"])) <= j["bound_ns"]'

# the guest directory: its kernel's trace.dat beside the markers (read,
# said so), one with a malformed page (warned of), one that is not a
# trace.dat (exit 1, named); a meta that is not one; a meta with tsc.hz 0
# or none (frequency unknown, not needed); the --guest-tsc-hz option over a guest
# trace.dat
cp -r g gt
cp h/trace.dat gt/trace.dat
"$VT_BIN" align h gt --json >a.json 2>/dev/null
check_json a.json t.json '"guest: gt/trace.dat: 2 CPUs, clock x86-tsc, no time-sync data" in j["notes"]' \
	'j["markers"]["pairs"] == 20' 'j["guest_hz"] == t["hz"] + t["hz"] // 2000'
"$VT_BIN" align h gt --guest-tsc-hz 1000000000 --json >a.json 2>/dev/null
check_json a.json t.json 'j["guest_hz"] == 1000000000' 'j["markers"]["pairs"] == 20'
# a trace.dat as GUESTDIR has no meta: the option's frequency all the same
"$VT_BIN" align h gt/trace.dat --guest-tsc-hz 1000000000 --json >a.json 2>/dev/null
check_json a.json t.json 'j["guest_hz"] == 1000000000' 'j["method"] == "debugfs"'
# its last page's commit past the page: warned of, read up to there
"$PY" - gt/trace.dat <<'PYEOF'
import os, struct, sys
with open(sys.argv[1], "r+b") as f:
    f.seek(os.path.getsize(sys.argv[1]) - 4096 + 8)
    f.write(struct.pack("<Q", 0x7fff))
PYEOF
"$VT_BIN" align h gt --json >a.json 2>err.txt
grep -qF 'warning: gt/trace.dat: 1 malformed or cut ring-buffer pages read up to their last sound event' err.txt ||
	fail "guest trace.dat page: $(cat err.txt)"
check_json a.json t.json 'j["markers"]["pairs"] == 20'
echo garbage >gt/trace.dat
expect_exit 1 'gt/trace.dat' -- "$VT_BIN" align h gt
rm gt/trace.dat
echo garbage >gt/vmtrace.meta
expect_exit 1 'gt/vmtrace.meta: not a vmtrace metadata file' -- "$VT_BIN" align h gt
for kv in tsc.hz=0 tsc.hz=; do
	cp g/vmtrace.meta gt/vmtrace.meta
	meta_set gt $kv
	"$VT_BIN" align h gt --json >a.json 2>/dev/null
	check_json a.json t.json 'j["guest_hz"] == 0' 'j["markers"]["pairs"] == 20'
done

# directory names with a quote, a backslash and a control character: JSON
# escapes them
q=$(printf 'h"q\\b\001')
cp -r h "$q"
"$VT_BIN" align "$q" g --json >a.json 2>/dev/null
"$PY" - a.json "$q" <<'PYEOF' || fail "JSON escapes"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["host_dir"] == sys.argv[2], (j["host_dir"], sys.argv[2])
assert any(n.startswith("host: " + sys.argv[2] + "/trace.dat: ") for n in j["notes"]), j["notes"]
print("ok   a path with \" \\ and \\x01 read back from JSON")
PYEOF
echo "ok: inputs"
