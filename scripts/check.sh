#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check.sh: run every test suite and end with one summary line,
#   N passed, N failed, N skipped
# over all of them: the userspace suites (Check and the rest, through meson
# test) and the kernel suites (KTAP, in a VM per kernel of
# tests/qemu/kernels.conf: Debian's 6.1 and 6.12, and the debug 6.12 with
# KASAN, lockdep, kmemleak and fault injection, built on first use and
# cached), the uapi fuzzer in a VM of its own on the debug kernel (in the
# background, alongside the kernel suites), and the accel-insn QEMU
# plugin's counts of a known workload in a short VM of their own. A line
# before the summary lists the kernels that were booted.
#
# The library suites run twice more, each in a build of its own inside the
# build directory: with ASan and UBSan ($build/asan: every test of meson's
# "unit" suite) and with TSan ($build/tsan: the suites that exercise
# threads, TSAN_TESTS below). Any sanitizer report fails its test: the
# runtime options below stop the process at the first one, with a
# non-zero exit status that Check and meson count as a failure.
#
# Environment:
#   ACCEL_KERNELS="deb6.1 deb6.12"  the kernels to boot (default: all)
#   ACCEL_SKIP_VM=1                 userspace suites only (says so, and the
#                                   VM suites count as skipped)
#   BUILD=build                     the meson build directory
#   ACCEL_SKIP_SANITIZERS=1         no sanitizer builds (they count as
#                                   skipped)
#   ACCEL_FUZZ_S=180|60             the fuzzer's seconds (ACCEL_FUZZ_SEED=N
#                                   replays a run, ACCEL_FUZZ_ARGS adds
#                                   arguments, e.g. "--skip op,op")
#   ACCEL_INSN_KERNEL=deb6.12       where the accel-insn plugin's self-test
#                                   boots (one of ACCEL_KERNELS)
#   ACCEL_BG_NICE=19                the niceness of the work in the
#                                   background (tests/scripts/
#                                   test-check-lanes.sh sets 0 where it
#                                   times the order of things)
set -u

vm=1 user=1
for arg in "$@"; do
	case "$arg" in
	--vm-only) user=0 ;;
	--no-vm) vm=0 ;;
	*) echo "check.sh: unknown option '$arg' (--vm-only, --no-vm)" >&2; exit 2 ;;
	esac
done
[ "${ACCEL_SKIP_VM:-0}" = 1 ] && vm=0

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
build=${BUILD:-build}
out=$build/check
rm -rf "$out"
mkdir -p "$out"

total_p=0 total_f=0 total_s=0
suites= booted= not_booted=
add() { # add SUITE P F S
	total_p=$((total_p + $2)); total_f=$((total_f + $3)); total_s=$((total_s + $4))
	suites="$suites$(printf '%-28s %4s passed, %s failed, %s skipped' "$1:" "$2" "$3" "$4")
"
}

say() { printf '\n==== %s ====\n' "$*"; }

say "build: userspace (meson)"
if [ ! -f "$build/build.ninja" ]; then
	meson setup "$build" >"$out/meson-setup.log" 2>&1 ||
		{ cat "$out/meson-setup.log"; echo "check.sh: meson setup failed"; exit 1; }
fi
if ! meson compile -C "$build" >"$out/build.log" 2>&1; then
	cat "$out/build.log"
	echo "check.sh: the userspace build failed"
	echo "0 passed, 1 failed, 0 skipped"
	exit 1
fi

if [ "$user" = 1 ]; then
	say "userspace suites (meson test)"
	meson test -C "$build" --print-errorlogs --no-rebuild 2>&1 | tee "$out/meson-test.log"
	set -- $(python3 "$top/scripts/count-meson-tests.py" "$build/meson-logs/testlog.json")
	add "userspace" "${1:-0}" "${2:-1}" "${3:-0}"
fi

