# tests/bench/kvm-lib.sh: what the KVM recorder benchmarks (b-kvm.sh,
# b-kvm-stress.sh) share, sourced by them (not a benchmark: no b- prefix, not
# executable).  kvm_bench_init checks what they need and re-runs the script
# in the KVM lab when this machine has no full KVM; kvm_record_round records
# one round of a tool around a workload; the rest reads the results.
# Needs VT_SRC, VT_BUILD, VT_TMP set (tests/bench/run does).

VT_BIN=${VT_BIN:-$VT_BUILD/bin/vmtrace}
PIO_GUEST=$VT_BUILD/tests/host/pio-loop.elf
TDCOUNT=$VT_BUILD/tests/host/tdcount

median() { sort -g | awk '{a[NR]=$1} END {if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }

# kvm_bench_init NAME ARGS...: NAME is the script's name for its messages
# (KVM_BENCH), ARGS its own, given again when it re-runs in the lab (with
# the options of `vmtrace lab` in the array KVM_LAB_ARGS, if set).  Skips
# (exit 0, saying why) without root; fails without the guest, tdcount or
# trace-cmd.  Leaves the script in VT_TMP with FIFOS, a directory on a local
# filesystem for the traced command's FIFOs (the lab's output directory is a
# 9p share, which has none), removed at exit.
kvm_bench_init() {
	KVM_BENCH=$1
	shift
	[ "$(id -u)" = 0 ] || { echo "$KVM_BENCH: skipped: needs root (tracefs, KVM)"; exit 0; }
	[ -f "$PIO_GUEST" ] && [ -x "$TDCOUNT" ] ||
		{ echo "$KVM_BENCH: $PIO_GUEST / $TDCOUNT not built (make bench builds them)"; exit 1; }
	command -v trace-cmd >/dev/null || { echo "$KVM_BENCH: trace-cmd not installed (make deps)"; exit 1; }
	if [ -z "${VT_IN_LAB:-}" ] && ! "$VT_BUILD/bin/vt-kvm-probe" >/dev/null 2>&1; then
		echo "$KVM_BENCH: no full KVM here: running in the KVM lab (timings of an emulated host)"
		exec "$VT_BUILD/bin/vmtrace-lab" -q ${KVM_LAB_ARGS[@]+"${KVM_LAB_ARGS[@]}"} \
			-o "$VT_TMP" -- "$0" "$@"
	fi
	cd "$VT_TMP"
	FIFOS=$(mktemp -d)
	trap 'rm -rf "$FIFOS"' EXIT
}

# kvm_pio_guest DIR [NAME [APPEND [MONITOR]]]: the PIO loop guest under
# `qemu -enable-kvm`, once, in the foreground; APPEND its command line
# (tests/host/pio-loop.c: loops=N delay=N), whose report line goes to
# DIR/NAME.serial; MONITOR QEMU's -monitor (default none); QEMU's own
# messages in DIR/NAME.qemu.  Extra QEMU arguments in the array
# PIO_QEMU_EXTRA.
kvm_pio_guest() {
	local d=$1 name=${2:-loop} append=${3:-} mon=${4:-none}
	local -a args=(-serial none)

	[ -n "$append" ] && args=(-append "$append" -serial "file:$d/$name.serial")
	timeout -k 5 300 qemu-system-x86_64 -enable-kvm -name "$name",debug-threads=on \
		-kernel "$PIO_GUEST" "${args[@]}" ${PIO_QEMU_EXTRA[@]+"${PIO_QEMU_EXTRA[@]}"} \
		-device isa-debug-exit,iobase=0xf4,iosize=4 -display none \
		-monitor "$mon" -nodefaults -no-reboot -m 16 >"$d/$name.qemu" 2>&1 </dev/null || true
}

# kvm_record_round TOOL DIR KB WORKLOAD [ARGS...]: one round of TOOL
# (vmtrace; vmtrace-ks: vmtrace record --kallsyms, which stores
# /proc/kallsyms as trace-cmd does; trace-cmd) recording the kvm system, KB per CPU, x86-tsc clock,
# into DIR (DIR/rec/ or DIR/rec.dat), its output in DIR/log and its CPU
# (user system, GNU time: the recorder, trace-cmd's per-CPU children, and
# the traced command) in DIR/cpu.  The traced command is `cat FIFO`, ~0 CPU
# (WAITER=sh: a shell polling a stop file, 20 forks a second, as before
# 2026-11-27).  The recorder starts 2 s before WORKLOAD DIR ARGS... runs;
# when it returns, the command ends.
kvm_record_round() {
	local tool=$1 d=$2 kb=$3 pid fifo=$FIFOS/${2//\//_} t p tsk
	local -a wait_cmd=(cat "$fifo")
	shift 3
	rm -rf "$d" && mkdir -p "$d"
	mkfifo "$fifo"
	[ "${WAITER:-}" = sh ] && wait_cmd=(/bin/sh -c "while [ ! -e $fifo.stop ]; do sleep 0.05; done")
	case $tool in
	vmtrace|vmtrace-ks)
		/usr/bin/time -f '%U %S' -o "$d/cpu" "$VT_BIN" record -e kvm -b "$kb" -o "$d/rec" \
			$([ $tool = vmtrace-ks ] && echo --kallsyms) -- \
			"${wait_cmd[@]}" >"$d/log" 2>&1 &
		;;
	trace-cmd)
		/usr/bin/time -f '%U %S' -o "$d/cpu" trace-cmd record -C x86-tsc -e kvm -b "$kb" \
			-o "$d/rec.dat" -- "${wait_cmd[@]}" >"$d/log" 2>&1 &
		;;
	esac
	pid=$!
	sleep 2		# both are recording well before the guest starts
	"$@" "$d"
	if [ "${WAITER:-}" = sh ]; then
		touch "$fifo.stop"
	else	# opening the FIFO for writing ends cat; not if cat is gone
		timeout 10 sh -c ': >"$1"' - "$fifo" || true
	fi
	# a recorder that does not end within a minute is a finding: its
	# threads' kernel stacks are kept, then it is killed
	for t in $(seq 1 600); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
	if kill -0 $pid 2>/dev/null; then
		echo "$KVM_BENCH: $tool did not stop within 60 s of its command's end:" >&2
		for p in $(pgrep -P $pid) $pid; do
			for tsk in /proc/$p/task/*; do
				echo "  $tsk $(cat $tsk/comm) $(cat $tsk/wchan)" >&2
				sed 's/^/      /' $tsk/stack >&2 2>/dev/null
			done
		done
		pkill -9 -P $pid; kill -9 $pid
	fi
	wait $pid || true
	rm -f "$fifo" "$fifo.stop"
}

kvm_file_of() { [ -f "$1/rec.dat" ] && echo "$1/rec.dat" || echo "$1/rec/trace.dat"; }

# kvm_lost TOOL DIR: the events the recorder says it lost, all CPUs
# (vmtrace: its summary line; trace-cmd: the sum of its "CPU N: M events
# lost" lines, from the ring buffer's overrun and commit overrun counters)
kvm_lost() {
	if [ "${1%-ks}" = vmtrace ]; then
		sed -n 's/.* \([0-9]*\) lost.*/\1/p' "$2/log" | tail -1
	else
		awk '/^CPU [0-9]+: [0-9]+ events lost/ { s += $3 } END { print s + 0 }' "$2/log"
	fi
}

