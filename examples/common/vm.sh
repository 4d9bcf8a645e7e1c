#!/bin/bash
# examples/common/vm.sh: QEMU launching for the examples (sourced).
#
#   vt_kvm_usable            0 if KVM can create a VM and a vCPU here:
#                            $VT_KVM_PROBE (a command; default
#                            $VT_BUILD/bin/vt-kvm-probe; tests set it, e.g.
#                            to true); VT_KVM_WHY: its one-line reason
#   vt_vm_start LOG PIDFILE -- CMD...
#                            start CMD (QEMU, possibly under the recorder) in
#                            the background; its stdout+stderr go to LOG
#   vt_vm_wait_line FILE PATTERN SECONDS PID
#                            0 once FILE has a line matching PATTERN, 1 when
#                            SECONDS pass or PID exits first
#   vt_vm_wait_exit PID SECONDS
#                            wait for PID to end; 1 on timeout
#   vt_now VAR               VAR=the time in epoch seconds (no fork)
#   vt_name_self             this shell's comm becomes vt-example-run
#
# Everything here that runs while the host is recorded forks nothing but
# waits.py (comm vt-example-wait): bash builtins instead of date, sed,
# head, cat, dirname, timeout and tail.  The recording holds every
# process's scheduling, and the example's own processes are then only the
# shell (vt-example-run) and its waits (examples/python-virtio/README.md).
#   vt_vm_kill PIDFILE       end QEMU (by the pid it wrote), so a recorder
#                            around it stops and saves what it has
#   vt_example_prepare NAME VT QEMU OUT
#                            check the vmtrace binary VT and the QEMU binary,
#                            make OUT afresh (empty); says why (prefixed NAME) and
#                            exits 1 when something is missing
#   vt_vm_launch RECORD VT HOSTDIR LOG PIDFILE -- CMD...
#                            vt_vm_start CMD, inside `VT record -o HOSTDIR`
#                            when RECORD is 1
#   vt_vm_await_boot FILE PATTERN SECONDS PIDFILE
#                            0 once the guest's handshake PATTERN is in FILE;
#                            else end QEMU (and the recorder), wait for them
#                            and return 2 (VT_VM_EXITED: why, when QEMU
#                            ended on its own first)
#   vt_accel_select NAME KVM_NOTE BOOT_FN
#                            the policy below for VT_ACCEL (auto|kvm|lab|tcg):
#                            BOOT_FN kvm VT_BOOT_TIMEOUT when KVM is usable;
#                            sets ACCEL_USED (kvm, or "" when the caller is
#                            to boot TCG) and ACCEL_NOTE (why not KVM: the
#                            probe's reason; KVM_NOTE when KVM did not boot,
#                            or VT_VM_EXITED); exits 1 when
#                            VT_ACCEL=kvm cannot be had or VT_ACCEL is bad
#   vt_accel_save OUT        OUT/run.txt: accel=ACCEL_USED, accel_note=,
#                            and accel_host=lab inside the KVM lab
#   vt_accel_lab NAME OUT SCRIPT
#                            the lab step of the policy: when there is no
#                            full KVM here and VT_ACCEL is auto or lab, run
#                            SCRIPT (the example's run.sh) again inside the
#                            KVM lab with VT_ACCEL=kvm and exit with its
#                            status; returns (TCG next) when the lab cannot
#                            run, with LAB_NOTE saying why.  With
#                            VT_LAB_SPLIT=1 the script's lab run stops
#                            after its guest part (VT_LAB_INNER=1 there)
#                            and this returns with LAB_DONE=1: the caller
#                            does its host-side post-processing outside
#
# The accelerator policy of every example, most real first: a full KVM here
# (vt-kvm-probe: a PVM /dev/kvm is not one) when the guest answers its boot
# handshake within a bound; else the KVM lab (tools/kvm-lab: a Linux host
# with kvm-amd nested under TCG, timings inflated); else TCG.  ACCEL=kvm,
# lab or tcg forces one.  The summary says which ran and why the better
# ones did not.

