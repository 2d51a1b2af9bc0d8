#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Install everything accelsched needs on a Debian bookworm machine, from
# Debian's own archive: the toolchain, the userspace build and test
# dependencies, QEMU, and the kernels the VM tests boot (unpacked into a
# cache folder, never installed as the host's kernel), and the source of the
# debug kernel, which `make check` builds into the same cache on first use.
#
# Idempotent: a second run checks and returns in a second or two.
#
#   scripts/setup.sh            packages and VM kernels
#   scripts/setup.sh --no-vm    packages only (enough for `make demo`)
#
# Exits 3, changing nothing, on anything but Debian bookworm (read from
# /etc/os-release, or the file ACCEL_OS_RELEASE names); 2 on a bad option.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
want_vm=1
for arg in "$@"; do
	case "$arg" in
	--no-vm) want_vm=0 ;;
	-h|--help) sed -n '2,16p' "$0"; exit 0 ;;
	*) echo "setup.sh: unknown option '$arg' (try --help)" >&2; exit 2 ;;
	esac
done

# Debian bookworm only: the package names, the backports suite and the
# pinned VM kernels are bookworm's, and apt's sources are edited below.
# Checked before anything is touched. ACCEL_OS_RELEASE names another
# os-release file (the tests use it).
os_release=${ACCEL_OS_RELEASE:-/etc/os-release}
os_id= os_codename= os_name=
if [ -r "$os_release" ]; then
	os_id=$(sed -n 's/^ID=//p' "$os_release" | tr -d '"')
	os_codename=$(sed -n 's/^VERSION_CODENAME=//p' "$os_release" | tr -d '"')
	os_name=$(sed -n 's/^PRETTY_NAME=//p' "$os_release" | tr -d '"')
fi
if [ "$os_id" != debian ] || [ "$os_codename" != bookworm ]; then
	echo "setup.sh: this machine runs ${os_name:-an unknown system (no $os_release)}," \
	     "not Debian 12 (bookworm); setup.sh installs bookworm's packages and" \
	     "adds bookworm's apt sources, so it stops here, changing nothing." \
	     "Run it on Debian bookworm, or install the packages listed in" \
	     "scripts/setup.sh by hand (Documentation/building.rst)." >&2
	exit 3
fi

if [ "$(id -u)" -ne 0 ]; then
	if command -v sudo >/dev/null 2>&1; then
		SUDO=sudo
	else
		echo "setup.sh: installing packages needs root; run it as root or install sudo" >&2
		exit 1
	fi
else
	SUDO=
fi

# Everything the builds, the tests and the VM need. Keep sorted.
# libamdhip64-5 is ROCm's HIP runtime: the hip driver's tests load it to
# check its symbol table and its no-device path (no AMD GPU is needed).
# The CUDA toolkit (nvcc, for the cuda driver's built-in kernels) is not
# in Debian main; install it from NVIDIA where the cuda driver is wanted.
PACKAGES="
bash-completion
bc
binutils
bison
build-essential
busybox-static
check
cpio
dkms
dwarves
flex
gcc
git
glslc
gzip
kmod
libamdhip64-5
libdrm-dev
libelf-dev
libssl-dev
libtraceevent-dev
libtracefs-dev
liburing-dev
libvulkan-dev
make
mesa-vulkan-drivers
meson
ninja-build
pkg-config
podman
python3
python3-docutils
python3-jsonschema
python3-sphinx
qemu-system-x86
xz-utils
"

# What only the VM tests need: Debian's kernel source, from which
# scripts/build-debug-kernel.sh builds the debug kernel (a tarball in
# /usr/src; nothing is built or installed as a kernel).
VM_PACKAGES="
linux-source-6.12
"
[ "$want_vm" = 1 ] && PACKAGES="$PACKAGES $VM_PACKAGES"

missing=
for p in $PACKAGES; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		missing="$missing $p"
done

backports_list=/etc/apt/sources.list.d/accelsched-bookworm-backports.list
need_backports=0
if [ "$want_vm" = 1 ] && ! grep -rqs '^[^#]*bookworm-backports' \
		/etc/apt/sources.list /etc/apt/sources.list.d/; then
	need_backports=1
fi

if [ "$need_backports" = 1 ]; then
	# Use the mirror the machine already uses for bookworm.
	mirror=$(grep -rhs -E '^(deb |URIs:)' /etc/apt/sources.list /etc/apt/sources.list.d/ |
		grep -v security | sed -E 's/^deb (\[[^]]*\] )?//; s/^URIs: //' |
		awk '{print $1}' | grep -m1 debian || true)
	[ -n "$mirror" ] || mirror=http://deb.debian.org/debian
	echo "setup.sh: adding bookworm-backports ($mirror) to apt's sources"
	echo "deb $mirror bookworm-backports main" | $SUDO tee "$backports_list" >/dev/null
fi

if [ -n "$missing" ] || [ "$need_backports" = 1 ]; then
	echo "setup.sh: installing:$missing"
	$SUDO apt-get update -q
	[ -z "$missing" ] ||
		DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q \
			--no-install-recommends $missing
else
	echo "setup.sh: packages already installed"
fi

if [ "$want_vm" = 1 ]; then
	# The Debian kernels now; the debug kernel is built by its first user
	# (make check), so that `setup.sh && make demo` does not wait for it.
	"$here/fetch-kernels.sh" --no-build
fi
