# tests/host/lib.sh: shared helpers of the recorder tests (sourced).
TDCOUNT=$VT_BUILD/tests/host/tdcount

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }

# Skip unless we can record: root, tracefs, trace-cmd for checking.
need_tracefs() {
	[ "$(id -u)" = 0 ] || skip "not root: the recorder needs tracefs instances"
	[ -d /sys/kernel/tracing/instances ] || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null ||
		skip "no tracefs at /sys/kernel/tracing"
	command -v trace-cmd >/dev/null || skip "trace-cmd not installed (make deps)"
	[ -x "$TDCOUNT" ] || fail "$TDCOUNT not built"
}

# meta KEY DIR: a value of DIR/vmtrace.meta
meta() { sed -n "s/^$1=//p" "$2/vmtrace.meta"; }

# Events trace-cmd report prints (one line each after the cpus= header).
report_count() { trace-cmd report "$1" 2>/dev/null | grep -v '^CPU:[0-9]* \[.*DROPPED\]$' | grep -vc '^cpus='; }

# Our count through libtracecmd's API, the meta count and trace-cmd's agree.
check_counts() {
	local dir=$1 ours meta_n tc
	ours=$("$TDCOUNT" "$dir/trace.dat" | sed -n 's/^total //p')
	meta_n=$(meta events.total "$dir")
	tc=$(report_count "$dir/trace.dat")
	echo "counts: libtracecmd=$ours meta=$meta_n trace-cmd=$tc"
	[ -n "$ours" ] && [ "$ours" -gt 0 ] || fail "no events read back from $dir/trace.dat"
	[ "$ours" = "$meta_n" ] || fail "libtracecmd read $ours events, meta says $meta_n"
	[ "$ours" = "$tc" ] || fail "libtracecmd read $ours events, trace-cmd report $tc"
}

no_instances_left() {
	if ls /sys/kernel/tracing/instances 2>/dev/null | grep -q "^vmtrace-$1\$"; then
		fail "instance vmtrace-$1 left behind"
	fi
}
