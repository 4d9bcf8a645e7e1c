#!/bin/bash
# tests/align/tracecmd-pair.sh: records trace-cmd's own host-guest mode on a
# real KVM (issue #16) so vmtrace can be compared with it: a Linux guest runs
# `trace-cmd agent` (vsock), the KVM host runs `trace-cmd record -A` with a
# time-sync protocol (kvm, ptp), and the guest emits vmtrace sync markers
# meanwhile (`vmtrace marker`: the host sees each as kvm:kvm_hypercall, or
# kvm:kvm_pio), which are the ground truth.
#
# Usage: tests/align/tracecmd-pair.sh [--image] OUT
#   (as root; from a checkout with `make` done)
#   --image   only build (or reuse) the guest image and exit
#
#   Builds and caches the guest image (Debian's kernel from tools/debian-kernel,
#   busybox, virtio/vsock modules, trace-cmd and its libraries, vmtrace, and
#   tests/align/tracecmd-pair-init as /init) in $VT_TCPAIR_CACHE (default
#   BUILD/tracecmd-pair), then runs the rounds on a KVM host: this machine
#   when vt-kvm-probe finds a full KVM here, else the KVM lab (`vmtrace lab`,
#   docs/lab.md; its module list has vhost_vsock), and last writes the
#   reports.  The script can also be started inside the lab itself:
#       build/bin/vmtrace lab -o OUT -- tests/align/tracecmd-pair.sh OUT
#   (the image must be built first, the lab sees the machine read-only).
#
#   One guest boot (QEMU -accel kvm -cpu host, vhost-vsock-pci guest-cid=CID,
#   two virtio-serial ports: control and markers) serves every round; each
#   round is one `trace-cmd record` whose command tells the guest to emit its
#   markers and waits for them.  Rounds ($VT_TCPAIR_RUNS, default all):
#     kvm       -C x86-tsc: trace-cmd negotiates its kvm protocol (debugfs
#               tsc-offset, read by the host)
#     ptp       -C local (trace-cmd's default clock, which kvm does not offer):
#               its ptp protocol (vsock ping-pong of trace_marker_raw stamps)
#     ptp-tsc   -C x86-tsc with ptp: the host's debugfs kvm directory hidden
#               under a tmpfs in a private mount namespace, so kvm is not offered
#     kvm-zstd  as kvm, both files written --compression zstd --file-version 7
#               (what Debian's trace-cmd 3.1.6 writes by default)
#   The first three ask for --file-version 6 (uncompressed), for both files.
#   Under OUT: ROUND/trace.dat (host), ROUND/trace-guest.dat (guest, with its
#   TIME_SHIFT option), ROUND/markers.dat (the guest's markers of that round,
#   seq from 0), ROUND/record.log (every message of trace-cmd record),
#   ROUND/run.txt, ROUND/report-*.txt and dump-options-*.txt (heads of
#   `trace-cmd report`, `trace-cmd dump --options`), ROUND/check.txt
#   (tracecmd-pair-check.py: trace-cmd's offsets against the markers),
#   ROUND/convert-zstd/ (the version 6 pairs converted to version 7 + zstd by
#   `trace-cmd convert`), and for the guest
#   boot guest-console.log, agent.log (the agent's messages), qemu.log,
#   host.txt; tracecmd-pair.log (all this script printed), files.txt.
#
# Environment: VT_BUILD (default: the checkout's build/), VT_TCPAIR_RUNS,
# VT_TCPAIR_MARKERS (per round, default 100), VT_TCPAIR_INTERVAL (ms, default
# 20), VT_TCPAIR_METHOD (auto|pio|hypercall: auto tries PIO once at boot),
# VT_TCPAIR_CID (3), VT_TCPAIR_SMP (guest vCPUs, 1), VT_TCPAIR_HOST
# (auto|lab|direct), VT_TCPAIR_VMTRACE (1, default: `vmtrace record -p QEMU`
# beside trace-cmd in the x86-tsc rounds without a hidden debugfs, into
# ROUND/vmtrace-host; 0: not), VT_TCPAIR_TSYNC_INTERVAL (ms, trace-cmd's
# --tsync-interval; default none), VT_TCPAIR_BOOT_TIMEOUT / _ROUND_TIMEOUT (s).
#
# Exit status: 0 every round made its pair; 1 a round or a step failed (the
# message says which and where its log is); 2 usage; 125 the lab failed.
set -u
prog=tracecmd-pair
SELF=$(readlink -f "$0")
HERE=$(dirname "$SELF")
SRC=$(cd "$HERE/../.." && pwd)
BUILD=${VT_BUILD:-$SRC/build}
VT=$BUILD/bin/vmtrace
WITH_VMTRACE=${VT_TCPAIR_VMTRACE:-1}
CACHE=${VT_TCPAIR_CACHE:-$BUILD/tracecmd-pair}
RUNS=${VT_TCPAIR_RUNS:-kvm ptp ptp-tsc kvm-zstd}
MARKERS=${VT_TCPAIR_MARKERS:-100}
INTERVAL=${VT_TCPAIR_INTERVAL:-20}
METHOD=${VT_TCPAIR_METHOD:-auto}
CID=${VT_TCPAIR_CID:-3}
SMP=${VT_TCPAIR_SMP:-1}
BOOT_TIMEOUT=${VT_TCPAIR_BOOT_TIMEOUT:-300}
ROUND_TIMEOUT=${VT_TCPAIR_ROUND_TIMEOUT:-300}
# trace-cmd's --tsync-interval (ms); unset: its default, one sync at the
# start and one at the end
TSYNC_INTERVAL=${VT_TCPAIR_TSYNC_INTERVAL:-}
TRACECMD=${VT_TCPAIR_TRACECMD:-/usr/bin/trace-cmd}
QEMU=${VT_QEMU:-qemu-system-x86_64}
# guest: virtio transport, the virtio-serial ports, vsock over virtio
# (tools/debian-kernel adds vsock, vmw_vsock_virtio_transport_common, ...)
GUEST_MODULES="virtio_pci virtio_console vmw_vsock_virtio_transport"
HOST_EVENTS=(-e kvm:kvm_entry -e kvm:kvm_exit -e kvm:kvm_pio -e kvm:kvm_hypercall
	-e kvm:kvm_write_tsc_offset)
