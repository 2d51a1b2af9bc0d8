// SPDX-License-Identifier: MIT
/*
 * The driver registry and devices.
 *
 * The registry is a static table: every driver this libaccel knows, with
 * the reason when it is not available, so that "vulkan://0" fails saying
 * "driver not available" rather than "unknown URI". A driver is not
 * available when it was not built in (device_open is NULL, @unavailable
 * says why) or when its probe says its vendor library cannot be loaded
 * here (vulkan without libvulkan.so.1, cuda without libcuda.so.1).
 */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "error.h"
#include "exec_cache.h"

static const struct accel_driver *const registry[] = {
	&accel_driver_cpu,
	&accel_driver_vulkan,
	&accel_driver_cuda,
	&accel_driver_hip,
};

/* NULL when @drv can open devices here, else why not. */
static const char *unavailable_reason(const struct accel_driver *drv)
{
	if (!drv->device_open)
		return drv->unavailable;
	return drv->probe ? drv->probe(drv) : NULL;
}

ACCEL_EXPORT uint32_t accel_driver_count(void)
{
	return (uint32_t)ACCEL_ARRAY_SIZE(registry);
}

ACCEL_EXPORT int accel_driver_info(uint32_t index, accel_driver_info_t *info)
{
	const struct accel_driver *drv;

	if (!info)
		return accel_fail(EINVAL, "accel_driver_info: info is NULL");
	if (index >= ACCEL_ARRAY_SIZE(registry))
		return accel_fail(ERANGE,
			"accel_driver_info: index %u is not below accel_driver_count() (%zu)",
			index, ACCEL_ARRAY_SIZE(registry));
	drv = registry[index];
	info->name = drv->name;
	info->uri_example = drv->uri_example;
	info->reason = unavailable_reason(drv);
	info->available = info->reason == NULL;
	if (!info->reason)
		info->reason = "";
	return 0;
}

static const struct accel_driver *find_driver(const char *name, size_t len)
{
	for (size_t i = 0; i < ACCEL_ARRAY_SIZE(registry); i++)
		if (strlen(registry[i]->name) == len &&
		    memcmp(registry[i]->name, name, len) == 0)
			return registry[i];
	return NULL;
}

/*
 * ACCEL_DEVICE_WAITS: "0" orders every dependency on the host (for
 * comparison and diagnosis), "1" or unset lets a driver that can order
 * them on the device do so. 1, 0, or -1 with the message set.
 */
static int device_waits_wanted(void)
{
	const char *env = getenv("ACCEL_DEVICE_WAITS");

	if (!env || !*env || !strcmp(env, "1"))
		return 1;
	if (!strcmp(env, "0"))
		return 0;
	accel_fail(EINVAL,
		"accel_device_open: ACCEL_DEVICE_WAITS is \"%.32s\"; it must be 0 (dependencies waited for on the host) or 1 (on the device where the driver can; the default)",
		env);
	return -1;
}

static int open_with(const struct accel_driver *drv, const char *uri,
		     const char *device, accel_scheduler_t *s,
		     accel_device_t **out)
{
	const char *why = unavailable_reason(drv);
	accel_scheduler_t *own = NULL;
	int waits = device_waits_wanted();
	int err;

	if (waits < 0)
		return -EINVAL;
	if (why)
		return accel_fail(ENODEV,
			"accel_device_open: \"%.64s\": driver not available: %s",
			uri, why);
	if (!s) {
		err = accel_scheduler_open(NULL, &own);
		if (err)
			return err;
		s = own;
	}
	err = drv->device_open(drv, device, s, out);
	accel_scheduler_release(own); /* the device holds its own reference */
	if (!err && !waits)
		(*out)->device_waits = false;
	return err;
}

ACCEL_EXPORT int accel_device_open(const char *uri, accel_scheduler_t *scheduler,
				   accel_device_t **out)
{
	const struct accel_driver *drv;
	const char *sep;

	if (!out)
		return accel_fail(EINVAL, "accel_device_open: out is NULL");
	*out = NULL;
	if (!uri)
		return accel_fail(EINVAL,
			"accel_device_open: uri is NULL; pass a device URI such as \"cpu://\"");
	sep = strstr(uri, "://");
	if (!sep)
		return accel_fail(EINVAL,
			"accel_device_open: \"%.64s\" is not a device URI; write <driver>://<device>, such as \"cpu://\"",
			uri);
	drv = find_driver(uri, (size_t)(sep - uri));
	if (!drv)
		return accel_fail(ENOENT,
			"accel_device_open: \"%.64s\": no driver named \"%.*s\"; the drivers are cpu, vulkan, cuda and hip",
			uri, (int)(sep - uri > 32 ? 32 : sep - uri), uri);
	return open_with(drv, uri, sep + 3, scheduler, out);
}

