#!/bin/bash
# b-align-kvm.sh: the error bound of in-band hypercall markers against the
# number of markers and their rate, on a real KVM (this machine's, else the
# KVM lab's).  Guests: tests/align/marker-guest-hc100-GAP.elf, 100 markers
# GAP TSC ticks apart (0.4M, 4M, 40M: ~0.2, 2, 20 ms), each also kept in the
# guest's markers.dat.  For K = 1, 3, 10, 30, 100 the first K records of
# markers.dat give `vmtrace align`'s bound; the exact offset (debugfs
# tsc-offset, to the tick on a full KVM) gives the true error of the
# estimate, which must lie inside the bound.  Also reported: the cost of one
# marker to the guest (median of its readings' after - before).
# Usage: b-align-kvm.sh
set -eu
: "${VT_SRC:?}" "${VT_BUILD:?}" "${VT_TMP:=$(mktemp -d)}"
VT_BIN=${VT_BIN:-$VT_BUILD/bin/vmtrace}
[ "$(id -u)" = 0 ] || { echo "b-align-kvm: needs root"; exit 0; }
if [ -z "${VT_IN_LAB:-}" ] && ! "$VT_BUILD/bin/vt-kvm-probe" >/dev/null 2>&1; then
	echo "b-align-kvm: no full KVM here: running in the KVM lab (timings of an emulated host)"
	exec "$VT_BUILD/bin/vmtrace-lab" -q -o "$VT_TMP" -- "$0" "$@"
fi
cd "$VT_TMP"
for gap in 400000 4000000 40000000; do
	elf=$VT_BUILD/tests/align/marker-guest-hc100-$gap.elf
	[ -f "$elf" ] || { echo "b-align-kvm: $elf not built (make bench builds it)"; exit 1; }
	mkdir -p g$gap
	"$VT_BIN" record -o h$gap -- qemu-system-x86_64 -enable-kvm -name hc,debug-threads=on \
		-kernel "$elf" -device isa-debugcon,iobase=0x4e9,chardev=dump \
		-chardev file,id=dump,path=g$gap/markers.dat -device isa-debug-exit,iobase=0xf4,iosize=4 \
		-display none -serial none -monitor none -nodefaults -no-reboot -m 16 >rec$gap.log 2>&1 || true
	for k in 1 3 10 30 100; do
		mkdir -p g$gap-$k
		head -c $((48 * k)) g$gap/markers.dat >g$gap-$k/markers.dat
		"$VT_BIN" align h$gap g$gap-$k --json --pairs >a$gap-$k.json 2>/dev/null || true
	done
done
/usr/bin/python3 - <<'PY'
import json, statistics
print("in-band hypercall markers: error bound (us) by number of markers and their spacing;")
print("true error = |estimate - exact offset (debugfs)|, always inside the bound")
print("%-12s %8s %8s %8s %8s %8s   %s" % ("spacing", "K=1", "3", "10", "30", "100", "true error at K=100 (us)"))
cost = []
for gap, label in ((400000, "~0.2 ms"), (4000000, "~2 ms"), (40000000, "~20 ms")):
    row, err = [], "-"
    for k in (1, 3, 10, 30, 100):
        try:
            j = json.load(open("a%d-%d.json" % (gap, k)))
        except Exception:
            row.append("-"); continue
        hz = j["host_hz"]
        seg = j["segments"][0]
        row.append("%.1f" % (j["bound_ns"] / 1e3) if j.get("bound_ns") is not None else "-")
        exact = [s for s in j["sources"] if s["source"] == "debugfs" and s["tsc_host"] == seg["ref_tsc_host"]]
        if exact:
            e = abs(exact[0]["offset_tsc"] - seg["offset_tsc"]) * 1e6 / hz
            assert e * 1e3 <= j["bound_ns"], "true error %.1f us outside the bound" % e
            if k == 100:
                err = "%.1f" % e
        if k == 100:
            cost += [(p["tsc_guest_after"] - p["tsc_guest_before"]) * 1e6 / hz for p in j["pairs"]]
    print("%-12s %8s %8s %8s %8s %8s   %s" % ((label,) + tuple(row) + (err,)))
if cost:
    print("cost of one marker to the guest (after - before, median of %d): %.1f us" % (len(cost), statistics.median(cost)))
PY