# A sanitizer leg: san_leg NAME DIR SANITIZE TEST... (@SUITE: all of it).
# Builds only what the tests need (the static programs of the VM cannot
# link with a sanitizer runtime), runs them, and adds their counts.
# san_built is 1 once this run built them: the VM runs some of them, and a
# build left from an earlier checkout would test older sources.
san_leg() {
	name=$1 dir=$2 san=$3
	shift 3
	san_built=0
	say "userspace suites with $name (meson test -C $dir)"
	t0=$(date +%s)
	if [ ! -f "$dir/build.ninja" ] &&
	   ! meson setup "$dir" -Db_sanitize="$san" -Db_lundef=false \
			>"$out/$name-setup.log" 2>&1; then
		cat "$out/$name-setup.log"
		echo "check.sh: meson setup of the $name build failed"
		add "$name" 0 1 0
		return
	fi
	# shellcheck disable=SC2046 # a list of files
	if ! targets=$(python3 "$top/scripts/test-targets.py" "$dir" "$@") ||
	   ! ninja -C "$dir" $targets >"$out/$name-build.log" 2>&1; then
		tail -n 40 "$out/$name-build.log" 2>/dev/null
		echo "check.sh: the $name build failed"
		add "$name" 0 1 0
		return
	fi
	san_built=1
	case "$1" in
	@*) set -- --suite "${1#@}" ;;
	esac
	# shellcheck disable=SC2086 # san_env: assignments, split on purpose
	env $san_env meson test -C "$dir" --print-errorlogs --no-rebuild "$@" 2>&1 |
		tee "$out/$name-test.log"
	set -- $(python3 "$top/scripts/count-meson-tests.py" "$dir/meson-logs/testlog.json")
	add "$name" "${1:-0}" "${2:-1}" "${3:-0}"
	echo "check.sh: $name took $(($(date +%s) - t0)) s"
}

# TSan runs the suites with threads in them: the executors, the waits, the
# vulkan driver's completion thread, process exit with work in flight,
# the stress suite. The others are single-threaded and run under ASan+UBSan; under TSan
# they would only add minutes (the whole unit suite takes about twice as
# long there).
TSAN_TESTS="internal scheduler semaphore queue cpu stress transfer alloca vulkan-queue vulkan-cpu
	vulkan-stress vulkan-transfer vulkan-alloca vulkan exit-after-release-cpu exit-after-release-vulkan
	device-waits vulkan-device-waits exec-cache enum vulkan-enum cost vulkan-cost"

if [ "$user" = 1 ] && [ "${ACCEL_SKIP_SANITIZERS:-0}" != 1 ]; then
	# Stop at the first report; UBSan's reports are recoverable otherwise.
	export ASAN_OPTIONS="halt_on_error=1:detect_leaks=1:exitcode=66${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
	export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
	export TSAN_OPTIONS="halt_on_error=1:exitcode=66:second_deadlock_stack=1${TSAN_OPTIONS:+:$TSAN_OPTIONS}"
	san_env=
	# lavapipe's once-initialiser keeps 128 bytes for good: see the file.
	lvp=$(sed -n 's/.*"library_path": *"\([^"]*\)".*/\1/p' \
		/usr/share/vulkan/icd.d/lvp_icd.*.json 2>/dev/null | head -n1)
	[ -n "$lvp" ] && [ -f "$lvp" ] &&
		san_env="LD_PRELOAD=$lvp LSAN_OPTIONS=suppressions=$top/tests/unit/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS} ASAN_OPTIONS=$ASAN_OPTIONS:verify_asan_link_order=0"
	san_leg "asan+ubsan" "$build/asan" address,undefined @unit
	asan_built=$san_built
	# LLVM inside lavapipe races with itself where TSan cannot see: see
	# the file.
	san_env="TSAN_OPTIONS=$TSAN_OPTIONS:suppressions=$top/tests/unit/tsan.supp"
	# shellcheck disable=SC2086 # a list of test names
	san_leg "tsan" "$build/tsan" thread $TSAN_TESTS
	tsan_built=$san_built
elif [ "$user" = 1 ]; then
	say "sanitizer suites: skipped (ACCEL_SKIP_SANITIZERS=1)"
	add "asan+ubsan" 0 0 1
	add "tsan" 0 0 1
fi

kselftests=$(find "$build/tests/kselftest" -maxdepth 1 -type f -perm -u+x -name 'kselftest-*' 2>/dev/null | sort)
# No kernel test program is not a pass: meson leaves them out without the
# kernel's kselftest_harness.h (programs left from an earlier build are
# not these sources'), and harness.status says why.
harness_status=$(cat "$build/tests/kselftest/harness.status" 2>/dev/null) ||
	harness_status="not built: $build/tests/kselftest/harness.status is missing"
