#!/bin/bash
# save-restore.sh ELF OUTDIR: run the freestanding marker guest ELF (built
# with -DMARKER_PROGRESS) under KVM, save it midway with QEMU's migration
# to a file, and continue it in a second QEMU (-incoming): one guest, two
# KVM VMs one after the other.  Run under `vmtrace record -- ...` by
# t-align-restore.sh.  Leaves OUTDIR/markers.dat (the guest's, dumped by the
# second QEMU at its end), OUTDIR/progress-{a,b} (a byte per marker),
# OUTDIR/state (the saved VM).  Exit status: the second QEMU's (1: the
# guest's isa-debug-exit), 90+ for a failed step.
set -u
elf=$1 out=$2
mon=$(mktemp -u /tmp/vt-mon.XXXXXX)	# a socket: never on a 9p share
SAVE_AT=${SAVE_AT:-8}		# markers before the save
qemu_common=(qemu-system-x86_64 -enable-kvm -kernel "$elf" -m 16 -nodefaults -no-reboot
	-display none -serial none -device isa-debug-exit,iobase=0xf4,iosize=4)

"${qemu_common[@]}" -name vma,debug-threads=on -monitor unix:"$mon",server,nowait \
	-device isa-debugcon,iobase=0x4e9,chardev=dump -chardev file,id=dump,path="$out/markers-a.dat" \
	-device isa-debugcon,iobase=0x4ea,chardev=prog -chardev file,id=prog,path="$out/progress-a" \
	2>"$out/qemu-a.log" &
qa=$!
# one process does the monitor's part (a process start is slow in the lab):
# wait for SAVE_AT progress bytes, migrate to the file, wait, quit
if ! /usr/bin/python3 - "$mon" "$out/progress-a" "$SAVE_AT" "$out/state" <<'PYEOF'
import os, socket, sys, time
mon, prog, at, state = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
t0 = time.time()
while not (os.path.exists(prog) and os.path.getsize(prog) >= at):
    if time.time() - t0 > 60:
        sys.exit("save-restore: the first VM did not reach marker %d" % at)
    time.sleep(0.02)
s = socket.socket(socket.AF_UNIX)
s.connect(mon)
s.settimeout(10)
def cmd(c):
    buf = b""
    if c is not None:
        s.sendall(c.encode() + b"\n")
    while not buf.endswith(b"(qemu) "):
        d = s.recv(4096)
        if not d:
            break
        buf += d
    return buf.decode(errors="replace")
cmd(None)
cmd('migrate "exec:cat > %s"' % state)
while True:
    st = cmd("info migrate")
    if "Migration status: completed" in st:
        break
    if "Migration status: failed" in st or time.time() - t0 > 60:
        sys.exit("save-restore: migration did not complete: " + st)
    time.sleep(0.05)
print("save-restore: saved after %d markers (%d bytes)" % (os.path.getsize(prog), os.path.getsize(state)))
s.sendall(b"quit\n")
PYEOF
then
	kill $qa 2>/dev/null
	wait $qa
	echo "save-restore: first QEMU exit $? after $(stat -c %s "$out/progress-a" 2>/dev/null) markers: $(tail -3 "$out/qemu-a.log")"
	exit 91
fi
wait $qa
sleep 0.5	# a visible gap on the host timeline
rc=0
"${qemu_common[@]}" -name vmb,debug-threads=on -monitor none -incoming "exec:cat $out/state" \
	-device isa-debugcon,iobase=0x4e9,chardev=dump -chardev file,id=dump,path="$out/markers.dat" \
	-device isa-debugcon,iobase=0x4ea,chardev=prog -chardev file,id=prog,path="$out/progress-b" || rc=$?
echo "save-restore: the restored VM ran $(stat -c %s "$out/progress-b" 2>/dev/null || echo 0) markers, exit $rc"
exit $rc
