#!/bin/bash
# CPython's USDT markers (uprobe events of tracefs systems vmtrace_py_PID,
# `vmtrace record --python`) as merge turns them into Python slices
# (merge/usdt_python.c), from a trace.dat gen-tracedat writes with uprobe
# formats of our own (a tracefs tree here: its __data_loc strings):
#  - function__entry -> a slice "module.func (file:line)" (module: the
#    file's name without .py, "<frozen X>" -> X), its function__return (or
#    a further site's, function__return_2) ends it; a return with no entry
#    open, or of another function, is an instant with the marker and line;
#  - gc__start/done, import__find__load__start/done -> slices "gc
#    (generation N)" (collected), "import MODULE" (found); a done with no
#    start open is an instant named by the marker;
#  - past 128 open slices a return is taken to match (130 nested calls,
#    the two innermost returns naming another function, all end);
#  - markers without their fields: "?" names, 0 numbers; a marker name we
#    do not know in our system, and our names in another system, are
#    plain instants with their fields.
set -eu
. "$VT_SRC/tests/merge/common.sh"
GTD="$VT_BUILD/tests/merge/gen-tracedat"
cd "$VT_TMP"
fake_tracefs tfs
mkdir -p h
id=9000
# fmt SYSTEM NAME FIELD...: an uprobe event's format (FIELD s:NAME a
# __data_loc string, u:NAME an s32), as the kernel writes one
fmt() {
	local sys=$1 name=$2 off=16 f
	shift 2
	id=$((id + 1))
	mkdir -p tfs/events/$sys/$name
	{
		printf 'name: %s\nID: %d\nformat:\n' $name $id
		printf '\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n'
		printf '\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n'
		printf '\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n'
		printf '\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n'
		printf '\tfield:unsigned long __probe_ip;\toffset:8;\tsize:8;\tsigned:0;\n'
		for f; do
			case $f in
			s:*) printf '\tfield:__data_loc char[] %s;\toffset:%d;\tsize:4;\tsigned:1;\n' ${f#s:} $off;;
			u:*) printf '\tfield:s32 %s;\toffset:%d;\tsize:4;\tsigned:1;\n' ${f#u:} $off;;
			esac
			off=$((off + 4))
		done
		printf '\nprint fmt: "(%%lx)", REC->__probe_ip\n'
	} >tfs/events/$sys/$name/format
}
for m in function__entry function__return function__return_2; do
	fmt vmtrace_py_300 $m s:file s:func u:line
done
fmt vmtrace_py_300 gc__start u:generation
fmt vmtrace_py_300 gc__done u:collected
fmt vmtrace_py_300 import__find__load__start s:module
fmt vmtrace_py_300 import__find__load__done s:module u:found
for m in function__entry function__return gc__start import__find__load__start \
	import__find__load__done function__entry5 x_12 7; do
	fmt vmtrace_py_301 $m
done
fmt other_py function__entry u:line
"$PY" - >ev.txt <<'PYEOF'
P, Q = "vmtrace_py_300/", "vmtrace_py_301/"
D = "file=/usr/lib/python3.11/json/decoder.py func=decode"
F = "file=<frozen\\simportlib._bootstrap> func=_find_and_load line=1360"
ev = [(300, P + "function__entry", D + " line=332"),
      (300, P + "gc__start", "generation=2"),
      (300, P + "gc__done", "collected=7"),
      (300, P + "import__find__load__start", "module=json.tool"),
      (300, P + "import__find__load__done", "module=json.tool found=1"),
      (300, P + "function__return_2", D + " line=340"),
      (300, P + "function__return", F),
      (300, P + "function__entry", "file=app.py func=main line=1"),
      (300, P + "function__return", "file=.py func=f line=5"),
      (300, P + "gc__done", "collected=3"),
      (300, P + "import__find__load__done", "module=x found=0"),
      (300, P + "function__return", "file=app.py func=main line=9")]
ev += [(300, P + "function__entry", "file=d.py func=r%d line=%d" % (i, i)) for i in range(130)]
ev += [(300, P + "function__return", "file=d.py func=%s line=0" % ("zz" if i >= 128 else "r%d" % i))
       for i in reversed(range(130))]
ev += [(301, Q + m, "") for m in ("function__entry", "gc__start", "import__find__load__start",
                                  "import__find__load__done", "function__return",
                                  "function__entry5", "x_12", "7")]
ev.append((301, "other_py/function__entry", "line=4"))
print("comm 300 python3\ncomm 301 python3")
for i, (tid, e, a) in enumerate(ev):
    print("ev %d %d %d %s %s" % (tid - 300, 1000000000 + 1000 * i, tid, e, a))
PYEOF
"$GTD" h/trace.dat tfs <ev.txt
printf '# vmtrace-meta 1\nclock=tsc\ntsc.hz=1000000000\ndomain=host\n' >h/vmtrace.meta
"$VT_BIN" merge h -o o.json -q
"$PY" - o.json <<'PYEOF'
import json, sys
ev = [e for e in json.load(open(sys.argv[1]))["traceEvents"] if e["ph"] != "M"]
got = [(e["tid"], e["ph"], int(e["ts"]) - 1000000, e.get("name"), e.get("args")) for e in ev]
R = "function__return"
want = [(300, "B", 0, "decoder.decode (/usr/lib/python3.11/json/decoder.py:332)", None),
        (300, "B", 1, "gc (generation 2)", {"generation": 2}),
        (300, "E", 2, None, {"collected": 7}),
        (300, "B", 3, "import json.tool", None),
        (300, "E", 4, None, {"found": 1}),
        (300, "E", 5, None, None),
        (300, "i", 6, "importlib._bootstrap._find_and_load (<frozen importlib._bootstrap>)",
         {"marker": R, "line": 1360}),
        (300, "B", 7, "app.main (app.py:1)", None),
        (300, "i", 8, ".py.f (.py)", {"marker": R, "line": 5}),
        (300, "i", 9, "gc__done", {"collected": 3}),
        (300, "i", 10, "import__find__load__done", {"found": 0}),
        (300, "E", 11, None, None)]
want += [(300, "B", 12 + i, "d.r%d (d.py:%d)" % (i, i), None) for i in range(130)]
want += [(300, "E", 142 + i, None, None) for i in range(130)]
want += [(301, "B", 272, "?.? (?:0)", None),
         (301, "B", 273, "gc (generation 0)", {"generation": 0}),
         (301, "B", 274, "import ?", None),
         (301, "E", 275, None, {"found": 0}),
         (301, "i", 276, "?.? (?)", {"marker": R, "line": 0}),   # gc is open
         (301, "i", 277, "function__entry5", {"__probe_ip": 0}),
         (301, "i", 278, "x_12", {"__probe_ip": 0}),
         (301, "i", 279, "7", {"__probe_ip": 0}),
         (301, "i", 280, "function__entry", {"__probe_ip": 0, "line": 4}),
         (301, "E", 280, None, None), (301, "E", 280, None, None)]  # closed at the end
for i, (g, w) in enumerate(zip(got, want)):
    assert g == w, "event %d: got %s, want %s" % (i, g, w)
assert len(got) == len(want), "%d events, want %d" % (len(got), len(want))
print("ok   %d events: function, gc and import slices, returns of no entry, 130 deep, no fields" % len(got))
PYEOF
