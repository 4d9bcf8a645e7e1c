#!/bin/bash
# t-lint-tests: no test holds an assertion that cannot fail - a statement
# whose status bash ignores: a bare '! cmd' (errexit skips inverted
# commands) or 'a && ! cmd'.  tests/tools/lint-negation.py scans every shell
# script under tests/ (and the examples' scripts the tests run); it is
# first shown to catch each bad form and pass each good one.
set -eu
lint=$VT_SRC/tests/tools/lint-negation.py

cat >bad.sh <<'X'
! grep -q x f
	! grep -q 'a; b' f
[ -f f ] && ! grep -q x f
cmd; ! grep -q x f
check() { ! grep -q x f; }
! grep -q x \
	f
X
cat >good.sh <<'X'
! grep -q x f || fail
if ! grep -q x f; then fail; fi
while ! grep -q x f; do sleep 1; done
[ -n "$p" ] && ! kill -0 "$p" && { echo gone; }
if grep -q x f; then fail; fi
# ! grep -q x f   (a comment)
echo "! grep -q x f"
! grep -q x \
	f || fail
X
rc=0
/usr/bin/python3 "$lint" bad.sh >bad.out || rc=$?
cat bad.out
[ $rc = 1 ] || { echo "FAIL: the lint passed bad.sh (exit $rc)"; exit 1; }
for l in 1 2 3 4 5 6; do
	grep -q "^bad.sh:$l: " bad.out || { echo "FAIL: bad.sh line $l not reported"; exit 1; }
done
[ "$(wc -l <bad.out)" = 6 ] || { echo "FAIL: bad.sh: want 6 reports"; exit 1; }
rc=0
/usr/bin/python3 "$lint" good.sh >good.out || rc=$?
[ $rc = 0 ] || { cat good.out; echo "FAIL: the lint flagged good.sh"; exit 1; }

# every shell script of the suite
files=()
while IFS= read -r f; do
	case $f in
	*.sh) files+=("$f");;
	*) head -1 "$f" | grep -q '^#!.*\b\(ba\)\?sh\b' && files+=("$f");;
	esac
done < <(find "$VT_SRC/tests" "$VT_SRC/examples" -type f \( -name '*.sh' -o -perm -u+x \) | sort)
echo "${#files[@]} scripts"
[ ${#files[@]} -gt 100 ] || { echo "FAIL: found only ${#files[@]} scripts"; exit 1; }
rc=0
/usr/bin/python3 "$lint" "${files[@]}" >suite.out || rc=$?
if [ $rc != 0 ]; then
	cat suite.out
	echo "FAIL: assertions that cannot fail (use: if cmd; then fail; fi)"
	exit 1
fi
echo "no assertion that cannot fail"
