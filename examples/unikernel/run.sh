#!/bin/bash
# examples/unikernel/run.sh: the host side of the unikernel example (run by
# `make run` with the images built).  Boots the guest under KVM if it
# answers its handshake, else TCG; records the host around QEMU; decodes
# the guest's debugcon stream; aligns, merges and summarises.
#
# Environment (set by the Makefile): VT_BUILD, VT_CACHE (images), VT_OUT
# (output dir, replaced), VT_ACCEL (auto|kvm|tcg), VT_BOOT_TIMEOUT (s, KVM
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

# a sanitizer build of the recorder: libtracefs keeps one string for the
# life of the process, which LeakSanitizer reports (other checks stay on)
VT_RECORD_ASAN="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"

fail() { echo "unikernel: $*" >&2; exit 1; }

[ -x "$VT" ] || fail "$VT missing: run 'make' first"
command -v "$VT_QEMU" >/dev/null || fail "$VT_QEMU missing (Debian package qemu-system-x86)"
rm -rf "$OUT" && mkdir -p "$OUT" || fail "cannot create $OUT"
record=0
vt_cmd_built "$VT" record && record=1

# boot ACCEL BOUND: 0 done, 2 no handshake within BOUND s
boot() {
	local accel=$1 bound=$2 img qemu rc
	rm -rf "$OUT/host" "$OUT/debugcon.bin" "$OUT/markers.bin"
	img=$VT_CACHE/unikernel-pio.elf
	[ "$accel" = tcg ] && img=$VT_CACHE/unikernel-chardev.elf
	qemu=("$VT_QEMU" -name vmtrace-unikernel -accel "$accel" -m 64
		-nodefaults -display none -no-reboot -pidfile "$OUT/qemu.pid"
		-kernel "$img"
		-chardev "file,id=vtdc,path=$OUT/debugcon.bin"
		-device isa-debugcon,iobase=0xe9,chardev=vtdc
		-device isa-debug-exit,iobase=0xf4,iosize=4)
	# TCG: the markers are bytes to a debugcon at the marker port, which
	# QEMU's vCPU thread writes to this file (the host records the write)
	[ "$accel" = tcg ] && qemu+=(-chardev "file,id=vtmk,path=$OUT/markers.bin"
		-device "isa-debugcon,iobase=$MARKER_PORT,chardev=vtmk")
	if [ $record = 1 ]; then
		vt_vm_start "$OUT/qemu.log" "$OUT/qemu.pid" -- env ASAN_OPTIONS="$VT_RECORD_ASAN" "$VT" record -o "$OUT/host" -- $VT_QEMU_WRAP "${qemu[@]}"
	else
		vt_vm_start "$OUT/qemu.log" "$OUT/qemu.pid" -- $VT_QEMU_WRAP "${qemu[@]}"
	fi
	if ! vt_vm_wait_line "$OUT/debugcon.bin" "$HANDSHAKE" "$bound" "$VT_VM_PID"; then
		vt_vm_kill "$OUT/qemu.pid"
		vt_vm_wait_exit "$VT_VM_PID" 10 || kill "$VT_VM_PID" 2>/dev/null
		return 2
	fi
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
ACCEL_USED=""
ACCEL_NOTE=""
case $VT_ACCEL in
auto | kvm)
	if vt_kvm_usable; then
		echo "unikernel: booting under KVM (handshake bound ${VT_BOOT_TIMEOUT} s)"
		boot kvm "$VT_BOOT_TIMEOUT"
		if [ -z "$ACCEL_USED" ]; then
			ACCEL_NOTE="KVM did not run the guest: no handshake on debugcon within ${VT_BOOT_TIMEOUT} s"
			[ "$VT_ACCEL" = kvm ] && fail "$ACCEL_NOTE"
		fi
	else
		ACCEL_NOTE="no usable /dev/kvm on this machine"
		[ "$VT_ACCEL" = kvm ] && fail "ACCEL=kvm: $ACCEL_NOTE"
	fi
	;;
tcg) ACCEL_NOTE="TCG requested (ACCEL=tcg)" ;;
*) fail "ACCEL must be auto, kvm or tcg (not '$VT_ACCEL')" ;;
esac
if [ -z "$ACCEL_USED" ]; then
	echo "unikernel: $ACCEL_NOTE -> using TCG (markers: bytes to an isa-debugcon at $MARKER_PORT)"
	boot tcg 60 || fail "the guest did not start under TCG (debugcon: $OUT/debugcon.bin)"
fi
echo "accel=$ACCEL_USED" >"$OUT/run.txt"
[ -n "$ACCEL_NOTE" ] && echo "accel_note=$ACCEL_NOTE" >>"$OUT/run.txt"
echo "unikernel: guest ran under $ACCEL_USED"

img=$VT_CACHE/unikernel-pio64.elf
[ "$ACCEL_USED" = tcg ] && img=$VT_CACHE/unikernel-chardev64.elf
mkdir -p "$OUT/guest"
"$VT" debugcon -o "$OUT/guest/trace" --elf "$img" "$OUT/debugcon.bin" ||
	fail "vmtrace debugcon could not decode $OUT/debugcon.bin"
vt_post_align_merge "$VT" "$OUT" || exit 1
vt_post_summary "$OUT"
