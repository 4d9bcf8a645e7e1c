#!/bin/bash
# Replays every seed and regression input through every fuzz target (no
# fuzzing): a parser that once crashed on an input must not crash again.
# Each target runs twice: as the libFuzzer binary (clang, ASan+UBSan; left
# out when clang has no libFuzzer) and as replay-<name>, the target on
# tests/fuzz/replay-main.c built like the rest of the tree (so `make
# coverage` counts what the corpus reaches, and SAN=1 runs it under gcc's
# ASan+UBSan).
set -eu
shopt -s nullglob
export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$VT_SRC/tests/lsan.supp}"
n=0
nlf=0
for bin in "$VT_BUILD"/fuzz/replay-*; do
	# not the coverage build's notes (replay-<name>-<source>.gcno, .gcda)
	case $bin in *.*) continue;; esac
	name=$(basename "$bin"); name=${name#replay-}
	inputs=("$VT_SRC/tests/fuzz/corpus/$name"/* "$VT_SRC/tests/fuzz/regress/$name"/*)
	[ ${#inputs[@]} -gt 0 ] || { echo "no seeds for $name"; exit 1; }
	t0=$(date +%s.%N)
	"$bin" "${inputs[@]}" >"$VT_TMP/replay-$name.log" 2>&1 ||
		{ cat "$VT_TMP/replay-$name.log"; echo "replay-$name failed"; exit 1; }
	t1=$(date +%s.%N)
	t2=""
	if [ -x "$VT_BUILD/fuzz/fuzz-$name" ]; then
		"$VT_BUILD/fuzz/fuzz-$name" -runs=0 "${inputs[@]}" >"$VT_TMP/$name.log" 2>&1 ||
			{ cat "$VT_TMP/$name.log"; echo "fuzz-$name failed"; exit 1; }
		t2=$(date +%s.%N)
		nlf=$((nlf + 1))
	fi
	awk -v n="$name" -v k=${#inputs[@]} -v a="$t0" -v b="$t1" -v c="$t2" 'BEGIN {
		printf "%s: %d inputs replayed (replay-%s %.1f s", n, k, n, b - a
		if (c != "")
			printf ", fuzz-%s %.1f s", n, c - b
		print ")" }'
	n=$((n + 1))
done
[ $n -gt 0 ] || { echo "no replay binaries built"; exit 1; }
[ $nlf -gt 0 ] || echo "no libFuzzer binaries (clang's libFuzzer missing): gcc replay only"