GUEST_EVENTS=(-e sched -e irq)

die() { echo "$prog: $*" >&2; exit 1; }
usage() { sed -n '/^# Usage:/,/^#   --image/p' "$SELF" | sed 's/^# \{0,1\}//' >&2; exit 2; }

# --- the guest image (built outside the lab: inside, the tree is read-only) ---
build_image() {
	local root f
	. "$SRC/examples/common/mkroot.sh"
	"$SRC/tools/debian-kernel" "$CACHE/kernel" $GUEST_MODULES ||
		die "the guest kernel could not be prepared (tools/debian-kernel, above)"
	root=$CACHE/root.tmp
	rm -rf "$root" && mkdir -p "$root"/{bin,sbin,etc,proc,sys,dev,tmp,run,root,lib/modules,usr/bin,opt/vmtrace/bin}
	cp /bin/busybox "$root/bin/busybox"
	for f in $(/bin/busybox --list); do
		[ -e "$root/bin/$f" ] || ln -s busybox "$root/bin/$f"
	done
	# (every module there; none when the kernel builds them all in)
	cp -R "$CACHE/kernel/modules/." "$CACHE/kernel/modules.order" "$root/lib/modules/"
	vt_root_copy_elf "$root" "$TRACECMD"
	# glibc dlopens libgcc_s for pthread_exit/cancel: without it the agent's
	# tsync thread aborts ("libgcc_s.so.1 must be installed for pthread_exit")
	vt_root_copy "$root" "$(readlink -f /lib/x86_64-linux-gnu/libgcc_s.so.1)"
	[ -e "$root/lib/x86_64-linux-gnu/libgcc_s.so.1" ] ||
		cp "$(readlink -f /lib/x86_64-linux-gnu/libgcc_s.so.1)" "$root/lib/x86_64-linux-gnu/libgcc_s.so.1"
	[ "$TRACECMD" = /usr/bin/trace-cmd ] || ln -sf "$TRACECMD" "$root/usr/bin/trace-cmd"
	# libtraceevent's plugins: events printed by name in the guest's record
	for f in /usr/lib/x86_64-linux-gnu/traceevent/plugins/*.so; do
		[ -e "$f" ] && vt_root_copy_elf "$root" "$f"
	done
	cp "$VT" "$root/opt/vmtrace/bin/vmtrace"
	vt_root_copy_libs "$root" "$VT"
	install -m 0755 "$HERE/tracecmd-pair-init" "$root/init"
	echo 'root:x:0:0:root:/root:/bin/sh' >"$root/etc/passwd"
	echo 'root:x:0:' >"$root/etc/group"
	vt_root_cpio "$root" "$CACHE/initrd.img" || die "cpio of the guest image failed"
	rm -rf "$root"
	cp "$CACHE/kernel/vmlinuz" "$CACHE/vmlinuz"
	cp "$CACHE/kernel/kernel.version" "$CACHE/kernel.version"
}

# what the image is made of: remade when any of it changes
image_key() {
	{
		sed -n '/^build_image()/,/^}/p' "$SELF"
		echo "$GUEST_MODULES"
		cat "$HERE/tracecmd-pair-init"
		md5sum "$TRACECMD" "$VT" /bin/busybox
		ls /var/cache/vmtrace/debs 2>/dev/null
	} | md5sum | cut -d' ' -f1
}

image() {
	local want
	[ -x "$VT" ] || die "$VT missing: run 'make' first"
	[ -x "$TRACECMD" ] || die "$TRACECMD missing (Debian package trace-cmd)"
	[ -x /bin/busybox ] || die "/bin/busybox missing (Debian package busybox-static)"
	want=$(image_key)
	if [ "$(cat "$CACHE/stamp" 2>/dev/null)" = "$want" ] && [ -f "$CACHE/initrd.img" ] &&
		[ -f "$CACHE/vmlinuz" ]; then
		return 0
	fi
	[ -z "${VT_IN_LAB:-}" ] || die "the guest image in $CACHE is missing or stale, and the lab cannot build it (read-only tree): run '$SELF --image' outside the lab first"
	mkdir -p "$CACHE" || die "cannot create $CACHE"
	echo "$prog: building the guest image in $CACHE"
	build_image
	echo "$want" >"$CACHE/stamp"
	echo "$prog: guest image ready ($(cat "$CACHE/kernel.version"), initrd $(($(stat -c %s "$CACHE/initrd.img") / 1024)) KiB)"
}

# --- inside the KVM host: boot the guest, one trace-cmd record per round ---
W=""
QPID=""
inner_cleanup() {
	[ -n "$QPID" ] && kill "$QPID" 2>/dev/null
	[ -n "$W" ] && rm -rf "$W"
}

# wait_line FILE PATTERN SECONDS: 0 once FILE has a line with PATTERN, 1
# when SECONDS pass or QEMU is gone first
wait_line() {
	local end=$(($(date +%s) + $3))
	while [ "$(date +%s)" -lt "$end" ]; do
		grep -qa -- "$2" "$1" 2>/dev/null && return 0
		[ -n "$QPID" ] && ! kill -0 "$QPID" 2>/dev/null && { grep -qa -- "$2" "$1" 2>/dev/null; return; }
		sleep 0.2
	done
	return 1
}

# the command trace-cmd record runs (`--go ROUND`): tell the guest to emit
# its markers, wait until it says they are sent
go_round() {
	local r=$1
	: "${TCPAIR_CTL:?}" "${TCPAIR_CONSOLE:?}"
	echo "go $r" >"$TCPAIR_CTL" || { echo "$prog: cannot write the guest's control port" >&2; exit 1; }
	wait_line "$TCPAIR_CONSOLE" "tcpair-guest: markers sent round $r " "${TCPAIR_ROUND_TIMEOUT:-300}" ||
		{ echo "$prog: the guest did not send round $r's markers within ${TCPAIR_ROUND_TIMEOUT:-300} s" >&2; exit 1; }
	# a last moment for the final hypercall/pio events to reach both buffers
	sleep 0.5
}

round() {
	local name=$1 i=$2 d=$OUT/$1 clock opts=() wrap=() off bytes t0 t1 rc=0 n
	# Debian's trace-cmd 3.1.6 writes file version 7 with zstd by default:
	# the plain rounds ask for version 6 (uncompressed).  The file options
	# are given twice: before -A for the host's file, after it for the
	# guest's (the agent writes the guest file's metadata itself)
	case $name in
	kvm) clock=x86-tsc; opts=(--file-version 6) ;;
	ptp) clock=local; opts=(--file-version 6) ;;
	ptp-tsc)
		clock=x86-tsc; opts=(--file-version 6)
		wrap=(unshare -m sh -c 'mount -t tmpfs tcpair-no-kvm "$0" && exec "$@"' /sys/kernel/debug/kvm) ;;
	kvm-zstd) clock=x86-tsc; opts=(--compression zstd --file-version 7) ;;
	*) echo "$prog: unknown round '$name' (kvm ptp ptp-tsc kvm-zstd)" >&2; return 1 ;;
	esac
	rm -rf "$d" && mkdir -p "$d" || return 1
	off=$(stat -c %s "$OUT/markers.stream" 2>/dev/null || echo 0)
	echo "$prog: round $i $name: trace-cmd record -C $clock ${opts[*]} ... -A guest@$CID ${opts[*]} ..."
	{
		echo "# $name round of tests/align/tracecmd-pair.sh: trace-cmd host-guest recording"
		echo "round=$name"
		echo "clock=$clock"
		echo "options=${opts[*]}${TSYNC_INTERVAL:+ --tsync-interval $TSYNC_INTERVAL}"
		echo "cid=$CID"
	} >"$d/run.txt"
	# vmtrace's own recorder on the same run, beside trace-cmd (its own
	# tracefs instance): the VM's debugfs tsc-offset and its kvm events
	local vpid=""
	if [ "$WITH_VMTRACE" = 1 ] && [ -z "${wrap[*]}" ] && [ "$clock" = x86-tsc ]; then
		"$VT" record -o "$d/vmtrace-host" -p "$QPID" >"$d/vmtrace-record.log" 2>&1 &
		vpid=$!
		wait_line "$d/vmtrace-record.log" "recording to" 30 ||
			echo "$prog: round $name: vmtrace record did not start ($d/vmtrace-record.log)" >&2
	fi
	t0=$(date +%s.%N)
	(cd "$d" && TCPAIR_CTL=$W/ctl.in TCPAIR_CONSOLE=$OUT/guest-console.log TCPAIR_ROUND_TIMEOUT=$ROUND_TIMEOUT \
		timeout $((ROUND_TIMEOUT + 120)) "${wrap[@]}" "$TRACECMD" record -o trace.dat -C "$clock" "${opts[@]}" \
		${TSYNC_INTERVAL:+--tsync-interval "$TSYNC_INTERVAL"} "${HOST_EVENTS[@]}" -A "guest@$CID" "${opts[@]}" "${GUEST_EVENTS[@]}" "$SELF" --go "$i") >"$d/record.log" 2>&1 || rc=$?
	t1=$(date +%s.%N)
	if [ -n "$vpid" ]; then
		kill -INT "$vpid" 2>/dev/null
		wait "$vpid"
		echo "vmtrace_record_exit=$?" >>"$d/run.txt"
	fi
	echo "record_exit=$rc" >>"$d/run.txt"
	echo "record_seconds=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')" >>"$d/run.txt"
	sed 's/^/    /' "$d/record.log"
	[ $rc = 0 ] || { echo "$prog: round $name: trace-cmd record exit $rc (log $d/record.log)" >&2; return 1; }
	bytes=$(sed -n "s/.*tcpair-guest: markers sent round $i bytes \([0-9]*\).*/\1/p" "$OUT/guest-console.log" | head -1)
	[ -n "$bytes" ] && [ "$bytes" -gt 0 ] || { echo "$prog: round $name: the guest sent no markers ($OUT/guest-console.log)" >&2; return 1; }
	# the port's bytes reach the host's file asynchronously to the console line
	n=0
	while [ "$(stat -c %s "$OUT/markers.stream")" -lt $((off + bytes)) ] && [ $n -lt 50 ]; do sleep 0.2; n=$((n + 1)); done
	tail -c +$((off + 1)) "$OUT/markers.stream" | head -c "$bytes" >"$d/markers.dat"
	[ "$(stat -c %s "$d/markers.dat")" = "$bytes" ] ||
		{ echo "$prog: round $name: only $(stat -c %s "$d/markers.dat") of $bytes marker bytes arrived" >&2; return 1; }
	echo "markers=$((bytes / 48)) $(grep -a "markers sent round $i " "$OUT/guest-console.log" | sed 's/.*method \([a-z]*\).*/method=\1/' | head -1)" >>"$d/run.txt"
	[ -s "$d/trace.dat" ] || { echo "$prog: round $name: no trace.dat" >&2; return 1; }
	[ -s "$d/trace-guest.dat" ] || { echo "$prog: round $name: no trace-guest.dat (ls: $(ls "$d" | tr '\n' ' '))" >&2; return 1; }
	echo "$prog: round $name done in $(sed -n 's/^record_seconds=//p' "$d/run.txt") s: $(cd "$d" && ls -l trace.dat trace-guest.dat markers.dat | awk '{ printf "%s %s B; ", $NF, $5 }')"
}

