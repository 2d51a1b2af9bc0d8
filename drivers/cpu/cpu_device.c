// SPDX-License-Identifier: MIT
/*
 * The cpu driver's device and allocator: "cpu://" (or "cpu://0") opens the
 * one device, the host. Buffers are 64-byte aligned host memory; their
 * device address is their host pointer, which is what the binding plan
 * resolves refs to.
 *
 * The device owns a pool of workers (cpu_pool.c). Their number is, first
 * found: the ACCEL_CPU_THREADS environment variable; the URI's option
 * ("cpu://?threads=4", "cpu://0?threads=4"); the CPUs this process may run
 * on (sched_getaffinity). The environment wins, as ACCEL_SCHEDULER does
 * over a program's options, so that a user can size any program's pool.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/*
 * A synchronous transfer: every cpu buffer is host memory, mappable or
 * not, so the copy is a memmove() (the core checked the ranges).
 */
static int cpu_transfer(accel_device_t *d, const struct accel_transfer *t)
{
	const uint8_t *src = t->src_host;
	uint8_t *dst = t->dst_host;

	(void)d;
	if (!src)
		src = (const uint8_t *)t->src->host + t->src_offset;
	if (!dst)
		dst = (uint8_t *)t->dst->host + t->dst_offset;
	memmove(dst, src, t->length);
	return 0;
}

static void cpu_device_destroy(accel_device_t *d)
{
	struct cpu_device *dev = (struct cpu_device *)d;

	cpu_pool_destroy(dev->pool);
	pthread_mutex_destroy(&dev->lock);
	free(dev->tasks);
	accel_vec_free(&dev->ptrs);
	accel_vec_free(&dev->lens);
	accel_device_fini(d);
	free(dev);
}

/* The host's RAM, which both memory sizes report. */
static uint64_t host_memory(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);

	return pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
}

/*
 * A workgroup is one call of the entry point, which runs its invocations
 * itself: the core's defaults (the ABI's uint32_t sizes) stand; timestamps
 * are CLOCK_MONOTONIC's nanoseconds.
 */
static int cpu_query_i64(const accel_device_t *d, accel_device_query_t key,
			 int64_t *out)
{
	switch (key) {
	case ACCEL_DEVICE_QUERY_TIMESTAMPS:
		*out = 1;
		return 0;
	case ACCEL_DEVICE_QUERY_TIMESTAMP_PERIOD_PS:
		*out = 1000;
		return 0;
	case ACCEL_DEVICE_QUERY_MEMORY_DEVICE_LOCAL_BYTES:
	case ACCEL_DEVICE_QUERY_MEMORY_HOST_VISIBLE_BYTES:
		*out = (int64_t)host_memory();
		return 0;
	default:
		return -ENOENT;
	}
}

const struct accel_device_ops accel_cpu_device_ops = {
	.destroy = cpu_device_destroy,
	.buffer_allocate = cpu_buffer_allocate,
	.executable_load = accel_cpu_executable_load,
	.execute = accel_cpu_execute,
	.transfer = cpu_transfer,
	.query_i64 = cpu_query_i64,
	.calibration_executable = accel_cpu_calibration_executable,
};

/* Parses a worker count from @what (for messages); 0 or -EINVAL. */
static int parse_threads(const char *text, const char *what, unsigned int *out)
{
	char *end;
	unsigned long v;

	/* Digits only: strtoul() would take a sign and leading blanks. */
	errno = 0;
	v = strtoul(text, &end, 10);
	if (errno || !isdigit((unsigned char)text[0]) || *end || v < 1 ||
	    v > CPU_MAX_WORKERS)
		return accel_fail(EINVAL,
			"accel_device_open: %s \"%.32s\" is not a worker count; give a number from 1 to %u",
			what, text, CPU_MAX_WORKERS);
	*out = (unsigned int)v;
	return 0;
}

/* The CPUs this process may run on: sched_getaffinity(), else online. */
static unsigned int affinity_cpus(void)
{
	cpu_set_t set;
	long n;

	if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
		return (unsigned int)CPU_COUNT(&set);
	n = sysconf(_SC_NPROCESSORS_ONLN);
	return n < 1 ? 1 : (unsigned int)n;
}

static unsigned int default_threads(void)
{
	unsigned int n = affinity_cpus();

	return n > CPU_MAX_WORKERS ? CPU_MAX_WORKERS : n;
}

