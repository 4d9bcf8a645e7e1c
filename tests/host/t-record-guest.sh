#!/bin/bash
# `vmtrace record --guest -- dd ... conv=fsync`: the trace holds block and
# syscall events of the command; trace-cmd report, libtracecmd (tdcount)
# and the recorder's own count agree; metadata says guest/tsc/x86-tsc.
# timeout: 60
set -eu
. "$VT_SRC/tests/host/lib.sh"
need_tracefs

# a file on a real disk (not tmpfs) so the block layer sees the writes
disk=$VT_TMP
[ "$(stat -f -c %T "$disk")" = tmpfs ] && disk=/var/tmp
f=$(mktemp "$disk/vt-dd.XXXXXX")
trap 'rm -f "$f"' EXIT

"$VT_BIN" record --guest -o out -- dd if=/dev/zero of="$f" bs=64k count=32 conv=fsync 2>err.txt
cat err.txt
grep -q "events, .* 0 lost" err.txt || fail "summary line missing"
[ "$(stat -c %a out/trace.dat)" = 644 ] || fail "trace.dat mode not 0644"
ls out | grep -q raw && fail "raw per-CPU files left"

[ "$(meta domain out)" = guest ] || fail "domain"
[ "$(meta clock out)" = tsc ] || fail "clock"
[ "$(meta trace_clock out)" = x86-tsc ] || fail "trace_clock"
[ "$(meta record.command_exit out)" = 0 ] || fail "exit status not recorded"
[ "$(meta lost.total out)" = 0 ] || fail "lost events"
vendor=$(awk -F': *' '/^vendor_id/ { print $2; exit }' /proc/cpuinfo)
[ -z "$vendor" ] || [ "$(meta cpu.vendor out)" = "$vendor" ] || fail "cpu.vendor is not '$vendor'"

"$TDCOUNT" out/trace.dat >counts.txt
cat counts.txt
for ev in block:block_rq_issue block:block_rq_complete syscalls:sys_enter_fsync \
	  syscalls:sys_enter_write syscalls:sys_exit_write sched:sched_switch; do
	grep -q "^event $ev [1-9]" counts.txt || fail "no $ev event"
done
# syscalls are only the command's: every syscall event's pid is in record.pids
pids=$(meta record.pids out)
"$TDCOUNT" -f syscalls:sys_enter_write:common_pid out/trace.dat | grep "^common_pid=" | sed 's/common_pid=\([0-9]*\).*/\1/' |
	sort -u | while read -r p; do
		case ",$pids," in *",$p,"*) ;; *) fail "write syscall of untraced pid $p";; esac
	done
# trace-cmd knows the clock and the writes
trace-cmd report out/trace.dat 2>/dev/null | grep -q 'sys_enter_fsync' || fail "trace-cmd: no fsync"
check_counts out
# vmtrace info describes the recorder dir: its per-event counts and total
# are libtracecmd's (tdcount), its lost count the recorder's
"$VT_BIN" info out >info.txt
grep '^  event ' info.txt | sed 's/^  //' | sort >info-events.txt
grep '^event ' counts.txt | sort >td-events.txt
diff td-events.txt info-events.txt || fail "vmtrace info: event counts differ from libtracecmd's"
[ "$(sed -n 's/^  events: *//p' info.txt)" = "$(sed -n 's/^total //p' counts.txt)" ] ||
	fail "vmtrace info: total differs from libtracecmd's"
[ "$(sed -n 's/^  cpus: *//p' info.txt)" = "$(sed -n 's/^cpus //p' counts.txt)" ] ||
	fail "vmtrace info: CPU count differs"
grep -q '^  lost: *0$' info.txt || fail "vmtrace info: lost count missing"
echo "guest recording of dd: OK"
