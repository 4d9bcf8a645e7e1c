# tests/lib/kvm.sh: the one KVM gate of every test that runs a guest under
# KVM (sourced; needs $VT_BUILD and $VT_TMP).
#
# KVM counts as working when (1) $VT_BUILD/bin/vt-kvm-probe succeeds
# (/dev/kvm opens, KVM_GET_API_VERSION, KVM_CREATE_VM, KVM_CREATE_VCPU) and
# (2) qemu-system-x86_64 -accel kvm runs the freestanding multiboot guest
# tests/host/pio-guest.elf to its isa-debug-exit within KVM_GATE_SECS (on
# the project's PVM machines SeaBIOS and the guest are emulated, slowly).
# Past the gate a KVM failure is a real failure, never a skip.
# VT_KVM_PROBE (a command) replaces the probe, as in examples/common/vm.sh.
#
# Where this machine has no full KVM, every KVM test runs inside the KVM
# lab (tools/kvm-lab: a Linux host with kvm-amd nested under TCG), never
# skipped: tests/run runs all tests marked "# needs: kvm" in one lab boot,
# and a KVM test started on its own re-runs itself there (kvm_or_lab).  A
# PVM /dev/kvm does not count as full (vt-kvm-probe says why).
# VT_KVM=direct uses /dev/kvm anyway, VT_KVM=lab always the lab.
# A lab test with a "# host-part: yes" line runs in two parts (tests/run):
# VT_PART=lab in the lab (its guests, their recordings into $VT_HANDOFF),
# then VT_PART=host here (their analysis from $VT_HANDOFF: it must not call
# kvm_or_lab or need_kvm); VT_PART empty: both in one go.
#
#   kvm_check        0 when KVM works (KVM_WHY says how fast the gate
#                    guest ran); 1 when it does not (KVM_WHY: the reason);
#                    2 when the probe or the gate guest is not built
#   need_kvm         exit 77 with the reason as the last line unless
#                    kvm_check passes (exit 1 when something is not built)
#   kvm_longmode_check
#                    0 when, past kvm_check, the project's 64-bit
#                    unikernel (build/guest/unikernel.elf: multiboot entry,
#                    then long mode) also runs to its end under -accel kvm;
#                    1 otherwise (KVM_WHY: why).  ENVIRONMENT.md vouches
#                    only for real-mode/32-bit code under the PVM KVM, so a
#                    long-mode guest that hangs there is the platform, not
#                    a vmtrace failure (the same guest is checked under TCG)
#   kvm_or_lab ARGS  when KVM does not work here but the lab does: re-run
#                    the calling test ($0 ARGS) inside the lab (exec; its
#                    exit status is the test's); else return
#   kvm_lab_usable   0 when the lab program is built and QEMU installed
#   lab_out_dir NAME the directory of a lab test's guest runs (odirect_dir,
#                    or in a two-part run $VT_HANDOFF/NAME: see below)
#   kvm_timeout CMD  CMD under a KVM_RUN_SECS bound (SIGTERM, then SIGKILL
#                    10 s later): one guest run of a test, so a hung guest
#                    fails the test instead of eating CI's time
#   loop_disk FILE MB
#                    a block device for a guest's disk: a loop device on
#                    FILE (MB MiB, made sparse; put it in tmpfs, the lab's
#                    /tmp) in LOOP_DEV; 1 with the reason printed when
#                    there is no loop support or losetup
#   loop_disk_free   detach LOOP_DEV and remove its file (a trap's work)
KVM_GATE_SECS=30
KVM_RUN_SECS=45

kvm_check() {
	local probe=${VT_KVM_PROBE:-$VT_BUILD/bin/vt-kvm-probe} guest=$VT_BUILD/tests/host/pio-guest.elf
	local log=$VT_TMP/kvm-gate.log rc=0 t0 secs
	KVM_WHY=""
	if [ -z "${VT_IN_LAB:-}" ]; then
		[ "${VT_KVM:-}" = lab ] && { KVM_WHY="VT_KVM=lab: the KVM lab is asked for"; return 1; }
	fi
	[ -n "${VT_KVM_PROBE:-}" ] || [ -x "$probe" ] || { KVM_WHY="$probe not built (make)"; return 2; }
	[ -f "$guest" ] || { KVM_WHY="$guest not built (make test builds it)"; return 2; }
	KVM_WHY=$($probe 2>&1) || { KVM_WHY=${KVM_WHY##*$'\n'}; return 1; }
	command -v qemu-system-x86_64 >/dev/null ||
		{ KVM_WHY="qemu-system-x86_64 not installed (make deps)"; return 1; }
	t0=$(date +%s.%N)
	timeout -k 5 "$KVM_GATE_SECS" qemu-system-x86_64 -accel kvm -kernel "$guest" \
		-device isa-debug-exit,iobase=0xf4,iosize=4 -display none -serial none \
		-monitor none -nodefaults -no-reboot -m 16 >"$log" 2>&1 </dev/null || rc=$?
	secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
	case $rc in
	1)	# isa-debug-exit with 0: the guest ran to its end
		KVM_WHY="KVM works: the freestanding test guest ran under -accel kvm in $secs s"
		return 0;;
	124 | 137)
		KVM_WHY="vt-kvm-probe passes but qemu-system-x86_64 -accel kvm did not run the freestanding test guest to its end within $KVM_GATE_SECS s"
		return 1;;
	*)
		KVM_WHY="vt-kvm-probe passes but qemu-system-x86_64 -accel kvm failed (exit $rc): $(grep -v '^$' "$log" | tail -1)"
		return 1;;
	esac
}