case $harness_status in
built:*) ;;
*) kselftests= ;;
esac
if [ "$vm" = 1 ] && [ -z "$kselftests" ]; then
	echo "check.sh: no kernel test program in $build/tests/kselftest ($harness_status)"
	add "kselftests" 0 1 0
fi
kernels=${ACCEL_KERNELS:-$(grep -v -E '^[[:space:]]*(#|$)' tests/qemu/kernels.conf | awk '{print $1}')}
# kernel_source NAME: where kernels.conf takes it from ("debian", "source").
kernel_source() { awk -v k="$1" '$1 == k { print $2 }' tests/qemu/kernels.conf; }

# kernel_prepare NAME: fetch the kernel (downloaded, or built: the debug
# kernel; on first use, then cached) into $out/prep-NAME (fetch-kernels.sh's
# line) and build the module for it. Debian's kernels get it as a user's
# machine does: DKMS builds it from `make dkms-source`'s tree against the
# kernel's headers package, and that module is what boots. The debug
# kernel (a source build) takes build-kmod.sh's, the path of `make`.
# Leaves prep-NAME.fetch-failed or prep-NAME.kmod-failed on a failure (the
# logs: fetch-NAME.log, kmod-NAME.log), and prep-NAME.done last. Runs its
# commands through $prep_nice.
prep_nice=
kernel_prepare() {
	p_k=$1
	rm -f "$out/prep-$p_k" "$out/prep-$p_k".*
	if ! $prep_nice "$top/scripts/fetch-kernels.sh" "$p_k" >"$out/prep-$p_k" 2>"$out/fetch-$p_k.log"; then
		: >"$out/prep-$p_k.fetch-failed"
	else
		p_line=$(cat "$out/prep-$p_k")
		p_kdir=$(echo "$p_line" | awk '{ print $4 }')
		case $(kernel_source "$p_k") in
		debian)
			set -- "$top/scripts/dkms-build.sh" "$(echo "$p_line" | awk '{ print $2 }')" \
				"$p_kdir" "$build/dkms/$p_k" ;;
		*)
			set -- "$top/scripts/build-kmod.sh" "$p_kdir" "$build/kmod/$p_k" ;;
		esac
		$prep_nice "$@" >"$out/kmod-$p_k.out" 2>"$out/kmod-$p_k.log" ||
			: >"$out/prep-$p_k.kmod-failed"
	fi
	: >"$out/prep-$p_k.done"
}

# kill_tree PID: end PID and every process under it, the lowest first.
kill_tree() {
	for c in $(cat /proc/[0-9]*/stat 2>/dev/null | awk -v p="$1" '$4 == p { print $1 }'); do
		kill_tree "$c"
	done
	kill "$1" 2>/dev/null
}

# kernel_prepared NAME PID: wait until the background preparation (PID)
# has prepared NAME; prepare it here if that is gone without doing so.
kernel_prepared() {
	[ -f "$out/prep-$1.done" ] ||
		echo "check.sh: waiting for $1 and its module, made in the background"
	while [ ! -f "$out/prep-$1.done" ]; do
		if [ -z "$2" ] || ! kill -0 "$2" 2>/dev/null; then
			[ -f "$out/prep-$1.done" ] || kernel_prepare "$1"
			return
		fi
		sleep 1
	done
}

