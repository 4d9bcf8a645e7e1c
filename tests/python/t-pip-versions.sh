#!/bin/bash
# `pip install .` with no network into a fresh venv of every pyenv CPython
# 3.8+ on the machine ($PYENV_ROOT/versions/3.*, default ~/.pyenv; each
# needs its headers), then the installed package traces, per interpreter:
# nested calls and an exception (uftrace replay: the call tree, and the
# exit-by-exception bit), generators and coroutines, threads including one
# started before tracing (also with --lines, which on 3.8 installs the
# trace function on another thread's state by hand), line filtering, fork
# (the child's own directory), and on setprofile an audit hook refusing
# sys.setprofile (start() raises its error, a later start() traces).  The
# backend is setprofile before 3.12, sys.monitoring from 3.12.  Skipped
# where pyenv has no such interpreter (CI: Debian 12 only; t-pip.sh covers
# Debian's python3 there).
# timeout: 900
# san: skip: pip builds the extension with its own flags, not the SAN build's; the ASan-built extension runs in python/t-*
set -eu
. "$VT_SRC/tests/python/common.sh"
[ -z "$VT_PRELOAD" ] || vt_skip "sanitizer build: pip builds its own extension"

root=${PYENV_ROOT:-$HOME/.pyenv}
pys=()
for d in $(ls -d "$root"/versions/3.* 2>/dev/null | sort -V); do
	[ -x "$d/bin/python3" ] || continue
	"$d/bin/python3" -c 'import os, sys, sysconfig
inc = os.path.join(sysconfig.get_paths()["include"], "Python.h")
sys.exit(not (sys.implementation.name == "cpython" and sys.version_info >= (3, 8)
	      and sys.prefix == sys.base_prefix and os.path.exists(inc)))' 2>/dev/null &&
		pys+=("$d/bin/python3")
