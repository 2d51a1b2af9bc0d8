#!/bin/busybox sh
# SPDX-License-Identifier: MIT
#
# /init of the test VM (see run-vm.sh). Prints one KTAP document on ttyS1:
# a result per step (load the image's modules, insmod, each test program with
# its own KTAP nested four spaces in, each command, rmmod), then a marker
# line the host looks for to know the VM finished. Kernel messages go to the
# console on ttyS0.
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

tests=$(cat /etc/tests)
ntests=$(grep -c . /etc/tests)
nruns=$(grep -c . /etc/runs)
nkmods=$(ls /lib/kmods | grep -c .)
nmod=0
[ -f /lib/accelsched.ko ] && nmod=2
plan=$((nkmods + nmod + ntests + nruns))
n=0

echo "KTAP version 1"
echo "1..$plan"
echo "# kernel $(uname -r), $(nproc) CPUs"

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

insmod_accel() {
	insmod /lib/accelsched.ko || return 1
	[ -c /dev/accelsched ] || { echo "# /dev/accelsched did not appear"; return 1; }
	grep -q '^accelsched ' /proc/modules
}
[ "$nmod" = 2 ] && step insmod-accelsched insmod_accel

for t in $tests; do
	# shellcheck disable=SC2046
	step "$t" "/tests/$t" $(cat /etc/test-args)
done

while IFS= read -r cmd; do
	[ -n "$cmd" ] || continue
	step "run: $cmd" sh -c "$cmd"
done </etc/runs

rmmod_accel() {
	rmmod accelsched || return 1
	[ ! -e /dev/accelsched ] || { echo "# /dev/accelsched still exists"; return 1; }
	! grep -q '^accelsched ' /proc/modules
}
[ "$nmod" = 2 ] && step rmmod-accelsched rmmod_accel

echo "accelsched-vm: done" >/dev/kmsg
echo "# accelsched-vm: done"
sync
reboot -f
