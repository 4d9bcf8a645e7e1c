#!/bin/bash
# How merge (merge/pipeline.c) reads its arguments and what each input's
# meta declares, on mkfixture's host recording and guest markers: a
# trace.dat named by file takes the meta beside it (also as a bare
# "trace.dat"), PATH@NAME splits only when PATH is not itself a file and
# NAME is a name, paths past 4096 bytes are refused, QEMU's task list
# (record.pids/tgids) is read up to its first malformed entry, a meta that
# does not parse in a uftrace directory is warned about, a guest-only merge
# has no clock model, an empty input merges to 0 events, the output's kind
# follows its name (a directory, a trailing '/', an ending), and on a
# terminal merge draws its progress line.
set -eu
. "$VT_SRC/tests/merge/common.sh"
need_mkfixture
cd "$VT_TMP"
"$MKFIX" h g -n 20 -o 7000000 -k -T -D >/dev/null
span='  span     1.983241903 s (2385.514134176 .. 2387.497376079 s on the host timeline)'

# a trace.dat by file name: its directory's meta (tsc.hz) is read, the same
# timeline as the directory; a bare "trace.dat" reads the meta of "."
"$VT_BIN" merge h/trace.dat -o f.json 2>f.txt
has f.txt "$span"
(cd h && "$VT_BIN" merge trace.dat -o ../b.json 2>../b.txt)
has b.txt "$span"
if grep -q warning b.txt; then fail "bare trace.dat: $(cat b.txt)"; fi
rc=0; "$VT_BIN" merge /trace.dat -o x.json 2>err.txt || rc=$?
[ $rc = 1 ] || fail "/trace.dat: exit $rc"
has err.txt 'vmtrace: merge: /trace.dat: cannot open: No such file or directory'

# PATH@NAME: not split when NAME is empty, holds a '/', is 64 bytes or
# longer, or when PATH@NAME exists (then it is the path)
long=$(printf 'n%.0s' $(seq 64))
for a in 'h@' 'h@x/y' "h@$long"; do
	rc=0; "$VT_BIN" merge "$a" -o x.json 2>err.txt || rc=$?
	[ $rc = 1 ] || fail "$a: exit $rc"
	has err.txt "vmtrace: merge: $a: cannot open: No such file or directory"
done
cp -r h 'h@web'
"$VT_BIN" merge 'h@web' g -o w.json 2>w.txt
grep -qE '^  host +h@web +61 events' w.txt || fail "h@web not a path: $(cat w.txt)"
has w.txt '  align    guest: markers (20 marker pairs), bound 198 ns (clock from g)'
# a path of 4096 bytes or more, with a name or without
p4k=$(printf 'd%.0s' $(seq 4100))
for a in "$p4k@n" "$p4k"; do
	rc=0; "$VT_BIN" merge "$a" -o x.json 2>err.txt || rc=$?
	[ $rc = 1 ] || fail "a 4100-byte path: exit $rc"
	has err.txt 'vmtrace: merge: an input path is too long'
done

# QEMU's pid and tasks: the vCPU thread (tid 4242, "CPU 0/KVM") is in
# process "QEMU (pid 4240)" when the meta says so, else in its own tid's
procs() {	# JSON: "process=events" of every non-metadata event
	"$PY" - "$1" <<'PYEOF'
import json, sys
from collections import Counter
ev = json.load(open(sys.argv[1]))["traceEvents"]
pn = {e["pid"]: e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "process_name"}
c = Counter(pn.get(e["pid"]) for e in ev if e["ph"] != "M")
print(" ".join("%s=%d" % (k, v) for k, v in sorted(c.items(), key=str)))
PYEOF
}
q42='guest: sync markers=40 host: QEMU (pid 4242)=81'
q40='guest: sync markers=40 host: QEMU (pid 4240)=81'
meta_case() {	# NAME META-LINES WANT
	rm -rf "$1"
	cp -r h "$1"
	printf "$2" >>"$1/vmtrace.meta"
	"$VT_BIN" merge "$1" g -o "$1.json" -q
	got=$(procs "$1.json")
	[ "$got" = "$3" ] || fail "$1 ($2): $got, want $3"
}
meta_case ref '' "$q42"
# tid 0 and a task of another process skipped, tgids shorter: read to there
meta_case qa 'kvm.vm0.pid=4240\nrecord.pids=4242,0,4243,4244\nrecord.tgids=4240,4240,77\n' "$q40"
# no tgids, tgids or pids not numbers: QEMU's threads by name
meta_case qb 'kvm.vm0.pid=4240\nrecord.pids=4242\n' "$q40"
meta_case qc 'kvm.vm0.pid=4240\nrecord.pids=4242\nrecord.tgids=x\n' "$q40"
meta_case qf 'kvm.vm0.pid=4240\nrecord.pids=x\nrecord.tgids=4240\n' "$q40"
# a pid out of range (INT32_MAX, negative): no QEMU pid
meta_case qd 'kvm.vm0.pid=2147483647\nrecord.pids=4242\nrecord.tgids=2147483647\n' "$q42"
meta_case qe 'kvm.vm0.pid=-4\n' "$q42"
# 1101 tasks: the first 1024 read (the vCPU thread, last, is QEMU's by its
# kvm.thread0 entry)
meta_case qg "kvm.vm0.pid=4240\nrecord.pids=$(seq -s, 5000 6099),4242\nrecord.tgids=$(seq -s, 5000 6099 | sed 's/[0-9]*/4240/g'),4240\n" "$q40"

# a guest meta with an empty vm=: the VM keeps its default name
cp -r g ge
echo 'vm=' >>ge/vmtrace.meta
"$VT_BIN" merge h ge -o ge.json 2>ge.txt
has ge.txt '  align    guest: markers (20 marker pairs), bound 198 ns (clock from ge)'

