#!/bin/bash
# A file of the wrong kind handed to the commands that want recording
# directories or trace.dat files (report, merge, export, info) is named for
# what it is - a Perfetto or Chrome trace, an SQLite database, an HTML page,
# markers.dat, a compressed file - with what the command wants, exit 1;
# never "corrupt trace.dat header".
set -eu
printf '\x0a\x12\x08\x01\x10\x02\x1a\x04test' >merged.pftrace
printf '{"traceEvents":[]}\n' >merged.json
printf '  [ {"ph":"i"} ]' >array.json
printf 'SQLite format 3\0rest-of-header' >db.sqlite
printf '<!DOCTYPE html><html></html>' >r.html
printf 'VTMK\x01\x00\x01\x04' >markers.dat
printf '\x28\xb5\x2f\xfdzstd' >x.zst
: >empty
check() {	# CMD FILE KIND
	local rc=0
	"$VT_BIN" $1 "$2" -o out.$1.json >out.txt 2>err.txt </dev/null || rc=$?
	[ $1 = info ] && { rc=0; "$VT_BIN" info "$2" >out.txt 2>err.txt || rc=$?; }
	[ $rc = 1 ] || { cat err.txt; echo "FAIL: vmtrace $1 $2: exit $rc, want 1"; exit 1; }
	grep -q "$2: not a trace.* this is $3" err.txt || { cat err.txt; echo "FAIL: vmtrace $1 $2: message"; exit 1; }
	if grep -q 'corrupt trace.dat header' err.txt; then
		cat err.txt; echo "FAIL: vmtrace $1 $2: called a corrupt trace.dat"; exit 1
	fi
}
for cmd in merge report info; do
	check $cmd merged.pftrace "a Perfetto trace"
	check $cmd merged.json "a JSON file"
	check $cmd array.json "a JSON file"
	check $cmd db.sqlite "an SQLite database"
	check $cmd r.html "an HTML or XML file"
	check $cmd markers.dat "a markers.dat file"
	check $cmd x.zst "a zstd-compressed file"
	check $cmd empty "an empty file"
done
echo "ok: every wrong kind named, exit 1"
