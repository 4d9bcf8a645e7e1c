#!/bin/bash
# One byte changed at 1000 random offsets of a trace stream (`vmtrace
# stream --once` of a Python tracer directory: HELLO, DATA of every file,
# END): `vmtrace unpack` rebuilds it or stops at the damaged frame with a
# message (exit 3; exit 1 when the damage is in the first frame: nothing is
# recovered, no directory is left), never crashes, never fails silently;
# and a stream cut
# at 50 points: exit 3, the message names the stream and the offset.
# timeout: 300
set -eu
. "$VT_SRC/tests/faults/lib.sh"

w="$VT_TMP/w"
mkdir -p "$w/in" "$w/src"
cat >"$w/work.py" <<'PY'
import json
def enc(n):
    return json.dumps(list(range(n)))
for i in range(50):
    enc(i)
PY
pre=
nm -D "$VT_BUILD"/python/vmtrace/_vmtrace*.so 2>/dev/null | grep -q __asan_init &&
	pre="$(gcc -print-file-name=libasan.so) $(gcc -print-file-name=libubsan.so)"
LD_PRELOAD=$pre ASAN_OPTIONS=detect_leaks=0 PYTHONPATH="$VT_BUILD/python" \
	$PY -m vmtrace -o "$w/src/py" "$w/work.py" >/dev/null 2>&1 || true
[ -d "$w/src/py" ] || skip "the Python tracer did not run (build/python missing?)"
printf 'hello\n' >"$w/src/notes.txt"
"$VT_BIN" stream --once "$w/src" "$w/in/s.bin"
run_ok "unpack of the intact stream" "$VT_BIN" unpack "$w/in/s.bin" -o "$w/ok"
diff -r "$w/src" "$w/ok" || fail "the intact stream does not rebuild the directory"
size=$(stat -c %s "$w/in/s.bin")
for i in $(seq 1 50); do
	cut=$((size * i / 51))
	head -c $cut "$w/in/s.bin" >"$w/cut.bin"
	rm -rf "$w/cut"
	rc=0
	"$VT_BIN" unpack "$w/cut.bin" -o "$w/cut" >/dev/null 2>"$w/cut.err" || rc=$?
	[ $rc -eq 3 ] || fail "stream cut at $cut: exit $rc, want 3"
	grep -Eq "cut.bin: (offset [0-9]+: truncated frame|ends at offset [0-9]+ without an END)" "$w/cut.err" ||
		fail "stream cut at $cut: message '$(cat "$w/cut.err")'"
done
echo "ok: 50 cut streams exit 3 naming the stream and offset"
"$MUTATE" --count "$MUTANTS" --ok 0,1,3 "$w/in" s.bin -- "$VT_BIN" unpack "{dir}/s.bin" -o "{out}"
