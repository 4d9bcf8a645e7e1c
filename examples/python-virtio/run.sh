#!/bin/bash
# examples/python-virtio/run.sh: the host side of the python-virtio example
# (run by `make run` / `make runkvm` with the image already built).
#
# Boots the cached guest (KVM if it boots, else TCG), recording the host
# around QEMU, collects the guest's traces from the virtio-serial stream
# (`vmtrace stream` in the guest sends them while it traces; QEMU writes
# the port to OUT/guest.stream; `vmtrace unpack` rebuilds OUT/guest),
# aligns and merges host + guest, and prints a summary.
#
# Environment (set by the Makefile): VT_BUILD (build dir with bin/vmtrace),
# VT_CACHE (image dir), VT_OUT (output dir, replaced), VT_ACCEL
# (auto|kvm|lab|tcg), VT_ROUNDS, VT_MB, VT_GUEST_ONLY=1 (no host recording,
# align or merge: the boot test), VT_BOOT_TIMEOUT (s, KVM handshake bound;
# VT_LAB_BOOT_TIMEOUT in the KVM lab, default 600),
# VT_RUN_TIMEOUT (s, whole guest run), VT_QEMU (the QEMU binary);
# VT_WORKLOAD=pairing (the guest runs pairing.py), VT_DRIVE_OPTS (more
# -drive options, e.g. aio=native,throttling.iops-total=200), VT_SMP (vCPUs),
# VT_NO_MERGE=1 (host and guest recorded, no align/merge/summary);
# VT_DISK (the guest's disk: an existing file or block device, e.g. a
# device-mapper delay target, formatted here instead of a new
# OUT/disk.img); VT_MKE2FS_OPTS (more mke2fs options, e.g. -E
# lazy_itable_init=0,lazy_journal_init=0: no inode table zeroing by the
# guest's kernel while the workload runs); VT_GUEST_HOG=BUSY_MS:IDLE_MS
# (a SCHED_FIFO busy loop in the guest beside the workload, busy BUSY_MS
# of every BUSY_MS + IDLE_MS: init); VT_IOTHREAD=1 (the disk served by an
# iothread).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../common/vm.sh"
. "$HERE/../common/post.sh"
# the host recording shows this script as vt-example-run, its waits as
# vt-example-wait, and no other process of its own (README.md)
vt_name_self

: "${VT_BUILD:?}" "${VT_CACHE:?}" "${VT_OUT:?}"
: "${VT_ACCEL:=auto}" "${VT_ROUNDS:=8}" "${VT_MB:=4}" "${VT_GUEST_ONLY:=0}"
: "${VT_BOOT_TIMEOUT:=30}" "${VT_RUN_TIMEOUT:=600}"
# the KVM lab is an emulated host: a boot there takes several times longer,
# and longer again on a loaded machine (no PVM hang to catch there: wait)
[ -n "${VT_IN_LAB:-}" ] && VT_BOOT_TIMEOUT=${VT_LAB_BOOT_TIMEOUT:-600} &&
	VT_RUN_TIMEOUT=$((VT_RUN_TIMEOUT * 3))
VT="$VT_BUILD/bin/vmtrace"
: "${VT_QEMU:=qemu-system-x86_64}"
OUT=$VT_OUT
HANDSHAKE="vmtrace-guest: boot ok"
WORKLOAD_DONE="vmtrace-guest: workload exit"
# TCG: a Linux boot takes seconds, not minutes; beyond this it is stuck
TCG_BOOT_TIMEOUT=120
DISK_MB=256

fail() { echo "python-virtio: $*" >&2; exit 1; }

