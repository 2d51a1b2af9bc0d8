#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# dkms-source.sh [OUTDIR]
#
# Lay out the module's sources, and nothing else, as a DKMS source tree:
# OUTDIR/accelsched-<version>/ (default OUTDIR: build/dkms) holding
# dkms.conf (from dkms/dkms.conf.in), Makefile (dkms/Makefile), Kbuild,
# VERSION, kmod/, uapi/ and scripts/conftest.sh. Copy that folder to
# /usr/src and `dkms install accelsched/<version>` (Documentation/
# building.rst). An existing tree of the same version is replaced; OUTDIR
# must not be inside kmod/ or uapi/.
#
# Prints the tree's path on its last line.
set -eu

src=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$src/build/dkms}

# The version: the one place that holds it.
version=$(tr -d ' \n' <"$src/VERSION" 2>/dev/null || true)
case "$version" in
''|*[!0-9A-Za-z.+~-]*)
	echo "dkms-source.sh: cannot read the project's version from VERSION" \
	     "(got '$version'); it must hold one such as 0.1.0" >&2
	exit 1 ;;
esac

# Resolved before anything is created: the nearest existing ancestor,
# with symbolic links followed, and the rest of the path after it.
. "$src/scripts/resolve-path.sh"
real=$(resolve "$out")
srcreal=$(cd "$src" && pwd -P)
case "$real/" in
"$srcreal/kmod/"*|"$srcreal/uapi/"*)
	echo "dkms-source.sh: '$out' is inside the module's sources; pass a" \
	     "folder outside kmod/ and uapi/ (default: build/dkms)" >&2
	exit 2 ;;
esac
mkdir -p "$out"
out=$(cd "$out" && pwd -P)
tree=$out/accelsched-$version
rm -rf "$tree"
mkdir -p "$tree/kmod" "$tree/uapi" "$tree/scripts"
# Sources only: no compat-probed.h, objects or .ko of an in-tree build.
for f in "$src"/kmod/*.c "$src"/kmod/*.h; do
	case "${f##*/}" in compat-probed.h|*.mod.c) continue ;; esac
	cp "$f" "$tree/kmod/"
done
cp "$src"/uapi/*.h "$tree/uapi/"
cp "$src/Kbuild" "$src/VERSION" "$tree/"
cp "$src/dkms/Makefile" "$tree/Makefile"
cp "$src/scripts/conftest.sh" "$tree/scripts/"
sed "s/@VERSION@/$version/" "$src/dkms/dkms.conf.in" >"$tree/dkms.conf"
echo "$tree"
