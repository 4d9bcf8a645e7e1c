#!/bin/bash
# t-setup-kvm-tracing: run tools/setup-kvm-tracing and check its verdicts
# against what the machine really has (tracefs, kvm events, /dev/kvm).
set -eu
tool=$VT_SRC/tools/setup-kvm-tracing
[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root (tracefs, debugfs)"; exit 77; }

rc=0
"$tool" >out.txt 2>&1 || rc=$?
cat out.txt
case $rc in 0|5) ;; *) echo "unexpected exit $rc"; exit 1;; esac

grep -q '^ok      tracefs mounted at /sys/kernel/tracing' out.txt
grep -q ' /sys/kernel/tracing tracefs ' /proc/mounts
if [ -d /sys/kernel/tracing/events/kvm/kvm_write_tsc_offset ]; then
	grep -q '^ok      kvm_write_tsc_offset: can be enabled' out.txt
else
	grep -q '^MISSING kvm tracepoints' out.txt
fi
if grep -qw x86-tsc /sys/kernel/tracing/trace_clock; then
	grep -q '^ok      trace clock x86-tsc' out.txt
fi
# the scratch instance is gone and the top-level event left as it was
[ ! -d /sys/kernel/tracing/instances/vmtrace-setup-check ]
if [ -c /dev/kvm ]; then
	grep -q '^ok      /dev/kvm' out.txt
else
	grep -q '^MISSING /dev/kvm' out.txt && [ $rc -eq 5 ]
fi
# every MISSING line has a fix line; exit 0 only with none (an if: a bare
# "A && B || C && D" list fails on a ready machine, where rc is 0)
m=$(grep -c '^MISSING' out.txt || true)
f=$(grep -c '^  fix: ' out.txt || true)
[ "$m" -eq "$f" ]
if [ $rc -eq 0 ]; then
	[ "$m" -eq 0 ] || { echo "exit 0 with $m missing"; exit 1; }
else
	[ "$m" -gt 0 ] || { echo "exit $rc with nothing missing"; exit 1; }
fi

# --enable turns kvm_write_tsc_offset on in the top-level buffer (the
# previous state is put back)
ev=/sys/kernel/tracing/events/kvm/kvm_write_tsc_offset/enable
if [ -e $ev ]; then
	old=$(cat $ev)
	"$tool" --enable >en.txt 2>&1 || true
	now=$(cat $ev)
	echo "$old" >$ev
	grep -q '^ok      kvm_write_tsc_offset: enabled in the top-level buffer' en.txt
	[ "$now" = 1 ] || { echo "--enable left $ev at $now"; exit 1; }
fi

# --quiet prints only what is missing and the summary
"$tool" --quiet >q.txt 2>&1 || true
if grep -q '^ok ' q.txt; then
	cat q.txt; echo "FAIL: --quiet printed an ok line"; exit 1
fi
# usage errors and non-root exit codes
set +e
"$tool" --bogus >/dev/null 2>&1; [ $? -eq 2 ] || { echo "bad option: not exit 2"; exit 1; }
# (only where nobody can read the checkout: a clone under /root cannot)
if command -v setpriv >/dev/null &&
	setpriv --reuid=65534 --regid=65534 --clear-groups test -r "$tool"; then
	setpriv --reuid=65534 --regid=65534 --clear-groups "$tool" >/dev/null 2>&1
	[ $? -eq 4 ] || { echo "non-root: not exit 4"; exit 1; }
else
	echo "note: non-root check not run: nobody cannot read $tool"
fi
echo "setup-kvm-tracing: exit $rc, $m missing, verdicts match the machine"
