#!/bin/bash
# One byte changed at 1000 random offsets of a debugcon dump of the test
# unikernel (frames: hello, records, markers, end): `vmtrace debugcon`
# decodes or refuses it, never crashes, never fails silently.  Then the
# intact dump onto a full disk: the records frame's write fails, the
# decode stops at that frame with the file and the reason (exit 1).
# timeout: 300
set -eu
. "$VT_SRC/tests/faults/lib.sh"

w="$VT_TMP/w"
mkdir -p "$w/in"
cp "$VT_SRC/tests/fuzz/corpus/debugcon/unikernel-tcg" "$w/in/dump.bin"
elf=()
[ -f "$VT_BUILD/guest/unikernel64.elf" ] && elf=(--elf "$VT_BUILD/guest/unikernel64.elf")
run_ok "decode of the intact dump" "$VT_BIN" debugcon -o "$w/ok" "${elf[@]}" "$w/in/dump.bin"
"$MUTATE" --count "$MUTANTS" "$w/in" dump.bin \
	-- "$VT_BIN" debugcon -o "{out}" "${elf[@]}" "{dir}/dump.bin"
small_tmpfs "$VT_TMP/disk" 64k
head -c 1M /dev/zero >"$VT_TMP/disk/fill" 2>/dev/null || true
run_fails "decode onto a full disk" \
	"^vmtrace: debugcon: $VT_TMP/disk/o/1\\.dat: write failed: No space left on device\$" \
	"$VT_BIN" debugcon -o "$VT_TMP/disk/o" "${elf[@]}" "$w/in/dump.bin"
