#!/bin/bash
# `vmtrace record --python` on the CPython 3.13 build of tools/build-cpython313
# (--enable-shared --with-dtrace: the markers are in libpython3.13.so).  3.13
# has no function markers (removed in 3.12, CPython issue 104280): the
# recorder says so, and gc collections and imports by module name are
# recorded; every uprobe we created is gone after a normal exit, SIGINT,
# the traced process killed, and -p PID exiting.
# timeout: 180
set -eu
PREFIX=${VT_CPY313_PREFIX:-/var/cache/vmtrace/cpython-3.13}
PY=$PREFIX/bin/python3.13
[ -x $PY ] || { echo "skip: no CPython 3.13 build at $PREFIX (tools/build-cpython313 makes it)"; exit 77; }
LIB=$(ls $PREFIX/lib/libpython3.13.so.1.0 2>/dev/null || true)
[ -n "$LIB" ] && readelf -n $LIB | grep -q 'Provider: python' ||
	{ echo "skip: $PREFIX is not an --enable-shared --with-dtrace build"; exit 77; }
[ -w /sys/kernel/tracing/uprobe_events ] || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null || true
[ -w /sys/kernel/tracing/uprobe_events ] || { echo "skip: no writable uprobe_events (not root or no tracefs)"; exit 77; }
S=$VT_SRC/tests/usdt/scripts
. $S/common.sh

$VT_BIN record --python -o out -- $PY $S/workload.py 2>err.txt || { cat err.txt; exit 1; }
cat err.txt
grep -q "python markers of $(readlink -f $LIB)" err.txt
grep -q "no function markers" err.txt
no_probes_left "normal exit"
trace-cmd report out/trace.dat >report.txt 2>/dev/null
if grep -q 'function__' report.txt; then
	echo "FAIL: function markers recorded on 3.13, which has none"; exit 1
fi
n_gc=$(grep -c 'gc__start:' report.txt || true)
n_gcd=$(grep -c 'gc__done:' report.txt || true)
echo "gc__start: $n_gc gc__done: $n_gcd"
[ "$n_gc" -ge 3 ] && [ "$n_gc" -eq "$n_gcd" ]
for g in 0 1 2; do grep 'gc__start:' report.txt | grep -q "generation=$g"; done
for m in json fractions decimal; do
	grep 'import__find__load__start:' report.txt | grep -q "module=\"$m\"" ||
		{ echo "import of $m not recorded"; exit 1; }
	grep 'import__find__load__done:' report.txt | grep "module=\"$m\"" | grep -q 'found=1' ||
		{ echo "import of $m not done/found"; exit 1; }
done
$VT_BIN merge out -o out.json -q
/usr/bin/python3 $S/check_merge.py out.json gc-imports
# --python=BINARY finds the libpython the loader maps for the executable
$VT_BIN record --python=$PY -o outb -e sched:sched_switch -- /bin/true 2>errb.txt
grep -q "python markers of $(readlink -f $LIB)" errb.txt
check_cleanup $PY
echo ok
