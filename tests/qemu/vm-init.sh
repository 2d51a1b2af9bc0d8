#!/bin/busybox sh
# SPDX-License-Identifier: MIT
#
# /init of the test VM (see run-vm.sh). Prints one KTAP document on ttyS1:
# a result per step (load the image's modules, insmod, each test program with
# its own KTAP nested four spaces in, each command, the module's reference
# count back to 0, a kmemleak check, rmmod, a second kmemleak check, a scan
# of the kernel log for splats), then a marker line the host looks for to
# know the VM finished. Kernel messages go to the console on ttyS0.
/bin/busybox --install -s /bin
export PATH=/bin:/tests
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mkdir -p /dev/shm /dev/pts
mount -t tmpfs tmpfs /dev/shm
mount -t tmpfs tmpfs /tmp
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
exec >/dev/ttyS1 2>&1 </dev/null
echo "accelsched-vm: init started" >/dev/kmsg

# run-vm.sh's accel_timeout_scale=N (debug kernels): the tests' timeouts.
for arg in $(cat /proc/cmdline); do
	case "$arg" in
	accel_timeout_scale=*) export ACCEL_TEST_TIMEOUT_SCALE=${arg#*=} ;;
	esac
done

# Kernels with kmemleak are scanned at the end of the run (two steps when
# the module is loaded: before rmmod, and after it).
kmemleak=/sys/kernel/debug/kmemleak
nleak=0
[ -e "$kmemleak" ] && nleak=1

tests=$(cat /etc/tests)
ntests=$(grep -c . /etc/tests)
nruns=$(grep -c . /etc/runs)
nkmods=$(ls /lib/kmods | grep -c .)
nmod=0
[ -f /lib/accelsched.ko ] && nmod=3
nhost=0
[ -f /etc/host-root ] && nhost=1
[ "$nleak" = 1 ] && [ "$nmod" = 3 ] && nleak=2
# The steps: modules, insmod + refcount + rmmod, tests, commands, kmemleak
# scans, and the kernel log scan at the end.
plan=$((nkmods + nhost + nmod + ntests + nruns + nleak + 1))
n=0

echo "KTAP version 1"
echo "1..$plan"
echo "# kernel $(uname -r), $(nproc) CPUs"
while IFS= read -r note; do
	echo "# $note"
done </etc/notes

result() { # result RC NAME
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $n $2"
	elif [ "$1" = 4 ]; then
		echo "ok $n $2 # SKIP"
	else
		echo "not ok $n $2 # exit status $1"
	fi
}

# step NAME CMD...: run CMD with its output indented as a subtest.
step() {
	name=$1
	shift
	echo "accelsched-vm: START $name" >/dev/kmsg
	{ "$@"; echo $? >/tmp/rc; } 2>&1 | sed 's/^/    /'
	echo "accelsched-vm: END $name" >/dev/kmsg
	result "$(cat /tmp/rc)" "$name"
}

for ko in $(ls /lib/kmods); do
	step "modprobe-${ko#??-}" insmod "/lib/kmods/$ko"
done

# run-vm.sh --host-root: the host's root, read-only, at /host, with this
# VM's /dev, /proc and /sys over it; 'in-host CMD' runs CMD chrooted there
# (its libraries, Vulkan loader and drivers are the host's; the kernel and
# /dev/accelsched are this VM's). The host's /tmp stays visible (a
# checkout may live there); what the programs write goes to the VM's
# /dev/shm, a tmpfs: HOME, TMPDIR and XDG_CACHE_HOME point there.
mount_host_root() {
	mkdir -p /host
	mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=262144 hostroot /host ||
		return 1
	mount -o rbind /dev /host/dev && mount -o rbind /proc /host/proc &&
		mount -o rbind /sys /host/sys || return 1
	cat >/bin/in-host <<-'EOF'
	#!/bin/busybox sh
	exec chroot /host /usr/bin/env HOME=/dev/shm TMPDIR=/dev/shm TEMP=/dev/shm TMP=/dev/shm \
		XDG_CACHE_HOME=/dev/shm/cache PATH=/usr/local/bin:/usr/bin:/bin "$@"
	EOF
	chmod +x /bin/in-host
	in-host /bin/true
}
[ "$nhost" = 1 ] && step mount-host-root mount_host_root

insmod_accel() {
	insmod /lib/accelsched.ko || return 1
	[ -c /dev/accelsched ] || { echo "# /dev/accelsched did not appear"; return 1; }
	grep -q '^accelsched ' /proc/modules
}
[ "$nmod" = 3 ] && step insmod-accelsched insmod_accel

for t in $tests; do
	# shellcheck disable=SC2046
	step "$t" "/tests/$t" $(cat /etc/test-args)
done

while IFS= read -r cmd; do
	[ -n "$cmd" ] || continue
	step "run: $cmd" sh -c "$cmd"
done </etc/runs

# kmemleak_check WHEN SCANS: scan SCANS times for unreferenced objects;
# fail, listing them, if the last scan reports any.
#
# A scan reports a new object only if it is at least 5 s old and its
# contents are what the previous scan saw (its checksum): a leak made since
# the last scan needs two scans, the second one at least 5 s after the
# first started (7 here: under TCG jiffies lag the wall clock). So two
# scans before rmmod; one after it (what the module's exit should have
# freed was checksummed by then).
#
# Any report at all fails, not only one whose backtrace names accelsched:
# the baseline (boot, busybox, the tests without the module's bugs) is
# clean, and a leak the module causes can sit entirely in the kernel's own
# code (an io_uring request, a dma_fence or a file the module forgot to
# put). The scans before rmmod print the module's frames by name; after it
# they are bare addresses. A leak is reported once: "clear" hides it from
# the next scan.
kmemleak_check() {
	i=0
	while [ "$i" -lt "$2" ]; do
		[ "$i" -gt 0 ] && [ "$left" -gt 0 ] && sleep "$left"
		t0=$(date +%s)
		echo scan >"$kmemleak" || { echo "# kmemleak: the scan failed"; return 1; }
		left=$((t0 + 7 - $(date +%s)))
		i=$((i + 1))
	done
	cat "$kmemleak" >/tmp/kmemleak
	if [ ! -s /tmp/kmemleak ]; then
		echo "# kmemleak: no unreferenced object ($1)"
		return 0
	fi
	echo "# kmemleak: $(grep -c 'unreferenced object' /tmp/kmemleak) unreferenced object(s) $1:"
	sed 's/^/# /' /tmp/kmemleak
	echo clear >"$kmemleak"
	return 1
}

# Every file, fence and io_uring request of the tests is gone once their
# processes are: the module's reference count is 0 again. Deferred work
# (an io_uring ring's exit, a timed-out job) may take a moment: wait up to
# 20 s for it.
refcnt_accel() {
	i=0
	while [ "$i" -lt 100 ]; do
		r=$(cat /sys/module/accelsched/refcnt 2>/dev/null) ||
			{ echo "# /sys/module/accelsched/refcnt is missing"; return 1; }
		[ "$r" = 0 ] && return 0
		sleep 0.2
		i=$((i + 1))
	done
	echo "# accelsched's reference count is $r after the tests (expected 0)"
	return 1
}
[ "$nmod" = 3 ] && step refcnt-accelsched refcnt_accel

[ "$nleak" != 0 ] && step kmemleak kmemleak_check "after the tests" 2

rmmod_accel() {
	rmmod accelsched || return 1
	[ ! -e /dev/accelsched ] || { echo "# /dev/accelsched still exists"; return 1; }
	! grep -q '^accelsched ' /proc/modules
}
[ "$nmod" = 3 ] && step rmmod-accelsched rmmod_accel
[ "$nleak" = 2 ] && step kmemleak-after-rmmod kmemleak_check "after rmmod" 1

# The whole run's kernel log, as one result: KASAN, lockdep, UBSAN, kmemleak
# reports, warnings and oopses (the host scans the console too, and prints
# it; this makes a splat a counted failure whatever step it came in). The
# harness's own markers name tests, not splats: they are left out.
splats='BUG:|WARNING:|Oops|KASAN|UBSAN|kernel BUG|possible circular locking'
splats="$splats|inconsistent lock state|suspicious RCU usage"
splats="$splats|possible recursive locking|sleeping function called from invalid context"
splats="$splats|hung task|blocked for more than|refcount_t:|general protection fault"
splats="$splats|list_(add|del) corruption|unreferenced object|suspected memory leak"
splats="$splats|Call Trace:|ODEBUG:"
kernel_log() {
	dmesg | grep -v -e 'accelsched-vm: ' -e 'accelsched-test: ' |
		grep -E "$splats" >/tmp/splats
	[ -s /tmp/splats ] || { echo "# kernel log: no splat"; return 0; }
	echo "# kernel log: $(wc -l </tmp/splats) splat line(s):"
	head -n 40 /tmp/splats | sed 's/^/# /'
	return 1
}
step kernel-log kernel_log

echo "accelsched-vm: done" >/dev/kmsg
echo "# accelsched-vm: done"
sync
reboot -f
