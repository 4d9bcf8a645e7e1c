#!/bin/bash
# Bad input: clear messages and the documented exit codes.
set -eu
. "$VT_SRC/tests/align/lib.sh"
expect() {	# expect CODE PATTERN -- command...
	local want=$1 pat=$2; shift 3
	set +e; "$@" >out.txt 2>err.txt; local rc=$?; set -e
	cat err.txt
	[ "$rc" = "$want" ] || { echo "exit $rc, want $want: $*"; exit 1; }
	grep -q -- "$pat" err.txt || { echo "no '$pat' in stderr: $*"; exit 1; }
}
expect 2 'expected HOSTDIR' -- "$VT_BIN" align
expect 2 'bad frequency' -- "$VT_BIN" align --tsc-hz x .
expect 1 'guest directory nosuch' -- "$VT_BIN" align . nosuch
mkdir empty
# nothing at all: no frequency, then no source
expect 1 'frequency unknown' -- "$VT_BIN" align empty empty
expect 1 'no usable clock source' -- "$VT_BIN" align --tsc-hz 2000000000 empty empty

# no host meta: the frequency must come from the option
"$MKFIX" h g -n 20 -o 42 -M >t.json
expect 1 'frequency unknown' -- "$VT_BIN" align h g
"$VT_BIN" align h g --tsc-hz 2096001000 --json >a.json
check_json a.json t.json 'j["host_hz_from"] == "option --tsc-hz"' 'j["method"] == "markers"'

# corrupt guest markers: the valid ones are used, exit 3 (partial)
cp g/markers.dat good.dat
printf 'VTMKjunkjunkjunk' >>g/markers.dat
dd if=/dev/urandom of=g/markers.dat bs=48 seek=3 count=1 conv=notrunc 2>/dev/null
set +e; "$VT_BIN" align h g --tsc-hz 2096001000 --json >a.json 2>err.txt; rc=$?; set -e
[ "$rc" = 3 ] || { echo "corrupt markers: exit $rc, want 3"; exit 1; }
check_json a.json t.json 'j["markers"]["rejected_records"] == 2' 'j["markers"]["pairs"] == 19'

# a host trace.dat that is not one
cp good.dat g/markers.dat
echo garbage >h/trace.dat
expect 1 'trace.dat' -- "$VT_BIN" align h g --tsc-hz 2096001000
# a markers.dat that is a directory
rm h/trace.dat; rm g/markers.dat; mkdir g/markers.dat
expect 1 'markers.dat' -- "$VT_BIN" align h g --tsc-hz 2096001000

# a host trace recorded in a nanosecond clock cannot be related to guest TSCs
"$MKFIX" hl gl -n 5 -C '[local] global counter x86-tsc' >/dev/null
expect 1 "trace clock 'local'" -- "$VT_BIN" align hl gl
