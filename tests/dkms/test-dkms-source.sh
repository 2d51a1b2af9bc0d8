#!/bin/sh
# SPDX-License-Identifier: MIT
#
# scripts/dkms-source.sh lays out the module's sources and nothing else,
# with a dkms.conf that DKMS 3 reads as intended; it refuses an output
# folder inside the sources. (Building and booting what DKMS makes of the
# tree is scripts/check.sh's part, against the VM kernels' headers.)
#
# Usage: test-dkms-source.sh SOURCE_ROOT
set -u

src=${1:?usage: test-dkms-source.sh SOURCE_ROOT}
. "$(dirname "$0")/../tap.sh"
tap_tmp dkms-test

echo "TAP version 13"
version=$(tr -d ' \n' <"$src/VERSION")

tree=$("$src/scripts/dkms-source.sh" "$tmp/out" 2>"$tmp/err" | tail -n1)
check "dkms-source.sh lays out accelsched-$version" \
	test "$tree" = "$(cd "$tmp/out" && pwd -P)/accelsched-$version"

# Exactly the module's sources: each kmod/*.[ch] and uapi/*.h of the
# checkout (no probe output, no objects), the Kbuild, the module-only
# Makefile, the probes, dkms.conf and VERSION.
(cd "$src" && {
	ls kmod/*.c kmod/*.h uapi/*.h | grep -v -e 'compat-probed\.h$' -e '\.mod\.c$'
	echo Kbuild; echo Makefile; echo dkms.conf; echo scripts/conftest.sh
	echo VERSION
} | sort) >"$tmp/want"
(cd "$tree" && find . -type f | sed 's|^\./||' | sort) >"$tmp/got"
if diff -u "$tmp/want" "$tmp/got" >"$tmp/diff"; then
	ok "the tree holds the module's sources and nothing else"
else
	not_ok "the tree holds the module's sources and nothing else"
	sed 's/^/# /' "$tmp/diff"
fi
check "its Makefile is the module-only one" cmp -s "$tree/Makefile" "$src/dkms/Makefile"

# dkms.conf as DKMS reads it: a shell fragment.
conf=$(cd "$tree" && bash -c '
	kernel_source_dir=/K; parallel_jobs=7
	. ./dkms.conf
	printf "%s|%s|%s|%s|%s|%s\n" "$PACKAGE_NAME" "$PACKAGE_VERSION" \
		"${MAKE[0]}" "${BUILT_MODULE_NAME[0]}" "$CLEAN" "$AUTOINSTALL"' 2>&1)
check "dkms.conf names the package, its version and the module" \
	test "$conf" = "accelsched|$version|make KDIR=/K|accelsched|make clean KDIR=/K|yes"
check "dkms.conf excludes kernels without io_uring, dma-buf or sync_file" \
	grep -q '^BUILD_EXCLUSIVE_CONFIG="CONFIG_IO_URING CONFIG_DMA_SHARED_BUFFER CONFIG_SYNC_FILE"$' \
	"$tree/dkms.conf"
check "no @VERSION@ is left" sh -c "! grep -q @VERSION@ '$tree/dkms.conf'"

# Laid out again: the old tree goes, nothing of it stays.
echo stale >"$tree/kmod/stale.c"
"$src/scripts/dkms-source.sh" "$tmp/out" >/dev/null 2>&1
check "a second run replaces the tree" test ! -e "$tree/kmod/stale.c"

# Refused: an output folder inside the module's sources (a copy of the
# checkout's scripts and sources, so that nothing real is at stake).
mkdir -p "$tmp/co/scripts" "$tmp/co/dkms"
cp -r "$src/kmod" "$src/uapi" "$tmp/co/"
cp "$src/scripts/dkms-source.sh" "$src/scripts/conftest.sh" "$src/scripts/resolve-path.sh" "$tmp/co/scripts/"
cp "$src/dkms/Makefile" "$src/dkms/dkms.conf.in" "$tmp/co/dkms/"
cp "$src/Kbuild" "$src/VERSION" "$tmp/co/"
before=$(cd "$tmp/co" && find kmod uapi -type f | sort | xargs cat | cksum)
ln -s kmod "$tmp/co/link"
for bad in kmod uapi kmod/sub link/sub kmod/../uapi; do
	"$tmp/co/scripts/dkms-source.sh" "$tmp/co/$bad" >/dev/null 2>"$tmp/err"
	rc=$?
	check "OUTDIR $bad is refused with status 2" test "$rc" = 2
	check "the refusal of $bad says why" grep -q "inside the module's sources" "$tmp/err"
done
after=$(cd "$tmp/co" && find kmod uapi -type f | sort | xargs cat | cksum)
check "refusals change nothing in kmod/ and uapi/" test "$before" = "$after"
check "refusals create nothing in kmod/ and uapi/" \
	test -z "$(find "$tmp/co/kmod" "$tmp/co/uapi" -type d -name 'sub' -o -name 'accelsched-*')"

tap_end
