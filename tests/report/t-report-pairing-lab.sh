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
# By default QEMU serves the disk with aio=io_uring from an iothread ("IO
# io0"), the disk a block device (the CI's run: the io_uring submissions,
# their bios and the iothread's injections, where aio=threads' pairing is
# proven by t-report-pairing's fixture and the faults test's runs);
# VT_PAIRING_AIO=threads|native|io_uring another back-end (without an
# iothread unless VT_PAIRING_IOTHREAD=1), VT_PAIRING_IOTHREAD=0|1,
# VT_PAIRING_SMP (default 2) the vCPUs (docs/report.md has their figures).
# VT_PAIRING_DISK=loop puts the guest's disk on a block device (a loop
# device on a tmpfs file, made here), =file on an image file in the output
# directory, =extfile on an image file in an ext4 file system made here on
# such a loop device (written through, its extents allocated: the host's
# bios are the file system's, mapped back to the file's offsets by the
# recording's extents.tsv); the default is loop for aio=native and aio=io_uring, which
# QEMU runs only there (on the lab's 9p share it serves them from its
# thread pool), file for threads.
# Whatever the back-end, the QEMU operations the requests were paired with
# must be of that back-end (aio=native: io_submit, io_uring: io_uring
# READV/WRITEV/...), their offsets the host block layer's.  In the lab the test runs in
# two parts (tests/run): the guest run there, the export, report and
# score on this machine, from the recording the lab part left in
# $VT_HANDOFF.
# host-part: yes
# san: skip: the lab's guest image carries vmtrace, which an ASan build cannot run there; the pairing runs under ASan in report/t-report-pairing
set -eu
. "$VT_SRC/tests/lib/kvm.sh"
AIO=${VT_PAIRING_AIO:-io_uring} SMP=${VT_PAIRING_SMP:-2}
IOTHREAD=${VT_PAIRING_IOTHREAD:-0}
[ -n "${VT_PAIRING_AIO:-}${VT_PAIRING_IOTHREAD:-}" ] || IOTHREAD=1
case ${VT_PAIRING_DISK:-} in
loop | file | extfile) DISK=$VT_PAIRING_DISK ;;
"") DISK=file; [ "$AIO" = threads ] || DISK=loop ;;
*) echo "FAIL: VT_PAIRING_DISK=$VT_PAIRING_DISK: loop, file or extfile"; exit 1 ;;
esac
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
	disk=()
	if [ "$DISK" = loop ]; then
		trap loop_disk_free EXIT
		loop_disk /tmp/vt-pairing-disk.img 256 || fail "no loop device for the guest's disk"
		disk=(VT_DISK="$LOOP_DEV")
		echo "disk: $LOOP_DEV, a loop device on a 256 MiB tmpfs file"
	elif [ "$DISK" = extfile ]; then
		mnt=/tmp/vt-pairing-mnt
		ext_free() { umount "$mnt" 2>/dev/null || true; loop_disk_free; }
		trap ext_free EXIT
		loop_disk /tmp/vt-pairing-fs.img 320 || fail "no loop device for the file system"
		mke2fs -q -t ext4 -b 4096 -F "$LOOP_DEV" || fail "mke2fs $LOOP_DEV failed"
		mkdir -p "$mnt" && mount -t ext4 "$LOOP_DEV" "$mnt" ||
			fail "cannot mount ext4 on $LOOP_DEV (the lab loads ext4: tools/kvm-lab MODULES)"
		# written through: its extents allocated and written (not
		# unwritten); the guest's file system made on it without
		# mke2fs's discard, which punches a file's blocks out
		dd if=/dev/zero of="$mnt/disk.img" bs=1M count=256 conv=fsync status=none ||
			fail "cannot write $mnt/disk.img"
		disk=(VT_DISK="$mnt/disk.img" VT_MKE2FS_OPTS="-E nodiscard")
		echo "disk: $mnt/disk.img, an image file on ext4 on $LOOP_DEV (a 320 MiB tmpfs file)"
	fi
	env "${disk[@]}" VT_IOTHREAD=$IOTHREAD VT_WORKLOAD=pairing VT_SMP=$SMP VT_DRIVE_OPTS="aio=$AIO,throttling.iops-total=400" VT_NO_MERGE=1 \
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
score=$(/usr/bin/python3 "$VT_SRC/tests/report/pairing_score.py" out.db "$out/guest/pairing.json" \
	$([ "$DISK" != extfile ] || echo "$out/host/extents.tsv"))
echo "pairing (aio=$AIO$([ "$IOTHREAD" = 0 ] || echo " iothread"), $SMP vCPUs, disk $DISK, 4 threads, throttled): $score"
echo "times: guest run $t_run, export $t_exp s, report $t_rep s, score $((SECONDS - t1)) s"
acc=${score##*accuracy=}
[ "$DISK" != extfile ] || { grep "QEMU's bios on image files" rep.txt ||
	fail "no QEMU bio mapped through the image file's extents (extents.tsv)"; }
awk -v a="$acc" 'BEGIN { exit !(a >= 99.5) }' || fail "pairing accuracy $acc% < 99.5%"
case $score in *" guessed=0 "*) ;; *) fail "workload requests paired by a guess";; esac
# the back-end QEMU really used: the operations the requests were paired
# with are its own (not a fallback to the thread pool's syscalls)
case $AIO in native) own=io_submit ;; io_uring) own=io_uring_ ;; *) own="" ;; esac
served=${score##*served_by=}
other=$(echo "${served%% *}" | tr ',' '\n' | grep -v "^$own" || true)
[ -z "$own" ] || [ -z "$other" ] ||
	fail "aio=$AIO: requests served by $(echo $other), not by its own operations"
unf=${score##*unrecorded=}
made=${score##*workload_requests=}
[ $((${unf%% *} * 50)) -le "${made%% *}" ] || fail "too many requests lost to the recorder's polling"
echo "ok: pairing accuracy $acc%"
[ -n "$part" ] || [ "$out" = "$VT_TMP/pairing-out" ] || rm -rf "$out"	# not in the test's own tmp
