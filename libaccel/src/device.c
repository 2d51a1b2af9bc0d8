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
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "error.h"

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

static int open_with(const struct accel_driver *drv, const char *uri,
		     const char *device, accel_scheduler_t *s,
		     accel_device_t **out)
{
	const char *why = unavailable_reason(drv);
	accel_scheduler_t *own = NULL;
	int err;

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
}

void accel_device_fini(accel_device_t *d)
{
	accel_drain_disown(&d->drain);
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
