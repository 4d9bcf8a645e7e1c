#!/bin/bash
# timeout: 240
# examples/python-virtio's accelerator fallback, without KVM: the probe is
# told KVM works (VT_KVM_PROBE=true) and QEMU is tests/examples/fake-kvm-qemu,
# whose "-accel kvm" guest never answers the boot handshake (as Linux under
# PVM's KVM, ENVIRONMENT.md).  With a 3 s handshake bound the example must
# try KVM once, say plainly that KVM could not boot the guest and that it
# uses TCG, record it in run.txt, and complete the whole workflow under TCG
# (outputs checked by check_outputs.py, as in t-python-virtio.sh).  With
# ACCEL=kvm the same hang, or a failing probe, must stop the example with
# the reason instead of falling back.
# san: skip: the accelerator fallback is the example's own shell logic (a fake QEMU that never boots); the vmtrace steps after it run under ASan in examples/t-python-virtio
set -eu
out=$VT_TMP/out
for c in record marker align merge; do
	"$VT_BIN" $c --help >/dev/null 2>&1 || [ $? -ne 5 ] ||
		{ echo "SKIP: 'vmtrace $c' is not built yet"; exit 77; }
done
[ -d "$VT_BUILD/python" ] || { echo "SKIP: the Python extension ($VT_BUILD/python) is not built yet"; exit 77; }
[ -f "$VT_BUILD/tests/host/pio-guest.elf" ] || { echo "FAIL: pio-guest.elf not built"; exit 1; }
BOUND=3
export VT_KVM_PROBE=true FAKE_KVM_LOG=$VT_TMP/accels.txt
make -s --no-print-directory -C "$VT_SRC/examples/python-virtio" O="$VT_BUILD" \
	OUTDIR="$out" QEMU="$VT_SRC/tests/examples/fake-kvm-qemu" VT_BOOT_TIMEOUT=$BOUND \
	ROUNDS=1 MB=1 run | tee run.log
# QEMU ran twice: KVM asked for first, then TCG
[ "$(tr '\n' ' ' <accels.txt)" = "kvm tcg " ] || { cat accels.txt; echo "FAIL: QEMU runs: want kvm, then tcg"; exit 1; }
grep -q "^python-virtio: booting under KVM (handshake bound $BOUND s)" run.log
grep -q "^python-virtio: KVM could not boot the Linux guest: no boot handshake on the serial console within $BOUND s .* -> using TCG" run.log
grep -q '^python-virtio: guest ran under tcg in ' run.log
grep -qx 'accel=tcg' "$out/run.txt" || { echo "FAIL: run.txt: accel is not tcg"; exit 1; }
grep -q "^accel_note=KVM could not boot the Linux guest: no boot handshake on the serial console within $BOUND s" "$out/run.txt" ||
	{ echo "FAIL: run.txt: no accel_note saying why KVM was left"; exit 1; }
# the run under TCG went to its end: host recording, align, merge, summary
grep -q "alignment *markers: error bound" run.log || { echo "FAIL: no alignment line"; exit 1; }
grep -q "slowest guest functions" run.log || { echo "FAIL: no slowest-functions table"; exit 1; }
# and trace-cmd report shows QEMU's syscalls (check_outputs.py)
/usr/bin/python3 "$VT_SRC/tests/examples/check_outputs.py" --qemu-syscalls "$out" __main__.write_file sys_enter_

# ACCEL=kvm: no fall back, exit 1 with the reason (boot-test: no recording)
rc=0
make -s --no-print-directory -C "$VT_SRC/examples/python-virtio" O="$VT_BUILD" \
	OUTDIR="$VT_TMP/out-kvm" QEMU="$VT_SRC/tests/examples/fake-kvm-qemu" VT_BOOT_TIMEOUT=$BOUND \
	ACCEL=kvm boot-test >kvm.log 2>&1 || rc=$?
cat kvm.log
[ $rc -ne 0 ] || { echo "FAIL: ACCEL=kvm with a hanging KVM guest exited 0"; exit 1; }
grep -q "^python-virtio: KVM could not boot the Linux guest: no boot handshake on the serial console within $BOUND s" kvm.log
if grep -q 'using TCG' kvm.log; then
	echo "FAIL: ACCEL=kvm fell back to TCG"; exit 1
fi
rc=0
VT_KVM_PROBE="$VT_BUILD/bin/vt-kvm-probe /nonexistent/kvm" \
	make -s --no-print-directory -C "$VT_SRC/examples/python-virtio" O="$VT_BUILD" \
	OUTDIR="$VT_TMP/out-probe" QEMU="$VT_SRC/tests/examples/fake-kvm-qemu" ACCEL=kvm \
	boot-test >probe.log 2>&1 || rc=$?
cat probe.log
[ $rc -ne 0 ] || { echo "FAIL: ACCEL=kvm with a failing probe exited 0"; exit 1; }
grep -q '^python-virtio: ACCEL=kvm: no /nonexistent/kvm: cannot open it read-write: No such file or directory$' probe.log
[ "$(tr '\n' ' ' <accels.txt)" = "kvm tcg kvm " ] || { cat accels.txt; echo "FAIL: QEMU ran for the failed probe"; exit 1; }
echo "ok: KVM tried for $BOUND s, said so, fell back to TCG, workflow complete; ACCEL=kvm stops with the reason"
