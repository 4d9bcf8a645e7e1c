#!/bin/bash
# One byte changed at 1000 random offsets of a debugcon dump of the test
# unikernel (frames: hello, records, markers, end): `vmtrace debugcon`
# decodes or refuses it, never crashes, never fails silently.
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
