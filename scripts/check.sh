#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check.sh: run every test suite and end with one summary line,
#   N passed, N failed, N skipped
# over all of them: the userspace suites (Check and the rest, through meson
# test) and the kernel suites (KTAP, in a VM per kernel of
# tests/qemu/kernels.conf).
#
# Environment:
#   ACCEL_KERNELS="deb6.1 deb6.12"  the kernels to boot (default: all)
#   ACCEL_SKIP_VM=1                 userspace suites only (says so, and the
#                                   VM suites count as skipped)
#   BUILD=build                     the meson build directory
set -u

vm=1 user=1
for arg in "$@"; do
	case "$arg" in
	--vm-only) user=0 ;;
	--no-vm) vm=0 ;;
	*) echo "check.sh: unknown option '$arg' (--vm-only, --no-vm)" >&2; exit 2 ;;
	esac
done
[ "${ACCEL_SKIP_VM:-0}" = 1 ] && vm=0

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
build=${BUILD:-build}
out=$build/check
rm -rf "$out"
mkdir -p "$out"

total_p=0 total_f=0 total_s=0
suites=
add() { # add SUITE P F S
	total_p=$((total_p + $2)); total_f=$((total_f + $3)); total_s=$((total_s + $4))
	suites="$suites$(printf '%-28s %4s passed, %s failed, %s skipped' "$1:" "$2" "$3" "$4")
"
}

say() { printf '\n==== %s ====\n' "$*"; }

say "build: userspace (meson)"
if [ ! -f "$build/build.ninja" ]; then
	meson setup "$build" >"$out/meson-setup.log" 2>&1 ||
		{ cat "$out/meson-setup.log"; echo "check.sh: meson setup failed"; exit 1; }
fi
if ! meson compile -C "$build" >"$out/build.log" 2>&1; then
	cat "$out/build.log"
	echo "check.sh: the userspace build failed"
	echo "0 passed, 1 failed, 0 skipped"
	exit 1
fi

if [ "$user" = 1 ]; then
	say "userspace suites (meson test)"
	meson test -C "$build" --print-errorlogs --no-rebuild 2>&1 | tee "$out/meson-test.log"
	set -- $(python3 "$top/scripts/count-meson-tests.py" "$build/meson-logs/testlog.json")
	add "userspace" "${1:-0}" "${2:-1}" "${3:-0}"
fi

kselftests=$(find "$build/tests/kselftest" -maxdepth 1 -type f -perm -u+x -name 'kselftest-*' 2>/dev/null | sort)
kernels=${ACCEL_KERNELS:-$(grep -v -E '^[[:space:]]*(#|$)' tests/qemu/kernels.conf | awk '{print $1}')}
if [ "$vm" = 0 ]; then
	say "kernel suites: skipped (--no-vm or ACCEL_SKIP_VM=1)"
	for k in $kernels; do add "ktap $k" 0 0 1; done
else
	for k in $kernels; do
		say "kernel suite on $k"
		kroot=$("$top/scripts/fetch-kernels.sh" | awk -v n="$k" '$1 == n { print $3 }')
		kdir=$(ls -d "$kroot"/usr/src/linux-headers-*-amd64 2>/dev/null | head -n1)
		if [ -z "$kdir" ] || ! ko=$("$top/scripts/build-kmod.sh" "$kdir" \
				"$build/kmod/$k" 2>"$out/kmod-$k.log" | tail -n1); then
			cat "$out/kmod-$k.log"
			echo "check.sh: building the module for $k failed"
			add "ktap $k" 0 1 0
			continue
		fi
		set --
		for t in $kselftests; do set -- "$@" --test "$t"; done
		# libaccel's kernel path against the real module.
		set -- "$@" --file "$build/examples/hello-scheduler-static" \
			--run "ACCEL_SCHEDULER=kernel hello-scheduler-static"
		"$top/tests/qemu/run-vm.sh" --kernel "$k" --module "$ko" --kmod vgem \
			--out "$build/vm/$k" --counts "$out/ktap-$k.counts" --timeout 600 "$@"
		if [ -f "$out/ktap-$k.counts" ]; then
			set -- $(cat "$out/ktap-$k.counts")
			add "ktap $k" "$1" "$2" "$3"
		else
			add "ktap $k" 0 1 0
		fi
	done
fi

say "summary"
printf '%s' "$suites"
echo "$total_p passed, $total_f failed, $total_s skipped"
[ "$total_f" -eq 0 ]
