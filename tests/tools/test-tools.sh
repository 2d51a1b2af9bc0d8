#!/bin/sh
# SPDX-License-Identifier: MIT
#
# The tools never lie: every bad number is refused with exit status 2 and a
# message naming the option, the value and the range; a folder is not a
# script; infinities and NaN are checked as written; JSON output is JSON
# (also with quotes, backslashes and newlines in a path, and with -j on
# accel-bench, whose notes go to stderr); --version, --help and help work
# on every tool and agree on the version.
#
# Usage: test-tools.sh BUILD_ROOT
set -u

b=${1:?usage: test-tools.sh BUILD_ROOT}/tools
. "$(dirname "$0")/../tap.sh"
tap_tmp tools-test
# run WANT_STATUS GREP_PATTERN COMMAND...: status and stderr message
refused() {
	want=$1 pat=$2; shift 2
	"$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" = "$want" ] && grep -q -- "$pat" "$tmp/err"; then
		ok "$* -> $want, '$pat'"
	else
		not_ok "$* -> $want, '$pat' (got $rc: $(head -c 300 "$tmp/err"))"
	fi
}
json_doc() { # $1 holds one JSON value
	python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$1" 2>/dev/null
}
json_lines() { # every line of $1 is one JSON value
	python3 -c 'import json, sys
n = 0
for line in open(sys.argv[1]):
    json.loads(line); n += 1
sys.exit(0 if n else 1)' "$1" 2>/dev/null
}
echo "TAP version 13"

# ---- numbers ---------------------------------------------------------------
for v in 3x 5abc "" -1 " 7" 0 1001 99999999999999999999999; do
	refused 2 "accel-bench: --rounds '$v' is not a whole number from 1 to 1000" \
		"$b/accel-bench" -r "$v" sem
done
for v in 1e6 12k 127 100000001 -128; do
	refused 2 "accel-bench: --ops '$v' is not a whole number from 128 to 100000000" \
		"$b/accel-bench" -n "$v" sem
done
# --host and --module with names: a name outside the selection is refused.
refused 2 "accel-bench: 'nop' needs the module, but --host selects only those that need none" \
	"$b/accel-bench" --host nop
refused 2 "accel-bench: 'sem' does not need the module, but --module selects only those that need it" \
	"$b/accel-bench" --module sem
refused 2 "accel-bench: --host and --module select opposite sets; give one" \
	"$b/accel-bench" --host --module
refused 2 "accel-run: no script given: name one, or - for standard input" "$b/accel-run"
refused 2 "accel-run: one script at a time, but got 'b.acc' after 'a.acc'" \
	"$b/accel-run" a.acc b.acc
for v in 5abc 0 -5 1.5 86400001; do
	refused 2 "accel-run: --timeout (milliseconds) '$v' is not a whole number from 1 to 86400000" \
		"$b/accel-run" -t "$v" "$tmp/none.acc"
done
for v in 0.5x -1 "" nan; do
	refused 2 "accelctl: top: bad delay '$v'" "$b/accelctl" top -d "$v"
done
for v in 0 3x -2; do
	refused 2 "accelctl: top: bad frame count '$v'" "$b/accelctl" top -n "$v"
done
for v in 0 86401 5s -1; do
	refused 2 "accelctl: trace: -d '$v' is not a whole number from 1 to 86400" \
		"$b/accelctl" trace -d "$v"
done
for v in 63 1048577 8M; do
	refused 2 "accelctl: trace: --buffer-kb '$v' is not a whole number from 64 to 1048576" \
		"$b/accelctl" trace --buffer-kb "$v"
done
refused 2 "accelctl: trace: give a command or -d SECONDS, not both" \
	"$b/accelctl" trace -d 3 -- true
refused 2 "accelctl: trace: --input converts a recorded trace" \
	"$b/accelctl" trace --input "$tmp/none.txt" -- true
