#!/bin/bash
# Host trace.dat (synthetic, this kernel's kvm event formats, written by
# lib/tracedat_write.c via gen-tracedat; read back by lib/tracedat_read.c
# through libtracecmd) merged with a guest uftrace dir:
#  - QEMU process with a "vCPU 0" track; kvm_exit/kvm_entry as an "exit:"
#    slice; kvm_pio / kvm_inj_virq as instants with their fields;
#  - a kick flow (guest vp_notify -> host exit) and an irq flow (host
#    kvm_inj_virq -> guest vring_interrupt);
#  - two kvm_write_tsc_offset events (offset +1e6 at host TSC 1000100000):
#    the guest lands at the expected ns on both sides of the change;
#  - Perfetto (protoc) carries the flows, uftrace replay the exit slices;
#  - trace clocks: a ns clock is used with a warning, other clocks refused,
#    none (no TRACECLOCK option) taken as x86-tsc; a trace-cmd pair on a
#    ns clock placed without a warning;
#  - a trace.dat cut inside its CPU data merges up to the cut (exit 3);
#  - threads QEMU's by their names, a guest's ns clock and "CPU 0/KVM"
#    thread; kvm_exit slices named from other print formats; a string and
#    an array past their record left out of the arguments.
set -eu
. "$VT_SRC/tests/merge/common.sh"
GTD="$VT_BUILD/tests/merge/gen-tracedat"
[ -r /sys/kernel/tracing/events/kvm/kvm_exit/format ] ||
	{ echo "no tracefs kvm event formats (mount tracefs at /sys/kernel/tracing)"; exit 77; }
cd "$VT_TMP"
mkdir h
cat >ev.txt <<'EOT'
comm 4243 CPU 0/KVM
ev 0 1000000000 4243 kvm/kvm_write_tsc_offset vcpu_id=0 previous_tsc_offset=0 next_tsc_offset=500000000
ev 0 1000009500 4243 kvm/kvm_inj_virq vector=34
ev 0 1000010000 4243 kvm/kvm_exit exit_reason=123 isa=2 guest_rip=0xffff1234 vcpu_id=0
ev 0 1000010100 4243 kvm/kvm_pio rw=1 port=0xc050 size=2 count=1 val=0
ev 0 1000012000 4243 kvm/kvm_entry vcpu_id=0
ev 0 1000100000 4243 kvm/kvm_write_tsc_offset vcpu_id=0 previous_tsc_offset=500000000 next_tsc_offset=501000000
EOT
"$GTD" h/trace.dat <ev.txt
printf '# vmtrace-meta 1\nclock=tsc\ntsc.hz=2000000000\ndomain=host\nkvm.vms=1\nkvm.vm0.pid=4242\nkvm.vm0.vcpus=1\nkvm.vcpu_threads=1\nkvm.thread0.tid=4243\nkvm.thread0.pid=4242\nkvm.thread0.vcpu=0\n' >h/vmtrace.meta
trace-cmd report h/trace.dat >report.txt	# the file is valid for trace-cmd too
# guest record i at host TSC 1000009000 + 1000 i; its TSC jumps by 1e6 from i = 92
mk_guest g 200 1500009000 1000 -j 92:1000000 -f vp_notify,vring_interrupt
"$VT_BIN" merge h g -o o.json 2>err.txt
cat err.txt
grep -q "flows *2" err.txt
json_check o.json >/dev/null
"$PY" - o.json <<'PYEOF'
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
def fail(m): sys.exit("FAIL: " + m)
M = {(e["pid"], e["tid"], e["name"]): e["args"]["name"] for e in ev if e["ph"] == "M"}
if M.get((4242, 4243, "process_name")) != "host: QEMU (pid 4242)": fail("QEMU process %s" % M)
if M.get((4242, 4243, "thread_name")) != "vCPU 0": fail("vCPU track %s" % M)
ex = [e for e in ev if e["ph"] == "B" and e["name"].startswith("exit: ")]
if len(ex) != 1 or ex[0]["ts"] != 500005.0 or ex[0]["args"]["exit_reason"] != 123: fail("exit slice %s" % ex)
pio = [e for e in ev if e["ph"] == "i" and e["name"] == "kvm_pio"]
if len(pio) != 1 or pio[0]["args"]["port"] != 0xc050 or pio[0]["ts"] != 500005.05: fail("kvm_pio %s" % pio)
# every kick / injection starts a flow where it happens (in time order);
# the two that are followed by their other end are terminated
ends = {(e["ph"], e["name"]): e for e in ev if e["ph"] == "f"}
starts = {e["id"]: e for e in ev if e["ph"] == "s"}
if sorted(ends) != [("f", "irq"), ("f", "kick")]: fail("flow ends %s" % ends)
fl = dict(ends)
fl.update({("s", n): starts[ends[("f", n)]["id"]] for n in ("kick", "irq")})
if fl[("s", "kick")]["pid"] != 10000200 or fl[("f", "kick")]["tid"] != 4243: fail("kick flow %s" % fl)
if fl[("s", "irq")]["ts"] != 500004.75 or fl[("f", "irq")]["pid"] != 10000200: fail("irq flow %s" % fl)
ts = [e["ts"] for e in ev if "ts" in e and e["ph"] != "M"]
if ts != sorted(ts): fail("timestamps go back")
g = [e["ts"] for e in ev if e["pid"] == 10000200 and e["ph"] in "BE"]
want = [500004.5 + 0.5 * i for i in range(200)]
if g != want: fail("guest times %s...%s, want %s...%s" % (g[:3], g[-3:], want[:3], want[-3:]))
print("ok: json")
PYEOF
"$VT_BIN" merge h g -o o.pftrace -q
protoc --decode=perfetto.protos.Trace -I "$VT_SRC/merge" "$VT_SRC/merge/perfetto_subset.proto" \
	<o.pftrace >o.txt
