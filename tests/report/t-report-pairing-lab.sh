#!/bin/bash
# timeout: 900
# needs: kvm
# Pairing accuracy on a real KVM (the KVM lab where there is none), against
# truth the report does not use: the python-virtio guest runs pairing.py
# (VT_WORKLOAD=pairing: 4 threads of O_DIRECT reads and writes of 4-16 KiB
# at random offsets of a preallocated file, so requests are in flight at
# once on 2 vCPUs) and logs each I/O with the file's extents (FIEMAP): the
# disk byte of every I/O.  QEMU (aio=threads, raw image, cache=none,
# throttled to 400 IOPS so requests queue in QEMU) serves it; the host
# recording, the guest kernel recording and `vmtrace export --sqlite` give
# each request's QEMU syscalls, whose offsets (the host's own events) must
# cover the request's disk range in its direction: pairing_score.py.  At
# least 99.5% of the workload's requests must be paired right, none by a
# guess; the figures are printed (docs/report.md keeps them).  Requests
# served by a QEMU worker spawned mid-run before the recorder's next poll
# followed it are not in the recording (docs/report.md): the scorer counts
# them apart (unrecorded), at most 2% of them.
# VT_PAIRING_AIO (default threads), VT_PAIRING_SMP (default 2) and
# VT_PAIRING_IOTHREAD=1 run another QEMU back-end, vCPU count or an
# iothread (docs/report.md has their figures).  In the lab the test runs in
# two parts (tests/run): the guest run there, the export, report and
# score on this machine, from the recording the lab part left in
# $VT_HANDOFF.
# host-part: yes
# san: skip: the lab's guest image carries vmtrace, which an ASan build cannot run there; the pairing runs under ASan in report/t-report-pairing
set -eu
. "$VT_SRC/tests/lib/kvm.sh"
AIO=${VT_PAIRING_AIO:-threads} SMP=${VT_PAIRING_SMP:-2}
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
for c in record marker align merge export; do
	"$VT_BIN" $c --help >/dev/null 2>&1 || [ $? -ne 5 ] || skip "'vmtrace $c' is not built yet"
done
part=${VT_PART:-}	# lab: the guest run only; host: the scoring only
if [ "$part" != host ]; then
	kvm_or_lab "$@"
	rc=0
	kvm_check || rc=$?
	[ $rc = 0 ] || fail "no KVM here and no lab: $KVM_WHY"
fi
# the example's disk image needs O_DIRECT (cache=none): tmpfs (the lab's
# /tmp) has none, the lab's shared output directory (9p) has
out=$(lab_out_dir pairing-out) || skip "no directory with O_DIRECT for the guest's disk image (cache=none)"
t0=$SECONDS
if [ "$part" != host ]; then
	VT_IOTHREAD=${VT_PAIRING_IOTHREAD:-0} VT_WORKLOAD=pairing VT_SMP=$SMP VT_DRIVE_OPTS="aio=$AIO,throttling.iops-total=400" VT_NO_MERGE=1 \
		make -s --no-print-directory -C "$VT_SRC/examples/python-virtio" O="$VT_BUILD" \
		OUTDIR="$out" ACCEL=kvm run | tee run.log
	[ -s "$out/guest/pairing.json" ] || fail "the guest workload left no log"
	rm -f "$out/disk.img"	# (the guest's data disk: not read by the scoring)
	[ "$part" = lab ] && { echo "ok: the guest run recorded in $out in $((SECONDS - t0)) s; its scoring runs outside the lab"; exit 0; }
fi
[ -s "$out/guest/pairing.json" ] || fail "the lab part left no recording in $out"
inputs=("$out/host")
for d in "$out"/guest/*/; do [ -f "$d/vmtrace.meta" ] && inputs+=("${d%/}"); done
# the VM's sync markers, as the example's own merge takes them
[ ! -f "$out/guest/markers/markers.dat" ] || [ -f "$out/guest/markers/vmtrace.meta" ] ||
	inputs+=("$out/guest/markers")
t_run="$((SECONDS - t0)) s" t1=$SECONDS
[ "$part" = host ] && t_run="in the lab part"
"$VT_BIN" export --sqlite out.db "${inputs[@]}" -q
t_exp=$((SECONDS - t1)) t1=$SECONDS
"$VT_BIN" report "${inputs[@]}" -q >rep.txt
t_rep=$((SECONDS - t1)) t1=$SECONDS
sed -n '/^How the links/,/^$/p' rep.txt
score=$(/usr/bin/python3 "$VT_SRC/tests/report/pairing_score.py" out.db "$out/guest/pairing.json")
echo "pairing (aio=$AIO${VT_PAIRING_IOTHREAD:+ iothread}, $SMP vCPUs, 4 threads, throttled): $score"
echo "times: guest run $t_run, export $t_exp s, report $t_rep s, score $((SECONDS - t1)) s"
acc=${score##*accuracy=}
awk -v a="$acc" 'BEGIN { exit !(a >= 99.5) }' || fail "pairing accuracy $acc% < 99.5%"
case $score in *" guessed=0 "*) ;; *) fail "workload requests paired by a guess";; esac
unf=${score##*unrecorded=}
made=${score##*workload_requests=}
[ $((${unf%% *} * 50)) -le "${made%% *}" ] || fail "too many requests lost to the recorder's polling"
echo "ok: pairing accuracy $acc%"
[ -n "$part" ] || [ "$out" = "$VT_TMP/pairing-out" ] || rm -rf "$out"	# not in the test's own tmp
