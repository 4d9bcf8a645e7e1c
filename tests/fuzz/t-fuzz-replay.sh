#!/bin/bash
# Replays every seed and regression input through every fuzz target (no
# fuzzing): a parser that once crashed on an input must not crash again.
set -eu
shopt -s nullglob
export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$VT_SRC/tests/lsan.supp}"
n=0
for bin in "$VT_BUILD"/fuzz/fuzz-*; do
	name=$(basename "$bin"); name=${name#fuzz-}
	inputs=("$VT_SRC/tests/fuzz/corpus/$name"/* "$VT_SRC/tests/fuzz/regress/$name"/*)
	[ ${#inputs[@]} -gt 0 ] || { echo "no seeds for $name"; exit 1; }
	"$bin" -runs=0 "${inputs[@]}" >"$VT_TMP/$name.log" 2>&1 || { cat "$VT_TMP/$name.log"; exit 1; }
	echo "$name: ${#inputs[@]} inputs replayed"
	n=$((n + 1))
done
[ $n -gt 0 ] || { echo "no fuzz targets built"; exit 1; }
