#!/bin/bash
# t-tsc-khz-kcore: tools/tsc-khz-kcore reads tsc_khz with gdb.  The gdb
# mechanics are checked everywhere on a stand-in: the core (gcore) of a
# process holding a variable tsc_khz, with a kallsyms line for its address.
# Where /proc/kcore exists the real kernel value is read too and compared
# with the kernel's boot message; elsewhere that part is skipped (said so).
set -eu
tool=$VT_SRC/tools/tsc-khz-kcore
command -v gdb >/dev/null || { echo "SKIP: no gdb"; exit 77; }

cat >fake.c <<'EOS'
#include <unistd.h>
volatile unsigned int tsc_khz = 2096001;
int main(void) { pause(); return (int)tsc_khz; }
EOS
gcc -O0 -g -no-pie -o fake fake.c
./fake & pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
sleep 0.2
gdb -batch -nx -p $pid -ex "gcore fake.core" >gcore.log 2>&1 || { cat gcore.log; echo "gcore failed"; exit 1; }
kill $pid; wait $pid 2>/dev/null || true
addr=$(nm fake | awk '$3 == "tsc_khz" { print $1 }')
printf '%s D tsc_khz\n' "$addr" >kallsyms
hz=$(VT_KCORE=fake.core VT_KALLSYMS=kallsyms "$tool")
[ "$hz" = 2096001000 ] || { echo "stand-in: got '$hz', want 2096001000"; exit 1; }
[ "$(VT_KCORE=fake.core VT_KALLSYMS=kallsyms "$tool" --khz)" = 2096001 ]
echo "stand-in core: $hz Hz"

# `vmtrace tsc --kcore` runs this script as its method "kcore" (lib/tsc.c)
VT_TOOLS_DIR=$VT_SRC/tools VT_KCORE=fake.core VT_KALLSYMS=kallsyms "$VT_BIN" tsc --kcore --no-calibrate --json >tsc.json
/usr/bin/python3 - tsc.json <<'EOP'
import json, sys
m = [m for m in json.load(open(sys.argv[1]))["methods"] if m["name"] == "kcore"]
assert m and m[0]["status"] == "ok" and m[0]["hz"] == 2096001000, m
print("vmtrace tsc --kcore: method kcore ok,", m[0]["hz"], "Hz from the stand-in")
EOP
# with neither VT_TOOLS_DIR nor VT_SRC the tool is found above the binary's
# real path (build/bin and build/san/bin alike), also through a symlink
ln -s "$(readlink -f "$VT_BIN")" vmtrace-link
env -u VT_TOOLS_DIR -u VT_SRC VT_KCORE=fake.core VT_KALLSYMS=kallsyms ./vmtrace-link tsc --kcore \
	--no-calibrate --json >tsc2.json
/usr/bin/python3 - tsc2.json <<'EOP'
import json, sys
m = [m for m in json.load(open(sys.argv[1]))["methods"] if m["name"] == "kcore"]
assert m and m[0]["status"] == "ok" and m[0]["hz"] == 2096001000, m
print("vmtrace tsc --kcore (tool found from the binary's path): ok")
EOP

# kptr_restrict-style zero address -> exit 4; no core -> exit 5
printf '0000000000000000 D tsc_khz\n' >zero
set +e
VT_KCORE=fake.core VT_KALLSYMS=zero "$tool" 2>/dev/null; [ $? -eq 4 ] || { echo "zero address: not exit 4"; exit 1; }
VT_KCORE=/nonexistent "$tool" 2>/dev/null; [ $? -eq 5 ] || { echo "no kcore: not exit 5"; exit 1; }
set -e

if [ ! -e /proc/kcore ]; then
	echo "SKIP: no /proc/kcore on this machine: only the stand-in core was read ($hz Hz)"
	exit 77
fi
real=$("$tool")
boot=$(dmesg 2>/dev/null | sed -n 's/.*tsc: Detected \([0-9.]*\) MHz.*/\1/p' | tail -1)
echo "kcore: $real Hz; boot message: ${boot:-?} MHz"
if [ -n "$boot" ]; then
	awk -v r="$real" -v b="$boot" 'BEGIN { d = r / 1e6 - b; if (d < 0) d = -d; exit !(d < 1) }' ||
		{ echo "kcore $real Hz disagrees with the boot message $boot MHz"; exit 1; }
fi