[ "$(grep -c '^ *flow_ids:' o.txt)" -ge 2 ] && [ "$(grep -c 'terminating_flow_ids:' o.txt)" = 2 ] ||
	{ echo "FAIL: perfetto flows"; exit 1; }
"$PY" "$VT_SRC/tests/merge/perfetto_check.py" o.txt >/dev/null	# ends started, time order
grep -q 'thread_name: "vCPU 0"' o.txt
"$VT_BIN" merge h g -o o-uft -q
uftrace replay -d o-uft >replay.txt
grep -q 'exit: io' replay.txt && grep -q 'kvm_pio()' replay.txt ||
	{ cat replay.txt | head -20; echo "FAIL: uftrace replay"; exit 1; }
echo "ok: perfetto, uftrace"

# the same events written as v7 with zstd (vmtrace record's default): the
# same trace-cmd report text and byte-identical merge outputs
mkdir hz
"$GTD" -z hz/trace.dat <ev.txt
cp h/vmtrace.meta hz/
head -c 64 hz/trace.dat | grep -aq zstd || { echo "FAIL: -z file does not name zstd"; exit 1; }
trace-cmd report hz/trace.dat >report-z.txt
cmp -s report.txt report-z.txt || { diff report.txt report-z.txt; echo "FAIL: trace-cmd report v7"; exit 1; }
mv hz h6 && mv h hz && mv h6 h	# the same directory name in both merges
"$VT_BIN" merge h g -o oz.json -q && "$VT_BIN" merge h g -o oz.pftrace -q
mv h hz6 && mv hz h && mv hz6 hz
cmp -s o.json oz.json && cmp -s o.pftrace oz.pftrace ||
	{ echo "FAIL: merge of the v7 zstd file differs from v6"; exit 1; }
echo "ok: v7 zstd = v6 (trace-cmd report, merge JSON and Perfetto)"

