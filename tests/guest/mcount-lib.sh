# mcount-lib.sh - shell helpers of the mcount tests (sourced, not run).

GPROGS="$VT_BUILD/tests/guest"
EXPECT="$VT_SRC/tests/guest/expect"
PY=/usr/bin/python3

need_uftrace() {
	command -v uftrace >/dev/null || { echo "uftrace not installed (make deps)"; exit 77; }
}

# replay_tid DIR TID: the call tree of one thread, no columns
replay_tid() {
	uftrace replay -d "$1" --tid "$2" -f tid --no-pager | sed -n 's/^ *\[ *[0-9]*\] | //p'
}

# same_text NAME EXPECTED_FILE ACTUAL_FILE
same_text() {
	if ! diff -u "$2" "$3"; then
		echo "FAIL: $1 differs from $2"
		exit 1
	fi
}

# chrome_balanced DIR [MIN_EVENTS]: uftrace dump --chrome parses as JSON and
# every thread's B/E events nest and balance
chrome_balanced() {
	uftrace dump -d "$1" --chrome --no-pager >"$VT_TMP/chrome.json"
	$PY - "$VT_TMP/chrome.json" "${2:-1}" <<'PYEOF'
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
stacks, n = {}, 0
for e in ev:
    if e["ph"] not in "BE":
        continue
    n += 1
    st = stacks.setdefault(e.get("tid", e["pid"]), [])
    if e["ph"] == "B":
        st.append(e["name"])
    elif not st or st.pop() != e["name"]:
        sys.exit("unbalanced E %s in thread %s" % (e["name"], e.get("tid", e["pid"])))
bad = {t: s for t, s in stacks.items() if s}
if bad:
    sys.exit("unfinished B events: %s" % bad)
if n < int(sys.argv[2]):
    sys.exit("only %d B/E events" % n)
print("chrome: %d B/E events in %d threads, balanced" % (n, len(stacks)))
PYEOF
}