kvm_longmode_check() {
	local uk=$VT_BUILD/guest/unikernel.elf rc=0 cache
	[ -f "$uk" ] || { KVM_WHY="$uk not built"; return 1; }
	# one answer per boot and build: the failing case costs KVM_RUN_SECS
	# (inside the lab the build is read-only and every boot is new: no cache)
	cache=$VT_BUILD/tests/kvm-longmode.$(cat /proc/sys/kernel/random/boot_id)
	[ -w "$VT_BUILD/tests" ] || cache=$VT_TMP/kvm-longmode
	if [ -f "$cache" ] && [ "$cache" -nt "$uk" ]; then
		KVM_WHY=$(cat "$cache")
		[ -z "$KVM_WHY" ]
		return
	fi
	kvm_timeout qemu-system-x86_64 -accel kvm -kernel "$uk" -m 64 -display none \
		-nodefaults -no-reboot -debugcon file:/dev/null \
		-device isa-debug-exit,iobase=0xf4,iosize=4 >"$VT_TMP/kvm-longmode.log" 2>&1 \
		</dev/null || rc=$?
	if [ $rc = 33 ]; then
		: >"$cache"
		return 0
	fi
	KVM_WHY="the 64-bit unikernel ($uk) does not run to its end under -accel kvm here (qemu exit $rc; 124: not done in $KVM_RUN_SECS s) although the 32-bit test guest does: this KVM runs only 32-bit guest code (ENVIRONMENT.md)"
	echo "$KVM_WHY" >"$cache"
	return 1
}

kvm_lab_usable() {
	[ -x "$VT_BUILD/bin/vmtrace-lab" ] && command -v qemu-system-x86_64 >/dev/null
}

kvm_or_lab() {
	local rc=0
	[ -n "${VT_IN_LAB:-}" ] && return 0
	kvm_check || rc=$?
	[ $rc = 1 ] || return 0
	kvm_lab_usable || return 0
	echo "$KVM_WHY: running this test inside the KVM lab"
	exec "$VT_BUILD/bin/vmtrace-lab" -q -o "$VT_TMP" --timeout 1200 -- "$0" "$@"
}

need_kvm() {
	local rc=0
	kvm_check || rc=$?
	case $rc in
	0) echo "$KVM_WHY";;
	2) echo "FAIL: $KVM_WHY"; exit 1;;
	*) echo "SKIP: $KVM_WHY"; exit 77;;
	esac
}

kvm_timeout() {
	timeout -k 10 "$KVM_RUN_SECS" "$@"
}

# odirect_dir NAME: make NAME under the first of $VT_TMP, $VT_LOGS and
# $VT_BUILD/tests where an O_DIRECT write works and print its path (the
# example's disk is opened with cache=none, which tmpfs - the lab's /tmp -
# refuses; in the lab the batch's logs are shared over 9p, which takes it);
# 1 when none does.
odirect_dir() {
	local d
	for d in "$VT_TMP" "${VT_LOGS:-}" "$VT_BUILD/tests"; do
		[ -n "$d" ] && mkdir -p "$d/$1" 2>/dev/null || continue
		if dd if=/dev/zero of="$d/$1/.odirect" bs=4096 count=1 oflag=direct 2>/dev/null; then
			rm -f "$d/$1/.odirect"
			echo "$d/$1"
			return 0
		fi
		rmdir "$d/$1" 2>/dev/null || true
	done
	return 1
}

# lab_out_dir NAME: where a lab test's guest runs write (the example's disk
# needs O_DIRECT): in a two-part run (VT_PART set) $VT_HANDOFF/NAME, on the
# lab's share, where O_DIRECT works and the host part finds the recordings;
# else odirect_dir NAME.  Prints the path; 1 when there is none.
lab_out_dir() {
	if [ -n "${VT_PART:-}" ]; then
		[ -d "${VT_HANDOFF:-}" ] || { echo "VT_PART=$VT_PART but no VT_HANDOFF directory" >&2; return 1; }
		mkdir -p "$VT_HANDOFF/$1" && echo "$VT_HANDOFF/$1"
	else
		odirect_dir "$1"
	fi
}

# loop_disk FILE MB: LOOP_DEV = a loop device on FILE (MB MiB): a guest
# disk on a block device, where QEMU's aio=native and aio=io_uring run
# (on the lab's 9p share QEMU serves them from its thread pool) and a
# device-mapper target can sit on it (t-report-faults-lab's dm-delay)
LOOP_DEV="" LOOP_FILE=""
loop_disk() {
	command -v losetup >/dev/null || { echo "no losetup (make test-deps: mount)"; return 1; }
	[ -e /dev/loop-control ] || [ -d /sys/module/loop ] ||
		{ echo "no loop device support (the lab loads loop: tools/kvm-lab MODULES)"; return 1; }
	LOOP_FILE=$1
	truncate -s "$2M" "$LOOP_FILE" || return 1
	LOOP_DEV=$(losetup -f --show "$LOOP_FILE") || { echo "losetup $LOOP_FILE failed"; return 1; }
}

loop_disk_free() {
	[ -z "$LOOP_DEV" ] || losetup -d "$LOOP_DEV" 2>/dev/null || true
	[ -z "$LOOP_FILE" ] || rm -f "$LOOP_FILE"
	LOOP_DEV="" LOOP_FILE=""
}
