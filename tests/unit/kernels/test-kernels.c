// SPDX-License-Identifier: MIT
/*
 * The cpu executable the unit tests dispatch (accel/cpu_executable.h).
 * Workgroups are 64 invocations along x; each kernel handles the elements
 * of its workgroup that lie inside the binding.
 */
#include <string.h>

#include <accel/cpu_executable.h>

#define WG 64

static void range(const struct accel_cpu_dispatch *d, uint64_t elems,
		  uint64_t *begin, uint64_t *end)
{
	uint64_t wg = d->workgroup_id[0] +
		      (uint64_t)d->workgroup_id[1] * d->workgroup_count[0];

	*begin = wg * WG;
	*end = *begin + WG < elems ? *begin + WG : elems;
}

/* bindings: out (u32[]); constants: value. out[i] = value. */
static void fill_u32(const struct accel_cpu_dispatch *d)
{
	uint32_t *out = d->bindings[0];
	uint64_t b, e;

	range(d, d->binding_lengths[0] / 4, &b, &e);
	for (uint64_t i = b; i < e; i++)
		out[i] = d->constants[0];
}

/* bindings: x, y (float[]); constants: a (float bits). y = a * x + y. */
static void saxpy(const struct accel_cpu_dispatch *d)
{
	const float *x = d->bindings[0];
	float *y = d->bindings[1], a;
	uint64_t b, e;

	memcpy(&a, &d->constants[0], sizeof(a));
	range(d, d->binding_lengths[1] / 4, &b, &e);
	for (uint64_t i = b; i < e; i++)
		y[i] = a * x[i] + y[i];
}

/* bindings: a, b, out (u32[]). out = a + b. */
static void add_u32(const struct accel_cpu_dispatch *d)
{
	const uint32_t *a = d->bindings[0], *bb = d->bindings[1];
	uint32_t *out = d->bindings[2];
	uint64_t b, e;

	range(d, d->binding_lengths[2] / 4, &b, &e);
	for (uint64_t i = b; i < e; i++)
		out[i] = a[i] + bb[i];
}

/* bindings: out (u32[3]); constants: x, y, z. Writes a workgroup count. */
static void write_count(const struct accel_cpu_dispatch *d)
{
	memcpy(d->bindings[0], d->constants, 3 * sizeof(uint32_t));
}

/* bindings: out (u32[]). out[linear workgroup id] = that id + 1. */
static void workgroup_ids(const struct accel_cpu_dispatch *d)
{
	uint32_t *out = d->bindings[0];
	uint32_t id = d->workgroup_id[0] +
		      d->workgroup_id[1] * d->workgroup_count[0] +
		      d->workgroup_id[2] * d->workgroup_count[0] * d->workgroup_count[1];

	if ((uint64_t)id * 4 < d->binding_lengths[0])
		out[id] = id + 1;
}

/* bindings: counter (u32[1]). Adds 1 (to count runs). */
static void increment(const struct accel_cpu_dispatch *d)
{
	uint32_t *c = d->bindings[0];

	c[0]++;
}

static const struct accel_cpu_entry entries[] = {
	{ "fill_u32", 1, 1, { WG, 1, 1 }, fill_u32 },
	{ "saxpy", 2, 1, { WG, 1, 1 }, saxpy },
	{ "add_u32", 3, 0, { WG, 1, 1 }, add_u32 },
	{ "write_count", 1, 3, { 1, 1, 1 }, write_count },
	{ "workgroup_ids", 1, 0, { 1, 1, 1 }, workgroup_ids },
	{ "increment", 1, 0, { 1, 1, 1 }, increment },
};

#ifndef NO_TABLE
/* Per workgroup (accel/executable.h): operations, bytes read + written. */
static const accel_export_cost_t costs[] = {
	{ 0, 4 * WG },          /* fill_u32: writes 64 u32 */
	{ 2 * WG, 3 * 4 * WG }, /* saxpy: an FMA; read x, y, write y */
	{ WG, 3 * 4 * WG },     /* add_u32 */
	{ 0, 12 },              /* write_count */
	{ 0, 4 },               /* workgroup_ids */
	{ 0, 0 },               /* increment: declares nothing (learned) */
};
#endif

#ifdef BAD_ABI
#define ABI (ACCEL_CPU_EXECUTABLE_ABI_VERSION + 6)
#else
#define ABI ACCEL_CPU_EXECUTABLE_ABI_VERSION
#endif

#ifndef NO_TABLE
__attribute__((visibility("default")))
const struct accel_cpu_executable accel_cpu_executable_v1 = {
	ABI, sizeof(entries) / sizeof(entries[0]), entries, costs,
};
#else
__attribute__((visibility("default"))) const void *const not_a_table = entries;
#endif
