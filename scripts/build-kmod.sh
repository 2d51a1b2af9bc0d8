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
# Prints the path of the built module on its last line.
set -eu

src=$(cd "$(dirname "$0")/.." && pwd)
kdir=${1:?usage: build-kmod.sh KDIR [OUTDIR] [make args]}
out=${2:-$src}
[ $# -ge 2 ] && shift 2 || shift $#

if [ ! -f "$kdir/Makefile" ]; then
	echo "build-kmod.sh: no kernel build tree at '$kdir'." >&2
	echo "  Install the headers of the kernel you build for (Debian:" \
	     "linux-headers-\$(uname -r)) or pass KDIR=<its build tree>;" \
	     "scripts/setup.sh unpacks the VM kernels' trees under" \
	     "~/.cache/accelsched/kernels/." >&2
	exit 1
fi

if [ "$out" != "$src" ]; then
	mkdir -p "$out"
	out=$(cd "$out" && pwd)
	rm -rf "$out/kmod" "$out/uapi"
	cp -r "$src/kmod" "$src/uapi" "$src/Kbuild" "$src/VERSION" "$out/"
fi

"$src/scripts/conftest.sh" "$kdir" "$out/kmod/compat-probed.h"
make -C "$kdir" M="$out" "$@" modules >&2
echo "$out/accelsched.ko"
