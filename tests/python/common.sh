# common.sh - sourced by tests/python/t-*.sh: picks the interpreter and the
# extension build for it.  A test named t-NAME-313.sh runs on CPython 3.13
# (built once by tools/build-cpython313 into /var/cache/vmtrace); the others
# on Debian's /usr/bin/python3.  Provides: $PY, $PYDIR, $SCRIPTS, vt_py
# (run python with the package importable), vt_skip, vt_fail.
SCRIPTS=$VT_SRC/tests/python/scripts

vt_skip() { echo "$*"; exit 77; }
vt_fail() { echo "FAIL: $*"; exit 1; }

case "$(basename "$0")" in
*-313.sh)
	if ! PY=$("$VT_SRC"/tools/build-cpython313 2>"$VT_TMP/cpy.err"); then
		vt_skip "no CPython 3.13: $(tail -n1 "$VT_TMP/cpy.err")"
	fi
	PYDIR=$VT_BUILD/python313
	# serialise: parallel tests must not compile the same file at once
	( flock 9; make -s -C "$VT_SRC" O="$VT_BUILD" python-ext PY="$PY" PYOUT="$PYDIR" ) \
		9>"$VT_BUILD/.python313.lock" >"$VT_TMP/make.log" 2>&1 ||
		vt_fail "building the extension for $PY: $(tail -n3 "$VT_TMP/make.log")"
	;;
*)
	PY=/usr/bin/python3
	PYDIR=$VT_BUILD/python
	[ -d "$PYDIR/vmtrace" ] || vt_fail "$PYDIR/vmtrace missing: run make"
	;;
esac

# A sanitizer build's extension needs the ASan runtime loaded first.
VT_PRELOAD=
if nm -D "$PYDIR"/vmtrace/_vmtrace*.so 2>/dev/null | grep -q __asan_init; then
	VT_PRELOAD="$(gcc -print-file-name=libasan.so) $(gcc -print-file-name=libubsan.so)"
	# the interpreter's own allocations at exit are not ours to report
	export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"
fi

vt_py() { LD_PRELOAD=$VT_PRELOAD PYTHONPATH=$PYDIR${PYTHONPATH:+:$PYTHONPATH} "$PY" "$@"; }
# The same for `vt_py_bg ... &`: python replaces the background subshell,
# so $! is the python process itself (kill -9 $! kills the writer).
vt_py_bg() { LD_PRELOAD=$VT_PRELOAD PYTHONPATH=$PYDIR${PYTHONPATH:+:$PYTHONPATH} exec "$PY" "$@"; }

# uftrace's view of a trace dir with only the function column.
vt_replay() { uftrace replay -d "$1" -f none "${@:2}" 2>"$VT_TMP/replay.err"; }

# Number of calls of functions whose name starts with $2, per uftrace report.
vt_calls()
{
	uftrace report -d "$1" -f call --no-pager 2>>"$VT_TMP/report.err" |
		awk -v want="$2" '{ c = $1; $1 = ""; sub(/^ /, ""); if (index($0, want) == 1) n += c }
				  END { print n + 0 }'
}

# For the pip tests: pip without this machine's config (find-links ...), no
# index, no cache in $HOME, build files in $VT_TMP, no .pyc of the backend
# in the source tree; $src = a copy of the checkout as a fresh clone has it
# (no build outputs), `snap` lists it so a test can prove pip left it as it was.
vt_pip_offline_src()
{
	unset $(env | sed -n 's/^\(PIP_[A-Z_]*\)=.*/\1/p') PYTHONPATH
	export PIP_CONFIG_FILE=/dev/null PIP_NO_INDEX=1 PIP_NO_CACHE_DIR=1 \
		PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_ROOT_USER_ACTION=ignore \
		TMPDIR=$VT_TMP PYTHONDONTWRITEBYTECODE=1
	src=$VT_TMP/src
	mkdir "$src"
	tar -C "$VT_SRC" --exclude-vcs --exclude-vcs-ignores --exclude=./build \
		--exclude="./${VT_BUILD#"$VT_SRC"/}" -cf - . | tar -C "$src" -xf -
	snap > "$VT_TMP/before"
}
snap() { (cd "$src" && find . -printf '%p %s %m %T@\n' | LC_ALL=C sort); }

# For the pip tests: trace calls.py (no C calls) with the interpreter $1
# into directory $2 and compare its `uftrace replay` call tree with the one
# it must give (boom() left by its exception); 0 when equal, else the diff
# or the tracer's failure is printed and non-zero returned.
vt_pip_calls_tree()
{
	"$1" -m vmtrace -o "$2" --clock ns --no-c-calls "$SCRIPTS/calls.py" ||
		{ echo "calls.py under the installed vmtrace: exit $?"; return 1; }
	vt_replay "$2" -F '^__main__\.top ' | sed -e 's/ ([^)]*)//' -e 's/()//' -e 's/ *$//' |
		awk '/^#/ || /^ *$/ { next } { print } /^} \/\* __main__.top \*\/$/ { exit }' > "$2.got"
	diff -u - "$2.got" <<'W' || { cat "$VT_TMP/replay.err"; return 1; }
__main__.top {
  __main__.middle {
    __main__.leaf;
    __main__.leaf;
  } /* __main__.middle */
  __main__.catcher {
    __main__.boom;
  } /* __main__.catcher */
} /* __main__.top */
W
}
