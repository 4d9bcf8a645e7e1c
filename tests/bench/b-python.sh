#!/bin/bash
# b-python: cost of the Python tracer (vmtrace) side by side with cProfile
# and yappi, on Debian's python3 and on CPython 3.13 (tools/build-cpython313).
# Updates its section of docs/benchmarks.md.
set -eu
[ -d "$VT_BUILD/python/vmtrace" ] || { echo "no $VT_BUILD/python: run make first"; exit 1; }

# _vtfloor (python/floor.c): no-op and TSC-only C hooks for the breakdown
build_floor() {	# PYTHON OUTDIR
	local inc suf
	inc=$("$1" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
	suf=$("$1" -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
	mkdir -p "$2"
	${CC:-cc} -O2 -fPIC -shared -I"$inc" -o "$2/_vtfloor$suf" "$VT_SRC/tests/bench/python/floor.c"
}
build_floor /usr/bin/python3 "$VT_TMP/floor"
export FLOOR="$VT_TMP/floor"
if PY313=$("$VT_SRC"/tools/build-cpython313 2>"$VT_TMP/cpy.err"); then
	make -s -C "$VT_SRC" O="$VT_BUILD" python-ext PY="$PY313" PYOUT="$VT_BUILD/python313" >/dev/null
	build_floor "$PY313" "$VT_TMP/floor313"
	export PY313 FLOOR313="$VT_TMP/floor313"
else
	echo "note: no CPython 3.13: $(tail -n1 "$VT_TMP/cpy.err")"
fi
exec /usr/bin/python3 "$VT_SRC/tests/bench/python/run.py"
