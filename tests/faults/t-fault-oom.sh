#!/bin/bash
# Allocation failures, SQLite-style: each command below is run once with
# no failure (tests/faults/failalloc.c preloaded counts the K allocations
# vmtrace's own code makes), then once per N = 1..K with exactly the Nth
# allocation failing (at most CAP of them per command, spread evenly).
# Every run must: not die by a signal, print no sanitizer report, and
# either succeed with the very output of the run without failure, or exit 1
# naming the problem on stderr ("out of memory" / "cannot allocate") -
# never exit 0 with another output, never another exit code.  The inputs
# are never changed; export's database (promised atomic,
# docs/format/sqlite.md) is absent after a failure, no OUT.db.tmp left.
# merge -o promises no atomic output (docs/merge.md): a partial file left
# by a failed merge is counted, not failed.  Commands: info (trace.dat and
# uftrace dirs), align --json, merge of a host+guest VM fixture to
# Perfetto, Chrome JSON and uftrace, report (text + --html) and export
# --sqlite of an I/O-chain fixture.  A failing N is shown with the line of
# the failed allocation (VT_FAILALLOC_WHERE + addr2line).  ~40 s plain, ~47 s
# under SAN=1; the time limit is for VT_OOM_CAP=300 under SAN (every N).
# timeout: 900
set -eu
. "$VT_SRC/tests/faults/lib.sh"
SHIM="$VT_BUILD/tests/faults/failalloc.so"
[ -r "$SHIM" ] || fail "not built: $SHIM"
for ev in kvm/kvm_exit block/block_rq_issue irq/irq_handler_entry syscalls/sys_enter_write; do
	[ -r /sys/kernel/tracing/events/$ev/format ] ||
		skip "no tracefs event format $ev (the fixtures' trace.dat files need them)"
done
# CAP: failing runs per command.  Under ASan+UBSan a run takes ~0.25 s, not
# ~25 ms: fewer, spread over the same range (the plain build runs up to 200;
# VT_OOM_CAP=300 runs every one, 5 to 10 minutes under SAN)
if [ "${VT_SAN:-}" = 1 ]; then
	CAP=${VT_OOM_CAP:-24}
	echo "SAN build: at most $CAP failing runs per command (a run is ~10x slower" \
		"under ASan+UBSan; the plain build runs up to 200)"
	# the shim comes before the sanitizer runtime in the link order
	export ASAN_OPTIONS="${ASAN_OPTIONS:-}:verify_asan_link_order=0"
else
	CAP=${VT_OOM_CAP:-200}
fi

# ---- fixtures --------------------------------------------------------
# a VM: host trace.dat with PIO markers (mkfixture), QEMU under uftrace,
# guest Python, guest kernel trace.dat, the markers (as t-merge-vm)
cd "$VT_TMP"
. "$VT_SRC/tests/merge/common.sh"
VM_OFF=7000000 VM_HZ=2096001000 VM_T0=5000300000000 vm_fixture >/dev/null
# an I/O-chain fixture of 5 requests (tests/report: every link present)
. "$VT_SRC/tests/report/common.sh"
mkdir io
mk_fixture io 5 >/dev/null
inputs() { find h mk qu gp gk io/h io/g -type f | sort | xargs md5sum | md5sum; }
sum_in=$(inputs)

# digest OUT: what a run wrote (stdout, and OUT: a file, a directory, or -
# for none); a uftrace directory's info without its record_date line
digest() {
	md5sum <"$VT_TMP/out"
	[ "$1" = - ] && return
	if [ -d "$1" ]; then
		(cd "$1" && for f in $(ls); do
			echo "$f"
			if [ "$f" = info ]; then grep -av '^record_date:' "$f"; else cat "$f"; fi |
				md5sum
		done)
	elif [ -e "$1" ]; then
		md5sum <"$1"
	else
		echo "no $1"
	fi
}

# where_of N CMD...: the line of the Nth allocation, for a failure's report
where_of() {
	local n=$1 off
	shift
	off=$(VT_FAILALLOC=$n VT_FAILALLOC_WHERE=1 LD_PRELOAD=$SHIM "$@" 2>&1 >/dev/null |
	      sed -n 's/^failalloc: [0-9]* failed at //p') || true
	[ -n "$off" ] || return 0
	echo "  the failed allocation: $(addr2line -f -i -p -e "$VT_BIN" $off 2>/dev/null |
		sed "s|$VT_SRC/||g" | head -4 | tr '\n' ';')"
}

