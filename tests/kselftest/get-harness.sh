#!/bin/sh
# SPDX-License-Identifier: MIT
#
# get-harness.sh OUTDIR STATUS: put the kernel's selftest harness,
# tools/testing/selftests/kselftest_harness.h and the kselftest.h it
# includes, into OUTDIR, from Debian's linux-source-6.12; meson runs it at
# configure time (tests/kselftest/meson.build). The headers are the kernel's
# (GPL-2.0), not this project's: they are never committed.
#
# Where they come from, the first that exists:
#   1. OUTDIR itself, from an earlier configure (remove OUTDIR to take them
#      again, e.g. after a new linux-source-6.12);
#   2. the debug kernel's unpacked source, which scripts/build-debug-kernel.sh
#      leaves under $ACCEL_CACHE/kernels/debug-*/build (ACCEL_CACHE defaults
#      to ~/.cache/accelsched), when it was built from linux-source-6.12;
#   3. /usr/src/linux-source-6.12.tar.xz (the linux-source-6.12 package,
#      which scripts/setup.sh installs unless --no-vm): the two members are
#      extracted, nothing else (about 20 s: xz reads up to tools/).
#
# STATUS gets one line: "built: <where from>" or "not built: <why>", for
# scripts/check.sh, which must not count zero kernel tests as a pass.
# The same line goes to stdout (built) or stderr (not built).
# Exit status: 0 with the headers in OUTDIR, 1 without.
set -eu

[ $# -eq 2 ] || { echo "usage: get-harness.sh OUTDIR STATUS" >&2; exit 2; }
out=$1 status=$2
pkg=linux-source-6.12
sub=tools/testing/selftests
members="kselftest_harness.h kselftest.h"
cache=${ACCEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/accelsched}

# have DIR: DIR holds every member.
have() {
	for m in $members; do
		[ -f "$1/$m" ] || return 1
	done
}

done_from() {
	echo "$1" >"$out/.source"
	echo "built: $1" >"$status"
	echo "$1"
	exit 0
}

if have "$out" && [ -f "$out/.source" ]; then
	echo "built: $(cat "$out/.source")" >"$status"
	cat "$out/.source"
	exit 0
fi

tmp=$out.tmp.$$
trap 'rm -rf "$tmp"' EXIT INT TERM HUP
rm -rf "$tmp"
mkdir -p "$tmp"
# install: OUTDIR appears whole or not at all.
install_tmp() {
	rm -rf "$out"
	mv "$tmp" "$out"
}

for d in "$cache"/kernels/debug-*/build; do
	[ -d "$d/$sub" ] && have "$d/$sub" || continue
	src=$(sed -n 's/^source //p' "$d/../.complete" 2>/dev/null || true)
	case "$src" in
	"$pkg "*) ;;
	*) continue ;;
	esac
	for m in $members; do
		cp "$d/$sub/$m" "$tmp/"
	done
	install_tmp
	done_from "$src, the debug kernel's source ($(basename "$(dirname "$d")"))"
done

tarball=/usr/src/$pkg.tar.xz
if [ -f "$tarball" ]; then
	set --
	for m in $members; do
		set -- "$@" "$pkg/$sub/$m"
	done
	# --occurrence: stop reading the archive once each member is out.
	if tar -xJf "$tarball" -C "$tmp" --occurrence=1 --strip-components=4 "$@" &&
		have "$tmp"; then
		version=$(dpkg-query -W -f '${Version}' "$pkg" 2>/dev/null || true)
		install_tmp
		done_from "$pkg${version:+ $version}, $tarball"
	fi
	why="$tarball lacks $sub/{$(echo $members | tr ' ' ,)} (tar failed; see above)"
else
	why="neither $tarball (install $pkg: scripts/setup.sh does, unless --no-vm) nor a debug kernel's source built from it (scripts/build-debug-kernel.sh) exists"
fi
echo "not built: the kernel's kselftest_harness.h is missing: $why" >"$status"
echo "get-harness.sh: $why" >&2
exit 1
