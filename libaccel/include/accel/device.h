/* SPDX-License-Identifier: MIT */
/**
 * DOC: accel/device.h - the driver registry and devices
 *
 * A *driver* is one backend (``cpu``, ``vulkan``, ``cuda``, ``hip``); a
 * *device* is one instance of a driver, named by a URI whose scheme is the
 * driver's name: ``cpu://`` (or ``cpu://0``), ``vulkan://0``, ``cuda://0``,
 * ``hip://0``.
 *
 * The registry lists every driver this libaccel knows, available or not,
 * with the reason when it is not (accel_driver_info()). ``cpu`` is always
 * available. ``vulkan``, ``cuda`` and ``hip`` link against nothing: they
 * load their library at run time (the Vulkan loader libvulkan.so.1, the
 * CUDA driver's libcuda.so.1, ROCm's libamdhip64.so), so a dynamically
 * linked program opens them where that library is installed. A driver is
 * not available, and opening it fails with ``-ENODEV`` and "driver not
 * available: " followed by what is missing and what to install, when:
 *
 * - its library does not load (not installed; a static program cannot
 *   load libvulkan.so.1);
 * - this libaccel was built without it: vulkan needs vulkan/vulkan.h and
 *   glslc at build time;
 * - this libaccel was built without its built-in kernels: cuda needs nvcc,
 *   hip needs hipcc at build time.
 *
 * An available driver whose library finds no such device, or no device of
 * that index, also fails with ``-ENODEV``, with a message saying which
 * devices there are.
 *
 * Every device submits its work through one scheduler (accel/scheduler.h):
 * the one given to accel_device_open(), or a default one it opens itself
 * (which honours ``ACCEL_SCHEDULER``).
 *
 * Thread-safety: the registry functions are thread-safe. An accel_device_t
 * is thread-safe: it is immutable after accel_device_open() apart from its
 * atomic reference count.
 */
#ifndef ACCEL_DEVICE_H
#define ACCEL_DEVICE_H

#include <stdbool.h>
#include <stdint.h>

#include <accel/scheduler.h>

#ifdef __cplusplus
extern "C" {
#endif

/** typedef accel_device_t - an open device (opaque, reference counted). */
typedef struct accel_device accel_device_t;
/** typedef accel_allocator_t - a device's buffer allocator (see accel/buffer.h). */
typedef struct accel_allocator accel_allocator_t;

/**
 * struct accel_driver_info - one entry of the driver registry.
 * @name:        the driver's name, also its URI scheme ("cpu").
 * @uri_example: a URI that opens its first device ("cpu://").
 * @available:   whether this libaccel can open its devices.
 * @reason:      why it is not available ("" when it is).
 *
 * The strings are static: valid for the life of the process.
 */
typedef struct accel_driver_info {
	const char *name;
	const char *uri_example;
	bool available;
	const char *reason;
} accel_driver_info_t;

/**
 * accel_driver_count() - how many drivers the registry lists.
 *
 * Return: the number of entries, available or not (at least 1, ``cpu``).
 *
 * Thread-safety: thread-safe.
 */
uint32_t accel_driver_count(void);

/**
 * accel_driver_info() - describe registry entry @index.
 * @index: 0 .. accel_driver_count() - 1.
 * @info:  filled on success; untouched on failure.
 *
 * Return: 0; -EINVAL if @info is NULL; -ERANGE if @index is not below
 * accel_driver_count().
 *
 * Thread-safety: thread-safe.
 */
int accel_driver_info(uint32_t index, accel_driver_info_t *info);

/**
 * accel_device_open() - open the device named by @uri.
 * @uri:       "<driver>://<device>", e.g. "cpu://". The cpu driver accepts
 *             an empty device part or "0", then optionally "?threads=N";
 *             vulkan, cuda and hip a device index ("cuda://1"; empty means
 *             0), and vulkan also a part of the device's name
 *             ("vulkan://llvmpipe", "vulkan://?name=...").
 * @scheduler: the scheduler its queues submit through and its semaphores
 *             live in; retained by the device. NULL opens a default one
 *             (accel_scheduler_open(NULL, ...)), owned by the device.
 * @out:       receives the device with one reference owned by the caller;
 *             set to NULL first and left NULL on failure.
 *
 * Return: 0, or a negative errno with a message:
 *
 * - -EINVAL: @uri or @out is NULL; @uri has no "://"; the device part is
 *   not one the driver knows.
 * - -ENOENT: no driver has that name (the message lists the known ones).
 * - -ENODEV: the driver is known but not available here ("driver not
 *   available", with the reason: see the DOC above); or it is available
 *   but finds no device, or none of that index (the message lists the
 *   devices there are), or a device it cannot use (the message names the
 *   missing feature).
 * - -ENOMEM; or any error of accel_scheduler_open() for a NULL @scheduler.
 *
 * Thread-safety: thread-safe.
 */
int accel_device_open(const char *uri, accel_scheduler_t *scheduler,
		      accel_device_t **out);

/**
 * accel_device_retain() - take one more reference to @device (NULL: no-op).
 * Thread-safety: thread-safe (atomic).
 */
void accel_device_retain(accel_device_t *device);

/**
 * accel_device_release() - drop one reference to @device (NULL: no-op).
 *
 * The last reference frees it. Buffers, executables, command buffers and
 * queues each hold a reference to their device, so it lives as long as any
 * of them does.
 *
 * Thread-safety: thread-safe (atomic).
 */
void accel_device_release(accel_device_t *device);

/**
 * accel_device_wait_idle() - wait until every submission made on any
 * queue of @device before the call has ended: accel_queue_wait_idle() over
 * all of them at once (IREE: iree_hal_device_wait_idle()).
 * @deadline_ns: absolute CLOCK_MONOTONIC ns; <= 0 polls;
 *               ACCEL_DEADLINE_INFINITE waits for good.
 *
 * Releasing a device (or its queues) does not wait: work in flight keeps
 * what it needs alive and ends on its own, and process exit waits for the
 * work already running (Documentation/libaccel.rst, "Drains"). A program
 * that wants its last results before it returns from main() waits on
 * their semaphores, or calls this.
 *
 * Return: 0 when idle; -ETIME when the deadline passed first (nothing
 * changes); -EINVAL: @device is NULL.
 * Thread-safety: thread-safe.
 */
int accel_device_wait_idle(accel_device_t *device, int64_t deadline_ns);

/**
 * accel_device_uri() - the URI @device was opened with, normalised
 * ("cpu://0").
 *
 * Return: a string owned by @device; "" for NULL (message set).
 * Thread-safety: thread-safe.
 */
const char *accel_device_uri(const accel_device_t *device);

/**
 * accel_device_scheduler() - the scheduler @device submits through.
 *
 * Return: a borrowed pointer, valid while @device is (retain it to keep it
 * longer); NULL for a NULL @device (message set).
 * Thread-safety: thread-safe.
 */
accel_scheduler_t *accel_device_scheduler(const accel_device_t *device);

/**
 * accel_device_allocator() - the buffer allocator of @device.
 *
 * Return: a borrowed pointer, valid while @device is; NULL for a NULL
 * @device (message set).
 * Thread-safety: thread-safe.
 */
accel_allocator_t *accel_device_allocator(accel_device_t *device);

#ifdef __cplusplus
}
#endif

#endif /* ACCEL_DEVICE_H */
