#!/bin/sh
# SPDX-License-Identifier: MIT
#
# run-vm.sh: boot a kernel under QEMU with a throw-away initramfs, load
# accelsched.ko, run KTAP test programs and/or commands, unload the module,
# and judge the run from the host.
#
#   run-vm.sh --kernel deb6.12 --module build/kmod/deb6.12/accelsched.ko \
#             --test build/tests/kselftest/kselftest-device
#   run-vm.sh --kernel deb6.1 --module ... --run 'accel-bench --vm'
#
# Options:
#   --kernel NAME     a name from tests/qemu/kernels.conf (or a path to an
#                     unpacked kernel root holding boot/vmlinuz-*); a kernel
#                     built from source is built first if the cache lacks it
#   --module PATH     the accelsched.ko to insmod (and rmmod at the end)
#   --test PATH       a statically linked KTAP test program (repeatable)
#   --test-args ARGS  arguments for every --test program (e.g. '-t uring_nop')
#   --run CMD         a shell command to run in the VM (repeatable); its
#                     output is relayed and its exit status is a result
#   --file PATH       copy PATH into the VM's /bin (repeatable)
#   --kmod NAME       load this module of the kernel's own first, with its
#                     dependencies (repeatable; e.g. vgem); one built into
#                     the kernel (modules.builtin) is left out, saying so
#   --host-root       share this machine's root file system with the VM,
#                     read-only, over virtio-9p (loading the kernel's 9p
#                     modules): /host in the VM, with the VM's /dev, /proc
#                     and /sys laid over it; 'in-host CMD' runs CMD
#                     chrooted there (HOME, TMPDIR, TEMP: the VM's /dev/shm),
#                     so dynamically linked
#                     programs (libaccel's suites on vulkan://0 through
#                     lavapipe) run on the VM's kernel and module
#   --append ARGS     extra kernel command line
#   --plugin PATH[,ARG=VALUE...]
#                     load this QEMU TCG plugin with these arguments
#                     (tools/qemu-insn's accel-insn.so counts instructions
#                     between markers); what it writes goes to
#                     OUT/plugin.log
#   --timeout SEC     kill the VM after SEC seconds (default 600; on a debug
#                     kernel, one with KASAN, lockdep or kmemleak, 1200)
#   --out DIR         logs and the initramfs go there (default: a temp dir)
#   --counts FILE     write "passed failed skipped" of the leaf tests to FILE
#
# The run fails on any failed or missing test, on a BUG/WARNING/Oops/KASAN/
# UBSAN/lockdep/hung-task/refcount line in the kernel log, on a kmemleak
# report (kernels with kmemleak scan at the end of the run), on a VM that
# does not finish, or on a timeout; the kernel log is then printed so that CI
# output alone tells what happened. On a debug kernel every test's own
# timeout is multiplied by 3 (ACCEL_TEST_TIMEOUT_SCALE in the VM).
# Two TCG flakes get a second try, said on the output: a kernel that dies
# before /init is booted again, and a run whose kernel trapped on an int3
# its own code patching had already replaced is run again (ktap.py's
# stale_int3()).
# Exit status: 0 pass, 1 fail, 2 usage or set-up error.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)

kernel= module= tests= runs= files= kmods= append= timeout= out= counts=
test_args= host_root=0 plugin=
nl='
'
usage() { sed -n '2,54p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
die() { echo "run-vm.sh: $*" >&2; exit 2; }

while [ $# -gt 0 ]; do
	case "$1" in
	--kernel) kernel=$2; shift 2 ;;
	--module) module=$2; shift 2 ;;
	--test) tests="$tests$2$nl"; shift 2 ;;
	--test-args) test_args=$2; shift 2 ;;
	--run) runs="$runs$2$nl"; shift 2 ;;
	--file) files="$files$2$nl"; shift 2 ;;
	--kmod) kmods="$kmods $2"; shift 2 ;;
	--append) append=$2; shift 2 ;;
	--plugin) plugin=$2; shift 2 ;;
	--host-root) host_root=1; shift ;;
	--timeout) timeout=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--counts) counts=$2; shift 2 ;;
	-h|--help) usage ;;
	*) die "unknown option '$1' (try --help)" ;;
	esac
done
[ -n "$kernel" ] || die "--kernel is required (a name from tests/qemu/kernels.conf)"

# Find the unpacked kernel: a name from kernels.conf, or a root path.
if [ -d "$kernel" ]; then
	kroot=$(cd "$kernel" && pwd)
	kname=$(basename "$kroot")
