#!/bin/bash
# b-kvm.sh: vmtrace record against trace-cmd record on a real KVM (this
# machine's, else the KVM lab's: `vmtrace lab`, where trace-cmd record works
# since ftrace_enabled is the kernel's own).  The workload is a guest making
# a high rate of exits: tests/host/pio-loop.elf, 20000 PIO writes, each a
# kvm_exit + kvm_pio + kvm_userspace_exit + kvm_entry on the host, run by
# QEMU -enable-kvm outside the recorder.  Each recorder records the kvm
# system (-e kvm, 4 MB per CPU, x86-tsc clock) while it waits for the guest
# to end; the tools alternate, RUNS rounds each; medians.  Reported: events
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
VT_BIN=${VT_BIN:-$VT_BUILD/bin/vmtrace}
RUNS=${1:-3}
GUEST=$VT_BUILD/tests/host/pio-loop.elf
TDCOUNT=$VT_BUILD/tests/host/tdcount
[ "$(id -u)" = 0 ] || { echo "b-kvm: needs root (tracefs, KVM)"; exit 0; }
[ -f "$GUEST" ] && [ -x "$TDCOUNT" ] || { echo "b-kvm: $GUEST / $TDCOUNT not built (make bench builds them)"; exit 1; }
command -v trace-cmd >/dev/null || { echo "b-kvm: trace-cmd not installed (make deps)"; exit 1; }

if [ -z "${VT_IN_LAB:-}" ] && ! "$VT_BUILD/bin/vt-kvm-probe" >/dev/null 2>&1; then
	echo "b-kvm: no full KVM here: running in the KVM lab (timings of an emulated host)"
	exec "$VT_BUILD/bin/vmtrace-lab" -q -o "$VT_TMP" -- "$0" "$@"
fi
cd "$VT_TMP"
# the FIFOs of the traced command: on a local filesystem (the lab's output
# directory is a 9p share, which has none)
FIFOS=$(mktemp -d)
trap 'rm -rf "$FIFOS"' EXIT
median() { sort -g | awk '{a[NR]=$1} END {if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }

guest() {	# run the guest once; its wall time (s) to guest.s
	local t0 t1
	t0=$(date +%s.%N)
	timeout -k 5 300 qemu-system-x86_64 -enable-kvm -name loop,debug-threads=on -kernel "$GUEST" \
		-device isa-debug-exit,iobase=0xf4,iosize=4 -display none -serial none \
		-monitor none -nodefaults -no-reboot -m 16 >/dev/null 2>&1 </dev/null || true
	t1=$(date +%s.%N)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f\n", b - a }' >>"$1/guest.s"
}

# one round of TOOL: recorder started (its command waiting on a FIFO),
# guest, stop
run() {
	local tool=$1 d=$2 pid fifo=$FIFOS/$2
	local -a wait_cmd=(cat "$fifo")
	rm -rf "$d" && mkdir -p "$d"
	mkfifo "$fifo"
	[ "${WAITER:-}" = sh ] && wait_cmd=(/bin/sh -c "while [ ! -e $fifo.stop ]; do sleep 0.05; done")
	case $tool in
	vmtrace)
		/usr/bin/time -f '%U %S' -o "$d/cpu" "$VT_BIN" record -e kvm -b 4096 -o "$d/rec" -- \
			"${wait_cmd[@]}" >"$d/log" 2>&1 &
		;;
	trace-cmd)
		/usr/bin/time -f '%U %S' -o "$d/cpu" trace-cmd record -C x86-tsc -e kvm -b 4096 \
			-o "$d/rec.dat" -- "${wait_cmd[@]}" >"$d/log" 2>&1 &
		;;
	esac
	pid=$!
	sleep 2		# both are recording well before the guest starts
	guest "$d"
	if [ "${WAITER:-}" = sh ]; then
		touch "$fifo.stop"
	else	# opening the FIFO for writing ends cat; not if cat is gone
		timeout 10 sh -c ': >"$1"' - "$fifo" || true
	fi
	# a recorder that does not end within a minute is a finding: its
	# threads' kernel stacks are kept, then it is killed
	for t in $(seq 1 600); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
	if kill -0 $pid 2>/dev/null; then
		echo "b-kvm: $tool did not stop within 60 s of its command's end:" >&2
		for p in $(pgrep -P $pid) $pid; do
			for tsk in /proc/$p/task/*; do
				echo "  $tsk $(cat $tsk/comm) $(cat $tsk/wchan)" >&2
				sed 's/^/      /' $tsk/stack >&2 2>/dev/null
			done
		done
		pkill -9 -P $pid; kill -9 $pid
	fi
	wait $pid || true
}

file_of() { [ -f "$1/rec.dat" ] && echo "$1/rec.dat" || echo "$1/rec/trace.dat"; }

for r in $(seq 1 "$RUNS"); do
	if [ $((r % 2)) = 1 ]; then order="vmtrace trace-cmd"; else order="trace-cmd vmtrace"; fi
	for tool in $order; do
		run $tool "$tool.$r"
		f=$(file_of "$tool.$r")
		ev=$("$TDCOUNT" "$f" | sed -n 's/^total //p')
		secs=$(cat "$tool.$r/guest.s")
		cpu=$(awk '{ print $1 + $2 }' "$tool.$r/cpu")
		bytes=$(stat -c %s "$f")
		if [ $tool = vmtrace ]; then
			lost=$(sed -n 's/.* \([0-9]*\) lost.*/\1/p' "$tool.$r/log" | tail -1)
		else
			lost=$(awk '/overrun:/ { s += $2 } END { print s + 0 }' "$tool.$r/log")
		fi
		echo "$tool round $r: $ev events in $secs s of guest run, lost ${lost:-?}, $bytes bytes, CPU $cpu s"
		echo "$ev" >>"$tool.ev"; echo "$secs" >>"$tool.secs"; echo "$cpu" >>"$tool.cpu"
		echo "${lost:-0}" >>"$tool.lost"
		awk -v b="$bytes" -v e="$ev" 'BEGIN { printf "%.1f\n", e ? b / e : 0 }' >>"$tool.bpe"
		awk -v e="$ev" -v s="$secs" 'BEGIN { printf "%.0f\n", s ? e / s : 0 }' >>"$tool.rate"
	done
