#!/bin/bash
# `vmtrace record -- qemu-system-x86_64 -enable-kvm -kernel pio-guest.elf`:
# the trace holds kvm_write_tsc_offset of the guest's vCPU and exactly the
# guest's PIO sequence as kvm_pio events, trace-cmd report agreeing.  The
# guest is the freestanding multiboot ELF tests/host/pio-guest.S (8 outl of
# 0xC0DE0001.. to port 0x7e0, then isa-debug-exit).  The same flow runs
# under TCG first (works without /dev/kvm): it proves the QEMU process's
# recording (its syscalls, sched events, vCPU thread, exit status).  The
# KVM part runs only past tests/lib/kvm.sh's gate (vt-kvm-probe, and QEMU
# -accel kvm running pio-guest.elf); each KVM run is bounded (KVM_RUN_SECS).
# timeout: 300
# needs: kvm
set -eu
. "$VT_SRC/tests/host/lib.sh"
. "$VT_SRC/tests/lib/kvm.sh"
kvm_or_lab "$@"
need_tracefs
command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86_64 not installed (make deps)"
guest=$VT_BUILD/tests/host/pio-guest.elf
[ -f "$guest" ] || fail "$guest not built"
PORT=2016		# 0x7e0
FIRST=3235774465	# 0xC0DE0001
COUNT=8
qemu_args=(-name pio,debug-threads=on -kernel "$guest" -device isa-debug-exit,iobase=0xf4,iosize=4
	   -display none -serial none -monitor none -nodefaults -no-reboot -m 16)

# --- TCG: the QEMU process's events ---
rc=0
"$VT_BIN" record -o tcg -- qemu-system-x86_64 -accel tcg "${qemu_args[@]}" || rc=$?
[ $rc = 1 ] || fail "isa-debug-exit status 1 not passed through (got $rc)"
[ "$(meta record.command_exit tcg)" = 1 ] || fail "exit status not in meta"
[ "$(meta domain tcg)" = host ] || fail "domain"
[ "$(meta kvm.vcpu_threads tcg)" -ge 1 ] || fail "vCPU thread not found"
[ "$(meta kvm.thread0.comm tcg)" = "CPU 0/TCG" ] || fail "vCPU thread name"
vtid=$(meta kvm.thread0.tid tcg)
qpid=$(meta kvm.thread0.pid tcg)
"$TDCOUNT" -c "$vtid" tcg/trace.dat >tcg.txt
cat tcg.txt
grep -q "^comm $vtid CPU 0/TCG" tcg.txt || fail "vCPU thread's comm not in trace.dat cmdlines"
grep -q '^event syscalls:sys_enter_openat [1-9]' tcg.txt || fail "no QEMU openat syscalls"
grep -q '^event sched:sched_switch [1-9]' tcg.txt || fail "no sched_switch"
"$TDCOUNT" -f sched:sched_switch:prev_pid,next_pid tcg/trace.dat | grep -Eq "(prev|next)_pid=$vtid( |\$)" ||
	fail "vCPU thread $vtid never scheduled in the trace"
"$TDCOUNT" -f syscalls:sys_enter_execve:common_pid tcg/trace.dat | grep -q "common_pid=$qpid " ||
	fail "exec of QEMU ($qpid) not recorded"
check_counts tcg

# --- KVM: kvm_write_tsc_offset and the PIO sequence ---
rc=0
kvm_check || rc=$?
[ $rc = 2 ] && fail "$KVM_WHY"
[ $rc = 0 ] || skip "$KVM_WHY: KVM part skipped (TCG part passed)"
echo "$KVM_WHY"
rc=0
kvm_timeout "$VT_BIN" record -o kvm -- qemu-system-x86_64 -enable-kvm "${qemu_args[@]}" || rc=$?
[ $rc = 1 ] || fail "qemu -enable-kvm exit status $rc (want 1 from isa-debug-exit; 124: not done in $KVM_RUN_SECS s)"
vtid=$(meta kvm.thread0.tid kvm)
[ "$(meta kvm.thread0.comm kvm)" = "CPU 0/KVM" ] || fail "KVM vCPU thread not found"
"$TDCOUNT" -f kvm:kvm_write_tsc_offset:common_pid,vcpu_id kvm/trace.dat | grep "^common_pid=" >tsc.txt
cat tsc.txt
grep -q "^common_pid=$vtid vcpu_id=0 " tsc.txt ||
	fail "no kvm_write_tsc_offset for vCPU 0 from its thread $vtid"
