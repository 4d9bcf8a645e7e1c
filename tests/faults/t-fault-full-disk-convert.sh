#!/bin/bash
# A full disk under `vmtrace convert` (lib/uftrace_convert.c): a 512 KB
# tmpfs filled to leave less and less room for the copy of a 300 KB
# clock=tsc directory, so that each of its writes (the info and .sym
# copies, the records, task.txt, vmtrace.meta) is the one that fails in
# some run: exit 1 with a message naming the output and "No space left",
# the input untouched; with room, the copy uftrace replays.
# timeout: 60
set -eu
. "$VT_SRC/tests/faults/lib.sh"
small_tmpfs "$VT_TMP/disk" 512k
MK="$VT_BUILD/tests/helpers/mkuftrace"
cd "$VT_TMP"

"$MK" synth tsc 2000000000 >/dev/null
# thread A's records 2000 times over (its calls repeat, nested as before)
"$PY" - tsc/4242.dat <<'PY'
import sys
p = sys.argv[1]
d = open(p, "rb").read()
open(p, "wb").write(d * 2000)
PY
sum=$(cat tsc/* | md5sum)
run_ok "convert on a roomy disk" "$VT_BIN" convert tsc roomy
uftrace replay -d roomy >/dev/null || fail "uftrace cannot replay the copy"

# room from 4 KB to 360 KB left, a page more each time: a failure at
# every write, then success
seen=""
for left in $(seq 4 4 360); do
	rm -rf disk/out disk/fill
	avail=$(df -k --output=avail disk | tail -1)
	if [ "$avail" -gt "$left" ]; then
		dd if=/dev/zero of=disk/fill bs=1k count=$((avail - left)) status=none 2>/dev/null || true
	fi
	rc=0
	"$VT_BIN" convert tsc disk/out 2>err.out || rc=$?
	case $rc in
	0) seen="$seen ok" ;;
	1) grep -q "disk/out.*No space left" err.out || { cat err.out; fail "left $left KB: message"; }
	   f=$(sed -n 's/.*disk\/out\/\([^:]*\):.*/\1/p' err.out | head -1)
	   seen="$seen ${f:-?}" ;;
	*) cat err.out; fail "left $left KB: exit $rc" ;;
	esac
done
echo "failed at, by room left:$seen"
[ "$(cat tsc/* | md5sum)" = "$sum" ] || fail "the input changed"
for f in 4242.dat task.txt vmtrace.meta; do
	case "$seen" in *" $f"*) ;; *) fail "no run failed writing $f" ;; esac
done
case "$seen" in *ok*) ;; *) fail "no run had room enough" ;; esac
echo ok