refused 2 "accelctl: trace: -o needs a file name" "$b/accelctl" trace -o "" -d 1
refused 2 "accelctl: trace: option '-o' needs a value" "$b/accelctl" trace -o
refused 1 "accelctl: trace: cannot open $tmp/none.txt" \
	"$b/accelctl" trace --input "$tmp/none.txt" -o "$tmp/t.json"
# One of our events whose fields are not ours: refused, naming the line.
printf '  a-1 [000] ..... 5.000001: job_submit: client=x engine=e queue=1 job=1 prio=1\n' >"$tmp/bad.txt"
refused 1 "accelctl: trace: $tmp/bad.txt:1: a job_submit event whose fields are not the ones" \
	"$b/accelctl" trace --input "$tmp/bad.txt" -o "$tmp/t.json"
check "accelctl trace: nothing written for a refused input" test ! -e "$tmp/t.json"
# An input that cannot be read is an error, not an empty trace.
mkdir -p "$tmp/dir"
refused 1 "accelctl: trace: cannot read $tmp/dir: Is a directory" \
	"$b/accelctl" trace --input "$tmp/dir" -o "$tmp/t.json"
refused 1 "accelctl: trace: cannot read -: Bad file descriptor" \
	sh -c '"$0" trace --input - -o "$1" <&-' "$b/accelctl" "$tmp/t.json"
# Timestamps: one '.', seconds whose nanoseconds fit 64 bits.
for ts in 1.2.3 99999999999999999999 .5; do
	printf '  a-1 [000] ..... %s: job_submit: client=1 engine=e queue=1 job=1 prio=1\n' "$ts" >"$tmp/ts.txt"
	refused 1 "$tmp/ts.txt:1: a job_submit event whose timestamp is not SECONDS.FRACTION" \
		"$b/accelctl" trace --input "$tmp/ts.txt" -o "$tmp/t.json"
done
check "accelctl trace: nothing written for an unreadable input" test ! -e "$tmp/t.json"
# Numbers at the edges: 2^64 - 1 is a point, 2^64 and a sign are not;
# a status is an int32.
ev='  a-1 [000] ..... 5.000001:'
for bad in "job_wait: client=-1 queue=1 job=1 fence=1:1" \
	"job_wait: client=1 queue=1 job=1 fence=1:18446744073709551616" \
	"job_wait: client=1 queue=1 job=1 fence=+1:1" \
	"job_wait: client=1 queue=1 job=4294967296 fence=1:1" \
	"job_complete: client=1 engine=e queue=1 job=1 status=-2147483649 device_ns=1" \
	"job_fail: client=1 engine=e queue=1 job=1 error=2147483648"; do
	printf '%s %s\n' "$ev" "$bad" >"$tmp/edge.txt"
	refused 1 "accelctl: trace: $tmp/edge.txt:1: a job_" \
		"$b/accelctl" trace --input "$tmp/edge.txt" -o "$tmp/t.json"
done
printf '%s job_signal: client=18446744073709551615 queue=4294967295 job=4294967295 fence=18446744073709551615:18446744073709551615\n%s job_fail: client=18446744073709551615 engine=e queue=4294967295 job=4294967295 error=-2147483648\n' \
	"$ev" "$ev" >"$tmp/edge.txt"
check "accelctl trace takes 2^64 - 1, 2^32 - 1 and INT32_MIN where they fit" \
	"$b/accelctl" trace --input "$tmp/edge.txt" -o "$tmp/edge.json"
check "... and writes them back exactly" grep -q '"signals":\["18446744073709551615:18446744073709551615"\]' "$tmp/edge.json"
check "... the status too" grep -q '"status":-2147483648' "$tmp/edge.json"
# A path with quotes lands in the trace's otherData as a JSON string.
cp "$tmp/bad.txt" "$tmp/q\"uo\\te.txt" && : >"$tmp/q\"uo\\te.txt"
check "accelctl trace --input of an empty trace writes JSON" \
	"$b/accelctl" trace --input "$tmp/q\"uo\\te.txt" -o "$tmp/e.json"