void accel_device_init(accel_device_t *d, const struct accel_device_ops *ops,
		       const struct accel_driver *drv, accel_scheduler_t *s,
		       const char *uri)
{
	accel_ref_init(&d->ref);
	d->ops = ops;
	d->driver = drv;
	accel_scheduler_retain(s);
	d->scheduler = s;
	d->allocator.device = d;
	accel_strfmt(d->uri, sizeof(d->uri), "%s", uri);
	d->binding_alignment = 1;
	pthread_mutex_init(&d->cost_lock, NULL);
	pthread_mutex_init(&d->calib_lock, NULL);
}

void accel_device_fini(accel_device_t *d)
{
	accel_drain_disown(&d->drain);
	accel_exec_cache_destroy(d->cache);
	pthread_mutex_destroy(&d->cost_lock);
	pthread_mutex_destroy(&d->calib_lock);
	accel_scheduler_release(d->scheduler);
}

ACCEL_EXPORT void accel_device_retain(accel_device_t *device)
{
	if (device)
		accel_ref_get(&device->ref);
}

ACCEL_EXPORT void accel_device_release(accel_device_t *device)
{
	if (device && accel_ref_put(&device->ref)) {
		accel_transient_pool_destroy(device);
		device->ops->destroy(device);
	}
}

ACCEL_EXPORT const char *accel_device_uri(const accel_device_t *device)
{
	if (!device) {
		accel_fail(EINVAL, "accel_device_uri: device is NULL");
		return "";
	}
	return device->uri;
}

ACCEL_EXPORT accel_scheduler_t *accel_device_scheduler(const accel_device_t *device)
{
	if (!device) {
		accel_fail(EINVAL, "accel_device_scheduler: device is NULL");
		return NULL;
	}
	return device->scheduler;
}

ACCEL_EXPORT accel_allocator_t *accel_device_allocator(accel_device_t *device)
{
	if (!device) {
		accel_fail(EINVAL, "accel_device_allocator: device is NULL");
		return NULL;
	}
	return &device->allocator;
}

/* ---- enumeration and queries -------------------------------------------- */

_Static_assert(sizeof(accel_device_info_t) == ACCEL_DEVICE_INFO_SIZE_0_2,
	       "accel_device_info_t grows only at its end, with a new size");

/* The available driver named @name; NULL with the message set. */
static const struct accel_driver *enum_driver(const char *fn, const char *name,
					      int *err)
{
	const struct accel_driver *drv;
	const char *why;

	if (!name) {
		*err = accel_fail(EINVAL, "%s: driver is NULL; pass a driver's name such as \"cpu\"", fn);
		return NULL;
	}
	drv = find_driver(name, strlen(name));
	if (!drv) {
		*err = accel_fail(ENOENT,
			"%s: no driver named \"%.32s\"; the drivers are cpu, vulkan, cuda and hip",
			fn, name);
		return NULL;
	}
	why = unavailable_reason(drv);
	if (why || !drv->enumerate) {
		*err = accel_fail(ENODEV, "%s: \"%s\": driver not available: %s",
				  fn, drv->name, why ? why : "it cannot list its devices");
		return NULL;
	}
	return drv;
}

ACCEL_EXPORT int accel_driver_device_count(const char *driver, uint32_t *count)
{
	static const char fn[] = "accel_driver_device_count";
	const struct accel_driver *drv;
	uint32_t n = 0;
	int err;

	if (!count)
		return accel_fail(EINVAL, "%s: count is NULL", fn);
	drv = enum_driver(fn, driver, &err);
	if (!drv)
		return err;
	err = drv->enumerate(drv, NULL, 0, &n);
	if (err)
		return err;
	*count = n;
	return 0;
}

