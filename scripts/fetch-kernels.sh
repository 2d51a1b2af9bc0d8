#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Make the VM kernels named in tests/qemu/kernels.conf ready, and say where
# they are. A kernel of kind "debian" is fetched from Debian's archive with
# `apt-get download` and unpacked with `dpkg -x` into a cache folder:
#
#   $ACCEL_CACHE/kernels/<abi>/          (default ~/.cache/accelsched)
#       boot/vmlinuz-<abi>               the kernel the VM boots
#       lib/modules/<abi>/               its modules (vgem, drm, ...)
#       usr/src/linux-headers-<abi>/     what the module builds against
#       .complete                        written last: the unpack is whole
#
# A kernel of kind "source" is built by scripts/build-debug-kernel.sh into
# the same cache (about 6 minutes, once; see that script).
#
# Nothing is installed on the host. A kernel already there is not fetched or
# built again, so a second run costs nothing.
#
#   fetch-kernels.sh [--no-build] [NAME...]
#
# NAMEs limit the work to those kernels (default: all). --no-build leaves out
# the kernels that would have to be built. Prints one line per kernel:
#
#   <name> <id> <root> <kdir>
#
# <id> names the kernel in the cache, <root> holds boot/ and lib/modules/,
# <kdir> is the build tree that out-of-tree modules build against.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
conf=${ACCEL_KERNELS_CONF:-$here/../tests/qemu/kernels.conf}
confdir=$(cd "$(dirname "$conf")" && pwd)
cache=${ACCEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/accelsched}
mkdir -p "$cache/kernels"

die() { echo "fetch-kernels.sh: $*" >&2; exit 1; }

# pkg_exists NAME: the archive (as apt knows it) has a package of that name.
pkg_exists() { apt-cache show --no-all-versions "$1" >/dev/null 2>&1; }

# newest_abi SERIES FLAVOUR: the newest ABI of one kernel series in the archive.
newest_abi() {
	apt-cache search --names-only "^linux-headers-$1.*-$2\$" 2>/dev/null |
		awk '{print $1}' | sed "s/^linux-headers-//" | sort -V | tail -n1
}

# resolve_abi ABI: ABI itself if Debian still carries it, else the newest of
# its series (a warning says so: the pin in kernels.conf wants updating).
resolve_abi() {
	if pkg_exists "linux-headers-$1"; then
		echo "$1"
		return
	fi
	series=$(echo "$1" | sed -E 's/^([0-9]+\.[0-9]+).*/\1/')
	flavour=${1##*-}
	alt=$(newest_abi "$series" "$flavour")
	[ -n "$alt" ] || die "the archive has no linux-headers-$1 and no other $series kernel; run 'apt-get update' (and check bookworm-backports is in apt's sources)"
	echo "fetch-kernels.sh: WARNING: Debian no longer carries $1; using $alt (update tests/qemu/kernels.conf)" >&2
	echo "$alt"
}

# deps_of PKG: the linux-headers-*/linux-kbuild-* packages PKG depends on.
deps_of() {
	apt-cache show --no-all-versions "$1" | sed -n 's/^Depends: //p' |
		tr ',' '\n' | sed -E 's/^ *//; s/ .*//' |
		grep -E '^linux-(headers|kbuild)-' || true
}

fetch_one() {
	name=$1 abi=$2
	root=$cache/kernels/$abi
	if [ -f "$root/.complete" ]; then
		echo "$name $abi $root $root/usr/src/linux-headers-$abi"
		return
	fi
	echo "fetch-kernels.sh: fetching $name ($abi) into $root" >&2
	rm -rf "$root" "$root.debs"
	mkdir -p "$root.debs"
	image=linux-image-$abi-unsigned
	pkg_exists "$image" || image=linux-image-$abi
	pkgs="$image linux-headers-$abi $(deps_of "linux-headers-$abi")"
	# The -common headers package pulls its own linux-kbuild dependency.
	for p in $(deps_of "linux-headers-$abi"); do
		pkgs="$pkgs $(deps_of "$p")"
	done
	pkgs=$(echo "$pkgs" | tr ' ' '\n' | sort -u | tr '\n' ' ')
	(cd "$root.debs" && apt-get download -q $pkgs >&2) ||
		die "apt-get download $pkgs failed"
	mkdir -p "$root"
	for deb in "$root.debs"/*.deb; do
		dpkg -x "$deb" "$root"
	done
	rm -rf "$root.debs"
	hdr=$root/usr/src/linux-headers-$abi
	[ -d "$hdr" ] || die "no headers unpacked at $hdr"
	# The arch headers' Makefile includes the -common tree by its absolute
	# install path; point it at the unpacked copy instead.
	sed -i -E "s|^include /usr/src/|include $root/usr/src/|" "$hdr/Makefile"
	# Some trees reach scripts/ and tools/ through absolute links to
	# /usr/lib/linux-kbuild-*; make them point into the unpack.
	find "$root/usr/src" -maxdepth 2 -type l | while read -r l; do
		t=$(readlink "$l")
		case "$t" in /*) ln -sfn "$root$t" "$l" ;; esac
	done
	# The image ships no modules.dep (its postinst makes it): make one,
	# so the VM can load a module with its dependencies.
	kver=$(ls "$root/lib/modules" | head -n1)
	/sbin/depmod -b "$root" "$kver" ||
		die "depmod failed for $kver (is the kmod package installed?)"
	vmlinuz=$(ls "$root"/boot/vmlinuz-* 2>/dev/null | head -n1)
	[ -n "$vmlinuz" ] || die "no kernel image unpacked under $root/boot"
	touch "$root/.complete"
	echo "$name $abi $root $hdr"
}

# build_one NAME PACKAGE FRAGMENT: a kernel of kind "source".
build_one() {
	root=$("$here/build-debug-kernel.sh" --source "$2" --config "$confdir/$3") ||
		die "building $1 failed (see above)"
	root=$(echo "$root" | tail -n1)
	[ -d "$root/build" ] || die "build-debug-kernel.sh gave no kernel tree at $root/build"
	echo "$1 $(basename "$root") $root $root/build"
}

build=1
while [ $# -gt 0 ]; do
	case "$1" in
	--no-build) build=0; shift ;;
	-h|--help) sed -n '2,28p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) die "unknown option '$1' (try --help)" ;;
	*) break ;;
	esac
done
for want in "$@"; do
	awk -v n="$want" '$1 == n { f = 1 } END { exit !f }' "$conf" ||
		die "no kernel '$want' in $conf"
done

grep -v -E '^[[:space:]]*(#|$)' "$conf" | while read -r name kind origin spec rest; do
	[ -n "$spec" ] && [ -z "$rest" ] ||
		die "$conf: '$name ...': a line is '<name> <kind> <origin> <spec>'"
	if [ $# -gt 0 ]; then
		case " $* " in *" $name "*) ;; *) continue ;; esac
	fi
	case "$kind" in
	debian)
		# The pin, when it is already unpacked, costs no apt query.
		[ -f "$cache/kernels/$spec/.complete" ] || spec=$(resolve_abi "$spec")
		fetch_one "$name" "$spec"
		;;
	source)
		if [ "$build" = 0 ]; then
			echo "fetch-kernels.sh: $name is built from $origin on first use (scripts/build-debug-kernel.sh); not now (--no-build)" >&2
			continue
		fi
		build_one "$name" "$origin" "$spec"
		;;
	*) die "$conf: kernel $name: unknown kind '$kind' (debian or source)" ;;
	esac
done
