#!/bin/bash
# b-kvm.sh: vmtrace record against trace-cmd record on a real KVM (this
# machine's, else the KVM lab's: `vmtrace lab`, where trace-cmd record works
# since ftrace_enabled is the kernel's own).  The workload is a guest making
# a high rate of exits: tests/host/pio-loop.elf, 20000 PIO writes, each a
# kvm_exit + kvm_pio + kvm_userspace_exit + kvm_entry on the host, run by
# QEMU -enable-kvm outside the recorder.  Each recorder records the kvm
# system (-e kvm, 4 MB per CPU, x86-tsc clock) while it waits for the guest
# to end; the tools take turns (their order rotates each round), RUNS
# rounds each; medians.  vmtrace-ks is vmtrace record --kallsyms: the
# recorder storing /proc/kallsyms as trace-cmd does (vmtrace stores it only
# when an event needs it, and kvm's do not), so both costs are shown.  Reported: events
# kept per second of guest run, events lost, bytes per event on disk,
# recorder CPU (user + system, from GNU time: the recorder, trace-cmd's
# per-CPU children, and the traced command - `cat FIFO`, blocked until the
# round ends, ~0 CPU), and whether each tool's file opens in the other
# (`trace-cmd report` on vmtrace's, `vmtrace merge` on trace-cmd's).
# Until 2026-11-27 the traced command was a shell polling a stop file
# (`while [ ! -e stop ]; do sleep 0.05; done`): its 20 forks a second cost
# ~0.6 s of CPU per second in the lab, more than either recorder, and were
# counted in both; WAITER=sh brings it back for a comparison.
# Usage: b-kvm.sh [RUNS]   (default 3)
set -eu
: "${VT_SRC:?}" "${VT_BUILD:?}" "${VT_TMP:=$(mktemp -d)}"
. "$VT_SRC/tests/bench/kvm-lib.sh"
RUNS=${1:-3}
kvm_bench_init b-kvm "$@"

guest() {	# run the guest once; its wall time (s) to guest.s
	local t0 t1
	t0=$(date +%s.%N)
	kvm_pio_guest "$1"
	t1=$(date +%s.%N)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f\n", b - a }' >>"$1/guest.s"
}

TOOLS="vmtrace vmtrace-ks trace-cmd"
for r in $(seq 1 "$RUNS"); do
	set -- $TOOLS
	for i in $(seq 2 "$r"); do set -- "${@:2}" "$1"; done	# rotate r-1 times
	for tool in "$@"; do
		kvm_record_round $tool "$tool.$r" 4096 guest
		f=$(kvm_file_of "$tool.$r")
		ev=$("$TDCOUNT" "$f" | sed -n 's/^total //p')
		secs=$(cat "$tool.$r/guest.s")
		cpu=$(awk '{ print $1 + $2 }' "$tool.$r/cpu")
		bytes=$(stat -c %s "$f")
		lost=$(kvm_lost $tool "$tool.$r")
		echo "$tool round $r: $ev events in $secs s of guest run, lost ${lost:-?}, $bytes bytes, CPU $cpu s"
		echo "$ev" >>"$tool.ev"; echo "$secs" >>"$tool.secs"; echo "$cpu" >>"$tool.cpu"
		echo "${lost:-0}" >>"$tool.lost"
		awk -v b="$bytes" -v e="$ev" 'BEGIN { printf "%.1f\n", e ? b / e : 0 }' >>"$tool.bpe"
		awk -v e="$ev" -v s="$secs" 'BEGIN { printf "%.0f\n", s ? e / s : 0 }' >>"$tool.rate"
	done
done

# each tool's file in the other tool
tc_on_vt=$(trace-cmd report "$(kvm_file_of vmtrace.1)" 2>/dev/null | grep -c ' kvm_pio:' || true)
vt_pio=$("$TDCOUNT" "$(kvm_file_of vmtrace.1)" | sed -n 's/^event kvm:kvm_pio //p')
if "$VT_BIN" merge "$(kvm_file_of trace-cmd.1)" -o vt_on_tc.json -q 2>vt_on_tc.err; then
	vt_on_tc=$(grep -o '"name":"kvm_pio"' vt_on_tc.json | wc -l)
else
	vt_on_tc="fails: $(head -1 vt_on_tc.err)"
fi
tc_pio=$("$TDCOUNT" "$(kvm_file_of trace-cmd.1)" | sed -n 's/^event kvm:kvm_pio //p')

echo
echo "KVM recorder, $RUNS interleaved rounds, medians (guest: 20000 PIO exits; traced command: $([ "${WAITER:-}" = sh ] && echo 'a shell polling a stop file, 20 forks/s' || echo 'cat FIFO'))"
printf '%-10s %14s %10s %8s %12s %10s\n' tool "events/s" kept lost "bytes/event" "CPU s"
for tool in $TOOLS; do
	printf '%-10s %14s %10s %8s %12s %10s\n' $tool "$(median <$tool.rate)" "$(median <$tool.ev)" \
		"$(median <$tool.lost)" "$(median <$tool.bpe)" "$(median <$tool.cpu)"
done
for tool in vmtrace vmtrace-ks; do
	echo "ratio $tool/trace-cmd: CPU $(awk -v a="$(median <$tool.cpu)" -v b="$(median <trace-cmd.cpu)" 'BEGIN { printf "%.2f", b ? a / b : 0 }'), bytes/event $(awk -v a="$(median <$tool.bpe)" -v b="$(median <trace-cmd.bpe)" 'BEGIN { printf "%.2f", b ? a / b : 0 }')"
done
echo "cross-open: trace-cmd report on vmtrace's trace.dat: $tc_on_vt kvm_pio (libtracecmd count $vt_pio); vmtrace merge on trace-cmd's: $vt_on_tc kvm_pio (libtracecmd count $tc_pio)"
echo "trace-cmd's file: $(head -c 16 "$(kvm_file_of trace-cmd.1)" | od -An -c | tr -s ' ' | head -1) ($(grep -m1 -io 'compress[^,]*' trace-cmd.1/log || echo uncompressed?))"
