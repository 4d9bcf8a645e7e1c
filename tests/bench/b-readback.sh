#!/bin/bash
# b-readback.sh: what reading back a compressed trace.dat costs.  One real
# recording (tests/host/sysloop: CALLS getppid() calls = 2*CALLS syscall
# events, `vmtrace record --guest`, v7 with zstd, the default) and the same
# file as v6 (`trace-cmd convert --file-version 6 --compression none`: the
# same events and metadata) are read by `vmtrace merge -F perfetto` (the
# cheapest sink) and `vmtrace report`, alternating, RUNS rounds; medians of
# CPU (user + system) and wall time, and the ratio compressed / plain
# (issue #28's target: no worse than 1.2x).  Updates its section of
# docs/benchmarks.md.
# Usage: b-readback.sh [CALLS] [RUNS]   (default 1000000 5)
set -eu
: "${VT_SRC:?}" "${VT_BUILD:?}" "${VT_TMP:=$(mktemp -d)}"
VT_BIN=${VT_BIN:-$VT_BUILD/bin/vmtrace}
CALLS=${1:-1000000}
RUNS=${2:-5}
GEN=$VT_BUILD/tests/host/sysloop
[ "$(id -u)" = 0 ] || { echo "b-readback: needs root (tracefs)"; exit 0; }
[ -x "$GEN" ] || { echo "b-readback: $GEN not built"; exit 1; }
command -v trace-cmd >/dev/null || { echo "b-readback: trace-cmd not installed (make deps)"; exit 1; }
cd "$VT_TMP"

median() { sort -g | awk '{a[NR]=$1} END {if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }

"$VT_BIN" record --guest -o z -b 8192 -e syscalls:sys_enter_getppid \
	-e syscalls:sys_exit_getppid -- "$GEN" "$CALLS" >/dev/null 2>rec.err
mkdir p
cp z/vmtrace.meta p/
trace-cmd convert -i z/trace.dat -o p/trace.dat --file-version 6 --compression none >/dev/null 2>&1
EV=$(sed -n 's/^events.total=//p' z/vmtrace.meta)
ZB=$(stat -c %s z/trace.dat); PB=$(stat -c %s p/trace.dat)

run() {	# NAME DIR CMD...: cpu and wall seconds to NAME.cpu / NAME.wall
	local name=$1
	shift
	/usr/bin/time -f '%U %S %e' -o t.out "$@" >/dev/null 2>err.out ||
		{ echo "FAILED: $*"; tail -3 err.out; exit 1; }
	awk '{print $1 + $2}' t.out >>"$name.cpu"
	awk '{print $3}' t.out >>"$name.wall"
}

rm -f ./*.cpu ./*.wall
for r in $(seq "$RUNS"); do
	for d in z p; do
		run merge-$d "$VT_BIN" merge $d -F perfetto -o m-$d.pftrace -q
		run report-$d "$VT_BIN" report $d -q
	done
done
cmp -s m-z.pftrace m-p.pftrace || { echo "b-readback: merge outputs differ"; exit 1; }

ratio() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.2f", (b > 0 ? a / b : 0)}'; }
table=$(
	echo "| median of $RUNS interleaved runs, $EV events | v7 zstd ($ZB bytes) | v6 plain ($PB bytes) | v7 / v6 |"
	echo "|---|---|---|---|"
	for c in merge report; do
		for k in cpu wall; do
			zv=$(median <$c-z.$k); pv=$(median <$c-p.$k)
			echo "| \`vmtrace $c\` $k s | $zv | $pv | $(ratio "$zv" "$pv") |"
		done
	done
)
echo "$table"

section=$(cat <<SECTION
<!-- b-readback begin -->
## Reading back compressed trace.dat: merge and report, v7 zstd against v6

Command: \`make bench B=readback\` (tests/bench/b-readback.sh $CALLS $RUNS).
One recording of a getppid() loop (\`vmtrace record --guest\`, v7 with zstd,
the default) and the same file as v6 (\`trace-cmd convert --file-version 6
--compression none\`), read by \`vmtrace merge -F perfetto\` and \`vmtrace
report\`, alternating; CPU is user + system (GNU time).  A compressed file
is inflated once into a v6-like copy in \$TMPDIR (lib/tracedat_unzip.c),
then read as a plain one. Measured $(date -u +%Y-%m-%d) on $(nproc) CPUs
($(uname -r)).

$table
<!-- b-readback end -->
SECTION
)
"$VT_SRC/tests/bench/doc-section" b-readback "$section"
