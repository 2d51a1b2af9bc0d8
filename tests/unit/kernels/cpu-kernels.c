// SPDX-License-Identifier: MIT
/*
 * The second cpu executable of the unit tests (test-cpu.c): kernels that
 * check the worker pool and the replay. Workgroups along x as in
 * test-kernels.c.
 */
#include <stdint.h>

#include <accel/cpu_executable.h>

#define WG 64

/*
 * bindings: out (u32[]). Atomically adds 1 to out[linear workgroup id]:
 * after a dispatch every element below the workgroup count must be 1.
 */
static void count_runs(const struct accel_cpu_dispatch *d)
{
	uint32_t *out = d->bindings[0];
	uint64_t id = d->workgroup_id[0] +
		      (uint64_t)d->workgroup_id[1] * d->workgroup_count[0] +
		      (uint64_t)d->workgroup_id[2] * d->workgroup_count[0] * d->workgroup_count[1];

	if (id * 4 < d->binding_lengths[0])
		__atomic_fetch_add(&out[id], 1, __ATOMIC_RELAXED);
}

/* bindings: a, out (u32[]); constants: k. out = a * k + 1. */
static void scale_add1(const struct accel_cpu_dispatch *d)
{
	const uint32_t *a = d->bindings[0];
	uint32_t *out = d->bindings[1];
	uint64_t n = d->binding_lengths[1] / 4;
	uint64_t b = (uint64_t)d->workgroup_id[0] * WG, e = b + WG < n ? b + WG : n;

	for (uint64_t i = b; i < e; i++)
		out[i] = a[i] * d->constants[0] + 1;
}

/* bindings: sum (u32[1]), out (u32[3]). Writes (sum[0] % 64, 1, 1). */
static void count_from(const struct accel_cpu_dispatch *d)
{
	const uint32_t *sum = d->bindings[0];
	uint32_t *out = d->bindings[1];

	out[0] = sum[0] % 64;
	out[1] = 1;
	out[2] = 1;
}

static const struct accel_cpu_entry entries[] = {
	{ "count_runs", 1, 0, { 1, 1, 1 }, count_runs },
	{ "scale_add1", 2, 1, { WG, 1, 1 }, scale_add1 },
	{ "count_from", 2, 0, { 1, 1, 1 }, count_from },
};

__attribute__((visibility("default")))
const struct accel_cpu_executable accel_cpu_executable_v1 = {
	ACCEL_CPU_EXECUTABLE_ABI_VERSION, sizeof(entries) / sizeof(entries[0]), entries, 0,
};
