# tests/faults/lib.sh: shared helpers of the fault tests (sourced, not run).
PY=/usr/bin/python3
MUTATE="$VT_SRC/tests/faults/mutate.py"
GPROGS="$VT_BUILD/tests/guest"

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }

# Mutants per input kind: 1000; 400 in the ASan+UBSan build (each run is
# several times slower there; the plain build covers the 1000).
if [ "${VT_SAN:-}" = 1 ]; then MUTANTS=${VT_FAULT_MUTANTS:-400}; else MUTANTS=${VT_FAULT_MUTANTS:-1000}; fi

# run_ok WHAT CMD...: CMD must exit 0 or 3 (partial, warned) and, if 3,
# say so on stderr; never die by a signal.  stderr goes to $VT_TMP/err.
run_ok() {
	local what=$1 rc=0
	shift
	"$@" >"$VT_TMP/out" 2>"$VT_TMP/err" || rc=$?
	sed 's/^/    /' "$VT_TMP/err" | head -5
	case $rc in
	0) ;;
	3) [ -s "$VT_TMP/err" ] || fail "$what: exit 3 without a warning" ;;
	*) fail "$what: exit $rc" ;;
	esac
	echo "ok: $what (exit $rc)"
}

# run_fails WHAT PATTERN CMD...: CMD must fail with 1..127 and print a
# message matching PATTERN (egrep) on stderr.
run_fails() {
	local what=$1 pat=$2 rc=0
	shift 2
	"$@" >"$VT_TMP/out" 2>"$VT_TMP/err" || rc=$?
	sed 's/^/    /' "$VT_TMP/err" | head -5
	[ "$rc" -ne 0 ] && [ "$rc" -lt 128 ] || fail "$what: exit $rc (want a clean failure)"
	grep -Eq "$pat" "$VT_TMP/err" || fail "$what: message does not match /$pat/"
	echo "ok: $what fails cleanly (exit $rc)"
}

# json_events FILE: number of trace events in a Chrome JSON file (python's
# json module is the consumer), the sync markers merge draws from the clock
# model's matched markers left out (they follow the markers, not the traces)
json_events() {
	"$PY" -c 'import json,sys; print(len([e for e in json.load(open(sys.argv[1]))["traceEvents"]
		if e.get("name") != "sync marker" and not (e.get("cat") == "flow" and e.get("name") == "sync")]))' "$1"
}

# json_sync_markers FILE: the sync marker instants merge drew
json_sync_markers() {
	"$PY" -c 'import json,sys; print(len([e for e in json.load(open(sys.argv[1]))["traceEvents"]
		if e.get("name") == "sync marker"]))' "$1"
}

# small_tmpfs DIR SIZE: mount a tmpfs of SIZE on DIR (skip if we cannot)
small_tmpfs() {
	mkdir -p "$1"
	mount -t tmpfs -o size="$2" tmpfs "$1" 2>/dev/null || skip "cannot mount a tmpfs (not root?)"
	trap 'umount -l "'"$1"'" 2>/dev/null || true' EXIT
}

# vt_py ARGS...: /usr/bin/python3 with this build's vmtrace package (in the
# SAN=1 build the extension needs the sanitizer runtimes preloaded; python
# itself leaks by design, so no leak check there)
PY_PRELOAD=
if nm -D "$VT_BUILD"/python/vmtrace/_vmtrace*.so 2>/dev/null | grep -q __asan_init; then
	PY_PRELOAD="$(gcc -print-file-name=libasan.so) $(gcc -print-file-name=libubsan.so)"
fi
vt_py() {
	LD_PRELOAD=$PY_PRELOAD ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0" \
		PYTHONPATH="$VT_BUILD/python" "$PY" "$@"
}

# run_clean WHAT CMD...: CMD may succeed or fail, but cleanly: exit < 128,
# no sanitizer report, a message on stderr when it fails.
run_clean() {
	local what=$1 rc=0
	shift
	"$@" >"$VT_TMP/out" 2>"$VT_TMP/err" || rc=$?
	sed 's/^/    /' "$VT_TMP/err" | head -3
	[ $rc -lt 128 ] || fail "$what: died (exit $rc)"
	! grep -Eq 'Sanitizer|runtime error:' "$VT_TMP/err" || fail "$what: sanitizer report"
	[ $rc = 0 ] || [ -s "$VT_TMP/err" ] || fail "$what: exit $rc without a message"
	echo "ok: $what (exit $rc)"
}
