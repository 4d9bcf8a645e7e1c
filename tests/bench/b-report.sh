#!/bin/bash
# b-report.sh - `vmtrace report` and `vmtrace export --sqlite` time and peak
# RSS on a large synthetic merged input, side by side with `vmtrace merge
# -F perfetto` (the same readers/sorter with the cheapest sink: the cost of
# the pipeline itself) on the same inputs, interleaved ROUNDS times.
# Input (tests/report/mkfixture.py stream + gen-tracedat + gen-trace):
# 10% kernel events (host kvm exits/pio/QEMU pwritev/msi/virq, guest
# syscalls/block/irq: 15 events per I/O request, every chain link present),
# the rest Python function events (the requests' Python calls, and a second
# guest's busy Python thread).  Table: median CPU (user+sys) and wall time,
# M events/s on CPU time, peak RSS (/usr/bin/time -v), ratio to merge.
# Appends/replaces its section of docs/benchmarks.md.
#
#   B_EVENTS="5000000 50000000" B_ROUNDS=3 tests/bench/b-report.sh
set -eu
: "${VT_SRC:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${VT_BUILD:=$VT_SRC/build}"
VT_BIN="$VT_BUILD/bin/vmtrace"
GEN="$VT_BUILD/tests/merge/gen-trace"
GTD="$VT_BUILD/tests/merge/gen-tracedat"
SIZES=${B_EVENTS:-"5000000 50000000"}
ROUNDS=${B_ROUNDS:-3}
W=${B_TMP:-$(mktemp -d "${TMPDIR:-/tmp}/b-report.XXXXXX")}
mkdir -p "$W"
trap 'rm -rf "$W"' EXIT
for t in "$VT_BIN" "$GEN" "$GTD" /usr/bin/time; do
	[ -x "$t" ] || { echo "missing $t (make all + bench targets)"; exit 77; }
done
[ -r /sys/kernel/tracing/events/block/block_rq_issue/format ] ||
	{ echo "no tracefs event formats (mount tracefs at /sys/kernel/tracing)"; exit 77; }
max=0
for n in $SIZES; do [ "$n" -gt "$max" ] && max=$n; done
# inputs ~16 B/event, the database ~60 B/event
need_kb=$((max * 80 / 1024 + 65536))
free_kb=$(df -Pk "$W" | awk 'NR==2 {print $4}')
[ "$free_kb" -ge "$need_kb" ] || { echo "not enough disk in $W: need $need_kb KB"; exit 77; }

run() {	# LABEL CMD...: append "cpu_s wall_s rss_kb" to $W/res.LABEL
	local label=$1
	shift
	/usr/bin/time -f "%U %S %e %M" -o "$W/time.out" "$@" >/dev/null 2>"$W/err.out" || {
		echo "FAILED: $*"; tail -3 "$W/err.out"; exit 1; }
	awk '{printf "%.3f %.3f %d\n", $1 + $2, $3, $4}' "$W/time.out" >>"$W/res.$label"
}
median() {	# FILE COLUMN
	sort -n -k"$2" "$1" | awk -v c="$2" '{v[NR] = $c} END {print v[int((NR + 1) / 2)]}'
}

