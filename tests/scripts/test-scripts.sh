#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The scripts refuse what would do damage, and say why:
#   - build-kmod.sh with an OUTDIR that is the checkout, holds it, or lies
#     in the module's sources (it replaces OUTDIR's kmod/ and uapi/);
#   - setup.sh on anything but Debian bookworm (it edits apt's sources);
#   - build-debug-kernel.sh keeps the build log its failure message names;
#   - tests/qemu/ktap.py fails a VM run on a splat in its kernel log, not on
#     the harness's markers that echo a command naming one, and tells
#     run-vm.sh to run again one whose kernel trapped on a stale int3;
#   - ab-vm.sh refuses bad arguments before it boots anything, and
#     ab-summary.py's medians and refusals are checked on canned runs;
#   - insn-summary.py's medians, ratios, profile and refusals on canned
#     logs of the accel-insn plugin, and insn-vm.sh's refusals;
#   - fuzz-vm.sh refuses a --module that is not there;
#   - the uapi fuzzer has an op for every ioctl and uring_cmd of the uapi.
# Each runs from a throwaway copy of the scripts and sources, with fake
# apt, dpkg and kernel trees first in PATH: nothing real is at stake, and
# the real apt can never run.
#
# Usage: test-scripts.sh SOURCE_ROOT
set -u

src=${1:?usage: test-scripts.sh SOURCE_ROOT}
src=$(cd "$src" && pwd)
. "$(dirname "$0")/../tap.sh"
tap_tmp scripts-test
echo "TAP version 13"