inner() {
	local r i bad=0 qemu=() append
	exec > >(tee "$OUT/inner.log") 2>&1
	echo "# log of tests/align/tracecmd-pair.sh inside the KVM host ($(uname -r), $(nproc) CPUs${VT_IN_LAB:+, the KVM lab})"
	image
	[ -c /dev/kvm ] || die "no /dev/kvm here"
	[ -c /dev/vhost-vsock ] || modprobe vhost_vsock 2>/dev/null
	[ -c /dev/vhost-vsock ] || die "no /dev/vhost-vsock (module vhost_vsock: in the lab it is in tools/kvm-lab's MODULES)"
	[ -d /sys/kernel/debug/kvm ] || mount -t debugfs nodev /sys/kernel/debug 2>/dev/null
	[ -d /sys/kernel/tracing/events ] || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
	W=$(mktemp -d /tmp/tcpair.XXXXXX) || die "mktemp failed"
	trap inner_cleanup EXIT
	mkfifo "$W/ctl.in" "$W/ctl.out" || die "mkfifo in $W failed"
	rm -f "$OUT/guest-console.log" "$OUT/agent.log" "$OUT/markers.stream" "$OUT/qemu.log"
	: >"$OUT/markers.stream"
	{
		echo "# the KVM host of tests/align/tracecmd-pair.sh"
		echo "kernel=$(uname -r)"
		echo "in_lab=${VT_IN_LAB:-0}"
		echo "trace_cmd=$("$TRACECMD" --version 2>&1 | grep -m1 version)"
		echo "clocks=$("$TRACECMD" list -C 2>&1 | tr -d '\n')"
		echo "tsc=$(dmesg 2>/dev/null | grep -o 'tsc: Refined TSC clocksource calibration: [0-9.]* MHz\|tsc: Detected [0-9.]* MHz.*' | tail -1)"
		echo "guest_image=$CACHE ($(cat "$CACHE/kernel.version"))"
	} >"$OUT/host.txt"
	append="console=ttyS0 quiet panic=-1 TCPAIR_MARKERS=$MARKERS TCPAIR_INTERVAL=$INTERVAL TCPAIR_METHOD=$METHOD"
	qemu=("$QEMU" -name guest,debug-threads=on -accel kvm -cpu host -smp "$SMP" -m 512
		-nodefaults -display none -no-reboot -monitor none
		-kernel "$CACHE/vmlinuz" -initrd "$CACHE/initrd.img" -append "$append"
		-serial "file:$OUT/guest-console.log" -serial "file:$OUT/agent.log"
		-device "vhost-vsock-pci,guest-cid=$CID"
		-device virtio-serial-pci
		-chardev "pipe,id=ctl,path=$W/ctl" -device virtserialport,chardev=ctl,name=org.vmtrace.ctl
		-chardev "file,id=mk,path=$OUT/markers.stream" -device virtserialport,chardev=mk,name=org.vmtrace.markers)
	echo "$prog: booting the guest: ${qemu[*]}"
	echo "qemu=${qemu[*]}" >>"$OUT/host.txt"
	local tb
	tb=$(date +%s)
	"${qemu[@]}" </dev/null >"$OUT/qemu.log" 2>&1 &
	QPID=$!
	if ! wait_line "$OUT/guest-console.log" "tcpair-guest: agent running" "$BOOT_TIMEOUT"; then
		tail -20 "$OUT/guest-console.log" "$OUT/qemu.log" 2>/dev/null
		die "the guest did not start trace-cmd agent within $BOOT_TIMEOUT s (console: $OUT/guest-console.log)"
	fi
	grep -a 'tcpair-guest:' "$OUT/guest-console.log"
	echo "$prog: guest up, agent running, after $(($(date +%s) - tb)) s"
	echo "boot_seconds=$(($(date +%s) - tb))" >>"$OUT/host.txt"
	grep -qa 'tcpair-guest: error' "$OUT/guest-console.log" && die "the guest reported an error (above)"
	i=0
	for r in $RUNS; do
		i=$((i + 1))
		round "$r" "$i" || bad=$((bad + 1))
		kill -0 "$QPID" 2>/dev/null || { echo "$prog: QEMU is gone after round $r" >&2; bad=$((bad + 1)); break; }
	done
	echo quit >"$W/ctl.in"
	wait_line "$OUT/guest-console.log" "tcpair-guest: quit" 30
	local n=0
	while kill -0 "$QPID" 2>/dev/null && [ $n -lt 100 ]; do sleep 0.2; n=$((n + 1)); done
	kill "$QPID" 2>/dev/null
	wait "$QPID" 2>/dev/null
	QPID=""
	grep -a 'tcpair-guest' "$OUT/guest-console.log" | grep -v 'markers\|boot ok\|agent running\|ports\|clocks\|method' | tail -30
	echo "$prog: $bad of $(echo $RUNS | wc -w) rounds failed; whole run on the KVM host $(($(date +%s) - tb)) s"
	[ $bad = 0 ]
}

