#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# build-kmod.sh KDIR [OUTDIR]
#
# Build accelsched.ko against the kernel build tree KDIR. Without OUTDIR it
# builds in the source tree; with OUTDIR it copies the module's sources
# there first, so that one checkout can hold builds for several kernels side
# by side (the VM tests build one per kernel). Extra arguments after OUTDIR
# go to Kbuild's make (e.g. W=1, V=1).
#
# Prints the path of the built module on its last line. Exits 2, deleting
# nothing, when OUTDIR is the checkout, holds it, or lies inside kmod/ or
# uapi/ (see below).
set -eu

src=$(cd "$(dirname "$0")/.." && pwd)
kdir=${1:?usage: build-kmod.sh KDIR [OUTDIR] [make args]}
out=${2:-}
[ $# -ge 2 ] && shift 2 || shift $#

if [ ! -f "$kdir/Makefile" ]; then
	echo "build-kmod.sh: no kernel build tree at '$kdir'." >&2
	echo "  Install the headers of the kernel you build for (Debian:" \
	     "linux-headers-\$(uname -r)) or pass KDIR=<its build tree>;" \
	     "scripts/setup.sh unpacks the VM kernels' trees under" \
	     "~/.cache/accelsched/kernels/." >&2
	exit 1
fi

# OUTDIR's kmod/ and uapi/ are replaced by fresh copies: OUTDIR must be a
# folder of its own, never the checkout or a folder that holds it, nor a
# folder inside the module's sources. Paths are compared resolved
# (symbolic links followed, `..` removed), before anything is created:
# OUTDIR=. or a link to the checkout would otherwise delete its sources.
. "$src/scripts/resolve-path.sh"
srcreal=$(cd "$src" && pwd -P)
if [ -z "$out" ]; then
	out=$src
else
	real=$(resolve "$out")
	case "$srcreal/" in
	"$real"/*) why="is the checkout or a folder that holds it" ;;
	*)	case "$real/" in
		"$srcreal"/kmod/*|"$srcreal"/uapi/*|"$srcreal"/scripts/*|"$srcreal"/.git/*)
			why="is inside the module's sources" ;;
		*)	why= ;;
		esac ;;
	esac
	if [ -n "$why" ]; then
		echo "build-kmod.sh: OUTDIR '$out' ($real) $why; its kmod/ and" \
		     "uapi/ would be deleted. Pass a folder of its own, such as" \
		     "build/kmod/<kernel>, or no OUTDIR to build in the checkout." >&2
		exit 2
	fi
	mkdir -p "$out"
	out=$(cd "$out" && pwd -P)
	rm -rf "$out/kmod" "$out/uapi"
	cp -r "$src/kmod" "$src/uapi" "$src/Kbuild" "$src/VERSION" "$out/"
fi

"$src/scripts/conftest.sh" "$kdir" "$out/kmod/compat-probed.h"
make -C "$kdir" M="$out" "$@" modules >&2
echo "$out/accelsched.ko"
