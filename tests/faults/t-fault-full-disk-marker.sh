#!/bin/bash
# A full disk under `vmtrace marker` (hypercall markers: where this
# machine runs under KVM, no port access needed): markers.dat on a 64 KB
# tmpfs left without room, the first record's write fails: exit 1, the
# file and "No space left" named, no record in it.
set -eu
. "$VT_SRC/tests/faults/lib.sh"
lscpu 2>/dev/null | grep -q '^Hypervisor vendor: *KVM$' ||
	skip "not under KVM: vmtrace marker --hypercall would fault (t-marker checks it refuses)"
small_tmpfs "$VT_TMP/disk" 64k
mkdir "$VT_TMP/disk/m"
dd if=/dev/zero of="$VT_TMP/disk/fill" bs=4k 2>/dev/null || true
run_fails "marker on a full disk" 'marker: .*/disk/m/markers.dat: write: No space left on device' \
	"$VT_BIN" marker --hypercall -n 3 --interval 0 -o "$VT_TMP/disk/m"
[ ! -s "$VT_TMP/disk/m/markers.dat" ] || fail "a record written on a full disk"
rm "$VT_TMP/disk/fill"
"$VT_BIN" marker --hypercall -n 3 --interval 0 -o "$VT_TMP/disk/m"
[ "$(stat -c %s "$VT_TMP/disk/m/markers.dat")" = 144 ] || fail "with room: not 3 records"
echo "marker: a full disk fails the write, named; with room, 3 records"
