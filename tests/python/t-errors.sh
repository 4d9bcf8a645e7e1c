#!/bin/bash
# Bad input: unknown option, unwritable output dir, a script that raises or
# calls sys.exit, a full disk: clear message, exit code, earlier trace readable.
set -eu
. "$VT_SRC/tests/python/common.sh"
cd "$VT_TMP"

expect() {	# expect CODE PATTERN -- command...
	local want=$1 pat=$2 rc=0
	shift 3
	"$@" >out 2>err || rc=$?
	[ "$rc" = "$want" ] || vt_fail "$*: exit $rc, want $want: $(cat err)"
	grep -q -- "$pat" err || vt_fail "$*: stderr lacks '$pat': $(cat err)"
}

expect 2 'unrecognized arguments: --bogus' -- vt_py -m vmtrace --bogus "$SCRIPTS/calls.py"
expect 2 'a script or -m MODULE is required' -- vt_py -m vmtrace -o d
expect 2 'nope.py: no such file' -- vt_py -m vmtrace -o d nope.py
touch afile
expect 1 'afile/sub.*Not a directory' -- vt_py -m vmtrace -o afile/sub "$SCRIPTS/calls.py"

printf 'def f():\n    raise RuntimeError("bad input")\n\nf()\n' > raises.py
expect 1 'RuntimeError: bad input' -- vt_py -m vmtrace -o r --clock ns raises.py
vt_replay r -F '^__main__\.f ' | grep -q '__main__.f' || vt_fail "trace of the raising script lacks f()"

printf 'import sys\n\ndef f():\n    sys.exit(7)\n\nf()\n' > exits.py
rc=0; vt_py -m vmtrace -o x --clock ns exits.py || rc=$?
[ "$rc" = 7 ] || vt_fail "sys.exit(7) gave exit $rc"
uftrace info -d x 2>/dev/null | grep -q 'exited with code: 7' || vt_fail "info lacks exit status 7"
vt_replay x | grep -q '__main__.f' || vt_fail "trace of the exiting script lacks f()"

# a full disk: records lost are counted, said, and the trace stays readable
# (400000 calls at least, ~12 MB of records for the 6 MB: a loaded machine
# made too few in the one second to fill it)
# (400000 calls at least, ~12 MB of records for the 6 MB: a loaded machine
# made too few in the one second to fill it)
mkdir small
if mount -t tmpfs -o size=6m vt-small small 2>/dev/null; then
	trap 'umount "$VT_TMP/small"' EXIT
	expect 3 'records lost (No space left on device)' -- \
		vt_py -m vmtrace -o small/t --clock ns "$SCRIPTS/busy.py" 1 0 400000 0 400000
	uftrace replay -d small/t 2>/dev/null | grep -q 'LOST [0-9]* records' || vt_fail "no LOST record in the replay"
	[ "$(vt_calls small/t "__main__.tick ")" -gt 1000 ] || vt_fail "records before the disk filled are gone"
	grep -q '^python.lost=[1-9]' small/t/vmtrace.meta || vt_fail "vmtrace.meta lacks python.lost"
else
	echo "note: cannot mount a tmpfs here: full-disk case not run"
fi
echo "ok: bad input on $("$PY" -V 2>&1)"
