#!/bin/bash
# t-virtiofsd-nosandbox: patches/virtiofsd-no-namespacing.patch applies to
# Debian 12's qemu 7.2 source and its virtiofsd builds
# (tools/build-virtiofsd-nosandbox); then the patched virtiofsd runs with
# -o sandbox=none under uftrace, served to a QEMU (TCG, paused) that
# connects its vhost-user-fs device, and uftrace records its library calls
# past the point where the sandbox used to start.  Skipped only when the
# source package cannot be fetched.  The patch is applied to a fresh
# unpack each run; the build comes from the script's cache when one with
# the same source, patch, script and compiler was made (VT_VFS_CACHE).
# timeout: 1500
# san: skip: no vmtrace C code runs here (a patched virtiofsd under uftrace)
set -eu
rc=0
"$VT_SRC/tools/build-virtiofsd-nosandbox" -q >build.log 2>&1 || rc=$?
if [ $rc -eq 5 ]; then
	cat build.log
	echo "SKIP: the qemu 7.2 source package cannot be fetched here: $(tail -1 build.log)"
	exit 77
fi
[ $rc -eq 0 ] || { cat build.log; echo "build-virtiofsd-nosandbox failed (exit $rc)"; exit 1; }
cat build.log	# the patch applied; built now, or the same-keyed build's copy
V=${VT_PATCH_BUILD:-$VT_SRC/build}/virtiofsd-nosandbox/virtiofsd
"$V" --help | grep -q 'sandbox=namespace|chroot|none'
"$VT_SRC/tools/build-virtiofsd-nosandbox" 2>&1 | grep -q 'WARNING: .*WHOLE HOST FILE SYSTEM'
echo "patched virtiofsd built: $V"

command -v uftrace >/dev/null || { echo "SKIP: built and applied; no uftrace to run it under"; exit 77; }
command -v qemu-system-x86_64 >/dev/null || { echo "SKIP: built and applied; no qemu-system-x86_64"; exit 77; }
mkdir share
sock=$VT_TMP/vfs.sock
uftrace record --force -d ufd "$V" --socket-path="$sock" -o source="$VT_TMP/share" -o sandbox=none \
	>vfs.log 2>&1 & upid=$!
for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.1; done
[ -S "$sock" ] || { cat vfs.log; echo "virtiofsd made no socket"; exit 1; }
timeout 30 qemu-system-x86_64 -accel tcg -S -m 128 -display none -monitor none -serial none \
	-object memory-backend-memfd,id=mem,size=128M,share=on -numa node,memdev=mem \
	-chardev socket,id=c,path="$sock" -device vhost-user-fs-pci,chardev=c,tag=vt \
	>qemu.log 2>&1 & qpid=$!
# virtiofsd sets up its (absent) sandbox once QEMU has connected
for _ in $(seq 100); do grep -q 'virtio_loop: Entry' vfs.log && break; sleep 0.1; done
kill $qpid 2>/dev/null || true
wait $qpid 2>/dev/null || true
# QEMU gone: virtiofsd leaves its loop and exits, uftrace writes its data
for _ in $(seq 100); do kill -0 $upid 2>/dev/null || break; sleep 0.1; done
kill $upid 2>/dev/null && { cat vfs.log; echo "virtiofsd did not exit after QEMU left"; exit 1; }
wait $upid || { cat vfs.log; echo "uftrace record failed"; exit 1; }
cat vfs.log
grep -q 'sandbox=none: NO SANDBOX' vfs.log
grep -q 'virtio_loop: Entry' vfs.log
uftrace replay -d ufd >replay.txt
n=$(grep -c '|' replay.txt || true)
# chdir(source) is called by the sandbox=none setup, after QEMU connected
grep -q '| *chdir();' replay.txt ||
	{ tail -20 replay.txt; echo "no chdir() (called only once QEMU connected) recorded"; exit 1; }
echo "uftrace recorded $n calls of virtiofsd -o sandbox=none (with a vhost-user client)"