check "... which parses, quotes and all" json_doc "$tmp/e.json"
# A refusal runs nothing: no benchmark's output on stdout.
"$b/accel-bench" -r 3x sem >"$tmp/out" 2>/dev/null
check "a refused option runs no benchmark" test ! -s "$tmp/out"
refused 2 "accel-bench: unknown benchmark 'nope'" "$b/accel-bench" -r 1 -n 128 sem nope
check "an unknown benchmark name stops the run before the others run" \
	sh -c "! grep -q sem '$tmp/out'"

# ---- accel-run on a folder, and on inf/nan ------------------------------------
mkdir -p "$tmp/scripts"
refused 2 "is a folder; give one script file" "$b/accel-run" "$tmp/scripts"
"$b/accel-run" -j "$tmp/scripts" >"$tmp/out" 2>/dev/null
check "accel-run -j on a folder prints a JSON error report" json_doc "$tmp/out"
check "and says result: error" grep -q '"result": "error"' "$tmp/out"

cat >"$tmp/inf.acc" <<'ACC'
buffer a size=16 init=f32:inf,-inf,nan,1.5
expect a f32:inf,-inf,nan,1.5
print a f32
ACC
"$b/accel-run" "$tmp/inf.acc" >"$tmp/out" 2>&1
rc=$?
check "expect f32:inf,-inf,nan passes on that data (got $rc)" test "$rc" = 0
sed 's/^expect a f32:inf,-inf/expect a f32:-inf,-inf/' "$tmp/inf.acc" >"$tmp/inf2.acc"
"$b/accel-run" "$tmp/inf2.acc" >"$tmp/out" 2>&1
rc=$?
check "expect -inf fails on inf (status 1, got $rc)" test "$rc" = 1
sed 's/^expect a f32:inf,-inf,nan,1.5/expect a f32:inf,-inf,1,1.5/' "$tmp/inf.acc" >"$tmp/inf3.acc"
"$b/accel-run" "$tmp/inf3.acc" >"$tmp/out" 2>&1
rc=$?
check "expect 1 fails on NaN (status 1, got $rc)" test "$rc" = 1
"$b/accel-run" -j "$tmp/inf.acc" >"$tmp/out" 2>/dev/null
check "accel-run -j with inf and NaN values is JSON" json_doc "$tmp/out"

# ---- JSON with hard paths ---------------------------------------------------
weird="$tmp/we\"ird\\dir	tab é"
mkdir -p "$weird"
cp "$tmp/inf.acc" "$weird/s\"q.acc"
"$b/accel-run" -j "$weird/s\"q.acc" >"$tmp/out" 2>/dev/null
check "accel-run -j: a path with quote, backslash, tab, UTF-8 is valid JSON" json_doc "$tmp/out"
check "and the path comes back as it was" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if d["script"] == sys.argv[2] else 1)' "$tmp/out" "$weird/s\"q.acc"
"$b/accel-run" -j "$weird/missing\".acc" >"$tmp/out" 2>/dev/null
check "accel-run -j: a missing script with a quote in its path is a JSON error" json_doc "$tmp/out"

# ---- accel-bench -j: stdout is JSON alone -------------------------------------
"$b/accel-bench" -j -r 1 -n 128 sem >"$tmp/out" 2>"$tmp/err"
rc=$?
check "accel-bench -j sem runs (status $rc)" test "$rc" = 0
check "accel-bench -j: every stdout line is JSON" json_lines "$tmp/out"
# The static accel-bench cannot load Vulkan and says so in a '#' note.
"$b/accel-bench" -j -r 1 -n 128 vulkan >"$tmp/out2" 2>"$tmp/err2"
check "accel-bench -j: the '#' notes go to stderr" grep -q '^# vulkan: skipped' "$tmp/err2"
check "accel-bench -j: and not to stdout" sh -c "! grep -q '^#' '$tmp/out2'"
check "accel-bench -j: no '#' line on stdout" sh -c "! grep -q '^#' '$tmp/out'"
check "accel-bench: progress on stderr" grep -q '^accel-bench: \[1/1\] sem' "$tmp/err"
"$b/accel-bench" -r 1 -n 128 sem >"$tmp/out" 2>/dev/null
check "accel-bench without -j: METRIC lines as before" \
	grep -q '^METRIC sem\.wake_embedded_vs_futex [0-9.]*$' "$tmp/out"