# ---- a throwaway checkout -------------------------------------------------
co=$tmp/co
mkdir -p "$co/scripts"
cp -r "$src/kmod" "$src/uapi" "$co/"
cp "$src/Kbuild" "$src/VERSION" "$co/"
cp "$src"/scripts/*.sh "$co/scripts/"
echo 'int marker;' >"$co/kmod/marker.c"
sources_sum() { (cd "$co" && find kmod uapi -type f | sort | xargs cat | cksum); }
sum0=$(sources_sum)

# A kernel tree whose make fails at once: a refusal must come before it.
mkdir -p "$tmp/kdir"
printf 'all modules:\n\t@echo fake kernel tree; exit 1\n' >"$tmp/kdir/Makefile"

# ---- build-kmod.sh -------------------------------------------------------
ln -s "$co" "$tmp/link-to-co"
ln -s "$co/kmod" "$tmp/link-to-kmod"
cd "$co"
for bad in . "$co" "$tmp/link-to-co" kmod/.. kmod uapi kmod/new \
		"$tmp/link-to-kmod/x" "$tmp" scripts; do
	"$co/scripts/build-kmod.sh" "$tmp/kdir" "$bad" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	check "build-kmod.sh refuses OUTDIR '$bad' with status 2 (got $rc)" test "$rc" = 2
	check "its message says why and what to pass instead" \
		grep -q "would be deleted. Pass a folder of its own" "$tmp/err"
	check "kmod/ and uapi/ are untouched after OUTDIR '$bad'" \
		test "$(sources_sum)" = "$sum0"
done
check "no refusal created a folder in the sources" test ! -e "$co/kmod/new"
# A folder of its own is taken (the fake tree's make then fails: status 1
# or 2 from make, past the refusal; the copy is there).
"$co/scripts/build-kmod.sh" "$tmp/kdir" "$tmp/own" >"$tmp/out" 2>"$tmp/err"
check "an OUTDIR of its own gets the sources copied in" \
	test -f "$tmp/own/kmod/marker.c" -a -f "$tmp/own/VERSION"
check "and the sources stay as they were" test "$(sources_sum)" = "$sum0"
cd "$tmp"

# ---- setup.sh --------------------------------------------------------------
mkdir -p "$tmp/bin"
for tool in apt-get apt apt-cache dpkg dpkg-query sudo tee; do
	printf '#!/bin/sh\necho "%s $*" >>"%s/calls"\nexit 0\n' "$tool" "$tmp" \
		>"$tmp/bin/$tool"
	chmod +x "$tmp/bin/$tool"
done
os() { # os NAME ID CODENAME PRETTY
	printf 'ID=%s\nVERSION_CODENAME=%s\nPRETTY_NAME="%s"\n' "$2" "$3" "$4" >"$tmp/os-$1"
}
os ubuntu ubuntu noble "Ubuntu 24.04 LTS"
os trixie debian trixie "Debian GNU/Linux 13 (trixie)"
os quoted '"debian"' '"trixie"' "Debian GNU/Linux 13 (trixie)"
for o in ubuntu trixie quoted missing; do
	rm -f "$tmp/calls"
	PATH=$tmp/bin:$PATH ACCEL_OS_RELEASE=$tmp/os-$o \
		sh "$co/scripts/setup.sh" --no-vm >"$tmp/out" 2>"$tmp/err"
	rc=$?
	check "setup.sh on $o stops with status 3 (got $rc)" test "$rc" = 3
	check "setup.sh on $o says it is not bookworm and changed nothing" \
		grep -q "not Debian 12 (bookworm).*changing nothing" "$tmp/err"
	check "setup.sh on $o ran no apt, dpkg or sudo" test ! -e "$tmp/calls"
done
grep -q "runs Ubuntu 24.04 LTS" "$tmp/err" 2>/dev/null ||
	PATH=$tmp/bin:$PATH ACCEL_OS_RELEASE=$tmp/os-ubuntu \
		sh "$co/scripts/setup.sh" --no-vm 2>"$tmp/err" >/dev/null
check "the refusal names the system it found" grep -q "runs Ubuntu 24.04 LTS" "$tmp/err"
PATH=$tmp/bin:$PATH ACCEL_OS_RELEASE=$tmp/os-ubuntu \
	sh "$co/scripts/setup.sh" --bogus >/dev/null 2>"$tmp/err"
check "setup.sh --bogus is a usage error (status 2)" test "$?" = 2

# ---- build-debug-kernel.sh ------------------------------------------------
# A fake linux-source package whose tree fails at `make tinyconfig`,
# fetched by fake apt: the failure message names a log that must exist.
pkgdir=$tmp/deb/usr/src
mkdir -p "$pkgdir" "$tmp/deb/DEBIAN" "$tmp/fake-src/linux-source-fake"
printf 'tinyconfig:\n\t@echo "fake tree: tinyconfig refused"; exit 1\n' \
	>"$tmp/fake-src/linux-source-fake/Makefile"
tar -C "$tmp/fake-src" -cJf "$pkgdir/linux-source-fake.tar.xz" linux-source-fake
printf 'Package: linux-source-fake\nVersion: 1.0\nArchitecture: all\nMaintainer: t <t@t>\nDescription: t\n' \
	>"$tmp/deb/DEBIAN/control"
dpkg-deb -b "$tmp/deb" "$tmp/linux-source-fake_1.0_all.deb" >/dev/null 2>&1
mkdir -p "$tmp/bin2"
printf '#!/bin/sh\nexit 1\n' >"$tmp/bin2/dpkg-query"
printf '#!/bin/sh\necho "Version: 1.0"\n' >"$tmp/bin2/apt-cache"
printf '#!/bin/sh\ncp "%s/linux-source-fake_1.0_all.deb" .\n' "$tmp" >"$tmp/bin2/apt-get"
chmod +x "$tmp/bin2"/*
mkdir -p "$co/tests/qemu"
cp "$src/tests/qemu/debug-6.12.config" "$co/tests/qemu/"
PATH=$tmp/bin2:$PATH ACCEL_CACHE=$tmp/cache \
	sh "$co/scripts/build-debug-kernel.sh" --source linux-source-fake \
	>"$tmp/out" 2>"$tmp/err"
rc=$?
check "build-debug-kernel.sh fails on a tree that does not build (got $rc)" test "$rc" = 1
log=$(sed -n 's/.*the whole log: \([^,;)]*\).*/\1/p' "$tmp/err" | tail -n1)
check "its failure message names a log" test -n "$log"
check "the log it names exists after it exits" test -f "$log"
check "the log holds the build's output" grep -q "tinyconfig refused" "$log"
check "the half-built tree is gone" \
	test -z "$(find "$tmp/cache/kernels" -maxdepth 1 -name 'debug-*.tmp.*')"