vt_kvm_usable() {
	local probe=${VT_KVM_PROBE:-${VT_BUILD:-}/bin/vt-kvm-probe}
	if [ -z "${VT_KVM_PROBE:-}" ] && [ ! -x "$probe" ]; then
		VT_KVM_WHY="no usable /dev/kvm on this machine"
		[ -c /dev/kvm ] && [ -r /dev/kvm ] && [ -w /dev/kvm ] &&
			{ exec 9<>/dev/kvm; } 2>/dev/null && exec 9>&-
		return
	fi
	local rc=0
	VT_KVM_WHY=$($probe 2>&1) || rc=$?
	VT_KVM_WHY=${VT_KVM_WHY##*$'\n'}
	return $rc
}

VT_COMMON_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

vt_now() {
	printf -v "$1" '%(%s)T' -1
}

# /proc/PID/comm of the shell itself (inherited by its subshells; the
# example's own processes are marked vt-example-* in the host recording)
vt_name_self() {
	{ printf vt-example-run >"/proc/$$/comm"; } 2>/dev/null || true
}

vt_vm_start() {
	local log=$1 pidfile=$2
	shift 3
	rm -f "$pidfile"
	"$@" >"$log" 2>&1 </dev/null &
	VT_VM_PID=$!
	VT_VM_LOG=$log
}

# The waits run while the host is recorded, whose trace holds every
# process's scheduling: each is one process for its whole wait (a shell
# loop of date/grep/sleep put ~10 short-lived processes a second of the
# example's own into the recording).
vt_vm_wait_line() {
	/usr/bin/python3 "$VT_COMMON_DIR/waits.py" line "$@"
}

vt_vm_wait_exit() {
	local pid=$1 secs=$2
	if kill -0 "$pid" 2>/dev/null; then
		/usr/bin/python3 "$VT_COMMON_DIR/waits.py" exit "$pid" "$secs" || return 1
	fi
	wait "$pid" 2>/dev/null
	return 0
}

vt_vm_kill() {
	local pidfile=$1 qpid=
	{ read -r qpid <"$pidfile"; } 2>/dev/null
	[ -n "$qpid" ] && kill "$qpid" 2>/dev/null
	return 0
}

# the last non-empty line of FILE into VAR (no fork)
vt_last_line() {
	local _vt_l _vt_last=	# names no caller's VAR is
	while IFS= read -r _vt_l || [ -n "$_vt_l" ]; do
		[ -n "$_vt_l" ] && _vt_last=$_vt_l
	done <"$2"
	printf -v "$1" '%s' "$_vt_last"
}

# a sanitizer build of the recorder: libtracefs keeps one string for the
# life of the process, which LeakSanitizer reports (other checks stay on)
VT_RECORD_ASAN="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"

vt_example_prepare() {
	local name=$1 vt=$2 qemu=$3 out=$4
	[ -x "$vt" ] || { echo "$name: $vt missing: run 'make' first" >&2; exit 1; }
	command -v "$qemu" >/dev/null ||
		{ echo "$name: $qemu missing (Debian package qemu-system-x86)" >&2; exit 1; }
	# emptied, not removed: inside the KVM lab OUT is a mount point
	mkdir -p "$out" && find "$out" -mindepth 1 -delete ||
		{ echo "$name: cannot create or empty $out" >&2; exit 1; }
}

vt_vm_launch() {
	local record=$1 vt=$2 hostdir=$3 log=$4 pidfile=$5
	shift 6
	if [ "$record" = 1 ]; then
		vt_vm_start "$log" "$pidfile" -- env ASAN_OPTIONS="$VT_RECORD_ASAN" \
			"$vt" record -o "$hostdir" -- "$@"
	else
		vt_vm_start "$log" "$pidfile" -- "$@"
	fi
}

vt_vm_await_boot() {
	local file=$1 pat=$2 secs=$3 pidfile=$4
	VT_VM_EXITED=""
	vt_vm_wait_line "$file" "$pat" "$secs" "$VT_VM_PID" && return 0
	if ! kill -0 "$VT_VM_PID" 2>/dev/null; then
		local qemu_said
		vt_last_line qemu_said "$VT_VM_LOG"
		VT_VM_EXITED="QEMU exited before the guest's boot handshake: $qemu_said"
	fi
	vt_vm_kill "$pidfile"
	# gone before the caller reuses its files (a recorder still writing
	# into HOSTDIR would clash with the next boot's)
	vt_vm_wait_exit "$VT_VM_PID" 10 && return 2
	kill "$VT_VM_PID" 2>/dev/null
	vt_vm_wait_exit "$VT_VM_PID" 10 || kill -KILL "$VT_VM_PID" 2>/dev/null
	wait "$VT_VM_PID" 2>/dev/null
	return 2
}

vt_accel_select() {
	local name=$1 kvm_note=$2 boot_fn=$3
	ACCEL_USED=""
	ACCEL_NOTE=""
	case $VT_ACCEL in
	auto | kvm | lab)
		if [ "$VT_ACCEL" = lab ] && [ -z "${VT_IN_LAB:-}" ]; then
			ACCEL_NOTE=${LAB_NOTE:-the KVM lab did not run}
			echo "$name: ACCEL=lab: $ACCEL_NOTE" >&2
			exit 1
		fi
		if vt_kvm_usable; then
			echo "$name: booting under KVM (handshake bound ${VT_BOOT_TIMEOUT} s)"
			"$boot_fn" kvm "$VT_BOOT_TIMEOUT"
			if [ -z "$ACCEL_USED" ]; then
				ACCEL_NOTE=${VT_VM_EXITED:-$kvm_note}
				[ "$VT_ACCEL" = kvm ] && { echo "$name: $ACCEL_NOTE" >&2; exit 1; }
			fi
		else
			ACCEL_NOTE=${VT_KVM_WHY:-no usable /dev/kvm on this machine}
			[ -n "${LAB_NOTE:-}" ] && ACCEL_NOTE="$ACCEL_NOTE; $LAB_NOTE"
			[ "$VT_ACCEL" = kvm ] && { echo "$name: ACCEL=kvm: $ACCEL_NOTE" >&2; exit 1; }
		fi
		;;
	tcg) ACCEL_NOTE="TCG requested (ACCEL=tcg)" ;;
	*)
		echo "$name: ACCEL must be auto, kvm, lab or tcg (not '$VT_ACCEL')" >&2
		exit 1
		;;
	esac
	return 0
}

