#!/bin/sh
# SPDX-License-Identifier: MIT
#
# build-debug-kernel.sh: build the debug kernel the VM tests boot (KASAN,
# lockdep, kmemleak, UBSAN, fault injection; see tests/qemu/debug-6.12.config)
# from Debian's own kernel source package, once, and cache it:
#
#   $ACCEL_CACHE/kernels/debug-<source version>-<hash>/
#                                  (ACCEL_CACHE defaults to ~/.cache/accelsched)
#       boot/vmlinuz-<kver>        the kernel the VM boots (also config-, System.map-)
#       lib/modules/<kver>/        modules.builtin, modules.dep (for --kmod)
#       build/                     the built tree: the KDIR modules build against
#       .complete                  what was built, from what, and how long it took
#
# <hash> covers the config fragment and this script's build recipe, so
# editing either builds a new kernel beside the old one; an unchanged pair
# reuses the cache and returns at once. The build runs in a temporary folder
# beside the final one and is renamed into place only when complete, so an
# interrupted build leaves nothing that looks finished and is simply retried.
# A lock serialises concurrent builders of the same cache.
#
# Prints the kernel root on its last line.
#
# Options:
#   --config FILE   the config fragment (default tests/qemu/debug-6.12.config)
#   --source PKG    the Debian source package (default linux-source-6.12)
#   --force         build again even if the cache has this kernel
#   --jobs N        parallel make jobs (default: nproc)
#   --print-root    print where the kernel is or would be; build nothing
set -eu

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
cache=${ACCEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/accelsched}
frag=$top/tests/qemu/debug-6.12.config
pkg=linux-source-6.12
force=0 print_root=0
jobs=$(nproc 2>/dev/null || echo 2)

# Bump when the recipe below changes in a way that changes the result.
RECIPE=1

die() { echo "build-debug-kernel.sh: $*" >&2; exit 1; }
say() { echo "build-debug-kernel.sh: $*" >&2; }

while [ $# -gt 0 ]; do
	case "$1" in
	--config) frag=$2; shift 2 ;;
	--source) pkg=$2; shift 2 ;;
	--force) force=1; shift ;;
	--jobs) jobs=$2; shift 2 ;;
	--print-root) print_root=1; shift ;;
	-h|--help) sed -n '2,29p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) die "unknown option '$1' (try --help)" ;;
	esac
done
[ -f "$frag" ] || die "no config fragment at $frag"
frag=$(cd "$(dirname "$frag")" && pwd)/$(basename "$frag")

# Never build inside a git work tree (the checkout, or anything else); ask
# the nearest folder that exists, before creating anything.
d=$cache
while [ ! -d "$d" ]; do d=$(dirname "$d"); done
if git -C "$d" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	die "the cache $cache is inside the git work tree $(git -C "$d" rev-parse --show-toplevel); set ACCEL_CACHE to a folder outside it"
fi
mkdir -p "$cache/kernels"
cache=$(cd "$cache" && pwd)

# The source: the installed package's tarball (scripts/setup.sh installs it),
# else the archive's candidate, fetched with apt-get download into the cache.
installed=$(dpkg-query -W -f='${Status} ${Version}' "$pkg" 2>/dev/null |
	sed -n 's/^install ok installed //p')
if [ -n "$installed" ] && [ -f "/usr/src/$pkg.tar.xz" ]; then
	version=$installed
	tarball=/usr/src/$pkg.tar.xz
else
	version=$(apt-cache show --no-all-versions "$pkg" 2>/dev/null |
		sed -n 's/^Version: //p' | head -n1)
	[ -n "$version" ] || die "apt knows no package $pkg; run scripts/setup.sh (or 'apt-get update' with bookworm-backports in apt's sources)"
	tarball=
fi

hash=$( { echo "recipe $RECIPE"; cat "$frag"; } | sha256sum | cut -c1-12)
safe_version=$(printf '%s' "$version" | tr -c 'A-Za-z0-9.+-' '_')
final=$cache/kernels/debug-$safe_version-$hash

if [ "$print_root" = 1 ]; then
	echo "$final"
	exit 0
fi
if [ "$force" = 0 ] && [ -f "$final/.complete" ]; then
	echo "$final"
	exit 0
fi

# One builder at a time; whoever waited finds the work done.
exec 9>"$cache/kernels/.debug-build.lock"
if ! flock -n 9; then
	say "another build holds $cache/kernels/.debug-build.lock; waiting"
	flock 9
fi
if [ "$force" = 0 ] && [ -f "$final/.complete" ]; then
	echo "$final"
	exit 0
