#!/bin/bash
# `pip install .` from the checkout with no network (PIP_NO_INDEX=1) and
# pip's build isolation: the in-tree PEP 517 backend (guest/python/pybuild,
# stdlib only) builds the extension.  Into a fresh venv with that
# interpreter's own pip (Debian's pip 23 here; t-pip-313.sh: CPython 3.13 and
# its bundled pip); the installed package traces calls.py (uftrace replay
# shows the call tree); pip uninstall removes every file the wheel's RECORD
# lists; pip builds a wheel from the backend's sdist (its RECORD checked),
# which installs with --target; the source tree (a copy of the checkout) is
# left unchanged.
# timeout: 300
set -eu
. "$VT_SRC/tests/python/common.sh"
[ -z "$VT_PRELOAD" ] || vt_skip "sanitizer build: pip builds its own extension"

vt_pip_offline_src
unchanged()
{
	snap | diff before - > srcdiff ||
		vt_fail "$1 changed the source tree:" $(sed -n 's/^[<>] \([^ ]*\) .*/\1/p' srcdiff | sort -u)
}

"$PY" -m venv venv > venv.log 2>&1 || vt_fail "$PY -m venv: $(tail -n 3 venv.log)"
VPY=$VT_TMP/venv/bin/python
(cd "$src" && "$VPY" -m pip install .) > pip.log 2>&1 || vt_fail "pip install .: $(tail -n 5 pip.log)"
unchanged "pip install ."

where=$("$VPY" -c 'import vmtrace; print(vmtrace.__file__)')
case "$where" in "$VT_TMP/venv/"*) ;; *) vt_fail "imported vmtrace from $where, not the venv";; esac
vt_pip_calls_tree "$VPY" d || vt_fail "call tree of the pip-installed vmtrace differs"

"$VPY" -m pip uninstall -y vmtrace > uninstall.log 2>&1 || vt_fail "pip uninstall: $(tail -n 3 uninstall.log)"
left=$(find venv -path '*-packages/vmtrace*')
[ -z "$left" ] || vt_fail "pip uninstall left: $left"

# the sdist of the same backend: pip unpacks and builds it (isolated)
mkdir sdist
(cd "$src" && "$VPY" -c 'import sys; sys.path.insert(0, "guest/python/pybuild")
import vmtrace_build; vmtrace_build.build_sdist(sys.argv[1])' "$VT_TMP/sdist") > sdist.log 2>&1 ||
	vt_fail "build_sdist: $(tail -n 3 sdist.log)"
unchanged "build_sdist"
"$VPY" -m pip wheel --no-deps -w wheel sdist/vmtrace-*.tar.gz > pip2.log 2>&1 ||
	vt_fail "pip wheel of the sdist: $(tail -n 5 pip2.log)"
# the wheel's RECORD: every member once, with its sha256 and size
"$VPY" - wheel/vmtrace-*.whl <<'P' || vt_fail "bad RECORD in $(ls wheel)"
import base64, csv, hashlib, io, sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
rec = next(n for n in z.namelist() if n.endswith(".dist-info/RECORD"))
rows = list(csv.reader(io.StringIO(z.read(rec).decode())))
assert z.testzip() is None and sorted(r[0] for r in rows) == sorted(z.namelist())
for name, h, size in rows:
    if name == rec:
        continue
    data = z.read(name)
    dig = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    assert h == "sha256=" + dig and int(size) == len(data), name
P
"$VPY" -m pip install --target x wheel/vmtrace-*.whl > pip3.log 2>&1 ||
	vt_fail "pip install of the sdist's wheel: $(tail -n 5 pip3.log)"
PYTHONPATH=$VT_TMP/x "$VPY" -m vmtrace -o d2 --clock ns "$SCRIPTS/calls.py" ||
	vt_fail "vmtrace from the sdist exited $?"
[ "$(vt_calls d2 "__main__.leaf ")" = 2 ] || vt_fail "vmtrace from the sdist did not trace leaf() twice"
echo "ok: pip install . and its sdist on $("$PY" -V 2>&1) ($("$VPY" -m pip --version | cut -d' ' -f1-2))"
