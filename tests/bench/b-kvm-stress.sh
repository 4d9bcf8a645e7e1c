#!/bin/bash
# b-kvm-stress.sh: where vmtrace record and trace-cmd record start losing
# KVM events (issue #28: the highest exit rate each keeps with 0 lost, lost
# events per CPU on both tools).  On a real KVM (this machine's, else the KVM
# lab's, as b-kvm.sh: tests/bench/kvm-lib.sh).  Workload: G guests at once,
# each one vCPU running tests/host/pio-loop.elf with loops=LOOPS delay=D (a
# PIO write, a VM exit, every D iterations of an empty loop; D=0: exits as
# fast as the vCPU makes them), started paused and let go together through
# their monitors.  Each tool records -e kvm with the same per-CPU buffer
# (-b KB) and the x86-tsc clock, from 2 s before the guests start until
# they end.  Settings: every KB x G x D; RUNS interleaved rounds (each
# round runs every setting, the tools' order alternating), medians.
# Reported per setting and tool: the guests' exit rate (the sum over the
# guests of LOOPS * TSC Hz / the TSC cycles of each one's loop, which each
# prints on its serial port), events kept (libtracecmd's count), events lost
# per CPU as the recorder counts them (vmtrace: vmtrace.meta lost.cpuN;
# trace-cmd: its end-of-record per-CPU stats, overrun + dropped events) and
# as the file's page headers say (libtracecmd, tdcount -m; "+Nu": N records
# after a loss of unknown size), in how many rounds it lost nothing, and the
# recorder's CPU (user + system, GNU time, as b-kvm.sh).
# Then, per tool, the highest exit rate of a setting it kept with 0 lost in
# every round.
# Usage: b-kvm-stress.sh [RUNS]   (default $RUNS, else 3)
# Environment: SIZES (KB per CPU, default "4096 1024 256 64"), GUESTS
# (default "1 2"), DELAYS (default "0"), LOOPS (per guest, default 20000);
# VT_LAB_SMP=2 for a lab of 2 CPUs (docs/lab.md: it may lock up).
set -eu
: "${VT_SRC:?}" "${VT_BUILD:?}" "${VT_TMP:=$(mktemp -d)}"
. "$VT_SRC/tests/bench/kvm-lib.sh"
RUNS=${1:-${RUNS:-3}}
SIZES=${SIZES:-4096 1024 256 64}
GUESTS=${GUESTS:-1 2}
DELAYS=${DELAYS:-0}
LOOPS=${LOOPS:-20000}
nset=$(( $(wc -w <<<"$SIZES") * $(wc -w <<<"$GUESTS") * $(wc -w <<<"$DELAYS") ))
# the lab's time limit: a round takes ~15-30 s there; 90 s each to be safe
KVM_LAB_ARGS=(--timeout $((600 + RUNS * nset * 2 * 90)))
kvm_bench_init b-kvm-stress "$@"
command -v python3 >/dev/null || { echo "b-kvm-stress: skipped: needs python3 (the guests' monitors)"; exit 0; }
HZ=$("$VT_BIN" tsc -q 2>/dev/null || true)
[ "${HZ:-0}" -gt 0 ] 2>/dev/null || { echo "b-kvm-stress: the TSC frequency is unknown (vmtrace tsc)"; exit 1; }

# start_guests DIR G DELAY: G guests, paused (-S), each with a monitor
# socket; once all answer, `cont` to each in turn; then wait for them
start_guests() {
	local d=$3 g=$1 delay=$2 k
	local -a pids=() socks=() PIO_QEMU_EXTRA=(-S)

	for k in $(seq 1 "$g"); do
		socks+=("$FIFOS/mon.$k")
		rm -f "$FIFOS/mon.$k"
		kvm_pio_guest "$d" "g$k" "loops=$LOOPS delay=$delay" \
			"unix:$FIFOS/mon.$k,server=on,wait=off" &
		pids+=($!)
	done
	python3 - "${socks[@]}" <<'PY' || echo "b-kvm-stress: could not start the guests" >&2
import os, socket, sys, time
socks = []
for path in sys.argv[1:]:
    for _ in range(600):	# QEMU's start in the lab: seconds
        try:
            s = socket.socket(socket.AF_UNIX)
            s.connect(path)
            break
        except OSError:
            s.close()
            time.sleep(0.1)
    else:
        sys.exit("no monitor at " + path)
    socks.append(s)
def prompt(s):
    b = b""
    while b"(qemu)" not in b:
        c = s.recv(4096)
        if not c:
            break
        b += c
for s in socks:
    prompt(s)
for s in socks:
    s.sendall(b"cont\r\n")
for s in socks:
    prompt(s)
    s.close()
PY
	wait "${pids[@]}"
}

