#!/bin/bash
# b-ab: one build against another, interleaved, for an issue's "before and
# after" figures (docs/benchmarks.md): B_OLD is the other build's output
# directory (make O=DIR of the older commit; for the Python rows also
# `make O=DIR python-ext PY=python3.13 PYOUT=DIR/python313`).
#   mcount: `vmtrace run` of tests/guest/progs/loop.c (B_AB_CALLS calls),
#           CPU user+sys of all processes over the untraced loop
#   merge:  `vmtrace merge -F perfetto` of gen-trace's B_AB_RECORDS records
#           (4 threads, depth 8, TSC clock) to /dev/null, CPU user+sys
#   python: fib(27) under each build's CPython 3.13 extension
#           (tests/bench/python/bd_one.py), CPU ns per call over untraced
# Medians of B_AB_ROUNDS interleaved rounds (default 9), with the median of
# the paired differences (same round): the machine is shared and noisy.
# Prints a table; writes nothing into docs/.  Without B_OLD: says so, exits 0.
set -eu
[ -n "${B_OLD:-}" ] || { echo "b-ab: set B_OLD=<build dir of the other commit> to compare"; exit 0; }
R=${B_AB_ROUNDS:-9}
CALLS=${B_AB_CALLS:-10000000}
RECS=${B_AB_RECORDS:-20000000}
G="$VT_BUILD/tests/guest"
for f in "$B_OLD/bin/vmtrace" "$VT_BIN" "$G/loop-pg" "$G/loop-nopg" "$VT_BUILD/tests/merge/gen-trace"; do
	[ -x "$f" ] || { echo "b-ab: $f missing (make; make bench builds the programs)"; exit 1; }
done
"$VT_BUILD/tests/merge/gen-trace" "$VT_TMP/in" -n "$RECS" -t 4 -D 8 -c tsc -z 2100000000 \
	-s 21000000 -d 2100 >/dev/null
PY313=$("$VT_SRC/tools/build-cpython313" 2>/dev/null) || PY313=
if [ -n "$PY313" ] && [ -d "$B_OLD/python313" ]; then
	make -s -C "$VT_SRC" O="$VT_BUILD" python-ext PY="$PY313" PYOUT="$VT_BUILD/python313" >/dev/null
else
	PY313=
	echo "b-ab: no CPython 3.13 or no $B_OLD/python313: no Python rows"
fi

cpu() {	# COMMAND...: user+sys seconds of it and its children
	/usr/bin/time -f '%U %S' "$@" 2>&1 >/dev/null | tail -n1 | awk '{ print $1 + $2 }'
}

: >"$VT_TMP/samples"
for _ in $(seq "$R"); do
	echo "mcount base $(cpu "$G/loop-nopg" "$CALLS")" >>"$VT_TMP/samples"
	for k in old new; do
		b=$VT_BIN; [ $k = old ] && b=$B_OLD/bin/vmtrace
		rm -rf "$VT_TMP/d"
		echo "mcount $k $(cpu "$b" run -o "$VT_TMP/d" -- "$G/loop-pg" "$CALLS")" >>"$VT_TMP/samples"
		echo "merge $k $(cpu "$b" merge "$VT_TMP/in" -o /dev/null -F perfetto -q)" >>"$VT_TMP/samples"
		if [ -n "$PY313" ]; then
			d=$VT_BUILD/python313; [ $k = old ] && d=$B_OLD/python313
			PYTHONPATH=$d "$PY313" "$VT_SRC/tests/bench/python/bd_one.py" vmtrace 27 \
				"$VT_TMP/py" | sed 's/^/python '$k' /' >>"$VT_TMP/samples"
		fi
	done
	[ -z "$PY313" ] || "$PY313" "$VT_SRC/tests/bench/python/bd_one.py" none 27 "$VT_TMP/py" |
		sed 's/^/python base /' >>"$VT_TMP/samples"
done

/usr/bin/python3 - "$VT_TMP/samples" "$CALLS" "$RECS" "$B_OLD" <<'PYEOF'
import json, statistics, sys
path, calls, recs, old = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
v = {}
for line in open(path):
    what, k, rest = line.split(" ", 2)
    if what == "python":
        d = json.loads(rest)
        val, n = d["cpu"], d["calls"]
    else:
        val, n = float(rest), calls if what == "mcount" else recs
    v.setdefault(what, {}).setdefault(k, []).append(val)
    v[what]["n"] = n
print("b-ab: old = %s, new = this tree; %d interleaved rounds, medians" % (old, len(v["mcount"]["old"])))
print("| what | old | new | new - old, paired (median) | rounds new lower |")
print("|---|---|---|---|---|")
for what, unit in (("mcount", "ns/call CPU over untraced"), ("merge", "CPU s, %d records" % recs),
                   ("python", "ns/call CPU over untraced, fib(27)")):
    if what not in v:
        continue
    s = v[what]
    base = statistics.median(s["base"]) if "base" in s else 0.0
    scale = 1e9 / s["n"] if what != "merge" else 1.0
    o = [(x - base) * scale for x in s["old"]]
    nw = [(x - base) * scale for x in s["new"]]
    diff = [b - a for a, b in zip(o, nw)]
    print("| %s (%s) | %.2f | %.2f | %+.2f | %d/%d |" % (what, unit, statistics.median(o),
          statistics.median(nw), statistics.median(diff), sum(d < 0 for d in diff), len(diff)))
PYEOF