done

# each tool's file in the other tool
tc_on_vt=$(trace-cmd report "$(file_of vmtrace.1)" 2>/dev/null | grep -c ' kvm_pio:' || true)
vt_pio=$("$TDCOUNT" "$(file_of vmtrace.1)" | sed -n 's/^event kvm:kvm_pio //p')
if "$VT_BIN" merge "$(file_of trace-cmd.1)" -o vt_on_tc.json -q 2>vt_on_tc.err; then
	vt_on_tc=$(grep -o '"name":"kvm_pio"' vt_on_tc.json | wc -l)
else
	vt_on_tc="fails: $(head -1 vt_on_tc.err)"
fi
tc_pio=$("$TDCOUNT" "$(file_of trace-cmd.1)" | sed -n 's/^event kvm:kvm_pio //p')

echo
echo "KVM recorder, $RUNS interleaved rounds, medians (guest: 20000 PIO exits; traced command: $([ "${WAITER:-}" = sh ] && echo 'a shell polling a stop file, 20 forks/s' || echo 'cat FIFO'))"
printf '%-10s %14s %10s %8s %12s %10s\n' tool "events/s" kept lost "bytes/event" "CPU s"
for tool in vmtrace trace-cmd; do
	printf '%-10s %14s %10s %8s %12s %10s\n' $tool "$(median <$tool.rate)" "$(median <$tool.ev)" \
		"$(median <$tool.lost)" "$(median <$tool.bpe)" "$(median <$tool.cpu)"
done
echo "ratio vmtrace/trace-cmd: CPU $(awk -v a="$(median <vmtrace.cpu)" -v b="$(median <trace-cmd.cpu)" 'BEGIN { printf "%.2f", b ? a / b : 0 }'), bytes/event $(awk -v a="$(median <vmtrace.bpe)" -v b="$(median <trace-cmd.bpe)" 'BEGIN { printf "%.2f", b ? a / b : 0 }')"
echo "cross-open: trace-cmd report on vmtrace's trace.dat: $tc_on_vt kvm_pio (libtracecmd count $vt_pio); vmtrace merge on trace-cmd's: $vt_on_tc kvm_pio (libtracecmd count $tc_pio)"
echo "trace-cmd's file: $(head -c 16 "$(file_of trace-cmd.1)" | od -An -c | tr -s ' ' | head -1) ($(grep -m1 -io 'compress[^,]*' trace-cmd.1/log || echo uncompressed?))"
