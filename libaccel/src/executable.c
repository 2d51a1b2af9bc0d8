// SPDX-License-Identifier: MIT
/*
 * Executables: loading goes to the device's driver, which fills the export
 * table; the queries work on that table.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "error.h"

void accel_executable_init(accel_executable_t *e,
			   const struct accel_executable_ops *ops,
			   accel_device_t *d)
{
	accel_ref_init(&e->ref);
	e->ops = ops;
	accel_device_retain(d);
	e->device = d;
}

void accel_executable_fini(accel_executable_t *e)
{
	free(e->exports);
	accel_device_release(e->device);
}

int accel_executable_read(const char *path, uint8_t **data, size_t *size)
{
	FILE *f = fopen(path, "rb");
	long len;
	int err;

	if (!f) {
		err = errno;
		return accel_fail(err, "accel_executable_load: %s: %s", path,
				  err == ENOENT ? "no such file" : accel_errno_name(err));
	}
	if (fseek(f, 0, SEEK_END) || (len = ftell(f)) < 0 ||
	    (uint64_t)len > ACCEL_EXECUTABLE_MAX_FILE || fseek(f, 0, SEEK_SET)) {
		fclose(f);
		return accel_fail(ENOEXEC, "accel_executable_load: %s: not a regular file of at most %" PRIu64 " bytes",
				  path, ACCEL_EXECUTABLE_MAX_FILE);
	}
	*data = malloc(len ? (size_t)len : 1);
	if (!*data) {
		fclose(f);
		return accel_fail(ENOMEM, "accel_executable_load: out of memory reading %s", path);
	}
	*size = fread(*data, 1, (size_t)len, f);
	fclose(f);
	return 0;
}

ACCEL_EXPORT int accel_executable_load(accel_device_t *device, const char *path,
				       accel_executable_t **out)
{
	if (!out)
		return accel_fail(EINVAL, "accel_executable_load: out is NULL");
	*out = NULL;
	if (!device || !path)
		return accel_fail(EINVAL, "accel_executable_load: %s is NULL",
				  device ? "path" : "device");
	return device->ops->executable_load(device, path, out);
}

ACCEL_EXPORT void accel_executable_retain(accel_executable_t *executable)
{
	if (executable)
		accel_ref_get(&executable->ref);
}

ACCEL_EXPORT void accel_executable_release(accel_executable_t *executable)
{
	if (executable && accel_ref_put(&executable->ref))
		executable->ops->destroy(executable);
}

ACCEL_EXPORT uint32_t accel_executable_export_count(const accel_executable_t *executable)
{
	return executable ? executable->export_count : 0;
}

ACCEL_EXPORT int accel_executable_export_info(const accel_executable_t *executable,
					      uint32_t ordinal,
					      accel_export_info_t *info)
{
	if (!executable || !info)
		return accel_fail(EINVAL, "accel_executable_export_info: %s is NULL",
				  executable ? "info" : "executable");
	if (ordinal >= executable->export_count)
		return accel_fail(ERANGE,
			"accel_executable_export_info: ordinal %u is not below the export count %u",
			ordinal, executable->export_count);
	*info = executable->exports[ordinal].info;
	return 0;
}

int accel_export_cost_check(const accel_export_cost_t *cost, const char *fn,
			    const char *what, const char *name)
{
	const char *field = cost->operations > ACCEL_EXPORT_COST_MAX ? "operations" :
			    cost->bytes > ACCEL_EXPORT_COST_MAX ? "bytes" : NULL;

	if (!field)
		return 0;
	return accel_fail(ERANGE,
		"%s: %s: entry '%s' declares %" PRIu64 " %s per workgroup, above ACCEL_EXPORT_COST_MAX (2^40); declare what one workgroup costs, not a whole dispatch, or declare nothing and let the model learn it",
		fn, what, name,
		field[0] == 'o' ? cost->operations : cost->bytes, field);
}

ACCEL_EXPORT int accel_executable_export_cost(const accel_executable_t *executable,
					      uint32_t ordinal,
					      accel_export_cost_t *cost)
{
	if (!executable || !cost)
		return accel_fail(EINVAL, "accel_executable_export_cost: %s is NULL",
				  executable ? "cost" : "executable");
	if (ordinal >= executable->export_count)
		return accel_fail(ERANGE,
			"accel_executable_export_cost: ordinal %u is not below the export count %u",
			ordinal, executable->export_count);
	*cost = executable->exports[ordinal].cost;
	if (!cost->operations && !cost->bytes)
		return accel_fail(ENODATA,
			"accel_executable_export_cost: entry '%s' declares no cost (its command buffers' times are learned from their runs)",
			executable->exports[ordinal].info.name);
	return 0;
}

ACCEL_EXPORT int accel_executable_lookup(const accel_executable_t *executable,
					 const char *name, uint32_t *ordinal)
{
	char names[512] = "";
	size_t used = 0;

	if (!executable || !name || !ordinal)
		return accel_fail(EINVAL, "accel_executable_lookup: %s is NULL",
				  !executable ? "executable" : !name ? "name" : "ordinal");
	for (uint32_t i = 0; i < executable->export_count; i++) {
		const char *n = executable->exports[i].info.name;

		if (strcmp(n, name) == 0) {
			*ordinal = i;
			return 0;
		}
		if (used < sizeof(names))
			used += (size_t)snprintf(names + used, sizeof(names) - used,
						 "%s'%s'", i ? ", " : "", n);
	}
	return accel_fail(ENOENT,
		"accel_executable_lookup: no entry point named '%.64s'; the executable has %s",
		name, executable->export_count ? names : "none");
}
