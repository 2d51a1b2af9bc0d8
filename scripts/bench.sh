#!/bin/sh
# SPDX-License-Identifier: MIT
#
# bench.sh: run every benchmark and print its METRIC lines.
#
# The benchmarks that need no module (cpu, command buffers, semaphores,
# vulkan on lavapipe, the cost model's error on cpu and vulkan, fair share
# charged by prediction next to the running average) run here, through the dynamically linked
# accel-bench-dynamic (a static program cannot load libvulkan); those that
# need the module run in the VM on ACCEL_BENCH_KERNEL (default deb6.12),
# accel-bench chain there too on vulkan://0 (the host's lavapipe, through
# run-vm.sh --host-root) for vulkan.chain_edge_device_vs_host_kernel.
# Then the same kernel and module under the accel-insn QEMU plugin
# (scripts/insn-vm.sh): the submission paths in guest instructions per
# operation, insn.* ratios that do not drift with TCG's timing.
# Every METRIC is a ratio measured side by side in one run, except one:
# fuzz.calls_per_s, the uapi fuzzer's call rate over ACCEL_FUZZ_BENCH_S
# seconds (default 20) in the VM on ACCEL_FUZZ_KERNEL (default debug6.12),
# a rate that only compares between runs on the same machine and kernel.
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
# accel-bench chain on the kernel scheduler, vulkan://0 through the host's
# lavapipe: on a Debian kernel (9p modules), the VM chrooted into the
# host's root (run-vm.sh --host-root).
set --
if [ "$(awk -v k="$kernel" '$1 == k { print $2 }' tests/qemu/kernels.conf)" = debian ] &&
	[ -x "$build/tools/accel-bench-dynamic" ]; then
	abuild=$(cd "$build" && pwd)
	set -- --host-root --run "in-host env ACCEL_SCHEDULER=kernel $abuild/tools/accel-bench-dynamic chain"
fi
rc=0
"$top/tests/qemu/run-vm.sh" --kernel "$kernel" --module "$ko" \
	--file "$build/tools/accel-bench" --run "accel-bench --module" "$@" \
	--out "$build/vm/bench-$kernel" >"$out/vm.log" 2>&1 || rc=$?
sed -n 's/^    \(# [a-z]*: .*\)$/\1/p' "$out/vm.log"
sed -n 's/^ *\(METRIC .*\)$/\1/p' "$out/vm.log" | tee -a "$out/metrics.txt"
if [ "$rc" != 0 ]; then
	cat "$out/vm.log"
	echo "bench.sh: the VM benchmark run failed" >&2
	exit "$rc"
fi

echo "# instructions in the VM ($kernel, accel-insn plugin)"
irc=0
BUILD=$build "$top/scripts/insn-vm.sh" --kernel "$kernel" --module "$ko" >"$out/insn.log" 2>&1 || irc=$?
grep '^# insn' "$out/insn.log" || true
grep '^METRIC ' "$out/insn.log" | tee -a "$out/metrics.txt" || true
if [ "$irc" != 0 ]; then
	cat "$out/insn.log"
	echo "bench.sh: the instruction counts failed" >&2
	exit "$irc"
fi

# The fuzzer's rate. A problem it finds is make check's to report; here it
# only says so (the rate stands), unless no rate came out at all.
fkernel=${ACCEL_FUZZ_KERNEL:-debug6.12}
echo "# uapi fuzzer in the VM ($fkernel, ${ACCEL_FUZZ_BENCH_S:-20} s)"
frc=0
BUILD=$build "$top/scripts/fuzz-vm.sh" --kernel "$fkernel" \
	--seconds "${ACCEL_FUZZ_BENCH_S:-20}" --metric \
	--out "$build/vm/bench-fuzz-$fkernel" >"$out/fuzz.log" 2>&1 || frc=$?
sed -n 's/^    \(# total calls: .*\)$/\1/p' "$out/fuzz.log"
fline=$(sed -n 's/^ *\(METRIC fuzz\.calls_per_s .*\)$/\1/p' "$out/fuzz.log")
if [ -n "$fline" ]; then
	echo "$fline" | tee -a "$out/metrics.txt"
else
	# The kernel died under it (a bug the fuzzer found): its rate until
	# then, from the progress line it prints every 5 s, saying so.
	last=$(sed -n 's/^ *# progress: \([0-9]*\) s, [0-9]* calls, \([0-9]*\) calls\/s$/\1 \2/p' \
		"$out/fuzz.log" | tail -n1)
	if [ -z "$last" ]; then
		cat "$out/fuzz.log"
		echo "bench.sh: the fuzzer printed no rate" >&2
		exit 1
	fi
	echo "# fuzz: the run did not finish; the rate is over its first ${last% *} s"
	echo "METRIC fuzz.calls_per_s ${last#* }" | tee -a "$out/metrics.txt"
fi
[ "$frc" = 0 ] || echo "# fuzz: the run reported problems (exit $frc): see $out/fuzz.log"

if [ "$hrc" != 0 ]; then
	cat "$out/host.log"
	echo "bench.sh: a host benchmark failed" >&2
	exit "$hrc"
fi
