#!/bin/bash
# The inside check on fixtures (mkfixture -r: the vCPU thread's runs, each
# marker's action its kvm_exit): every marker reading inside a run with
# the right map, half of them outside by a known distance with a wrong
# --offset; the vCPU threads a trace without meta names (by name, none,
# not a vCPU, a run with no entry, more threads than are tracked); VMs one
# after the other (a saved and restored guest): the first VM's thread
# stopped for good, a segment per VM.
set -eu
. "$VT_SRC/tests/align/lib.sh"
C=5000000000000		# mkfixture's CREATE_TSC
HZ=2096001000

# -j 0: every bracket is [h - 300, h + 300] ticks around its action at h;
# a run ends at h, the next starts at h + 250
"$MKFIX" h g -n 10 -o 5000 -r -j 0 >t.json
"$VT_BIN" align h g --json >a.json 2>err.txt
check_json a.json t.json 'j["inside"]["events"] == 20 and j["inside"]["inside"] == 20' \
	'j["inside"]["marker_readings"] == 20 and j["inside"]["runs"] == 11' \
	'j["inside"]["fraction"] == 1.0 and j["inside"]["worst_outside_ns"] == 0' \
	'abs(j["inside"]["shift_lo_ns"] - ns(-50)) < 0.1 and abs(j["inside"]["shift_hi_ns"] - ns(300)) < 0.1'
"$VT_BIN" align h g >a.txt 2>err.txt
grep -qF 'inside check: 20 of 20 guest events (100.00%) fall inside a host [kvm_entry, kvm_exit] of their vCPU; worst outside by 0 ns' a.txt ||
	fail "inside text: $(cat a.txt)"
grep -qF 'every one stays inside for a shift of the map in [-24 ns, +143 ns]' a.txt || fail "shift text: $(cat a.txt)"
if grep -q 'INSIDE CHECK FAILS' err.txt; then fail "the right map fails the check: $(cat err.txt)"; fi

# the map 400 ticks late: each "before" reading lands 100 ticks after its
# run's exit (150 before the next entry), each "after" stays inside
"$VT_BIN" align h g --offset 4600 >a.txt 2>err.txt
grep -qF 'inside check: 10 of 20 guest events (50.00%) fall inside' a.txt || fail "wrong map: $(cat a.txt)"
grep -qF 'worst outside by 48 ns (vCPU 0, guest TSC ' a.txt || fail "worst: $(cat a.txt)"
if grep -q 'every one stays inside' a.txt; then fail "a shift claimed: $(cat a.txt)"; fi
grep -qF 'INSIDE CHECK FAILS: 10 of 20 guest events map outside every host run of their vCPU (worst by 48 ns)' err.txt ||
	fail "no INSIDE CHECK FAILS: $(cat err.txt)"
# runs recorded but no guest to check against them: said so
"$VT_BIN" align h >a.txt 2>/dev/null
grep -qF 'inside check: no guest events with a vCPU (a guest trace.dat or markers) to check' a.txt ||
	fail "runs, no guest: $(cat a.txt)"
# no runs recorded: said so
"$MKFIX" h0 g0 -n 10 -o 5000 >/dev/null
"$VT_BIN" align h0 g0 >a.txt 2>/dev/null
grep -qF 'inside check: no host kvm_entry/kvm_exit of the vCPU threads recorded' a.txt || fail "no runs: $(cat a.txt)"

