// SPDX-License-Identifier: MIT
/*
 * cuda and hip devices and their allocator (gpu.h has the model).
 *
 * URIs: "cuda://N" / "hip://N" open device N in the driver API's order
 * ("cuda://" alone is device 0), optionally followed by "?cache=0" (or
 * "?cache=1", the default): the executable cache, which cuda keeps for
 * PTX (gpu_executable.c) and hip has nothing to keep in. Anything else
 * after "://" is -EINVAL.
 * Opening initialises the driver API (cuInit / hipInit) and fails with
 * -ENODEV, saying why, when it cannot run: no device, N beyond the
 * devices, the CUDA toolkit's stub library in place of the driver's, a
 * driver too old for the library.
 *
 * A device uses its primary context (shared with the CUDA/HIP runtime of
 * the same process), one stream for the work of every submission and one
 * for the host functions that complete them.
 *
 * Buffers: HOST_VISIBLE (or HOST_COHERENT, or HOST_LOCAL: it lives in host
 * memory) buffers are pinned host memory
 * mapped into the device (cuMemHostAlloc with DEVICEMAP | PORTABLE), so
 * accel_buffer_map() needs no driver call; the others are device memory
 * (cuMemAlloc). Sizes are rounded up to 16 bytes, as the built-in kernels
 * may touch whole 16-byte words of a buffer's last bytes' range.
 *
 * Everything past gpu_device_check() needs a device: the cuda-* suites run
 * it on a GPU (Documentation/gpu.rst); the unit tests run the URI parsing
 * and the no-device paths everywhere (test-cuda.c, test-hip.c).
 */
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "src/error.h"
#include "src/exec_cache.h"
#include "gpu.h"

#define GPU_BUFFER_ALIGN 16u
#define GPU_MAX_ORDINAL 1024

int gpu_fail(struct gpu_device *dev, int result, const char *fn,
	     const char *what)
{
	int err = result == dev->be->error_out_of_memory ? ENOMEM : EIO;

	return accel_fail(err, "%s: %s on %s failed: %s (%d)", fn, what,
			  dev->base.uri, gpu_result_name(dev->be, dev->api, result),
			  result);
}

int gpu_enter(struct gpu_device *dev, const char *fn)
{
	int r = dev->api->ctx_push(dev->ctx);

	return r ? gpu_fail(dev, r, fn, "making the device's context current") : 0;
}

void gpu_leave(struct gpu_device *dev)
{
	void *ctx;

	dev->api->ctx_pop(&ctx);
}

/* ---- buffers -------------------------------------------------------------- */

struct gpu_buffer {
	accel_buffer_t base;
	uint64_t dptr;
	void *host;
};

static void gpu_buffer_destroy(accel_buffer_t *b)
{
	struct gpu_buffer *gb = (struct gpu_buffer *)b;
	struct gpu_device *dev = (struct gpu_device *)b->device;

	if (!gpu_enter(dev, "accel_buffer_release")) {
		if (gb->host)
			dev->api->host_free(gb->host);
		else
			dev->api->mem_free(gb->dptr);
		gpu_leave(dev);
	}
	accel_buffer_fini(b);
	free(gb);
}

static const struct accel_buffer_ops gpu_buffer_ops = {
	.destroy = gpu_buffer_destroy,
};

static int buffer_memory(struct gpu_device *dev, struct gpu_buffer *b,
			 bool host, uint64_t size)
{
	static const char fn[] = "accel_allocator_allocate_buffer";
	const struct gpu_api *api = dev->api;
	int r;

	if (!host) {
		r = api->mem_alloc(&b->dptr, size);
		return r ? gpu_fail(dev, r, fn, "allocating device memory") : 0;
	}
	r = api->host_alloc(&b->host, size,
			    GPU_HOST_ALLOC_PORTABLE | GPU_HOST_ALLOC_DEVICEMAP);
	if (r) {
		b->host = NULL;
		return gpu_fail(dev, r, fn, "allocating mapped host memory");
	}
	r = api->host_device_pointer(&b->dptr, b->host, 0);
	if (r) {
		api->host_free(b->host);
		b->host = NULL;
		return gpu_fail(dev, r, fn, "mapping host memory into the device");
	}
	return 0;
}

