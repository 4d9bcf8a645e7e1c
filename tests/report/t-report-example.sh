#!/bin/bash
# vmtrace report / export on the python-virtio example's outputs (the run
# `make runkvm` / tests/examples/t-python-virtio.sh leaves in
# $VT_BUILD/examples/python-virtio/out; when there is none, the example is
# run here into $VT_TMP, with the image build/ caches): guest
# block requests are found, the fsyncs of __main__.write_file carry their
# Python stack and syscall, the links the data lacks are reported missing
# (TCG: no kvm kicks/injections), the QEMU disk syscalls are linked, and
# the SQLite export agrees with the text on the request count.
# timeout: 600
set -eu
PY=/usr/bin/python3
src="$VT_BUILD/examples/python-virtio/out"
# a sanitizer build (build/san) reports the outputs of the normal build's run
[ -d "$src" ] || src="$VT_SRC/build/examples/python-virtio/out"
have_outputs() {
	[ -f "$1/host/trace.dat" ] && [ -d "$1/guest/python" ] && [ -f "$1/guest/kernel/trace.dat" ]
}
if ! have_outputs "$src"; then
	src="$VT_TMP/pv"
	make -s --no-print-directory -C "$VT_SRC/examples/python-virtio" O="$VT_BUILD" \
		OUTDIR="$src" ACCEL=tcg run >"$VT_TMP/example.log" 2>&1 ||
		{ tail -20 "$VT_TMP/example.log"; echo "FAIL: the python-virtio example did not run"; exit 1; }
	have_outputs "$src" || { echo "FAIL: the python-virtio example left no outputs in $src"; exit 1; }
fi
cd "$VT_TMP"
cp -r "$src/host" "$src/guest" .	# the example may be re-run meanwhile
accel=$(sed -n 's/^accel=//p' "$src/run.txt" 2>/dev/null || true)
# the VM's sync markers (guest/markers) give the clock model; every request
# is listed (-n) so the checks below do not hang on which ones were slowest
inputs="host guest/python guest/kernel"
[ -d guest/markers ] && inputs="$inputs guest/markers"
rc=0; "$VT_BIN" report $inputs -n 100000 -q >rep.txt 2>err.txt || rc=$?
cat err.txt; head -60 rep.txt
[ "$rc" = 0 ] || [ "$rc" = 3 ] || { echo "FAIL: report rc=$rc"; exit 1; }
n=$(sed -n 's/^I\/O requests: \([0-9]*\) guest block requests.*/\1/p' rep.txt)
[ "${n:-0}" -gt 0 ] || { echo "FAIL: no block requests found"; exit 1; }
grep -q 'python: .*__main__.write_file .*> posix.fsync' rep.txt || { echo "FAIL: no write_file fsync stack"; exit 1; }
grep -Eq '^  PSQI.*RCXE +[0-9]+ requests' rep.txt || { echo "FAIL: no full guest chain"; exit 1; }
awk '/ __main__\.write_file / && $1 ~ /^[0-9]+$/ { if ($4 + 0 > 0) ok = 1 } END { exit !ok }' rep.txt ||
	{ echo "FAIL: no waiting time in write_file"; exit 1; }
if [ "$accel" != kvm ]; then
	grep -q "missing kick *in $n of $n requests" rep.txt || { echo "FAIL: kicks not reported missing"; exit 1; }
	grep -q "^VM exits per vCPU:" rep.txt
else
	grep -Eq '^  [^ ]*K' rep.txt || { echo "FAIL: KVM run without kicks linked"; exit 1; }
fi
# with a clock model the QEMU disk syscalls line up with the guest's
# requests; without one (the run's markers did not match) they must not be
# linked by accident
if grep -q "no clock model" err.txt; then
	grep -q "missing host_io_begin  in $n of $n requests" rep.txt ||
		{ echo "FAIL: host I/O linked without a clock model"; exit 1; }
else
	grep -Eq '^  host_io +QEMU I/O syscall \(host disk\) +[1-9]' rep.txt ||
		{ echo "FAIL: no QEMU disk I/O linked"; exit 1; }
fi
rc=0; "$VT_BIN" export --sqlite ex.db $inputs -q || rc=$?
[ "$rc" = 0 ] || [ "$rc" = 3 ] || { echo "FAIL: export rc=$rc"; exit 1; }
[ "$(sqlite3 ex.db 'SELECT count(*) FROM requests')" = "$n" ]
sqlite3 ex.db "SELECT syscall, count(*), max(rq_complete - rq_issue) FROM requests WHERE python_stack LIKE '%write_file%' GROUP BY 1" | grep -q '^fsync|'
echo "ok: $n requests (accel ${accel:-?})"
# the headline opens the report: the slowest Python calls, then syscalls
head -1 rep.txt | grep -q '^Slowest Python/C calls' || { echo "FAIL: the report does not open with the calls"; exit 1; }
grep -Eq '^  posix\.fsync [0-9.]+ ms = [0-9]+% ' rep.txt || { echo "FAIL: no posix.fsync in the headline"; exit 1; }
if grep -Eq '^  (runpy|importlib|builtins\.exec)' rep.txt; then echo "FAIL: start-up frames in the headline"; exit 1; fi
# the fsyncs' vCPU-preempted time: vmtrace's figure against the one computed
# from the raw host sched events (vCPU threads by their comm; the host TSC
# frequency from the recording's meta)
trace-cmd report host/trace.dat >host.rep 2>/dev/null
hz=$(sed -n 's/^tsc.hz=//p' host/vmtrace.meta)
# the example's vCPU threads: the tids of the report's vCPU table (other
# QEMUs on this machine have "CPU N/..." threads in the recording too),
# each named CPU N/KVM|TCG in the raw events
vt=$(sed -n '/^vCPU states/,/^$/p' rep.txt | awk '$1 ~ /^[0-9]+$/ && $2 > 0 {print $2}' | paste -sd, -)
for t in ${vt//,/ }; do
	grep -qE "CPU [0-9]+/(KVM|TCG):$t " host.rep || { echo "FAIL: vCPU thread $t is not named CPU N/KVM|TCG in the raw events"; exit 1; }
done
[ -n "$hz" ] && [ -n "$vt" ] || { echo "FAIL: no tsc.hz ($hz) or vCPU threads ($vt) in the host recording"; exit 1; }
"$PY" "$VT_SRC/tests/report/preempt_check.py" rep.txt host.rep "$hz" "$vt" fsync 1000
