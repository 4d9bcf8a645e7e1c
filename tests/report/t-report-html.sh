#!/bin/bash
# vmtrace report --html on the known-answer fixture, opened in headless
# Chromium (Debian chromium): the page is self-contained (no http(s)/
# external references), its script runs (a marker read back from
# --dump-dom counts the 14 stage histograms), the console shows no error,
# and the screenshot shows the histograms (pixels of the stage colours,
# counted by pngcolors.py).  The screenshot is kept as $VT_BUILD/test-logs/
# report-html.png.
set -eu
. "$VT_SRC/tests/report/common.sh"
command -v chromium >/dev/null || { echo "no chromium (apt-get install chromium)"; exit 77; }
cd "$VT_TMP"
mk_fixture . 40
"$VT_BIN" report h g --no-align -q --html r.html >/dev/null
! grep -Eiq '(src|href)=|https?://|@import|url\(' r.html || { echo "FAIL: external reference"; exit 1; }
chrome() {
	timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--user-data-dir="$VT_TMP/profile" --window-size=1200,2600 "$@" "file://$VT_TMP/r.html"
}
chrome --dump-dom >dom.html 2>dom.err
grep -q 'data-vt-ok="14"' dom.html || { head -c 400 dom.html; echo "FAIL: script marker"; exit 1; }
chrome --enable-logging=stderr --v=0 --screenshot="$VT_TMP/shot.png" >shot.out 2>shot.err
if grep -E 'CONSOLE|Uncaught|SyntaxError' shot.err dom.err; then echo "FAIL: console errors"; exit 1; fi
# the check itself sees a script error (a copy with a broken script)
sed 's|</body>|<script>vtUndefinedFn();</script></body>|' r.html >bad.html
timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
	--disable-background-networking --disable-component-update --disable-sync \
	--user-data-dir="$VT_TMP/profile" --enable-logging=stderr --v=0 --dump-dom \
	"file://$VT_TMP/bad.html" 2>bad.err >/dev/null
grep -q 'CONSOLE.*vtUndefinedFn' bad.err || { echo "FAIL: console error not detectable"; exit 1; }
[ -s shot.png ] || { cat shot.err | tail -5; echo "FAIL: no screenshot"; exit 1; }
cp shot.png "$VT_BUILD/test-logs/report-html.png" 2>/dev/null || true
# stage colours of the first histograms (py_to_sys, sys_to_issue, queue,
# issue_to_kick, kick_to_host_io, host_io): each must cover a visible area
"$PY" "$VT_SRC/tests/report/pngcolors.py" shot.png 8e6bbf 4e79a7 76b7b2 f28e2b e15759 b6002a |
	tee colors.txt
awk '$2 < 2000 { bad = 1; print "FAIL: colour " $1 " covers " $2 " px" } END { exit bad }' colors.txt
echo "ok: html self-contained, script ran, no console error, histograms drawn"