static int gpu_buffer_allocate(accel_device_t *d,
			       const accel_buffer_params_t *params,
			       uint64_t size, accel_buffer_t **out)
{
	struct gpu_device *dev = (struct gpu_device *)d;
	bool host = params->memory_type & (ACCEL_MEMORY_TYPE_HOST_VISIBLE |
					   ACCEL_MEMORY_TYPE_HOST_COHERENT |
					   ACCEL_MEMORY_TYPE_HOST_LOCAL);
	uint64_t rounded = (size + GPU_BUFFER_ALIGN - 1) & ~(uint64_t)(GPU_BUFFER_ALIGN - 1);
	struct gpu_buffer *b = calloc(1, sizeof(*b));
	int err;

	if (!b)
		return accel_fail(ENOMEM, "accel_allocator_allocate_buffer: out of memory");
	err = gpu_enter(dev, "accel_allocator_allocate_buffer");
	if (!err) {
		err = buffer_memory(dev, b, host, rounded ? rounded : GPU_BUFFER_ALIGN);
		gpu_leave(dev);
	}
	if (err) {
		free(b);
		return err;
	}
	accel_buffer_init(&b->base, &gpu_buffer_ops, d, params, size);
	b->base.address = b->dptr;
	b->base.host = b->host;
	*out = &b->base;
	return 0;
}

/* ---- the device ------------------------------------------------------------- */

static void event_pool_destroy(struct gpu_device *dev)
{
	for (uint32_t i = 0; i < dev->events.count; i++)
		dev->api->event_destroy(dev->events.free[i]);
	free(dev->events.free);
	pthread_mutex_destroy(&dev->events.lock);
}

static void gpu_device_destroy(accel_device_t *d)
{
	struct gpu_device *dev = (struct gpu_device *)d;
	const struct gpu_api *api = dev->api;

	gpu_completer_fini(dev); /* no flight is left: each held the device */
	if (dev->ctx && !gpu_enter(dev, "accel_device_release")) {
		if (dev->stream)
			api->stream_synchronize(dev->stream);
		if (dev->done_stream)
			api->stream_synchronize(dev->done_stream);
		gpu_builtins_unload(dev);
		if (dev->stream)
			api->stream_destroy(dev->stream);
		if (dev->done_stream)
			api->stream_destroy(dev->done_stream);
		event_pool_destroy(dev);
		gpu_leave(dev);
		api->primary_ctx_release(dev->device);
	} else {
		pthread_mutex_destroy(&dev->events.lock);
	}
	pthread_mutex_destroy(&dev->submit_lock);
	accel_device_fini(d);
	free(dev);
}

/* ---- enumeration and queries ---------------------------------------------- */

/*
 * What enumeration asks beyond the symbol table, looked up when needed so
 * that a library without them still runs: the total memory and, for CUDA,
 * the device attributes (HIP numbers its attributes differently from one
 * ROCm release to the next, so hip reports AMD's fixed limits instead).
 */
struct gpu_describe_api {
	int (*total_mem)(size_t *bytes, int device);
	int (*attribute)(int *value, int attribute, int device);
};

/* CUdevice_attribute values (stable since CUDA 2). */
#define CU_ATTR_MAX_THREADS_PER_BLOCK 1
#define CU_ATTR_MAX_BLOCK_DIM_X 2
#define CU_ATTR_MAX_GRID_DIM_X 5
#define CU_ATTR_INTEGRATED 18
#define CU_ATTR_ASYNC_ENGINE_COUNT 40

static void describe_api(const struct gpu_backend *be,
			 struct gpu_describe_api *d)
{
	bool cuda = strcmp(be->name, "cuda") == 0;
	void *h = be->loader->handle;

	memset(d, 0, sizeof(*d));
	if (!h)
		return;
	*(void **)&d->total_mem = dlsym(h, cuda ? "cuDeviceTotalMem_v2" : "hipDeviceTotalMem");
	if (cuda)
		*(void **)&d->attribute = dlsym(h, "cuDeviceGetAttribute");
}

static int attribute(const struct gpu_describe_api *d, int attr, int device,
		     int fallback)
{
	int v;

	if (d->attribute && d->attribute(&v, attr, device) == 0 && v > 0)
		return v;
	return fallback;
}

/* Describes device @device (number @ordinal) into @i and @l. */
static void gpu_describe(const struct gpu_backend *be, const struct gpu_api *api,
			 int device, int ordinal, accel_device_info_t *i,
			 struct gpu_limits *l)
{
	struct gpu_describe_api d;
	long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
	bool cuda = strcmp(be->name, "cuda") == 0;
	size_t total = 0;
	int engines;