# --- reports (outside the lab when it was used: faster than under TCG) ---
post() {
	local d r f rc=0 n mhz
	# the KVM host's TSC rate, for the check's microseconds
	mhz=$(sed -n 's/^tsc=.*[^0-9.]\([0-9][0-9.]*\) MHz.*/\1/p' "$OUT/host.txt" 2>/dev/null | head -1)
	for r in $RUNS; do
		d=$OUT/$r
		[ -s "$d/trace.dat" ] && [ -s "$d/trace-guest.dat" ] || continue
		(
			cd "$d" || exit 1
			"$TRACECMD" report -i trace.dat 2>&1 | head -60 >report-host.txt
			# (trace-cmd applies the guest file's TIME_SHIFT when reading it;
			# --raw-ts: the guest's own clock)
			"$TRACECMD" report -i trace-guest.dat 2>&1 | head -60 >report-guest.txt
			"$TRACECMD" report --raw-ts -i trace-guest.dat 2>&1 | head -60 >report-guest-raw.txt
			# both files on the host's timeline (trace-cmd applies TIME_SHIFT)
			"$TRACECMD" report -i trace.dat -i trace-guest.dat 2>&1 | head -80 >report-both.txt
			"$TRACECMD" dump --options -i trace.dat >dump-options-host.txt 2>&1
			"$TRACECMD" dump --options -i trace-guest.dat >dump-options-guest.txt 2>&1
			"$TRACECMD" dump --summary -i trace.dat >dump-summary-host.txt 2>&1
			"$TRACECMD" dump --summary -i trace-guest.dat >dump-summary-guest.txt 2>&1
			"$HERE/tracecmd-pair-check.py" . "$mhz" >check.txt 2>&1 || echo "(check failed)" >>check.txt
			case $r in
			kvm | ptp | ptp-tsc)
				mkdir -p convert-zstd
				for f in trace.dat trace-guest.dat; do
					"$TRACECMD" convert --compression zstd --file-version 7 -i "$f" -o "convert-zstd/$f" \
						>>convert-zstd/convert.log 2>&1 || echo "convert $f failed" >>convert-zstd/convert.log
				done
				"$TRACECMD" dump --options -i convert-zstd/trace-guest.dat >convert-zstd/dump-options-guest.txt 2>&1
				;;
			esac
			# the markers as the host saw them: hypercall nr 0x56540001
			# (VTMK), or a PIO write of 0x56...... (lib/marker.h)
			n=$("$TRACECMD" report -i trace.dat 2>/dev/null | grep -c 'kvm_hypercall:.*nr 0x56540001\|kvm_pio:.*val 0x56')
			echo "host_marker_events=$n" >>run.txt
			echo "guest_markers=$(($(stat -c %s markers.dat) / 48))" >>run.txt
		) || rc=1
		echo "== $r: $(grep -h '^clock=\|^record_seconds=\|^markers=\|^host_marker_events=' "$d/run.txt" | tr '\n' ' ')"
		grep -i 'negotiat\|fail\|warn\|error' "$d/record.log" | sed 's/^/   record: /'
		grep -A6 'TimeShift' "$d/dump-options-guest.txt" | head -12 | sed 's/^/   guest option: /'
		sed 's/^/   check: /' "$d/check.txt"
	done
	(cd "$OUT" && find . -type f ! -name files.txt -printf '%s\t%p\n' | sort -k2) >"$OUT/files.txt"
	return $rc
}

