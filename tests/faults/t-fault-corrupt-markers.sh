#!/bin/bash
# One byte changed at 1000 random offsets of a guest's markers.dat: `vmtrace
# align` and `vmtrace merge` (which aligns with it) never crash and never
# fail silently.  A markers.dat cut mid-record: both exit 3 naming it.
# timeout: 300
set -eu
. "$VT_SRC/tests/faults/lib.sh"

w="$VT_TMP/w"
mkdir -p "$w"
"$VT_BUILD/tests/align/mkfixture" "$w/host" "$w/markers" -n 20 >/dev/null
"$VT_BIN" run -o "$w/guest" -- "$GPROGS/mt-pg" >/dev/null
cp "$w/markers/markers.dat" "$w/guest/"
run_ok "align of the intact traces" "$VT_BIN" align "$w/host" "$w/guest"
# markers.dat cut inside its last record: merge still merges every event,
# but warns naming markers.dat and exits 3 like align
run_ok "merge of the intact traces" "$VT_BIN" merge "$w/host" "$w/guest" -o "$VT_TMP/ok.json" -q
cp -a "$w" "$VT_TMP/cut"
truncate -s -20 "$VT_TMP/cut/guest/markers.dat"
for cmd in align merge; do
	rc=0
	if [ $cmd = align ]; then
		# align names the file in its report (stdout)
		"$VT_BIN" align "$VT_TMP/cut/host" "$VT_TMP/cut/guest" >"$VT_TMP/err" 2>&1 || rc=$?
	else
		"$VT_BIN" merge "$VT_TMP/cut/host" "$VT_TMP/cut/guest" -o "$VT_TMP/cut.json" -q \
			2>"$VT_TMP/err" || rc=$?
	fi
	sed 's/^/    /' "$VT_TMP/err" | head -5
	[ $rc = 3 ] || fail "$cmd with a cut markers.dat: exit $rc, want 3"
	grep -q "cut/guest/markers.dat" "$VT_TMP/err" || fail "$cmd: warning does not name markers.dat"
done
[ "$(json_events "$VT_TMP/cut.json")" = "$(json_events "$VT_TMP/ok.json")" ] ||
	fail "merge with a cut markers.dat lost events"
# the markers drawn: every matched one, on both sides; the cut one is not
[ "$(json_sync_markers "$VT_TMP/ok.json")" = 40 ] && [ "$(json_sync_markers "$VT_TMP/cut.json")" = 38 ] ||
	fail "sync markers drawn: $(json_sync_markers "$VT_TMP/ok.json") intact, $(json_sync_markers "$VT_TMP/cut.json") cut (want 40, 38)"
echo "ok: cut markers.dat: align and merge exit 3 naming the file, all events merged"
"$MUTATE" --count "$MUTANTS" "$w" guest/markers.dat \
	-- "$VT_BIN" align "{dir}/host" "{dir}/guest" --pairs \
	-- "$VT_BIN" merge "{dir}/host" "{dir}/guest" -o "{out}.json" -q