# The uapi fuzzer (tests/fuzz), in a VM of its own on the debug kernel, so
# that a crash it finds does not take the other suites' results with it.
# ACCEL_FUZZ_S: its seconds; ACCEL_FUZZ_SEED: replay a seed;
# ACCEL_FUZZ_ARGS: more fuzzer arguments (--skip op,op). It runs in the
# background, at the lowest priority, once the kernels are prepared: a
# Debian kernel's suite leaves most of a core idle, and the fuzzer's VM
# takes what it leaves. There it makes about a third of the calls a second
# it makes alone, so it runs 180 s, about as many calls as a minute alone,
# and adds no minute to the run. The debug kernel's suite runs alone
# (below): when that suite comes before the fuzzer could start (the debug
# kernel was built in this run), the fuzzer runs after the suites, alone,
# for 60 s. fuzz_run SECONDS leaves its output in $out/fuzz.log, its counts
# in $out/fuzz-KERNEL.counts, and its seconds in $out/fuzz.secs; the
# background does not start it once $out/fuzz-later exists.
fuzz_kernel=${ACCEL_FUZZ_KERNEL:-debug6.12}
bg_nice=${ACCEL_BG_NICE:-19}
case $bg_nice in
''|*[!0-9]*) echo "check.sh: ACCEL_BG_NICE='$bg_nice' ignored: give a niceness, 0 to 19"; bg_nice=19 ;;
esac
fuzz_wanted=0 prep_pid=
# $kernels is one kernel a line when it comes from kernels.conf: flatten it.
[ "$vm" = 1 ] && case " $(echo $kernels) " in *" $fuzz_kernel "*) fuzz_wanted=1 ;; esac
fuzz_run() {
	f_t0=$(date +%s)
	rm -f "$out/fuzz-$fuzz_kernel.counts"
	if [ -f "$out/prep-$fuzz_kernel.fetch-failed" ] || [ -f "$out/prep-$fuzz_kernel.kmod-failed" ]; then
		echo "check.sh: no fuzzer run: kernel $fuzz_kernel or its module is not there (its suite says why)"
	else
		BUILD=$build FUZZ_ARGS=${ACCEL_FUZZ_ARGS:-} nice -n "$bg_nice" "$top/scripts/fuzz-vm.sh" \
			--kernel "$fuzz_kernel" --module "$(tail -n1 "$out/kmod-$fuzz_kernel.out")" \
			--seconds "${ACCEL_FUZZ_S:-$1}" ${ACCEL_FUZZ_SEED:+--seed "$ACCEL_FUZZ_SEED"} \
			--out "$build/vm/fuzz-$fuzz_kernel" --counts "$out/fuzz-$fuzz_kernel.counts" 2>&1
	fi >"$out/fuzz.log"
	echo $(($(date +%s) - f_t0)) >"$out/fuzz.secs"
}
if [ "$vm" = 0 ]; then
	say "kernel suites: skipped (--no-vm or ACCEL_SKIP_VM=1)"
	for k in $kernels; do add "ktap $k" 0 0 1; add "trace $k" 0 0 1; done
	add "dkms" 0 0 1
