#!/bin/bash
# Synthetic host + guest traces with a known offset, scaling ratio, and a
# user-given offset land at the expected nanoseconds (Chrome JSON output,
# parsed by python3 json with B/E balanced per thread).
set -eu
. "$VT_SRC/tests/merge/common.sh"
cd "$VT_TMP"
# B events: records 0,1,4,5,8,... (depth-2 pattern), 0.5 us apart
want=500000.000,500000.500,500002.000,500002.500,500004.000,500004.500,500006.000,500006.500
check() {	# OUT label
	json_check "$1" >res.txt
	grep -q "^1000:$want\$" res.txt || { cat res.txt; echo "FAIL $2: host not at $want"; exit 1; }
	grep -q "^10000200:$want\$" res.txt || { cat res.txt; echo "FAIL $2: guest not at $want"; exit 1; }
	echo "ok: $2"
}

# 1. offset only: guest TSC = host TSC + 5e8 (debugfs tsc-offset in the host meta)
mk_host h1 16 -M kvm.vm0.vcpu0.tsc_offset.nr=1 -M "kvm.vm0.vcpu0.tsc_offset.0=500000000 999999000 start"
mk_guest g1 16 1500000000 1000
"$VT_BIN" merge h1 g1 -o o1.json 2>err1.txt
grep -q "align *guest: debugfs" err1.txt || { cat err1.txt; echo "FAIL: alignment not reported"; exit 1; }
check o1.json "offset 5e8"

# 2. scaling ratio 1.5 (AMD: 32 fraction bits) + offset: guest = host*1.5 + 5e8
mk_host h2 16 -M kvm.vm0.vcpu0.tsc_offset.nr=1 -M "kvm.vm0.vcpu0.tsc_offset.0=500000000 999999000 start" \
	-M kvm.vm0.vcpu0.tsc_scaling_ratio.nr=1 -M "kvm.vm0.vcpu0.tsc_scaling_ratio.0=6442450944 999999000 start"
mk_guest g2 16 2000000000 1500
"$VT_BIN" merge h2 g2 -o o2.json 2>err2.txt
check o2.json "ratio 1.5 + offset"

# 3. no model: a user-given offset (--no-align --guest-offset)
mk_host h3 16
mk_guest g3 16 1000012345 1000
"$VT_BIN" merge h3 g3 -o o3.json --no-align --guest-offset 12345 2>err3.txt
grep -q "guest TSC - 12345 = host TSC" err3.txt || { cat err3.txt; echo "FAIL: summary"; exit 1; }
check o3.json "user offset"

# 4. the same through the Perfetto sink: exact ns in TracePacket.timestamp
"$VT_BIN" merge h1 g1 -o o1.pftrace -q
protoc --decode=perfetto.protos.Trace -I "$VT_SRC/merge" "$VT_SRC/merge/perfetto_subset.proto" \
	<o1.pftrace >o1.txt
n=$(grep -c "timestamp: 500000000$" o1.txt)
[ "$n" = 2 ] || { echo "FAIL: want 2 packets at 500000000 ns, got $n"; exit 1; }
echo "ok: perfetto ns"
