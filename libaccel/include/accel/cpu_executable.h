/* SPDX-License-Identifier: MIT */
/**
 * DOC: accel/cpu_executable.h - the executable format of the cpu driver
 *
 * A cpu executable is a shared object (built with ``-shared -fPIC``) that
 * exports one symbol, ACCEL_CPU_EXECUTABLE_SYMBOL, a
 * ``const struct accel_cpu_executable`` listing its entry points. The
 * driver loads it with dlopen(RTLD_NOW | RTLD_LOCAL) and checks:
 *
 * - the symbol exists (else -ENOEXEC);
 * - @abi_version is 1 or ACCEL_CPU_EXECUTABLE_ABI_VERSION (else -ENOEXEC);
 * - every entry has a non-empty unique name shorter than
 *   ACCEL_EXPORT_NAME_MAX, a function, and workgroup sizes >= 1;
 * - version 2 only: @costs, when not NULL, holds @entry_count costs, each
 *   field at most ACCEL_EXPORT_COST_MAX (else -ERANGE, naming the entry).
 *
 * Version 2 added @costs, the cost each entry declares per workgroup
 * (accel/executable.h, "Declared costs"); a table of version 1 is read as
 * declaring none.
 *
 * A dispatch of W = (x, y, z) workgroups calls the entry's function once
 * per workgroup id in [0, x) x [0, y) x [0, z), in no promised order and
 * from several threads at once (the device's worker pool, which claims
 * chunks of consecutive workgroup ids); the function must write only what
 * its workgroup owns. Dispatches recorded between two barriers may run
 * concurrently with each other, too.
 *
 * A program may also link its kernels in and hand the table to
 * accel_cpu_executable_create(), which checks it the same way (this is
 * what a statically linked program does: dlopen() is not available to it).
 *
 * Example::
 *
 *   static void fill(const struct accel_cpu_dispatch *d) { ... }
 *   static const struct accel_cpu_entry entries[] = {
 *       { "fill", 1, 1, { 64, 1, 1 }, fill },
 *   };
 *   const struct accel_cpu_executable accel_cpu_executable_v1 = {
 *       ACCEL_CPU_EXECUTABLE_ABI_VERSION, 1, entries,
 *   };
 */
#ifndef ACCEL_CPU_EXECUTABLE_H
#define ACCEL_CPU_EXECUTABLE_H

#include <stdint.h>

#include <accel/executable.h>

#ifdef __cplusplus
extern "C" {
#endif

/** ACCEL_CPU_EXECUTABLE_ABI_VERSION - the version this header describes. */
#define ACCEL_CPU_EXECUTABLE_ABI_VERSION 2
/**
 * ACCEL_CPU_EXECUTABLE_SYMBOL - the name of the table symbol (the same for
 * every ABI version: @abi_version tells them apart).
 */
#define ACCEL_CPU_EXECUTABLE_SYMBOL "accel_cpu_executable_v1"

/**
 * struct accel_cpu_dispatch - what one workgroup's call receives.
 * @workgroup_id:    this workgroup.
 * @workgroup_count: the dispatch's workgroup count.
 * @workgroup_size:  the entry's workgroup size.
 * @constant_count:  number of @constants.
 * @binding_count:   number of @bindings.
 * @constants:       the dispatch's 32-bit constants.
 * @bindings:        base pointer of each binding (buffer + ref offset).
 * @binding_lengths: length in bytes of each binding.
 */
struct accel_cpu_dispatch {
	uint32_t workgroup_id[3];
	uint32_t workgroup_count[3];
	uint32_t workgroup_size[3];
	uint32_t constant_count;
	uint32_t binding_count;
	const uint32_t *constants;
	void *const *bindings;
	const uint64_t *binding_lengths;
};

/** typedef accel_cpu_entry_fn - an entry point's function. */
typedef void (*accel_cpu_entry_fn)(const struct accel_cpu_dispatch *dispatch);

/**
 * struct accel_cpu_entry - one entry point.
 * @name:           its name.
 * @binding_count:  bindings a dispatch must pass.
 * @constant_count: 32-bit constants a dispatch must pass.
 * @workgroup_size: invocations per workgroup (each >= 1).
 * @fn:             the function.
 */
struct accel_cpu_entry {
	const char *name;
	uint32_t binding_count;
	uint32_t constant_count;
	uint32_t workgroup_size[3];
	accel_cpu_entry_fn fn;
};

/**
 * struct accel_cpu_executable - the table behind ACCEL_CPU_EXECUTABLE_SYMBOL.
 * @abi_version: ACCEL_CPU_EXECUTABLE_ABI_VERSION.
 * @entry_count: number of @entries.
 * @entries:     the entry points; ordinals are indexes into this array.
 * @costs:       version 2: NULL, or @entry_count costs, one per entry (in
 *               the order of @entries; an entry whose cost is all zero
 *               declares none). Not read in a version 1 table.
 */
struct accel_cpu_executable {
	uint32_t abi_version;
	uint32_t entry_count;
	const struct accel_cpu_entry *entries;
	const accel_export_cost_t *costs;
};

/**
 * accel_cpu_executable_create() - an executable from a table linked into
 * the program, rather than loaded from a shared object.
 * @device: a cpu device.
 * @table:  the table; it and everything it points to must outlive the
 *          executable (in practice: static data of the program).
 * @out:    receives it (one reference); NULL first and on failure.
 *
 * Return: 0, -EINVAL (NULL argument), -ENODEV (@device is not a cpu
 * device), -ENOEXEC (the table is malformed: another ABI version, an entry
 * without a name or function, ...; the message says which), -ERANGE (a
 * declared cost above ACCEL_EXPORT_COST_MAX), -ENOMEM.
 *
 * Thread-safety: thread-safe.
 */
int accel_cpu_executable_create(accel_device_t *device,
				const struct accel_cpu_executable *table,
				accel_executable_t **out);

#ifdef __cplusplus
}
#endif

#endif /* ACCEL_CPU_EXECUTABLE_H */