fi
# Left over by interrupted builds (we hold the lock: nobody is using them).
rm -rf "$cache"/kernels/debug-*.tmp.* "$cache"/kernels/debug-*.old.*

tmp=$final.tmp.$$
trap 'rm -rf "$tmp"' EXIT INT TERM HUP
mkdir -p "$tmp"
# Beside the tree, not in it: the tree goes on exit when the build fails,
# and the log must stay for the message that names it.
log=$final.build.log
: >"$log"
t0=$(date +%s)
say "building the debug kernel from $pkg $version with $(basename "$frag") (hash $hash) in $tmp; log: $log; about 6 minutes on 2 cores"

if [ -z "$tarball" ]; then
	say "fetching $pkg $version with apt-get download"
	(cd "$tmp" && apt-get download -q "$pkg=$version" >&2) ||
		die "apt-get download $pkg=$version failed"
	dpkg -x "$tmp"/"$pkg"_*.deb "$tmp/pkg"
	tarball=$(ls "$tmp/pkg/usr/src/$pkg".tar.* | head -n1)
	[ -f "$tarball" ] || die "$pkg has no /usr/src/$pkg.tar.* inside"
fi

tar -xf "$tarball" -C "$tmp"
rm -rf "$tmp/pkg"
mv "$tmp/$pkg" "$tmp/build"
kdir=$tmp/build

# make_kernel TARGET...: quiet make in the tree; the log tells on failure.
make_kernel() {
	if ! make -C "$kdir" ARCH=x86_64 LOCALVERSION= "$@" >>"$log" 2>&1; then
		tail -n 60 "$log" >&2
		die "make $* failed (the whole log: $log, kept; the half-built tree is removed on exit, rerun to retry)"
	fi
}

make_kernel tinyconfig
KCONFIG_CONFIG=$kdir/.config "$kdir/scripts/kconfig/merge_config.sh" -m \
	"$kdir/.config" "$frag" >>"$log" 2>&1 || die "merge_config.sh failed; see $log"
make_kernel olddefconfig

# Every option the fragment asks for must be in the final .config as asked:
# olddefconfig silently drops an option whose dependencies are not met.
bad=0
while IFS= read -r line; do
	case "$line" in
	CONFIG_*=*)
		opt=${line%%=*}
		grep -qxF "$line" "$kdir/.config" && continue
		got=$(grep -E "^($opt=|# $opt is not set)" "$kdir/.config" || echo "absent (its dependencies are not met)")
		say "requested $line but the .config has: $got"
		bad=$((bad + 1))
		;;
	"# CONFIG_"*" is not set")
		opt=$(echo "$line" | sed 's/^# \(CONFIG_[A-Za-z0-9_]*\) .*/\1/')
		got=$(grep -E "^$opt=" "$kdir/.config" || true)
		[ -z "$got" ] && continue
		say "requested '$line' but the .config has: $got"
		bad=$((bad + 1))
		;;
	esac
done <"$frag"
[ "$bad" = 0 ] || die "$bad option(s) of $(basename "$frag") did not take; check their 'depends on' in the Kconfig files of $pkg (or 'make menuconfig', then '/' and the name)"

make_kernel -j"$jobs" bzImage modules
make_kernel modules_prepare
kver=$(make -s -C "$kdir" ARCH=x86_64 LOCALVERSION= kernelrelease)
mkdir -p "$tmp/boot"
cp "$kdir/arch/x86/boot/bzImage" "$tmp/boot/vmlinuz-$kver"
cp "$kdir/.config" "$tmp/boot/config-$kver"
cp "$kdir/System.map" "$tmp/boot/System.map-$kver"
depmod=$(command -v depmod || echo /sbin/depmod)
make_kernel INSTALL_MOD_PATH="$tmp" DEPMOD="$depmod" modules_install
# modules_install links lib/modules/<kver>/build to the tree's current path,
# which is about to change; make it relative.
rm -f "$tmp/lib/modules/$kver/build" "$tmp/lib/modules/$kver/source"
ln -s ../../../build "$tmp/lib/modules/$kver/build"

t1=$(date +%s)
cat >"$tmp/.complete" <<EOF
source $pkg $version
fragment $frag
hash $hash
kernelrelease $kver
built $(date -u +%Y-%m-%dT%H:%M:%SZ) in $((t1 - t0)) s with $jobs jobs
EOF
if [ -d "$final" ]; then
	mv "$final" "$final.old.$$"
fi
mv "$tmp" "$final"
trap - EXIT INT TERM HUP
rm -rf "$final.old.$$"
say "built $kver in $((t1 - t0)) s: $final"
echo "$final"
