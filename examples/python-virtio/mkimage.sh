#!/bin/bash
# examples/python-virtio/mkimage.sh: builds the guest of the python-virtio
# example from Debian packages only, into a cache directory.
#
#   mkimage.sh kernel DIR   DIR/vmlinuz + DIR/modules/*.ko + DIR/modules.order:
#                           linux-image-amd64 fetched with `apt-get download`
#                           (kept in $VT_DEB_CACHE) and unpacked with
#                           `dpkg-deb -x`; nothing is installed on the host
#   mkimage.sh base DIR     DIR/base.cpio: busybox-static, the kernel modules,
#                           the host's Debian python3 (3.11 on Debian 12, 3.13
#                           on 13: the one the extension is built for) + the
#                           stdlib it needs + libs
#   mkimage.sh top DIR BUILD  DIR/top.cpio: /init, the workload, the vmtrace
#                           command and Python extension from BUILD
#
# The initramfs the guest boots is base.cpio followed by top.cpio (the
# kernel unpacks concatenated archives in order), so a rebuild of vmtrace
# only redoes the small top archive.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../common/mkroot.sh"

: "${VT_DEB_CACHE:=/var/cache/vmtrace/debs}"
# Debian's interpreter, the one `make` builds the extension for
# (tools/configure's CONFIG_PY): python3.X and its stdlib /usr/lib/python3.X
PYBIN=$(readlink -f /usr/bin/python3)
PY=${PYBIN##*/}
# virtio transport, disk, serial port, ext4 for the data disk (crc32c for
# its checksums); their dependencies are added by tools/debian-kernel
MODULES="virtio_pci virtio_blk virtio_console crc32c_generic ext4"
# stdlib parts a traced workload does not need (tests, GUIs, build files)
PY_SKIP="test idlelib tkinter turtledemo ensurepip lib2to3 distutils pydoc_data
config-* site-packages dist-packages"

die() { echo "mkimage: $*" >&2; exit 1; }

# The kernel and MODULES (with their dependencies, in load order): the one
# Debian kernel fetcher of the project, tools/debian-kernel.
build_kernel() {
	"$HERE/../../tools/debian-kernel" "$1" $MODULES
}

build_base() {
	local dir=$1 root skip f names
	root="$dir/base.root"
	[ -f "$dir/vmlinuz" ] || die "$dir/vmlinuz missing: run '$0 kernel $dir' first"
	[ -x /bin/busybox ] || die "/bin/busybox missing (Debian package busybox-static)"
	[ -x "$PYBIN" ] && [ -d "/usr/lib/$PY/lib-dynload" ] ||
		die "/usr/bin/python3 ($PYBIN) or /usr/lib/$PY/lib-dynload missing (Debian package python3: make deps)"
	rm -rf "$root" && mkdir -p "$root"/{bin,sbin,etc,proc,sys,dev,tmp,run,data,lib/modules,usr/bin,usr/lib}
	cp /bin/busybox "$root/bin/busybox"
	for f in $(/bin/busybox --list); do
		[ -e "$root/bin/$f" ] || ln -s busybox "$root/bin/$f"
	done
	# (every module there; none when the kernel builds them all in)
	cp -R "$dir/modules/." "$dir/modules.order" "$root/lib/modules/"
	vt_root_copy_elf "$root" /usr/bin/$PY
	skip=()
	read -ra names <<<"${PY_SKIP//$'\n'/ }"	# one line (read stops at a newline); no glob expansion of config-*
	for f in "${names[@]}"; do skip+=(--exclude="./$f"); done
	mkdir -p "$root/usr/lib/$PY"
	tar -C /usr/lib/$PY "${skip[@]}" --exclude='./lib-dynload/_test*' \
		--exclude='./lib-dynload/xxlimited*' --exclude='*.opt-1.pyc' \
		--exclude='*.opt-2.pyc' -cf - . | tar -C "$root/usr/lib/$PY" -xf -
	vt_root_copy_elf "$root" /usr/lib/$PY/lib-dynload/*.so
	ln -s $PY "$root/usr/bin/python3"
	# the guest's own timezone/locale needs: none; a minimal passwd for getpwuid
	echo 'root:x:0:0:root:/root:/bin/sh' >"$root/etc/passwd"
	echo 'root:x:0:' >"$root/etc/group"
	vt_root_cpio "$root" "$dir/base.cpio"
	rm -rf "$root"
}

build_top() {
	local dir=$1 build=$2 root f
	root="$dir/top.root"
	rm -rf "$root" && mkdir -p "$root/etc/vmtrace" "$root/opt/vmtrace/bin"
	install -m 0755 "$HERE/init" "$root/init"
	install -m 0644 "$HERE/workload.py" "$root/opt/vmtrace/workload.py"
	install -m 0644 "$HERE/pairing.py" "$root/opt/vmtrace/pairing.py"
	if [ -x "$build/bin/vmtrace" ]; then
		cp "$build/bin/vmtrace" "$root/opt/vmtrace/bin/vmtrace"
		vt_root_copy_libs "$root" "$build/bin/vmtrace"
	fi
	if [ -d "$build/python" ]; then
		mkdir -p "$root/opt/vmtrace/python"
		cp -a "$build/python/." "$root/opt/vmtrace/python/"
		for f in $(find "$root/opt/vmtrace/python" -name '*.so'); do
			vt_root_copy_libs "$root" "$f"
			# a sanitizer build: python3 must load the ASan runtime first
			if nm -D "$f" 2>/dev/null | grep -q __asan_init; then
				vt_root_libs_of "$f" | grep -E '/lib(a|ub)san\.so' | tr '\n' ' ' \
					>"$root/opt/vmtrace/python.preload"
			fi
		done
	fi
	vt_root_cpio "$root" "$dir/top.cpio"
	rm -rf "$root"
}

case "${1:-}" in
kernel) build_kernel "$2" ;;
base) build_base "$2" ;;
top) build_top "$2" "$3" ;;
*) die "usage: $0 kernel|base DIR | top DIR BUILD" ;;
esac