else
	kname=$kernel
	awk -v n="$kernel" '$1 == n { f = 1 } END { exit !f }' "$here/kernels.conf" ||
		die "no kernel '$kernel' in tests/qemu/kernels.conf"
	# Fetched or built on first use; the cache answers at once after that.
	line=$("$top/scripts/fetch-kernels.sh" "$kernel") ||
		die "cannot make kernel '$kernel' ready (see above)"
	kroot=$(echo "$line" | awk '{ print $3 }')
fi
vmlinuz=$(ls "$kroot"/boot/vmlinuz-* 2>/dev/null | head -n1 || true)
[ -n "$vmlinuz" ] || die "no boot/vmlinuz-* under $kroot; run scripts/setup.sh"
kver=$(basename "$vmlinuz" | sed 's/^vmlinuz-//')

# A debug kernel is several times slower under TCG: give it more time.
debug=0
if grep -qsE '^CONFIG_(KASAN|PROVE_LOCKING|DEBUG_KMEMLEAK)=y' "$kroot/boot/config-$kver"; then
	debug=1
fi
if [ -z "$timeout" ]; then
	timeout=600
	[ "$debug" = 1 ] && timeout=1200
fi

command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 is missing; run scripts/setup.sh"
busybox=$(command -v busybox || true)
[ -n "$busybox" ] && file -L "$busybox" 2>/dev/null | grep -q 'statically linked' ||
	busybox=/bin/busybox
[ -x "$busybox" ] || die "busybox-static is missing; run scripts/setup.sh"

if [ -z "$out" ]; then
	out=$(mktemp -d "${TMPDIR:-/tmp}/accelsched-vm.XXXXXX")
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)
rm -rf "$out/initramfs"
root=$out/initramfs
mkdir -p "$root/bin" "$root/dev" "$root/proc" "$root/sys" "$root/tmp" \
	"$root/lib/kmods" "$root/tests" "$root/etc"
cp "$busybox" "$root/bin/busybox"

# The host's root over virtio-9p needs the kernel's 9p modules, and its
# virtio PCI transport (a module on 6.1, built in on 6.12).
[ "$host_root" = 1 ] && kmods="$kmods virtio_pci 9pnet_virtio 9p"

# Kernel modules of the image, with their dependencies, in load order.
moddir=$kroot/lib/modules/$kver
load_order=
: >"$root/etc/notes"
add_kmod() { # add_kmod RELPATH (as in modules.dep)
	case " $load_order " in *" $1 "*) return ;; esac
	deps=$(awk -F: -v m="$1" '$1 == m { print $2 }' "$moddir/modules.dep")
	for d in $deps; do add_kmod "$d"; done
	load_order="$load_order $1"
}
for m in $kmods; do
	# Built in: nothing to load (modules.builtin names '-' and '_' alike).
	mre=$(echo "$m" | sed 's/[-_]/[-_]/g')
	if grep -qsE "(^|/)$mre\.ko\$" "$moddir/modules.builtin"; then
		echo "$m is built into $kver: not loaded as a module" >>"$root/etc/notes"
		continue
	fi
	[ -f "$moddir/modules.dep" ] || die "kernel $kver has no module '$m' (no modules.dep)"
	rel=$(awk -F: '{ print $1 }' "$moddir/modules.dep" |
		grep -E "/$m\.ko(\.xz|\.zst|\.gz)?\$" | head -n1 || true)
	[ -n "$rel" ] || die "kernel $kver has no module '$m'"
	add_kmod "$rel"
done
i=0
for rel in $load_order; do
	i=$((i + 1))
	name=$(basename "$rel" | sed -E 's/\.ko(\.xz|\.zst|\.gz)?$//')
	dst=$root/lib/kmods/$(printf '%02d' $i)-$name.ko
	case "$rel" in
	*.xz) xz -dc "$moddir/$rel" >"$dst" ;;
	*.zst) zstd -qdc "$moddir/$rel" >"$dst" ;;
	*.gz) gzip -dc "$moddir/$rel" >"$dst" ;;
	*) cp "$moddir/$rel" "$dst" ;;
	esac
done

if [ -n "$module" ]; then
	[ -f "$module" ] || die "no module at $module; build it with 'make -C tests/qemu modules' or scripts/build-kmod.sh"
	cp "$module" "$root/lib/accelsched.ko"
fi

# Newline-separated lists: iterate with IFS set to a newline.
oldifs=$IFS
IFS=$nl
: >"$root/etc/tests"
for t in $tests; do
	[ -x "$t" ] || die "test program $t does not exist; build it with 'make build'"
	cp "$t" "$root/tests/"
	basename "$t" >>"$root/etc/tests"
done
for f in $files; do
	[ -f "$f" ] || die "no file $f to copy into the VM"
	cp "$f" "$root/bin/"
