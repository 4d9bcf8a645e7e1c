#!/bin/bash
# The options of `vmtrace report` and `vmtrace export`: each one the other
# command does not take, bad counts, no input or too many, the options
# handed to merge (named as the command's), the helps; all before any
# input is read (exit 2, the usage or the option named, nothing written).
set -eu
cd "$VT_TMP"
fail() { echo "FAIL: $*"; exit 1; }
expect() {	# expect CODE PATTERN -- command...
	local want=$1 pat=$2; shift 3
	set +e; "$@" >out.txt 2>err.txt; local rc=$?; set -e
	[ "$rc" = "$want" ] || fail "exit $rc, want $want: $* ($(cat err.txt))"
	grep -qF -- "$pat" err.txt || fail "no '$pat' in stderr of $*: $(cat err.txt)"
}
R="$VT_BIN report"
E="$VT_BIN export"
expect 2 "vmtrace: report: bad count '-1'" -- $R -n -1 h
expect 2 "vmtrace: report: bad count '1000001'" -- $R --top 1000001 h
expect 2 "vmtrace: report: bad count '3x'" -- $R --functions 3x h
expect 2 'usage: vmtrace report HOSTDIR' -- $R --sqlite o.db h
expect 2 'usage: vmtrace report HOSTDIR' -- $R
expect 2 'usage: vmtrace report HOSTDIR' -- $R --nosuch h
expect 2 'usage: vmtrace report HOSTDIR' -- $R $(seq -f 'in%g' 65)
expect 2 "vmtrace: report: bad --tsc-hz 'x'" -- $R --tsc-hz x h
expect 2 "vmtrace: report: bad --offset 'x'" -- $R --offset x h
expect 2 "vmtrace: report: bad --offset 'x'" -- $R --guest-offset x h
for o in "--html r.html" "-n 3" "--top 3" "--functions 3" "--all-calls" "-o out.txt"; do
	expect 2 'usage: vmtrace export --sqlite OUT.db' -- $E --sqlite o.db $o h
done
expect 2 'usage: vmtrace export --sqlite OUT.db' -- $E h
expect 2 'usage: vmtrace export --sqlite OUT.db' -- $E --sqlite o.db
expect 2 "vmtrace: export: bad --tsc-hz 'x'" -- $E --sqlite o.db --tsc-hz x h
ls o.db r.html 2>/dev/null && fail "a refused command wrote its output"
# the helps: stdout, exit 0, each its own options
$R --help >help.txt
grep -qF -- '--html OUT.html' help.txt && grep -qF -- '--no-align' help.txt || fail "report --help: $(cat help.txt)"
$E -h >help.txt
grep -qF 'usage: vmtrace export --sqlite OUT.db' help.txt || fail "export -h: $(cat help.txt)"
if grep -qF -- '--html' help.txt; then fail "export --help offers --html"; fi
echo "report/export options: refused with exit 2, helps"