# rate DIR: the guests' exits per second, summed; "?" if one did not report
rate() {
	local n
	n=$(cat "$1"/g*.serial 2>/dev/null | grep -c '^pio-loop: ' || true)
	[ "$n" = "$2" ] || { echo "?"; return; }
	cat "$1"/g*.serial | awk -v hz="$HZ" '/^pio-loop: / { if ($7 > 0) r += $3 * hz / $7 }
		END { printf "%.0f\n", r }'
}

# median of each CPU's field over the lines of "N/N/..." strings
median_cpus() {
	awk -F/ '{ for (i = 1; i <= NF; i++) v[i] = v[i] " " $i; if (NF > n) n = NF }
		END { for (i = 1; i <= n; i++) print v[i] }' |
	while read -r line; do
		tr ' ' '\n' <<<"$line" | grep -E '^[0-9]+' | sed 's/+.*//' | median
	done | paste -sd/
}

settings=()
for kb in $SIZES; do for g in $GUESTS; do for delay in $DELAYS; do
	settings+=("$kb:$g:$delay")
done; done; done
echo "b-kvm-stress: ${#settings[@]} settings x 2 tools x $RUNS rounds; TSC $HZ Hz; $(nproc) CPU(s); load average $(cut -d' ' -f1-3 /proc/loadavg)"
i=0
for r in $(seq 1 "$RUNS"); do
	for s in "${settings[@]}"; do
		IFS=: read -r kb g delay <<<"$s"
		i=$((i + 1))
		if [ $((i % 2)) = 1 ]; then order="vmtrace trace-cmd"; else order="trace-cmd vmtrace"; fi
		for tool in $order; do
			d=$tool.$kb.$g.$delay.$r
			kvm_record_round $tool "$d" "$kb" start_guests "$g" "$delay"
			f=$(kvm_file_of "$d")
			ev=$("$TDCOUNT" "$f" 2>/dev/null | sed -n 's/^total //p')
			lost=$(kvm_lost_cpus $tool "$d")
			missed=$(kvm_missed_cpus "$f")
			rt=$(rate "$d" "$g")
			cpu=$(awk '{ print $1 + $2 }' "$d/cpu" 2>/dev/null || echo "?")
			echo "$tool -b $kb, $g guest(s), delay $delay, round $r: $rt exits/s, ${ev:-?} events kept, lost per CPU $lost (page headers: ${missed:-?}), recorder CPU ${cpu:-?} s"
			key=$tool.$kb.$g.$delay
			echo "$rt" >>"$key.rate"; echo "${ev:-?}" >>"$key.ev"
			echo "$lost" >>"$key.lost"; echo "${missed:-?}" >>"$key.missed"
			echo "${cpu:-?}" >>"$key.cpu"
		done
	done
done

echo
echo "KVM recorder under stress, $RUNS interleaved rounds, medians (guests: 1 vCPU each, $LOOPS PIO exits each, no pause when delay is 0; -e kvm, x86-tsc; $(nproc) host CPU(s); load average $(cut -d' ' -f1-3 /proc/loadavg))"
echo
echo "| -b KB/CPU | guests | delay | tool | exits/s | events kept | lost per CPU (recorder) | lost per CPU (page headers) | rounds with 0 lost | recorder CPU s |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for s in "${settings[@]}"; do
	IFS=: read -r kb g delay <<<"$s"
	for tool in vmtrace trace-cmd; do
		key=$tool.$kb.$g.$delay
		clean=$(paste -d' ' "$key.lost" "$key.missed" | awk '{ if ($0 !~ /[1-9?]/) n++ } END { print n + 0 }')
		echo "| $kb | $g | $delay | $tool | $(grep -v '?' "$key.rate" | median) | $(grep -v '?' "$key.ev" | median) | $(median_cpus <"$key.lost") | $(median_cpus <"$key.missed") | $clean/$RUNS | $(grep -v '?' "$key.cpu" | median) |"
		echo "$clean $(grep -v '?' "$key.rate" | median) $kb $g $delay" >>"$tool.summary"
	done
done
echo
for tool in vmtrace trace-cmd; do
	best=$(awk -v n="$RUNS" '$1 == n && $2 > m { m = $2; s = $0 } END { print s }' "$tool.summary")
	if [ -n "$best" ]; then
		set -- $best
		echo "$tool: highest exit rate kept with 0 lost in every round: $2 exits/s (-b $3, $4 guest(s), delay $5)"
	else
		echo "$tool: lost events in every setting"
	fi
	smallest=$(awk -v n="$RUNS" '$1 == n { print $3 }' "$tool.summary" | sort -n | head -1)
	echo "$tool: smallest buffer with 0 lost in every round of a setting: ${smallest:--} KB/CPU"
done