done
IFS=$oldifs
printf '%s' "$runs" >"$root/etc/runs"
printf '%s' "$test_args" >"$root/etc/test-args"
set --
if [ "$host_root" = 1 ]; then
	: >"$root/etc/host-root"
	set -- -virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on
fi
if [ -n "$plugin" ]; then
	pfile=${plugin%%,*}
	pargs=${plugin#"$pfile"}
	[ -f "$pfile" ] || die "no QEMU plugin at $pfile; build it with 'make build'"
	rm -f "$out/plugin.log"
	set -- "$@" -plugin "$(cd "$(dirname "$pfile")" && pwd)/$(basename "$pfile")$pargs" \
		-d plugin -D "$out/plugin.log"
fi
cp "$here/vm-init.sh" "$root/init"
# A directory laid over the VM's root, for tools the tests do not need
# (perf and its libraries, to profile the module under TCG).
if [ -n "${ACCEL_VM_OVERLAY:-}" ]; then
	[ -d "$ACCEL_VM_OVERLAY" ] || die "ACCEL_VM_OVERLAY=$ACCEL_VM_OVERLAY is not a directory"
	cp -a "$ACCEL_VM_OVERLAY/." "$root/"
fi
chmod +x "$root/init"

(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) >"$out/initramfs.cpio.gz"

# ttyS0: the kernel console (every kernel message); ttyS1: the tests' KTAP.
# A task blocked for 20 s is reported as hung (a sysctl: kernels without
# the detector ignore it); accel_timeout_scale reaches the VM's /init.
scale=1
[ "$debug" = 1 ] && scale=3
# A kernel that dies before it runs /init (a boot-time oops under TCG:
# once, an int3 left by the kernel's own code patching, in
# hrtimer_start_range_ns, on Debian's 6.12) has run nothing of ours: it
# boots once more, and says so. Its console stays in console-boot1.log.
boot_vm() {
	rm -f "$out/console.log" "$out/ktap.log" "$out/console-boot1.log"
	for boot in 1 2; do
		set +e
		timeout --foreground -k 10 "$timeout" qemu-system-x86_64 \
			-accel tcg -cpu max -smp 2 -m 1536 \
			-nodefaults -display none -no-reboot -monitor none \
			-serial "file:$out/console.log" -serial "file:$out/ktap.log" \
			-kernel "$vmlinuz" -initrd "$out/initramfs.cpio.gz" \
			-append "console=ttyS0,115200 panic=-1 oops=panic loglevel=7 printk.devkmsg=on sysctl.kernel.hung_task_timeout_secs=20 accel_timeout_scale=$scale $append" \
			"$@" >"$out/qemu.log" 2>&1
		qrc=$?
		set -e
		[ "$boot" = 1 ] && [ -f "$out/console.log" ] &&
			! grep -q 'accelsched-vm: init started' "$out/console.log" || break
		mv "$out/console.log" "$out/console-boot1.log"
		rm -f "$out/ktap.log"
		why=$(grep -m1 -E 'Oops:|BUG:|Kernel panic' "$out/console-boot1.log") || why="qemu exit $qrc"
		echo "# the VM ($kname) died before /init ran ($why); booting it again"
	done
	[ -f "$out/ktap.log" ] || : >"$out/ktap.log"
	[ -f "$out/console.log" ] || : >"$out/console.log"
}

# A run whose kernel trapped on an int3 its own code patching had already
# replaced (ktap.py's stale_int3(): QEMU's TCG ran a stale translation;
# seen during boot and while `accelctl trace` switched tracepoints on,
# about once in 30 runs on Debian's 6.12) is run once more, and says so
# (ktap.py's exit status 3). Its logs stay in console-run1.log and
# ktap-run1.log. Any other failure is judged at once.
rm -f "$out/console-run1.log" "$out/ktap-run1.log"
for run in 1 2; do
	boot_vm "$@"
	flake=3
	[ "$run" = 2 ] && flake=0
	rc=0
	python3 "$here/ktap.py" --kernel "$kname ($kver)" --ktap "$out/ktap.log" \
		--console "$out/console.log" --qemu-log "$out/qemu.log" \
		--qemu-rc "$qrc" --timeout "$timeout" --flake-exit "$flake" \
		${counts:+--counts "$counts"} || rc=$?
	[ "$rc" = 3 ] && [ "$run" = 1 ] || exit "$rc"
	mv "$out/console.log" "$out/console-run1.log"
	mv "$out/ktap.log" "$out/ktap-run1.log"
	echo "# the VM ($kname) is run again: its first run does not count (above)"
done
