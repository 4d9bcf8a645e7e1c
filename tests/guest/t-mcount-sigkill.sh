#!/bin/bash
# A traced program killed with SIGKILL after filling several 64 KiB
# buffers: vmtrace run reports it (exit 137), and uftrace still reads
# every flushed record (whole buffers of tick() calls); also when
# `vmtrace run` itself is killed first (nobody writes the final info).
# timeout: 60
set -eu
. "$VT_SRC/tests/guest/mcount-lib.sh"
need_uftrace

d="$VT_TMP/killed"
fifo="$VT_TMP/fifo"
mkfifo "$fifo"
"$VT_BIN" run -o "$d" -- "$GPROGS/killme-pg" 20000 >"$fifo" &
run=$!
read -r line <"$fifo"
[ "$line" = ready ]
prog=$(pgrep -P "$run" killme-pg)
kill -KILL "$prog"
rc=0
wait "$run" || rc=$?
echo "vmtrace run exit: $rc"
[ "$rc" = 137 ]
size=$(stat -c %s "$d/$prog.dat")
echo "$prog.dat: $size bytes"
# 20000 calls = 40001 records; every full buffer (4096 records) was written
[ "$size" -ge $((9 * 65536)) ] && [ $((size % 65536)) = 0 ]
uftrace dump -d "$d" --no-pager >"$VT_TMP/dump"
n=$(grep -c '\[entry\] tick(' "$VT_TMP/dump")
echo "uftrace reads $n tick() entries"
[ "$n" -ge 18000 ]
uftrace replay -d "$d" --no-pager | grep -q 'tick();'

# kill vmtrace run first, then the program: the runtime's info is enough
d="$VT_TMP/killed2"
"$VT_BIN" run -o "$d" -- "$GPROGS/killme-pg" 20000 >"$fifo" &
run=$!
read -r line <"$fifo"
prog=$(pgrep -P "$run" killme-pg)
kill -KILL "$run"
wait "$run" || true
kill -KILL "$prog"
uftrace dump -d "$d" --no-pager >"$VT_TMP/dump"
n=$(grep -c '\[entry\] tick(' "$VT_TMP/dump")
echo "both killed: uftrace reads $n tick() entries"
[ "$n" -ge 18000 ]
