#!/bin/bash
# A full disk (400 KB tmpfs, filled ahead) under `vmtrace export --sqlite`
# (merge/report/sink_sqlite.c) on the report's known-answer fixture: no room
# for the schema, or room for the rows but not for the last commit: exit 1
# with a message naming the database and what failed, no OUT.db and no
# OUT.db.tmp left; with room, the database is made.
# timeout: 120
set -eu
. "$VT_SRC/tests/faults/lib.sh"
. "$VT_SRC/tests/report/common.sh"
small_tmpfs "$VT_TMP/disk" 400k
cd "$VT_TMP"
mk_fixture . 40 >/dev/null
disk="$VT_TMP/disk"
export_fill() {	# KB filled ahead, then the export
	rm -f "$disk"/*
	head -c $(($1 * 1024)) /dev/zero >"$disk/fill" 2>/dev/null || true
	"$VT_BIN" export --sqlite "$disk/o.db" h g --no-align -q
}
no_db() {
	[ ! -e "$disk/o.db" ] && [ ! -e "$disk/o.db.tmp" ] || fail "$1: a database left: $(ls "$disk")"
}
run_fails "export with the disk full" "vmtrace: export: $disk/o.db: sqlite schema: database or disk is full" \
	export_fill 400
no_db "disk full"
run_fails "export with room for the rows only" "vmtrace: export: $disk/o.db: sqlite commit: database or disk is full" \
	export_fill 300
no_db "room for the rows only"
run_ok "export with room" export_fill 100
[ -s "$disk/o.db" ] && [ ! -e "$disk/o.db.tmp" ] || fail "with room: no database"
echo "ok: full disk under export"
