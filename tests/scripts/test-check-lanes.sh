#!/bin/sh
# SPDX-License-Identifier: MIT
#
# scripts/check.sh's kernel phase, on fakes: what it runs in the
# background and in what order, with every VM, fetch, module build and
# fuzzer run replaced by a stand-in script that logs when it starts and
# ends (and sleeps as long as the scenario asks).
#   - the kernels after the first are prepared in the background, at nice
#     19, and the fuzzer's VM runs there too (180 s), beside a Debian
#     kernel's suite;
#   - the debug kernel's suite runs alone: after the fuzzer's VM, or, when
#     the fuzzer could not start before it (the debug kernel still being
#     built), with the fuzzer run after the suites, alone, for 60 s;
#   - a kernel that cannot be fetched fails its suite and the fuzzer's;
#   - an interrupted run leaves nothing of the background behind.
#
# Usage: test-check-lanes.sh SOURCE_ROOT
set -u

src=${1:?usage: test-check-lanes.sh SOURCE_ROOT}
src=$(cd "$src" && pwd)
. "$(dirname "$0")/../tap.sh"
tap_tmp check-lanes
echo "TAP version 13"

co=$tmp/co
b=$co/build
log=$tmp/events
mkdir -p "$co/scripts" "$co/tests/qemu" "$co/tests/trace" "$b/tests/kselftest" "$tmp/bin"
cp "$src/scripts/check.sh" "$co/scripts/"
printf 'deb1 debian\ndeb2 debian\ndbg source\n' >"$co/tests/qemu/kernels.conf"
: >"$b/build.ninja"
echo "built: fake" >"$b/tests/kselftest/harness.status"
printf '#!/bin/sh\n' >"$b/tests/kselftest/kselftest-fake"
chmod +x "$b/tests/kselftest/kselftest-fake"

# ev WHAT: a line of the event log, with the time in hundredths of a second.
cat >"$tmp/bin/ev" <<'EOF'
#!/bin/sh
echo "$(date +%s%N | cut -c1-12) $*" >>"$FAKE_LOG"
EOF
# meson: the build is there.
printf '#!/bin/sh\nexit 0\n' >"$tmp/bin/meson"
# fetch-kernels.sh NAME: FAKE_FETCH_<NAME> = seconds to take, or "fail".
cat >"$co/scripts/fetch-kernels.sh" <<'EOF'
#!/bin/sh
ev "fetch $1 start nice=$(nice)"
eval "how=\${FAKE_FETCH_$1:-0}"
if [ "$how" = fail ]; then
	echo "fetch-kernels.sh: no kernel $1 (fake)" >&2
	ev "fetch $1 failed"
	exit 1
fi
sleep "$how"
root=$FAKE_TMP/k/$1
mkdir -p "$root/boot"
: >"$root/boot/vmlinuz-$1-1.0"
: >"$root/boot/config-$1-1.0"
ev "fetch $1 end"
echo "$1 $1-1.0 $root $root/build"
EOF
# dkms-build.sh / build-kmod.sh: a module, its path last.
for s in dkms-build.sh build-kmod.sh; do
	cat >"$co/scripts/$s" <<'EOF'
#!/bin/sh
eval "out=\${$#}"
mkdir -p "$out"
: >"$out/accelsched.ko"
ev "kmod $(basename "$out") nice=$(nice)"
echo "$out/accelsched.ko"
EOF
done
# run-vm.sh: a suite of 3 passes, FAKE_VM seconds long.
cat >"$co/tests/qemu/run-vm.sh" <<'EOF'
#!/bin/sh
k= counts=
while [ $# -gt 0 ]; do
	case "$1" in
	--kernel) k=$2; shift 2 ;;
	--counts) counts=$2; shift 2 ;;
	*) shift ;;
	esac
