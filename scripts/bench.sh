#!/bin/sh
# SPDX-License-Identifier: MIT
#
# bench.sh: run every benchmark and print its METRIC lines.
#
# The benchmarks that need no module (cpu, command buffers, semaphores,
# vulkan on lavapipe) run here, through the dynamically linked
# accel-bench-dynamic (a static program cannot load libvulkan); those that
# need the module run in the VM on ACCEL_BENCH_KERNEL (default deb6.12).
# Every METRIC is a ratio measured side by side in one run.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
build=${BUILD:-build}
kernel=${ACCEL_BENCH_KERNEL:-deb6.12}
out=$build/bench
mkdir -p "$out"
: >"$out/metrics.txt"

echo "# benchmarks on the host"
host=$build/tools/accel-bench-dynamic
[ -x "$host" ] || host=$build/tools/accel-bench
hrc=0
"$host" --host >"$out/host.log" 2>&1 || hrc=$?
grep '^#' "$out/host.log" || true
grep '^METRIC ' "$out/host.log" | tee -a "$out/metrics.txt" || true

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
	--file "$build/tools/accel-bench" --run "accel-bench --module" \
	--out "$build/vm/bench-$kernel" >"$out/vm.log" 2>&1 || rc=$?
sed -n 's/^    \(# [a-z]*: .*\)$/\1/p' "$out/vm.log"
sed -n 's/^ *\(METRIC .*\)$/\1/p' "$out/vm.log" | tee -a "$out/metrics.txt"
if [ "$rc" != 0 ]; then
	cat "$out/vm.log"
	echo "bench.sh: the VM benchmark run failed" >&2
	exit "$rc"
fi
if [ "$hrc" != 0 ]; then
	cat "$out/host.log"
	echo "bench.sh: a host benchmark failed" >&2
	exit "$hrc"
fi