	describe_api(be, &d);
	if (d.total_mem && d.total_mem(&total, device) != 0)
		total = 0;
	/* AMD's limits: 1024 invocations, grids of 2^31 - 1 workgroups */
	for (int k = 0; k < 3; k++) {
		l->workgroup_size[k] = (uint32_t)attribute(&d, CU_ATTR_MAX_BLOCK_DIM_X + k,
							   device, k < 2 ? 1024 : cuda ? 64 : 1024);
		l->workgroup_count[k] = (uint32_t)attribute(&d, CU_ATTR_MAX_GRID_DIM_X + k,
							    device, k ? 65535 : INT32_MAX);
		if (l->workgroup_count[k] > ACCEL_WORKGROUP_COUNT_MAX)
			l->workgroup_count[k] = ACCEL_WORKGROUP_COUNT_MAX;
	}
	l->workgroup_invocations = (uint32_t)attribute(&d, CU_ATTR_MAX_THREADS_PER_BLOCK,
						       device, 1024);
	l->device_local_bytes = total;
	/* HOST_VISIBLE buffers are pinned host memory (gpu.h) */
	l->host_visible_bytes = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
	if (!i)
		return;
	i->kind = attribute(&d, CU_ATTR_INTEGRATED, device, 0) ?
		  ACCEL_DEVICE_KIND_INTEGRATED_GPU :
		  cuda ? ACCEL_DEVICE_KIND_DISCRETE_GPU : ACCEL_DEVICE_KIND_OTHER;
	i->vendor_id = cuda ? 0x10de : 0x1002;
	accel_strfmt(i->vendor, sizeof(i->vendor), "%s", cuda ? "NVIDIA" : "AMD");
	accel_strfmt(i->uri, sizeof(i->uri), "%s://%d", be->name, ordinal);
	if (api->device_name(i->name, (int)sizeof(i->name), device) != 0)
		accel_strfmt(i->name, sizeof(i->name), "%s device %d", be->title, ordinal);
	i->name[sizeof(i->name) - 1] = 0;
	i->device_local_bytes = l->device_local_bytes;
	i->host_visible_bytes = l->host_visible_bytes;
	/* the stream every submission runs on, and the copy engines */
	i->queue_family_count = 1;
	i->queue_families[0].flags = ACCEL_QUEUE_FAMILY_COMPUTE | ACCEL_QUEUE_FAMILY_TRANSFER;
	i->queue_families[0].count = 1;
	engines = attribute(&d, CU_ATTR_ASYNC_ENGINE_COUNT, device, 0);
	if (engines) {
		i->queue_family_count = 2;
		i->queue_families[1].flags = ACCEL_QUEUE_FAMILY_TRANSFER;
		i->queue_families[1].count = (uint32_t)engines;
	}
}

/*
 * The process in which a driver last started (its init succeeded). Neither
 * CUDA nor HIP is fork-safe: in a child forked after its parent started
 * the driver, cuInit() answers CUDA_ERROR_NOT_INITIALIZED, and the error
 * then says so rather than asking for the driver to be installed.
 */
static _Atomic pid_t gpu_started_in;

static int gpu_init(const struct gpu_api *api)
{
	int r = api->init(0);

	if (!r)
		atomic_store(&gpu_started_in, getpid());
	return r;
}

/* What would fix a failed init. */
static const char *init_hint(const struct gpu_backend *be)
{
	pid_t p = atomic_load(&gpu_started_in);

	if (p && p != getpid())
		return "this process was forked from one that had started the GPU driver, and neither CUDA nor HIP can be used in such a child (they are not fork-safe); start the driver only after the fork, or exec() a new program";
	return be->install;
}

int gpu_enumerate(const struct gpu_backend *be, accel_device_info_t *infos,
		  uint32_t cap, uint32_t *count)
{
	static const char fn[] = "accel_driver_device_count";
	const struct gpu_api *api;
	const char *why;
	struct gpu_limits l;
	int n = 0, r, device;

	api = gpu_loader_get(be, &why);
	if (!api)
		return accel_fail(ENODEV, "%s: \"%s\": driver not available: %s",
				  fn, be->name, why);
	r = gpu_init(api);
	if (!r)
		r = api->device_count(&n);
	if (r == be->error_no_device || r == be->error_invalid_device) {
		*count = 0;
		return 0;
	}
	if (r)
		return accel_fail(ENODEV,
			"%s: \"%s\": the %s driver cannot start: %s (%d); %s",
			fn, be->name, be->title, gpu_result_name(be, api, r), r,
			init_hint(be));
	*count = n > 0 ? (uint32_t)n : 0;
	for (int k = 0; k < n && (uint32_t)k < cap; k++) {
		if (api->device_get(&device, k) != 0)
			device = k;
		gpu_describe(be, api, device, k, &infos[k], &l);
	}
	return 0;
}