done
[ ${#pys[@]} -gt 0 ] || vt_skip "no pyenv CPython 3.8+ with headers in $root/versions"

vt_pip_offline_src

# a thread started before tracing runs linemod.work(3) with --lines linemod
cat > early_lines.py <<'P'
import sys, threading
import linemod, vmtrace
ready, go = threading.Event(), threading.Event()
def early():
    ready.set()
    go.wait()
    linemod.work(3)
t = threading.Thread(target=early)
t.start()
ready.wait()
vmtrace.start(sys.argv[1], lines=["linemod"], clock="ns")
go.set()
t.join()
vmtrace.stop()
P
# exit-by-exception bit (address bit 0) on an exit record of boom()
cat > unwind.py <<'P'
import glob, struct, sys
d = sys.argv[1]
boom = [int(l.split()[0], 16) + 0x100000000 for l in open(d + "/vmtrace-python.sym")
        if " T __main__.boom " in l][0]
recs = open(glob.glob(d + "/[0-9]*.dat")[0], "rb").read()
bits = [struct.unpack_from("<QQ", recs, i)[1] for i in range(0, len(recs), 16)]
sys.exit(0 if any(b & 3 == 1 and b >> 16 == boom + 1 for b in bits) else 1)
P

fail() { vt_fail "CPython $v: $*"; }
done_v=
for py in "${pys[@]}"; do
	v=$("$py" -c 'import platform; print(platform.python_version())')
	w=$VT_TMP/$v
	mkdir "$w"
	"$py" -m venv "$w/venv" > "$w/venv.log" 2>&1 || fail "venv: $(tail -n 3 "$w/venv.log")"
	vpy=$w/venv/bin/python
	(cd "$src" && "$vpy" -m pip install .) > "$w/pip.log" 2>&1 ||
		fail "pip install .: $(grep -m3 -i 'error' "$w/pip.log" || tail -n 5 "$w/pip.log")"
	where=$("$vpy" -c 'import vmtrace; print(vmtrace.__file__)') || fail "import vmtrace"
	case "$where" in "$w/venv/"*) ;; *) fail "imported vmtrace from $where";; esac
	backend=$("$vpy" -c 'import vmtrace; print(vmtrace.backend)')
	want_b=$("$vpy" -c 'import sys; print("sys.monitoring" if sys.version_info >= (3, 12) else "setprofile")')
	[ "$backend" = "$want_b" ] || fail "backend $backend, want $want_b"
	cd "$w"

	# calls and an exception: the call tree, and boom() left by exception
	vt_pip_calls_tree "$vpy" calls || fail "call tree differs"
	"$vpy" "$VT_TMP/unwind.py" calls || fail "no exit-by-exception record of boom"

	# generators and coroutines: each resume an entry
	"$vpy" -m vmtrace -o gens --clock ns "$SCRIPTS/gens.py" || fail "gens.py: exit $?"
	n=$(vt_calls gens "__main__.gen ")
	[ "$n" = 3 ] || fail "gen: $n entries, want 3"
	n=$(vt_calls gens "__main__.sub ")
	[ "$n" -ge 4 ] || fail "sub: $n entries, want >= 4"
	vt_replay gens > /dev/null || fail "replay of gens: $(cat "$VT_TMP/replay.err")"

	# threads: one started before tracing, one after, each its own file
	"$vpy" "$SCRIPTS/threads.py" threads || fail "threads.py: exit $?"
	n=$(ls threads/*.dat | wc -l)
	[ "$n" = 3 ] || fail "threads: $n .dat files, want 3"
	[ "$(vt_calls threads "__main__.early_work ")" = 1 ] || fail "early_work (thread started before tracing) not recorded"
	[ "$(vt_calls threads "__main__.late_work ")" = 1 ] || fail "late_work not recorded"

	# lines: in linemod only, in the main thread and in a pre-existing one
	PYTHONPATH=$SCRIPTS "$vpy" -m vmtrace -o lines --clock ns --lines linemod "$SCRIPTS/lines.py" ||
		fail "lines.py: exit $?"
	[ "$(vt_calls lines "linemod.work:5 ")" = 3 ] || fail "--lines: linemod.work:5 not 3 times"
	grep -q ' T __main__.other:[0-9]' lines/vmtrace-python.sym && fail "lines recorded in __main__"
	PYTHONPATH=$SCRIPTS "$vpy" "$VT_TMP/early_lines.py" elines || fail "early_lines.py: exit $?"
	[ "$(vt_calls elines "linemod.work:5 ")" = 3 ] ||
		fail "--lines in a thread started before tracing: linemod.work:5 not 3 times"
	vt_replay elines -F '^linemod\.work ' | grep -q 'linemod.work:6' ||
		fail "line 6 not under work() in the pre-existing thread"

	# setprofile: an audit hook refusing sys.setprofile, then allowing it
	if [ "$backend" = setprofile ]; then
		"$vpy" "$SCRIPTS/audit.py" audit || fail "audit.py: exit $?"
		[ "$(vt_calls audit "__main__.f ")" = 1 ] || fail "f() not traced after a refused start"
	fi

	# fork: the child writes DIR/fork-<PID>, not the parent's files
	child=$("$vpy" -m vmtrace -o fork --clock ns "$SCRIPTS/forks.py") || fail "forks.py: exit $?"
	[ "$(vt_calls "fork/fork-$child" "__main__.child_work ")" = 1 ] || fail "child_work not in the child's trace"
	[ "$(vt_calls fork "__main__.child_work ")" = 0 ] || fail "child_work in the parent's trace"
	[ "$(vt_calls fork "__main__.parent_work ")" = 1 ] || fail "parent_work not in the parent's trace"
	cd "$VT_TMP"
	done_v="$done_v $v ($backend)"
done

snap | diff before - > srcdiff ||
	vt_fail "pip install . changed the source tree:" $(sed -n 's/^[<>] \([^ ]*\) .*/\1/p' srcdiff | sort -u)
echo "ok: pip install . (offline) and tracing on CPython$done_v"
