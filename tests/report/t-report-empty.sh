#!/bin/bash
# vmtrace report (text and --html) of a host recording with no guest data,
# no scheduling events and no kvm_exit (mkfixture's in-band hypercall
# markers: 21 kvm_hypercall, 20 kvm_pio of port 0x70): every section says
# what the inputs lack instead of a table, and the VM exits are counted
# from the exit-causing events (count only, no time).  The writes to the
# CMOS port 0x70 are exits, not host kicks (t-report-kick).  With the
# guest and merge's options; an -o that cannot be made; a cut trace.dat.
set -eu
cd "$VT_TMP"
MKFIX="$VT_BUILD/tests/align/mkfixture"
[ -x "$MKFIX" ] || { echo "mkfixture not built: $MKFIX"; exit 1; }
fail() { echo "FAIL: $*"; exit 1; }
"$MKFIX" h g -n 20 -o 7000000 -k -T -D >/dev/null
"$VT_BIN" report h --html r.html -o r.txt -q
# merge's options taken (--tsc-hz, --offset: the guest's markers on the
# same timeline, its 40 events counted too) and --functions; an -o that
# cannot be created is named (exit 1); a cut trace.dat is merged up to its
# last whole record, exit 3 (partial)
"$VT_BIN" report h g --tsc-hz 2096001000 --offset 7000000 --functions 3 -o r2.txt -q
grep -qxF 'I/O requests: 0 guest block requests; 0 guest syscalls, 0 host kicks, 0 QEMU I/O syscalls, 0 injections, 0 guest virtio irqs (of 81 events)' r2.txt ||
	{ cat r2.txt; fail "report h g: not 81 events"; }
rc=0; "$VT_BIN" report h -o nosuch/r.txt -q 2>err.txt || rc=$?
[ $rc = 1 ] && grep -qxF 'vmtrace: report: nosuch/r.txt: cannot create: No such file or directory' err.txt ||
	fail "-o nosuch/r.txt: exit $rc, $(cat err.txt)"
cp -r h ht
truncate -s -100 ht/trace.dat
rc=0; "$VT_BIN" report ht -o r3.txt -q 2>err.txt || rc=$?
[ $rc = 3 ] && grep -qxF 'vmtrace: warning: ht: input truncated or corrupt: merged up to its last complete record' err.txt ||
	fail "cut trace.dat: exit $rc, $(cat err.txt)"
grep -qF 'I/O requests: 0 guest block requests' r3.txt || fail "cut trace.dat: no report"
for l in \
	'  none in the inputs (no Python/C tracer data)' \
	'  none in the inputs (no guest kernel syscall events of threads with traced calls)' \
	'I/O requests: 0 guest block requests; 0 guest syscalls, 0 host kicks, 0 QEMU I/O syscalls, 0 injections, 0 guest virtio irqs (of 41 events)' \
	'  no block_rq_issue/insert events: record the guest with `vmtrace record --guest` (block:*, irq:*, syscalls)' \
	'  no scheduling events in the inputs' \
	'  no function slices (Python/C tracer data) in the inputs'; do
	grep -qxF -- "$l" r.txt || { cat r.txt; fail "text: no line '$l'"; }
done
grep -qE '^  0 +kvm_hypercall +21 +- +-$' r.txt && grep -qE '^  0 +kvm_pio +20 +- +-$' r.txt ||
	{ cat r.txt; fail "text: VM exits not counted from kvm_hypercall 21, kvm_pio 20"; }
/usr/bin/python3 - r.html <<'PYEOF'
import re, sys
h = open(sys.argv[1]).read()
txt = [l.strip() for l in re.sub(r"<[^>]+>", "\n", re.sub(r"<(style|script).*?</\1>", "", h, flags=re.S)).split("\n") if l.strip()]
want = ["Slowest Python/C calls", "None in the inputs.", "Slowest guest syscalls of the traced program",
        "None in the inputs.", "No guest block requests in the inputs (record the guest with",
        "vmtrace record --guest", ").", "Thread states (&micro;s)", "No scheduling events in the inputs.",
        "Time per function (Python/C tracer slices)",
        "No function slices (Python/C tracer data) in the inputs."]
pos = 0
for w in want:
    if w not in txt[pos:]:
        sys.exit("FAIL: html: no '%s' after line %d: %s" % (w, pos, txt))
    pos = txt.index(w, pos) + 1
i = txt.index("VM exits per vCPU")
if txt[i + 1].startswith("No kvm_exit events") is False or \
   txt[i + 6:i + 14] != ["0", "kvm_hypercall", "21", "-", "0", "kvm_pio", "20", "-"]:
    sys.exit("FAIL: html: VM exits %s" % txt[i:i + 14])
print("ok: html sections say what the inputs lack")
PYEOF
echo "ok: empty report"
