#!/bin/bash
# The debugfs source from the host's vmtrace.meta alone (no markers): the
# tsc-scaling-ratio and its fraction bits (meta, CPU vendor, the ratio's
# size) give the exact KVM line; an implausible ratio is ignored loudly; an
# offset that changed with no kvm_write_tsc_offset is warned of; several
# VMs at once or one after the other; malformed readings refused by name;
# more vCPUs created before the recording than are spoken of.
set -eu
. "$VT_SRC/tests/align/lib.sh"

# meta_set and expect_exit: tests/align/lib.sh
# kvm_line J RATIO FRAC OFF: the chosen segment is debugfs's, KVM's line
# guest = ((host * RATIO) >> FRAC) + OFF, exact at its reference point
kvm_line() {
	"$PY" - "$@" <<'PYEOF'
import json, sys
j = json.load(open(sys.argv[1]))
ratio, frac, off = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
s = j["segments"][0]
want = ((s["ref_tsc_host"] * ratio) >> frac) + off
ok = s["source"] == "debugfs" and s["ref_tsc_guest"] == want and s["slope"] == ratio / 2.0 ** frac
print("%s debugfs line: source %s, ref %d -> %d (want %d), slope %r (want %r)" %
      ("ok  " if ok else "FAIL", s["source"], s["ref_tsc_host"], s["ref_tsc_guest"], want,
       s["slope"], ratio / 2.0 ** frac))
sys.exit(0 if ok else 1)
PYEOF
}

"$MKFIX" h0 g -n 10 -o 5000 -T >t.json
rm g/markers.dat
OFF=5000
R48=$(( (1 << 48) + (1 << 47) ))	# 1.5 in 48 fraction bits (Intel)
R32=$(( (1 << 32) + (1 << 31) ))	# 1.5 in 32 (AMD)
fresh() { rm -rf h; cp -r h0 h; }

# the fraction bits: stated by the meta, else the vendor's, else the
# ratio's size says which
fresh
meta_set h kvm.vm0.vcpu0.tsc_scaling_ratio.nr=1 "kvm.vm0.vcpu0.tsc_scaling_ratio.0=$R48 5000000000001 start" \
	kvm.tsc_scaling_frac_bits=48
"$VT_BIN" align h g --json >a.json
kvm_line a.json "$R48" 48 $OFF
meta_set h kvm.tsc_scaling_frac_bits= cpu.vendor=AuthenticAMD "kvm.vm0.vcpu0.tsc_scaling_ratio.0=$R32 1 start"
"$VT_BIN" align h g --json >a.json
kvm_line a.json "$R32" 32 $OFF
meta_set h cpu.vendor=GenuineIntel "kvm.vm0.vcpu0.tsc_scaling_ratio.0=$R48 1 start"
"$VT_BIN" align h g --json >a.json
kvm_line a.json "$R48" 48 $OFF
meta_set h cpu.vendor=
"$VT_BIN" align h g --json >a.json
kvm_line a.json "$R48" 48 $OFF
meta_set h "kvm.vm0.vcpu0.tsc_scaling_ratio.0=$R32 1 start"
"$VT_BIN" align h g --json >a.json
kvm_line a.json "$R32" 32 $OFF
# a ratio of 2^32 in 48 bits (1/65536): implausible, slope 1
meta_set h kvm.tsc_scaling_frac_bits=48 "kvm.vm0.vcpu0.tsc_scaling_ratio.0=$((1 << 32)) 1 start"
"$VT_BIN" align h g --json >a.json 2>/dev/null
kvm_line a.json 1 0 $OFF
check_json a.json t.json \
	'any("vCPU 0: debugfs tsc-scaling-ratio 4294967296 with 48 fraction bits is 1.52588e-05: implausible, ignored" in w for w in j["warnings"])'

