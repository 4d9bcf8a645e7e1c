#!/bin/bash
# A host trace.dat whose event formats lack a field vmtrace reads (a
# kernel whose kvm_pio, kvm_mmio, kvm_hypercall, write syscall or
# kvm_write_tsc_offset has no such field; mkfixture -L): the events that
# need it are not taken as markers or offsets - counted as none, said in
# the notes - while a field that only narrows (kvm_pio's count, the
# writes' count) may be absent: the markers still match.
set -eu
. "$VT_SRC/tests/align/lib.sh"
cd "$VT_TMP"
# run NAME MKFIXTURE-OPTIONS...: align the fixture, its text in NAME.txt
run() {
	local n=$1; shift
	rm -rf h g
	"$MKFIX" h g -n 10 -o 42 -t 42 -D "$@" >/dev/null
	"$VT_BIN" align h g >"$n.txt" 2>&1 || fail "$n: vmtrace align exit $?"
}
has() {	# has NAME TEXT: NAME.txt holds TEXT
	grep -qF -- "$2" "$1.txt" || { cat "$1.txt"; fail "$1: no '$2'"; }
	echo "ok   $1: $2"
}
run pio-count -L kvm_pio:count
has pio-count '10 kvm_pio writes to marker port 0x5f0'
has pio-count 'markers: 10 guest, 10 host observations, 10 matched'
for f in rw port val; do
	run pio-$f -L kvm_pio:$f
	has pio-$f '0 kvm_pio writes to marker port 0x5f0'
	has pio-$f 'markers: 10 guest, 0 host observations, 0 matched'
done
for f in type gpa val; do
	run mmio-$f -m -L kvm_mmio:$f
	has mmio-$f 'host: 0 kvm_mmio writes and 0 kvm_hypercall'
	has mmio-$f '0 host observations, 0 matched'
done
for f in nr a0; do
	run hc-$f -k -L kvm_hypercall:$f
	has hc-$f 'markers: 0 guest, 0 host observations, 0 matched'
	has hc-$f 'tracepoint'
done
run writev-fd -c -L sys_enter_writev:fd
has writev-fd '0 one-byte write syscalls'
has writev-fd '0 host observations, 0 matched'
for f in vcpu_id previous_tsc_offset next_tsc_offset; do
	run tp-$f -L kvm_write_tsc_offset:$f
	has tp-$f '0 kvm_write_tsc_offset'
	has tp-$f '10 matched'
done