# no meta: every thread may be a vCPU thread, its vCPU from its name.
# 4244 "CPU 1/KVM": an exit with no entry first (no run), then a run of
# vCPU 1, then an exit stamped before its entry (a new ring-buffer page
# whose time went back: no run); 4245 "worker": no vCPU; 4246 "CPU
# -1/KVM": none either; 4247: no name at all.  11 runs of vCPU 0 (4242) +
# 1 of vCPU 1.
cat >ev.txt <<EOT
comm 4244 CPU 1/KVM
comm 4245 worker
comm 4246 CPU -1/KVM
$((C + 3000000000)) 4244 exit 0
$((C + 3000000100)) 4244 entry 1
$((C + 3000000200)) 4244 exit 0
$((C + 3000000260)) 4244 entry 1
page
$((C + 3000000250)) 4244 exit 0
$((C + 3000000300)) 4245 entry 0
$((C + 3000000400)) 4245 exit 0
$((C + 3000000500)) 4246 entry 0
$((C + 3000000550)) 4246 exit 0
$((C + 3000000600)) 4247 entry 0
$((C + 3000000700)) 4247 exit 0
EOT
rm -rf h g; "$MKFIX" h g -n 10 -o 5000 -r -j 0 -M -e ev.txt >t.json
"$VT_BIN" align h g --tsc-hz $HZ --json >a.json 2>/dev/null
check_json a.json t.json 'j["inside"]["runs"] == 12 and j["inside"]["inside"] == 20'

# 4200 more threads "CPU 0/KVM", a run each: the first 4095 are tracked
# (4096 with 4242), the rest are not
"$PY" - <<EOT >ev.txt
for i in range(4200):
    print("comm %d CPU 0/KVM" % (10000 + i))
for i in range(4200):
    print("%d %d entry 0" % ($C + 3000000000 + 10 * i, 10000 + i))
    print("%d %d exit 0" % ($C + 3000000005 + 10 * i, 10000 + i))
EOT
rm -rf h g; "$MKFIX" h g -n 10 -o 5000 -r -j 0 -M -e ev.txt >t.json
"$VT_BIN" align h g --tsc-hz $HZ --json >a.json 2>/dev/null
check_json a.json t.json 'j["inside"]["runs"] == 11 + 4095 and j["inside"]["inside"] == 20'

# events before the meta's recording start: the span starts with them
rm -rf h g
printf '%d 4242 pio 1 0x70 7 1\n' $((C - 400000000)) >ev.txt
"$MKFIX" h g -n 10 -o 5000 -e ev.txt >t.json
"$VT_BIN" align h g --json >a.json 2>/dev/null
check_json a.json t.json 'j["segments"][0]["source"] == "markers"' \
	'ns(abs(j["segments"][0]["offset_tsc"] - t["offset"])) <= j["segments"][0]["bound_ns"]'

# two VMs one after the other (the guest saved, then restored into a new
# QEMU: thread 4244, vCPU 0 too, with offset 7000 from host TSC C+3e9);
# 4242's last exit stops the first VM for good (4245, the new VM's vCPU 1,
# stops nothing of vCPU 0)
T=$((C + 3000000000))
cat >ev.txt <<EOT
$T 4244 tsc 0 0 7000
$((T + 10)) 4244 entry 0
$((T + 1000)) 4244 exit 0
$((T + 2000)) 4245 entry 1
$((T + 3000)) 4245 exit 0
$((T + 4000)) 4246 entry 0
$((T + 5000)) 4246 exit 0
EOT
rm -rf h g; "$MKFIX" h g -n 10 -o 5000 -r -j 0 -e ev.txt >t.json
meta_set h kvm.vcpu_threads=3 kvm.thread1.tid=4244 kvm.thread1.vcpu=0 kvm.thread2.tid=4245 \
	kvm.thread2.vcpu=1 kvm.vms=2 kvm.vm1.vcpus=1 \
	kvm.vm1.vcpu0.tsc_offset.nr=1 "kvm.vm1.vcpu0.tsc_offset.0=7000 $((T + 5)) start"
"$VT_BIN" align h g --json >a.json 2>/dev/null
check_json a.json t.json \
	'any("2 VMs in the recording, one after the other" in n for n in j["notes"])' \
	'any("host: 1 vCPU thread(s) stopped for good before a later VM" in n for n in j["notes"])' \
	'[s["source"] for s in j["segments"]] == ["markers", "debugfs"]' \
	'j["segments"][0]["offset_tsc"] == 5000 and j["segments"][1]["offset_tsc"] == 7000' \
	'j["segments"][1]["tsc_host_start"] == '$T \
	'j["inside"]["inside"] == 20 and j["inside"]["runs"] == 13'
echo "inside check: runs, a wrong map, threads without meta, VMs one after the other"
