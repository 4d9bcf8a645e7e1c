#!/bin/bash
# examples/common/vm.sh: QEMU launching for the examples (sourced).
#
#   vt_kvm_usable            0 if /dev/kvm exists and opens read-write
#   vt_vm_start LOG PIDFILE -- CMD...
#                            start CMD (QEMU, possibly under the recorder) in
#                            the background; its stdout+stderr go to LOG
#   vt_vm_wait_line FILE PATTERN SECONDS PID
#                            0 once FILE has a line matching PATTERN, 1 when
#                            SECONDS pass or PID exits first
#   vt_vm_wait_exit PID SECONDS
#                            wait for PID to end; 1 on timeout
#   vt_vm_kill PIDFILE       end QEMU (by the pid it wrote), so a recorder
#                            around it stops and saves what it has
#
# The accelerator policy of every example: KVM when /dev/kvm is usable and
# the guest answers its boot handshake within a bound, else TCG, said
# plainly (on PVM hosts KVM runs real-mode and freestanding guests but
# hangs a Linux kernel right after its decompressor).

vt_kvm_usable() {
	[ -c /dev/kvm ] && [ -r /dev/kvm ] && [ -w /dev/kvm ] &&
		{ exec 9<>/dev/kvm; } 2>/dev/null && exec 9>&-
}

vt_vm_start() {
	local log=$1 pidfile=$2
	shift 3
	rm -f "$pidfile"
	"$@" >"$log" 2>&1 </dev/null &
	VT_VM_PID=$!
}

vt_vm_wait_line() {
	local file=$1 pat=$2 secs=$3 pid=$4 end
	end=$(($(date +%s) + secs))
	while [ "$(date +%s)" -lt "$end" ]; do
		grep -qa -- "$pat" "$file" 2>/dev/null && return 0
		kill -0 "$pid" 2>/dev/null || {
			grep -qa -- "$pat" "$file" 2>/dev/null
			return
		}
		sleep 0.2
	done
	return 1
}

vt_vm_wait_exit() {
	local pid=$1 secs=$2 end
	end=$(($(date +%s) + secs))
	while kill -0 "$pid" 2>/dev/null; do
		[ "$(date +%s)" -lt "$end" ] || return 1
		sleep 0.2
	done
	wait "$pid" 2>/dev/null
	return 0
}

vt_vm_kill() {
	local pidfile=$1 qpid
	qpid=$(cat "$pidfile" 2>/dev/null) || return 0
	[ -n "$qpid" ] && kill "$qpid" 2>/dev/null
	return 0
}
