# common.sh - shared setup of the tests/report scripts (sourced, not run):
# mk_fixture DIR NREQ builds DIR/h (host trace.dat + vmtrace.meta) and DIR/g
# (guest Python uftrace data from gen-trace + guest kernel trace.dat) with
# the known per-stage latencies of mkfixture.py (DIR/expected.json).
GEN="$VT_BUILD/tests/merge/gen-trace"
GTD="$VT_BUILD/tests/merge/gen-tracedat"
PY=/usr/bin/python3
[ -x "$GEN" ] && [ -x "$GTD" ] || { echo "gen-trace/gen-tracedat not built"; exit 1; }
for ev in kvm/kvm_exit block/block_rq_issue irq/irq_handler_entry syscalls/sys_enter_write; do
	[ -r /sys/kernel/tracing/events/$ev/format ] ||
		{ echo "no tracefs event format $ev (mount tracefs at /sys/kernel/tracing)"; exit 77; }
done
mk_fixture() {	# DIR NREQ
	local d=$1 n=$2
	mkdir -p "$d/h"
	"$PY" "$VT_SRC/tests/report/mkfixture.py" "$d" "$n"
	# Python calls: app.main > app.save, 4 records per request, 1 ms each
	"$GEN" "$d/g" -n $((4 * n)) -D 2 -z 2000000000 -s 1000000000 -d 2000000 -g -p 200 \
		-f "app.main (app.py:1),app.save (app.py:10)"
	"$GTD" "$d/h/trace.dat" <"$d/host.txt"
	"$GTD" "$d/g/trace.dat" <"$d/guest.txt"
	printf '# vmtrace-meta 1\nclock=tsc\ntsc.hz=2000000000\ndomain=host\nkvm.vms=1\nkvm.vm0.pid=4242\nkvm.vm0.vcpus=1\nkvm.vcpu_threads=1\nkvm.thread0.tid=4243\nkvm.thread0.pid=4242\nkvm.thread0.vcpu=0\n' \
		>"$d/h/vmtrace.meta"
}
