#!/bin/bash
# b-python: cost of the Python tracer (vmtrace) side by side with cProfile
# and yappi, on Debian's python3 and on CPython 3.13 (tools/build-cpython313).
# Updates its section of docs/benchmarks.md.
set -eu
[ -d "$VT_BUILD/python/vmtrace" ] || { echo "no $VT_BUILD/python: run make first"; exit 1; }
if PY313=$("$VT_SRC"/tools/build-cpython313 2>"$VT_TMP/cpy.err"); then
	make -s -C "$VT_SRC" O="$VT_BUILD" python-ext PY="$PY313" PYOUT="$VT_BUILD/python313" >/dev/null
	export PY313
else
	echo "note: no CPython 3.13: $(tail -n1 "$VT_TMP/cpy.err")"
fi
exec /usr/bin/python3 "$VT_SRC/tests/bench/python/run.py"