ACCEL_EXPORT int accel_driver_device_info(const char *driver, uint32_t index,
					  accel_device_info_t *info)
{
	static const char fn[] = "accel_driver_device_info";
	const struct accel_driver *drv;
	accel_device_info_t *all = NULL;
	uint32_t n = 0, cap = 0;
	size_t size;
	int err;

	if (!info)
		return accel_fail(EINVAL, "%s: info is NULL", fn);
	if (info->size < ACCEL_DEVICE_INFO_SIZE_0_2)
		return accel_fail(EINVAL,
			"%s: info->size is %" PRIu32 "; set it to sizeof(accel_device_info_t) (at least %u) before the call",
			fn, info->size, ACCEL_DEVICE_INFO_SIZE_0_2);
	/* No struct of this ABI grows that far: not a size, but garbage. */
	if (info->size > ACCEL_OPTIONS_SIZE_MAX)
		return accel_fail(E2BIG,
			"%s: info->size is %" PRIu32 ", above ACCEL_OPTIONS_SIZE_MAX (%u); set it to sizeof(accel_device_info_t)",
			fn, info->size, ACCEL_OPTIONS_SIZE_MAX);
	drv = enum_driver(fn, driver, &err);
	if (!drv)
		return err;
	/* Ask for everything up to @index: the driver lists in one go. */
	for (;;) {
		err = drv->enumerate(drv, all, cap, &n);
		if (err || n <= cap || index >= n)
			break;
		cap = n;
		free(all);
		all = calloc(cap, sizeof(*all));
		if (!all) {
			err = accel_fail(ENOMEM, "%s: out of memory", fn);
			break;
		}
		for (uint32_t i = 0; i < cap; i++)
			all[i].size = (uint32_t)sizeof(*all);
	}
	if (!err && index >= n)
		err = accel_fail(ERANGE,
			"%s: \"%s\" lists %" PRIu32 " device%s; index %" PRIu32 " is not below that",
			fn, drv->name, n, n == 1 ? "" : "s", index);
	if (!err) {
		/* Fill what the caller knows; zero what it knows and we don't. */
		size = info->size < sizeof(*all) ? info->size : sizeof(*all);
		memcpy((char *)info + sizeof(info->size),
		       (char *)&all[index] + sizeof(info->size),
		       size - sizeof(info->size));
		if (info->size > sizeof(*all))
			memset((char *)info + sizeof(*all), 0,
			       info->size - sizeof(*all));
	}
	free(all);
	return err;
}

static const char *const query_names[ACCEL_DEVICE_QUERY_COUNT] = {
	[ACCEL_DEVICE_QUERY_MAX_WORKGROUP_SIZE_X] = "max_workgroup_size_x",
	[ACCEL_DEVICE_QUERY_MAX_WORKGROUP_SIZE_Y] = "max_workgroup_size_y",
	[ACCEL_DEVICE_QUERY_MAX_WORKGROUP_SIZE_Z] = "max_workgroup_size_z",
	[ACCEL_DEVICE_QUERY_MAX_WORKGROUP_INVOCATIONS] = "max_workgroup_invocations",
	[ACCEL_DEVICE_QUERY_MAX_WORKGROUP_COUNT_X] = "max_workgroup_count_x",
	[ACCEL_DEVICE_QUERY_MAX_WORKGROUP_COUNT_Y] = "max_workgroup_count_y",
	[ACCEL_DEVICE_QUERY_MAX_WORKGROUP_COUNT_Z] = "max_workgroup_count_z",
	[ACCEL_DEVICE_QUERY_MAX_BINDINGS] = "max_bindings",
	[ACCEL_DEVICE_QUERY_MAX_CONSTANT_BYTES] = "max_constant_bytes",
	[ACCEL_DEVICE_QUERY_MIN_BINDING_ALIGNMENT] = "min_binding_alignment",
	[ACCEL_DEVICE_QUERY_TIMESTAMPS] = "timestamps",
	[ACCEL_DEVICE_QUERY_TIMESTAMP_PERIOD_PS] = "timestamp_period_ps",
	[ACCEL_DEVICE_QUERY_DISPATCH_INDIRECT] = "dispatch_indirect",
	[ACCEL_DEVICE_QUERY_EXTERNAL_SEMAPHORE_FD] = "external_semaphore_fd",
	[ACCEL_DEVICE_QUERY_EXTERNAL_SEMAPHORE_SYNC_FILE] = "external_semaphore_sync_file",
	[ACCEL_DEVICE_QUERY_TRANSIENT_POOL] = "transient_pool",
	[ACCEL_DEVICE_QUERY_MEMORY_DEVICE_LOCAL_BYTES] = "memory_device_local_bytes",
	[ACCEL_DEVICE_QUERY_MEMORY_HOST_VISIBLE_BYTES] = "memory_host_visible_bytes",
};

