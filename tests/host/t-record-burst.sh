#!/bin/bash
# `vmtrace record -- CMD` loses none of the events of the tasks CMD starts:
# tests/host/burst's first action is a burst of N write(2)s from each of
# five tasks the recorder has never seen (the command, its new thread, its
# child, the child's thread, a grandchild), as QEMU's vCPU thread writes
# the guest's first debugcon bytes.  Every write i (i bytes, 1..N) of every
# task must be in trace.dat as syscalls:sys_enter_write (read back through
# libtracecmd, tests/host/tdcount); a miss names the task and the write.
# Also a chain of 6 processes started at once, whose last writes after
# 150 ms: every generation must be followed at the first poll, not one per
# poll (the window would have moved past it).  In the first run another
# process's burst runs meanwhile: its writes must not be in the trace.
# VT_BURST_RUNS runs (default 10; docs/testing.md has the 100-run figure).
# timeout: 600
set -eu
. "$VT_SRC/tests/host/lib.sh"
need_tracefs
burst=$VT_BUILD/tests/host/burst
[ -x "$burst" ] || fail "$burst not built"
runs=${VT_BURST_RUNS:-10}
n=200
missing=0
for run in $(seq 1 "$runs"); do
	rm -rf rec
	: >foreign.txt
	if [ "$run" = 1 ]; then
		# another process's tasks, born while the recording runs (in the
		# new-pid window), write the same way: none may stay in trace.dat
		"$VT_BIN" record -e syscalls:sys_enter_write -o rec -- "$burst" $n 6 400 \
			>tasks.txt 2>rec.err 57>/dev/null &
		rp=$!
		for i in $(seq 500); do [ -s tasks.txt ] && break; sleep 0.01; done
		"$burst" 50 >foreign.txt 57>/dev/null || fail "the foreign burst failed"
		wait $rp || { cat rec.err; fail "run $run: record failed"; }
	else
		"$VT_BIN" record -e syscalls:sys_enter_write -o rec -- "$burst" $n 6 150 \
			>tasks.txt 2>rec.err 57>/dev/null || { cat rec.err; fail "run $run: record failed"; }
	fi
	[ "$(wc -l <tasks.txt)" = 6 ] || { cat tasks.txt; fail "run $run: burst did not finish its 6 tasks"; }
	"$TDCOUNT" -f syscalls:sys_enter_write:common_pid,fd,count rec/trace.dat >writes.txt ||
		fail "run $run: trace.dat does not read back"
	rc=0
	/usr/bin/python3 - "$n" tasks.txt writes.txt foreign.txt <<'X' || rc=$?
import re, sys
n = int(sys.argv[1])
tasks = dict(l.split() for l in open(sys.argv[2]))
foreign = dict(l.split() for l in open(sys.argv[4]))
seen = {t: set() for t in tasks}
bad = 0
for l in open(sys.argv[3]):
    f = dict(re.findall(r'(\w+)=(\d+)', l))
    if f.get('fd') == '57' and f.get('common_pid') in seen:
        seen[f['common_pid']].add(int(f['count']))
    if f.get('common_pid') in foreign:
        bad += 1
if bad:
    print(f"  {bad} writes of the other process's tasks {sorted(foreign)} in the trace")
for t, role in sorted(tasks.items(), key=lambda x: x[1]):
    miss = sorted(set(range(1, n + 1)) - seen[t])
    if miss:
        bad += len(miss)
        print(f"  {role} (tid {t}): {len(miss)} of {n} writes missing: "
              f"{', '.join(map(str, miss[:12]))}{' ...' if len(miss) > 12 else ''}")
sys.exit(1 if bad else 0)
X
	if [ $rc != 0 ]; then
		echo "run $run: writes missing"
		missing=$((missing + 1))
	fi
done
echo "$runs runs of 6 tasks x $n writes: $missing runs with writes missing"
[ $missing = 0 ] || fail "the recording lost the first events of the command's tasks"
