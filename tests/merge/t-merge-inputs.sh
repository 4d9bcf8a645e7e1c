#!/bin/bash
# How merge takes its inputs, on mkfixture's host recording and guest
# markers (in-band hypercalls): a directory with no trace data of its own
# stands for its subdirectories that have some (with its @NAME), a meta's
# fractional tsc.hz is rounded (the same times as the integer), a guest
# meta that is not one is ignored loudly (no clock model, said why; exit 3);
# a guest directory with nothing to read and an argument '@NAME' are
# refused, named; a uftrace directory's ns clock is assumed only without a
# meta (a bad one: ticks, said so).
set -eu
. "$VT_SRC/tests/merge/common.sh"
need_mkfixture
cd "$VT_TMP"
"$MKFIX" h g -n 20 -o 7000000 -k -T -D >/dev/null
"$VT_BIN" merge h g -o ref.json 2>ref.txt
span='  span     1.983241903 s (2385.514134176 .. 2387.497376079 s on the host timeline)'
has ref.txt "$span" '  flows    20'

# vm/ holds no trace data, its subdirectory markers/ does (empty/ not)
mkdir -p vm/empty
cp -r g vm/markers
"$VT_BIN" merge h vm -o v.json 2>v.txt
has v.txt "$span" '  align    guest: markers (20 marker pairs), bound 198 ns (clock from vm/markers)' \
	'  flows    20'
grep -qE '^  guest +vm/markers +20 events' v.txt || fail "vm not expanded: $(cat v.txt)"
if grep -q 'vm/empty' v.txt; then fail "vm/empty taken as an input"; fi
# ... named: its subdirectories are VM "web"
"$VT_BIN" merge h vm@web -o w.json 2>w.txt
has w.txt '  align    web: markers (20 marker pairs), bound 198 ns (clock from vm/markers)'
grep -qE '^  guest web vm/markers +20 events' w.txt || fail "vm@web: $(cat w.txt)"
cmp -s v.json w.json && fail "vm@web: the VM's name is not in the output"
# ... 3999 characters deep: a subdirectory whose path would pass 4199
# characters is passed over (only markers/ taken)
long=$(printf 'd%.0s' $(seq 199))
long=$(for i in $(seq 20); do printf '%s/' "$long"; done)
long=${long%/}
mkdir -p "$long"
cp -r g "$long/markers"
( cd "$long" && cp -r "$VT_TMP/g" "$(printf 'e%.0s' $(seq 250))" )
"$VT_BIN" merge h "$long" -o l.json 2>l.txt
has l.txt "$span" '  flows    20'
[ "$(grep -c '^  guest ' l.txt)" = 1 ] && grep -qF "/markers " l.txt || fail "deep vm: $(cat l.txt)"

# tsc.hz=2096001000.4: rounded, the same timeline
cp -r h hf
sed -i 's/^tsc.hz=.*/tsc.hz=2096001000.4/' hf/vmtrace.meta
"$VT_BIN" merge hf g -o f.json 2>f.txt
has f.txt "$span" '  flows    20'

# a guest meta that is not one: ignored, said so, no clock model
cp -r g gb
printf 'garbage\n' >gb/vmtrace.meta
rc=0
"$VT_BIN" merge h gb -o b.json 2>b.txt || rc=$?
[ $rc = 3 ] || { cat b.txt; fail "a bad guest meta: exit $rc, want 3 (partial)"; }
has b.txt "vmtrace: warning: gb/vmtrace.meta: not a vmtrace metadata file (first line is not '# vmtrace-meta 1') (metadata ignored: defaults used)" \
	'  align    guest: no clock model: guest TSC - 0 = host TSC (error bound unknown)' \
	'  flows    0'
# a guest directory with nothing merge reads: refused, named
mkdir e
rc=0
"$VT_BIN" merge h e -o e.json -q 2>e.txt || rc=$?
[ $rc = 1 ] || fail "an empty guest directory: exit $rc, want 1"
has e.txt 'vmtrace: merge: e: no trace.dat, no uftrace data (info) and no samples.tsv found'
# an argument that begins with '@' names no VM: it is a path
rc=0
"$VT_BIN" merge h @web -o a.json -q 2>a.txt || rc=$?
[ $rc = 1 ] || fail "@web: exit $rc, want 1"
has a.txt 'vmtrace: merge: @web: cannot open: No such file or directory'

# a plain uftrace directory (no meta): uftrace's ns clock, no warning; with
# a meta that is not one: ticks (unscaled, said so) and exit 3
"$GEN" u -n 4 -D 2 -c ns -f main,work >/dev/null
rm u/vmtrace.meta
"$VT_BIN" merge u -o u.json 2>u.txt
if grep -q warning u.txt; then fail "a plain uftrace directory warned: $(cat u.txt)"; fi
printf 'garbage\n' >u/vmtrace.meta
rc=0
"$VT_BIN" merge u -o ub.json 2>ub.txt || rc=$?
[ $rc = 3 ] || { cat ub.txt; fail "a uftrace directory's bad meta: exit $rc, want 3"; }
has ub.txt "vmtrace: warning: u/vmtrace.meta: not a vmtrace metadata file (first line is not '# vmtrace-meta 1') (metadata ignored: defaults used)" \
	'vmtrace: warning: u: no tsc.hz in vmtrace.meta and no --tsc-hz: timestamps are written unscaled (1 tick = 1 ns)'
echo "ok: inputs"
