#!/bin/bash
# vmtrace.marker() and the tracer's markers_ms option (in-band hypercall
# sync markers, docs/format/markers.md): marker() sends one exactly when
# this machine runs under KVM (as `vmtrace marker --hypercall` decides, exit
# 5 otherwise) and returns its sequence number, else None; the periodic
# markers run from a C thread that the Python tracer does not see, start
# and stop with the tracer, and refuse a bad interval.  (On a KVM host the
# kvm_hypercall events carrying them are checked by align/t-align-kvm.)
set -eu
. "$VT_SRC/tests/python/common.sh"

rc=0
"$VT_BIN" marker --hypercall -o "$VT_TMP/m" -n 1 2>"$VT_TMP/m.err" || rc=$?
case $rc in 0) kvm=1 ;; 5) kvm=0 ;; *) vt_fail "vmtrace marker --hypercall exited $rc: $(cat "$VT_TMP/m.err")" ;; esac
echo "under KVM: $kvm"
vt_py - "$kvm" "$VT_TMP/d" <<'PY'
import sys, threading, time, vmtrace
kvm, d = sys.argv[1] == "1", sys.argv[2]
a, b = vmtrace.marker(), vmtrace.marker()
if kvm:
    assert (a, b) == (0, 1), (a, b)
else:
    assert a is None and b is None, (a, b)
try:
    vmtrace.start(d, markers_ms=0x7fffffff)
    sys.exit("an interval of 24 days was accepted")
except ValueError:
    pass
vmtrace.start(d, markers_ms=2)
n0 = threading.active_count()
time.sleep(0.05)
assert threading.active_count() == n0, "the marker thread is a Python thread"
vmtrace.stop()
# stopped: marker() works again (the periodic chain was closed)
c = vmtrace.marker()
assert (c is not None) == kvm and (not kvm or c > b), (c, b)
print("ok: marker() %s, periodic markers with the tracer" % ("sent" if kvm else "None (not KVM)"))
PY
# the tracer saw only this script's threads: no task of the C thread
tasks=$(ls "$VT_TMP/d"/*.dat | wc -l)
[ "$tasks" = 1 ] || vt_fail "$tasks trace files: the marker thread was traced"