/* The device part: "" or "0", then optionally "?threads=N". */
static int parse_device(const char *device, unsigned int *threads)
{
	const char *q = strchr(device, '?'), *env = getenv("ACCEL_CPU_THREADS");
	size_t id_len = q ? (size_t)(q - device) : strlen(device);
	int err;

	if (id_len && !(id_len == 1 && device[0] == '0'))
		return accel_fail(EINVAL,
			"accel_device_open: \"cpu://%.64s\": the cpu driver has one device; use \"cpu://\" or \"cpu://0\"",
			device);
	*threads = default_threads();
	if (q) {
		if (strncmp(q + 1, "threads=", 8) != 0)
			return accel_fail(EINVAL,
				"accel_device_open: \"cpu://%.64s\": unknown option \"%.32s\"; the cpu driver takes \"?threads=N\"",
				device, q + 1);
		if (strchr(q + 9, '&'))
			return accel_fail(EINVAL,
				"accel_device_open: \"cpu://%.64s\": more than one option; the cpu driver takes one, \"?threads=N\"",
				device);
		err = parse_threads(q + 9, "the URI option threads=", threads);
		if (err)
			return err;
	}
	if (env && *env)
		return parse_threads(env, "ACCEL_CPU_THREADS=", threads);
	return 0;
}

static void cpuinfo_field(const char *key, char *out, size_t len);

/* The cost model's key (core.h): the processor and the worker count. */
static void set_identity(struct cpu_device *dev, unsigned int threads)
{
	char model[128] = "unknown processor";

	cpuinfo_field("model name", model, sizeof(model));
	accel_strfmt(dev->base.identity, sizeof(dev->base.identity),
		     "%s; %u workers", model, threads);
}

static int cpu_device_open(const struct accel_driver *drv, const char *device,
			   accel_scheduler_t *s, accel_device_t **out)
{
	struct cpu_device *dev;
	unsigned int threads;
	int err = parse_device(device, &threads);

	if (err)
		return err;
	dev = calloc(1, sizeof(*dev));
	if (!dev || cpu_pool_create(threads, &dev->pool)) {
		free(dev);
		return accel_fail(ENOMEM, "accel_device_open: out of memory");
	}
	pthread_mutex_init(&dev->lock, NULL);
	accel_device_init(&dev->base, &accel_cpu_device_ops, drv, s, "cpu://0");
	set_identity(dev, threads);
	*out = &dev->base;
	return 0;
}

/* Copies the value of the first "@key\t: value" line of /proc/cpuinfo. */
static void cpuinfo_field(const char *key, char *out, size_t len)
{
	FILE *f = fopen("/proc/cpuinfo", "re");
	size_t klen = strlen(key);
	char line[256];

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *v = strchr(line, ':');

		if (!v || strncmp(line, key, klen) != 0 ||
		    strspn(line + klen, " \t") != (size_t)(v - line) - klen)
			continue;
		v += 1 + strspn(v + 1, " \t");
		v[strcspn(v, "\n")] = 0;
		accel_strfmt(out, len, "%s", v);
		break;
	}
	fclose(f);
}

/* One device, the host. */
static int cpu_enumerate(const struct accel_driver *drv,
			 accel_device_info_t *infos, uint32_t cap,
			 uint32_t *count)
{
	accel_device_info_t *i = infos;

	*count = 1;
	if (!cap)
		return 0;
	i->kind = ACCEL_DEVICE_KIND_CPU;
	accel_strfmt(i->uri, sizeof(i->uri), "cpu://0");
	accel_strfmt(i->name, sizeof(i->name), "host CPU");
	accel_strfmt(i->vendor, sizeof(i->vendor), "unknown");
	cpuinfo_field("model name", i->name, sizeof(i->name));
	cpuinfo_field("vendor_id", i->vendor, sizeof(i->vendor));
	i->device_local_bytes = host_memory();
	i->host_visible_bytes = i->device_local_bytes;
	i->cpu_count = affinity_cpus();
	i->queue_family_count = 1;
	i->queue_families[0].flags = ACCEL_QUEUE_FAMILY_COMPUTE |
				     ACCEL_QUEUE_FAMILY_TRANSFER;
	i->queue_families[0].count = i->cpu_count;
	return 0;
}

const struct accel_driver accel_driver_cpu = {
	.name = "cpu",
	.uri_example = "cpu://",
	.device_open = cpu_device_open,
	.enumerate = cpu_enumerate,
};
