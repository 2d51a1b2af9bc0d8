#!/bin/sh
# SPDX-License-Identifier: MIT
#
# insn-vm.sh: the submission paths in guest instructions per operation,
# counted by the accel-insn QEMU plugin (tools/qemu-insn) in the VM.
#
#   scripts/insn-vm.sh [--kernel NAME] [--module KO] [--rounds N]
#                      [--profile WINDOW [--all-vcpus]]
#
# Boots the kernel (default deb6.12) with the module (built for it unless
# --module names one) under the plugin, runs `accel-bench -r N insn`
# (default 20 rounds), and prints scripts/insn-summary.py's lines: each
# window's instructions per operation and the METRIC ratios
# (insn.uring_job_vs_uring_cmd_nop, insn.kernel_vs_embedded_submit,
# insn.uring_floor_vs_embedded_submit, insn.kernel_vs_uring_floor_submit,
# insn.uring_advantage_kept, insn.uring_saving_kept).
# A count is the same from run to run of the same module and kernel, so
# two modules compare without pairs or medians of runs: run this with
# each (--module) and compare the lines.
#
# --profile WINDOW (uring_job_submit, uring_cmd_nop, ring_nop, ioctl_nop,
# embedded_submit, kernel_submit, embedded_stream, kernel_stream,
# uring_cmd_nop_alone, uring_job_complete, ioctl_job_cycle) adds
# that window's instructions per operation by function, on the window's
# vCPU; with --all-vcpus, on every vCPU (the threads the path woke: the
# reaper, the executor). The VM then prints /proc/kallsyms to name the
# kernel's, which takes about 15 s more, and accel-bench's own symbols
# (nm) name the user addresses.
#
# Exit status: 0, 1 when the VM run or the summary fails (the VM's log
# is printed), 2 on usage.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$top/build}
kernel=deb6.12 ko= rounds=20 profile= mode=on
usage() { sed -n '4,31p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while [ $# -gt 0 ]; do
	case $1 in
	--kernel) kernel=${2:?}; shift 2 ;;
	--module) ko=${2:?}; shift 2 ;;
	--rounds) rounds=${2:?}; shift 2 ;;
	--profile) profile=${2:?}; shift 2 ;;
	--all-vcpus) mode=all; shift ;;
	-h|--help) usage ;;
	*) echo "insn-vm.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
	esac
done
[ "$mode" = on ] || [ -n "$profile" ] ||
	{ echo "insn-vm.sh: --all-vcpus widens a profile: name its window with --profile" >&2; exit 2; }
case $rounds in
''|*[!0-9]*) echo "insn-vm.sh: --rounds '$rounds' is not a number of rounds (1 to 1000)" >&2; exit 2 ;;
esac
[ "$rounds" -ge 1 ] && [ "$rounds" -le 1000 ] ||
	{ echo "insn-vm.sh: --rounds $rounds is out of range (1 to 1000)" >&2; exit 2; }
plugin=$build/tools/accel-insn.so
[ -f "$plugin" ] && [ -x "$build/tools/accel-bench" ] ||
	{ echo "insn-vm.sh: $plugin or accel-bench is not built: run 'make build'" >&2; exit 1; }
if [ -z "$ko" ]; then
	line=$("$top/scripts/fetch-kernels.sh" "$kernel") ||
		{ echo "insn-vm.sh: kernel '$kernel' is not available (see above)" >&2; exit 1; }
	kdir=$(echo "$line" | awk '{ print $4 }')
	"$top/scripts/build-kmod.sh" "$kdir" "$build/kmod/$kernel" >"$build/kmod-insn-$kernel.out" 2>&1 ||
		{ cat "$build/kmod-insn-$kernel.out"; exit 1; }
	ko=$(tail -n1 "$build/kmod-insn-$kernel.out")
fi
[ -f "$ko" ] || { echo "insn-vm.sh: no module at $ko" >&2; exit 1; }

out=$build/vm/insn-$kernel
mkdir -p "$build/vm"
set -- --plugin "$plugin"
if [ -n "$profile" ]; then
	set -- --plugin "$plugin,profile=$mode" --run "grep -e ' [tT] ' /proc/kallsyms"
fi
rc=0
"$top/tests/qemu/run-vm.sh" --kernel "$kernel" --module "$ko" \
	--file "$build/tools/accel-bench" --run "accel-bench -r $rounds insn" "$@" \
	--out "$out" >"$out.log" 2>&1 || rc=$?
if [ "$rc" != 0 ]; then
	cat "$out.log"
	echo "insn-vm.sh: the VM run failed (exit $rc)" >&2
	exit 1
fi
set --
if [ -n "$profile" ]; then
	set -- --profile "$profile"
	# accel-bench is static, not PIE: its symbols name the user addresses.
	nm -n "$build/tools/accel-bench" >"$out/accel-bench.nm" 2>/dev/null &&
		set -- "$@" --user-map "$out/accel-bench.nm"
fi
python3 "$top/scripts/insn-summary.py" "$@" "$out.log" "$out/plugin.log"