# ---- tests/qemu/ktap.py: what fails a VM run ------------------------------
# A finished run of one passing command whose line names UBSAN (its
# UBSAN_OPTIONS), as the harness's markers echo it into the kernel log.
printf 'KTAP version 1\n1..1\nok 1 run: env UBSAN_OPTIONS=x t\n# accelsched-vm: done\n' \
	>"$tmp/ktap.log"
cat >"$tmp/console.log" <<'LOG'
[    1.0] accelsched-vm: START run: env UBSAN_OPTIONS=x t
[    2.0] accelsched-vm: END run: env UBSAN_OPTIONS=x t
[    2.1] accelsched-test: END sched.x UBSAN
LOG
python3 "$src/tests/qemu/ktap.py" --kernel fake --ktap "$tmp/ktap.log" \
	--console "$tmp/console.log" --counts "$tmp/counts" >"$tmp/out" 2>&1
rc=$?
check "ktap.py passes a run whose markers name UBSAN (got $rc)" test "$rc" = 0
check "... and counts 1 passed, 0 failed" grep -qx "1 0 0" "$tmp/counts"
echo "[    2.2] UBSAN: shift-out-of-bounds in kmod/x.c:1:2" >>"$tmp/console.log"
python3 "$src/tests/qemu/ktap.py" --kernel fake --ktap "$tmp/ktap.log" \
	--console "$tmp/console.log" --counts "$tmp/counts" >"$tmp/out" 2>&1
rc=$?
check "ktap.py fails a run with a UBSAN report in its log (got $rc)" test "$rc" = 1
check "... names the line" grep -q "UBSAN: shift-out-of-bounds" "$tmp/out"
check "... and counts it as a failure" grep -qx "1 1 0" "$tmp/counts"

