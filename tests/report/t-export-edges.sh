#!/bin/bash
# vmtrace export --sqlite beyond the known-answer fixture: a host recording
# alone (mkfixture's in-band hypercall markers: every kvm_hypercall's
# registers in args, exactly), stack samples whose frame names hold a quote,
# a backslash and a control character (args is JSON: they read back
# whole), a bad extents.tsv and a database that cannot be created (exit
# 1, nothing left).
set -eu
cd "$VT_TMP"
command -v sqlite3 >/dev/null || { echo "no sqlite3 CLI (apt-get install sqlite3)"; exit 77; }
MKFIX="$VT_BUILD/tests/align/mkfixture"
[ -x "$MKFIX" ] || { echo "mkfixture not built: $MKFIX"; exit 1; }
fail() { echo "FAIL: $*"; exit 1; }
q() { sqlite3 -batch -noheader "$1" "$2"; }

"$MKFIX" h g -n 20 -o 7000000 -k -T -D >/dev/null
"$VT_BIN" export --sqlite h.db h -q
[ "$(q h.db "SELECT count(*) FROM instants WHERE name = 'kvm_hypercall'")" = 21 ] ||
	fail "kvm_hypercall instants: $(q h.db "SELECT count(*) FROM instants WHERE name = 'kvm_hypercall'")"
# the in-band ABI (lib/marker.h): nr "VT", seq in a2 0..19 then the
# closing call's ~0, chain 4321 and guest CPU 1 in a3, "after" of the
# previous marker in a1 (0 for the first)
got=$(q h.db "SELECT count(*), min(json_extract(args, '\$.a2')), max(json_extract(args, '\$.a2')),
	count(DISTINCT json_extract(args, '\$.a3')), min(json_extract(args, '\$.a3'))
	FROM instants WHERE name = 'kvm_hypercall' AND json_extract(args, '\$.nr') = $((0x56540001))
	AND json_extract(args, '\$.a2') < 20")
[ "$got" = "20|0|19|1|$((4321 << 32 | 1))" ] || fail "hypercall args: $got"
[ "$(q h.db "SELECT json_extract(args, '\$.a1') FROM instants WHERE name = 'kvm_hypercall'
	AND json_extract(args, '\$.a2') = 0")" = 0 ] || fail "first marker's a1"
[ "$(q h.db "SELECT count(*) FROM instants WHERE name = 'kvm_pio' AND json_extract(args, '\$.port') = $((0x70))")" = 20 ] ||
	fail "kvm_pio args"

# frame names with '"', '\' and a control character (samples.tsv allows
# all but TAB, ';' and newline)
mkdir s
{
	printf '# vmtrace-samples 1\n# clock=tsc rate_hz=100\n# time\terror\tmono_ns\tvcpu\tpc\tstack\n'
	printf '1000002000\t2000\t5\t0\t0x10\tmain;say "hi"\n'
	printf '1000004000\t2000\t6\t0\t0x20\tmain;C:\\\\path\\\\x\n'
	printf '1000006000\t2000\t7\t1\t0x30\tmain;bell\001ring\n'
} >s/samples.tsv
"$VT_BIN" meta s clock=tsc domain=host producer=vmtrace-sample tsc.hz=2000000000 format=samples
"$VT_BIN" export --sqlite s.db s -q
q s.db "SELECT json_extract(args, '\$.stack') FROM instants ORDER BY ts" >stacks.txt
printf 'main;say "hi"\nmain;C:\\\\path\\\\x\nmain;bell\001ring\n' >want.txt
cmp stacks.txt want.txt || { od -c stacks.txt | head; fail "stacks read back from args"; }
[ "$(q s.db "SELECT count(*) FROM instants WHERE json_valid(args)")" = 3 ] || fail "args not JSON"

# a host recording whose extents.tsv is bad: refused with its line, exit
# 1, no database left
mkdir -p bad
cp -r h/. bad/
printf '# vmtrace-extents 1\nstart\t1\t2\n' >bad/extents.tsv
rc=0
"$VT_BIN" export --sqlite bad.db bad -q 2>err.txt || rc=$?
[ $rc = 1 ] || fail "export of a bad extents.tsv: exit $rc, want 1"
grep -qF 'bad/extents.tsv:2: bad extent line' err.txt || fail "bad extents.tsv: $(cat err.txt)"
[ ! -e bad.db ] && [ ! -e bad.db.tmp ] || fail "bad extents.tsv: a database left"

# a database that cannot be created: exit 1, the file named, nothing left
rc=0
"$VT_BIN" export --sqlite nodir/x.db h -q 2>err.txt || rc=$?
[ $rc = 1 ] || fail "export to nodir/x.db: exit $rc, want 1"
grep -qF 'vmtrace: export: nodir/x.db.tmp: cannot create: unable to open database file' err.txt ||
	fail "export to nodir/x.db: $(cat err.txt)"
[ ! -e nodir ] || fail "nodir created"
echo "ok: export edges"
