// SPDX-License-Identifier: MIT
/*
 * The cpu driver's device and allocator: "cpu://" (or "cpu://0") opens the
 * one device, the host. Buffers are 64-byte aligned host memory; their
 * device address is their host pointer, which is what the binding plan
 * writes into parameter blocks.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cpu.h"
#include "src/error.h"

#define CPU_BUFFER_ALIGN 64

struct cpu_buffer {
	accel_buffer_t base;
	void *memory;
};

static void cpu_buffer_destroy(accel_buffer_t *b)
{
	struct cpu_buffer *cb = (struct cpu_buffer *)b;

	free(cb->memory);
	accel_buffer_fini(b);
	free(cb);
}

static const struct accel_buffer_ops cpu_buffer_ops = {
	.destroy = cpu_buffer_destroy,
};

static int cpu_buffer_allocate(accel_device_t *d,
			       const accel_buffer_params_t *params,
			       uint64_t size, accel_buffer_t **out)
{
	size_t bytes = (size_t)(size + CPU_BUFFER_ALIGN - 1) & ~(size_t)(CPU_BUFFER_ALIGN - 1);
	struct cpu_buffer *b = calloc(1, sizeof(*b));

	if (!bytes)
		bytes = CPU_BUFFER_ALIGN;
	if (b)
		b->memory = aligned_alloc(CPU_BUFFER_ALIGN, bytes);
	if (!b || !b->memory) {
		free(b);
		return accel_fail(ENOMEM,
			"accel_allocator_allocate_buffer: out of memory allocating %" PRIu64 " bytes on %s",
			size, d->uri);
	}
	accel_buffer_init(&b->base, &cpu_buffer_ops, d, params, size);
	b->base.address = (uint64_t)(uintptr_t)b->memory;
	b->base.host = b->memory;
	*out = &b->base;
	return 0;
}

static void cpu_device_destroy(accel_device_t *d)
{
	accel_device_fini(d);
	free(d);
}

const struct accel_device_ops accel_cpu_device_ops = {
	.destroy = cpu_device_destroy,
	.buffer_allocate = cpu_buffer_allocate,
	.executable_load = accel_cpu_executable_load,
	.execute = accel_cpu_execute,
};

static int cpu_device_open(const struct accel_driver *drv, const char *device,
			   accel_scheduler_t *s, accel_device_t **out)
{
	accel_device_t *d;

	if (device[0] && strcmp(device, "0") != 0)
		return accel_fail(EINVAL,
			"accel_device_open: \"cpu://%.64s\": the cpu driver has one device; use \"cpu://\" or \"cpu://0\"",
			device);
	d = calloc(1, sizeof(*d));
	if (!d)
		return accel_fail(ENOMEM, "accel_device_open: out of memory");
	accel_device_init(d, &accel_cpu_device_ops, drv, s, "cpu://0");
	*out = d;
	return 0;
}

const struct accel_driver accel_driver_cpu = {
	.name = "cpu",
	.uri_example = "cpu://",
	.device_open = cpu_device_open,
};