vt_accel_save() {
	echo "accel=$ACCEL_USED" >"$1/run.txt"
	[ -z "$ACCEL_NOTE" ] || echo "accel_note=$ACCEL_NOTE" >>"$1/run.txt"
	if [ -n "${VT_IN_LAB:-}" ]; then
		echo "accel_host=lab" >>"$1/run.txt"
		echo "accel_host_note=KVM nested under TCG in the KVM lab (${VT_LAB_WHY:-asked for}): real kvm:* events and TSC offsets, timings inflated (a PIO exit ~50-90 us, not ~1-2 us)" >>"$1/run.txt"
	fi
}

vt_accel_lab() {
	local name=$1 out=$2 script=$3 lab=${VT_BUILD:?}/bin/vmtrace-lab rc=0
	LAB_NOTE=""
	[ -z "${VT_IN_LAB:-}" ] || return 0
	case $VT_ACCEL in auto | lab) ;; *) return 0 ;; esac
	if [ "$VT_ACCEL" = auto ] && vt_kvm_usable; then
		return 0
	fi
	local why=${VT_KVM_WHY:-no full KVM here}
	[ "$VT_ACCEL" = lab ] && why="ACCEL=lab"
	if [ ! -x "$lab" ]; then
		LAB_NOTE="the KVM lab is not built ($lab)"
		return 0
	fi
	echo "$name: $why -> running in the KVM lab (kvm-amd nested under TCG: real KVM events, inflated timings)"
	mkdir -p "$out" || { echo "$name: cannot create $out" >&2; exit 1; }
	VT_ACCEL=kvm VT_LAB_WHY=$why VT_LAB_INNER=${VT_LAB_SPLIT:-} "$lab" -q -o "$out" \
		--keep-console "$out.lab-console.log" -- "$script" || rc=$?
	if [ $rc = 0 ] && [ -n "${VT_LAB_SPLIT:-}" ]; then
		LAB_DONE=1
		return 0
	fi
	[ $rc = 125 ] || exit $rc
	LAB_NOTE="the KVM lab could not run (console: $out.lab-console.log)"
	echo "$name: $LAB_NOTE" >&2
	[ "$VT_ACCEL" = lab ] && exit 1
	return 0
}
