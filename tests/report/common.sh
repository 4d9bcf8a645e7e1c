# common.sh - shared setup of the tests/report scripts (sourced, not run):
# mk_fixture DIR NREQ builds DIR/h (host trace.dat + vmtrace.meta) and DIR/g
# (guest Python uftrace data from gen-trace + guest kernel trace.dat) with
# the known per-stage latencies of mkfixture.py (DIR/expected.json);
# mk_fixture_of GEN.py DIR NREC [ARGS] the same from another generator
# (mkcrit.py, mkthrottle.py, mkkick.py: GEN.py DIR ARGS writes DIR/host.txt,
# guest.txt and expected.json), NREC records of Python calls.
GEN="$VT_BUILD/tests/merge/gen-trace"
GTD="$VT_BUILD/tests/merge/gen-tracedat"
PY=/usr/bin/python3
[ -x "$GEN" ] && [ -x "$GTD" ] || { echo "gen-trace/gen-tracedat not built"; exit 1; }
for ev in kvm/kvm_exit block/block_rq_issue irq/irq_handler_entry syscalls/sys_enter_write; do
	[ -r /sys/kernel/tracing/events/$ev/format ] ||
		{ echo "no tracefs event format $ev (mount tracefs at /sys/kernel/tracing)"; exit 77; }
done
mk_fixture_of() {	# GEN.py DIR NREC [ARGS]
	local gen=$1 d=$2 n=$3
	shift 3
	mkdir -p "$d/h"
	"$PY" "$VT_SRC/tests/report/$gen" "$d" "$@"
	# Python calls: app.main > app.save, 1 ms each
	"$GEN" "$d/g" -n "$n" -D 2 -z 2000000000 -s 1000000000 -d 2000000 -g -p 200 \
		-f "app.main (app.py:1),app.save (app.py:10)"
	"$GTD" "$d/h/trace.dat" <"$d/host.txt"
	"$GTD" "$d/g/trace.dat" <"$d/guest.txt"
	# one VM (QEMU 4242) of one vCPU (thread 4243)
	printf '# vmtrace-meta 1\nclock=tsc\ntsc.hz=2000000000\ndomain=host\nkvm.vms=1\nkvm.vm0.pid=4242\nkvm.vm0.vcpus=1\nkvm.vcpu_threads=1\nkvm.thread0.tid=4243\nkvm.thread0.pid=4242\nkvm.thread0.vcpu=0\n' \
		>"$d/h/vmtrace.meta"
}
mk_fixture() {	# DIR NREQ: 4 records of Python calls per request
	mk_fixture_of mkfixture.py "$1" $((4 * $2)) "$2"
}
