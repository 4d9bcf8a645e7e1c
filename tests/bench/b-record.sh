#!/bin/bash
# b-record.sh: the recorder's throughput against reading the same events as
# text from trace_pipe.  A generator (tests/host/sysloop: a tight getppid()
# loop) makes CALLS syscalls = 2*CALLS events (syscalls:sys_enter_getppid +
# sys_exit_getppid, filtered on its pid), recorded
#   vmtrace: `vmtrace record --guest -b KB -e ... -- sysloop CALLS`
#            (raw pages spliced to files, then trace.dat)
#   text:    a tracefs instance set up the same way (x86-tsc, KB per CPU,
#            same events and pid filter) read by `cat trace_pipe > file`
#   none:    the generator untraced (its own speed)
#   vmtrace --format v6: the same, trace.dat uncompressed
# interleaved RUNS times; medians.  Reported: events/s the traced generator
# sustained, events kept and lost, bytes per event on disk, reader CPU;
# then trace.dat's size per event - v7 zstd (the default), v6, and the v7
# file rewritten by trace-cmd's own zstd writer (`trace-cmd convert
# --compression zstd`: the same events and metadata) - and the CPU per
# event of the whole `vmtrace record -- generator` (GNU time counts the
# generator too: the v7 - v6 difference is the compression's cost).
# Usage: b-record.sh [CALLS] [RUNS]   (env KB: buffer per CPU, default 4096)
set -eu
: "${VT_SRC:?}" "${VT_BUILD:?}" "${VT_TMP:=$(mktemp -d)}"
VT_BIN=${VT_BIN:-$VT_BUILD/bin/vmtrace}
CALLS=${1:-1000000}
RUNS=${2:-5}
KB=${KB:-4096}
GEN=$VT_BUILD/tests/host/sysloop
T=/sys/kernel/tracing
[ "$(id -u)" = 0 ] || { echo "b-record: needs root (tracefs)"; exit 0; }
[ -x "$GEN" ] || { echo "b-record: $GEN not built"; exit 1; }
cd "$VT_TMP"

