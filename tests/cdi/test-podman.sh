#!/bin/sh
# SPDX-License-Identifier: MIT
#
# accelctl cdi with a real container runtime: Debian's podman resolves the
# spec accelctl writes and hands the device node and the engine's
# environment to a container. The container is a busybox root folder
# (--rootfs: no image, no registry). The node is a stand-in made with
# mknod (the same major:minor as /dev/null) and the engine tree a fake
# sysfs, so the host needs no module; the spec goes to /var/run/cdi (what
# bookworm's podman 4.3 reads: it has no --cdi-spec-dir) under a kind of
# its own, removed at the end.
#
# Skips, saying why, where podman cannot run a container: not root, podman
# or busybox missing, or the runtime refused (a sandbox that forbids
# setrlimit or namespaces). Once a container runs, every check counts.
#
# Usage: test-podman.sh BUILD_ROOT
set -u

accelctl=${1:?usage: test-podman.sh BUILD_ROOT}/tools/accelctl
skip() { echo "1..0 # SKIP $*"; exit 0; }

[ "$(id -u)" = 0 ] || skip "not root: podman's CDI folders (/var/run/cdi) need root"
command -v podman >/dev/null 2>&1 || skip "podman is not installed (apt install podman)"
bb=$(command -v busybox 2>/dev/null) || skip "busybox is not installed (apt install busybox-static)"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/accelsched-podman.XXXXXX")
kind=accelsched-test-$$.io/engine
spec=/var/run/cdi/accelsched-test-$$.json
trap 'rm -rf "$tmp"; rm -f "$spec"' EXIT INT TERM

mkdir -p "$tmp/root/bin" "$tmp/sys/engines/gpu-0" "$tmp/sys/engines/cpu" /var/run/cdi
cp "$bb" "$tmp/root/bin/busybox"
for c in sh stat cat; do ln -s busybox "$tmp/root/bin/$c"; done
mknod "$tmp/node" c 1 3 || skip "mknod refused here"
"$accelctl" cdi --device "$tmp/node" --sysfs "$tmp/sys" --kind "$kind" -o "$spec" \
	>/dev/null || { echo "1..1"; echo "not ok 1 accelctl cdi wrote $spec"; exit 1; }

# run DEVICE: the node's major:minor and ACCEL_ENGINE, as the container sees them.
run() {
	timeout 300 podman run --rm --network none --ulimit host \
		--device "$kind=$1" --rootfs "$tmp/root" /bin/sh -c \
		"stat -c '%t:%T %F' '$tmp/node'; echo \"engine=\${ACCEL_ENGINE:-none}\"" \
		>"$tmp/out" 2>"$tmp/err"
}
if ! run all; then
	grep -q -i -e 'permission denied' -e 'operation not permitted' -e 'not supported' "$tmp/err" &&
		skip "podman cannot run a container here: $(tail -n1 "$tmp/err")"
	echo "1..1"
	echo "not ok 1 podman run --device $kind=all"
	sed 's/^/# /' "$tmp/err"
	exit 1
fi

. "$(dirname "$0")/../tap.sh"
# A failure shows what the container printed.
failed() { not_ok "$1" "$(cat "$tmp/out" "$tmp/err")"; }
echo "1..4"
grep -q '^1:3 character special file$' "$tmp/out" && ok "$kind=all gives the container the node, 1:3" ||
	failed "$kind=all gives the container the node, 1:3"
grep -q '^engine=none$' "$tmp/out" && ok "$kind=all sets no ACCEL_ENGINE" ||
	failed "$kind=all sets no ACCEL_ENGINE"
if run gpu-0 && grep -q '^1:3 character special file$' "$tmp/out" &&
	grep -q '^engine=gpu-0$' "$tmp/out"; then
	ok "$kind=gpu-0 gives the node and ACCEL_ENGINE=gpu-0"
else
	failed "$kind=gpu-0 gives the node and ACCEL_ENGINE=gpu-0"
fi
if ! run nope && grep -q -i 'unresolvable CDI devices' "$tmp/err"; then
	ok "an engine the spec lacks is refused by podman"
else
	failed "an engine the spec lacks is refused by podman"
fi
exit $((fails > 0))
