#!/bin/bash
# `vmtrace record` writes trace.dat v7 with zstd-compressed sections by
# default: the file says version 7 and zstd; trace-cmd report, libtracecmd
# (tdcount) and the recorder's count agree; the same file as v6 (trace-cmd
# convert) gives the same `trace-cmd report` text and the same `vmtrace
# merge` JSON and `vmtrace report` text.  `--format v6` writes version 6
# (record.tracedat=v6), a bad --format is a usage error (exit 2).
# timeout: 120
set -eu
. "$VT_SRC/tests/host/lib.sh"
need_tracefs

# the recording: a short dd with its syscalls, block and sched events
"$VT_BIN" record --guest -o z -- dd if=/dev/zero of=/dev/null bs=4k count=3000 2>err.txt
cat err.txt
head -c 12 z/trace.dat | od -c | head -1 | grep -q '7  \\0' || fail "trace.dat is not version 7"
head -c 64 z/trace.dat | grep -aq zstd || fail "trace.dat does not name zstd"
[ "$(meta record.tracedat z)" = v7-zstd ] || fail "record.tracedat is not v7-zstd"
check_counts z

# the same file as v6 (trace-cmd's conversion): the same answers
mkdir p
cp z/vmtrace.meta p/
trace-cmd convert -i z/trace.dat -o p/trace.dat --file-version 6 --compression none \
	>conv.txt 2>&1 || { cat conv.txt; fail "trace-cmd convert to v6"; }
head -c 12 p/trace.dat | od -c | head -1 | grep -q '6  \\0' || fail "converted file is not v6"
zs=$(stat -c %s z/trace.dat); ps=$(stat -c %s p/trace.dat)
echo "sizes: v7 zstd $zs, v6 $ps bytes ($(awk -v a="$ps" -v b="$zs" 'BEGIN{printf "%.1f", a / b}')x)"
[ $((zs * 3)) -lt "$ps" ] || fail "v7 zstd file ($zs) is not a third of v6 ($ps)"
trace-cmd report z/trace.dat >rz.txt 2>/dev/null
trace-cmd report p/trace.dat >rp.txt 2>/dev/null
cmp -s rz.txt rp.txt || { diff rz.txt rp.txt | head -5; fail "trace-cmd report differs v7/v6"; }
for d in z p; do
	"$VT_BIN" merge $d -o m-$d.json -q 2>merge-$d.err || { cat merge-$d.err; fail "merge $d"; }
	"$VT_BIN" report $d -q >rep-$d.txt 2>rep-$d.err || { cat rep-$d.err; fail "report $d"; }
	sed -i "s#\\b$d/trace.dat#DIR/trace.dat#g; s#\\b$d\\b#DIR#g" rep-$d.txt
done
python3 -c 'import json, sys; json.load(open(sys.argv[1]))' m-z.json || fail "merge JSON"
cmp -s m-z.json m-p.json || fail "vmtrace merge JSON differs v7/v6"
cmp -s rep-z.txt rep-p.txt || { diff rep-z.txt rep-p.txt | head -5; fail "vmtrace report differs v7/v6"; }
echo "ok: trace-cmd report ($(wc -l <rz.txt) lines), vmtrace merge and report identical"

# --format v6: version 6, as before
"$VT_BIN" record --guest --format v6 -o six -- true 2>err6.txt || { cat err6.txt; fail "--format v6"; }
head -c 12 six/trace.dat | od -c | head -1 | grep -q '6  \\0' || fail "--format v6 is not version 6"
[ "$(meta record.tracedat six)" = v6 ] || fail "record.tracedat is not v6"
check_counts six
rc=0; "$VT_BIN" record --format v5 -o bad -- true 2>bad.txt || rc=$?
[ "$rc" = 2 ] && grep -q "format v5" bad.txt || fail "--format v5: exit $rc, $(cat bad.txt)"
[ ! -e bad ] || fail "--format v5 made its directory"
echo ok