else
	# The Debian kernels (DKMS, the host's root over 9p) that run the
	# vulkan device-waits suite against the module: with two or more,
	# the plain build runs on the first and the TSan build on the last
	# (each takes 30 to 50 s of a VM); with one, both run there.
	ndebian=0
	for k in $kernels; do
		[ "$(kernel_source "$k")" = debian ] && ndebian=$((ndebian + 1))
	done
	idebian=0
	# The kernels after the first are fetched (the debug kernel built,
	# on first use) and get their modules in the background, at the
	# lowest priority, while the first one's VM runs: a VM leaves most
	# of a core idle (it waits on its tests' timeouts and wake-ups), and
	# the builds take what it leaves; then the fuzzer's VM (fuzz_run).
	# The first kernel's are made here, before, so that no two fetches
	# or DKMS builds ever overlap.
	first=$(echo $kernels | awk '{ print $1 }')
	rest=$(echo $kernels | cut -s -d' ' -f2-)
	kernel_prepare "$first"
	[ "$(kernel_source "$first")" = debian ] || : >"$out/fuzz-later"
	if [ -n "$rest" ] || [ "$fuzz_wanted" = 1 ]; then
		(prep_nice="nice -n $bg_nice"
		 for k in $rest; do kernel_prepare "$k"; done
		 [ "$fuzz_wanted" = 0 ] || [ -f "$out/fuzz-later" ] || fuzz_run 180) \
			</dev/null >/dev/null 2>&1 &
		prep_pid=$!
		# A background list ignores SIGINT: stop it with this run.
		trap 'kill_tree "$prep_pid"; exit 130' INT TERM HUP
	fi
	for k in $kernels; do
		say "kernel suite on $k"
		how=DKMS
		[ "$(kernel_source "$k")" = debian ] || how=build-kmod.sh
		[ "$how" = DKMS ] && idebian=$((idebian + 1))
		t0=$(date +%s)
		# The debug kernel's suite runs alone: its timing checks are the
		# tightest (KASAN and lockdep slow every call), and a VM beside
		# it stretches them. The fuzzer's VM is done by then when the
		# kernel came from the cache; if it has not started, it runs
		# after the suites (fuzz-later).
		[ "$how" = DKMS ] || : >"$out/fuzz-later"
		kernel_prepared "$k" "$prep_pid"
		if [ "$how" != DKMS ] && [ -n "$prep_pid" ] && kill -0 "$prep_pid" 2>/dev/null; then
			echo "check.sh: waiting for the work in the background: $k's suite runs alone"
			wait "$prep_pid"
		fi
		if [ -f "$out/prep-$k.fetch-failed" ]; then
			cat "$out/fetch-$k.log"
			echo "check.sh: kernel $k is not available (above)"
			add "ktap $k" 0 1 0
			not_booted="$not_booted $k"
			continue
		fi
		cat "$out/fetch-$k.log"
		line=$(cat "$out/prep-$k")
		kroot=$(echo "$line" | awk '{ print $3 }')
		kver=$(ls "$kroot"/boot/vmlinuz-* 2>/dev/null | head -n1 | sed 's|.*/vmlinuz-||')
		if [ -f "$out/prep-$k.kmod-failed" ]; then
			cat "$out/kmod-$k.log"
			echo "check.sh: building the module for $k with $how failed"
			[ "$how" = DKMS ] && add "dkms $k" 0 1 0
			add "ktap $k" 0 1 0
			not_booted="$not_booted $k"
			continue
		fi
		[ "$how" = DKMS ] && add "dkms $k" 1 0 0
		ko=$(tail -n1 "$out/kmod-$k.out")
		set --
		for t in $kselftests; do set -- "$@" --test "$t"; done
		# libaccel's kernel path against the real module.
		set -- "$@" --file "$build/examples/hello-scheduler-static" \
			--run "ACCEL_SCHEDULER=kernel hello-scheduler-static"
		# The tenants example: a process per tenant on the module, in
		# cgroups of their own with weights 100:300, one credit.
		set -- "$@" --file "$build/examples/tenants-static" \
			--run "ACCEL_SCHEDULER=kernel tenants-static --processes --seconds 2"
		# libaccel's suites on the kernel scheduler: one suite, two runs
		# (embedded on the host, kernel here), the queue suite six
		# times (io_uring, the ioctl path with io_uring denied, a ring
		# polled by a kernel thread, ACCEL_URING_SQPOLL) and twice more
		# as with modules before ABI 1.8 (ACCEL_KERNEL_EVENTS=0:
		# releases as SUBMIT answers, and on ioctls failed waits found
		# by watching them), once with a lone job's release answered
		# by its SUBMIT (ABI 1.9, ACCEL_KERNEL_ANSWER=1), the kernel
		# suite three times (io_uring, polled, SUBMIT answers), the
		# stress suite (twice: without and with answers), and the
		# tenants suite (processes and cgroups as tenants).
		# On a debug kernel (KASAN, lockdep, kmemleak: 3 to 4 times
		# slower) the queue suite runs twice only, on io_uring and on
		# the ioctls: the module's paths the other four take (a
		# polled ring, SUBMIT answers, an answered lone job) are
		# taken there by the kernel suite's and the stress suite's
		# runs below, and the four cost 70 s of the debug VM.
		ck="ACCEL_SCHEDULER=kernel CK_TAP_LOG_FILE_NAME=- CK_VERBOSITY=silent CK_DEFAULT_TIMEOUT=120"
		set -- "$@" --file "$build/tests/unit/test-semaphore-static" \
			--file "$build/tests/unit/test-queue-static" \
			--file "$build/tests/unit/test-kernel-sched-static" \
			--file "$build/tests/unit/test-stress-static" \
			--file "$build/tests/unit/test-tenants-static" \
			--run "$ck test-semaphore-static" \
			--run "$ck test-queue-static" \
			--run "ACCEL_TEST_NO_URING=1 $ck test-queue-static"
		if ! grep -qsE '^CONFIG_(KASAN|PROVE_LOCKING|DEBUG_KMEMLEAK)=y' "$kroot/boot/config-$kver"; then
			set -- "$@" --run "ACCEL_URING_SQPOLL=2 $ck test-queue-static" \
				--run "ACCEL_KERNEL_EVENTS=0 $ck test-queue-static" \
				--run "ACCEL_KERNEL_EVENTS=0 ACCEL_TEST_NO_URING=1 $ck test-queue-static" \
				--run "ACCEL_KERNEL_ANSWER=1 $ck test-queue-static"
		fi
		set -- "$@" --run "$ck test-kernel-sched-static" \
			--run "ACCEL_URING_SQPOLL=2 $ck test-kernel-sched-static" \
			--run "ACCEL_KERNEL_EVENTS=0 $ck test-kernel-sched-static" \
			--run "$ck test-stress-static" \
			--run "ACCEL_KERNEL_ANSWER=1 $ck test-stress-static" \
			--run "$ck test-tenants-static"
		# accelctl top against a known load (tests/unit/test-top.c).
		set -- "$@" --file "$build/tools/accelctl-static" \
			--file "$build/tests/unit/test-top-static" \
			--run "$ck test-top-static"
		# accelctl trace of a known workload (tests/trace): recorded
		# here, printed as "# TRACE" lines, checked on the host below.
		set -- "$@" --file "$build/tests/trace/trace-workload" \
			--run "accelctl-static trace --fences -o /tmp/trace.json -- trace-workload && sed 's/^/# TRACE /' /tmp/trace.json"
		# libaccel on vulkan://0 (lavapipe, the host's) against the real
		# module: the device-waits suite, whose pipelined jobs the
		# executor orders on the device. The VM shares the host's root
		# over virtio-9p and runs the suite chrooted there (run-vm.sh
		# --host-root); Debian's kernels have the 9p modules, the debug
		# kernel does not.
		# The same suite's TSan build too (the tsan leg above made it):
		# the kernel scheduler's threads (reaper, executors, the
		# device's completion thread) race nowhere else under TSan.
		# One build per Debian kernel where there are two (ndebian,
		# above): the module's paths are the same in both runs. The
		# TSan run asks for answers (ACCEL_KERNEL_ANSWER=1): a job
		# alone on its queue is then handed to its executor by the
		# submitting thread, the others by the reaper, so both
		# hand-offs race under TSan.
		host_root=0
		vkdw=$build/tests/unit/test-device-waits-vulkan
		if [ "$how" = DKMS ] && [ -x "$vkdw" ]; then
			abuild=$(cd "$build" && pwd)
			vkenv="ACCEL_TEST_DEVICE=vulkan://0 ACCEL_TEST_KERNELS=$abuild/tests/unit/kernels/test-kernels.vkexe ACCEL_TEST_CPU_KERNELS=$abuild/tests/unit/kernels/test-cpu-kernels.vkexe"
			# lavapipe compiles on the VM's emulated CPU: a first
			# dispatch may take longer than the default job timeout
			# (10 s) there, so these jobs get 120 s.
			host_root=1
			set -- "$@" --run "echo 120000 >/sys/module/accelsched/parameters/job_timeout_ms"
			tsan_dw=0
			[ "${tsan_built:-0}" = 1 ] &&
				[ -x "$abuild/tsan/tests/unit/test-device-waits-vulkan" ] && tsan_dw=1
			if [ "$tsan_dw" = 0 ] || [ "$ndebian" = 1 ] || [ "$idebian" -lt "$ndebian" ]; then
				set -- "$@" --run "in-host env $ck $vkenv $abuild/tests/unit/test-device-waits-vulkan"
			fi
			if [ "$tsan_dw" = 1 ] && [ "$idebian" = "$ndebian" ]; then
				set -- "$@" --run "in-host env $ck $vkenv ACCEL_KERNEL_ANSWER=1 TSAN_OPTIONS=halt_on_error=1:exitcode=66:second_deadlock_stack=1:suppressions=$top/tests/unit/tsan.supp $abuild/tsan/tests/unit/test-device-waits-vulkan"
			fi
		fi
		# ASan and UBSan over libaccel's kernel path: the ASan leg's
		# builds of the kernel-sched suite (the reaper, the kill tests)
		# and of the queue suite with answers (a lone job handed on by
		# its submitter, the rest by the reaper), against the module.
		# On the first Debian kernel only (the host's root over 9p; the
		# TSan run above is on the last): the library's paths are the
		# same on every kernel.
		asan_dir=$build/asan/tests/unit
		if [ "$how" = DKMS ] && [ "$idebian" = 1 ] && [ "${asan_built:-0}" = 1 ] &&
			[ -x "$asan_dir/test-kernel-sched" ] && [ -x "$asan_dir/test-queue" ]; then
			adir=$(cd "$asan_dir" && pwd)
			asan_env="ASAN_OPTIONS=$ASAN_OPTIONS UBSAN_OPTIONS=$UBSAN_OPTIONS"
			asan_env="$asan_env ACCEL_TEST_KERNELS=$adir/kernels/test-kernels.so"
			asan_env="$asan_env ACCEL_TEST_CPU_KERNELS=$adir/kernels/test-cpu-kernels.so"
			host_root=1
			set -- "$@" --run "in-host env $ck $asan_env $adir/test-kernel-sched" \
				--run "in-host env $ck $asan_env ACCEL_KERNEL_ANSWER=1 $adir/test-queue"
		fi
		[ "$host_root" = 1 ] && set -- "$@" --host-root
		# run-vm.sh picks the timeout: longer on a debug kernel.
		"$top/tests/qemu/run-vm.sh" --kernel "$k" --module "$ko" --kmod vgem \
			--out "$build/vm/$k" --counts "$out/ktap-$k.counts" "$@"
		if python3 "$top/tests/trace/check-trace.py" --from-ktap "$build/vm/$k/ktap.log" \
			--workload --fences >"$out/trace-$k.tap" 2>&1; then
			add "trace $k" 1 0 0
		else
			grep -v '^ok ' "$out/trace-$k.tap"
			echo "check.sh: the trace of the workload on $k is wrong (tests/trace/check-trace.py, above)"
			add "trace $k" 0 1 0
		fi
		secs=$(($(date +%s) - t0))
		booted="$booted $k ($kver, module by $how, $secs s)"
		if [ -f "$out/ktap-$k.counts" ]; then
			set -- $(cat "$out/ktap-$k.counts")
			add "ktap $k" "$1" "$2" "$3"
		else
			add "ktap $k" 0 1 0
		fi
	done
