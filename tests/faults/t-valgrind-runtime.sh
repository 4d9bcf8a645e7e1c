#!/bin/bash
# The mcount runtime under valgrind (memcheck, --error-exitcode): the
# preloaded libvmtrace-mcount.so in 3-thread programs built with -pg,
# -pg -mfentry and -finstrument-functions, and the freestanding
# libvmtrace-mcount-free.a program; no memory error, no leak, and the
# traces are exact (uftrace replay of each thread against tests/guest/expect).
# timeout: 240
# san: skip: valgrind cannot run ASan-built code: the plain build runs this test
set -eu
. "$VT_SRC/tests/faults/lib.sh"
. "$VT_SRC/tests/guest/mcount-lib.sh"
need_uftrace
command -v valgrind >/dev/null || skip "valgrind not installed (make deps)"
lib="$VT_BUILD/lib/libvmtrace-mcount.so"
[ -f "$lib" ] || fail "$lib not built"
# -pg programs run glibc's gprof timer (ITIMER_PROF); at exit gmon restores
# the old SIGPROF action before the timer stops, so under valgrind's slow
# pace a last SIGPROF can kill the program.  Ignored SIGPROF is inherited
# and is what gmon restores: that race has nothing to do with the runtime.
trap '' PROF
VG=(valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite)

for p in mt-pg mt-fentry mt-cyg; do
	d="$VT_TMP/$p"
	# valgrind loads the program itself: LD_PRELOAD reaches it (and only it)
	rc=0
	LD_PRELOAD="$lib" VMTRACE_DIR="$d" "${VG[@]}" "$GPROGS/$p" >/dev/null 2>"$VT_TMP/vg" || rc=$?
	cat "$VT_TMP/vg"
	[ $rc = 0 ] || fail "$p under valgrind: exit $rc"
	# linked in without `vmtrace run`: no tsc.hz in the meta; any rate keeps the tree
	"$VT_BIN" convert --tsc-hz 2000000000 "$d" "$d.ns" >/dev/null
	tids=$(cd "$d" && ls *.dat | sed 's/\.dat//' | sort -n)
	pid=$(echo "$tids" | head -1)
	[ "$(echo "$tids" | wc -l)" = 3 ] || fail "$p: $(echo $tids | wc -w) threads traced, want 3"
	for t in $tids; do
		replay_tid "$d.ns" "$t" >"$VT_TMP/tree"
		if [ "$t" = "$pid" ]; then exp=mt-main.txt; else exp=mt-worker.txt; fi
		same_text "$p thread $t" "$EXPECT/$exp" "$VT_TMP/tree"
	done
	echo "ok: $p: no valgrind error, exact trees of 3 threads"
done

prog="$GPROGS/freestanding-test"
rc=0
"${VG[@]}" "$prog" big >"$VT_TMP/big.bin" 2>"$VT_TMP/vg" || rc=$?
cat "$VT_TMP/vg"
[ $rc = 0 ] || fail "freestanding-test under valgrind: exit $rc"
"$VT_BIN" debugcon -o "$VT_TMP/big" --elf "$prog" "$VT_TMP/big.bin" >/dev/null
uftrace replay -d "$VT_TMP/big" -f tid --no-pager | sed -n 's/^ *\[ *[0-9]*\] | //p' >"$VT_TMP/tree"
same_text "freestanding under valgrind" "$EXPECT/fs-big.txt" "$VT_TMP/tree"
echo "ok: freestanding runtime: no valgrind error, exact tree"
