#!/bin/bash
# examples/common/post.sh: what every example does after its guest ran
# (sourced): unpack the guest's trace stream, align, merge, summarise.
#
#   vt_cmd_built VT CMD           0 if `vmtrace CMD` is built in VT
#   vt_post_unpack_guest TAR DIR  check and unpack the guest's tar stream
#   vt_post_unpack_stream VT STREAM DIR
#                                 rebuild DIR from a `vmtrace stream` capture
#                                 (`vmtrace unpack`: checked frame by frame)
#   vt_post_align_merge VT OUT    vmtrace align of OUT/host with the guest's
#                                 markers (OUT/align.txt, align.json), merge
#                                 of OUT/host, the OUT/guest/* traces and
#                                 OUT/guest/markers (the VM's markers) into
#                                 OUT/merged.{pftrace,json}; VT_EXTRA_INPUTS:
#                                 more host-side trace dirs to merge
#   vt_post_summary OUT           print outputs, alignment, slowest calls

VT_POST_HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# exit code of a vmtrace subcommand that is not built (lib/err.h)
VT_EXIT_UNSUPPORTED=5

vt_cmd_built() {
	"$1" "$2" --help >/dev/null 2>&1
	[ $? -ne $VT_EXIT_UNSUPPORTED ]
}

vt_post_unpack_guest() {
	local tar=$1 dir=$2
	[ -s "$tar" ] || { echo "no guest trace stream in $tar" >&2; return 1; }
	# untrusted input: GNU tar refuses absolute and ../ names by default
	if ! tar -tf "$tar" >/dev/null 2>&1; then
		echo "the guest trace stream $tar is truncated or corrupt" >&2
		return 1
	fi
	rm -rf "$dir" && mkdir -p "$dir"
	tar -C "$dir" --strip-components=1 --no-same-owner --no-same-permissions \
		-xf "$tar" || { echo "cannot unpack $tar into $dir" >&2; return 1; }
	[ -f "$dir/END" ] || { echo "the guest trace stream $tar has no END record: cut short" >&2; return 1; }
}

vt_post_unpack_stream() {
	local vt=$1 stream=$2 dir=$3 rc=0
	[ -s "$stream" ] || { echo "no guest trace stream in $stream" >&2; return 1; }
	rm -rf "$dir"
	"$vt" unpack -q "$stream" -o "$dir" || rc=$?
	# 3: cut short or a bad frame: what came before it is in DIR
	case $rc in
	0) ;;
	3) echo "the guest trace stream $stream is incomplete: what came before the cut is in $dir" >&2; return 1 ;;
	*) echo "vmtrace unpack $stream failed (exit $rc)" >&2; return 1 ;;
	esac
}

# Directories of GUEST that hold traces vmtrace merge reads.
vt_post_guest_inputs() {
	local d
	for d in "$1"/*/; do
		d=${d%/}
		[ -f "$d/vmtrace.meta" ] && echo "$d"
	done
}

vt_post_align_merge() {
	local vt=$1 out=$2 inputs=() d first hz=()
	if ! vt_cmd_built "$vt" merge; then
		echo "note: 'vmtrace merge' is not built yet: nothing merged"
		return 0
	fi
	mapfile -t inputs < <(vt_post_guest_inputs "$out/guest")
	[ ${#inputs[@]} -gt 0 ] || { echo "the guest sent no trace directory" >&2; return 1; }
	# all guest inputs are one VM with one clock model: markers.dat of any
	# of them (or a markers-only directory given as an input) serves all
	first=${inputs[0]}
	if [ -f "$out/guest/markers/markers.dat" ]; then
		first=$out/guest/markers
		inputs+=("$first")
	fi
	# a host recording without the TSC frequency: measure it here
	if [ -d "$out/host" ] && ! grep -q '^tsc\.hz=' "$out/host/vmtrace.meta" 2>/dev/null; then
		hz=(--tsc-hz "$("$vt" tsc -q)") || { echo "vmtrace tsc failed" >&2; return 1; }
	fi
	if vt_cmd_built "$vt" align && [ -d "$out/host" ]; then
		"$vt" align "${hz[@]}" "$out/host" "$first" >"$out/align.txt" 2>&1 ||
			{ cat "$out/align.txt" >&2; echo "vmtrace align failed (log: $out/align.txt)" >&2; return 1; }
		"$vt" align "${hz[@]}" --json --pairs "$out/host" "$first" >"$out/align.json" 2>"$out/align.err" ||
			{ cat "$out/align.err" >&2; echo "vmtrace align --json failed" >&2; return 1; }
	else
		echo "note: 'vmtrace align' is not built yet (or no host recording): no alignment report"
	fi
	[ -d "$out/host" ] && inputs=("$out/host" ${VT_EXTRA_INPUTS:-} "${inputs[@]}")
	for d in merged.pftrace merged.json; do
		"$vt" merge -q "${hz[@]}" -o "$out/$d" "${inputs[@]}" >>"$out/merge.txt" 2>&1 ||
			{ cat "$out/merge.txt" >&2; echo "vmtrace merge failed (log: $out/merge.txt)" >&2; return 1; }
	done
}

vt_post_summary() {
	/usr/bin/python3 "$VT_POST_HERE/summary.py" "$1"
}
