# SPDX-License-Identifier: MIT
#
# accelsched: the entry points. The module builds with Kbuild (the Kbuild
# file beside this one), the userspace with Meson; this Makefile drives both.
#
#   make                 build accelsched.ko for the running kernel (or KDIR=)
#   make build           build libaccel, the drivers, the tools and the tests
#   make demo            the main job (see README.md)
#   make check           every test suite, the VM ones on every pinned kernel;
#                        ends with "N passed, N failed, N skipped"
#   make bench           every benchmark; prints METRIC lines
#   make vmtest          the kernel suites only (KERNELS="deb6.1 deb6.12 debug6.12")
#   make fuzz            the uapi fuzzer (tests/fuzz) alone in the debug
#                        kernel's VM for FUZZ_S seconds (default 300);
#                        FUZZ_SEED=N replays a run (its first line says
#                        "seed: N"), FUZZ_ARGS="--skip op,op --threads 4"
#                        passes more; make check runs it for 60 s, make
#                        bench for 20 s (METRIC fuzz.calls_per_s)
#   make unit            the userspace suites only
#   make install         libaccel, headers, tools, the udev rule
#   make modules_install install the module for KDIR's kernel
#   make dkms-source     the module's sources alone, as a DKMS source tree
#                        in $(BUILD)/dkms/accelsched-<version>/
#   make docs            the HTML documentation (Sphinx) in $(BUILD)/html
#   make clean

KDIR ?= /lib/modules/$(shell uname -r)/build
BUILD ?= build
FUZZ_S ?= 300
FUZZ_KERNEL ?= debug6.12
KERNELS ?= $(shell grep -v -E '^[[:space:]]*(\#|$$)' tests/qemu/kernels.conf | awk '{print $$1}')

.PHONY: all modules modules_install build demo check bench vmtest unit \
	install clean setup fuzz dkms-source docs

all: modules

modules:
	scripts/build-kmod.sh "$(KDIR)"

modules_install: modules
	$(MAKE) -C "$(KDIR)" M="$(CURDIR)" modules_install
	depmod -a

docs:
	sphinx-build -W -b html Documentation "$(BUILD)/html"

dkms-source:
	scripts/dkms-source.sh "$(BUILD)/dkms"

$(BUILD)/build.ninja:
	meson setup $(BUILD)

build: $(BUILD)/build.ninja
	meson compile -C $(BUILD)

setup:
	scripts/setup.sh

demo: build
	$(BUILD)/examples/hello-scheduler
	$(BUILD)/examples/pipeline
	$(BUILD)/examples/tenants

check:
	BUILD=$(BUILD) scripts/check.sh

bench: build
	BUILD=$(BUILD) scripts/bench.sh

vmtest: build
	ACCEL_KERNELS="$(KERNELS)" BUILD=$(BUILD) scripts/check.sh --vm-only

fuzz: build
	BUILD=$(BUILD) FUZZ_ARGS="$(FUZZ_ARGS)" scripts/fuzz-vm.sh \
		--kernel $(FUZZ_KERNEL) --seconds $(FUZZ_S) $(if $(FUZZ_SEED),--seed $(FUZZ_SEED))

unit: build
	meson test -C $(BUILD) --print-errorlogs

install: build
	meson install -C $(BUILD)
	install -D -m 0644 udev/70-accelsched.rules \
		$(DESTDIR)/usr/lib/udev/rules.d/70-accelsched.rules

clean:
	rm -rf $(BUILD)
	-[ -f "$(KDIR)/Makefile" ] && $(MAKE) -C "$(KDIR)" M="$(CURDIR)" clean
	rm -f kmod/compat-probed.h