# one input alone converts; a ns trace clock is taken with its stamps
sed 's/^comm/clock local\ncomm/' ev.txt | sed 's/\\n/\n/' >ev-local.txt
mkdir -p l && "$GTD" l/trace.dat <ev-local.txt
"$VT_BIN" merge l/trace.dat -o l.json -q
grep -q '"ts":1000000.000' l.json || { echo "FAIL: ns clock not taken as ns"; exit 1; }
# a clock that is neither x86-tsc nor ns is refused
mkdir -p c && { echo "clock counter"; cat ev.txt; } | "$GTD" c/trace.dat
rc=0; "$VT_BIN" merge c h -o c.json 2>cerr.txt || rc=$?
[ "$rc" = 1 ] && grep -q "trace clock 'counter'" cerr.txt || { cat cerr.txt; echo "FAIL: counter clock rc=$rc"; exit 1; }
# a trace-cmd host-guest pair on a ns clock (its ptp protocol): both
# files placed by their ns stamps, the guest's through TIME_SHIFT, no
# warning; each guest event in the middle of its vCPU run (mktcpair: runs
# of 60 "us" of 2096 ticks every 100, the guest's event 30 in)
"$VT_BUILD/tests/align/mktcpair" nsh.dat nsg.dat -C "[local] global counter" -c "[local] global counter" >nst.json
"$VT_BIN" merge nsh.dat nsg.dat -o ns.json 2>nserr.txt || { cat nserr.txt; echo "FAIL: ns pair"; exit 1; }
! grep -q warning nserr.txt || { cat nserr.txt; echo "FAIL: ns pair warned"; exit 1; }
"$PY" - ns.json <<'PYEOF'
import json, sys
ev = [e for e in json.load(open(sys.argv[1]))["traceEvents"] if e["ph"] != "M"]
g = [e["ts"] for e in ev if e["pid"] >= 10000000]
want = [9000000000 + (i * 100 + 30) * 2.096 for i in range(200)]
assert len(g) == 200 and all(abs(a - b) < 1e-6 for a, b in zip(g, want)), g[:3]
print("ok: a trace-cmd pair on a ns clock")
PYEOF
# the same pair as directories: a clock model (tsync, from TIME_SHIFT)
# onto the host's ns clock, the guest's events where they were; a host
# uftrace directory on the TSC listed first (not the host trace) keeps its
# own stamps (18864009000000 ticks at 2096001000 Hz: 9000 s)
mkdir nh ng
mv nsh.dat nh/trace.dat && mv nsg.dat ng/trace.dat
"$VT_BUILD/tests/merge/gen-trace" q -n 4 -D 1 -z 2096001000 -s 18864009000000 -d 1000 -f a -p 77
"$VT_BIN" merge q@host nh@host ng -o nsd.json 2>nserr.txt || { cat nserr.txt; echo "FAIL: ns pair dirs"; exit 1; }
! grep -q warning nserr.txt && grep -qxF '  align    guest: tsync, bound unproven (no markers) (clock from ng)' nserr.txt ||
	{ cat nserr.txt; echo "FAIL: ns pair dirs: warned or no tsync model"; exit 1; }
"$PY" - nsd.json <<'PYEOF'
import json, sys
ev = [e for e in json.load(open(sys.argv[1]))["traceEvents"] if e["ph"] != "M"]
g = [e["ts"] for e in ev if e["pid"] >= 10000000]
want = [9000000000 + (i * 100 + 30) * 2.096 for i in range(200)]
assert len(g) == 200 and all(abs(a - b) < 1e-6 for a, b in zip(g, want)), g[:3]
q = [e["ts"] for e in ev if e["pid"] == 77]
assert q and abs(q[0] - 9000000000) < 1e-3, q
print("ok: the ns pair as directories: a model onto the ns host clock")
PYEOF
# no trace clock option at all (older files): x86-tsc, no warning
mkdir -p nc && { echo "clock -"; cat ev.txt; } | "$GTD" nc/trace.dat
cp h/vmtrace.meta nc/
"$VT_BIN" merge nc -o nc.json 2>ncerr.txt || { cat ncerr.txt; echo "FAIL: no clock option"; exit 1; }
grep -q '"ts":500000.000' nc.json && ! grep -q warning ncerr.txt ||
	{ cat ncerr.txt; echo "FAIL: no clock option not taken as x86-tsc"; exit 1; }
# a trace.dat cut inside its CPU data: every whole record before the cut is
# merged (ports contiguous from 0, nothing invented), warning, exit 3.
# (The reader leaves libtracecmd's failed handle open on purpose: closing
# it crashes libtracecmd 3.1, so leak checking is off for this run.)
{ echo "comm 4243 CPU 0/KVM"
  for i in $(seq 0 599); do
	echo "ev 0 $((1000000000 + i * 1000)) 4243 kvm/kvm_pio rw=1 port=$i size=1 count=1 val=0"
	echo "ev 1 $((1000000500 + i * 1000)) 4243 kvm/kvm_pio rw=0 port=$i size=1 count=1 val=0"
  done; } >big.txt