static int gpu_query_i64(const accel_device_t *d, accel_device_query_t key,
			 int64_t *out)
{
	const struct gpu_limits *l = &((const struct gpu_device *)d)->limits;

	switch (key) {
	case ACCEL_DEVICE_QUERY_MAX_WORKGROUP_SIZE_X:
	case ACCEL_DEVICE_QUERY_MAX_WORKGROUP_SIZE_Y:
	case ACCEL_DEVICE_QUERY_MAX_WORKGROUP_SIZE_Z:
		*out = l->workgroup_size[key - ACCEL_DEVICE_QUERY_MAX_WORKGROUP_SIZE_X];
		return 0;
	case ACCEL_DEVICE_QUERY_MAX_WORKGROUP_INVOCATIONS:
		*out = l->workgroup_invocations;
		return 0;
	case ACCEL_DEVICE_QUERY_MAX_WORKGROUP_COUNT_X:
	case ACCEL_DEVICE_QUERY_MAX_WORKGROUP_COUNT_Y:
	case ACCEL_DEVICE_QUERY_MAX_WORKGROUP_COUNT_Z:
		*out = l->workgroup_count[key - ACCEL_DEVICE_QUERY_MAX_WORKGROUP_COUNT_X];
		return 0;
	case ACCEL_DEVICE_QUERY_MEMORY_DEVICE_LOCAL_BYTES:
		*out = (int64_t)l->device_local_bytes;
		return 0;
	case ACCEL_DEVICE_QUERY_MEMORY_HOST_VISIBLE_BYTES:
		*out = (int64_t)l->host_visible_bytes;
		return 0;
	default:
		return -ENOENT; /* timestamps: events time the work (0 here) */
	}
}

static const struct accel_device_ops gpu_device_ops = {
	.destroy = gpu_device_destroy,
	.buffer_allocate = gpu_buffer_allocate,
	.executable_load = gpu_executable_load,
	.execute = gpu_execute,
	.calibration_executable = gpu_calibration_executable,
	.command_buffer_end = gpu_command_buffer_end,
	.command_buffer_destroy = gpu_command_buffer_destroy,
	.query_i64 = gpu_query_i64,
};

static int bad_index(const struct gpu_backend *be, const char *device)
{
	return accel_fail(EINVAL,
		"accel_device_open: \"%s://%.64s\" is not a device index; write %s://0, %s://1, ... (optionally with the option ?cache=0)",
		be->name, device, be->name, be->name);
}

/* "" -> 0, "N" -> N, then "?cache=0|1"; else -EINVAL. */
static int parse_uri(const struct gpu_backend *be, const char *device,
		     long *ordinal, int *cache)
{
	const char *q = strchr(device, '?'), *opts, *value;
	char id[24], key[16], *end;
	size_t len = q ? (size_t)(q - device) : strlen(device), vlen;
	int err;

	*ordinal = 0;
	*cache = ACCEL_CACHE_OPTION_UNSET;
	if (len >= sizeof(id))
		return bad_index(be, device);
	memcpy(id, device, len);
	id[len] = 0;
	if (len) {
		errno = 0;
		*ordinal = strtol(id, &end, 10);
		if (id[0] < '0' || id[0] > '9' || errno || *end ||
		    *ordinal > GPU_MAX_ORDINAL)
			return bad_index(be, device);
	}
	if (!q)
		return 0;
	opts = q + 1;
	if (!*opts)
		return bad_index(be, device);
	while (accel_uri_next_option(&opts, key, sizeof(key), &value, &vlen)) {
		if (strcmp(key, "cache") != 0)
			return bad_index(be, device);
		err = accel_exec_cache_option(value, be->name, device, cache);
		if (err)
			return err;
	}
	return 0;
}

int gpu_device_check(const struct gpu_backend *be, const struct gpu_api *api,
		     long ordinal, const char *uri)
{
	const char *init = be->symbols[GPU_API_INDEX(init)];
	int count = 0, r = gpu_init(api);

	if (r == be->error_stub)
		return accel_fail(ENODEV,
			"accel_device_open: \"%s\": the %s library loaded is the CUDA toolkit's stub (%s returned %s), which only lets programs link; %s",
			uri, be->title, init, gpu_result_name(be, api, r), be->install);
	if (!r)
		r = api->device_count(&count);
	if (r == be->error_no_device || r == be->error_invalid_device ||
	    (!r && count == 0))
		return accel_fail(ENODEV,
			"accel_device_open: \"%s\": no %s device: the %s library loads, but finds no GPU (%s); %s",
			uri, be->title, be->title,
			r ? gpu_result_name(be, api, r) : "0 devices", be->no_device_hint);
	if (r)
		return accel_fail(ENODEV,
			"accel_device_open: \"%s\": the %s driver cannot start: %s returned %s (%d); %s",
			uri, be->title, init, gpu_result_name(be, api, r), r, init_hint(be));
	if (ordinal >= count)
		return accel_fail(ENODEV,
			"accel_device_open: \"%s\": there is no %s device %ld; this machine has %d (%s://0 to %s://%d)",
			uri, be->title, ordinal, count, be->name, be->name, count - 1);
	return 0;
}

