#!/bin/bash
# TCG chardev markers: which fd's one-byte writes are the markers.  QEMU's
# vCPU thread writes them (chosen by thread); when only its I/O thread
# writes, two fds whose writes match equally well are reported AMBIGUOUS,
# and --marker-fd or the meta's markers.chardev_fd decide; an fd with no
# writes leaves no source (exit 1, said why).
set -eu
. "$VT_SRC/tests/align/lib.sh"
expect_fail() {	# expect_fail CODE PATTERN -- command...
	local want=$1 pat=$2; shift 3
	set +e; "$@" >out.txt 2>err.txt; local rc=$?; set -e
	[ "$rc" = "$want" ] || fail "exit $rc, want $want: $* ($(cat err.txt))"
	grep -qF -- "$pat" err.txt || fail "no '$pat' in stderr of $*: $(cat err.txt)"
}

# the vCPU thread writes fd 9, the I/O thread fd 10: fd 9, by thread
"$MKFIX" hv gv -n 40 -o -5000000000 -c -T -D >tv.json
"$VT_BIN" align hv gv --json >av.json
check_json av.json tv.json \
	'"host: chardev markers: one-byte writes to fd 9 by vCPU threads (40 of 40 guest markers match by order and time)" in j["notes"]' \
	'not any("AMBIGUOUS" in n for n in j["notes"])' \
	'abs(ns(j["segments"][0]["offset_tsc"] - t["offset"])) <= j["bound_ns"]'

# only the I/O thread writes: fd 9 (markers) and fd 10 (25 ms earlier
# each time) both match all 40 markers by order
"$MKFIX" hc gc -n 40 -o -5000000000 -c -w -T -D >tc.json
"$VT_BIN" align hc gc --json >ac.json
check_json ac.json tc.json \
	'"host: AMBIGUOUS: fd 9 matches as well as fd 10: give --marker-fd" in j["notes"]' \
	'not any("by vCPU threads" in n for n in j["notes"])'
"$VT_BIN" align hc gc --marker-fd 9 --json >a9.json
check_json a9.json tc.json \
	'"host: chardev markers: one-byte writes to fd 9 (40 of 40 guest markers match by order and time)" in j["notes"]' \
	'not any("AMBIGUOUS" in n for n in j["notes"])' \
	'j["markers"]["pairs"] == 40' \
	'abs(ns(j["segments"][0]["offset_tsc"] - t["offset"])) <= j["bound_ns"]'
# the fd the recorder noted in the meta: as --marker-fd
echo 'markers.chardev_fd=9' >>hc/vmtrace.meta
"$VT_BIN" align hc gc --json >am.json
check_json am.json tc.json \
	'"host: chardev markers: one-byte writes to fd 9 (40 of 40 guest markers match by order and time)" in j["notes"]' \
	'j["segments"][0]["offset_tsc"] == json.load(open("a9.json"))["segments"][0]["offset_tsc"]'
# the option wins over the meta; an fd with no writes: no source
expect_fail 1 "host: no write() fd matches the guest's 40 chardev markers" -- \
	"$VT_BIN" align hc gc --marker-fd 5
grep -qF 'no usable clock source' err.txt || fail "--marker-fd 5: $(cat err.txt)"
echo "chardev fd: by vCPU thread, ambiguous, --marker-fd, meta, none"
