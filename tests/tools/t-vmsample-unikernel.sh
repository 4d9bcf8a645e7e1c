#!/bin/bash
# t-vmsample-unikernel: tools/vmtrace-sample on the project's freestanding
# guest, the sampling image of the test unikernel (build/guest/
# unikernel-spin.elf: main.c built with -DUNIK_SPIN_MS, spinning in
# unik_spin -> unik_spin_round -> unik_spin_heavy (4x) / unik_spin_light
# before its usual traced run), 64-bit, under qemu-system-x86_64 TCG.
# Every sampled frame must be a symbol of the unikernel (nm), the heavy
# leaf must dominate, and `vmtrace merge` must turn the session into
# "samples vCPU 0" instants whose names and times (host TSC -> ns with the
# session's tsc.hz) are the samples.tsv lines (python3 json, protoc).
# timeout: 120
set -eu
elf=$VT_BUILD/guest/unikernel-spin.elf
syms=$VT_BUILD/guest/unikernel-spin64.elf
command -v gdb >/dev/null || { echo "SKIP: no gdb"; exit 77; }
command -v qemu-system-x86_64 >/dev/null || { echo "SKIP: no qemu-system-x86_64"; exit 77; }
[ -f "$elf" ] && [ -f "$syms" ] || { echo "missing $elf (make test builds it)"; exit 1; }
PY=/usr/bin/python3

port=$($PY -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
timeout 100 qemu-system-x86_64 -accel tcg -m 64 -kernel "$elf" -display none -monitor none \
	-serial none -S -gdb tcp:127.0.0.1:$port >qemu.log 2>&1 & qpid=$!
trap 'kill $qpid 2>/dev/null || true' EXIT
for _ in $(seq 50); do (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null && break; sleep 0.1; done

# the ELF64 copy gives gdb the x86-64 architecture (the ELF32 one boots)
"$VT_SRC/tools/vmtrace-sample" -o prof -t 127.0.0.1:$port -r 100 -n 60 --start unik_spin \
	--kill "$syms"
wait $qpid 2>/dev/null || true

cat prof/samples.folded
nm "$syms" | awk '{ print $3 }' | sort -u >syms.txt
cut -d' ' -f1 prof/samples.folded | tr ';' '\n' | sort -u >frames.txt
unknown=$(comm -23 frames.txt syms.txt)
[ -z "$unknown" ] || { echo "FAIL: frames that are not unikernel symbols: $unknown"; exit 1; }
grep -q ';unikernel_main;unik_spin;unik_spin_round;unik_spin_heavy ' prof/samples.folded ||
	{ echo "FAIL: no unikernel_main;unik_spin;unik_spin_round;unik_spin_heavy stack"; exit 1; }
heavy=$(awk '/;unik_spin_heavy / { s += $2 } END { print s + 0 }' prof/samples.folded)
light=$(awk '/;unik_spin_light / { s += $2 } END { print s + 0 }' prof/samples.folded)
total=$(awk '{ s += $2 } END { print s }' prof/samples.folded)
echo "samples: $total, unik_spin_heavy $heavy, unik_spin_light $light"
[ "$total" -eq 60 ] && [ "$heavy" -gt "$light" ] && [ "$heavy" -gt $((total / 2)) ] ||
	{ echo "FAIL: the heavy function does not dominate"; exit 1; }

# the session as a merge track
[ "$("$VT_BIN" meta prof format)" = samples ]
"$VT_BIN" merge prof -o prof.json 2>merge.txt || { cat merge.txt; exit 1; }
hz=$("$VT_BIN" meta prof tsc.hz)
$PY - prof.json prof/samples.tsv "$hz" <<'PYEOF'
import json, sys
from fractions import Fraction
ev = json.load(open(sys.argv[1]))["traceEvents"]
hz = Fraction(sys.argv[3])
want = []
for line in open(sys.argv[2]):
    if line.startswith("#"):
        continue
    t, err, mono, vcpu, pc, stack = line.rstrip("\n").split("\t")
    # ns = floor(tsc * 1e9 / hz) (merge's fixed point is within 1 ns of it)
    want.append((stack.split(";")[-1], int(t) * 10**9 / hz, stack, int(pc, 16)))
got = [(e["name"], e["ts"], e["args"]["stack"], e["args"]["pc"]) for e in ev if e["ph"] == "i"]
if len(got) != len(want):
    sys.exit("FAIL: %d sample events, want %d" % (len(got), len(want)))
for g, w in zip(got, want):
    if g[0] != w[0] or g[2:] != w[2:] or abs(Fraction(str(g[1])) * 1000 - w[1]) > 2:
        sys.exit("FAIL: event %s, want %s (ns %s)" % (g, w, float(w[1])))
names = {e["args"]["name"] for e in ev if e["ph"] == "M"}
if not {"trace: samples", "samples vCPU 0"} <= names:
    sys.exit("FAIL: track names %s" % names)
print("ok: %d sample events at the samples' times" % len(got))
PYEOF
"$VT_BIN" merge prof -o prof.pftrace -q
protoc --decode=perfetto.protos.Trace -I "$VT_SRC/merge" "$VT_SRC/merge/perfetto_subset.proto" \
	<prof.pftrace >prof.txt
$PY "$VT_SRC/tests/merge/perfetto_check.py" prof.txt
[ "$(grep -c TYPE_INSTANT prof.txt)" -eq 60 ] || { echo "FAIL: instants in the Perfetto trace"; exit 1; }
# uftrace sink: each sample a zero-length call, uftrace replay counts them
"$VT_BIN" merge prof -o prof-uftrace -q
n=$(uftrace replay -d prof-uftrace | grep -c 'unik_spin_heavy();' || true)
[ "$n" -eq "$heavy" ] || { echo "FAIL: uftrace replay shows $n unik_spin_heavy, want $heavy"; exit 1; }
echo "ok"
