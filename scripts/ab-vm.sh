#!/bin/sh
# SPDX-License-Identifier: MIT
#
# ab-vm.sh: two builds of the module measured side by side in one VM.
#
#   scripts/ab-vm.sh [--kernel NAME] [--pairs N] BASE NEW [-- BENCH-ARGS...]
#
# BASE and NEW are each a built accelsched.ko, or a git revision of this
# checkout whose module is built here (from `git archive`, in a folder of
# its own). One VM boots with both; each of N pairs (default 4) loads BASE,
# runs accel-bench, unloads it, then does the same with NEW. BENCH-ARGS are
# accel-bench's (default: --module -r 7 submit). It prints every run's
# METRIC lines, then for each metric the two medians and NEW over BASE
# (scripts/ab-summary.py):
#
#   # ab: submit.uring_job_vs_uring_cmd_nop: base 3.2770 new 3.2065 new/base 0.978 (4 pairs)
#
# Why: under TCG the same module reads a tenth or more apart from one VM to
# the next (the VM's own ACCEL_URING_CMD_NOP from 410 to 590 ns), more than
# most changes to the submission path move it. Inside one VM, alternating,
# two modules compare. Logs: $BUILD/vm/ab-<kernel>/ (BUILD=build).
# Exit status: 0 done, 1 a build, the VM or a run failed, 2 usage.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$top/build}
kernel=deb6.12
pairs=4
usage() {
	sed -n 's/^#   scripts/scripts/p' "$0" >&2
	exit 2
}
while [ $# -gt 0 ]; do
	case $1 in
	--kernel) [ $# -ge 2 ] || usage; kernel=$2; shift 2 ;;
	--pairs) [ $# -ge 2 ] || usage; pairs=$2; shift 2 ;;
	-h|--help) usage ;;
	-*) echo "ab-vm.sh: unknown option '$1'" >&2; usage ;;
	*) break ;;
	esac
done
[ $# -ge 2 ] || { echo "ab-vm.sh: BASE and NEW are required (a .ko or a git revision each)" >&2; usage; }
base=$1 new=$2
shift 2
if [ $# -gt 0 ]; then
	[ "$1" = -- ] || { echo "ab-vm.sh: '$1' after NEW: accel-bench's arguments go after --" >&2; usage; }
	shift
fi
[ $# -gt 0 ] || set -- --module -r 7 submit
case $pairs in
''|*[!0-9]*) pairs=0 ;;
esac
if [ "$pairs" -lt 1 ] || [ "$pairs" -gt 50 ]; then
	echo "ab-vm.sh: --pairs takes a whole number from 1 to 50" >&2
	exit 2
fi
# spec LABEL SPEC: a file, or the commit a revision names ("" for a file).
spec() {
	[ -f "$2" ] && return 0
	git -C "$top" rev-parse --verify --quiet "$2^{commit}" || {
		echo "ab-vm.sh: $1 '$2' is neither a built module nor a git revision of $top" >&2
		exit 2
	}
}
base_rev=$(spec BASE "$base")
new_rev=$(spec NEW "$new")
bench=$build/tools/accel-bench
[ -x "$bench" ] || { echo "ab-vm.sh: $bench is missing: build it first (make, or ninja -C $build)" >&2; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/accelsched-ab.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

line=$("$top/scripts/fetch-kernels.sh" "$kernel") ||
	{ echo "ab-vm.sh: kernel '$kernel' is not available (see above)" >&2; exit 1; }
kdir=$(echo "$line" | awk '{ print $4 }')

# module LABEL SPEC REV: $tmp/accelsched-LABEL.ko, copied or built.
module() {
	if [ -z "$3" ]; then
		cp "$2" "$tmp/accelsched-$1.ko"
		return
	fi
	rev=$3
	mkdir -p "$tmp/src-$1"
	git -C "$top" archive "$rev" Kbuild VERSION kmod uapi scripts | tar -x -C "$tmp/src-$1"
	if ! "$tmp/src-$1/scripts/build-kmod.sh" "$kdir" "$tmp/out-$1" \
			>"$tmp/build-$1.log" 2>&1; then
		cat "$tmp/build-$1.log" >&2
		echo "ab-vm.sh: building $1 ($2, $rev) for $kernel failed" >&2
		exit 1
	fi
	cp "$(tail -n1 "$tmp/build-$1.log")" "$tmp/accelsched-$1.ko"
}
module base "$base" "$base_rev"
module new "$new" "$new_rev"

# In the VM: unload (retrying while the last run's files go), load, run.
# shellcheck disable=SC2016 # expanded in the VM, not here
swap='n=0; while [ -d /sys/module/accelsched ]; do rmmod accelsched 2>/dev/null && break; n=$((n + 1)); [ $n -lt 150 ] || exit 1; sleep 0.2; done; insmod /bin/accelsched-$v.ko'
run="for i in \$(seq $pairs); do for v in base new; do $swap || exit 1; echo \"# ab-run \$v\"; accel-bench $* || exit 1; done; done; v=base; $swap"
out=$build/vm/ab-$kernel
mkdir -p "$out"
rc=0
"$top/tests/qemu/run-vm.sh" --kernel "$kernel" --module "$tmp/accelsched-base.ko" \
	--file "$tmp/accelsched-base.ko" --file "$tmp/accelsched-new.ko" --file "$bench" \
	--run "$run" --out "$out" >"$tmp/vm.log" 2>&1 || rc=$?
sed -n 's/^    \(# ab-run .*\|# [a-z]*: .*\|METRIC .*\)$/\1/p' "$tmp/vm.log" | tee "$tmp/runs.txt"
cp "$tmp/vm.log" "$out/ab.log"
if [ "$rc" != 0 ]; then
	cat "$tmp/vm.log"
	echo "ab-vm.sh: the VM run failed (log: $out/ab.log)" >&2
	exit 1
fi
python3 "$top/scripts/ab-summary.py" "$tmp/runs.txt"
