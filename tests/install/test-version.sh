#!/bin/bash
# SPDX-License-Identifier: MIT
#
# test-version.sh SRCDIR BUILDDIR VERSION
#
# One version, in one place: VERSION is the only copy, and each reader
# takes it from there: meson (VERSION here is meson.project_version()),
# Kbuild (ACCEL_MODULE_VERSION; read with make alone, no kernel tree
# needed), and scripts/dkms-source.sh (the tree's name and dkms.conf's
# PACKAGE_VERSION). Writes only under BUILDDIR/tests/install/version.work.
set -u

src=${1:?usage: test-version.sh SRCDIR BUILDDIR VERSION}
build=${2:?usage: test-version.sh SRCDIR BUILDDIR VERSION}
version=${3:?usage: test-version.sh SRCDIR BUILDDIR VERSION}
work=$build/tests/install/version.work
command -v make >/dev/null || { echo "SKIP: no make to read Kbuild with"; exit 77; }
rm -rf "$work"
mkdir -p "$work"
. "$(dirname "$0")/../tap.sh"

# kbuild_define DIR: the ACCEL_MODULE_VERSION flag Kbuild in DIR passes,
# as the compiler gets it (after the shell's quote removal).
kbuild_define() {
	# shellcheck disable=SC2016 # $(ccflags-y) is make's, not the shell's
	make -s -C "$1" -f Kbuild src="$1" \
		--eval 'accel-print-flags: ; @echo $(ccflags-y)' accel-print-flags 2>&1 |
		grep -o -e "-DACCEL_MODULE_VERSION=[^ ]*" -e '\*\*\*.*'
}

file=$(cat "$src/VERSION")
if [ "$(wc -l <"$src/VERSION")" = 1 ] && [[ $file =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]]; then
	ok "VERSION is one line, MAJOR.MINOR.MICRO: $file"
else
	not_ok "VERSION is one line, MAJOR.MINOR.MICRO" "$(cat -A "$src/VERSION")"
fi
if [ "$file" = "$version" ]; then
	ok "meson's project version is VERSION's"
else
	not_ok "meson's project version is VERSION's" "meson: $version, VERSION: $file"
fi

got=$(kbuild_define "$src")
if [ "$got" = "-DACCEL_MODULE_VERSION=\"$file\"" ]; then
	ok "Kbuild passes $got"
else
	not_ok "Kbuild passes -DACCEL_MODULE_VERSION=\"$file\"" "got: $got"
fi

# A copy of what DKMS and build-kmod.sh copy, with another version, then
# without VERSION.
mkdir -p "$work/copy"
cp "$src/Kbuild" "$work/copy/"
echo 9.8.7 >"$work/copy/VERSION"
got=$(kbuild_define "$work/copy")
if [ "$got" = '-DACCEL_MODULE_VERSION="9.8.7"' ]; then
	ok "Kbuild follows its own VERSION in a copy"
else
	not_ok "Kbuild follows its own VERSION in a copy" "got: $got"
fi
rm "$work/copy/VERSION"
if got=$(make -s -C "$work/copy" -f Kbuild src="$work/copy" 2>&1); then
	not_ok "Kbuild refuses a tree without VERSION" "make exited 0: $got"
elif [[ $got == *"$work/copy/VERSION is missing or empty"* ]]; then
	ok "Kbuild refuses a tree without VERSION, naming the file"
else
	not_ok "Kbuild refuses a tree without VERSION, naming the file" "$got"
fi

if tree=$("$src/scripts/dkms-source.sh" "$work/dkms" 2>&1 | tail -n1) &&
	[ "$tree" = "$(cd "$work/dkms" && pwd -P)/accelsched-$file" ]; then
	conf=$(grep '^PACKAGE_VERSION=' "$tree/dkms.conf")
	if [ "$conf" = "PACKAGE_VERSION=\"$file\"" ]; then
		ok "dkms-source.sh: accelsched-$file/dkms.conf has $conf"
	else
		not_ok "dkms-source.sh's dkms.conf has PACKAGE_VERSION=\"$file\"" "got: $conf"
	fi
else
	not_ok "dkms-source.sh lays out accelsched-$file" "$tree"
fi

# No second copy in what builds: the module, the library, the build
# files, dkms (comments that quote it as an example aside).
copies=$(cd "$src" && grep -rnF "\"$file\"" kmod uapi Kbuild Makefile dkms meson.build \
	libaccel/meson.build libaccel/include libaccel/src 2>/dev/null |
	grep -vE '^[^:]+:[0-9]+:[[:space:]]*(\*|/\*|//|#[[:space:]]|#$)')
if [ -z "$copies" ]; then
	ok "no other copy of \"$file\" in kmod/, uapi/, libaccel/, the build files or dkms/"
else
	not_ok "no other copy of \"$file\" in kmod/, uapi/, libaccel/, the build files or dkms/" \
		"$copies"
fi

echo "$n checks, $fails failed"
[ "$fails" = 0 ]
