#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# dkms-build.sh KERNELRELEASE KDIR OUTDIR
#
# Build accelsched.ko the way a user's machine does, through DKMS
# (`dkms add` and `dkms build` of the tree scripts/dkms-source.sh lays
# out), for the kernel KERNELRELEASE whose headers are at KDIR. DKMS's
# state stays under OUTDIR (--dkmstree, --sourcetree): nothing is added
# to /var/lib/dkms or /usr/src, and no module is installed. make check
# builds the module for the Debian VM kernels this way and boots it.
#
# Prints the built module's path on its last line (decompressed when
# DKMS compressed it for the kernel: the test VM's insmod wants a plain
# ELF object).
set -eu

src=$(cd "$(dirname "$0")/.." && pwd)
kver=${1:?usage: dkms-build.sh KERNELRELEASE KDIR OUTDIR}
kdir=${2:?usage: dkms-build.sh KERNELRELEASE KDIR OUTDIR}
out=${3:?usage: dkms-build.sh KERNELRELEASE KDIR OUTDIR}

if ! command -v dkms >/dev/null 2>&1; then
	echo "dkms-build.sh: dkms is not installed; scripts/setup.sh installs" \
	     "it (Debian: apt-get install dkms)" >&2
	exit 1
fi
if [ ! -f "$kdir/Makefile" ]; then
	echo "dkms-build.sh: no kernel build tree at '$kdir'" >&2
	exit 1
fi

mkdir -p "$out"
out=$(cd "$out" && pwd -P)
rm -rf "$out/src" "$out/tree"
mkdir -p "$out/tree"
tree=$("$src/scripts/dkms-source.sh" "$out/src" | tail -n1)
version=${tree##*/accelsched-}
set -- --sourcetree "$out/src" --dkmstree "$out/tree"

dkms add -m accelsched -v "$version" "$@" >&2
if ! dkms build -m accelsched -v "$version" -k "$kver" \
		--kernelsourcedir "$kdir" "$@" >&2; then
	log=$(find "$out/tree" -name make.log 2>/dev/null | head -n1)
	[ -n "$log" ] && tail -n 40 "$log" >&2
	echo "dkms-build.sh: dkms build of accelsched/$version for $kver failed${log:+ (log: $log)}" >&2
	exit 1
fi
ko=$(find "$out/tree/accelsched/$version/$kver" -name 'accelsched.ko*' \
	-path '*/module/*' | head -n1)
if [ -z "$ko" ]; then
	echo "dkms-build.sh: dkms built accelsched/$version for $kver but left" \
	     "no accelsched.ko under $out/tree" >&2
	exit 1
fi
case "$ko" in
*.ko.xz)  xz -dc "$ko" >"$out/accelsched.ko" ;;
*.ko.zst) zstd -dqc "$ko" >"$out/accelsched.ko" ;;
*.ko.gz)  gzip -dc "$ko" >"$out/accelsched.ko" ;;
*)        cp "$ko" "$out/accelsched.ko" ;;
esac
echo "$out/accelsched.ko"