fi

# The accel-insn QEMU plugin (tools/qemu-insn), which make bench's insn.*
# figures rest on, held to a known workload (tests/insn/insn-selftest:
# system calls and user loops in windows) by tests/insn/check-insn.py,
# in a short VM of its own (no module) on ACCEL_INSN_KERNEL (deb6.12).
insn_kernel=${ACCEL_INSN_KERNEL:-deb6.12}
if [ "$vm" = 1 ] && case " $(echo $kernels) " in *" $insn_kernel "*) true ;; *) false ;; esac; then
	say "accel-insn plugin on $insn_kernel"
	t0=$(date +%s)
	rm -f "$out/insn.tap"
	if [ ! -f "$build/tools/accel-insn.so" ] || [ ! -x "$build/tests/insn/insn-selftest" ]; then
		echo "check.sh: accel-insn.so or insn-selftest is not built (x86_64 only): skipped"
		add "insn $insn_kernel" 0 0 1
	elif "$top/tests/qemu/run-vm.sh" --kernel "$insn_kernel" --out "$build/vm/insn-selftest" \
		--file "$build/tests/insn/insn-selftest" --run insn-selftest \
		--run "grep -A1 -e ' __x64_sys_getppid\$' /proc/kallsyms" \
		--plugin "$build/tools/accel-insn.so,profile=on" >"$out/insn-vm.log" 2>&1 &&
		python3 "$top/tests/insn/check-insn.py" "$out/insn-vm.log" \
			"$build/vm/insn-selftest/plugin.log" >"$out/insn.tap" 2>&1; then
		add "insn $insn_kernel" "$(grep -c '^ok ' "$out/insn.tap")" 0 0
	else
		cat "$out/insn-vm.log" "$out/insn.tap" 2>/dev/null
		echo "check.sh: the accel-insn plugin's counts are wrong or its VM failed (above)"
		np=$(grep -c '^ok ' "$out/insn.tap" 2>/dev/null) || true
		nf=$(grep -c '^not ok ' "$out/insn.tap" 2>/dev/null) || true
		[ "${nf:-0}" -gt 0 ] || nf=1 # the VM run itself failed
		add "insn $insn_kernel" "${np:-0}" "$nf" 0
	fi
	booted="$booted insn:$insn_kernel ($(($(date +%s) - t0)) s)"