# --- main ---
case ${1:-} in
--go) go_round "${2:?}"; exit ;;
--image) [ $# -le 2 ] || usage; [ "$(id -u)" = 0 ] || die "needs root (tools/debian-kernel's cache)"; image; exit ;;
--inner) [ $# = 2 ] || usage; OUT=$2; inner; exit ;;
-h | --help | '') usage ;;
-*) usage ;;
esac
[ $# = 1 ] || usage
[ "$(id -u)" = 0 ] || die "needs root (KVM tracing, the lab)"
mkdir -p "$1" || die "cannot create $1"
OUT=$(cd "$1" && pwd -P)
if [ -n "${VT_IN_LAB:-}" ]; then
	# started inside the lab (vmtrace lab -o OUT -- this OUT): all here
	rc=0
	inner || rc=$?
	post || rc=1
	exit $rc
fi
# an earlier run's OUT is emptied (not removed: the lab mounts it); another
# directory is refused
if [ -n "$(ls -A "$OUT")" ] && [ ! -f "$OUT/tracecmd-pair.log" ]; then
	die "$OUT is not empty and not an earlier output of this script: give a new directory"
fi
find "$OUT" -mindepth 1 -delete || die "cannot empty $OUT"
exec > >(tee "$OUT/tracecmd-pair.log") 2>&1
echo "# log of tests/align/tracecmd-pair.sh $OUT ($(date -u +%FT%TZ), rounds: $RUNS)"
image
host=${VT_TCPAIR_HOST:-auto}
if [ "$host" = auto ]; then
	host=lab
	"$BUILD/bin/vt-kvm-probe" >/dev/null 2>&1 && host=direct
fi
t0=$(date +%s)
rc=0
case $host in
direct)
	echo "$prog: a full KVM here: running on this machine"
	(inner) || rc=$?
	;;
lab)
	[ -x "$BUILD/bin/vmtrace-lab" ] || die "$BUILD/bin/vmtrace-lab missing: run 'make' first"
	echo "$prog: no full KVM here: running in the KVM lab ($BUILD/bin/vmtrace lab)"
	"$VT" lab -o "$OUT" --keep-console "$OUT/lab-console.log" --timeout "${VT_TCPAIR_LAB_TIMEOUT:-2400}" \
		-- "$SELF" --inner "$OUT" || rc=$?
	[ $rc = 125 ] && { echo "$prog: the KVM lab failed (console: $OUT/lab-console.log)" >&2; exit 125; }
	;;
*) die "VT_TCPAIR_HOST must be auto, lab or direct" ;;
esac
post || rc=1
echo "$prog: done in $(($(date +%s) - t0)) s, status $rc: $OUT (files: $OUT/files.txt)"
exit $rc
