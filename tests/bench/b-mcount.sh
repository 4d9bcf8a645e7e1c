#!/bin/bash
# b-mcount: cost per traced call (entry + exit) of the same -pg binary
# (tests/guest/progs/loop.c: N calls of a tiny function) under
# `vmtrace run` and under Debian's `uftrace record`, the untraced loop
# (built without -pg) subtracted; medians of interleaved runs; bytes per
# call on disk.  Updates its section of docs/benchmarks.md.
# Env: B_MCOUNT_CALLS (default 10000000), B_MCOUNT_RUNS (default 5).
set -eu
N=${B_MCOUNT_CALLS:-10000000}
RUNS=${B_MCOUNT_RUNS:-5}
G="$VT_BUILD/tests/guest"
PY=/usr/bin/python3
command -v uftrace >/dev/null || { echo "uftrace not installed (make deps)"; exit 77; }

# run_one KIND: wall ns and CPU ns (user+sys of the children) of one run
run_one() {
	local t0 t1 c
	rm -rf "$VT_TMP/d"
	t0=$(date +%s%N)
	case $1 in
	base)    c=$( { /usr/bin/time -f '%U %S' "$G/loop-nopg" "$N" >/dev/null; } 2>&1 );;
	vmtrace) c=$( { /usr/bin/time -f '%U %S' "$VT_BIN" run -o "$VT_TMP/d" -- \
			"$G/loop-pg" "$N" >/dev/null; } 2>&1 );;
	uftrace) c=$( { /usr/bin/time -f '%U %S' uftrace record -d "$VT_TMP/d" \
			"$G/loop-pg" "$N" >/dev/null; } 2>&1 );;
	esac
	t1=$(date +%s%N)
	echo "$1 $((t1 - t0)) $(echo "$c" | tail -1 | awk '{printf "%d", ($1 + $2) * 1e9}')"
	if [ "$1" != base ]; then
		echo "bytes $1 $(cat "$VT_TMP"/d/*.dat | wc -c)"
	fi
}

: >"$VT_TMP/samples"
for i in $(seq "$RUNS"); do
	for k in base vmtrace uftrace; do
		run_one $k >>"$VT_TMP/samples"
	done
	sync
done

$PY - "$VT_TMP/samples" "$N" "$RUNS" "$VT_SRC/docs/benchmarks.md" <<'PYEOF'
import re, statistics, sys, platform
path, n, runs, doc = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
wall, cpu, size = {}, {}, {}
for line in open(path):
    f = line.split()
    if f[0] == "bytes":
        size[f[1]] = int(f[2])
    else:
        wall.setdefault(f[0], []).append(int(f[1]))
        cpu.setdefault(f[0], []).append(int(f[2]))
med = lambda d, k: statistics.median(d[k])
rows = []
per = {}
for k in ("vmtrace", "uftrace"):
    w = (med(wall, k) - med(wall, "base")) / n
    c = (med(cpu, k) - med(cpu, "base")) / n
    per[k] = (w, c)
    rows.append("| %s | %.1f | %.1f | %.1f |" % (
        "vmtrace run" if k == "vmtrace" else "uftrace record (0.13)", w, c, size[k] / n))
ratio_w = per["vmtrace"][0] / per["uftrace"][0]
ratio_c = per["vmtrace"][1] / per["uftrace"][1]
table = "\n".join([
    "| tool | ns/call (wall) | ns/call (CPU) | bytes/call on disk |",
    "|---|---|---|---|"] + rows + [
    "| **ratio vmtrace/uftrace** | **%.3f** | **%.3f** | |" % (ratio_w, ratio_c)])
print(table)
print("target: ratio < 0.333 -> %s" % ("met" if ratio_w < 1 / 3 else "NOT met"))
section = """<!-- b-mcount begin -->
## mcount: cost per traced call (b-mcount)

Command: `make bench B=mcount` (tests/bench/b-mcount.sh). The same `-pg`
binary (tests/guest/progs/loop.c, %d calls of a tiny function) under
`vmtrace run` and `uftrace record`; the same loop built without `-pg`
subtracted; median of %d interleaved runs each; wall time of the whole
command (so each tool's start-up is charged to it) and CPU time (user+sys
of all processes). One call = one entry + one exit record.

%s

Base loop: %.0f ms wall. Machine: %s, 2 shared cores, output on the
local disk ($TMPDIR).
<!-- b-mcount end -->
""" % (n, runs, table, med(wall, "base") / 1e6, platform.machine())
text = open(doc).read()
# between its markers: what is written by hand after it stays
pat = re.compile(r"<!-- b-mcount begin -->.*?<!-- b-mcount end -->\n", re.S)
if pat.search(text):
    text = pat.sub(lambda m: section, text)
else:
    text = text.rstrip("\n") + "\n\n" + section
open(doc, "w").write(text.rstrip("\n") + "\n")
PYEOF
