#!/bin/bash
# The KVM lab (vmtrace lab, tools/kvm-lab): a command runs as root in a
# Linux host with a working /dev/kvm (kvm-amd loaded), the machine's files
# read-only, the output directory writable at its own path, tracefs and
# debugfs mounted; its stdout/stderr come back, its exit status is
# returned (128+N for a signal).  Failure modes: a time limit (124, the
# console's last lines), a frozen nested host (125, where its vCPU was),
# no QEMU (125), a working directory the lab cannot
# see (2), a bad option (2).
# timeout: 300
# san: skip: vmtrace lab is tools/kvm-lab, a shell script: no ASan-built code runs in it but the front's dispatch
# uses: lab (boots a KVM lab of its own: not beside the lab batch)
set -eu
lab=$VT_BUILD/bin/vmtrace-lab
[ -x "$lab" ] || { echo "FAIL: $lab not built"; exit 1; }
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root"; exit 77; }
command -v qemu-system-x86_64 >/dev/null || { echo "SKIP: qemu-system-x86_64 not installed (make deps)"; exit 77; }
out=$VT_TMP/out
mkdir -p "$out"
cd "$out"
rc=0
"$VT_BIN" lab -q -o "$out" -- /bin/sh -c '
	test -c /dev/kvm && grep -q "^kvm_amd " /proc/modules || { echo "no kvm-amd"; exit 3; }
	test -d /sys/kernel/tracing/events/kvm || { echo "no tracefs kvm events"; exit 4; }
	test -d /sys/kernel/debug/kvm || { echo "no debugfs kvm"; exit 5; }
	touch /etc/vmtrace-lab-test 2>/dev/null && { echo "the root is writable"; exit 6; }
	echo inside > written.txt; echo to-stdout; echo to-stderr >&2; exit 7' >o.txt 2>e.txt || rc=$?
cat o.txt e.txt
[ $rc = 7 ] || { echo "FAIL: exit status $rc, want 7"; exit 1; }
grep -qx to-stdout o.txt && grep -qx to-stderr e.txt || { echo "FAIL: streams"; exit 1; }
[ "$(cat written.txt)" = inside ] || { echo "FAIL: output directory not written"; exit 1; }
rc=0
"$VT_BIN" lab -q -o "$out" -- /bin/sh -c 'kill -KILL $$' || rc=$?
[ $rc = 137 ] || { echo "FAIL: a killed command gave $rc, want 137"; exit 1; }
rc=0
"$VT_BIN" lab -q -o "$out" --timeout 20 --keep-console console.txt -- sleep 600 2>t.err || rc=$?
cat t.err
# (the console kept: on a loaded machine the nested host may not have
# printed a line within 20 s - the file is there, maybe empty)
[ $rc = 124 ] && grep -q 'time limit of 20 s passed' t.err && [ -f console.txt ] ||
	{ echo "FAIL: time limit: exit $rc"; exit 1; }
# a nested host that stops responding (here a real-time copier, mostly in
# the kernel, starves its heartbeat once the kernel's symbols are out) is
# stopped as frozen, naming where its vCPU was
rc=0
"$VT_BIN" lab -q -o "$out" --stall 15 --timeout 240 -- /bin/sh -c '
	while [ ! -s /run/vmtrace-lab/kallsyms ]; do sleep 1; done
	echo -1 >/proc/sys/kernel/sched_rt_runtime_us
	exec chrt -f 99 dd if=/dev/zero of=/dev/null bs=1M 2>/dev/null' 2>f.err || rc=$?
cat f.err
[ $rc = 125 ] && grep -q 'the nested host froze: no heartbeat for' f.err && grep -q '^    vCPU at RIP [0-9a-f]* CPL [0-3]: ' f.err ||
	{ echo "FAIL: frozen nested host: exit $rc"; exit 1; }
# a RIP in the kernel is named by its symbol (dd is in clear_user nearly
# all the time)
grep -q "^    vCPU at RIP [0-9a-f]* CPL 0: [a-z_0-9.]*+0x[0-9a-f]* in the nested host's kernel" f.err &&
	! grep -q 'CPL 0: kernel text' f.err || { echo "FAIL: a kernel RIP not named"; exit 1; }
rc=0
VT_LAB_QEMU=/nonexistent/qemu "$VT_BIN" lab -q -o "$out" -- true 2>q.err || rc=$?
[ $rc = 125 ] && grep -q 'not installed' q.err || { cat q.err; echo "FAIL: no QEMU: exit $rc"; exit 1; }
rc=0
(cd /tmp && "$VT_BIN" lab -q -o "$out" -- true) 2>w.err || rc=$?
[ $rc = 2 ] && grep -q 'not visible inside the lab' w.err || { cat w.err; echo "FAIL: cwd: exit $rc"; exit 1; }
rc=0
"$VT_BIN" lab --smp x -- true 2>/dev/null || rc=$?
[ $rc = 2 ] || { echo "FAIL: bad option: exit $rc"; exit 1; }
echo "ok: status 7 and 137 returned, streams and output kept, limit 124, frozen 125, no QEMU 125, hidden cwd 2"
