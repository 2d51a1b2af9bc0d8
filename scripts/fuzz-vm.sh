#!/bin/sh
# SPDX-License-Identifier: MIT
#
# fuzz-vm.sh: boot one kernel (the debug one by default) with accelsched.ko
# and the uapi fuzzer only, fuzz for a while, and judge the run like every
# VM suite: the fuzzer's own KTAP, then the VM's steps after it (the
# module's reference count back to 0, kmemleak, rmmod, a clean kernel log).
#
#   scripts/fuzz-vm.sh [--kernel debug6.12] [--module KO] [--seconds 60]
#                      [--seed N] [--out DIR] [--counts FILE] [--metric]
#                      [-- ARGS...]
#
# ARGS go to accel-fuzz as they are (--threads, --procs, --skip op,op, ...;
# see tests/fuzz/fuzz.c). FUZZ_ARGS in the environment adds more. Without
# --seed the fuzzer picks one and prints it ("seed: N"); pass it back to
# replay the run. --module boots that module (built for the kernel) instead
# of building one with build-kmod.sh. BUILD is the meson build directory
# (default build).
# Exit status: run-vm.sh's (0 pass, 1 fail, 2 set-up error).
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
build=${BUILD:-build}
kernel=debug6.12 ko= seconds=60 seed= out= counts= metric=
while [ $# -gt 0 ]; do
	case "$1" in
	--kernel) kernel=$2; shift 2 ;;
	--module) ko=$2; shift 2 ;;
	--seconds) seconds=$2; shift 2 ;;
	--seed) seed=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--counts) counts=$2; shift 2 ;;
	--metric) metric=--metric; shift ;;
	--) shift; break ;;
	-h|--help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "fuzz-vm.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
	esac
done
out=${out:-$build/vm/fuzz-$kernel}
mkdir -p "$out"

fuzz=$build/tests/fuzz/accel-fuzz
[ -x "$fuzz" ] || { echo "fuzz-vm.sh: no $fuzz; build it with 'make build'" >&2; exit 2; }

if [ -n "$ko" ]; then
	[ -f "$ko" ] || { echo "fuzz-vm.sh: no module at $ko" >&2; exit 2; }
else
	line=$("$top/scripts/fetch-kernels.sh" "$kernel") ||
		{ echo "fuzz-vm.sh: kernel $kernel is not available (see above)" >&2; exit 2; }
	kdir=$(echo "$line" | awk '{ print $4 }')
	"$top/scripts/build-kmod.sh" "$kdir" "$build/kmod/$kernel" \
		>"$out/kmod.out" 2>"$out/kmod.log" ||
		{ cat "$out/kmod.log"; echo "fuzz-vm.sh: building the module for $kernel failed" >&2; exit 2; }
	ko=$(tail -n1 "$out/kmod.out")
fi

cmd="accel-fuzz --seconds $seconds${seed:+ --seed $seed}${metric:+ $metric} ${FUZZ_ARGS:-} $*"
echo "# fuzz-vm.sh: $kernel: $cmd"
# The VM's own limit: boot, the fuzz, its wind-down (at most 90 s per
# worker on a debug kernel), the kmemleak scans.
timeout=$((seconds + 480))
# The first splat is the finding: the kernel panics on it (a KASAN report,
# a WARNING, a soft lockup, a task hung for 20 s) instead of fuzzing on in
# a corrupted kernel, or hanging in one until the timeout.
set -- --kernel "$kernel" --module "$ko" --file "$fuzz" --run "$cmd" \
	--out "$out" --timeout "$timeout" \
	--append "panic_on_warn=1 kasan.fault=panic softlockup_panic=1 hung_task_panic=1"
[ -n "$counts" ] && set -- "$@" --counts "$counts"
exec "$top/tests/qemu/run-vm.sh" "$@"
