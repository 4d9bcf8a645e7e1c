#!/bin/bash
# Bad input to `vmtrace record`: an existing output directory without
# --force (refused, nothing touched), --force, the default directories
# (with python3 -m vmtrace beside), an output path under a
# file, an unknown event, bad -b, and no root (setpriv to nobody): each a
# clear message naming the file and a documented exit code, no tracefs
# instance or half-made directory left behind.
# timeout: 60
set -eu
. "$VT_SRC/tests/host/lib.sh"
need_tracefs
before=$(ls /sys/kernel/tracing/instances)

expect() {	# expect CODE PATTERN -- vmtrace args...
	local code=$1 pat=$2 rc=0
	shift 3
	"$VT_BIN" "$@" >out.txt 2>&1 || rc=$?
	cat out.txt
	[ "$rc" = "$code" ] || fail "vmtrace $* exited $rc, want $code"
	grep -q -- "$pat" out.txt || fail "message of 'vmtrace $*' lacks '$pat'"
}

mkdir old
echo keep >old/trace.dat
expect 2 "old: output directory exists (use --force" -- record --guest -o old -- true
[ "$(cat old/trace.dat)" = keep ] || fail "existing trace.dat touched without --force"

"$VT_BIN" record --guest --force -o old -e sched:sched_switch -- true
"$TDCOUNT" old/trace.dat | grep -q '^cpus ' || fail "--force did not produce a readable trace.dat"

# no -o: ./vmtrace-host, ./vmtrace-guest with --guest (docs/cli.md, Default
# output); `record -- python3 -m vmtrace` in one directory: two directories
mkdir dflt
pre=
nm -D "$VT_BUILD"/python/vmtrace/_vmtrace*.so 2>/dev/null | grep -q __asan_init &&
	pre="$(gcc -print-file-name=libasan.so) $(gcc -print-file-name=libubsan.so)"
echo 'print("hi")' >dflt/hi.py
(cd dflt && "$VT_BIN" record -e sched:sched_switch -- true &&
	ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0" "$VT_BIN" record --guest -e sched:sched_switch -- \
	env LD_PRELOAD="$pre" PYTHONPATH="$VT_BUILD/python" /usr/bin/python3 -m vmtrace -q hi.py) 2>out.txt ||
	{ cat out.txt; fail "record without -o"; }
for d in vmtrace-host vmtrace-guest; do
	"$TDCOUNT" "dflt/$d/trace.dat" | grep -q '^cpus ' || fail "record without -o: no dflt/$d/trace.dat"
done
grep -q '^clock=' dflt/vmtrace-python/vmtrace.meta || fail "record -- python3 -m vmtrace: no dflt/vmtrace-python"
[ ! -e dflt/vmtrace-guest/info ] || fail "python3 -m vmtrace wrote into record's directory"

touch afile
expect 1 "afile/sub: cannot create the output directory" -- record --guest -o afile/sub -- true

expect 2 "event 'nosuch:event' not found" -- record --guest -o bad -e nosuch:event -- true
[ ! -e bad ] || fail "output directory left after a failed start"
expect 2 "event '../x': expected SYSTEM" -- record --guest -o bad -e ../x -- true

expect 2 "-b 12x" -- record -o bad -b 12x -- true
expect 2 "no such process" -- record -o bad -p 999999999 -- true

# a command that cannot run: recording still ends cleanly, status 127
rc=0
"$VT_BIN" record --guest -o nocmd -- /nonexistent/cmd 2>out.txt || rc=$?
cat out.txt
[ $rc = 127 ] || fail "missing command: exit $rc, want 127"
grep -q "cannot run /nonexistent/cmd" out.txt || fail "no message for missing command"
"$TDCOUNT" nocmd/trace.dat >/dev/null || fail "trace.dat of the failed command unreadable"

# not root: tracefs instances are not writable for nobody
if command -v setpriv >/dev/null; then
	mkdir -m 777 nobody
	rc=0
	setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --bounding-set=-all \
		"$VT_BIN" record --guest -o nobody/out -- true >out.txt 2>&1 || rc=$?
	cat out.txt
	[ $rc = 4 ] || fail "as nobody: exit $rc, want 4 (VT_EXIT_PERM)"
	grep -q "/instances: cannot create a tracing instance (run as root)" out.txt ||
		fail "as nobody: message does not name the tracefs file"
	[ ! -e nobody/out ] || fail "as nobody: output directory created"
else
	echo "note: setpriv missing, not-root case not run"
fi
# instances made by this test's (ended) recorders are gone; others may run
for i in $(ls /sys/kernel/tracing/instances); do
	case "$i" in vmtrace-*) ;; *) continue;; esac
	echo "$before" | grep -qx "$i" && continue
	[ -d "/proc/${i#vmtrace-}" ] || fail "instance $i left behind"
done
echo "bad input handled: OK"