# the offset read again, changed, with no kvm_write_tsc_offset: the later one
fresh
meta_set h kvm.vm0.vcpu0.tsc_offset.nr=2 "kvm.vm0.vcpu0.tsc_offset.1=6000 5000200000000 poll"
"$VT_BIN" align h g --json >a.json 2>/dev/null
kvm_line a.json 1 0 6000
check_json a.json t.json \
	'any("vCPU 0: debugfs tsc-offset changed from 5000 to 6000 with no kvm_write_tsc_offset event: using the later one" in w for w in j["warnings"])'

# two VMs one after the other (saved, restored): one guest, every VM's readings
fresh
meta_set h kvm.vms=2 kvm.vm1.vcpus=1 kvm.vm1.vcpu0.tsc_offset.nr=1 \
	"kvm.vm1.vcpu0.tsc_offset.0=5000 5000300000000 start"
"$VT_BIN" align h g --json >a.json 2>/dev/null
check_json a.json t.json \
	'any("2 VMs in the recording, one after the other" in n for n in j["notes"])' \
	'"host: 2 debugfs tsc-offset readings (every VM)" in j["notes"]'
# ... at once (vm1 read before vm0's last reading): vm0's only
meta_set h kvm.vm0.vcpu0.tsc_offset.nr=2 "kvm.vm0.vcpu0.tsc_offset.1=5000 5000400000000 end"
"$VT_BIN" align h g --json >a.json 2>/dev/null
check_json a.json t.json \
	'"host: 2 VMs in the recording at once: using vm0'"'"'s debugfs readings" in j["notes"]' \
	'"host: 2 debugfs tsc-offset readings (vm0)" in j["notes"]'
# ... a VM with no reading: nothing says when it ran, not in sequence
meta_set h kvm.vm0.vcpu0.tsc_offset.nr=1 kvm.vm1.vcpu0.tsc_offset.nr=0
"$VT_BIN" align h g --json >a.json 2>/dev/null
check_json a.json t.json \
	'"host: 2 VMs in the recording at once: using vm0'"'"'s debugfs readings" in j["notes"]'

# ... 65 VMs: more than are compared (64): at once
meta_set h kvm.vms=65
"$VT_BIN" align h g --json >a.json 2>/dev/null
check_json a.json t.json \
	'"host: 65 VMs in the recording at once: using vm0'"'"'s debugfs readings" in j["notes"]'
kvm_line a.json 1 0 $OFF

# a malformed ratio reading is no ratio (slope 1)
fresh
meta_set h kvm.vm0.vcpu0.tsc_scaling_ratio.nr=1 "kvm.vm0.vcpu0.tsc_scaling_ratio.0=1.5 1 start"
"$VT_BIN" align h g --json >a.json 2>/dev/null
kvm_line a.json 1 0 $OFF

# malformed readings and counts: refused, the key named
fresh
for bad in "5000 x start" "x 1 start" "5000 1x start" "5000" "99999999999999999999 1 start"; do
	meta_set h "kvm.vm0.vcpu0.tsc_offset.0=$bad"
	expect_exit 1 "h/vmtrace.meta: kvm.vm0.vcpu0.tsc_offset.0: expected \"OFFSET TSC WHEN\", got \"$bad\"" -- \
		"$VT_BIN" align h g
done
meta_set h "kvm.vm0.vcpu0.tsc_offset.0=5000 1 start" kvm.vm0.vcpu0.tsc_offset.nr=2
expect_exit 1 'kvm.vm0.vcpu0.tsc_offset.1: expected "OFFSET TSC WHEN", got "(missing)"' -- \
	"$VT_BIN" align h g
meta_set h kvm.vm0.vcpu0.tsc_offset.nr=100001
expect_exit 1 'h/vmtrace.meta: kvm.vm0.vcpu0.tsc_offset.nr = 100001: too many' -- "$VT_BIN" align h g
meta_set h kvm.vm0.vcpu0.tsc_offset.nr=1 kvm.vm0.vcpus=1025
expect_exit 1 'h/vmtrace.meta: kvm.vm0.vcpus = 1025: too many' -- "$VT_BIN" align h g

