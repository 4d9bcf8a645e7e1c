#!/bin/bash
# vmtrace report leaves the interpreter's start-up out of its headline
# (docs/report.md, "the answer first"): a main script big enough that
# runpy's builtins.compile of it is the slowest call of the run is not in
# the headline - a C call that runpy (or the frozen loader, or the
# tracer) makes is start-up like the frame itself - while the program's
# own C calls stay, those made in a function and those made by the main
# module's body; --all-calls shows the compile.
. "$VT_SRC/tests/python/common.sh"
cd "$VT_TMP"
"$PY" - <<'PYEOF'
with open("big.py", "w") as f:
    for i in range(30000):
        f.write("def f%d(x):\n    return x + %d\n" % (i, i))
    f.write("import time\n"
            "def work():\n    time.sleep(0.08)\n"
            "work()\n"
            "time.sleep(0.04)\n")
PYEOF
vt_py -m vmtrace -o py big.py 2>py.err || { cat py.err; vt_fail "vmtrace exited $?"; }
"$VT_BIN" report py -q -n 20 >rep.txt || vt_fail "report exited $?"
"$VT_BIN" report py -q -n 20 --all-calls >all.txt || vt_fail "report --all-calls exited $?"
sed -n '1,/^$/p' all.txt
compile=$(sed -n 's/^  builtins\.compile \([0-9.]*\) ms.*/\1/p' all.txt | head -n1)
[ -n "$compile" ] || vt_fail "--all-calls: no builtins.compile in the headline"
# the compile was the slowest call: what the default headline leaves out
awk -v c="$compile" 'BEGIN { exit !(c > 80) }' || vt_skip "runpy's compile took only $compile ms here (not the slowest call: nothing to leave out)"
sed -n '1,/^$/p' rep.txt
if grep -q '^  builtins\.compile ' rep.txt; then vt_fail "runpy's builtins.compile in the headline"; fi
# the program's two sleeps (80 and 40 ms, longer on a loaded machine)
sleeps=$(sed -n 's/^  time\.sleep \([0-9.]*\) ms.*/\1/p' rep.txt | sort -n | tr '\n' ' ')
"$PY" - $sleeps <<'PYEOF' || vt_fail "the program's time.sleep calls (80 and 40 ms) not both in the headline: $sleeps"
import sys
ms = sorted(float(x) for x in sys.argv[1:])
sys.exit(not (len(ms) >= 2 and ms[-2] >= 40 and ms[-1] >= 80))
PYEOF
echo "ok: runpy's compile ($compile ms) out of the headline, the program's calls in it"