"$GTD" big.dat <big.txt
head -c $(( $(stat -c %s big.dat) - 10000 )) big.dat >cut.dat
rc=0; ASAN_OPTIONS=detect_leaks=0 "$VT_BIN" merge cut.dat -o cut.json --tsc-hz 2000000000 2>cerr.txt || rc=$?
cat cerr.txt
[ "$rc" = 3 ] && grep -q "cut.dat: CPU data cut short" cerr.txt || { echo "FAIL: cut trace.dat rc=$rc"; exit 1; }
"$PY" - cut.json <<'PYEOF'
import json, sys
p = [e for e in json.load(open(sys.argv[1]))["traceEvents"] if e["ph"] == "i"]
assert all(e["name"] == "kvm_pio" for e in p), "invented events"
for rw in (0, 1):
    ports = [e["args"]["port"] for e in p if e["args"]["rw"] == rw]
    assert sorted(ports) == list(range(len(ports))), "gap in cpu data"
assert 600 < len(p) < 1200, len(p)
print("ok: %d of 1200 records before the cut" % len(p))
PYEOF
# headers cut: a clear error naming the file
head -c 6000 h/trace.dat >t.dat
rc=0; "$VT_BIN" merge t.dat -o t.json 2>terr.txt || rc=$?
[ "$rc" = 1 ] && grep -Eq "t.dat: (not a readable|corrupt) trace.dat" terr.txt || { cat terr.txt; echo "FAIL: rc=$rc"; exit 1; }
# thread names with no QEMU task list in the meta (by name): "IO ...",
# "worker...", "vhost-..." are QEMU's threads, "CPU 0/KVMx" is no vCPU; a
# guest trace.dat on a ns clock is placed unaligned with a warning, its own
# "CPU 0/KVM" thread named "vCPU 0" in the guest's process, no vCPU of the
# host's
mkdir -p hn gn
cat >hn.txt <<'EOT'
comm 4243 CPU 0/KVM
comm 4301 IO iothread0
comm 4302 worker
comm 4303 vhost-4242
comm 4304 CPU 0/KVMx
ev 0 1000000000 4243 kvm/kvm_pio rw=1 port=1 size=1 count=1 val=0
ev 0 1000001000 4301 kvm/kvm_pio rw=1 port=2 size=1 count=1 val=0
ev 0 1000002000 4302 kvm/kvm_pio rw=1 port=3 size=1 count=1 val=0
ev 0 1000003000 4303 kvm/kvm_pio rw=1 port=4 size=1 count=1 val=0
ev 0 1000004000 4304 kvm/kvm_pio rw=1 port=5 size=1 count=1 val=0
EOT
"$GTD" hn/trace.dat <hn.txt
cp h/vmtrace.meta hn/
printf 'clock local\ncomm 200 CPU 0/KVM\nev 0 3000 200 kvm/kvm_pio rw=1 port=6 size=1 count=1 val=0\n' |
	"$GTD" gn/trace.dat
printf '# vmtrace-meta 1\nformat=trace.dat\ndomain=guest\nclock=tsc\ntsc.hz=2000000000\n' >gn/vmtrace.meta
"$VT_BIN" merge hn gn -o n.json 2>nerr.txt || { cat nerr.txt; echo "FAIL: merge hn gn"; exit 1; }
grep -q "gn/trace.dat: recorded with the 'local' trace clock (ns), not x86-tsc: its events are placed by their ns stamps, unaligned" nerr.txt ||
	{ cat nerr.txt; echo "FAIL: no ns clock warning for the guest"; exit 1; }
"$PY" - n.json <<'PYEOF'
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
M = {(e["pid"], e["tid"], e["name"]): e["args"]["name"] for e in ev if e["ph"] == "M"}
port = {e["args"]["port"]: (e["pid"], e["tid"], e["ts"]) for e in ev if e["ph"] == "i"}
for p, tid in ((1, 4243), (2, 4301), (3, 4302), (4, 4303)):
    assert port[p][:2] == (4242, tid), (p, port[p])
