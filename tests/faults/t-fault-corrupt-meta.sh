#!/bin/bash
# One byte changed at 1000 random offsets of vmtrace.meta files (a host
# recording's and a `vmtrace run` guest trace's): `vmtrace info`, `vmtrace
# merge` (host + guest) and `vmtrace align` never crash and never fail
# silently.  A meta line that does not parse: merge warns (file:line), exits 3.
# timeout: 300
set -eu
. "$VT_SRC/tests/faults/lib.sh"

w="$VT_TMP/w"
mkdir -p "$w"
"$VT_BUILD/tests/align/mkfixture" "$w/host" "$w/markers" -n 10 >/dev/null
"$VT_BIN" run -o "$w/guest" -- "$GPROGS/mt-pg" >/dev/null
cp "$w/markers/markers.dat" "$w/guest/"
run_ok "merge of the intact traces" "$VT_BIN" merge "$w/host" "$w/guest" -o "$VT_TMP/ok.json" -q
# a guest meta that does not parse: merged with defaults, a warning naming
# the file and line, exit 3
cp -a "$w" "$VT_TMP/badmeta"
echo "no equals sign here" >>"$VT_TMP/badmeta/guest/vmtrace.meta"
line=$(wc -l <"$VT_TMP/badmeta/guest/vmtrace.meta")
rc=0
"$VT_BIN" merge "$VT_TMP/badmeta/host" "$VT_TMP/badmeta/guest" -o "$VT_TMP/badmeta.json" -q \
	2>"$VT_TMP/err" || rc=$?
sed 's/^/    /' "$VT_TMP/err" | head -5
[ $rc = 3 ] || fail "merge with an unparsable meta: exit $rc, want 3"
grep -q "badmeta/guest/vmtrace.meta:$line:" "$VT_TMP/err" ||
	fail "merge: warning does not name vmtrace.meta:$line"
[ "$(json_events "$VT_TMP/badmeta.json")" -gt 0 ] || fail "merge with a bad meta wrote no events"
echo "ok: unparsable meta: merge exit 3 naming file:line"
# the same in a directory named "out of memory": an input's name is not a
# failed allocation (the error's kind once came from the formatted text)
mkdir "$VT_TMP/out of memory"
cp -a "$VT_TMP/badmeta" "$VT_TMP/out of memory/"
rc=0
"$VT_BIN" merge "$VT_TMP/out of memory/badmeta/host" "$VT_TMP/out of memory/badmeta/guest" \
	-o "$VT_TMP/oomname.json" -q 2>"$VT_TMP/err" || rc=$?
[ $rc = 3 ] || fail "merge of a dir named 'out of memory' with an unparsable meta: exit $rc, want 3: $(cat "$VT_TMP/err")"
echo "ok: the same under a directory named 'out of memory': exit 3"
# the mutant directory is a copy of $w: both metas are changed in turn
"$MUTATE" --count "$MUTANTS" "$w" host/vmtrace.meta guest/vmtrace.meta \
	-- "$VT_BIN" info "{dir}/host" \
	-- "$VT_BIN" info "{dir}/guest" \
	-- "$VT_BIN" merge "{dir}/host" "{dir}/guest" -o "{out}.json" -q \
	-- "$VT_BIN" align "{dir}/host" "{dir}/guest"
