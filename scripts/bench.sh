#!/bin/sh
# SPDX-License-Identifier: MIT
#
# bench.sh: run every benchmark and print its METRIC lines. Benchmarks that
# need the module run in the VM, on ACCEL_BENCH_KERNEL (default deb6.12).
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
build=${BUILD:-build}
kernel=${ACCEL_BENCH_KERNEL:-deb6.12}
out=$build/bench
mkdir -p "$out"

# Any kernel of kernels.conf (a debug one is built on first use; its timings
# measure the checkers as much as the module).
line=$("$top/scripts/fetch-kernels.sh" "$kernel") ||
	{ echo "bench.sh: kernel '$kernel' is not available (see above)" >&2; exit 1; }
kdir=$(echo "$line" | awk '{ print $4 }')
"$top/scripts/build-kmod.sh" "$kdir" "$build/kmod/$kernel" >"$out/kmod.out" 2>"$out/kmod.log" ||
	{ cat "$out/kmod.log"; exit 1; }
ko=$(tail -n1 "$out/kmod.out")

echo "# benchmarks in the VM ($kernel)"
rc=0
"$top/tests/qemu/run-vm.sh" --kernel "$kernel" --module "$ko" \
	--file "$build/tools/accel-bench" --run "accel-bench" \
	--out "$build/vm/bench-$kernel" >"$out/vm.log" 2>&1 || rc=$?
sed -n "s/^ *\(# [a-z]*: .*round trip.*\|# nop:.*\)$/\1/p" "$out/vm.log"
sed -n 's/^ *\(METRIC .*\)$/\1/p' "$out/vm.log" | tee "$out/metrics.txt"
if [ "$rc" != 0 ]; then
	cat "$out/vm.log"
	echo "bench.sh: the VM benchmark run failed" >&2
	exit "$rc"
fi
