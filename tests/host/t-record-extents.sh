#!/bin/bash
# `vmtrace record`'s extents.tsv (docs/format/extents.md): a stand-in for
# QEMU (a process with a thread named "CPU 0/KVM", as the KVM facts find
# QEMU's vCPU threads) holds a 2 MiB image file open, written through, then
# writes 4 KiB at 3 MiB, past its end, and exits before the recording
# ends: the start reading has the file's one extent, at QEMU's fd; the end
# reading - by the file's name, QEMU gone - has the block allocated during
# the run too; the image's second fd, opened after the vCPU thread
# started, is an fd line; FIEMAP's own answer (filefrag, when installed) agrees; a
# log-sized file (under 1 MiB) is left out; the file reads back through
# lib/extents.c (vmtrace report maps nothing of a recording without bios,
# but refuses nothing).
# timeout: 60
set -eu
. "$VT_SRC/tests/host/lib.sh"
need_tracefs
PY=/usr/bin/python3
img=$VT_TMP/disk.img
# a file system with FIEMAP (tmpfs has none)
dd if=/dev/zero of="$img" bs=1M count=2 conv=fsync status=none
truncate -s 8M "$img"
filefrag -e "$img" >/dev/null 2>&1 || { echo "SKIP: no FIEMAP on $VT_TMP's file system"; exit 77; }
head -c 1000 /dev/zero >"$VT_TMP/small.log"
cat >fakeqemu.py <<'PYEOF'
import ctypes, os, sys, threading, time
libc = ctypes.CDLL(None)
fd = os.open(sys.argv[1], os.O_RDWR)
log = os.open(sys.argv[2], os.O_RDWR)
print("fd", fd, flush=True)
def vcpu():
    libc.prctl(15, b"CPU 0/KVM", 0, 0, 0)
    time.sleep(2.5)
t = threading.Thread(target=vcpu); t.start()
time.sleep(0.6)
# QEMU opens its image again once its vCPU threads run: a later scan
# of its fds finds the second one
fd2 = os.open(sys.argv[1], os.O_RDONLY)
print("fd2", fd2, flush=True)
time.sleep(0.9)
os.pwrite(fd, b"x" * 4096, 3 << 20)     # a block allocated during the run
os.fsync(fd)
t.join()
PYEOF
"$VT_BIN" record -o rec -e syscalls:sys_enter_pwrite64 -- "$PY" fakeqemu.py "$img" "$VT_TMP/small.log" >out.txt 2>&1 ||
	{ cat out.txt; fail "record failed"; }
cat out.txt rec/extents.tsv
fd=$(sed -n 's/^fd //p' out.txt) fd2=$(sed -n 's/^fd2 //p' out.txt)
ino=$(stat -c %i "$img")
"$PY" - rec/extents.tsv "$fd" "$ino" "$(stat -c '%Hd:%Ld' "$img")" "$fd2" <<'PYEOF'
import sys
lines = open(sys.argv[1]).read().split("\n")
if lines[0] != "# vmtrace-extents 1":
    sys.exit("FAIL: no magic line")
rows = [l.split("\t") for l in lines if l and not l.startswith("#")]
fd, ino, dev = sys.argv[2], sys.argv[3], sys.argv[4]
start = [r for r in rows if r[0] == "start"]
end = [r for r in rows if r[0] == "end"]
alias = [r for r in rows if r[0] == "fd"]
def bad(why):
    sys.exit("FAIL: %s: %s" % (why, rows))
# the image's other fd: one fd line, no extent
if [(r[2], r[3], r[4], r[7:]) for r in alias] != [(sys.argv[5], ino, dev, ["0", "0", "0", "0x0"])]:
    bad("not one fd line for the image's other fd %s" % sys.argv[5])
rows = start + end
if len(rows) + len(alias) != len([l for l in lines if l and not l.startswith("#")]):
    bad("a line neither start, end nor fd")
if any(r[3] != ino or r[2] != fd or r[4] != dev for r in rows):
    bad("not the image at its fd %s, inode %s, st_dev %s (the log?)" % (fd, ino, dev))
if sum(int(r[9]) for r in start) != 2 << 20 or int(start[0][7]) != 0:
    bad("start: not the 2 MiB written")
if sum(int(r[9]) for r in end) != (2 << 20) + 4096 or not any(int(r[7]) == 3 << 20 for r in end):
    bad("end: not the 2 MiB and the 4 KiB at 3 MiB")
print("ok: start %d extent(s), end %d with the block allocated in the run" % (len(start), len(end)))
PYEOF
# FIEMAP's own reading (filefrag -e, in file system blocks) of the end
if command -v filefrag >/dev/null; then
	bs=$(stat -f -c %S "$img")
	filefrag -e "$img" | awk -v bs="$bs" -F'[ :.]+' '$2 ~ /^[0-9]+$/ && NF > 6 { printf "%.0f %.0f\n", $3 * bs, $5 * bs }' |
		sort >ff.txt
	awk -F'\t' '$1 == "end" { print $8, $9 }' rec/extents.tsv | sort >ours.txt
	diff ff.txt ours.txt || fail "the end reading differs from filefrag -e"
	echo "ok: the end reading is filefrag's"
fi
"$VT_BIN" report rec -q >rep.txt 2>&1 || { cat rep.txt; fail "report refused the recording's extents.tsv"; }
echo "ok: extents.tsv read back"
