#!/bin/bash
# examples/unikernel/run.sh: the host side of the unikernel example (run by
# `make run` with the images built).  Boots the guest under KVM if it
# answers its handshake, else TCG; records the host around QEMU; decodes
# the guest's debugcon stream; aligns, merges and summarises.
#
# Environment (set by the Makefile): VT_BUILD, VT_CACHE (images), VT_OUT
# (output dir, replaced), VT_ACCEL (auto|kvm|lab|tcg), VT_BOOT_TIMEOUT (s, KVM
# handshake bound), VT_RUN_TIMEOUT (s), VT_QEMU (the QEMU binary),
# VT_QEMU_WRAP (a command QEMU runs under, e.g. a user-space tracer:
# examples/multi).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../common/vm.sh"
. "$HERE/../common/post.sh"

: "${VT_BUILD:?}" "${VT_CACHE:?}" "${VT_OUT:?}"
: "${VT_ACCEL:=auto}" "${VT_BOOT_TIMEOUT:=20}" "${VT_RUN_TIMEOUT:=120}" "${VT_QEMU_WRAP:=}"
VT="$VT_BUILD/bin/vmtrace"
: "${VT_QEMU:=qemu-system-x86_64}"
OUT=$VT_OUT
HANDSHAKE="vmtrace unikernel: start"
DONE_LINE="vmtrace unikernel: done"
# isa-debug-exit status of a guest that finished its work
GUEST_EXIT_OK=33
MARKER_PORT=0x5f0
# TCG: the guest starts in well under a second; beyond this it is stuck
TCG_BOOT_TIMEOUT=60

fail() { echo "unikernel: $*" >&2; exit 1; }

# no full KVM here: the whole run again inside the KVM lab (exits there)
vt_accel_lab unikernel "$OUT" "$HERE/run.sh"
vt_example_prepare unikernel "$VT" "$VT_QEMU" "$OUT"
record=0
vt_cmd_built "$VT" record && record=1

# boot ACCEL BOUND: 0 done, 2 no handshake within BOUND s
boot() {
	local accel=$1 bound=$2 img qemu rc
	rm -rf "$OUT/host" "$OUT/debugcon.bin" "$OUT/markers.bin"
	img=$VT_CACHE/unikernel-pio.elf
	[ "$accel" = tcg ] && img=$VT_CACHE/unikernel-chardev.elf
	qemu=("$VT_QEMU" -name vmtrace-unikernel,debug-threads=on -accel "$accel" -m 64
		-nodefaults -display none -no-reboot -pidfile "$OUT/qemu.pid"
		-kernel "$img"
		-chardev "file,id=vtdc,path=$OUT/debugcon.bin"
		-device isa-debugcon,iobase=0xe9,chardev=vtdc
		-device isa-debug-exit,iobase=0xf4,iosize=4)
	# TCG: the markers are bytes to a debugcon at the marker port, which
	# QEMU's vCPU thread writes to this file (the host records the write)
	[ "$accel" = tcg ] && qemu+=(-chardev "file,id=vtmk,path=$OUT/markers.bin"
		-device "isa-debugcon,iobase=$MARKER_PORT,chardev=vtmk")
	vt_vm_launch $record "$VT" "$OUT/host" "$OUT/qemu.log" "$OUT/qemu.pid" -- \
		$VT_QEMU_WRAP "${qemu[@]}"
	vt_vm_await_boot "$OUT/debugcon.bin" "$HANDSHAKE" "$bound" "$OUT/qemu.pid" || return 2
	if ! vt_vm_wait_exit "$VT_VM_PID" "$VT_RUN_TIMEOUT"; then
		vt_vm_kill "$OUT/qemu.pid"
		vt_vm_wait_exit "$VT_VM_PID" 10
		fail "the guest did not finish within $VT_RUN_TIMEOUT s (debugcon: $OUT/debugcon.bin)"
	fi
	wait "$VT_VM_PID" 2>/dev/null
	rc=$?
	grep -qa "$DONE_LINE" "$OUT/debugcon.bin" ||
		fail "the guest did not finish its work (debugcon: $OUT/debugcon.bin)"
	# a wrapper (uftrace) may not pass QEMU's exit status on
	[ -n "$VT_QEMU_WRAP" ] || [ $rc = $GUEST_EXIT_OK ] ||
		{ tail -5 "$OUT/qemu.log" >&2; fail "QEMU exited with $rc, not $GUEST_EXIT_OK (the guest's success) (log: $OUT/qemu.log)"; }
	ACCEL_USED=$accel
	return 0
}

[ $record = 1 ] || echo "unikernel: 'vmtrace record' is not built yet: the host side is not recorded"
vt_accel_select unikernel "KVM did not run the guest: no handshake on debugcon within ${VT_BOOT_TIMEOUT} s" boot
if [ -z "$ACCEL_USED" ]; then
	echo "unikernel: $ACCEL_NOTE -> using TCG (markers: bytes to an isa-debugcon at $MARKER_PORT)"
	boot tcg "$TCG_BOOT_TIMEOUT" || fail "the guest did not start under TCG (debugcon: $OUT/debugcon.bin)"
fi
vt_accel_save "$OUT"
echo "unikernel: guest ran under $ACCEL_USED"

img=$VT_CACHE/unikernel-pio64.elf
[ "$ACCEL_USED" = tcg ] && img=$VT_CACHE/unikernel-chardev64.elf
mkdir -p "$OUT/guest"
"$VT" debugcon -o "$OUT/guest/trace" --elf "$img" "$OUT/debugcon.bin" ||
	fail "vmtrace debugcon could not decode $OUT/debugcon.bin"
vt_post_align_merge "$VT" "$OUT" || exit 1
vt_post_summary "$OUT"
