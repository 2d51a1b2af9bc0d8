// SPDX-License-Identifier: MIT
/*
 * Executables: loading goes to the device's driver, which fills the export
 * table; the queries work on that table.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* Reads the whole of @fd (a regular file of @size bytes) into *@out. */
int accel_read_all(int fd, size_t size, uint8_t **out)
{
	uint8_t *data = malloc(size ? size : 1);
	size_t done = 0;

	if (!data)
		return ENOMEM;
	while (done < size) {
		ssize_t n = read(fd, data + done, size - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int err = n < 0 ? errno : EIO; /* shrank under us */

			free(data);
			return err;
		}
		done += (size_t)n;
	}
	*out = data;
	return 0;
}

const char *accel_path_error(int err)
{
	switch (err) {
	case ENOENT:
		return "no such file";
	case ENOTDIR:
		return "a component of the path is not a folder";
	case EACCES:
		return "permission denied (check the file's and its folders' permissions)";
	case ELOOP:
		return "too many symbolic links (a loop of them?)";
	case ENAMETOOLONG:
		return "the path, or one name in it, is too long";
	default:
		return accel_errno_name(err);
	}
}

int accel_executable_read(const char *path, uint8_t **data, size_t *size)
{
	/* Not blocking: a FIFO is refused, never waited on for a writer. */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	struct stat st;
	int err;

	if (fd < 0) {
		err = errno;
		return accel_fail(err, "accel_executable_load: %s: %s", path,
				  accel_path_error(err));
	}
	if (fstat(fd, &st)) {
		err = errno;
		close(fd);
		return accel_fail(err, "accel_executable_load: %s: cannot stat it: %s",
				  path, accel_errno_name(err));
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return accel_fail(ENOEXEC, "accel_executable_load: %s: it is not a regular file (a %s)",
				  path, accel_file_type(st.st_mode));
	}
	if ((uint64_t)st.st_size > ACCEL_EXECUTABLE_MAX_FILE) {
		close(fd);
		return accel_fail(ENOEXEC, "accel_executable_load: %s: %" PRIu64 " bytes, above the largest executable file (%" PRIu64 " bytes)",
				  path, (uint64_t)st.st_size, ACCEL_EXECUTABLE_MAX_FILE);
	}
	err = accel_read_all(fd, (size_t)st.st_size, data);
	close(fd);
	if (err == ENOMEM)
		return accel_fail(ENOMEM, "accel_executable_load: out of memory reading %s", path);
	if (err)
		return accel_fail(err, "accel_executable_load: %s: cannot read it: %s",
				  path, accel_errno_name(err));
	*size = (size_t)st.st_size;
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