# kvm_lost_cpus TOOL DIR: the events lost on each CPU, "N/N/..." (cpu0
# first), as each tool keeps them: vmtrace's vmtrace.meta lost.cpuN (the
# larger of the page headers' counts and the ring buffer's overrun +
# dropped events); trace-cmd's "CPU N: M events lost" lines (none for a CPU
# that lost nothing), its CPUs those of its "CPUN data recorded" lines.
# "?" when not found.
kvm_lost_cpus() {
	local out
	if [ "${1%-ks}" = vmtrace ]; then
		out=$(sed -n 's/^lost\.cpu\([0-9]*\)=\([0-9]*\)$/\1 \2/p' "$2/rec/vmtrace.meta" 2>/dev/null |
			sort -n | awk '{ printf "%s%s", (NR > 1 ? "/" : ""), $2 }')
	else
		out=$(awk '/^CPU[0-9]+ data recorded/ { c = substr($1, 4) + 0; seen[c] = 1 }
			/^CPU [0-9]+: [0-9]+ events lost/ { n[$2 + 0] += $3 }
			END { for (i = 0; i in seen; i++) printf "%s%d", (i ? "/" : ""), n[i] }' "$2/log")
	fi
	echo "${out:-?}"
}

# kvm_missed_cpus FILE: what the file's page headers say was lost before
# their records, per CPU, "N/N/..." read by libtracecmd (tdcount -m), a
# "+u" suffix on a CPU with losses of unknown size after U records
kvm_missed_cpus() {
	"$TDCOUNT" -m "$1" 2>/dev/null | awk '$1 == "cpu" {
		printf "%s%d%s", ($2 ? "/" : ""), $6, ($8 ? "+" $8 "u" : "") }'
}
