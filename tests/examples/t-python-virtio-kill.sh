#!/bin/bash
# timeout: 600
# The python-virtio trace stream survives a killed guest: boots the example
# (guest side only), waits until the host's copy of the stream holds data
# of the Python tracer's store, SIGKILLs QEMU mid-run, and checks that
# the example and `vmtrace unpack` keep the prefix (exit 3: cut short, no
# END frame) and that what arrived is a readable trace: uftrace replays the
# unpacked Python directory (after `vmtrace convert` to nanoseconds).
set -eu
out=$VT_TMP/out
[ -d "$VT_BUILD/python" ] || { echo "SKIP: the Python extension ($VT_BUILD/python) is not built yet"; exit 77; }
ex=$VT_SRC/examples/python-virtio
make -s --no-print-directory -C "$ex" O="$VT_BUILD" image >image.log 2>&1 ||
	{ tail image.log; echo "the guest image did not build"; exit 1; }
# run.sh directly: a workload far longer than the kill point (boot-test
# fixes 1 round), guest side only
VT_BUILD=$VT_BUILD VT_CACHE=$VT_BUILD/examples/python-virtio VT_OUT=$out VT_ACCEL=tcg \
	VT_BOOT_TIMEOUT=20 VT_ROUNDS=200 VT_MB=2 VT_GUEST_ONLY=1 "$ex/run.sh" >run.log 2>&1 &
mk=$!
end=$((SECONDS + 500))
while ! "$VT_BIN" unpack --list "$out/guest.stream" 2>/dev/null |
	grep -Eq ' DATA python/[0-9]+\.dat [0-9]+ [1-9]'; do
	kill -0 $mk 2>/dev/null || { cat run.log; echo "the example ended before Python data was streamed"; exit 1; }
	[ $SECONDS -lt $end ] || { kill $mk; echo "no Python data streamed within 500 s"; exit 1; }
	sleep 0.5
done
# one more streaming interval, then kill -9 QEMU mid-workload
sleep 1
grep -q 'vmtrace-guest: workload exit' "$out/console.log" &&
	{ echo "the workload ended before the kill: raise ROUNDS"; exit 1; }
kill -9 "$(cat "$out/qemu.pid")"
wait $mk && { echo "the example did not notice the killed guest"; exit 1; }
# the example itself unpacked what arrived and said where
grep -q "what the guest streamed before it stopped is in $out/guest" run.log ||
	{ cat run.log; echo "the example did not keep the streamed prefix"; exit 1; }
ls "$out"/guest/python/[0-9]*.dat >/dev/null
rc=0
"$VT_BIN" unpack "$out/guest.stream" -o part 2>unpack.err || rc=$?
cat unpack.err
[ $rc -eq 3 ] || { echo "vmtrace unpack exit $rc, want 3 (cut short)"; exit 1; }
grep -q 'without an END frame\|truncated frame' unpack.err
py=$(ls -d part/python)
ls "$py"/[0-9]*.dat >/dev/null
"$VT_BIN" convert "$py" ns >/dev/null 2>&1 || [ $? -eq 3 ]
uftrace replay -d ns -f none 2>/dev/null | grep -q '__main__\.' ||
	{ echo "uftrace cannot replay the streamed prefix"; exit 1; }
echo "ok: killed guest, $(stat -c %s "$out/guest.stream") stream bytes kept, $(uftrace replay -d ns -f none 2>/dev/null | grep -c '__main__\.') __main__ calls replayed"