/*
 * The executable cache, for a backend that JIT-compiles (cuda's PTX):
 * keyed by the device's name, compute capability and the driver's version
 * (Documentation/libaccel.rst). Without the JIT calls, none.
 */
static int create_cache(struct gpu_device *dev, int option)
{
	const struct gpu_jit_api *jit = gpu_loader_jit(dev->be);
	struct {
		int major, minor, driver;
		char name[sizeof(dev->name)];
	} id;

	if (!jit)
		return 0;
	memset(&id, 0, sizeof(id));
	if (jit->device_attribute(&id.major, GPU_ATTRIBUTE_CC_MAJOR, dev->device) ||
	    jit->device_attribute(&id.minor, GPU_ATTRIBUTE_CC_MINOR, dev->device) ||
	    jit->driver_version(&id.driver))
		return 0; /* no identity, no cache: loads JIT-compile as before */
	memcpy(id.name, dev->name, sizeof(id.name));
	dev->jit = jit;
	return accel_exec_cache_create(dev->be->name, &id, sizeof(id), option,
				       &dev->base.cache);
}

/* The context, the streams, the executable cache and the built-ins. */
static int create_objects(struct gpu_device *dev, long ordinal, int cache)
{
	static const char fn[] = "accel_device_open";
	const struct gpu_api *api = dev->api;
	int r, err;

	r = api->device_get(&dev->device, (int)ordinal);
	if (!r)
		r = api->device_name(dev->name, (int)sizeof(dev->name), dev->device);
	if (r)
		return gpu_fail(dev, r, fn, "querying the device");
	gpu_describe(dev->be, api, dev->device, (int)ordinal, NULL, &dev->limits);
	err = create_cache(dev, cache);
	if (err)
		return err;
	r = api->primary_ctx_retain(&dev->ctx, dev->device);
	if (r) {
		dev->ctx = NULL;
		return gpu_fail(dev, r, fn, "retaining the primary context");
	}
	err = gpu_enter(dev, fn);
	if (err)
		return err;
	r = api->stream_create(&dev->stream, GPU_STREAM_NON_BLOCKING);
	if (!r)
		r = api->stream_create(&dev->done_stream, GPU_STREAM_NON_BLOCKING);
	err = r ? gpu_fail(dev, r, fn, "creating a stream") : gpu_builtins_load(dev);
	gpu_leave(dev);
	return err;
}

int gpu_device_open(const struct gpu_backend *be,
		    const struct accel_driver *drv, const char *device,
		    accel_scheduler_t *s, accel_device_t **out)
{
	struct gpu_device *dev;
	const struct gpu_api *api;
	const char *why;
	char uri[32];
	long ordinal;
	int cache;
	int err = parse_uri(be, device, &ordinal, &cache);

	if (err)
		return err;
	snprintf(uri, sizeof(uri), "%s://%ld", be->name, ordinal);
	api = gpu_loader_get(be, &why);
	if (!api)
		return accel_fail(ENODEV, "accel_device_open: \"%s\": %s", uri, why);
	err = gpu_device_check(be, api, ordinal, uri);
	if (err)
		return err;
	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return accel_fail(ENOMEM, "accel_device_open: out of memory");
	dev->be = be;
	dev->api = api;
	pthread_mutex_init(&dev->submit_lock, NULL);
	pthread_mutex_init(&dev->events.lock, NULL);
	accel_device_init(&dev->base, &gpu_device_ops, drv, s, uri);
	dev->base.device_waits = true; /* gpu_flight.c: one stream, in order */
	/* kernels read their bindings as 32-bit words at least */
	dev->base.binding_alignment = 4;
	err = gpu_completer_init(dev);
	if (!err)
		err = create_objects(dev, ordinal, cache);
	if (err) {
		char msg[ACCEL_ERROR_MAX];

		accel_strfmt(msg, sizeof(msg), "%s", accel_error_message());
		gpu_device_destroy(&dev->base);
		return accel_fail(-err, "%s", msg);
	}
	*out = &dev->base;
	return 0;
}
