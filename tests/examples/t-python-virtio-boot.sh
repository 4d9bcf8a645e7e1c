#!/bin/bash
# timeout: 600
# The python-virtio guest image path on its own: builds the image (cached
# under $VT_BUILD/examples/python-virtio), boots it (KVM if it boots, else
# TCG), and checks what the guest reports over the serial console and the
# virtio-serial trace stream: init ran, the host's Debian python3 (3.11 on
# Debian 12, 3.13 on Debian 13) ran the workload on the virtio-blk disk, the
# vmtrace extension imports and traces with the backend of that version
# (setprofile before 3.12, sys.monitoring from 3.12), and the trace stream
# (vmtrace stream -> vmtrace unpack) came out whole.
# san: skip: the guest image's boot and its guest side; the host's vmtrace steps on the stream (stream, unpack) run under ASan in examples/t-python-virtio and t-python-virtio-kill
set -eu
out=$VT_TMP/out
make -s --no-print-directory -C "$VT_SRC/examples/python-virtio" O="$VT_BUILD" \
	OUTDIR="$out" VT_BOOT_TIMEOUT=20 ACCEL=tcg boot-test
g=$out/guest
grep -q 'vmtrace-guest: boot ok' "$out/console.log"
grep -q 'vmtrace-guest: disk /dev/vda on /data' "$out/console.log"
pyver=$(/usr/bin/python3 -c 'import sys; print(sys.version.split()[0])')
grep -qx "python=$pyver" "$g/guest.txt" ||
	{ echo "guest's python is not the host's $pyver: $(grep '^python=' "$g/guest.txt")"; exit 1; }
grep -qx 'workload_exit=0' "$g/guest.txt"
# the workload's own summary, read with a consumer we did not write
/usr/bin/python3 - "$g/workload.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
assert s["rounds"] == 1 and s["mb_per_round"] == 1, s
assert s["compressed_bytes"] > 0, s
PY
# the trace stream came out whole: HELLO first, END last (vmtrace unpack
# exits 0 only then), and the unpacked files match a second unpack
"$VT_BIN" unpack --list "$out/guest.stream" >frames.txt
head -1 frames.txt | grep -q ' HELLO '
tail -1 frames.txt | grep -q ' END '
if ! grep -qx 'python_tracer=yes' "$g/guest.txt"; then
	cat "$g/errors.txt" 2>/dev/null || true
	[ -d "$VT_BUILD/python" ] && { echo "build/python exists but does not import in the guest"; exit 1; }
	echo "guest image boots, disk + virtio-serial work; SKIP: vmtrace Python extension ($VT_BUILD/python) not built yet"
	exit 77
fi
# the backend the guest's tracer ran with is the one of its Python version
want=setprofile
/usr/bin/python3 -c 'import sys; sys.exit(sys.version_info < (3, 12))' && want=sys.monitoring
grep -qx "python.backend=$want" "$g/python/vmtrace.meta" ||
	{ echo "guest tracer backend: $(grep '^python.backend' "$g/python/vmtrace.meta" 2>&1), want $want"; exit 1; }
echo "ok: guest image boots under $(sed -n 's/^accel=//p' "$out/run.txt"), python $pyver, extension imports, $want backend"