# fraction bits out of range (0, 64) are not stated: the vendor decides;
# a vendor neither AMD nor Intel: the ratio's size
fresh
for fb in 0 64; do
	meta_set h kvm.vm0.vcpu0.tsc_scaling_ratio.nr=1 "kvm.vm0.vcpu0.tsc_scaling_ratio.0=$R32 1 start" \
		kvm.tsc_scaling_frac_bits=$fb cpu.vendor=AuthenticAMD
	"$VT_BIN" align h g --json >a.json
	kvm_line a.json "$R32" 32 $OFF
done
meta_set h kvm.tsc_scaling_frac_bits= cpu.vendor=HygonGenuine "kvm.vm0.vcpu0.tsc_scaling_ratio.0=$R48 1 start"
"$VT_BIN" align h g --json >a.json
kvm_line a.json "$R48" 48 $OFF
# no ratio reading: a count of 0, past the series' limit, a missing reading
for kv in kvm.vm0.vcpu0.tsc_scaling_ratio.nr=0 kvm.vm0.vcpu0.tsc_scaling_ratio.nr=100001 \
	  kvm.vm0.vcpu0.tsc_scaling_ratio.nr=2; do
	meta_set h "$kv"
	"$VT_BIN" align h g --json >a.json
	kvm_line a.json 1 0 $OFF
done

# a reading with no WHEN is one; a TSC past 64 bits is refused
fresh
meta_set h "kvm.vm0.vcpu0.tsc_offset.0=6000 5000000000001"
"$VT_BIN" align h g --json >a.json 2>/dev/null
kvm_line a.json 1 0 6000
meta_set h "kvm.vm0.vcpu0.tsc_offset.0=5000 99999999999999999999 start"
expect_exit 1 'kvm.vm0.vcpu0.tsc_offset.0: expected "OFFSET TSC WHEN", got "5000 99999999999999999999 start"' -- \
	"$VT_BIN" align h g
# a vCPU with no offset series (no count, a count of 0): no reading of it
fresh
meta_set h kvm.vm0.vcpus=3 kvm.vm0.vcpu2.tsc_offset.nr=0
"$VT_BIN" align h g --json >a.json 2>/dev/null
check_json a.json t.json '"host: 1 debugfs tsc-offset readings (vm0)" in j["notes"]'
kvm_line a.json 1 0 $OFF

# VMs one after the other, told by the spans of their readings: vm1 ran
# before vm0 (its readings out of order), its series partly malformed
# (the span skips what it cannot read; loading it refuses it by name)
fresh
meta_set h kvm.vms=2 kvm.vm1.vcpus=2 kvm.vm1.vcpu0.tsc_offset.nr=3 \
	"kvm.vm1.vcpu0.tsc_offset.0=5000 4000000000000 start" "kvm.vm1.vcpu0.tsc_offset.1=5000 3000000000000 poll" \
	"kvm.vm1.vcpu0.tsc_offset.2=bad" kvm.vm1.vcpu1.tsc_offset.nr=100001
expect_exit 1 'h/vmtrace.meta: kvm.vm1.vcpu0.tsc_offset.2: expected "OFFSET TSC WHEN", got "bad"' -- \
	"$VT_BIN" align h g
meta_set h kvm.vm1.vcpu0.tsc_offset.nr=2 kvm.vm1.vcpu1.tsc_offset.nr=
"$VT_BIN" align h g --json >a.json 2>/dev/null
check_json a.json t.json \
	'any("2 VMs in the recording, one after the other" in n for n in j["notes"])' \
	'"host: 3 debugfs tsc-offset readings (every VM)" in j["notes"]'
# vm1's vCPU count missing, or past the limit: nothing says when it ran
for kv in kvm.vm1.vcpus= kvm.vm1.vcpus=1025; do
	meta_set h "$kv"
	"$VT_BIN" align h g --json >a.json 2>/dev/null
	check_json a.json t.json \
		'"host: 2 VMs in the recording at once: using vm0'"'"'s debugfs readings" in j["notes"]'
