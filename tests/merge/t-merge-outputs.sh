#!/bin/bash
# merge's outputs that cannot be written or named: a file in a missing
# directory, a device that is full (/dev/full: ENOSPC on the first write,
# Chrome JSON and Perfetto), a format merge does not know (by --format or
# by the output's extension), a bad --tsc-hz or --offset; an existing
# output replaced; a name ending in
# '/' a uftrace directory; --format json naming Chrome's format for
# an output without an extension; a name past Chrome's 1024 bytes cut on a
# character boundary.
set -eu
. "$VT_SRC/tests/merge/common.sh"
need_mkfixture
cd "$VT_TMP"
expect() {	# expect CODE MESSAGE -- merge options...
	local want=$1 msg=$2 rc=0; shift 3
	"$VT_BIN" merge h g -q "$@" 2>err.txt || rc=$?
	[ "$rc" = "$want" ] || fail "merge $*: exit $rc, want $want ($(cat err.txt))"
	grep -qxF -- "$msg" err.txt || fail "merge $*: no line '$msg' in: $(cat err.txt)"
}
"$MKFIX" h g -n 20 -o 7000000 -k -T -D >/dev/null
expect 1 'vmtrace: merge: nodir/x.json: cannot create: No such file or directory' -- -o nodir/x.json
[ ! -e nodir ] || fail "nodir created"
if [ -w /dev/full ]; then
	expect 1 'vmtrace: merge: /dev/full: write failed: No space left on device' -- -o /dev/full -F chrome
	expect 1 'vmtrace: merge: /dev/full: write failed: No space left on device' -- -o /dev/full -F perfetto
fi
expect 2 'vmtrace: merge: x.weird: unknown output format (use --format perfetto|chrome|uftrace or .pftrace/.json/a directory)' -- -o x.weird
expect 2 'vmtrace: merge: nosuch: unknown output format (use --format perfetto|chrome|uftrace or .pftrace/.json/a directory)' -- -F nosuch -o x.json
[ ! -e x.weird ] && [ ! -e x.json ] || fail "a refused merge wrote its output"
# bad numbers: usage errors, named, nothing written
expect 2 "vmtrace: merge: bad --tsc-hz '2x' (Hz, at least 1000)" -- --tsc-hz 2x -o x.json
expect 2 "vmtrace: merge: bad --offset '7q'" -- --offset 7q -o x.json
[ ! -e x.json ] || fail "a merge with a bad number wrote its output"
# a name ending in '/': a directory, the uftrace format
"$VT_BIN" merge h g -q -o newdir/
[ -f newdir/info ] && ls newdir/*.dat >/dev/null || fail "-o newdir/: no uftrace directory"
# an output file that exists is replaced: the same bytes as a fresh one
head -c 100000 /dev/zero >old.json
"$VT_BIN" merge h g -q -o old.json
"$VT_BIN" merge h g -q -o fresh.json
cmp -s old.json fresh.json || fail "an existing output: not replaced by the merge"
# --format json: Chrome's JSON, whatever the name
"$VT_BIN" merge h g -q -F json -o out
"$PY" -c 'import json, sys; d = json.load(open("out")); assert sum(e.get("name") == "sync marker" for e in d["traceEvents"]) == 40' ||
	fail "-F json -o out: not Chrome JSON with the 40 sync marker instants"
# a function name past Chrome's 1024 bytes: cut there, on a character
# boundary (the 2-byte character at bytes 1023-1024 goes whole)
"$GEN" ln -n 2 -D 1 -c ns -f "$(printf 'f%.0s' $(seq 1023))é$(printf 'g%.0s' $(seq 50))"
"$VT_BIN" merge ln -o ln.json -q
"$PY" -c '
import json, sys
n = [e["name"] for e in json.load(open("ln.json"))["traceEvents"] if e["ph"] == "B"]
assert n == ["f" * 1023], [len(x.encode()) for x in n]' || fail "a long name not cut at 1023 bytes"
# an output ending in '/' or with a '.' only in a directory part: a
# uftrace directory
"$VT_BIN" merge ln -o nd/ -q
[ -f nd/info ] || fail "-o nd/: not a uftrace directory"
mkdir x.d
"$VT_BIN" merge ln -o x.d/out -q
[ -f x.d/out/info ] || fail "-o x.d/out: not a uftrace directory"
# an existing directory, a '.' in its name: a uftrace directory
mkdir y.d
"$VT_BIN" merge ln -o y.d -q
[ -f y.d/info ] || fail "-o y.d (a directory): not a uftrace directory"
# the report's HTML escapes a function named a<b>&"c
"$GEN" hx -n 8 -D 2 -c ns -f 'main,a<b>&"c'
"$VT_BIN" report hx --html hx.html -o hx.txt -q
grep -qF 'a&lt;b&gt;&amp;&quot;c' hx.html || fail "HTML: the name not escaped"
if grep -qF 'a<b>&"c' hx.html; then fail "HTML: the name raw"; fi
echo "ok: outputs"
