#!/bin/sh
# SPDX-License-Identifier: MIT
#
# profile-vm.sh: profile a command in the VM with perf (cpu-clock samples,
# call chains), and print where the time under one function goes.
#
#   scripts/profile-vm.sh [--kernel NAME] [--under SYM] -- CMD...
#
# The module is built for the kernel (default deb6.12) and loaded; the
# host's perf and its shared libraries are laid over the VM's root
# (ACCEL_VM_OVERLAY of run-vm.sh); CMD runs under `perf record -a -g`.
# Without --under it prints perf report's top functions (children
# included); with it, the share of each function below SYM (e.g.
# accel_uring_job_submit). Under TCG there is no NMI: time spent with
# interrupts off is charged to the function that turns them back on
# (_raw_spin_unlock_irq and the like).
#
#   scripts/profile-vm.sh --under accel_uring_job_submit -- accel-bench --module submit
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$top/build}
kernel=deb6.12
under=
while [ $# -gt 0 ]; do
	case $1 in
	--kernel) kernel=$2; shift 2 ;;
	--under) under=$2; shift 2 ;;
	--) shift; break ;;
	*) echo "profile-vm.sh: unknown option $1 (see the header of this script)" >&2; exit 2 ;;
	esac
done
[ $# -gt 0 ] || { echo "profile-vm.sh: no command to profile (after --)" >&2; exit 2; }
perf=$(command -v perf) || { echo "profile-vm.sh: perf is missing: apt-get install linux-perf" >&2; exit 1; }

line=$("$top/scripts/fetch-kernels.sh" "$kernel")
kdir=$(echo "$line" | awk '{ print $4 }')
"$top/scripts/build-kmod.sh" "$kdir" "$build/kmod/$kernel" >"$build/kmod-$kernel.out" 2>&1 ||
	{ cat "$build/kmod-$kernel.out"; exit 1; }
ko=$(tail -n1 "$build/kmod-$kernel.out")

overlay=$(mktemp -d "${TMPDIR:-/tmp}/accelsched-perf.XXXXXX")
trap 'rm -rf "$overlay"' EXIT
mkdir -p "$overlay/usr/bin" "$overlay/bin"
cp "$perf" "$overlay/usr/bin/perf"
for lib in $(ldd "$perf" | awk '/=>/ { print $3 } /ld-linux/ { print $1 }'); do
	mkdir -p "$overlay$(dirname "$lib")"
	cp -L "$lib" "$overlay$lib"
done
cp "$top/tests/qemu/perf-under.awk" "$overlay/bin/"

report="/usr/bin/perf report -i /tmp/p.data --children --sort sym --stdio -g none 2>/dev/null | grep % | head -60"
[ -n "$under" ] && report="/usr/bin/perf script -i /tmp/p.data -F comm,tid,ip,sym 2>/dev/null | awk -v want=$under -f /bin/perf-under.awk"
ACCEL_VM_OVERLAY=$overlay "$top/tests/qemu/run-vm.sh" --kernel "$kernel" --module "$ko" \
	--file "$build/tools/accel-bench" \
	--run "/usr/bin/perf record -a -g -o /tmp/p.data $* >/dev/null; $report" \
	--out "$build/vm/profile-$kernel" >/dev/null 2>&1 || true
sed -n 's/^    //p' "$build/vm/profile-$kernel/ktap.log"