elif [ "$vm" = 0 ]; then
	add "insn $insn_kernel" 0 0 1
fi

# run-vm.sh boots once more a kernel that died before it ran /init (a
# TCG flake at boot), and says so: held to a kernel told to run an /init
# that is not there, which dies so both times (about 5 s).
if [ "$vm" = 1 ] && case " $(echo $kernels) " in *" $insn_kernel "*) true ;; *) false ;; esac; then
	say "run-vm.sh's second boot, on $insn_kernel"
	"$top/tests/qemu/run-vm.sh" --kernel "$insn_kernel" --out "$build/vm/boot-retry" \
		--append rdinit=/nonexistent >"$out/boot-retry.log" 2>&1
	if grep -q "died before /init ran (.*Kernel panic.*); booting it again" "$out/boot-retry.log" &&
	   [ -f "$build/vm/boot-retry/console-boot1.log" ] &&
	   grep -q 'FAILED' "$out/boot-retry.log"; then
		add "boot-retry $insn_kernel" 1 0 0
	else
		cat "$out/boot-retry.log"
		echo "check.sh: run-vm.sh did not boot a kernel that died before /init again (above)"
		add "boot-retry $insn_kernel" 0 1 0
	fi
elif [ "$vm" = 0 ]; then
	add "boot-retry $insn_kernel" 0 0 1
