# tests/align/lib.sh: shared helpers of the `vmtrace align` tests (sourced).
MKFIX="$VT_BUILD/tests/align/mkfixture"
PY=/usr/bin/python3
[ -x "$MKFIX" ] || { echo "mkfixture not built: $MKFIX"; exit 1; }

# check_json ALIGN.json TRUTH.json PYTHON-EXPR...: each expression must be
# true with j = vmtrace align --json output, t = the fixture's truth
check_json() {
	local a=$1 t=$2; shift 2
	"$PY" - "$a" "$t" "$@" <<'PYEOF'
import json, sys
j = json.load(open(sys.argv[1]))
t = json.load(open(sys.argv[2]))
ns = lambda ticks: ticks * 1e9 / t["hz"]
bad = 0
for e in sys.argv[3:]:
    ok = eval(e)
    print(("ok   " if ok else "FAIL ") + e)
    bad += not ok
sys.exit(1 if bad else 0)
PYEOF
}

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }

# Skip unless we can record the host (root, tracefs) and run QEMU.
need_record() {
	[ "$(id -u)" = 0 ] || skip "not root: vmtrace record needs tracefs"
	[ -d /sys/kernel/tracing/instances ] || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null ||
		skip "no tracefs at /sys/kernel/tracing"
	command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86_64 not installed (make deps)"
}

# held_out FULL.json SUBSET.json: the model built from SUBSET (every other
# marker) must place each held-out marker's host instant inside its guest
# bracket mapped to host time, widened by the bound of the segment holding
# that instant: the bound is honest, in every segment.
held_out() {
	"$PY" - "$1" "$2" <<'PYEOF'
import json, sys
full = json.load(open(sys.argv[1])); sub = json.load(open(sys.argv[2]))
hz = full["host_hz"]
used = {p["seq"] for p in sub["pairs"]}
worst, n, bad = 0.0, 0, 0
# each held-out marker against the segment (of its vCPU) holding its host instant
def seg_of(p):
    for g in sub["segments"]:
        end = g["tsc_host_end"] if g["tsc_host_end"] is not None else float("inf")
        if g["vcpu"] == p["vcpu"] and g["tsc_host_start"] <= p["tsc_host"] < end:
            return g
    return None
for p in full["pairs"]:
    if p["seq"] in used:
        continue
    seg = seg_of(p)
    if seg is None:
        print("held-out seq %d: no segment at host TSC %d" % (p["seq"], p["tsc_host"]))
        bad += 1
        continue
    b = seg["bound_ns"]
    lo = p["tsc_host"] - (p["tsc_guest_after"] - seg["ref_tsc_guest"]) / seg["slope"] - seg["ref_tsc_host"]
    hi = p["tsc_host"] - (p["tsc_guest_before"] - seg["ref_tsc_guest"]) / seg["slope"] - seg["ref_tsc_host"]
    # the host instant minus the mapped bracket ends, in ns: lo <= 0 <= hi ideally
    lo_ns, hi_ns = lo * 1e9 / hz, hi * 1e9 / hz
    out = max(-hi_ns, lo_ns, 0.0)
    worst = max(worst, out); n += 1
    if out > b:
        bad += 1
        print("held-out seq %d outside by %.0f ns (bound %.0f ns)" % (p["seq"], out, b))
print("held-out markers: %d in %d segment(s), worst excursion %.0f ns, bound from the rest %.0f ns"
      % (n, len(sub["segments"]), worst, sub["bound_ns"]))
sys.exit(1 if bad or n == 0 else 0)
PYEOF
}

# every_other IN OUT: a markers.dat with the even-indexed records of IN
every_other() {
	"$PY" -c '
import sys
d = open(sys.argv[1], "rb").read()
open(sys.argv[2], "wb").write(b"".join(d[i:i + 48] for i in range(0, len(d) - 47, 96)))
' "$1" "$2"
}

# meta_set DIR KEY=VALUE...: set (or, with an empty VALUE, remove) keys of
# DIR/vmtrace.meta
meta_set() {
	local dir=$1; shift
	"$PY" - "$dir/vmtrace.meta" "$@" <<'PYEOF'
import sys
path = sys.argv[1]
lines = open(path).read().splitlines()
for kv in sys.argv[2:]:
    k, v = kv.split("=", 1)
    lines = [l for l in lines if not l.startswith(k + "=")]
    if v:
        lines.append(k + "=" + v)
open(path, "w").write("\n".join(lines) + "\n")
PYEOF
}

# expect_exit CODE PATTERN -- command...: exits CODE, PATTERN in its stderr
expect_exit() {
	local want=$1 pat=$2; shift 3
	set +e; "$@" >out.txt 2>err.txt; local rc=$?; set -e
	[ "$rc" = "$want" ] || fail "exit $rc, want $want: $* ($(cat err.txt))"
	grep -qF -- "$pat" err.txt || fail "no '$pat' in stderr of $*: $(cat err.txt)"
}

# add_marker DIR KIND ADDR SEQ CPU BEFORE AFTER: append a guest marker record
# (docs/format/markers.md) to DIR/markers.dat; CPU -1: none
add_marker() {
	"$PY" - "$@" <<'PYEOF'
import struct, sys
d, kind, addr, seq, cpu, b, a = sys.argv[1], *[int(x, 0) for x in sys.argv[2:]]
size = 1 if kind == 4 else 4
val = (seq & 0xff) if kind == 4 else (0x56 << 24 | (seq & 0xffffff))
with open(d + "/markers.dat", "ab") as f:
    f.write(struct.pack("<IHBBQIIQQQ", 0x4b4d5456, 1, kind, size, addr, val, cpu & 0xffffffff, seq, b, a))
PYEOF
}
