# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# tests/vm/debian-kernel.sh: Debian's stock kernels and their modules, for
# the initramfs builders that boot them (tests/vm/run for the nested-KVM test
# VM, guests/linux/build for the Linux guest). Sourced, not run.
#
# The caller defines die MESSAGE (prints, exits) and sets:
#   tag     prefix of the lines this prints on stderr ("testvm")
#   cache   where unpacked kernels are kept: $cache/<package>/root
#   meta    Debian's meta package of the series (kernel_meta gives it)
# and gets kdir (the unpacked package) from fetch_kernel, and from
# add_module the array order: module paths, each after its dependencies,
# once. add_module reads moddir (.../lib/modules/<version> under kdir).

# Debian's meta-packages name the kernel series; each depends on one
# versioned image package, which is what gets downloaded.
kernel_meta() {	# SERIES -> meta package, or nothing for an unknown series
	case "$1" in
	6.1) echo linux-image-amd64 ;;
	6.12) echo linux-image-6.12-amd64 ;;
	esac
}

need_pkg() {
	local missing=""
	for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
	[ -z "$missing" ] && return 0
	echo "$tag: installing$missing" >&2
	{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
		apt-get install -y -qq $missing >/dev/null; } || die "apt-get install$missing failed"
}

# The image package of this series, downloaded and unpacked once.
fetch_kernel() {
	local pkg deb
	# `|| true`: an unknown package is an empty answer, also under set -e
	pkg=$(apt-cache depends "$meta" 2>/dev/null | sed -n 's/^ *Depends: \(linux-image-[0-9].*\)$/\1/p' | head -n1) || true
	if [ -z "$pkg" ]; then
		apt-get update -qq >/dev/null 2>&1 || true
		pkg=$(apt-cache depends "$meta" 2>/dev/null | sed -n 's/^ *Depends: \(linux-image-[0-9].*\)$/\1/p' | head -n1) || true
	fi
	[ -n "$pkg" ] || die "apt cannot resolve $meta"
	kdir=$cache/$pkg
	[ -f "$kdir/.unpacked" ] && return 0
	echo "$tag: downloading $pkg" >&2
	rm -rf "$kdir" && mkdir -p "$kdir/deb" || die "cannot create $kdir"
	(cd "$kdir/deb" && apt-get download "$pkg" >/dev/null 2>&1) || die "apt-get download $pkg failed"
	deb=$(ls "$kdir"/deb/*.deb) && dpkg-deb -x "$deb" "$kdir/root" || die "cannot unpack $deb"
	rm -rf "$kdir/deb"
	touch "$kdir/.unpacked"
}

mod_path() {	# NAME -> path of its .ko or .ko.xz under the kernel's tree
	local alt=${1//_/-} alt2=${1//-/_}
	find "$moddir/kernel" \( -name "$1.ko*" -o -name "$alt.ko*" -o -name "$alt2.ko*" \) | head -n1
}

mod_deps() {	# PATH -> names of the modules it depends on
	local cat=cat
	case "$1" in *.xz) cat="xz -dc" ;; esac
	$cat "$1" | tr '\0' '\n' | sed -n 's/^depends=//p' | tr ',' ' '
}

# Topological order: dependencies first, each module once.
declare -A seen
order=()
add_module() {
	local path dep
	[ -n "${seen[$1]:-}" ] && return 0
	seen[$1]=1
	path=$(mod_path "$1")
	if [ -z "$path" ]; then	# built into this kernel?
		grep -qE "/(${1//[-_]/[-_]})\.ko" "$moddir/modules.builtin" 2>/dev/null && return 0
		die "module $1 is neither in $moddir nor built in"
	fi
	for dep in $(mod_deps "$path"); do add_module "$dep"; done
	order+=("$path")
}