# A kernel that trapped on an int3 its code patching had already replaced
# (the byte before RIP's in Code: is not cc any more): run-vm.sh runs such
# a VM again when ktap.py exits with --flake-exit's status, no counts
# written. A real int3, or another splat first, fails the run as before.
int3_console() {
	cat <<LOG
[    2.3] Oops: int3: 0000 [#1] PREEMPT SMP NOPTI
[    2.3] CPU: 1 UID: 0 PID: 90 Comm: accelctl Tainted: G           O       6.12.0 #1
[    2.3] RIP: 0010:__schedule+0x46/0xb40
[    2.3] Code: 90 90 90 90 f3 0f 1e fa 55 48 89 e5 41 57 41 56 41 55 41 54 53 48 83 ec 48 $1 <1f> 44 00 00 48 8b 45 08
[    2.3] Call Trace:
[    2.3] Kernel panic - not syncing: Fatal exception in interrupt
LOG
}
printf 'KTAP version 1\n1..2\nok 1 insmod\n' >"$tmp/ktap.log"
int3_console 0f >"$tmp/console.log"
rm -f "$tmp/counts"
python3 "$src/tests/qemu/ktap.py" --kernel fake --ktap "$tmp/ktap.log" \
	--console "$tmp/console.log" --counts "$tmp/counts" --flake-exit 3 >"$tmp/out" 2>&1
rc=$?
check "ktap.py gives --flake-exit's status for a stale int3 (got $rc)" test "$rc" = 3
check "... says why the run does not count" grep -q "had already replaced (.*Oops: int3" "$tmp/out"
check "... and writes no counts" test ! -e "$tmp/counts"
python3 "$src/tests/qemu/ktap.py" --kernel fake --ktap "$tmp/ktap.log" \
	--console "$tmp/console.log" --counts "$tmp/counts" >"$tmp/out" 2>&1
rc=$?
check "without --flake-exit the stale int3 fails the run (got $rc)" test "$rc" = 1
check "... and counts it a failure" grep -qx "1 3 0" "$tmp/counts"
int3_console cc >"$tmp/console.log"
python3 "$src/tests/qemu/ktap.py" --kernel fake --ktap "$tmp/ktap.log" \
	--console "$tmp/console.log" --flake-exit 3 >"$tmp/out" 2>&1
rc=$?
check "an int3 still in the code fails the run (got $rc)" test "$rc" = 1
{ echo "[    2.2] WARNING: CPU: 1 PID: 90 at kmod/x.c:1 f+0x1/0x2"; int3_console 0f; } >"$tmp/console.log"
python3 "$src/tests/qemu/ktap.py" --kernel fake --ktap "$tmp/ktap.log" \
	--console "$tmp/console.log" --flake-exit 3 >"$tmp/out" 2>&1
rc=$?
check "a stale int3 after another splat fails the run (got $rc)" test "$rc" = 1

# ---- tests/fuzz/fuzz.c: every command of the uapi is an op ------------------
# The inline SUBMIT, the hot path, went unfuzzed for nine ABI versions:
# each ioctl and uring_cmd that uapi/accelsched.h defines must have its
# entry in the fuzzer's op table (an IOP or UOP line naming it).
cmds=$(sed -n 's/^#define \(ACCEL_\(IOCTL\|URING_CMD\)_[A-Z0-9_]*\) _IO.*/\1/p' \
	"$src/uapi/accelsched.h")
missing=
for op in $cmds; do
	grep -Eq "^[[:space:]]*\[OP_[A-Z_]+\] = [IU]OP\(\"[a-z_]+\", $op," "$src/tests/fuzz/fuzz.c" ||
		missing="$missing $op"
done
ncmd=$(echo "$cmds" | wc -l)
check "the uapi defines its 27 commands, 21 ioctls and 6 uring_cmds (got $ncmd)" test "$ncmd" = 27
check "the fuzzer has an op for each of them (missing:${missing:- none})" test -z "$missing"

# ---- scripts/ab-vm.sh and ab-summary.py: an A/B run's medians --------------
cat >"$tmp/runs.txt" <<'RUNS'
# ab-run base
# submit: a note line, not a metric
METRIC x.ratio 3.0
METRIC y.rate 10
# ab-run new
METRIC x.ratio 2.0
METRIC y.rate 12
# ab-run base
METRIC x.ratio 4.0
METRIC y.rate 10
# ab-run new
METRIC x.ratio 3.0
METRIC y.rate 11
# ab-run base
METRIC x.ratio 3.5
METRIC y.rate 9
# ab-run new
METRIC x.ratio 2.5
METRIC y.rate 13
RUNS
python3 "$src/scripts/ab-summary.py" "$tmp/runs.txt" >"$tmp/out" 2>&1
rc=$?
check "ab-summary.py summarises three pairs (got $rc)" test "$rc" = 0
check "... with each label's median and their ratio, in the runs' order" \
	test "$(cat "$tmp/out")" = "# ab: x.ratio: base 3.5000 new 2.5000 new/base 0.714 (3 pairs)
# ab: y.rate: base 10.0000 new 12.0000 new/base 1.200 (3 pairs)"
sed '$d' "$tmp/runs.txt" >"$tmp/short.txt"
python3 "$src/scripts/ab-summary.py" "$tmp/short.txt" >"$tmp/out" 2>&1
rc=$?
check "ab-summary.py refuses a run that lacks a metric (got $rc)" test "$rc" = 1
check "... naming the run and the metric" grep -q "run 3 of new lacks y.rate" "$tmp/out"
printf '# ab-run base\nMETRIC x 1\n# ab-run base\nMETRIC x 2\n' >"$tmp/none.txt"
python3 "$src/scripts/ab-summary.py" "$tmp/none.txt" >"$tmp/out" 2>&1
rc=$?
check "ab-summary.py refuses runs of one label only (got $rc)" test "$rc" = 1
check "... naming the label with none" grep -q "no run of new" "$tmp/out"
printf 'METRIC x 1\n' >"$tmp/early.txt"
python3 "$src/scripts/ab-summary.py" "$tmp/early.txt" >"$tmp/out" 2>&1
rc=$?
check "ab-summary.py refuses a METRIC before any run (got $rc)" test "$rc" = 1
sh "$src/scripts/ab-vm.sh" >"$tmp/out" 2>&1
rc=$?
check "ab-vm.sh without BASE and NEW is a usage error (got $rc)" test "$rc" = 2
check "... that names what it needs" grep -q "BASE and NEW are required" "$tmp/out"
sh "$src/scripts/ab-vm.sh" --pairs 0 a b >"$tmp/out" 2>&1
rc=$?
check "ab-vm.sh refuses --pairs 0 (got $rc)" test "$rc" = 2
sh "$src/scripts/ab-vm.sh" "$tmp/no-such.ko" "$tmp/no-such.ko" >"$tmp/out" 2>&1
rc=$?
check "ab-vm.sh refuses a BASE that is neither a module nor a revision (got $rc)" test "$rc" = 2
check "... saying so" grep -q "is neither a built module nor a git revision" "$tmp/out"

# ---- scripts/insn-summary.py: instructions per op from canned logs --------
cat >"$tmp/insn-vm.log" <<'LOG'
    # insn: window 1 uring_job_submit 2
    # insn: window 2 uring_cmd_nop 2
    # insn: window 5 embedded_submit 1
    # insn: window 6 kernel_submit 1
    ffffffffc0001000 t accel_job_submit	[accelsched]
    ffffffffc0001400 T accel_other	[accelsched]
    ffffffff81000000 T _stext
LOG
cat >"$tmp/insn-plugin.log" <<'LOG'
accel-insn: window 1 vcpu 0 start-vcpu 0 own-kernel 2000 own-user 200 all-kernel 2100 all-user 200
accel-insn: window 1 vcpu 0 start-vcpu 0 own-kernel 2400 own-user 200 all-kernel 2400 all-user 200
accel-insn: window 1 vcpu 0 start-vcpu 0 own-kernel 9000 own-user 200 all-kernel 9000 all-user 200
accel-insn: window 1 vcpu 1 start-vcpu 0 own-kernel 1 own-user 1 all-kernel 1 all-user 1
accel-insn: window 2 vcpu 1 start-vcpu 1 own-kernel 1000 own-user 100 all-kernel 1000 all-user 100
accel-insn: window 5 vcpu 0 start-vcpu 0 own-kernel 0 own-user 3000 all-kernel 0 all-user 4000
accel-insn: window 6 vcpu 0 start-vcpu 0 own-kernel 2000 own-user 2500 all-kernel 3000 all-user 2500
accel-insn: profile 1 0xffffffffc0001000 2000
accel-insn: profile 1 0xffffffffc0001010 600
accel-insn: profile 1 0xffffffffc0001500 400
accel-insn: profile 1 0x0000000000401000 200
LOG
# insn-summary.py ARGS..., its output in $tmp/out and its status in $rc.
insn_summary() {
	python3 "$src/scripts/insn-summary.py" "$@" >"$tmp/out" 2>&1
	rc=$?
}
insn_summary --profile uring_job_submit "$tmp/insn-vm.log" "$tmp/insn-plugin.log"
check "insn-summary.py summarises the canned counts (got $rc)" test "$rc" = 0
cp "$tmp/out" "$tmp/insn-vm.out"
check "... a window's median per op, its kernel and user, leaving out one that moved" \
	grep -q "^# insn: uring_job_submit: 1300 instructions per op on its vCPU (kernel 1200, user 100), 1300 on all vCPUs; median of 3 windows of 2 ops; 1 that changed vCPU left out" "$tmp/out"
check "... the SUBMIT over the NOP, median over median" \
	grep -qx "METRIC insn.uring_job_vs_uring_cmd_nop 2.3636" "$tmp/out"
check "... and what the SUBMIT adds, before it" \
	sh -c "grep -B1 '^METRIC insn.uring_job_vs' '$tmp/out' | head -n1 | grep -qx '# insn: uring_job_submit - uring_cmd_nop: 750 instructions per op'"
check "... the kernel scheduler's submit over the embedded one's" \
	grep -qx "METRIC insn.kernel_vs_embedded_submit 1.5000" "$tmp/out"
check "... and no floor without the window of a NOP entered alone" \
	sh -c "! grep -q 'floor' '$tmp/out'"
check "... the profile per op over every window of the id, by function" \
	grep -q "^# insn profile: uring_job_submit: 400 instructions per op over 4 windows" "$tmp/out"
check "... blocks of one function summed, most first" \
	sh -c "grep -A1 '^# insn profile' '$tmp/out' | tail -n1 | grep -q '325.0   81.2%  accel_job_submit \[accelsched\]'"
check "... user addresses as [user]" grep -q "25.0    6.2%  \[user\]" "$tmp/out"
printf '0000000000401000 T submit\n0000000000401100 t label\n' >"$tmp/insn-user.nm"
insn_summary --profile uring_job_submit --user-map "$tmp/insn-user.nm" \
	"$tmp/insn-vm.log" "$tmp/insn-plugin.log"
check "insn-summary.py --user-map names a user address by the program's symbols" \
	grep -q "25.0    6.2%  submit \[user\]" "$tmp/out"
: >"$tmp/empty.nm"
insn_summary --profile uring_job_submit --user-map "$tmp/empty.nm" \
	"$tmp/insn-vm.log" "$tmp/insn-plugin.log"
check "insn-summary.py refuses a --user-map with no symbols (got $rc)" test "$rc" = 1
grep -v "window 6" "$tmp/insn-plugin.log" >"$tmp/insn-short.log"
insn_summary "$tmp/insn-vm.log" "$tmp/insn-short.log"
check "insn-summary.py refuses a metric's window without counts (got $rc)" test "$rc" = 1
check "... naming the window and the metric" \
	grep -q "window 'kernel_submit' has no counts: insn.kernel_vs_embedded_submit needs it" "$tmp/out"
sed 's/own-user 200 all-kernel 2100/own-user x all-kernel 2100/' "$tmp/insn-plugin.log" >"$tmp/insn-bad.log"
insn_summary "$tmp/insn-vm.log" "$tmp/insn-bad.log"
check "insn-summary.py refuses a count that is not a number (got $rc)" test "$rc" = 1
check "... naming its line" grep -q "insn-bad.log:1: .* has a count that is not a number" "$tmp/out"
# A plugin that counts the atomic instructions adds two fields to a line.
sed '/window 2 /s/$/ own-locked-kernel 12 own-locked-user 0/' "$tmp/insn-plugin.log" \
	>"$tmp/insn-locked.log"
insn_summary "$tmp/insn-vm.log" "$tmp/insn-locked.log"
check "insn-summary.py reads a window's atomic instructions (got $rc)" test "$rc" = 0
check "... per op, kernel and user" \
	grep -q "^# insn: uring_cmd_nop: 550 instructions per op on its vCPU (kernel 500, user 50), 6.0 of them atomic (kernel 6.0, user 0.0), 550 on all vCPUs" "$tmp/out"
check "... and none for a window whose lines lack them" \
	grep -q "^# insn: uring_job_submit: 1300 instructions per op on its vCPU (kernel 1200, user 100), 1300 on all vCPUs" "$tmp/out"
sed -e '/profile 1 0xffffffffc0001000/{s/$/ 8/;b' -e '}' -e '/profile 1 /s/$/ 0/' \
	"$tmp/insn-plugin.log" >"$tmp/insn-locked.log"
insn_summary --profile uring_job_submit "$tmp/insn-vm.log" "$tmp/insn-locked.log"
check "insn-summary.py --profile gives the atomic instructions per op, in all" \
	grep -q "^# insn profile: uring_job_submit: 400 instructions per op, 1.0 of them atomic over 4 windows" "$tmp/out"
check "... and by function" \
	sh -c "grep -A1 '^# insn profile' '$tmp/out' | tail -n1 | grep -q '325.0   81.2%      1.0 atomic  accel_job_submit \[accelsched\]'"
sed '/window 2 /s/$/ own-locked-kernel 12/' "$tmp/insn-plugin.log" >"$tmp/insn-bad.log"
insn_summary "$tmp/insn-vm.log" "$tmp/insn-bad.log"
check "insn-summary.py refuses a window line with one atomic count of two (got $rc)" test "$rc" = 1
check "... naming its line" grep -q "insn-bad.log:5: .* is not a window line" "$tmp/out"
insn_summary --profile no_such "$tmp/insn-vm.log" "$tmp/insn-plugin.log"
check "insn-summary.py refuses to profile a window the log does not name (got $rc)" test "$rc" = 1
check "... listing the names it has" grep -q "no window named 'no_such' (the VM log names uring_job_submit, uring_cmd_nop" "$tmp/out"
# The floor: the embedded submit plus one trip into the module that does
# nothing (3000 + 750), under the kernel scheduler's submit (4500).
{ cat "$tmp/insn-vm.log"; echo "    # insn: window 9 uring_cmd_nop_alone 1"; } >"$tmp/insn-floor-vm.log"
{ cat "$tmp/insn-plugin.log"
  echo "accel-insn: window 9 vcpu 1 start-vcpu 1 own-kernel 700 own-user 50 all-kernel 700 all-user 50"
} >"$tmp/insn-floor.log"
insn_summary "$tmp/insn-floor-vm.log" "$tmp/insn-floor.log"
check "insn-summary.py prints the floor with the window of a NOP entered alone (got $rc)" test "$rc" = 0
check "... the embedded submit plus that NOP, over the embedded submit" \
	grep -qx "METRIC insn.uring_floor_vs_embedded_submit 1.2500" "$tmp/out"
check "... the kernel scheduler's submit over that floor" \
	grep -qx "METRIC insn.kernel_vs_uring_floor_submit 1.2000" "$tmp/out"
check "... and what the kernel path adds above it" \
	grep -qx "# insn: embedded_submit + uring_cmd_nop_alone: 3750 instructions per op; kernel_submit - that: 750" "$tmp/out"
check "... and neither without it" \
	sh -c "! grep -q uring_floor '$tmp/insn-vm.out'"
# The job cycle, counted: the ring's SUBMIT (1300) and COMPLETE (700)
# against one ioctl each (2500), and the NOPs (ioctl 800, ring 550).
{ cat "$tmp/insn-vm.log"
  echo "    # insn: window 4 ioctl_nop 1"
  echo "    # insn: window 10 uring_job_complete 2"
  echo "    # insn: window 11 ioctl_job_cycle 1"
} >"$tmp/insn-cycle-vm.log"
{ cat "$tmp/insn-plugin.log"
  echo "accel-insn: window 4 vcpu 0 start-vcpu 0 own-kernel 750 own-user 50 all-kernel 750 all-user 50"
  echo "accel-insn: window 10 vcpu 0 start-vcpu 0 own-kernel 1300 own-user 100 all-kernel 1300 all-user 100"
  echo "accel-insn: window 11 vcpu 0 start-vcpu 0 own-kernel 2400 own-user 100 all-kernel 2400 all-user 100"
} >"$tmp/insn-cycle.log"
insn_summary "$tmp/insn-cycle-vm.log" "$tmp/insn-cycle.log"
check "insn-summary.py prints the counted job cycle with its windows (got $rc)" test "$rc" = 0
check "... the advantage kept: the cycles' ratio over the NOPs'" \
	grep -qx "METRIC insn.uring_advantage_kept 0.8594" "$tmp/out"
check "... the saving kept: the cycles' difference over two NOPs'" \
	grep -qx "METRIC insn.uring_saving_kept 1.0000" "$tmp/out"
check "... and the differences it rests on" \
	grep -qx "# insn: uring_job_submit + uring_job_complete: 2000 instructions per job; ioctl_job_cycle - that: 500; ioctl_nop - uring_cmd_nop: 250" "$tmp/out"
sed '/window 4 /s/own-kernel 750/own-kernel 450/' "$tmp/insn-cycle.log" >"$tmp/insn-bad.log"
insn_summary "$tmp/insn-cycle-vm.log" "$tmp/insn-bad.log"
check "insn-summary.py refuses a NOP ioctl no dearer than the ring's NOP (got $rc)" test "$rc" = 1
check "... saying why no share of the saving exists" \
	grep -q "ioctl_nop (500) is not above uring_cmd_nop (550): the ring saves a NOP nothing" "$tmp/out"
grep -v "window 4 " "$tmp/insn-cycle.log" >"$tmp/insn-bad.log"
insn_summary "$tmp/insn-cycle-vm.log" "$tmp/insn-bad.log"
check "insn-summary.py refuses the job cycle without the NOP ioctl's counts (got $rc)" test "$rc" = 1
check "... naming the window and the metric" \
	grep -q "window 'ioctl_nop' has no counts: insn.uring_advantage_kept needs it" "$tmp/out"
check "... and prints no cycle metric from the canned logs without those windows" \
	sh -c "! grep -q uring_advantage_kept '$tmp/insn-vm.out'"
sh "$src/scripts/insn-vm.sh" --rounds 0 >"$tmp/out" 2>&1
rc=$?
check "insn-vm.sh refuses --rounds 0 before it boots anything (got $rc)" test "$rc" = 2
check "... saying the range" grep -q "out of range (1 to 1000)" "$tmp/out"
sh "$src/scripts/insn-vm.sh" --bogus >"$tmp/out" 2>&1
rc=$?
check "insn-vm.sh refuses an unknown argument (got $rc)" test "$rc" = 2
sh "$src/scripts/insn-vm.sh" --all-vcpus >"$tmp/out" 2>&1
rc=$?
check "insn-vm.sh refuses --all-vcpus without --profile (got $rc)" test "$rc" = 2
check "... saying what it needs" grep -q "name its window with --profile" "$tmp/out"

# make check hands the fuzzer's VM the module it built (--module).
mkdir -p "$tmp/fuzzbuild/tests/fuzz"
printf '#!/bin/sh\nexit 0\n' >"$tmp/fuzzbuild/tests/fuzz/accel-fuzz"
chmod +x "$tmp/fuzzbuild/tests/fuzz/accel-fuzz"
BUILD="$tmp/fuzzbuild" sh "$src/scripts/fuzz-vm.sh" --module "$tmp/no-such.ko" \
	--out "$tmp/fuzzout" >"$tmp/out" 2>&1
rc=$?
check "fuzz-vm.sh refuses a --module that is not there before it boots anything (got $rc)" test "$rc" = 2
check "... naming it" grep -q "fuzz-vm.sh: no module at $tmp/no-such.ko" "$tmp/out"

tap_end