assert M[(4242, 4243, "process_name")] == "host: QEMU (pid 4242)", M
assert M[(4242, 4301, "thread_name")] == "IO iothread0", M
assert M[(4242, 4302, "thread_name")] == "worker" and M[(4242, 4303, "thread_name")] == "vhost-4242", M
assert port[5][:2] == (4304, 4304), port[5]
assert M[(4304, 4304, "process_name")] == "host: CPU 0/KVMx (pid 4304)", M
assert M[(4304, 4304, "thread_name")] == "CPU 0/KVMx", M
# the guest's pids and tids are offset by 10000000 (merge's guest machine)
assert port[6] == (10000200, 10000200, 3.0), port[6]
assert M[(10000200, 10000200, "thread_name")] == "vCPU 0", M
assert M[(10000200, 10000200, "process_name")] == "guest: CPU 0/KVM (pid 200)", M
print("ok: thread names")
PYEOF
# kvm_exit slices named from formats other than this kernel's: with no
# "reason " in its print format the slice is named by exit_reason's number,
# also past 128 distinct reasons; with no exit_reason field, "exit: 0"; a
# symbolic field that prints as nothing stays a number, so does one whose
# text is past 63 characters (flag 0x100000); values sharing the text
# cache's slot with 1 (3612 or 1052, by the field's index) get their own
fake_tracefs fa
fake_tracefs fb
mkdir -p fa/events/kvm/kvm_exit fb/events/kvm/kvm_exit xa xb
COMMON='	field:unsigned short common_type;	offset:0;	size:2;	signed:0;
	field:unsigned char common_flags;	offset:2;	size:1;	signed:0;
	field:unsigned char common_preempt_count;	offset:3;	size:1;	signed:0;
	field:int common_pid;	offset:4;	size:4;	signed:1;
'
printf 'name: kvm_exit\nID: 900\nformat:\n%s\n\tfield:unsigned int vcpu_id;\toffset:8;\tsize:4;\tsigned:0;\n\tfield:unsigned int fl;\toffset:12;\tsize:4;\tsigned:0;\n\nprint fmt: "vcpu %%u fl=%%s", REC->vcpu_id, __print_flags(REC->fl, "|", { 1, "A" }, { 0x100000, "LLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLL" })\n' \
	"$COMMON" >fa/events/kvm/kvm_exit/format
printf 'name: kvm_exit\nID: 901\nformat:\n%s\n\tfield:unsigned int exit_reason;\toffset:8;\tsize:4;\tsigned:0;\n\nprint fmt: "vcpu 0 reason ", REC->exit_reason\n' \
	"$COMMON" >fb/events/kvm/kvm_exit/format
{ echo "comm 4243 CPU 0/KVM"
  i=0
  for v in 0 1 3612 1 1052 1 1048576; do
	echo "ev 0 $((1000000000 + i * 1000)) 4243 kvm/kvm_exit vcpu_id=0 fl=$v"; i=$((i + 1))
  done
} |
	"$GTD" xa/trace.dat "$PWD/fa"
{ echo "comm 4243 CPU 0/KVM"
  for i in $(seq 0 129); do echo "ev 0 $((1000000000 + i * 1000)) 4243 kvm/kvm_exit exit_reason=$i"; done
} | "$GTD" xb/trace.dat "$PWD/fb"
cp h/vmtrace.meta xa/
cp h/vmtrace.meta xb/
"$VT_BIN" merge xa -o xa.json -q && "$VT_BIN" merge xb -o xb.json -q ||
	{ echo "FAIL: merge of other kvm_exit formats"; exit 1; }
"$PY" - xa.json xb.json <<'PYEOF'
import json, sys
a = [e for e in json.load(open(sys.argv[1]))["traceEvents"] if e["ph"] == "B"]
fl = [0, "A", 3612, "A", 1052, "A", 1048576]
assert [(e["name"], e["args"]["fl"]) for e in a] == [("exit: 0", f) for f in fl], a
b = [e["name"] for e in json.load(open(sys.argv[2]))["traceEvents"] if e["ph"] == "B"]
assert b == ["exit: %d" % i for i in range(130)], b[125:]
print("ok: kvm_exit names from other formats")
PYEOF
# exit_reason as the 128th field of kvm_exit (past the index merge keeps
# for it): each slice still named by its own reason
fake_tracefs fe
mkdir -p fe/events/kvm/kvm_exit xe
{ printf 'name: kvm_exit\nID: 904\nformat:\n%s\n\tfield:unsigned int r;\toffset:8;\tsize:4;\tsigned:0;\n' "$COMMON"
  for i in $(seq 0 125); do printf '\tfield:unsigned char f%d;\toffset:12;\tsize:1;\tsigned:0;\n' $i; done
  printf '\tfield:unsigned int exit_reason;\toffset:8;\tsize:4;\tsigned:0;\n\nprint fmt: "reason %%u", REC->exit_reason\n'
} >fe/events/kvm/kvm_exit/format
printf 'comm 4243 CPU 0/KVM\nev 0 1000000000 4243 kvm/kvm_exit r=7\nev 0 1000001000 4243 kvm/kvm_exit r=9\n' |
	"$GTD" xe/trace.dat "$PWD/fe"
