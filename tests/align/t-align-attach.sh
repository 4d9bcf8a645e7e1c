#!/bin/bash
# A recording started after the VM (vmtrace record -p QEMU_PID on a running
# guest) on a real KVM: the vCPU's creation-time kvm_write_tsc_offset is not
# in the trace.  `vmtrace align` says so and takes the offset from debugfs
# and the in-band markers the trace does hold: proven by the markers, the
# exact offset (debugfs) inside the bound; the guest's markers from before
# the recording have no host twin and are reported, not matched.  Runs on
# this machine's KVM or in the KVM lab (tests/lib/kvm.sh).
# timeout: 300
# needs: kvm
# san: skip: align's code on a late recording (no creation-time offset, debugfs and hypercall markers) runs under ASan in align/t-align-hypercall and t-align-debugfs; the recorder on real kvm events in host/t-record-kvm
set -eu
. "$VT_SRC/tests/align/lib.sh"
. "$VT_SRC/tests/lib/kvm.sh"
kvm_or_lab "$@"
need_record
elf=$VT_BUILD/tests/align/marker-guest-hcmig.elf
[ -f "$elf" ] || fail "$elf not built"
need_kvm
mkdir guest
qemu-system-x86_64 -enable-kvm -kernel "$elf" -m 16 -nodefaults -no-reboot -display none \
	-serial none -monitor none -name late,debug-threads=on \
	-device isa-debug-exit,iobase=0xf4,iosize=4 \
	-device isa-debugcon,iobase=0x4e9,chardev=dump -chardev file,id=dump,path=guest/markers.dat \
	-device isa-debugcon,iobase=0x4ea,chardev=prog -chardev file,id=prog,path=guest/progress &
qpid=$!
for ((i = 0; i < 600; i++)); do
	[ "$(stat -c %s guest/progress 2>/dev/null || echo 0)" -ge 6 ] && break
	sleep 0.1
done
[ "$(stat -c %s guest/progress 2>/dev/null || echo 0)" -ge 6 ] || { kill $qpid; fail "the guest did not start"; }
# the VM waits (SIGSTOP) until the recorder says it records: on a loaded
# machine its start-up outlasted the guest's run (0 markers recorded)
kill -STOP $qpid
echo "recording from marker $(stat -c %s guest/progress) on"
# -p follows the QEMU's syscalls; the recorder stops on SIGINT once the
# guest has exited
"$VT_BIN" record -o host -p $qpid 2>record.err &
rpid=$!
for ((i = 0; i < 600; i++)); do
	grep -q 'record: recording to' record.err && break
	kill -0 $rpid 2>/dev/null || break
	sleep 0.1
done
kill -CONT $qpid
grep -q 'record: recording to' record.err || { cat record.err; kill $qpid $rpid; fail "the recorder did not start"; }
qrc=0
wait $qpid || qrc=$?
sleep 0.5
kill -INT $rpid
rc=0
wait $rpid || rc=$?
cat record.err
[ $qrc = 1 ] || fail "the guest did not exit through isa-debug-exit (qemu status $qrc)"
[ $rc = 0 ] || fail "vmtrace record -p $qpid: status $rc"
"$VT_BIN" align host
"$VT_BIN" align host --json >a.json
echo '{"hz": 1}' >t.json
LIMIT_NS=20000
[ -n "${VT_IN_LAB:-}" ] && LIMIT_NS=250000
check_json a.json t.json \
	'any("creation-time kvm_write_tsc_offset is not in the trace" in n for n in j["notes"])' \
	'j["method"] == "markers" and 4 <= j["markers"]["pairs"] <= 34' \
	'len(j["segments"]) == 1 and j["segments"][0]["source"] == "markers"' \
	"0 < j['segments'][0]['bound_ns'] < $LIMIT_NS" \
	'not [s for s in j["sources"] if s["source"] == "tracepoint"]' \
	"[s['agrees'] for s in j['sources'] if s['source'] == 'debugfs'] and all(s['agrees'] for s in j['sources'] if s['source'] == 'debugfs')" \
	"all(abs(s['offset_tsc'] - j['segments'][0]['offset_tsc']) * 1e9 / j['host_hz'] <= j['segments'][0]['bound_ns'] for s in j['sources'] if s['source'] == 'debugfs')"
# with the guest's markers.dat: the markers sent before the recording have
# no host twin, said as such (how many depends on how soon the recorder
# started: under load, as few as 13 of the 40 were recorded); the model is
# the same
"$VT_BIN" align host guest --json >ag.json
check_json ag.json t.json \
	'any(("%d of 40 guest markers have no host twin" % (40 - j["markers"]["pairs"])) in w for w in j["warnings"])' \
	"j['segments'] == json.load(open('a.json'))['segments']"