# a full KVM (kvm-amd/kvm-intel; the lab): each reading of debugfs's
# vcpu0/tsc-offset the recorder kept (its value, the host TSC just before
# it) is, to the tick, the offset the last kvm_write_tsc_offset before that
# TSC set (or the next one: a write between the TSC read and the file's);
# KVM writes it several times while QEMU starts, seconds apart on a loaded
# machine, so a reading can fall between two writes
if [ -d /sys/module/kvm_amd ] || [ -d /sys/module/kvm_intel ]; then
	"$TDCOUNT" -f kvm:kvm_write_tsc_offset:common_pid,next_tsc_offset kvm/trace.dat |
		grep "^common_pid=$vtid " >tsco.txt
	nr=$(meta kvm.vm0.vcpu0.tsc_offset.nr kvm)
	[ -n "$nr" ] || fail "no debugfs tsc-offset reading in the meta"
	: >dfs.txt
	for ((k = 0; k < nr; k++)); do
		meta kvm.vm0.vcpu0.tsc_offset.$k kvm >>dfs.txt
	done
	python3 - tsco.txt dfs.txt <<'PYEOF' || fail "debugfs tsc-offset readings differ from kvm_write_tsc_offset's"
import re, sys
tp = []
for l in open(sys.argv[1]):
    v = int(re.search(r"next_tsc_offset=(\d+)", l).group(1))
    tp.append((int(re.search(r"ts=(\d+)", l).group(1)), v - (1 << 64) if v >= 1 << 63 else v))
tp.sort()
assert tp and all(v != 0 for _, v in tp), "no (or a zero) TSC offset from a real KVM: %s" % tp
checked = 0
for l in open(sys.argv[2]):
    v, t, when = l.split()
    v, t = int(v), int(t)
    before = [x for ts, x in tp if ts <= t]
    after = [x for ts, x in tp if ts > t]
    if not before:
        continue
    ok = v == before[-1] or (after and v == after[0])
    print("debugfs %d at TSC %d (%s): tracepoint %d%s" % (v, t, when, before[-1], "" if ok else "  DIFFERS"))
    assert ok
    checked += 1
assert checked, "no debugfs reading after the first kvm_write_tsc_offset"
PYEOF
fi
"$TDCOUNT" -f kvm:kvm_pio:port,val,rw kvm/trace.dat | grep "^port=$PORT " | awk '{print $2}' >pio.txt
want=$(for i in $(seq 0 $((COUNT - 1))); do echo "val=$((FIRST + i))"; done)
[ "$(cat pio.txt)" = "$want" ] || { cat pio.txt; fail "kvm_pio sequence differs"; }
tc=$(trace-cmd report kvm/trace.dat 2>/dev/null | grep -c 'kvm_pio:.* at 0x7e0 ')
[ "$tc" = $COUNT ] || fail "trace-cmd report shows $tc kvm_pio at 0x7e0, want $COUNT"
[ -n "$(meta kvm.vm0.pid kvm)" ] || echo "note: no KVM debugfs facts (debugfs not mounted?)"
check_counts kvm

# the project's unikernel (docs/format/unikernel.md), when built: its 4 PIO
# in-band hypercall markers (lib/marker.h, 64-bit ABI) appear as
# kvm_hypercall nr 0x56540001 with seq 0..3 in a2, in order, then the
# closing call (seq all ones)
uk=$VT_BUILD/guest/unikernel.elf
if [ -f "$uk" ] && ! kvm_longmode_check; then
	echo "note: unikernel part skipped: $KVM_WHY"
elif [ -f "$uk" ]; then
	rc=0
	kvm_timeout "$VT_BIN" record -o uk -- qemu-system-x86_64 -enable-kvm -name uk,debug-threads=on \
		-kernel "$uk" -m 64 -display none -nodefaults -no-reboot -debugcon file:uk.bin \
		-device isa-debug-exit,iobase=0xf4,iosize=4 || rc=$?
	[ $rc = 33 ] || fail "unikernel exit status $rc, want 33 (124: not done in $KVM_RUN_SECS s)"
	"$TDCOUNT" -f kvm:kvm_hypercall:nr,a2 uk/trace.dat | grep "^nr=$((0x56540001)) " |
		awk '{print $2}' >uk.txt
	want=$(for i in 0 1 2 3 18446744073709551615; do echo "a2=$i"; done)
	[ "$(cat uk.txt)" = "$want" ] || { cat uk.txt; fail "unikernel markers as kvm_hypercall differ"; }
	check_counts uk
fi
echo "KVM recording: OK"
