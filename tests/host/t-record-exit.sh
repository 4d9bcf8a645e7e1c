#!/bin/bash
# `vmtrace record -- CMD` passes CMD's own exit status through (33, as QEMU's
# isa-debug-exit gives), 128 + N for a command killed by signal N, and
# records it in vmtrace.meta (record.command_exit, and its pid:
# record.command_pid); a recorder failure
# returns the recorder's code (docs/exit-codes.md) with no command status
# in the meta, so scripts can tell the two apart.
set -eu
. "$VT_SRC/tests/host/lib.sh"
need_tracefs
rc=0
"$VT_BIN" record -o a -- sh -c 'exit 33' || rc=$?
[ $rc = 33 ] || fail "exit 33 came back as $rc"
[ "$(meta record.command_exit a)" = 33 ] || fail "meta record.command_exit: $(meta record.command_exit a)"
# the command's pid (merge takes it for QEMU's when there is no KVM): the
# process whose tasks record.pids lists first
p=$(meta record.command_pid a)
[ -n "$p" ] && [ "$(meta record.pids a | cut -d, -f1)" = "$p" ] && [ "$(meta record.tgids a | cut -d, -f1)" = "$p" ] ||
	fail "record.command_pid '$p' is not the first of record.pids '$(meta record.pids a)' / tgids '$(meta record.tgids a)'"
rc=0
"$VT_BIN" record -o b -- sh -c 'kill -TERM $$' || rc=$?
[ $rc = 143 ] || fail "SIGTERM came back as $rc, want 143"
[ "$(meta record.command_exit b)" = "signal 15" ] || fail "meta: $(meta record.command_exit b)"
rc=0
"$VT_BIN" record -o b -- true 2>err.txt || rc=$?	# b exists: a recorder failure
[ $rc = 1 ] || [ $rc = 2 ] || fail "recorder failure returned $rc"
grep -q '^vmtrace: record: ' err.txt || fail "no recorder message: $(cat err.txt)"
[ "$(meta record.command_exit b)" = "signal 15" ] || fail "the earlier recording's meta changed"
echo "ok: 33 and 143 passed through, recorder failure $rc with its message"