fi

# run-vm.sh runs once more a VM whose kernel trapped on an int3 its code
# patching had already replaced (a TCG flake: ktap.py's stale_int3()), and
# says so: held to a VM that writes such an oops into its own kernel log,
# and so fails both runs (about 10 s).
if [ "$vm" = 1 ] && case " $(echo $kernels) " in *" $insn_kernel "*) true ;; *) false ;; esac; then
	say "run-vm.sh's second run after a stale int3, on $insn_kernel"
	"$top/tests/qemu/run-vm.sh" --kernel "$insn_kernel" --out "$build/vm/int3-retry" \
		--run "echo '<1>Oops: int3: 0000 [#1] SMP' >/dev/kmsg; echo '<1>Code: 48 83 ec 48 0f <1f> 44 00 00' >/dev/kmsg" \
		>"$out/int3-retry.log" 2>&1
	if [ "$(grep -c 'is run again: its first run does not count' "$out/int3-retry.log")" = 1 ] &&
	   [ -f "$build/vm/int3-retry/console-run1.log" ] &&
	   grep -q 'FAILED' "$out/int3-retry.log"; then
		add "int3-retry $insn_kernel" 1 0 0
	else
		cat "$out/int3-retry.log"
		echo "check.sh: run-vm.sh did not run again a VM that trapped on a stale int3 (above)"
		add "int3-retry $insn_kernel" 0 1 0
	fi
elif [ "$vm" = 0 ]; then
	add "int3-retry $insn_kernel" 0 0 1
fi

# The uapi fuzzer's run (fuzz_run, above): made alongside the kernel
# suites, or now.
if [ "$fuzz_wanted" = 1 ]; then
	say "uapi fuzzer on $fuzz_kernel"
	[ -f "$out/fuzz.secs" ] || ! kill -0 "$prep_pid" 2>/dev/null ||
		echo "check.sh: waiting for the fuzzer's VM, in the background"
	wait "$prep_pid"
	fuzz_how=alongside
	if [ ! -f "$out/fuzz.secs" ]; then
		fuzz_how=alone
		fuzz_run 60
	fi
	cat "$out/fuzz.log" 2>/dev/null
	booted="$booted fuzz:$fuzz_kernel ($(cat "$out/fuzz.secs" 2>/dev/null) s, $fuzz_how)"
	if [ -f "$out/fuzz-$fuzz_kernel.counts" ]; then
		set -- $(cat "$out/fuzz-$fuzz_kernel.counts")
		add "fuzz $fuzz_kernel" "$1" "$2" "$3"
	else
		add "fuzz $fuzz_kernel" 0 1 0
	fi
elif [ "$vm" = 0 ]; then
	add "fuzz $fuzz_kernel" 0 0 1
fi

say "summary"
printf '%s' "$suites"
if [ "$vm" = 0 ]; then
	echo "kernels booted: none (--no-vm or ACCEL_SKIP_VM=1)"
else
	echo "kernels booted:${booted:- none}${not_booted:+ (not booted:$not_booted)}"
fi
echo "$total_p passed, $total_f failed, $total_s skipped"
[ "$total_f" -eq 0 ]
