#!/bin/bash
# vmtrace run refuses a program built without -pg / -finstrument-functions
# (as uftrace does): a message naming it and what to do, exit 2, the
# program not started, no output directory left; -pg, -pg -mfentry and
# -finstrument-functions programs (their hooks imported from libc or
# defined) are traced.
# timeout: 60
set -eu
. "$VT_SRC/tests/guest/mcount-lib.sh"
cd "$VT_TMP"
printf '#include <stdio.h>\nint main(void) { fopen("started", "w"); return 0; }\n' >p.c
cc -o plain p.c
rc=0
"$VT_BIN" run -o d -- ./plain 2>err || rc=$?
cat err
[ "$rc" = 2 ] || { echo "FAIL: exit $rc, want 2"; exit 1; }
grep -q "plain: no mcount.*-pg" err || { echo "FAIL: message"; exit 1; }
[ ! -e started ] || { echo "FAIL: the program ran"; exit 1; }
[ ! -e d ] || { echo "FAIL: left directory d"; exit 1; }
# an existing directory stays
mkdir e
"$VT_BIN" run -o e -- ./plain 2>/dev/null && { echo "FAIL: exit 0"; exit 1; }
[ -d e ] || { echo "FAIL: removed the user's directory"; exit 1; }
for f in "-pg" "-pg -mfentry" "-finstrument-functions" "-pg -static"; do
	# shellcheck disable=SC2086
	cc $f -o prog p.c 2>/dev/null || { echo "($f: cannot build here)"; continue; }
	rm -rf d started
	"$VT_BIN" run -o d -- ./prog || { echo "FAIL: $f: exit $?"; exit 1; }
	[ -e started ] || { echo "FAIL: $f: did not run"; exit 1; }
	echo "ok: $f traced"
done
echo ok
