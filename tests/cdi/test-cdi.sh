#!/bin/sh
# SPDX-License-Identifier: MIT
#
# accelctl cdi: the spec it writes validates against the CDI schema and
# says what the module has (a fake sysfs tree of engines, a real char
# device standing in for /dev/accelsched); it writes atomically, keeps a
# foreign file, and refuses bad input with its status and message.
#
# Usage: test-cdi.sh BUILD_ROOT SOURCE_DIR_OF_THIS_TEST
set -u

ctl=${1:?usage: test-cdi.sh BUILD_ROOT TESTDIR}/tools/accelctl
here=${2:?usage: test-cdi.sh BUILD_ROOT TESTDIR}
. "$(dirname "$0")/../tap.sh"
tap_tmp cdi-test
refused() { # STATUS PATTERN ARGS...
	want=$1 pat=$2; shift 2
	"$ctl" cdi "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" = "$want" ] && grep -q -- "$pat" "$tmp/err"; then
		ok "cdi $* -> $want, '$pat'"
	else
		not_ok "cdi $* -> $want, '$pat' (got $rc: $(head -c 300 "$tmp/err"))"
	fi
}
spec_ok() { python3 "$here/check-spec.py" "$here/cdi-schema.json" "$@" >"$tmp/check" 2>&1 ||
	{ sed 's/^/# /' "$tmp/check"; return 1; }; }
echo "TAP version 13"

dev=/dev/null
set -- $(stat -L -c '%t %T' "$dev")
major=$(printf '%d' "0x$1") minor=$(printf '%d' "0x$2")
fs=$tmp/sysfs
mkdir -p "$fs/engines/cpu" "$fs/engines/vulkan:0" "$fs/engines/cuda:1"

"$ctl" cdi --print --device "$dev" --sysfs "$fs" >"$tmp/spec.json" 2>"$tmp/err"
check "cdi --print exits 0" test "$?" = 0
check "the spec validates, with 'all' and one device per engine" \
	spec_ok "$tmp/spec.json" "$dev" "$major" "$minor" cpu cuda:1 vulkan:0
mkdir -p "$tmp/empty"
"$ctl" cdi --print --device "$dev" --sysfs "$tmp/empty" >"$tmp/spec0.json" 2>/dev/null
check "no engine yet: only 'all'" spec_ok "$tmp/spec0.json" "$dev" "$major" "$minor"
"$ctl" cdi --print --device "$dev" --sysfs "$fs" --kind example.com/accel >"$tmp/k.json"
check "--kind sets the kind" grep -q '"kind": "example.com/accel"' "$tmp/k.json"
check "and that spec validates too" spec_ok "$tmp/k.json"

# The schema can fail: a spec without devices, a bad kind, a bad name.
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["devices"]=[]; json.dump(d,open(sys.argv[2],"w"))' \
	"$tmp/spec.json" "$tmp/bad1.json"
check "the check refuses a spec without devices" sh -c "! python3 '$here/check-spec.py' '$here/cdi-schema.json' '$tmp/bad1.json' >/dev/null"
sed 's|"kind": "accelsched.io/engine"|"kind": "accelsched.io/engine/x"|' "$tmp/spec.json" >"$tmp/bad2.json"
check "the check refuses a kind with two slashes" sh -c "! python3 '$here/check-spec.py' '$here/cdi-schema.json' '$tmp/bad2.json' >/dev/null"
sed 's|"name": "cpu"|"name": "-cpu"|' "$tmp/spec.json" >"$tmp/bad3.json"
check "the check refuses a device name starting with '-'" sh -c "! python3 '$here/check-spec.py' '$here/cdi-schema.json' '$tmp/bad3.json' >/dev/null"

# Written to a file: atomically, 0644, replacing only its own.
mkdir -p "$tmp/cdi"
"$ctl" cdi -o "$tmp/cdi/accelsched.json" --device "$dev" --sysfs "$fs" >"$tmp/out" 2>"$tmp/err"
check "cdi -o FILE exits 0" test "$?" = 0
check "the file validates" spec_ok "$tmp/cdi/accelsched.json" "$dev" "$major" "$minor" cpu cuda:1 vulkan:0
check "its mode is 0644" test "$(stat -c %a "$tmp/cdi/accelsched.json")" = 644
check "no temporary file is left" test "$(ls -A "$tmp/cdi")" = accelsched.json
rm -rf "$fs/engines/cuda:1"
"$ctl" cdi -o "$tmp/cdi/accelsched.json" --device "$dev" --sysfs "$fs" >/dev/null 2>&1
check "a second run replaces its own spec" \
	spec_ok "$tmp/cdi/accelsched.json" "$dev" "$major" "$minor" cpu vulkan:0
echo '{"cdiVersion": "0.5.0", "kind": "vendor.com/gpu", "devices": []}' >"$tmp/cdi/foreign.json"
cp "$tmp/cdi/foreign.json" "$tmp/foreign.orig"
refused 1 "exists and is not a spec of this kind written by accelctl cdi" \
	-o "$tmp/cdi/foreign.json" --device "$dev" --sysfs "$fs"
check "the foreign file is unchanged" cmp -s "$tmp/cdi/foreign.json" "$tmp/foreign.orig"
check "and no temporary file is left" test "$(ls -A "$tmp/cdi" | wc -l)" = 2

# Refusals.
refused 1 "load the module (modprobe accelsched) or pass --device PATH" \
	--print --device "$tmp/no-such-node" --sysfs "$fs"
refused 1 "is not a character device" --print --device "$tmp/cdi" --sysfs "$fs"
refused 1 "create it (mkdir -p $tmp/nodir)" -o "$tmp/nodir/a.json" --device "$dev" --sysfs "$fs"
refused 2 "bad kind 'foo'" --print --kind foo --device "$dev"
refused 2 "bad kind '1x.io/engine'" --print --kind 1x.io/engine --device "$dev"
refused 2 "bad kind 'a.io/b.c'" --print --kind a.io/b.c --device "$dev"
refused 2 "give one of -o, --dynamic and --print" --print --dynamic
refused 2 "unknown option '--bogus'" --bogus
refused 2 "needs a value" --kind
refused 2 "unexpected argument 'extra'" --print extra
"$ctl" cdi --help >"$tmp/out" 2>&1
check "cdi --help exits 0 and names the kind" grep -q "accelsched.io/engine=all" "$tmp/out"

tap_end
