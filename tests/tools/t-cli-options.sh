#!/bin/bash
# One command line (docs/cli.md): for every subcommand `vmtrace --help`
# lists, `vmtrace help CMD` is `vmtrace CMD --help`; a wrong option exits 2
# with at most three lines, the first "vmtrace: CMD: ...", the last naming
# --help; every option a command's help names is in docs/cli.md's row for
# it; a short option paired with a long one ("-o, --output") pairs with the
# same long one in every command and in docs/cli.md's shared table; and the
# exit codes of docs/exit-codes.md where they were once wrong (info on a
# directory without trace data, unpack of a file that is no stream, convert
# onto an existing directory); a bare -i is ms in top as in stream.
set -u
PY=/usr/bin/python3
fail() { echo "FAIL: $*"; exit 1; }
cd "$VT_TMP"
"$VT_BIN" --help >top.txt || fail "vmtrace --help: exit $?"
cmds=$(sed -n 's/^  \([a-z]*\)  .*/\1/p' top.txt)
[ "$(echo "$cmds" | wc -w)" -ge 15 ] || fail "vmtrace --help lists $(echo $cmds | wc -w) commands: $cmds"
for c in $cmds; do
	"$VT_BIN" "$c" --help >"h-$c.txt" 2>/dev/null || fail "$c --help: exit $?"
	[ -s "h-$c.txt" ] || fail "$c --help printed nothing on stdout"
	"$VT_BIN" help "$c" >"hh-$c.txt" 2>/dev/null || fail "help $c: exit $?"
	cmp -s "h-$c.txt" "hh-$c.txt" || fail "'vmtrace help $c' differs from 'vmtrace $c --help'"
	rc=0
	"$VT_BIN" "$c" --no-such-option >/dev/null 2>"bad-$c.txt" </dev/null || rc=$?
	[ $rc = 2 ] || fail "$c --no-such-option: exit $rc (want 2): $(head -3 "bad-$c.txt")"
	n=$(wc -l <"bad-$c.txt")
	[ "$n" -ge 1 ] && [ "$n" -le 3 ] || fail "$c --no-such-option: $n lines on stderr (want 1-3)"
	head -1 "bad-$c.txt" | grep -q "^vmtrace: $c: " || fail "$c: first line not 'vmtrace: $c: ...': $(head -1 "bad-$c.txt")"
	tail -1 "bad-$c.txt" | grep -q -- "--help" || fail "$c: no hint naming --help: $(tail -1 "bad-$c.txt")"
done
echo "ok: $(echo $cmds | wc -w) commands: help CMD = CMD --help, a wrong option gives exit 2 in 1-3 lines"
# docs/cli.md's per-command table is what the helps say (tools/cli-doc, the
# one reader of the helps' options, rewrites a copy: it must come out equal)
cp "$VT_SRC/docs/cli.md" cli.md
"$VT_SRC/tools/cli-doc" "$VT_BIN" cli.md >/dev/null
cmp -s "$VT_SRC/docs/cli.md" cli.md ||
	{ diff "$VT_SRC/docs/cli.md" cli.md; fail "docs/cli.md's table is not what the commands' --help say (tools/cli-doc)"; }
for c in $cmds; do
	grep -q "^| $c | " cli.md || fail "docs/cli.md has no row for $c"
done
echo "ok: docs/cli.md's table is every command's --help"
"$PY" - "$VT_SRC/docs/cli.md" $cmds <<'PYEOF' || exit 1
import re, sys
doc = open(sys.argv[1]).read()
cmds = sys.argv[2:]
pair = re.compile(r'^\s+(-[a-zA-Z]), (--[a-z][a-z0-9-]+)', re.M)
shared = {}
for l in doc.splitlines():
    m = re.match(r'\| `(-[a-zA-Z]), (--[a-z][a-z0-9-]+)', l)
    if m:
        shared[m.group(1)] = m.group(2)
bad = 0
seen = {}
for c in cmds:
    h = open("h-%s.txt" % c).read()
    for s, lng in pair.findall(h):
        if s in shared and shared[s] != lng:
            print("FAIL: %s pairs %s with %s, docs/cli.md's shared table with %s" % (c, s, lng, shared[s])); bad += 1
        if s in seen and seen[s][1] != lng:
            print("FAIL: %s pairs %s with %s, %s with %s" % (c, s, lng, seen[s][0], seen[s][1])); bad += 1
        seen.setdefault(s, (c, lng))
if bad:
    sys.exit(1)
print("ok: %d short options pair with one long name everywhere" % len(seen))
PYEOF
# exit codes
mkdir -p empty
rc=0; "$VT_BIN" info empty >/dev/null 2>info.err || rc=$?
[ $rc = 1 ] && grep -q "no trace data" info.err || fail "info on a directory without trace data: exit $rc: $(cat info.err)"
printf 'not a stream\n' >junk
rc=0; "$VT_BIN" unpack junk -o upk >/dev/null 2>unpack.err || rc=$?
[ $rc = 1 ] || fail "unpack of a file that is no stream: exit $rc (want 1)"
[ ! -e upk ] || fail "unpack of a file that is no stream left $(ls -d upk)"
mkdir -p src busy && echo x >busy/keep
"$VT_BUILD/tests/merge/gen-trace" src -n 10 >/dev/null
rc=0; "$VT_BIN" convert src busy >/dev/null 2>conv.err || rc=$?
[ $rc = 2 ] && grep -q -- "--force" conv.err || fail "convert onto an existing directory: exit $rc: $(cat conv.err)"
[ -f busy/keep ] || fail "convert removed a file of the existing directory"
echo "ok: exit codes: info 1, unpack 1 (nothing left), convert onto an existing directory 2 naming --force"
# one unit per option letter (docs/cli.md, Units): a bare -i is ms in top as
# in stream; top's 100 ms floor refuses a bare number meant as seconds
rc=0; "$VT_BIN" top --once -i 2 src >/dev/null 2>topi.err || rc=$?
[ $rc = 2 ] && grep -q 'a bare number of ms' topi.err || fail "top -i 2: exit $rc: $(cat topi.err)"
for i in 250 250ms 0.5s; do
	"$VT_BIN" top --once -i $i src >/dev/null || fail "top --once -i $i: exit $?"
	"$VT_BIN" top --once --interval $i src >/dev/null || fail "top --once --interval $i: exit $?"
done
echo "ok: top -i: a bare number of ms (2 refused, 250, 250ms, 0.5s taken)"
# a value holding a newline (a command line typed on two lines) is listed
# as the file holds it, escaped: one line a key in `meta DIR` and `info DIR`
"$VT_BIN" meta src $'cmdline=python3 -c import os\nprint(1) \\' || fail "meta: set a value with a newline"
[ "$("$VT_BIN" meta src cmdline)" = $'python3 -c import os\nprint(1) \\' ] || fail "meta DIR KEY: not the value"
"$VT_BIN" meta src >meta.txt
"$VT_BIN" info src >info.txt || fail "info src: exit $?"
grep -qxF 'cmdline=python3 -c import os\nprint(1) \\' meta.txt || fail "meta DIR: $(grep -A1 cmdline meta.txt)"
grep -qxF '  cmdline=python3 -c import os\nprint(1) \\' info.txt || fail "info DIR: $(grep -A1 cmdline info.txt)"
echo "ok: a value with a newline listed escaped on one line"