done
ev "vm $k start nice=$(nice)"
sleep "${FAKE_VM:-1}"
[ -n "$counts" ] && echo "3 0 0" >"$counts"
ev "vm $k end"
EOF
# fuzz-vm.sh: 5 passes, FAKE_FUZZ seconds long; says its arguments.
cat >"$co/scripts/fuzz-vm.sh" <<'EOF'
#!/bin/sh
ev "fuzz start nice=$(nice) $*"
echo $$ >"$FAKE_TMP/fuzz.pid"
counts=
while [ $# -gt 0 ]; do
	case "$1" in
	--counts) counts=$2; shift 2 ;;
	*) shift ;;
	esac
done
sleep "${FAKE_FUZZ:-1}"
echo "5 0 0" >"$counts"
ev "fuzz end"
EOF
printf 'import sys\nsys.exit(0)\n' >"$co/tests/trace/check-trace.py"
chmod +x "$tmp/bin"/* "$co/scripts"/*.sh "$co/tests/qemu/run-vm.sh"

# lanes: run check.sh --vm-only on the fakes; its output in $tmp/out, its
# status in $rc, the events in $log.
lanes() {
	: >"$log"
	(cd "$co" && env PATH="$tmp/bin:$PATH" FAKE_LOG="$log" FAKE_TMP="$tmp" \
		ACCEL_INSN_KERNEL=none ACCEL_FUZZ_KERNEL=dbg "$@" sh scripts/check.sh --vm-only) \
		>"$tmp/out" 2>&1
	rc=$?
}
# at EVENT: its time in the log (the first such line), or nothing.
at() { grep -m1 " $1" "$log" | cut -d' ' -f1; }
# before A B: event A came before event B.
before() {
	ta=$(at "$1") tb=$(at "$2")
	[ -n "$ta" ] && [ -n "$tb" ] && [ "$ta" -le "$tb" ]
}

# ---- the kernels cached: the fuzzer beside the Debian kernels' suites -----
# At nice 19 what runs in the background may wait for seconds on a busy
# machine (meson runs tests side by side): this run holds it to its
# niceness and counts, the next ones (ACCEL_BG_NICE=0) to its order.
lanes FAKE_VM=1 FAKE_FUZZ=1
check "a run with every kernel ready passes (status $rc)" test "$rc" = 0
check "... its summary counts every suite" grep -qx "19 passed, 0 failed, 0 skipped" "$tmp/out"
check "... the later kernels are prepared in the background at nice 19" \
	sh -c "grep -q 'fetch deb2 start nice=19' '$log' && grep -q 'kmod dbg nice=19' '$log'"
check "... the first one here, at the run's own priority" grep -q "fetch deb1 start nice=0" "$log"
check "... the fuzzer's VM at nice 19" grep -q "fuzz start nice=19 " "$log"
check "... the suites themselves at the run's own priority" \
	sh -c "! grep -q 'vm .* start nice=19' '$log'"
lanes FAKE_VM=2 FAKE_FUZZ=1 ACCEL_BG_NICE=0
check "the same at nice 0 passes (status $rc)" test "$rc" = 0
check "... the later kernels prepared while the first kernel's suite runs" \
	before "fetch deb2 start" "vm deb1 end"
check "... and the fuzzer's VM, for 180 s, with the module built" \
	grep -q "fuzz start nice=0 --kernel dbg --module build/kmod/dbg/accelsched.ko --seconds 180" "$log"
check "... beside a Debian kernel's suite" before "fuzz start" "vm deb1 end"
check "... the debug kernel's suite after the fuzzer's VM ended" before "fuzz end" "vm dbg start"
check "... which the summary says ran alongside" grep -q "fuzz:dbg ([0-9]* s, alongside)" "$tmp/out"
check "... and counts" grep -q "^fuzz dbg: *5 passed, 0 failed, 0 skipped" "$tmp/out"

# ---- a long fuzzer: the debug kernel's suite waits for it ------------------
lanes FAKE_VM=1 FAKE_FUZZ=4 ACCEL_BG_NICE=0
check "a fuzzer that outlasts the Debian suites passes (status $rc)" test "$rc" = 0
check "... and the debug kernel's suite waits for it" before "fuzz end" "vm dbg start"
check "... saying so" grep -q "waiting for the work in the background: dbg's suite runs alone" "$tmp/out"

# ---- the debug kernel built in this run: the fuzzer after the suites -------
lanes FAKE_VM=1 FAKE_FUZZ=1 FAKE_FETCH_dbg=4 ACCEL_BG_NICE=0
check "a run that builds the debug kernel passes (status $rc)" test "$rc" = 0
check "... its summary counts every suite" grep -qx "19 passed, 0 failed, 0 skipped" "$tmp/out"
check "... the fuzzer does not start beside the debug kernel's suite" before "vm dbg end" "fuzz start"
check "... but after the suites, alone, for 60 s" \
	sh -c "grep -q 'fuzz start .* --seconds 60' '$log' && grep -q 'fuzz:dbg ([0-9]* s, alone)' '$tmp/out'"
check "... and only once" test "$(grep -c 'fuzz start' "$log")" = 1
lanes FAKE_VM=1 FAKE_FUZZ=1 FAKE_FETCH_dbg=4 ACCEL_BG_NICE=0 ACCEL_FUZZ_S=7
check "ACCEL_FUZZ_S is the fuzzer's seconds either way" grep -q "fuzz start .* --seconds 7 " "$log"

lanes FAKE_VM=1 ACCEL_BG_NICE=twenty
check "a bad ACCEL_BG_NICE is said and 19 used" \
	sh -c "grep -q \"ACCEL_BG_NICE='twenty' ignored: give a niceness, 0 to 19\" '$tmp/out' &&
	       grep -q 'fetch deb2 start nice=19' '$log'"

# ---- a kernel that cannot be fetched ----------------------------------------
lanes FAKE_VM=1 FAKE_FETCH_dbg=fail
check "a kernel that cannot be fetched fails the run (status $rc)" test "$rc" = 1
check "... its suite, with fetch-kernels.sh's words" \
	sh -c "grep -q 'no kernel dbg (fake)' '$tmp/out' && grep -q '^ktap dbg: *0 passed, 1 failed' '$tmp/out'"
check "... and the fuzzer's, saying why" \
	sh -c "grep -q 'no fuzzer run: kernel dbg or its module is not there' '$tmp/out' &&
	       grep -q '^fuzz dbg: *0 passed, 1 failed' '$tmp/out'"
check "... the other suites still ran" grep -q "^ktap deb2: *3 passed, 0 failed" "$tmp/out"

# ---- an interrupted run ------------------------------------------------------
: >"$log"
rm -f "$tmp/fuzz.pid"
(cd "$co" && exec env PATH="$tmp/bin:$PATH" FAKE_LOG="$log" FAKE_TMP="$tmp" \
	ACCEL_INSN_KERNEL=none ACCEL_FUZZ_KERNEL=dbg ACCEL_BG_NICE=0 FAKE_VM=1 FAKE_FUZZ=60 \
	sh scripts/check.sh --vm-only) \
	>"$tmp/out" 2>&1 &
ck=$!
i=0
while [ ! -s "$tmp/fuzz.pid" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
fz=$(cat "$tmp/fuzz.pid" 2>/dev/null)
kill -TERM "$ck"
wait "$ck"
rc=$?
sleep 1
check "an interrupted run ends (status $rc)" test "$rc" != 0
# gone PID: no such process, or a zombie nobody reaped yet.
gone() {
	[ -n "$1" ] &&
		{ [ ! -e "/proc/$1" ] || [ "$(cut -d' ' -f3 "/proc/$1/stat" 2>/dev/null)" = Z ]; }
}
check "... and ends the fuzzer's VM in the background" gone "$fz"

tap_end
