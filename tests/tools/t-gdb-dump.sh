#!/bin/bash
# t-gdb-dump: tools/gdb/vmtrace.py saves the records a crashed program
# still held in its per-thread buffers.  crashme (3 threads, a few hundred
# traced calls, fewer than one buffer) runs under `vmtrace run` and dies
# of SIGSEGV; its core (the kernel's when core_pattern is a plain file
# name, else gdb's gcore at the fault) goes through `vmtrace-dump`; the
# system's uftrace reads the result.  Then the same on a live process.
# timeout: 120
set -eu
prog=$VT_BUILD/tests/tools/crashme
rdtsc=$VT_BUILD/tests/tools/rdtsc
ext=$VT_SRC/tools/gdb/vmtrace.py
command -v gdb >/dev/null || { echo "SKIP: no gdb"; exit 77; }
[ -x "$prog" ] && [ -x "$rdtsc" ] || { echo "missing $prog or $rdtsc (make test builds them)"; exit 1; }
[ -f "$VT_BUILD/lib/libvmtrace-mcount.so" ] || { echo "SKIP: mcount runtime not built yet"; exit 77; }
"$VT_BIN" run --help >/dev/null 2>&1 || { echo "SKIP: vmtrace run not built yet"; exit 77; }

count() {	# count FUNC DIR: lines of uftrace replay calling FUNC
	/usr/bin/uftrace replay -d "$2" 2>/dev/null | grep -c "| *$1()" || true
}

before=$("$rdtsc")
pattern=$(cat /proc/sys/kernel/core_pattern)
core=""
case $pattern in
*/*|\|*) ;;
*)	rc=0
	( ulimit -c unlimited && exec "$VT_BIN" run -o data -- "$prog" crash ) >run.log 2>&1 || rc=$?
	core=$(ls -t core* 2>/dev/null | head -1 || true)
	[ -n "$core" ] && echo "kernel core dump: $core (run exit $rc)";;
esac
if [ -z "$core" ]; then
	rm -rf data
	gdb -batch -nx -ex 'set follow-fork-mode child' -ex 'set detach-on-fork on' -ex run \
		-ex 'gcore core.gdb' -ex kill --args "$VT_BIN" run -o data -- "$prog" crash >gcore.log 2>&1 || true
	core=core.gdb
	[ -s $core ] || { cat gcore.log; echo "could not make a core"; exit 1; }
	echo "gdb gcore at the fault: $core (core_pattern is '$pattern')"
fi
after=$("$rdtsc")

# nothing was flushed: the trace on disk has none of the calls
[ "$(count last_words data)" -eq 0 ] && [ "$(count worker_step data)" -eq 0 ]

gdb -batch -nx "$prog" "$core" -ex "source $ext" -ex 'vmtrace-dump --from data out' >dump.log 2>&1
cat dump.log | grep vmtrace-dump
grep -q 'vmtrace-dump: 3 threads, [0-9]* buffered records saved to out (core)' dump.log
w=$(count worker_step out) m=$(count main_step out) l=$(count last_words out)
echo "saved from the core: worker_step $w, main_step $m, last_words $l"
[ "$w" -eq 200 ] && [ "$m" -eq 100 ] && [ "$l" -eq 1 ] || { /usr/bin/uftrace replay -d out | tail; exit 1; }
# three tasks, timestamps TSC ticks from the run, each thread in order
/usr/bin/uftrace dump -d out >dump.txt
[ "$(grep -c '^reading [0-9]*\.dat' dump.txt)" -eq 3 ]
awk '/^reading/ { prev = 0 } /^ *[0-9]+\.[0-9]+ / { t = $1; sub(/\./, "", t); t += 0
	if (t < a || t > b || t < prev) { print "bad timestamp", t; exit 1 } prev = t }' a="$before" b="$after" dump.txt
[ "$("$VT_BIN" meta out dump.from)" = core ]

# live: the program waits; gdb attaches, dumps, detaches
"$VT_BIN" run -o live -- "$prog" wait >live.log 2>&1 & rpid=$!
for _ in $(seq 100); do grep -q ready live.log && break; sleep 0.1; done
cpid=$(pgrep -P $rpid -f crashme | head -1)
[ -n "$cpid" ] || { cat live.log; kill $rpid; echo "no crashme process"; exit 1; }
gdb -batch -nx -p "$cpid" -ex "source $ext" -ex 'vmtrace-dump liveout' >live-dump.log 2>&1 || true
kill -9 "$cpid"; wait $rpid 2>/dev/null || true
grep vmtrace-dump live-dump.log
grep -q 'saved to liveout (live)' live-dump.log
[ "$(count worker_step liveout)" -eq 200 ] && [ "$(count main_step liveout)" -eq 100 ]
echo "live process: buffered records saved too"

# a process without the runtime: a clear error, nothing written
"$prog" wait >plain.log 2>&1 & ppid=$!
for _ in $(seq 50); do grep -q ready plain.log && break; sleep 0.1; done
gdb -batch -nx -p $ppid -ex "source $ext" -ex 'vmtrace-dump plainout' >plain-dump.log 2>&1 || true
kill -9 $ppid; wait $ppid 2>/dev/null || true
grep -q 'vmtrace-dump: no symbol mcount_threads' plain-dump.log || { cat plain-dump.log; exit 1; }
[ ! -e plainout ]
echo "without the runtime: $(grep -o 'vmtrace-dump: no symbol.*' plain-dump.log)"