# sweep WHAT OUT ATOMIC CMD...: the runs described at the top; OUT is the
# output CMD writes (- for stdout alone), ATOMIC 1 if it must be absent
# after a failure
summary=()
sweep() {
	local what=$1 out=$2 atomic=$3 k ref n i rc ns clean=0 same=0 partial=0
	shift 3
	rm -rf -- "$out"
	rc=0
	VT_FAILALLOC=0 VT_FAILALLOC_COUNT="$VT_TMP/count" LD_PRELOAD=$SHIM "$@" \
		>"$VT_TMP/out" 2>"$VT_TMP/err" || rc=$?
	[ $rc = 0 ] || { cat "$VT_TMP/err"; fail "$what: exit $rc without a failure"; }
	k=$(cat "$VT_TMP/count")
	[ "$k" -gt 0 ] || fail "$what: no allocation counted (is the shim preloaded?)"
	ref=$(digest "$out")
	if [ "$k" -le "$CAP" ]; then
		ns=$(seq 1 "$k")
		echo "$what: $k allocations, each failed in turn"
	else
		ns=$(for ((i = 0; i < CAP; i++)); do echo $((1 + i * (k - 1) / (CAP - 1))); done)
		echo "$what: $k allocations; $CAP of them failed, spread evenly (1..$k)"
	fi
	for n in $ns; do
		rm -rf -- "$out" "$out.tmp"
		rc=0
		VT_FAILALLOC=$n LD_PRELOAD=$SHIM "$@" >"$VT_TMP/out" 2>"$VT_TMP/err" || rc=$?
		if grep -Eq 'Sanitizer|runtime error:' "$VT_TMP/err"; then
			head -30 "$VT_TMP/err"
			where_of "$n" "$@"
			fail "$what: allocation $n of $k failed: sanitizer report"
		fi
		if [ $rc = 0 ]; then
			if [ "$(digest "$out")" != "$ref" ]; then
				where_of "$n" "$@"
				fail "$what: allocation $n of $k failed: exit 0 with another output"
			fi
			same=$((same + 1))
			continue
		fi
		if [ $rc != 1 ] || ! grep -Eqi 'out of memory|cannot allocate' "$VT_TMP/err"; then
			sed 's/^/    /' "$VT_TMP/err" | head -5
			where_of "$n" "$@"
			fail "$what: allocation $n of $k failed: exit $rc, want 1 with an out-of-memory message"
		fi
		if [ "$atomic" = 1 ] && { [ -e "$out" ] || [ -e "$out.tmp" ]; }; then
			fail "$what: allocation $n of $k failed: $out or $out.tmp left behind"
		fi
		[ -e "$out" ] && partial=$((partial + 1))
		clean=$((clean + 1))
	done
	summary+=("$(printf '%-28s K=%-4s %4d failed cleanly (exit 1), %4d tolerated (same output)%s' \
		"$what" "$k" $clean $same \
		"$([ $partial = 0 ] || echo ", $partial left a partial output")")")
	echo "ok: $what"
}

V=$VT_BIN
start=$SECONDS
sweep "info (trace.dat)" - 0 "$V" info h
sweep "info (uftrace)" - 0 "$V" info qu
sweep "align --json" - 0 "$V" align h mk --json
sweep "merge -> perfetto" vm.pftrace 0 "$V" merge h qu gp mk gk -o vm.pftrace -q
sweep "merge -> json" vm.json 0 "$V" merge h qu gp mk gk -o vm.json -q
sweep "merge -> uftrace" vm.uft 0 "$V" merge h qu gp mk gk -o vm.uft -F uftrace -q
sweep "report (text, --html)" rep.html 0 "$V" report io/h io/g -n 5 --no-align -q --html rep.html
sweep "export --sqlite" io.db 1 "$V" export --sqlite io.db io/h io/g --no-align -q
[ "$(inputs)" = "$sum_in" ] || fail "an input changed"
echo
echo "allocation failures ($((SECONDS - start)) s; the inputs unchanged):"
printf '  %s\n' "${summary[@]}"