cp h/vmtrace.meta xe/
"$VT_BIN" merge xe -o xe.json -q || { echo "FAIL: merge of exit_reason past field 127"; exit 1; }
"$PY" - xe.json <<'PYEOF'
import json, sys
b = [e["name"] for e in json.load(open(sys.argv[1]))["traceEvents"] if e["ph"] == "B"]
assert b == ["exit: 7", "exit: 9"], b
print("ok: exit_reason past field 127")
PYEOF
# a string whose __data_loc points past its record is left out of the
# event's arguments, the others kept
fake_tracefs fc
mkdir -p fc/events/vt/probe xc
printf 'name: probe\nID: 902\nformat:\n%s\n\tfield:unsigned int marker;\toffset:8;\tsize:4;\tsigned:0;\n\tfield:__data_loc char[] str;\toffset:12;\tsize:4;\tsigned:0;\n\nprint fmt: "marker=%%u", REC->marker\n' \
	"$COMMON" >fc/events/vt/probe/format
printf 'comm 4243 CPU 0/KVM\nev 0 1000000000 4243 vt/probe marker=0x51525354 str=abc\nev 0 1000001000 4243 vt/probe marker=0x51525354 str=abc\n' |
	"$GTD" xc/trace.dat "$PWD/fc"
cp h/vmtrace.meta xc/
"$PY" - xc/trace.dat <<'PYEOF'
import struct, sys
d = bytearray(open(sys.argv[1], "rb").read())
i = d.index(b"TSRQ")		# marker 0x51525354: the first record's
struct.pack_into("<I", d, i + 4, 4 << 16 | 500)
open(sys.argv[1], "wb").write(d)
PYEOF
"$VT_BIN" merge xc -o xc.json -q || { echo "FAIL: merge of a __data_loc past its record"; exit 1; }
"$PY" - xc.json <<'PYEOF'
import json, sys
p = [e["args"] for e in json.load(open(sys.argv[1]))["traceEvents"] if e["ph"] == "i"]
assert p == [{"marker": 0x51525354}, {"marker": 0x51525354, "str": "abc"}], p
print("ok: __data_loc past its record left out")
PYEOF
# an array of numbers past the end of its record (the record cut to its
# first field: its length in its header and the page's commit 16 bytes
# less) is left out, the field before it kept
fake_tracefs fd
mkdir -p fd/events/vt/arr xd
printf 'name: arr\nID: 903\nformat:\n%s\n\tfield:unsigned int marker;\toffset:8;\tsize:4;\tsigned:0;\n\tfield:unsigned int many[4];\toffset:12;\tsize:16;\tsigned:0;\n\nprint fmt: "marker=%%u", REC->marker\n' \
	"$COMMON" >fd/events/vt/arr/format
printf 'comm 4243 CPU 0/KVM\nev 0 1000000000 4243 vt/arr marker=0x51525354 many=7\n' |
	"$GTD" xd/trace.dat "$PWD/fd"
cp h/vmtrace.meta xd/
"$VT_BIN" merge xd -o xd0.json -q
grep -q '"args":{"marker":1364349780,"many":\[7,0,0,0\]}' xd0.json || { echo "FAIL: array event"; exit 1; }
"$PY" - xd/trace.dat <<'PYEOF'
import struct, sys
d = bytearray(open(sys.argv[1], "rb").read())
h = d.index(b"TSRQ") - 8 - 4		# the record's header (one small record)
hdr = struct.unpack_from("<I", d, h)[0]
page = h // 4096 * 4096			# v6: the pages are page-aligned in the file
commit = struct.unpack_from("<Q", d, page + 8)[0]
assert hdr & 31 == 7 and commit == 32, (hdr & 31, commit)
struct.pack_into("<I", d, h, hdr - 4)
struct.pack_into("<Q", d, page + 8, commit - 16)
open(sys.argv[1], "wb").write(d)
PYEOF
"$VT_BIN" merge xd -o xd.json -q || { echo "FAIL: merge of a cut array"; exit 1; }
grep -q '"args":{"marker":1364349780}' xd.json || { echo "FAIL: cut array not left out"; exit 1; }
echo "ok: an array past its record left out"
echo ok
