// SPDX-License-Identifier: MIT
/*
 * cpu executables: shared objects in the format of accel/cpu_executable.h,
 * loaded with dlopen(RTLD_NOW | RTLD_LOCAL), or tables linked into the
 * program (accel_cpu_executable_create()). The table is validated in full
 * before anything is built from it; the handle stays open for the
 * executable's life (the entry functions live in it).
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "accel/cpu_executable.h"
#include "cpu.h"
#include "src/elf_check.h"
#include "src/error.h"

struct cpu_executable {
	accel_executable_t base;
	void *handle;
};

static void cpu_executable_destroy(accel_executable_t *e)
{
	struct cpu_executable *ce = (struct cpu_executable *)e;

	accel_executable_fini(e);
	if (ce->handle)
		dlclose(ce->handle);
	free(ce);
}

static const struct accel_executable_ops cpu_executable_ops = {
	.destroy = cpu_executable_destroy,
};

static int check_entry(const struct accel_cpu_executable *t, uint32_t i,
		       const char *fn, const char *path)
{
	const struct accel_cpu_entry *e = &t->entries[i];

	if (!e->name || !e->name[0] || strlen(e->name) >= ACCEL_EXPORT_NAME_MAX)
		return accel_fail(ENOEXEC,
			"%s: %s: entry %u has no name, or one of %d bytes or more",
			fn, path, i, ACCEL_EXPORT_NAME_MAX);
	if (!e->fn)
		return accel_fail(ENOEXEC, "%s: %s: entry '%s' has no function",
				  fn, path, e->name);
	if (!e->workgroup_size[0] || !e->workgroup_size[1] || !e->workgroup_size[2])
		return accel_fail(ENOEXEC, "%s: %s: entry '%s' has a zero workgroup size",
				  fn, path, e->name);
	if (e->binding_count > ACCEL_DISPATCH_MAX_BINDINGS ||
	    e->constant_count > ACCEL_DISPATCH_MAX_CONSTANTS)
		return accel_fail(ENOEXEC,
			"%s: %s: entry '%s' has %u bindings and %u constants; the most is %u and %u",
			fn, path, e->name, e->binding_count, e->constant_count,
			ACCEL_DISPATCH_MAX_BINDINGS, ACCEL_DISPATCH_MAX_CONSTANTS);
	for (uint32_t j = 0; j < i; j++)
		if (strcmp(t->entries[j].name, e->name) == 0)
			return accel_fail(ENOEXEC, "%s: %s: two entries are named '%s'",
					  fn, path, e->name);
	return 0;
}

/* The cost table: only a version 2 table has the field. */
static const accel_export_cost_t *table_costs(const struct accel_cpu_executable *t)
{
	return t->abi_version >= 2 ? t->costs : NULL;
}

static int check_table(const struct accel_cpu_executable *t, const char *fn,
		       const char *path)
{
	int err;

	if (t->abi_version != 1 && t->abi_version != ACCEL_CPU_EXECUTABLE_ABI_VERSION)
		return accel_fail(ENOEXEC,
			"%s: %s: its " ACCEL_CPU_EXECUTABLE_SYMBOL " has abi_version %u, but this libaccel reads versions 1 and %u; rebuild it against this accel/cpu_executable.h",
			fn, path, t->abi_version, ACCEL_CPU_EXECUTABLE_ABI_VERSION);
	if (t->entry_count && !t->entries)
		return accel_fail(ENOEXEC, "%s: %s: entry_count is %u but entries is NULL",
				  fn, path, t->entry_count);
	for (uint32_t i = 0; i < t->entry_count; i++) {
		err = check_entry(t, i, fn, path);
		if (!err && table_costs(t))
			err = accel_export_cost_check(&t->costs[i], fn, path,
						      t->entries[i].name);
		if (err)
			return err;
	}
	return 0;
}

static int fill_exports(struct cpu_executable *ce,
			const struct accel_cpu_executable *t)
{
	ce->base.exports = calloc(t->entry_count ? t->entry_count : 1,
				  sizeof(*ce->base.exports));
	if (!ce->base.exports)
		return -ENOMEM;
	ce->base.export_count = t->entry_count;
	for (uint32_t i = 0; i < t->entry_count; i++) {
		struct accel_export *x = &ce->base.exports[i];
		const struct accel_cpu_entry *e = &t->entries[i];

		accel_strfmt(x->info.name, sizeof(x->info.name), "%s", e->name);
		x->info.binding_count = e->binding_count;
		x->info.constant_count = e->constant_count;
		memcpy(x->info.workgroup_size, e->workgroup_size, sizeof(e->workgroup_size));
		if (table_costs(t))
			x->cost = t->costs[i];
		x->fn = (const void *)e;
	}
	return 0;
}

static void *open_so(const char *path, int *err)
{
	char why[160], local[4096];
	void *h;

	if (access(path, R_OK) != 0) {
		*err = errno;
		accel_fail(*err, "accel_executable_load: %s: %s", path,
			   accel_path_error(*err));
		return NULL;
	}
	/* A truncated file would be mapped anyway, and SIGBUS in dlopen(). */
	*err = -accel_elf_check(path, why, sizeof(why));
	if (*err) {
		accel_fail(*err, "accel_executable_load: %s is not a loadable shared object: %s",
			   path, why);
		return NULL;
	}
	/*
	 * A name without a slash is a library name to dlopen(), looked up in
	 * its search path: "k.so" would load another file than the one just
	 * checked (or none). The file meant is the one in this folder.
	 */
	if (!strchr(path, '/')) {
		if ((size_t)snprintf(local, sizeof(local), "./%s", path) >= sizeof(local)) {
			*err = ENAMETOOLONG;
			accel_fail(*err, "accel_executable_load: %s: %s", path,
				   accel_path_error(*err));
			return NULL;
		}
		path = local;
	}
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		*err = ENOEXEC;
		accel_fail(ENOEXEC, "accel_executable_load: %s is not a loadable shared object: %s",
			   path, dlerror());
	}
	return h;
}