ACCEL_EXPORT const char *accel_device_query_name(accel_device_query_t key)
{
	if ((unsigned int)key >= ACCEL_DEVICE_QUERY_COUNT)
		return NULL;
	return query_names[key];
}

ACCEL_EXPORT const char *accel_device_kind_name(uint32_t kind)
{
	switch (kind) {
	case ACCEL_DEVICE_KIND_CPU:
		return "cpu";
	case ACCEL_DEVICE_KIND_INTEGRATED_GPU:
		return "integrated-gpu";
	case ACCEL_DEVICE_KIND_DISCRETE_GPU:
		return "discrete-gpu";
	case ACCEL_DEVICE_KIND_VIRTUAL_GPU:
		return "virtual-gpu";
	default:
		return "other";
	}
}

/* What the core answers for every device; the driver overrides it. */
static int64_t query_default(const accel_device_t *d, accel_device_query_t key)
{
	accel_scheduler_info_t si = { 0 };

	switch (key) {
	case ACCEL_DEVICE_QUERY_MAX_WORKGROUP_SIZE_X:
	case ACCEL_DEVICE_QUERY_MAX_WORKGROUP_SIZE_Y:
	case ACCEL_DEVICE_QUERY_MAX_WORKGROUP_SIZE_Z:
	case ACCEL_DEVICE_QUERY_MAX_WORKGROUP_INVOCATIONS:
		return UINT32_MAX; /* the ABI's uint32_t workgroup_size */
	case ACCEL_DEVICE_QUERY_MAX_WORKGROUP_COUNT_X:
	case ACCEL_DEVICE_QUERY_MAX_WORKGROUP_COUNT_Y:
	case ACCEL_DEVICE_QUERY_MAX_WORKGROUP_COUNT_Z:
		return ACCEL_WORKGROUP_COUNT_MAX;
	case ACCEL_DEVICE_QUERY_MAX_BINDINGS:
		return ACCEL_DISPATCH_MAX_BINDINGS;
	case ACCEL_DEVICE_QUERY_MAX_CONSTANT_BYTES:
		return ACCEL_DISPATCH_MAX_CONSTANTS * (int64_t)sizeof(uint32_t);
	case ACCEL_DEVICE_QUERY_MIN_BINDING_ALIGNMENT:
		return d->binding_alignment;
	case ACCEL_DEVICE_QUERY_DISPATCH_INDIRECT:
		return 1;
	case ACCEL_DEVICE_QUERY_EXTERNAL_SEMAPHORE_FD:
	case ACCEL_DEVICE_QUERY_EXTERNAL_SEMAPHORE_SYNC_FILE:
		accel_scheduler_query(d->scheduler, &si);
		return si.kind == ACCEL_SCHEDULER_KERNEL;
	case ACCEL_DEVICE_QUERY_TRANSIENT_POOL:
		return 1; /* every device: transient.c, on the device's allocator */
	case ACCEL_DEVICE_QUERY_TIMESTAMPS:
	case ACCEL_DEVICE_QUERY_TIMESTAMP_PERIOD_PS:
	case ACCEL_DEVICE_QUERY_MEMORY_DEVICE_LOCAL_BYTES:
	case ACCEL_DEVICE_QUERY_MEMORY_HOST_VISIBLE_BYTES:
	case ACCEL_DEVICE_QUERY_COUNT:
		break;
	}
	return 0;
}

ACCEL_EXPORT int accel_device_query_i64(const accel_device_t *device,
					accel_device_query_t key, int64_t *out)
{
	static const char fn[] = "accel_device_query_i64";
	int64_t v;

	if (!device)
		return accel_fail(EINVAL, "%s: device is NULL", fn);
	if (!out)
		return accel_fail(EINVAL, "%s: out is NULL", fn);
	if ((unsigned int)key >= ACCEL_DEVICE_QUERY_COUNT)
		return accel_fail(ENOENT,
			"%s: key %u is not a query key; the keys are 0 (ACCEL_DEVICE_QUERY_MAX_WORKGROUP_SIZE_X) to %u (see accel/device.h)",
			fn, (unsigned int)key, ACCEL_DEVICE_QUERY_COUNT - 1);
	v = query_default(device, key);
	if (key != ACCEL_DEVICE_QUERY_MIN_BINDING_ALIGNMENT &&
	    device->ops->query_i64) {
		int64_t mine;

		if (device->ops->query_i64(device, key, &mine) == 0)
			v = mine;
	}
	*out = v;
	return 0;
}
