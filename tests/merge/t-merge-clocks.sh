#!/bin/bash
# merge and the host's trace clock, and its usage limits, on mkfixture's
# host recordings (in-band hypercall markers): a clock neither x86-tsc nor
# ns is refused (exit 1, named); a ns clock places the host's events by
# their own stamps (alone: no warning; with a guest: both warnings, no
# model); broken vCPU thread entries in the meta change nothing; QEMU's
# pid and tasks put the vCPU thread in QEMU's process, so does the QEMU
# `record --` started (not another program, nor a pid out of range); no
# -o or an empty one, no input, more than 64 inputs: exit 2.
set -eu
. "$VT_SRC/tests/merge/common.sh"
need_mkfixture
cd "$VT_TMP"

# x86-tsc (the reference): host ticks at 2.096001 GHz
"$MKFIX" h g -n 5 -o 7000000 -k -T -D >/dev/null
"$VT_BIN" merge h g -o ref.json 2>ref.txt
grep -qE '^  host +h +16 events, 2385\.514134176 \.\. 2385\.995251632 s$' ref.txt || fail "reference: $(cat ref.txt)"

# trace clock "counter": refused
"$MKFIX" hc gc -n 5 -o 7000000 -k -T -D -C 'local global [counter] x86-tsc' >/dev/null
rc=0
"$VT_BIN" merge hc gc -o c.json -q 2>err.txt || rc=$?
[ $rc = 1 ] || fail "clock counter: exit $rc, want 1"
has err.txt "vmtrace: merge: hc/trace.dat: trace clock 'counter' is neither x86-tsc nor a ns clock: cannot place it on the timeline"

# trace clock "local" (ns): the same raw stamps, read as ns (5000000000000
# + ... ticks -> 5000.04 s), tsc.hz not applied
"$MKFIX" hn gn -n 5 -o 7000000 -k -T -D -C '[local] global counter x86-tsc' >/dev/null
"$VT_BIN" merge hn -o n.json 2>n.txt
grep -qE '^  trace +hn +11 events, 5000\.040010749 \.\. 5001\.048433417 s$' n.txt || fail "ns host alone: $(cat n.txt)"
if grep -q warning n.txt; then fail "ns host alone warned: $(cat n.txt)"; fi
"$VT_BIN" merge hn gn -o n2.json 2>n2.txt
has n2.txt "vmtrace: warning: hn/trace.dat: recorded with the 'local' trace clock (ns), not x86-tsc: its events are placed by their ns stamps, unaligned" \
	"vmtrace: warning: gn: no clock model (hn/trace.dat: recorded with trace clock 'local' (ns): guest TSC values cannot be related to it; record with the x86-tsc clock (vmtrace record, or trace-cmd record -C x86-tsc)): guest TSC - 0 taken as host TSC"

# vCPU thread entries that are not whole: skipped, the same timeline
cp -r h hb
printf 'kvm.vcpu_threads=3\nkvm.thread1.tid=-5\nkvm.thread1.vcpu=1\nkvm.thread2.tid=4300\nkvm.thread2.vcpu=x\n' >>hb/vmtrace.meta
sed -i '0,/^kvm.vcpu_threads=1$/{/^kvm.vcpu_threads=1$/d}' hb/vmtrace.meta
"$VT_BIN" merge hb g -o b.json -q
sed 's/"hb"/"h"/g' b.json | cmp -s - ref.json || fail "broken thread entries changed the timeline"

# QEMU's pid and the recorded tasks (record.pids/tgids, a bad entry last):
# the vCPU thread's events in process "QEMU (pid 4240)", not its own
cp -r h hq
printf 'kvm.vm0.pid=4240\nrecord.pids=4240,4242,4243,x\nrecord.tgids=4240,4240,4240,4240\n' >>hq/vmtrace.meta
"$VT_BIN" merge hq g -o q.json -q
"$PY" - q.json ref.json <<'PYEOF' || fail "QEMU's tasks"
import json, sys
from collections import Counter
def where(path):
    ev = json.load(open(path))["traceEvents"]
    pn = {e["pid"]: e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "process_name"}
    tn = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name"}
    return Counter((pn.get(e["pid"]), tn.get((e["pid"], e["tid"])), e["name"]) for e in ev
                   if e["ph"] != "M" and e["pid"] < 10000000)
q, r = where(sys.argv[1]), where(sys.argv[2])
want = Counter({("host: QEMU (pid 4240)", "vCPU 0", n): c for (_, _, n), c in r.items()})
assert set(p for p, _, _ in r) == {"host: QEMU (pid 4242)"}, r
assert q == want, (q, want)
print("ok   the vCPU thread's %d events in QEMU (pid 4240)" % sum(q.values()))
PYEOF

# no KVM pid (TCG): QEMU is the command `record --` started when its
# program is qemu-system-* or qemu-kvm (record.command_pid): as
# kvm.vm0.pid above; another program, a pid of 0, past 2^31 - 1 or not a
# number: no QEMU (the reference)
for c in 't:/usr/bin/qemu-system-x86_64 -accel tcg:4240' 'k:/usr/libexec/qemu-kvm -m 1G:4240' \
	'p:/usr/bin/python3.11-config --libs:4240' 'i:/usr/bin/qemu-img:4240' \
	'z:/usr/bin/qemu-system-x86_64:0' 'o:/usr/bin/qemu-system-x86_64:2147483648' \
	'y:/usr/bin/qemu-system-x86_64:x'; do
	IFS=: read -r n cmd pid <<<"$c"
	cp -r h h$n
	printf 'cmdline=%s\nrecord.command_pid=%s\nrecord.pids=4240,4242,4243,x\nrecord.tgids=4240,4240,4240,4240\n' \
		"$cmd" "$pid" >>h$n/vmtrace.meta
	"$VT_BIN" merge h$n g -o $n.json -q
	case $n in t|k) want=q.json from=hq;; *) want=ref.json from=h;; esac
	sed "s/\"h$n\"/\"$from\"/g" $n.json | cmp -s - $want ||
		fail "record.command_pid=$pid, cmdline '$cmd': not as $want"
done

# usage: no -o; no input; more than 64 inputs
rc=0; "$VT_BIN" merge h g 2>err.txt || rc=$?
[ $rc = 2 ] && grep -q '^usage: vmtrace merge' err.txt || fail "no -o: exit $rc: $(cat err.txt)"
rc=0; "$VT_BIN" merge -o x.json 2>err.txt || rc=$?
[ $rc = 2 ] && grep -q '^usage: vmtrace merge' err.txt || fail "no input: exit $rc: $(cat err.txt)"
rc=0; "$VT_BIN" merge h g -o '' 2>err.txt || rc=$?
[ $rc = 2 ] && grep -q '^usage: vmtrace merge' err.txt || fail "-o '': exit $rc: $(cat err.txt)"
rc=0; "$VT_BIN" merge h $(printf 'g %.0s' $(seq 64)) -o x.json 2>err.txt || rc=$?
[ $rc = 2 ] || fail "65 inputs: exit $rc, want 2"
has err.txt 'vmtrace: merge: at most 64 inputs'
[ ! -e x.json ] || fail "65 inputs: output written"
echo "ok: clocks"
