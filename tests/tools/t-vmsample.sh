#!/bin/bash
# t-vmsample: tools/vmtrace-sample samples a freestanding multiboot guest
# (tests/tools/spinguest: spins in spin_main -> spin_round -> spin_heavy /
# spin_light, heavy ~3x light) run by QEMU under TCG behind its gdbstub;
# every sampled function name must be one of the guest's symbols, the
# heavy leaf must dominate, and the timestamps must be host TSC ticks
# taken during the run.
# timeout: 120
set -eu
elf=$VT_BUILD/tests/tools/spin.elf
rdtsc=$VT_BUILD/tests/tools/rdtsc
command -v gdb >/dev/null || { echo "SKIP: no gdb"; exit 77; }
command -v qemu-system-i386 >/dev/null || { echo "SKIP: no qemu-system-i386"; exit 77; }
[ -f "$elf" ] && [ -x "$rdtsc" ] || { echo "missing $elf or $rdtsc (make test builds them)"; exit 1; }

port=$(/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
timeout 100 qemu-system-i386 -accel tcg -m 32 -kernel "$elf" -display none -monitor none \
	-serial none -S -gdb tcp:127.0.0.1:$port >qemu.log 2>&1 & qpid=$!
trap 'kill $qpid 2>/dev/null || true' EXIT
for _ in $(seq 50); do (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null && break; sleep 0.1; done

before=$("$rdtsc")
"$VT_SRC/tools/vmtrace-sample" -o prof -t 127.0.0.1:$port -r 100 -n 80 --start spin_main --kill "$elf"
after=$("$rdtsc")
wait $qpid 2>/dev/null || true

cat prof/samples.folded
# every frame of every stack is a symbol of the guest
nm "$elf" | awk '{ print $3 }' | sort -u >syms.txt
cut -d' ' -f1 prof/samples.folded | tr ';' '\n' | sort -u >frames.txt
unknown=$(comm -23 frames.txt syms.txt)
[ -z "$unknown" ] || { echo "frames that are not guest symbols: $unknown"; exit 1; }
grep -q '^_start;spin_main;spin_round;spin_heavy ' prof/samples.folded
heavy=$(awk '/;spin_heavy / { print $2 }' prof/samples.folded)
light=$(awk '/;spin_light / { s += $2 } END { print s + 0 }' prof/samples.folded)
total=$(awk '{ s += $2 } END { print s }' prof/samples.folded)
echo "samples: $total, spin_heavy $heavy, spin_light $light"
[ "$total" -eq 80 ] && [ "$heavy" -gt "$light" ]

# the track: header, TSC timestamps inside the run, in order, pc in the leaf
head -1 prof/samples.tsv | grep -qx '# vmtrace-samples 1'
grep -qx '# clock=tsc rate_hz=100' prof/samples.tsv
grep -v '^#' prof/samples.tsv | awk -F'\t' -v a="$before" -v b="$after" '
	$1 < a || $1 > b || $1 < prev { print "bad time", $1; bad = 1 } { prev = $1 }
	NF != 6 { print "bad line", $0; bad = 1 } END { exit bad }'
# lib/samples.c (what vmtrace merge uses) reads the file and sees the
# same stacks as samples.folded
"$VT_BUILD/tests/tools/samples-cat" prof/samples.tsv | sort | uniq -c | awk '{ print $2, $1 }' >cat.folded
sort prof/samples.folded | diff - cat.folded
[ "$("$VT_BIN" meta prof clock)" = tsc ] && [ "$("$VT_BIN" meta prof domain)" = host ]
# the same pc <-> symbol answer from a consumer we did not write (addr2line)
pc=$(grep -v '^#' prof/samples.tsv | awk -F'\t' '$6 ~ /spin_heavy$/ { print $5; exit }')
addr2line -f -e "$elf" "$pc" | head -1 | grep -qx spin_heavy
med=$(grep -v '^#' prof/samples.tsv | cut -f2 | sort -n | awk '{ e[NR] = $1 } END { print e[int((NR + 1) / 2)] }')
echo "timestamp error bound (half the interrupt latency): median $med ticks"