done

# the PVM note (debugfs reads 0 where the tracepoint started the guest's
# TSC from 0): only for a write of the same vCPU, with a negative offset
# within a second of -(its host TSC): here vCPU 1's write, a positive one
# and one far off come first, then one 5 ticks past -(host TSC); a second
# vCPU also reads 0 (its creation write from 0 as well)
C=5000000000000
cat >ev.txt <<EOT
$((C - 4000)) 4242 tsc 1 0 $((4000 - C))
$((C - 3000)) 4242 tsc 0 0 5000
$((C - 2000)) 4242 tsc 0 5000 -1000
$((C - 1000)) 4242 tsc 0 -1000 $((995 - C))
EOT
rm -rf p pg; "$MKFIX" p pg -n 0 -o 0 -d 0 -e ev.txt >/dev/null
meta_set p kvm.vm0.vcpus=2 kvm.vm0.vcpu1.tsc_offset.nr=1 "kvm.vm0.vcpu1.tsc_offset.0=0 $((C + 1)) start"
"$VT_BIN" align p pg --json >a.json 2>/dev/null
check_json a.json t.json \
	'[n.split(" (guest")[0] for n in j["notes"] if "does not apply" in n] == ["host: vCPU 0: kvm_write_tsc_offset asked for offset %d" % (995 - t["create_tsc_host"]), "host: vCPU 1: kvm_write_tsc_offset asked for offset %d" % (4000 - t["create_tsc_host"])]'
# ... not with a scaling ratio (KVM's line is not "from 0" then)
meta_set p kvm.vm0.vcpus=1 kvm.vm0.vcpu0.tsc_scaling_ratio.nr=1 "kvm.vm0.vcpu0.tsc_scaling_ratio.0=$R48 1 start" \
	kvm.tsc_scaling_frac_bits=48
"$VT_BIN" align p pg --json >a.json 2>/dev/null
check_json a.json t.json 'not any("does not apply" in n for n in j["notes"])' \
	'any("debugfs tsc-offset readings" in n for n in j["notes"])'
# ... nor without a host frequency: no model; what was found is listed
meta_set p tsc.hz=
expect_exit 1 'host TSC frequency unknown' -- "$VT_BIN" align p pg
grep -qF 'what was found:' err.txt || fail "no notes with the error: $(cat err.txt)"
grep -qF 'host: 1 debugfs tsc-offset readings (vm0)' err.txt || fail "notes: $(cat err.txt)"
if grep -q 'does not apply' err.txt; then fail "PVM note without a frequency: $(cat err.txt)"; fi

# 65 vCPUs read from debugfs, only vCPU 0's creation write in the trace:
# the recording started after the others were made; said of each in
# order from vCPU 1 (64 vCPUs are looked at, the notes' 8 KB hold some
# 40 of these lines), never of vCPU 0
"$MKFIX" v gv -n 5 -o 5000 >t.json
kv=(kvm.vm0.vcpus=65)
for k in $(seq 1 64); do
	kv+=("kvm.vm0.vcpu$k.tsc_offset.nr=1" "kvm.vm0.vcpu$k.tsc_offset.0=5000 5000000000001 start")
done
meta_set v "${kv[@]}"
"$VT_BIN" align v gv --json >a.json 2>/dev/null
check_json a.json t.json \
	'[n.split(":")[1] for n in j["notes"] if "creation-time kvm_write_tsc_offset" in n] == [" vCPU %d" % k for k in range(1, 1 + sum("creation-time" in n for n in j["notes"]))]' \
	'sum("creation-time" in n for n in j["notes"]) >= 40'
echo "debugfs: ratio and fraction bits, implausible ratio, unannounced change, VMs, bad readings, the PVM note, many late vCPUs"