median() { sort -g | awk '{a[NR]=$1} END {if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }

run_none() {
	"$GEN" "$CALLS" | awk '{print $4 * 2}' >>none.rate
}

# file bytes per event and whole-process CPU ns per event of a recording
# (DIR, time file) into PFX.fbpe / PFX.tcpu
file_stats() {
	local ev
	ev=$(sed -n 's/^events.total=//p' "$1/vmtrace.meta")
	awk -v b="$(stat -c %s "$1/trace.dat")" -v e="$ev" 'BEGIN{printf "%.2f\n", b / e}' >>"$3.fbpe"
	awk -v e="$ev" '{printf "%.1f\n", ($1 + $2) * 1e9 / e}' "$2" >>"$3.tcpu"
}

run_vmtrace6() {
	rm -rf v6
	/usr/bin/time -f '%U %S' -o v6.time "$VT_BIN" record --guest --format v6 -o v6 -b "$KB" \
		-e syscalls:sys_enter_getppid -e syscalls:sys_exit_getppid -- "$GEN" "$CALLS" \
		>v6.out 2>v6.err
	file_stats v6 v6.time v6
}

run_vmtrace() {
	rm -rf vt tc.dat
	/usr/bin/time -f '%U %S' -o vt.time "$VT_BIN" record --guest -o vt -b "$KB" \
		-e syscalls:sys_enter_getppid -e syscalls:sys_exit_getppid -- "$GEN" "$CALLS" \
		>vt.out 2>vt.err
	file_stats vt vt.time vt
	if command -v trace-cmd >/dev/null &&
	   trace-cmd convert -i vt/trace.dat -o tc.dat --file-version 7 --compression zstd \
		>/dev/null 2>&1; then
		awk -v b="$(stat -c %s tc.dat)" -v e="$(sed -n 's/^events.total=//p' vt/vmtrace.meta)" \
			'BEGIN{printf "%.2f\n", b / e}' >>tc.fbpe
	fi
	local m=vt/vmtrace.meta ev lost bytes cpu rate
	ev=$(sed -n 's/^events.total=//p' $m)
	lost=$(sed -n 's/^lost.total=//p' $m)
	bytes=$(sed -n 's/^record.data_bytes=//p' $m)
	cpu=$(sed -n 's/^record.cpu_ms=//p' $m)
	rate=$(awk '{print $4 * 2}' vt.out)
	echo "$rate" >>vt.rate; echo "$ev" >>vt.ev; echo "$lost" >>vt.lost
	awk -v b="$bytes" -v e="$ev" 'BEGIN{printf "%.2f\n", b / e}' >>vt.bpe
	awk -v c="$cpu" -v e="$ev" 'BEGIN{printf "%.1f\n", c * 1e6 / e}' >>vt.cpu
}

run_text() {
	local I=$T/instances/vtbench-$$ gpid cpid ev lost bytes cpu rate
	mkdir "$I"
	echo 0 >"$I/tracing_on"
	echo x86-tsc >"$I/trace_clock"
	echo "$KB" >"$I/buffer_size_kb"
	rm -f go text.out; mkfifo go
	( read -r _ <go; exec "$GEN" "$CALLS" >text.gen ) &
	gpid=$!
	echo "common_pid==$gpid" >"$I/events/syscalls/filter"
	echo 1 >"$I/events/syscalls/sys_enter_getppid/enable"
	echo 1 >"$I/events/syscalls/sys_exit_getppid/enable"
	# trace_pipe gives EOF once tracing is off and it is drained
	( TIMEFORMAT='%U %S'; time cat "$I/trace_pipe" >text.out ) 2>cat.time &
	cpid=$!
	echo 1 >"$I/tracing_on"
	echo go >go
	wait $gpid
	echo 0 >"$I/tracing_on"
	# let cat drain the buffer (stats: no entries left, file stops growing),
	# then stop it (trace_pipe does not always wake a reader at tracing off)
	local size=-1 prev=-2
	while [ "$size" != "$prev" ] || grep -q '^entries: [1-9]' "$I"/per_cpu/cpu*/stats; do
		prev=$size; sleep 0.3; size=$(stat -c %s text.out)
	done
	kill "$(pgrep -P $cpid)" 2>/dev/null || true
	wait $cpid || true
	# (bash prints "Terminated" above the times when cat was killed)
	cpu=$(tail -1 cat.time | awk '{print ($1 + $2) * 1000}')
	ev=$(wc -l <text.out)
	bytes=$(stat -c %s text.out)
	lost=$(awk '/^overrun:/ {o += $2} /^dropped events:/ {o += $3} END {print o + 0}' \
		"$I"/per_cpu/cpu*/stats)
	rmdir "$I"
	rate=$(awk '{print $4 * 2}' text.gen)
	echo "$rate" >>tx.rate; echo "$ev" >>tx.ev; echo "$lost" >>tx.lost
	awk -v b="$bytes" -v e="$ev" 'BEGIN{printf "%.2f\n", b / e}' >>tx.bpe
	awk -v c="$cpu" -v e="$ev" 'BEGIN{printf "%.1f\n", c * 1e6 / e}' >>tx.cpu
}

rm -f ./*.rate ./*.ev ./*.lost ./*.bpe ./*.cpu ./*.fbpe ./*.tcpu
for i in $(seq "$RUNS"); do
	run_none
	run_vmtrace
	run_text
	run_vmtrace6
done

N=$(median <none.rate)
GENERATED=$(awk '{print $2 * 2}' vt.out)
VR=$(median <vt.rate); TR=$(median <tx.rate)
VE=$(median <vt.ev); TE=$(median <tx.ev)
VL=$(sort -g vt.lost | tail -1); TL=$(sort -g tx.lost | tail -1)
VB=$(median <vt.bpe); TB=$(median <tx.bpe)
VC=$(median <vt.cpu); TC=$(median <tx.cpu)
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.2f", (b > 0 ? a / b : 0)}'; }
table=$(cat <<TABLE
| median of $RUNS interleaved runs | vmtrace record | text trace_pipe | text / vmtrace |
|---|---|---|---|
| generator events/s while traced (untraced: $N) | $VR | $TR | $(ratio "$TR" "$VR") |
| events kept (generated: $GENERATED) | $VE | $TE | $(ratio "$TE" "$VE") |
| events lost (worst run) | $VL | $TL | |
| bytes per event on disk (vmtrace: ring-buffer pages, before trace.dat compression) | $VB | $TB | $(ratio "$TB" "$VB") |
| reader CPU ns per event | $VC | $TC | $(ratio "$TC" "$VC") |

| median of $RUNS interleaved runs | vmtrace v7 zstd (default) | vmtrace --format v6 | trace-cmd's zstd writer, same events | v6 / v7 | trace-cmd / v7 |
|---|---|---|---|---|---|
| trace.dat bytes per event | $(median <vt.fbpe) | $(median <v6.fbpe) | $(median <tc.fbpe 2>/dev/null || echo -) | $(ratio "$(median <v6.fbpe)" "$(median <vt.fbpe)") | $(ratio "$(median <tc.fbpe 2>/dev/null || echo 0)" "$(median <vt.fbpe)") |
| CPU ns per event of \`vmtrace record -- generator\` (GNU time: the generator's included; trace.dat too) | $(median <vt.tcpu) | $(median <v6.tcpu) | | $(ratio "$(median <v6.tcpu)" "$(median <vt.tcpu)") | |
TABLE
)
echo "$table"

section=$(cat <<SECTION
<!-- b-record begin -->
## Recorder: \`vmtrace record\` against text from trace_pipe

Command: \`make bench B=b-record\` (tests/bench/b-record.sh $CALLS $RUNS, KB=$KB).
A tight getppid() loop makes $GENERATED syscall events per run, filtered
on its pid, both sides in a tracefs instance with the x86-tsc clock and $KB KB
per CPU; vmtrace splices raw pages, the peer reads the same events as text
(\`cat trace_pipe > file\`). Reader CPU: the \`vmtrace record\` process (setup and
reader threads, until drained; trace.dat assembly not counted) vs the \`cat\`.
Second table: trace.dat's size (kallsyms, formats and pages) per event as
vmtrace writes it (v7 with zstd, the default; \`--format v6\`) and as
trace-cmd 3.1's own zstd writer writes the same file (\`trace-cmd convert
--file-version 7 --compression zstd\` of vmtrace's: the same events and
metadata), and the CPU per event of the whole \`vmtrace record --
generator\` (GNU time, user + system: the generator's syscalls included,
so only the v7 - v6 difference, the compression, is the recorder's).
Measured $(date -u +%Y-%m-%d) on $(nproc) CPUs ($(uname -r)).

$table
<!-- b-record end -->
SECTION
)
"$VT_SRC/tests/bench/doc-section" b-record "$section"