# ---- accel-bench: output that cannot be written, a module that is absent ----
# A write that fails is status 1 with a message, never a silent 0 (an
# outside test found every tool exiting 0 into /dev/full).
"$b/accel-bench" -r 1 -n 128 sem >/dev/full 2>"$tmp/err"
rc=$?
check "accel-bench sem >/dev/full -> 1 (got $rc)" test "$rc" = 1
check "accel-bench >/dev/full says it cannot write" \
	grep -q '^accel-bench: cannot write the output: No space left on device' "$tmp/err"
"$b/accel-bench" -j -r 1 -n 128 sem >&- 2>"$tmp/err"
rc=$?
check "accel-bench -j sem >&- -> 1 (got $rc)" test "$rc" = 1
if [ -e /dev/accelsched ]; then
	ok "# SKIP accel-bench without the module: /dev/accelsched exists here"
	ok "# SKIP accel-bench ktenant without the module: /dev/accelsched exists here"
else
	refused 1 "accel-bench: --module: every benchmark it selects needs the module" \
		"$b/accel-bench" -r 1 -n 128 --module
	refused 1 "accel-bench: ktenant needs the module, and /dev/accelsched does not exist" \
		"$b/accel-bench" -r 1 -n 128 ktenant
fi

# ---- accel-bench insn and the accel-insn QEMU plugin --------------------------
if [ -e /dev/accelsched ]; then
	ok "# SKIP accel-bench insn without the module: /dev/accelsched exists here"
else
	refused 1 "accel-bench: insn needs the module, and /dev/accelsched does not exist" \
		"$b/accel-bench" -r 1 insn
fi
"$b/accel-bench" --help >"$tmp/out" 2>&1
check "accel-bench --help says insn runs only when named" \
	grep -q '^  insn .*(only when named)' "$tmp/out"
# QEMU loads the plugin, resolving every symbol of its API it declares
# (bound at load), and runs its install: a bad argument is refused there.
if [ ! -f "$b/accel-insn.so" ]; then
	ok "# SKIP accel-insn.so: not built on this architecture"
elif ! command -v qemu-system-x86_64 >/dev/null; then
	ok "# SKIP accel-insn.so: qemu-system-x86_64 is not installed (scripts/setup.sh installs it)"
else
	for arg in bogus=1 profile=maybe; do
		refused 1 "accel-insn: unknown argument '$arg' (it takes profile=on or profile=all)" \
			timeout 20 qemu-system-x86_64 -M none -nodefaults -display none \
			-plugin "$b/accel-insn.so,profile=all,$arg"
	done
fi

# ---- --version, --help, help -----------------------------------------------
vers=
for tool in accelctl accel-run accel-bench; do
	for h in --help -h help; do
		"$b/$tool" $h >"$tmp/out" 2>"$tmp/err"
		rc=$?
		check "$tool $h exits 0 (got $rc)" test "$rc" = 0
		check "$tool $h prints the usage on stdout" grep -qi '^usage' "$tmp/out"
		check "$tool $h documents the exit status" grep -qi 'exit' "$tmp/out"
	done
	for v in --version -V; do
		"$b/$tool" $v >"$tmp/out" 2>&1
		rc=$?
		check "$tool $v exits 0 (got $rc)" test "$rc" = 0
		check "$tool $v says '$tool (libaccel) <version>'" \
			grep -q "^$tool (libaccel) [0-9]" "$tmp/out"
		vers="$vers $(awk '{ print $3 }' "$tmp/out")"
	done
done
check "the three tools report one version" \
	test "$(echo $vers | tr ' ' '\n' | sort -u | wc -l)" = 1
refused 2 "unknown option" "$b/accelctl" --bogus
refused 2 "" "$b/accel-run" --bogus x.acc
refused 2 "" "$b/accel-bench" --bogus

tap_end
