#!/bin/bash
# examples/common/mkroot.sh: helpers to fill a guest root directory from the
# host's own Debian files (sourced by the examples' image builders).
#
#   vt_root_copy ROOT FILE...      copy files keeping their absolute path
#   vt_root_copy_libs ROOT FILE... copy every shared library ldd reports for
#                                  the ELF files (and the loader)
#   vt_root_copy_elf ROOT FILE...  copy ELF files plus their libraries
#   vt_root_cpio ROOT OUT          write ROOT as an uncompressed cpio (newc,
#                                  owner root) with the host's busybox
#
# Nothing is installed on the host: the files already there (Debian packages
# from `make deps`) are copied.

vt_root_copy() {
	local root=$1 f
	shift
	for f in "$@"; do
		[ -e "$root$f" ] && continue
		mkdir -p "$root$(dirname "$f")"
		cp -a "$f" "$root$f"
	done
}

# The libraries a dynamic ELF needs, as absolute paths (one a line).
vt_root_libs_of() {
	ldd "$1" 2>/dev/null | awk '
		$2 == "=>" && $3 ~ /^\// { print $3 }
		$1 ~ /^\// { print $1 }'
}

vt_root_copy_libs() {
	local root=$1 f lib real
	shift
	for f in "$@"; do
		for lib in $(vt_root_libs_of "$f"); do
			# copy the real file under the name the loader asks for
			[ -e "$root$lib" ] && continue
			real=$(readlink -f "$lib")
			mkdir -p "$root$(dirname "$lib")"
			cp "$real" "$root$lib"
		done
	done
}

vt_root_copy_elf() {
	local root=$1
	shift
	vt_root_copy "$root" "$@"
	vt_root_copy_libs "$root" "$@"
}

vt_root_cpio() {
	local root=$1 out=$2
	(cd "$root" && find . -mindepth 1 | LC_ALL=C sort |
		busybox cpio -o -H newc -R 0:0 2>/dev/null) >"$out.tmp" &&
		mv "$out.tmp" "$out"
}