# a uftrace directory whose meta does not parse: warned, exit 3, its
# stamps unscaled (not taken for uftrace's own ns clock either: warned)
"$GEN" u -n 10 -D 2 -z 1000000000 -s 1000 -d 1000 -f a,b
printf 'junk\n' >u/vmtrace.meta
rc=0; "$VT_BIN" merge u -o u.json 2>u.txt || rc=$?
[ $rc = 3 ] || fail "bad uftrace meta: exit $rc, want 3"
has u.txt "vmtrace: warning: u/vmtrace.meta: not a vmtrace metadata file (first line is not '# vmtrace-meta 1') (metadata ignored: defaults used)" \
	"vmtrace: warning: u: no tsc.hz in vmtrace.meta and no --tsc-hz: timestamps are written unscaled (1 tick = 1 ns)" \
	'  span     0.000009000 s (0.000001000 .. 0.000010000 s on the host timeline)'

# guests only: no host, so no clock model; the guest's own TSC at 2 GHz
"$GEN" gp -n 16 -t 1 -p 200 -z 2000000000 -s 1000000 -d 1000 -D 2 -g -f py_a,py_b
"$VT_BIN" merge gp g -o gp.json 2>gp.txt
has gp.txt '  span     0.000007500 s (0.000500000 .. 0.000507500 s on the host timeline)' \
	'  align    guest: no clock model: guest TSC - 0 = host TSC (error bound unknown)'

# an input with no events: 0 events, no span line
"$GEN" z -n 0 -D 2 -z 1000000000 -s 1000 -d 1000 -f a,b
"$VT_BIN" merge z -o z.json 2>z.txt
has z.txt 'vmtrace: merge: 0 events -> z.json (chrome)' '  flows    0'
if grep -q 'span' z.txt; then fail "0 events: a span: $(cat z.txt)"; fi

# a trace.dat by file in a directory without meta: its stamps unscaled
mkdir nm
cp h/trace.dat nm/
"$VT_BIN" merge nm/trace.dat -o nm.json 2>nm.txt
has nm.txt 'vmtrace: warning: nm/trace.dat: no tsc.hz in vmtrace.meta and no --tsc-hz: timestamps are written unscaled (1 tick = 1 ns)'
grep -qE '^  trace +nm/trace.dat +41 events, 5000\.040010749 \.\. 5004\.196887759 s$' nm.txt ||
	fail "nm/trace.dat: $(cat nm.txt)"
# a samples.tsv that is not one; a guest directory with nothing to read
mkdir s e
echo junk >s/samples.tsv
rc=0; "$VT_BIN" merge s -o s.json 2>s.txt || rc=$?
[ $rc = 1 ] || fail "bad samples.tsv: exit $rc"
has s.txt 'vmtrace: merge: s/samples.tsv: not a samples file (first line is not "# vmtrace-samples 1")'
printf '# vmtrace-meta 1\ndomain=guest\n' >e/vmtrace.meta
rc=0; "$VT_BIN" merge h e -o e.json 2>e.txt || rc=$?
[ $rc = 1 ] || fail "empty guest: exit $rc"
has e.txt 'vmtrace: merge: e: no trace.dat, no uftrace data (info) and no samples.tsv found'
# the first input partial, a second one after it: warned once, exit 3
mk_host c 64
truncate -s $(( $(stat -c %s c/1000.dat) - 8 )) c/1000.dat
rc=0; "$VT_BIN" merge c gp -o c.json 2>c.txt || rc=$?
[ $rc = 3 ] || fail "partial first input: exit $rc, want 3"
has c.txt 'vmtrace: warning: c: input truncated or corrupt: merged up to its last complete record'

# the output's kind from its name: an existing directory is one whatever
# its name (d.json), a name ending in '/' is one (made); no -o is a usage
# error, an unknown ending names itself
mkdir d.json
"$VT_BIN" merge h -o d.json 2>d.txt
has d.txt 'vmtrace: merge: 41 events -> d.json (uftrace)'
[ -f d.json/info ] || fail "d.json: no uftrace info"
"$VT_BIN" merge h -o nd/ 2>nd.txt
has nd.txt 'vmtrace: merge: 41 events -> nd/ (uftrace)'
[ -f nd/info ] || fail "nd/: no uftrace info"
rc=0; "$VT_BIN" merge h 2>err.txt || rc=$?
[ $rc = 2 ] || fail "no -o: exit $rc"
has err.txt 'usage: vmtrace merge INPUT... -o OUT [options]'
rc=0; "$VT_BIN" merge h -o x.weird 2>err.txt || rc=$?
[ $rc = 2 ] || fail "x.weird: exit $rc"
has err.txt 'vmtrace: merge: x.weird: unknown output format (use --format perfetto|chrome|uftrace or .pftrace/.json/a directory)'

# on a terminal: a progress line after 2^20 events, then at most one a
# second (checked every 2^20: four checks here, seldom a second apart),
# and a last one, then the summary
"$GEN" big -n 4200000 -D 1 -z 1000000000 -s 1000 -d 1000 -f a
t0=$(date +%s)
script -qec "\"$VT_BIN\" merge big --format chrome -o /dev/null" /dev/null | tr '\r' '\n' >big.txt
t1=$(date +%s)
has big.txt 'vmtrace: merge: 1048576 events, at 1.049 s   ' \
	'vmtrace: merge: 4200000 events, at 4.200 s' \
	'vmtrace: merge: 4200000 events -> /dev/null (chrome)'
n=$(grep -c ' events, at .*   $' big.txt)
[ "$n" -le $((t1 - t0 + 1)) ] || fail "$n progress lines in $((t1 - t0)) s: $(cat big.txt)"
rm -rf big
echo "ok: args"