table="$W/table"
printf '| events | command | CPU s (median) | wall s | M events/s (CPU) | peak RSS MB | CPU vs merge |\n' >"$table"
printf '|---|---|---|---|---|---|---|\n' >>"$table"
for n in $SIZES; do
	rm -rf "$W"/in "$W"/res.*
	mkdir -p "$W/in/h"
	k=$((n / 10 / 15))			# I/O requests: 15 kernel events each
	fill=$((n - 19 * k))			# + 4 Python records each; the rest filler
	step=$((4 * k * 2000000 / fill))	# filler spans the same time
	[ "$step" -ge 1 ] || step=1
	/usr/bin/python3 "$VT_SRC/tests/report/mkfixture.py" "$W/in" "$k" stream
	"$GEN" "$W/in/g" -n $((4 * k)) -D 2 -z 2000000000 -s 1000000000 -d 2000000 -g -p 200 \
		-f "app.main (app.py:1),app.save (app.py:10)" >/dev/null
	"$GEN" "$W/in/g2" -n "$fill" -D 8 -z 2000000000 -s 1000000000 -d "$step" -g -p 300 >/dev/null
	"$GTD" "$W/in/h/trace.dat" <"$W/in/host.txt"
	"$GTD" "$W/in/g/trace.dat" <"$W/in/guest.txt"
	rm -f "$W/in/host.txt" "$W/in/guest.txt"
	printf '# vmtrace-meta 1\nclock=tsc\ntsc.hz=2000000000\ndomain=host\nkvm.vms=1\nkvm.vm0.pid=4242\nkvm.vm0.vcpus=1\nkvm.vcpu_threads=1\nkvm.thread0.tid=4243\nkvm.thread0.pid=4242\nkvm.thread0.vcpu=0\n' \
		>"$W/in/h/vmtrace.meta"
	in=("$W/in/h" "$W/in/g" "$W/in/g2")
	"$VT_BIN" report "${in[@]}" --no-align -n 1 --functions 3 >"$W/check.txt" 2>"$W/check.err"
	total=$(awk '/^vmtrace: (merge|report): [0-9]+ events/ {print $3}' "$W/check.err")
	grep -q "PSQIKHDJRCXE *$k requests" "$W/check.txt" ||
		{ head -20 "$W/check.txt"; echo "FAILED: report did not link all $k requests"; exit 1; }
	for r in $(seq "$ROUNDS"); do
		run merge "$VT_BIN" merge "${in[@]}" --no-align -q -o /dev/null -F perfetto
		run report "$VT_BIN" report "${in[@]}" --no-align -q
		run export "$VT_BIN" export --sqlite "$W/out.db" "${in[@]}" --no-align -q
		dbsize=$(du -m "$W/out.db" | cut -f1)
		rm -f "$W/out.db"
	done
	base=$(median "$W/res.merge" 1)
	for l in merge report export; do
		cpu=$(median "$W/res.$l" 1)
		wall=$(median "$W/res.$l" 2)
		rss=$(median "$W/res.$l" 3)
		awk -v n="$total" -v l="$l" -v c="$cpu" -v w="$wall" -v r="$rss" -v b="$base" -v k="$k" \
			-v db="$dbsize" 'BEGIN {
			what = "merge -F perfetto (baseline)"
			if (l == "report") what = "report (" k " requests)"
			if (l == "export") what = "export --sqlite (" db " MB db)"
			printf "| %.1f M | %s | %.2f | %.2f | %.2f | %.0f | %.2fx |\n",
				n / 1e6, what, c, w, n / c / 1e6, r / 1024, c / b }' >>"$table"
	done
done
cat "$table"

doc="$VT_SRC/docs/benchmarks.md"
sec="$W/section"
{
	echo "## vmtrace report / export (tests/bench/b-report.sh)"
	echo
	echo "Synthetic merged input: host trace.dat + guest kernel trace.dat (10% of"
	echo "the events: 15 per I/O request, full chain) + two guests' Python uftrace"
	echo "data; $ROUNDS interleaved rounds, medians; $(nproc) shared CPUs ($(date -u +%Y-%m-%d))."
	echo "\`merge\` is the same pipeline into Perfetto (the pipeline's own cost)."
	echo "Command: \`B_EVENTS=\"$SIZES\" B_ROUNDS=$ROUNDS tests/bench/b-report.sh\`"
	echo
	cat "$table"
	echo
	echo "report keeps a record per I/O request, guest syscall, kick, injection, QEMU"
	echo "disk syscall and guest irq (docs/report.md): its RSS above merge's grows"
	echo "with the I/O events (10% of the input here), not with the function events."
	echo "export writes every event as a row (SQLite, one transaction per 1 M rows,"
	echo "journal off) and indexes slices/instants by name at the end."
	echo
} >"$sec"
if [ -f "$doc" ] && grep -q '^## vmtrace report / export' "$doc"; then
	awk -v f="$sec" '/^## vmtrace report \/ export/ { while ((getline l < f) > 0) print l; skip = 1; next }
		/^## / { skip = 0 } !skip' "$doc" >"$W/doc.new" && cat "$W/doc.new" >"$doc"
else
	cat "$sec" >>"$doc"
fi
echo "section written to $doc"
