#!/bin/bash
# timeout: 900
# san: skip: it adds to examples/t-unikernel-example (SAN-skipped, see there) the patched uftrace (a third-party tool, never a sanitizer build) and a host uftrace directory merged with the kernel trace, which merge/t-merge-vm and merge/t-merge-uftrace-records run under ASan
# examples/multi: the unikernel example with QEMU itself traced by the
# TSC-patched uftrace (built here if needed: tools/build-uftrace-tsc is
# idempotent and shared with tests/tools/t-uftrace-tsc).  Checks that the
# merged timeline holds the guest's functions, QEMU's library calls from
# uftrace and the host kernel's events, with the marker bound reported.
set -eu
out=$VT_TMP/out
for c in record debugcon align merge; do
	"$VT_BIN" $c --help >/dev/null 2>&1 || [ $? -ne 5 ] ||
		{ echo "SKIP: 'vmtrace $c' is not built yet"; exit 77; }
done
rc=0
VT_BUILD=$VT_BUILD "$VT_SRC/tools/build-uftrace-tsc" -q >build.log 2>&1 || rc=$?
if [ $rc -eq 5 ]; then
	echo "SKIP: uftrace with TSC timestamps cannot be built here: $(tail -1 build.log)"
	exit 77
fi
[ $rc -eq 0 ] || { cat build.log; echo "build-uftrace-tsc failed (exit $rc)"; exit 1; }
make -s --no-print-directory -C "$VT_SRC/examples/multi" O="$VT_BUILD" OUTDIR="$out" run | tee run.log
grep -q "alignment *markers: error bound" run.log
# QEMU's own trace replays with the system's uftrace
uftrace report -d "$out/qemu-uftrace" --no-pager >report.txt
grep -q writev report.txt
/usr/bin/python3 - "$out/merged.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"] if isinstance(d, dict) else d
names = {e.get("name") for e in ev if e.get("ph") in ("B", "X")}
assert "one_round" in names, "no guest function slices"
assert "writev" in names, "no QEMU (uftrace) slices"
# host syscalls: merge's slices on a thread's "syscalls" track (lane 2), or
# the instants of those it could not pair
assert any((e.get("ph") == "i" and e.get("name", "").startswith("sys_enter_")) or
           (e.get("ph") == "B" and e.get("tid", 0) // 10**9 == 2) for e in ev), \
    "no host kernel events"
print("ok: guest functions, QEMU library calls and host kernel events merged")
PY
host_ev=sys_enter_write
[ "$(sed -n 's/^accel=//p' "$out/run.txt")" = kvm ] && host_ev=kvm_pio
/usr/bin/python3 "$VT_SRC/tests/examples/check_outputs.py" "$out" one_round "$host_ev"
# QEMU's uftrace data (domain=host) is in the host's QEMU process, not a guest
/usr/bin/python3 - "$out/merged.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"] if isinstance(d, dict) else d
pids = {e["pid"] for e in ev if e.get("ph") == "B" and e.get("name") == "writev"}
names = {e["pid"]: e["args"]["name"] for e in ev if e.get("ph") == "M" and e.get("name") == "process_name"}
assert pids and all(p < 10000000 for p in pids), "QEMU's calls on a guest: %s" % pids
assert all(names.get(p, "").startswith("host: QEMU") for p in pids), [names.get(p) for p in pids]
print("ok: QEMU's calls in", sorted(names[p] for p in pids))
PY
