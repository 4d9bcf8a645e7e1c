#!/bin/bash
# t-tsc: `vmtrace tsc` agrees with the kernel's own TSC figure (its boot
# log, read here with dmesg/journalctl) within 0.1 %; its independent
# CLOCK_MONOTONIC_RAW calibration does too; --json parses with python3 and
# lists every method; -q prints just the Hz.
# timeout: 60
set -eu
cd "$VT_TMP"
fail() { echo "FAIL: $*"; exit 1; }

log=$( { dmesg 2>/dev/null || true; journalctl -k -b 0 -q --no-pager -o cat 2>/dev/null || true; } |
	grep -E "tsc: (Refined TSC clocksource calibration|Detected) " || true)
[ -n "$log" ] || { echo "no 'tsc:' line in dmesg or the journal to compare with"; exit 77; }
line=$(echo "$log" | grep "Refined" | tail -1)
[ -n "$line" ] || line=$(echo "$log" | grep "Detected" | tail -1)
kmhz=$(echo "$line" | grep -oE '[0-9]+\.[0-9]+ MHz' | head -1 | cut -d' ' -f1)
echo "kernel: $line"

hz=$("$VT_BIN" tsc -q)
echo "vmtrace tsc -q: $hz"
[[ $hz =~ ^[0-9]+$ ]] || fail "-q output is not a number"

"$VT_BIN" tsc --json >tsc.json
"$VT_BIN" tsc
/usr/bin/python3 - "$kmhz" "$hz" <<'PY' || fail "disagreement"
import json, sys
kernel_hz = float(sys.argv[1]) * 1e6
q_hz = int(sys.argv[2])
j = json.load(open("tsc.json"))
names = [m["name"] for m in j["methods"]]
for want in ("cpuid-15h", "cpuid-16h", "perf-mmap", "kernel-refined", "kernel-detected",
             "calibrate", "kcore"):
    assert want in names, (want, names)
for hz, what in ((j["hz"], "json"), (q_hz, "-q")):
    off = abs(hz - kernel_hz) / kernel_hz
    print("%s: %d Hz, %.4f%% from the kernel's %.0f Hz" % (what, hz, off * 100, kernel_hz))
    assert off < 0.001, what
cal = [m for m in j["methods"] if m["name"] == "calibrate"][0]
assert cal["status"] == "ok", cal
off = abs(cal["hz"] - kernel_hz) / kernel_hz
print("calibration: %d Hz, %.4f%% from the kernel" % (cal["hz"], off * 100))
assert off < 0.001, "calibration"
PY
# the kcore method runs tools/tsc-khz-kcore only with --kcore; its plumbing
# is checked with stand-in tools (tests/tools/t-tsc-khz-kcore tests the tool)
mkdir -p tools-ok tools-no
printf '#!/bin/sh\necho 2096001000\n' >tools-ok/tsc-khz-kcore
printf '#!/bin/sh\necho "no tsc_khz here" >&2; exit 5\n' >tools-no/tsc-khz-kcore
chmod +x tools-ok/tsc-khz-kcore tools-no/tsc-khz-kcore
: >fake-kcore
VT_KCORE=fake-kcore VT_TOOLS_DIR=tools-ok "$VT_BIN" tsc --no-calibrate >kc.out
grep -Eq "^kcore +skipped .*--kcore" kc.out || fail "kcore run without --kcore"
VT_KCORE=fake-kcore VT_TOOLS_DIR=tools-ok "$VT_BIN" tsc --kcore --no-calibrate | tee kc.out
grep -Eq "^kcore +ok +2096.001000" kc.out || fail "kcore via the tool"
VT_KCORE=fake-kcore VT_TOOLS_DIR=tools-no "$VT_BIN" tsc --kcore --no-calibrate | tee kc.out
grep -Eq "^kcore +skipped +- +no tsc_khz here" kc.out || fail "kcore tool unavailable: skipped with its reason"
VT_KCORE=/nonexistent "$VT_BIN" tsc --kcore --no-calibrate | grep -Eq "^kcore +skipped +- +no /nonexistent" ||
	fail "no kcore: skipped"

"$VT_BIN" tsc --bogus 2>/dev/null && fail "bad option accepted"
[ $? -eq 2 ] || fail "bad option: exit code"
echo "ok"
