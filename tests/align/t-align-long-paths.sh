#!/bin/bash
# Input paths of 3264 bytes: each of align's notes that names one is cut
# to 1023 bytes in the text and the JSON (one line each), and the notes
# stop at 8 KiB - the chardev note after the three long ones is dropped
# (with short paths it is there) - while the markers still match.
set -eu
. "$VT_SRC/tests/align/lib.sh"
cd "$VT_TMP"
c=$(printf 'd%.0s' $(seq 250))
p=.
for i in $(seq 13); do p=$p/$c; done
mkdir -p "$p"
[ ${#p} = 3264 ] || fail "path of ${#p} bytes"
"$MKFIX" "$p/h" "$p/g" -n 10 -o 42 -t 42 -D -M -c >t.json
"$VT_BIN" align "$p/h" "$p/g" --tsc-hz 2096001000 --json >a.json
check_json a.json t.json 'j["markers"]["pairs"] == 10' 'len(j["notes"]) == 3' \
	'[len(n) for n in j["notes"]] == [1023] * 3' \
	'[n[:8] for n in j["notes"]] == ["guest: .", "host: ./", "host: ./"]' \
	'not any("chardev markers" in n for n in j["notes"])'
"$VT_BIN" align "$p/h" "$p/g" --tsc-hz 2096001000 >a.txt
[ "$(grep -c '^  \(guest\|host\): \./[d/]\{1000,\}$' a.txt)" = 3 ] || { cat a.txt; fail "text: not 3 cut notes"; }
[ "$(grep -c '^  \(guest\|host\): ' a.txt)" = 3 ] || { cat a.txt; fail "text: not 3 notes"; }
# the same with short paths: four notes, the chardev one last
"$MKFIX" h g -n 10 -o 42 -t 42 -D -M -c >t.json
"$VT_BIN" align h g --tsc-hz 2096001000 --json >b.json
check_json b.json t.json 'len(j["notes"]) == 4' 'j["notes"][3].startswith("host: chardev markers: ")'
