/* SPDX-License-Identifier: MIT */
/**
 * DOC: accel/executable.h - executables and their entry points
 *
 * An executable is a set of entry points (kernels) compiled for one
 * driver: for ``cpu``, a shared object in the format of
 * accel/cpu_executable.h. Each entry point has a name, the number of buffer
 * bindings and of 32-bit constants a dispatch must give it, and a
 * workgroup size. Dispatches name an entry point by its ordinal (see
 * accel_executable_lookup()).
 *
 * **Declared costs.** An entry point may declare what one of its
 * workgroups costs: the operations it performs and the bytes it reads and
 * writes in device memory (struct accel_export_cost). libaccel's cost model
 * (accel/cost.h) predicts a dispatch of W workgroups as
 * ``max(W * operations / operation rate, W * bytes / bandwidth)`` plus the
 * device's launch overhead. Each executable format carries the costs in its
 * own metadata: the cost table of a cpu executable (accel/cpu_executable.h),
 * the ``--entry NAME:B:C:OPS:BYTES`` fields of a vulkan bundle (vkpack.py).
 * Declare a cost only when it does not depend on the dispatch's constants
 * or data; otherwise leave it out and the model learns the command
 * buffer's time from its measured runs.
 *
 * Thread-safety: an executable is immutable after loading: thread-safe.
 */
#ifndef ACCEL_EXECUTABLE_H
#define ACCEL_EXECUTABLE_H

#include <stdint.h>

#include <accel/device.h>

#ifdef __cplusplus
extern "C" {
#endif

/** typedef accel_executable_t - a loaded executable (opaque, refcounted). */
typedef struct accel_executable accel_executable_t;

/** ACCEL_EXPORT_NAME_MAX - longest entry point name, NUL included. */
#define ACCEL_EXPORT_NAME_MAX 64

/**
 * struct accel_export_info - one entry point.
 * @name:           its name.
 * @binding_count:  buffer bindings a dispatch must pass.
 * @constant_count: 32-bit constants a dispatch must pass.
 * @workgroup_size: invocations per workgroup, per dimension.
 */
typedef struct accel_export_info {
	char name[ACCEL_EXPORT_NAME_MAX];
	uint32_t binding_count;
	uint32_t constant_count;
	uint32_t workgroup_size[3];
} accel_export_info_t;

/**
 * ACCEL_EXPORT_COST_MAX - the largest operations or bytes one workgroup
 * may declare (2^40): a larger figure is a dispatch's cost, not a
 * workgroup's, and would overflow the model's arithmetic.
 */
#define ACCEL_EXPORT_COST_MAX (UINT64_C(1) << 40)

/**
 * struct accel_export_cost - what one workgroup of an entry point costs.
 * @operations: arithmetic operations it performs (an FMA counts 2), at
 *              most ACCEL_EXPORT_COST_MAX.
 * @bytes:      bytes it reads plus bytes it writes in device memory, at
 *              most ACCEL_EXPORT_COST_MAX.
 *
 * Both zero means "not declared".
 */
typedef struct accel_export_cost {
	uint64_t operations;
	uint64_t bytes;
} accel_export_cost_t;

/**
 * accel_executable_load() - load the executable file at @path for @device.
 * @out: receives it (one reference); set to NULL first, NULL on failure.
 *       It holds a reference to @device.
 *
 * A @path without a slash names a file in the current folder, as for
 * open(2) (never a library looked up in the loader's search path).
 *
 * Return: 0, or -EINVAL (NULL argument), -ENOENT (no such file), the
 * errno of opening @path otherwise (-EACCES, -ELOOP, -ENAMETOOLONG,
 * -ENOTDIR: the message says what it means), -ENOEXEC (not an executable
 * of this driver's format: the message says what is wrong, e.g. a missing
 * table symbol or another ABI version, a shared object cut short, a
 * bundle above 256 MiB, or not a regular file: a FIFO or a device is
 * refused at once, never read or waited on), -ENOMEM.
 *
 * Thread-safety: thread-safe.
 */
int accel_executable_load(accel_device_t *device, const char *path,
			  accel_executable_t **out);

/** accel_executable_retain() - one more reference (NULL: no-op). */
void accel_executable_retain(accel_executable_t *executable);
/** accel_executable_release() - drop a reference (NULL: no-op). */
void accel_executable_release(accel_executable_t *executable);

/** accel_executable_export_count() - number of entry points (0 for NULL). */
uint32_t accel_executable_export_count(const accel_executable_t *executable);

/**
 * accel_executable_export_info() - describe entry point @ordinal.
 *
 * Return: 0, -EINVAL (NULL argument), -ERANGE (@ordinal not below the
 * export count).
 */
int accel_executable_export_info(const accel_executable_t *executable,
				 uint32_t ordinal, accel_export_info_t *info);

/**
 * accel_executable_export_cost() - the cost entry point @ordinal declares
 * per workgroup.
 *
 * Return: 0 with *@cost set, -EINVAL (NULL argument), -ERANGE (@ordinal
 * not below the export count), -ENODATA (the entry point declares no
 * cost; *@cost is zeroed).
 */
int accel_executable_export_cost(const accel_executable_t *executable,
				 uint32_t ordinal, accel_export_cost_t *cost);

/**
 * accel_executable_lookup() - the ordinal of the entry point named @name.
 *
 * Return: 0 with *@ordinal set, -EINVAL (NULL argument), -ENOENT (no entry
 * point has that name; the message lists them).
 */
int accel_executable_lookup(const accel_executable_t *executable,
			    const char *name, uint32_t *ordinal);

#ifdef __cplusplus
}
#endif

#endif /* ACCEL_EXECUTABLE_H */