# no full KVM here: the whole run again inside the KVM lab (exits there)
VT_LAB_SPLIT=1 vt_accel_lab python-virtio "$OUT" "$HERE/run.sh"
# The guest part: boot (with the host recording around QEMU), stream, unpack.
# Under the KVM lab it runs inside, and the host-side post-processing
# (align, merge, summary) runs here, outside the emulated host.
guest_part() {
	vt_example_prepare python-virtio "$VT" "$VT_QEMU" "$OUT"

	record=0
	[ "$VT_GUEST_ONLY" = 1 ] || ! vt_cmd_built "$VT" record || record=1

	# While the guest's workload runs (until its "workload exit" line or
	# VT_RUN_TIMEOUT), sample how much of the stream the host has every
	# STREAM_SAMPLE_S: OUT/stream-growth.txt, "<ms since the boot handshake>
	# <bytes>" lines: the traces arrive while the guest traces, not only at its
	# end.  $1: the run's deadline (epoch s).
	# One process for the whole watch (the host recording holds every
	# process's scheduling: a shell loop of date/grep/stat/sleep put ~10
	# short-lived processes a second of the example's own into it).
	STREAM_SAMPLE_S=0.5
	stream_watch() {
		/usr/bin/python3 "$VT_COMMON_DIR/waits.py" watch "$1" "$VT_VM_PID" "$OUT" \
			"$WORKLOAD_DONE" "$STREAM_SAMPLE_S"
	}

	# A guest that died or hung: unpack the part of the stream that arrived
	# (everything sent before the end is kept) and say where it is.
	salvage() {
		vt_post_unpack_stream "$VT" "$OUT/guest.stream" "$OUT/guest" 2>/dev/null ||
			[ ! -d "$OUT/guest" ] || echo "python-virtio: what the guest streamed before it stopped is in $OUT/guest" >&2
	}

	# the guest's uptime at init, from its handshake line, into BOOT_UPTIME
	# (read by bash: the host is being recorded)
	boot_uptime() {
		local l re="$HANDSHAKE ([0-9.]+)"
		BOOT_UPTIME=?
		while IFS= read -r l || [ -n "$l" ]; do
			[[ $l =~ $re ]] && { BOOT_UPTIME=${BASH_REMATCH[1]}; return; }
		done <"$OUT/console.log"
	}

	# boot ACCEL BOUND: one guest run; 0 done, 2 no handshake within BOUND s
	boot() {
		local accel=$1 bound=$2 method cpu qemu run_end drive now
		rm -rf "$OUT/host" "$OUT/guest.stream" "$OUT/stream-growth.txt" "$OUT/console.log" "$OUT/debugcon.bin"
		if [ -n "${VT_DISK:-}" ]; then
			mke2fs -q -t ext4 ${VT_MKE2FS_OPTS:-} -F "$VT_DISK" || fail "mke2fs $VT_DISK failed"
		else
			rm -f "$OUT/disk.img"
			truncate -s ${DISK_MB}M "$OUT/disk.img" &&
				mke2fs -q -t ext4 ${VT_MKE2FS_OPTS:-} -F "$OUT/disk.img" ||
				fail "mke2fs $OUT/disk.img failed"
		fi
		if [ "$accel" = kvm ]; then
			# in-band: the host's kvm_hypercall events carry the readings
			method=${VT_MARKER_METHOD:-hypercall}
			cpu=host
		else
			method=chardev
			cpu=qemu64
		fi
		# the disk; VT_IOTHREAD=1: served by an iothread ("IO io0")
		drive=(-drive "file=${VT_DISK:-$OUT/disk.img},format=raw,if=virtio,cache=none${VT_DRIVE_OPTS:+,$VT_DRIVE_OPTS}")
		[ "${VT_IOTHREAD:-0}" = 1 ] &&
			drive=(-object iothread,id=io0
				-drive "file=${VT_DISK:-$OUT/disk.img},format=raw,if=none,id=vd0,cache=none${VT_DRIVE_OPTS:+,$VT_DRIVE_OPTS}"
				-device virtio-blk-pci,drive=vd0,iothread=io0)
		qemu=("$VT_QEMU" -name vmtrace-python-virtio,debug-threads=on -accel "$accel" -cpu "$cpu"
			-smp "${VT_SMP:-1}" -m 1024 -nodefaults -nographic -no-reboot -monitor none
			-pidfile "$OUT/qemu.pid"
			-serial "file:$OUT/console.log"
			-kernel "$VT_CACHE/vmlinuz" -initrd "$VT_CACHE/initrd.img"
			-append "console=ttyS0 quiet panic=-1 VT_WORKLOAD_ROUNDS=$VT_ROUNDS VT_WORKLOAD_MB=$VT_MB VT_MARKER_METHOD=$method${VT_WORKLOAD:+ VT_WORKLOAD=$VT_WORKLOAD}${VT_GUEST_HOG:+ VT_GUEST_HOG=$VT_GUEST_HOG}"
			"${drive[@]}"
			-device virtio-serial-pci
			-chardev "file,id=vtout,path=$OUT/guest.stream"
			-device virtserialport,chardev=vtout,name=org.vmtrace.out
			-chardev "file,id=vtmk,path=$OUT/debugcon.bin"
			-device isa-debugcon,iobase=0xe9,chardev=vtmk)
		vt_vm_launch $record "$VT" "$OUT/host" "$OUT/qemu.log" "$OUT/qemu.pid" -- "${qemu[@]}"
		vt_vm_await_boot "$OUT/console.log" "$HANDSHAKE" "$bound" "$OUT/qemu.pid" || return 2
		boot_uptime
		echo "  guest booted ($BOOT_UPTIME s guest uptime at init)"
		vt_now now
		run_end=$((now + VT_RUN_TIMEOUT))
		stream_watch $run_end
		vt_now now
		if ! vt_vm_wait_exit "$VT_VM_PID" $((run_end > now ? run_end - now : 1)); then
			vt_vm_kill "$OUT/qemu.pid"
			vt_vm_wait_exit "$VT_VM_PID" 10
			tail -20 "$OUT/console.log" >&2
			salvage
			fail "the guest did not finish within $VT_RUN_TIMEOUT s (console: $OUT/console.log)"
		fi
		ACCEL_USED=$accel
		return 0
	}

	echo "python-virtio: guest image $VT_CACHE (kernel $(cat "$VT_CACHE/kernel.version"))"
	[ $record = 1 ] || [ "$VT_GUEST_ONLY" = 1 ] ||
		echo "python-virtio: 'vmtrace record' is not built yet: the host side is not recorded"
	vt_now start
	why="a PVM-based KVM, as some cloud VMs have, hangs Linux kernels right after decompression"
	[ -n "${VT_IN_LAB:-}" ] && why="the KVM lab's nested KVM is too slow on this machine now: see the load average; VT_LAB_BOOT_TIMEOUT raises the bound"
	vt_accel_select python-virtio "KVM could not boot the Linux guest: no boot handshake on the serial console within ${VT_BOOT_TIMEOUT} s ($why)" boot
	if [ -z "$ACCEL_USED" ]; then
		echo "python-virtio: $ACCEL_NOTE -> using TCG (software emulation; markers go through isa-debugcon)"
		boot tcg "$TCG_BOOT_TIMEOUT" ||
			{ tail -20 "$OUT/console.log" >&2; fail "the guest did not boot under TCG within $TCG_BOOT_TIMEOUT s (console: $OUT/console.log)"; }
	fi
	vt_now now
	echo "python-virtio: guest ran under $ACCEL_USED in $((now - start)) s"
	vt_accel_save "$OUT"
	# how often the host's copy grew before the guest's workload ended, and
	# how much of the stream was in by then
	[ -s "$OUT/stream-growth.txt" ] &&
		echo "stream=grew $(awk '$2 > last { n++ } { last = $2 } END { print n + 0 }' "$OUT/stream-growth.txt") times while the guest ran its workload; $(tail -1 "$OUT/stream-growth.txt" | cut -d' ' -f2) of $(stat -c %s "$OUT/guest.stream") bytes were in before it reported its end" >>"$OUT/run.txt"

	grep -a 'vmtrace-guest: error' "$OUT/console.log" >&2 && fail "the guest reported an error (console: $OUT/console.log)"
	grep -qa 'vmtrace-guest: traces sent' "$OUT/console.log" ||
		{ salvage; fail "the guest did not finish sending its traces (console: $OUT/console.log)"; }
	vt_post_unpack_stream "$VT" "$OUT/guest.stream" "$OUT/guest" || exit 1
	grep -q '^workload_exit=0$' "$OUT/guest/guest.txt" ||
		{ tail "$OUT/guest/workload.log" >&2; fail "the guest workload failed (log: $OUT/guest/workload.log)"; }
	sed 's/^/  guest: /' "$OUT/guest/guest.txt"
}

[ "${LAB_DONE:-0}" = 1 ] || guest_part
[ -n "${VT_LAB_INNER:-}" ] && exit 0
[ "$VT_GUEST_ONLY" = 1 ] && { echo "python-virtio: guest-only run done: $OUT"; exit 0; }
[ "${VT_NO_MERGE:-0}" = 1 ] && { echo "python-virtio: recorded, not merged (VT_NO_MERGE=1): $OUT"; exit 0; }
vt_post_align_merge "$VT" "$OUT" || exit 1
vt_post_summary "$OUT"
