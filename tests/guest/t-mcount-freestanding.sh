#!/bin/bash
# libvmtrace-mcount-free.a linked into a -nostdlib -ffreestanding static
# program (own _start, raw syscalls): its -pg calls come out as debugcon
# frames on stdout, `vmtrace debugcon` decodes them, uftrace replays the
# exact tree.  A buffer too small stops recording, stays balanced and
# counts what was lost.
# timeout: 60
set -eu
. "$VT_SRC/tests/guest/mcount-lib.sh"
need_uftrace

prog="$GPROGS/freestanding-test"
# no libc, no dynamic section: really freestanding
if readelf -d "$prog" | grep -q NEEDED; then echo "FAIL: links a shared library"; exit 1; fi
if nm "$prog" | grep -q ' U '; then echo "FAIL: undefined symbols"; exit 1; fi

for m in big small; do
	"$prog" $m >"$VT_TMP/$m.bin"
	"$VT_BIN" debugcon -o "$VT_TMP/$m" --elf "$prog" "$VT_TMP/$m.bin" | tee "$VT_TMP/$m.out"
	uftrace replay -d "$VT_TMP/$m" -f tid --no-pager | sed -n 's/^ *\[ *[0-9]*\] | //p' \
		>"$VT_TMP/tree"
	same_text "freestanding $m" "$EXPECT/fs-$m.txt" "$VT_TMP/tree"
	uftrace dump -d "$VT_TMP/$m" --no-pager >"$VT_TMP/dump"
	[ "$(grep -c '\[entry\]' "$VT_TMP/dump")" = "$(grep -c '\[exit \]' "$VT_TMP/dump")" ]
done
# (uftrace 0.13's --chrome writes invalid JSON after a LOST record: only
# the complete trace goes through it)
chrome_balanced "$VT_TMP/big" 20
grep -q ' 20 records (0 lost' "$VT_TMP/big.out"
# 10 record slots: 8 records + the LOST marker; 6 calls dropped = 12 records
grep -q ' 9 records (12 lost' "$VT_TMP/small.out"
uftrace dump -d "$VT_TMP/small" --no-pager | grep -q '\[lost \]'
