# common.sh - shared setup of the tests/merge scripts (sourced, not run).
# Synthetic inputs come from gen-trace (tests/merge/gen-trace.c).
GEN="$VT_BUILD/tests/merge/gen-trace"
[ -x "$GEN" ] || { echo "gen-trace not built: $GEN"; exit 1; }
PY=/usr/bin/python3

# Host: 2 GHz TSC, records at 1e9 + i*1000 ticks (= 500000 us + i*0.5 us).
# The guest's debugfs tsc-offset (and optional scaling ratio) in the host's
# meta is what the align model uses.
AMD_META=(-M cpu.vendor=AuthenticAMD -M kvm.vms=1 -M kvm.vm0.vcpus=1 -M kvm.vm0.pid=4242)
mk_host() {	# DIR NRECS [extra gen-trace args...]
	local d=$1 n=$2
	shift 2
	"$GEN" "$d" -n "$n" -D 2 -z 2000000000 -s 1000000000 -d 1000 -f main,work \
		"${AMD_META[@]}" "$@"
}
mk_guest() {	# DIR NRECS START STEP [extra...]
	local d=$1 n=$2 s=$3 st=$4
	shift 4
	"$GEN" "$d" -n "$n" -D 2 -z 2000000000 -s "$s" -d "$st" -g -f py_a,py_b -p 200 "$@"
}
# JSON checks: valid, B/E balanced and time-ordered per thread; prints
# "pid:ts,ts,..." of the B events per pid for the caller to compare.
json_check() {
	"$PY" - "$1" <<'PYEOF'
import json, sys, collections
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"]
depth = collections.Counter(); last = {}; begins = collections.defaultdict(list)
for e in ev:
    k = (e["pid"], e["tid"])
    if e["ph"] in "BEi":
        if k in last and e["ts"] < last[k]:
            sys.exit("time goes back on %s: %s" % (k, e))
        last[k] = e["ts"]
    if e["ph"] == "B":
        depth[k] += 1; begins[e["pid"]].append("%.3f" % e["ts"])
    elif e["ph"] == "E":
        depth[k] -= 1
        if depth[k] < 0: sys.exit("E without B on %s" % (k,))
bad = [k for k, v in depth.items() if v]
if bad: sys.exit("unbalanced B/E on %s" % bad)
for p in sorted(begins): print("%s:%s" % (p, ",".join(begins[p])))
PYEOF
}

# For tests on align's fixtures (tests/align/mkfixture): need_mkfixture
# stops the test when it is not built; fail MSG; has FILE LINE...: each
# LINE is a whole line of FILE.
MKFIX="$VT_BUILD/tests/align/mkfixture"
need_mkfixture() {
	[ -x "$MKFIX" ] || { echo "mkfixture not built: $MKFIX"; exit 1; }
}
fail() { echo "FAIL: $*"; exit 1; }
has() {
	local f=$1; shift
	for l in "$@"; do
		grep -qxF -- "$l" "$f" || { cat "$f"; fail "no line '$l' in $f"; }
	done
}

# vm_fixture: one VM's inputs in the current directory, guest TSC = host
# TSC + OFF (set VM_OFF, VM_HZ, VM_T0 first): h (host trace.dat with PIO
# markers by "CPU 0/KVM", tid 4242, of QEMU 4240; mk/ the mkfixture files,
# its truth in truth.json), qu (QEMU under uftrace-tsc: host TSC, pid 4240,
# tids 4240..4243), gp (guest Python: pid/tid 200, guest TSC, no domain=,
# like guest/python), gk (guest kernel: sys_enter/exit_write of tid 200
# inside py_a's first call).  merge/t-merge-vm, faults/t-fault-oom.
vm_fixture() {
	"$VT_BUILD/tests/align/mkfixture" h mk -o $VM_OFF -T -D >truth.json
	"$VT_BIN" meta h kvm.vm0.pid=4240
	"$GEN" qu -n 64 -t 4 -p 4240 -z $VM_HZ -s $VM_T0 -d 1000 -D 2 -f qemu_main,kvm_cpu_exec
	"$GEN" gp -n 16 -t 1 -p 200 -z $VM_HZ -s $((VM_T0 + VM_OFF)) -d 1000 -D 2 -g -f py_a,py_b
	sed -i '/^domain=/d' gp/vmtrace.meta
	mkdir gk
	cat >gk.txt <<EOT
comm 200 python3
ev 0 $((VM_T0 + VM_OFF + 500)) 200 syscalls/sys_enter_write fd=1 buf=0 count=5
ev 0 $((VM_T0 + VM_OFF + 700)) 200 syscalls/sys_exit_write ret=5
EOT
	"$VT_BUILD/tests/merge/gen-tracedat" gk/trace.dat <gk.txt
	printf '# vmtrace-meta 1\nformat=trace.dat\ndomain=guest\nclock=tsc\ntsc.hz=%s\n' \
		$VM_HZ >gk/vmtrace.meta
}

# fake_tracefs DIR: DIR/events with this kernel's header_page and
# header_event, for gen-tracedat's own event formats (skipped without a
# mounted tracefs)
fake_tracefs() {
	[ -r /sys/kernel/tracing/events/header_page ] ||
		{ echo "no tracefs headers (mount tracefs at /sys/kernel/tracing)"; exit 77; }
	mkdir -p "$1/events"
	cp /sys/kernel/tracing/events/header_page /sys/kernel/tracing/events/header_event "$1/events/"
}
