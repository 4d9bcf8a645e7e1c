#!/bin/bash
# Output directories vmtrace run cannot use: a clear message naming the
# directory, a non-zero exit (2 for a non-empty one without --force), and
# the program never started.
# timeout: 30
set -eu
. "$VT_SRC/tests/guest/mcount-lib.sh"

check() {	# check DESCRIPTION DIR [OPTIONS]
	local what=$1 dir=$2 rc=0
	shift 2
	"$VT_BIN" run -o "$dir" "$@" -- /usr/bin/touch "$VT_TMP/started" \
		2>"$VT_TMP/err" || rc=$?
	cat "$VT_TMP/err"
	[ "$rc" != 0 ] || { echo "FAIL: $what: exit 0"; exit 1; }
	grep -qF "$dir" "$VT_TMP/err" || { echo "FAIL: $what: message lacks $dir"; exit 1; }
	[ ! -e "$VT_TMP/started" ] || { echo "FAIL: $what: program ran"; exit 1; }
	[ -z "${want:-}" ] || [ "$rc" = "$want" ] ||
		{ echo "FAIL: $what: exit $rc, want $want"; exit 1; }
	echo "$what: exit $rc"
}

touch "$VT_TMP/file"
check "parent is a file" "$VT_TMP/file/out"
check "in /proc" /proc/vmtrace-out
mkdir -p "$VT_TMP/old" && echo x >"$VT_TMP/old/keep"
want=2 check "non-empty without --force (usage error, like record)" "$VT_TMP/old"
[ "$(cat "$VT_TMP/old/keep")" = x ]
mkdir -p "$VT_TMP/ro"
if mount -t tmpfs -o ro none "$VT_TMP/ro" 2>/dev/null; then
	check "read-only file system" "$VT_TMP/ro/out" || { umount "$VT_TMP/ro"; exit 1; }
	umount "$VT_TMP/ro"
fi
rc=0
"$VT_BIN" run -o "$VT_TMP/x" --depth 0 -- /bin/true 2>"$VT_TMP/err" || rc=$?
cat "$VT_TMP/err"
[ "$rc" = 2 ] && grep -q depth "$VT_TMP/err"