/* Validates @table and builds the executable; @h (may be NULL) moves in. */
static int create(accel_device_t *d, const struct accel_cpu_executable *table,
		  const char *fn, const char *what, void *h,
		  accel_executable_t **out)
{
	struct cpu_executable *ce;
	int err = check_table(table, fn, what);

	ce = err ? NULL : calloc(1, sizeof(*ce));
	if (!err && (!ce || fill_exports(ce, table))) {
		free(ce);
		err = accel_fail(ENOMEM, "%s: out of memory", fn);
	}
	if (err) {
		if (h)
			dlclose(h);
		return err;
	}
	accel_executable_init(&ce->base, &cpu_executable_ops, d);
	ce->handle = h;
	*out = &ce->base;
	return 0;
}

int accel_cpu_executable_load(accel_device_t *d, const char *path,
			      accel_executable_t **out)
{
	const struct accel_cpu_executable *table;
	void *h;
	int err = 0;

	h = open_so(path, &err);
	if (!h)
		return -err;
	table = dlsym(h, ACCEL_CPU_EXECUTABLE_SYMBOL);
	if (!table) {
		dlclose(h);
		return accel_fail(ENOEXEC,
			"accel_executable_load: %s does not export " ACCEL_CPU_EXECUTABLE_SYMBOL ", so it is not a cpu executable (see accel/cpu_executable.h)",
			path);
	}
	return create(d, table, "accel_executable_load", path, h, out);
}

ACCEL_EXPORT int accel_cpu_executable_create(accel_device_t *device,
					     const struct accel_cpu_executable *table,
					     accel_executable_t **out)
{
	if (!out)
		return accel_fail(EINVAL, "accel_cpu_executable_create: out is NULL");
	*out = NULL;
	if (!device || !table)
		return accel_fail(EINVAL, "accel_cpu_executable_create: %s is NULL",
				  device ? "table" : "device");
	if (device->ops != &accel_cpu_device_ops)
		return accel_fail(ENODEV,
			"accel_cpu_executable_create: device %s is not a cpu device; linked-in tables run only on cpu://",
			device->uri);
	return create(device, table, "accel_cpu_executable_create",
		      "the linked-in table", NULL, out);
}

/*
 * The cost model's calibration kernel (core.h, calibration_executable):
 * each of a workgroup's ACCEL_COST_CALIBRATE_WG invocations runs four
 * chains of I FMAs (8 I operations) on registers, one invocation after the
 * other as a kernel's C code runs them (a compiler may interleave the four
 * chains, not the invocations), and writes one float per workgroup so
 * that nothing is optimised away.
 */
static void calibrate_ops(const struct accel_cpu_dispatch *d)
{
	const float m = 0.999f, c = 0.001f;
	float *out = d->bindings[0], sum = 0;

	for (uint32_t i = 0; i < ACCEL_COST_CALIBRATE_WG; i++) {
		float x0 = (float)i, x1 = x0 + 1, x2 = x0 + 2, x3 = x0 + 3;

		for (uint32_t it = 0; it < d->constants[0]; it++) {
			x0 = x0 * m + c;
			x1 = x1 * m + c;
			x2 = x2 * m + c;
			x3 = x3 * m + c;
		}
		sum += x0 + x1 + x2 + x3;
	}
	if ((uint64_t)d->workgroup_id[0] * 4 + 4 <= d->binding_lengths[0])
		out[d->workgroup_id[0]] = sum;
}

/*
 * The streaming kernel (entry 1): y[i] = y[i] * 0.5 + x[i] over this
 * workgroup's ACCEL_COST_CALIBRATE_WG elements of a (x + y * width) grid:
 * 12 bytes per element, the memory traffic of a kernel's plain C loop.
 */
static void calibrate_stream(const struct accel_cpu_dispatch *d)
{
	const float *x = d->bindings[0];
	float *y = d->bindings[1];
	uint64_t n = d->binding_lengths[1] / 4;
	uint64_t b = ((uint64_t)d->workgroup_id[1] * d->workgroup_count[0] +
		      d->workgroup_id[0]) * ACCEL_COST_CALIBRATE_WG;
	uint64_t e = b + ACCEL_COST_CALIBRATE_WG < n ? b + ACCEL_COST_CALIBRATE_WG : n;

	for (uint64_t i = b; i < e; i++)
		y[i] = y[i] * 0.5f + x[i];
}

int accel_cpu_calibration_executable(accel_device_t *d, accel_executable_t **out)
{
	static const struct accel_cpu_entry entries[] = {
		{ "calibrate_ops", 1, 1, { ACCEL_COST_CALIBRATE_WG, 1, 1 }, calibrate_ops },
		{ "calibrate_stream", 2, 0, { ACCEL_COST_CALIBRATE_WG, 1, 1 }, calibrate_stream },
	};
	static const struct accel_cpu_executable table = {
		ACCEL_CPU_EXECUTABLE_ABI_VERSION, 2, entries, NULL,
	};

	return create(d, &table, "accel_device_calibrate", "the calibration kernel",
		      NULL, out);
}
