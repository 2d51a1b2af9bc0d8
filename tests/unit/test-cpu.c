// SPDX-License-Identifier: MIT
/*
 * The cpu driver: its worker pool (every workgroup exactly once, for any
 * number of workers), large fills and copies split across workers,
 * barriers, executables (good and bad shared objects and linked-in
 * tables), the replay of one REUSABLE command buffer with many binding
 * tables, and dispatch-indirect counts written by an earlier dispatch.
 *
 * With ACCEL_TEST_DEVICE set to another device (vulkan://0), the
 * device-agnostic part runs there: every workgroup once, many commands,
 * large and overlapping transfers, replay, dispatch-indirect.
 */
#include <pthread.h>
#include <stdint.h>

#include <accel/cpu_executable.h>

#include "test-accel.h"

#define ACCEL_ARRAY_SIZE_T(a) (sizeof(a) / sizeof((a)[0]))

static accel_executable_t *exe, *pool_exe;
static accel_queue_t *queue;

/*
 * Opens cpu:// with @threads workers (through the URI option); or, when
 * ACCEL_TEST_DEVICE names another device, that device (the pool, transfer
 * and replay tests are device-agnostic; meson runs them on vulkan://0 too).
 */
static void open_threads(unsigned int threads)
{
	char uri[64];

	test_clear_env();
	setenv(ACCEL_SCHEDULER_ENV, "embedded", 1);
	snprintf(uri, sizeof(uri), "cpu://?threads=%u", threads);
	if (!test_device_is_cpu())
		snprintf(uri, sizeof(uri), "%s", test_device_uri());
	ASSERT_OK(accel_device_open(uri, NULL, &dev));
	sched = accel_device_scheduler(dev);
	exe = kernels();
	ck_assert_msg(getenv("ACCEL_TEST_CPU_KERNELS"), "ACCEL_TEST_CPU_KERNELS is not set (run through meson test)");
	ASSERT_OK(accel_executable_load(dev, getenv("ACCEL_TEST_CPU_KERNELS"), &pool_exe));
	ASSERT_OK(accel_queue_create(dev, 0, &queue));
}

static void setup(void)
{
	open_threads(2);
}

static void teardown(void)
{
	accel_queue_release(queue);
	accel_executable_release(exe);
	accel_executable_release(pool_exe);
	device_teardown();
	queue = NULL;
	exe = pool_exe = NULL;
}

static void close_device(void)
{
	teardown();
}

static int run(accel_command_buffer_t *cb, const accel_binding_table_t *table)
{
	return run_on(queue, cb, table);
}

/* ---- the pool ---------------------------------------------------------- */

static const unsigned int thread_counts[] = { 1, 2, 3, 8, 64 };

static const uint32_t shapes[][3] = {
	{ 1, 1, 1 }, { 7, 1, 1 }, { 5, 3, 2 }, { 1000, 1, 1 }, { 33, 17, 3 },
	{ 4096, 2, 1 },
};

/* Every workgroup of several shapes runs exactly once, for N workers. */
START_TEST(test_pool_each_workgroup_once)
{
	unsigned int threads = thread_counts[_i];

	open_threads(threads);
	for (size_t k = 0; k < ACCEL_ARRAY_SIZE_T(shapes); k++) {
		uint64_t n = (uint64_t)shapes[k][0] * shapes[k][1] * shapes[k][2];
		accel_buffer_t *b = buffer_new(n * 4 + 64);
		uint32_t *p = map(b);
		accel_buffer_ref_t r[1] = { accel_buffer_ref_direct(b, 0, n * 4) };
		accel_command_buffer_t *cb = cb_new(ACCEL_COMMAND_BUFFER_ONE_SHOT, 0);

		memset(p, 0, n * 4 + 64);
		ASSERT_OK(accel_command_buffer_dispatch(cb, pool_exe, entry(pool_exe, "count_runs"),
							shapes[k], NULL, 0, r, 1));
		ASSERT_OK(accel_command_buffer_end(cb));
		ASSERT_OK(run(cb, NULL));
		for (uint64_t i = 0; i < n; i++)
			ck_assert_msg(p[i] == 1,
				      "%u workers, shape (%u, %u, %u): workgroup %llu ran %u times, expected once",
				      threads, shapes[k][0], shapes[k][1], shapes[k][2],
				      (unsigned long long)i, p[i]);
		ck_assert_uint_eq(p[n], 0); /* nothing past the end */
		accel_command_buffer_release(cb);
		accel_buffer_release(b);
	}
	close_device();
}
END_TEST

/*
 * 300 dispatches with no barrier between them (they may run concurrently),
 * each on its own range, then a barrier and one reading them all.
 */
START_TEST(test_pool_many_commands_no_barrier)
{
	enum { N = 300, WGS = 5 };
	accel_buffer_t *b, *sum;
	uint32_t *p, *ps, wg[3] = { WGS, 1, 1 }, k = 3;
	accel_command_buffer_t *cb;

	open_threads(thread_counts[_i]);
	b = buffer_new(N * WGS * 4);
	sum = buffer_new(N * WGS * 4);
	p = map(b);
	ps = map(sum);
	cb = cb_new(0, 0);
	memset(p, 0, N * WGS * 4);
	for (uint32_t i = 0; i < N; i++) {
		accel_buffer_ref_t r[1] = { accel_buffer_ref_direct(b, i * WGS * 4, WGS * 4) };

		ASSERT_OK(accel_command_buffer_dispatch(cb, pool_exe, entry(pool_exe, "count_runs"),
							wg, NULL, 0, r, 1));
	}
	ASSERT_OK(accel_command_buffer_barrier(cb));
	{
		accel_buffer_ref_t r[2] = { accel_buffer_ref_direct(b, 0, N * WGS * 4),
					    accel_buffer_ref_direct(sum, 0, N * WGS * 4) };
		uint32_t w[3] = { (N * WGS + 63) / 64, 1, 1 };

		ASSERT_OK(accel_command_buffer_dispatch(cb, pool_exe, entry(pool_exe, "scale_add1"),
							w, &k, 1, r, 2));
	}
	ASSERT_OK(accel_command_buffer_end(cb));
	ck_assert_uint_eq(accel_command_buffer_command_count(cb), N + 2);
	ASSERT_OK(run(cb, NULL));
	for (uint32_t i = 0; i < N * WGS; i++) {
		ck_assert_msg(p[i] == 1, "element %u: %u runs", i, p[i]);
		ck_assert_msg(ps[i] == 4, "element %u: %u after the barrier, expected 4", i, ps[i]);
	}
	accel_command_buffer_release(cb);
	accel_buffer_release(b);
	accel_buffer_release(sum);
	close_device();
}
END_TEST

/* Big fills (split across workers, streaming stores) with each pattern. */
START_TEST(test_pool_large_fill)
{
	const uint64_t size = (UINT64_C(9) << 20) + 64;
	accel_buffer_t *b = buffer_new(size);
	uint8_t *p = map(b);
	static const uint32_t pats[3] = { 0xa5, 0xbeef, 0x3f800001 };
	static const uint32_t lens[3] = { 1, 2, 4 };

	for (int k = 0; k < 3; k++) {
		/* offset 4 and an odd-ish length: unaligned head and tail */
		uint64_t off = 4, len = size - 64 - 4 * (uint64_t)lens[k] * 3;
		accel_command_buffer_t *cb = cb_new(ACCEL_COMMAND_BUFFER_ONE_SHOT, 0);

		memset(p, 0x11, size);
		ASSERT_OK(accel_command_buffer_fill(cb, accel_buffer_ref_direct(b, off, len),
						    &pats[k], lens[k]));
		ASSERT_OK(accel_command_buffer_end(cb));
		ASSERT_OK(run(cb, NULL));
		for (uint64_t i = 0; i < size; i++) {
			uint8_t want = i < off || i >= off + len ? 0x11 :
				       (uint8_t)(pats[k] >> (8 * ((i - off) % lens[k])));

			if (p[i] != want)
				ck_abort_msg("pattern of %u bytes: byte %llu is 0x%02x, expected 0x%02x",
					     lens[k], (unsigned long long)i, p[i], want);
		}
		accel_command_buffer_release(cb);
	}
	accel_buffer_release(b);
}
END_TEST

/* A big copy at unaligned offsets; and overlapping ranges via two slots. */
START_TEST(test_pool_large_copy)
{
	const uint64_t size = UINT64_C(10) << 20, len = (UINT64_C(9) << 20) + 13;
	accel_buffer_t *a = buffer_new(size), *b = buffer_new(size);
	uint8_t *pa = map(a), *pb = map(b);
	accel_command_buffer_t *cb = cb_new(ACCEL_COMMAND_BUFFER_ONE_SHOT, 0);

	for (uint64_t i = 0; i < size; i++)
		pa[i] = (uint8_t)(i * 7 + (i >> 12));
	memset(pb, 0, size);
	ASSERT_OK(accel_command_buffer_copy(cb, accel_buffer_ref_direct(a, 3, len),
					    accel_buffer_ref_direct(b, 17, len)));
	ASSERT_OK(accel_command_buffer_end(cb));
	ASSERT_OK(run(cb, NULL));
	for (uint64_t i = 0; i < size; i++) {
		uint8_t want = i < 17 || i >= 17 + len ? 0 : pa[i - 17 + 3];

		if (pb[i] != want)
			ck_abort_msg("byte %llu is 0x%02x, expected 0x%02x",
				     (unsigned long long)i, pb[i], want);
	}
	accel_command_buffer_release(cb);

	/* slots 0 and 1 on one buffer, ranges overlapping: memmove order */
	cb = cb_new(0, 2);
	ASSERT_OK(accel_command_buffer_copy(cb, accel_buffer_ref_indirect(0, 0, len),
					    accel_buffer_ref_indirect(1, 0, len)));
	ASSERT_OK(accel_command_buffer_end(cb));
	for (uint64_t i = 0; i < size; i++)
		pa[i] = (uint8_t)(i * 13);
	memcpy(pb, pa, size);
	{
		accel_binding_t t[2] = { { a, 0, ACCEL_WHOLE_BUFFER }, { a, 1000, ACCEL_WHOLE_BUFFER } };
		accel_binding_table_t table = { 2, t };

		ASSERT_OK(run(cb, &table));
	}
	memmove(pb + 1000, pb, len);
	ck_assert_msg(memcmp(pa, pb, size) == 0, "overlapping copy differs from memmove");
	accel_command_buffer_release(cb);
	accel_buffer_release(a);
	accel_buffer_release(b);
}
END_TEST

/* ---- options ---------------------------------------------------------- */

START_TEST(test_threads_options)
{
	accel_device_t *d = TEST_NOT_NULL;

	test_clear_env();
	setenv(ACCEL_SCHEDULER_ENV, "embedded", 1);
	ASSERT_ERRNO(accel_device_open("cpu://?threads=0", NULL, &d), EINVAL);
	ck_assert_ptr_null(d);
	ASSERT_MESSAGE_CONTAINS("the URI option threads= \"0\" is not a worker count; give a number from 1 to 256");
	ASSERT_ERRNO(accel_device_open("cpu://0?threads=lots", NULL, &d), EINVAL);
	/* Digits only: no blank, sign or overflow that strtoul() would take. */
	ASSERT_ERRNO(accel_device_open("cpu://?threads= 2", NULL, &d), EINVAL);
	ASSERT_MESSAGE_CONTAINS("threads= \" 2\" is not a worker count");
	ASSERT_ERRNO(accel_device_open("cpu://?threads=+2", NULL, &d), EINVAL);
	ASSERT_ERRNO(accel_device_open("cpu://?threads=\t2", NULL, &d), EINVAL);
	ASSERT_ERRNO(accel_device_open("cpu://?threads=4294967298", NULL, &d), EINVAL);
	ASSERT_ERRNO(accel_device_open("cpu://?threads=18446744073709551618", NULL, &d), EINVAL);
	ck_assert_ptr_null(d);
	ASSERT_ERRNO(accel_device_open("cpu://?workers=2", NULL, &d), EINVAL);
	ASSERT_MESSAGE_CONTAINS("unknown option \"workers=2\"; the cpu driver takes \"?threads=N\"");
	/* Said as what it is, not as a worker count "4&threads=8". */
	ASSERT_ERRNO(accel_device_open("cpu://?threads=4&threads=8", NULL, &d), EINVAL);
	ASSERT_MESSAGE_CONTAINS("more than one option; the cpu driver takes one");
	ASSERT_ERRNO(accel_device_open("cpu://?threads=4&", NULL, &d), EINVAL);
	ASSERT_MESSAGE_CONTAINS("more than one option");
	ck_assert_ptr_null(d);
	ASSERT_ERRNO(accel_device_open("cpu://1?threads=2", NULL, &d), EINVAL);
	setenv("ACCEL_CPU_THREADS", "-3", 1);
	ASSERT_ERRNO(accel_device_open("cpu://", NULL, &d), EINVAL);
	ASSERT_MESSAGE_CONTAINS("ACCEL_CPU_THREADS= \"-3\" is not a worker count");
	setenv("ACCEL_CPU_THREADS", " 3", 1);
	ASSERT_ERRNO(accel_device_open("cpu://", NULL, &d), EINVAL);
	setenv("ACCEL_CPU_THREADS", "3", 1);
	ASSERT_OK(accel_device_open("cpu://0?threads=2", NULL, &d));
	ck_assert_str_eq(accel_device_uri(d), "cpu://0");
	accel_device_release(d);
}
END_TEST

/* ---- executables -------------------------------------------------------- */

START_TEST(test_executable_good)
{
	accel_export_info_t info;
	uint32_t o;

	ck_assert_uint_eq(accel_executable_export_count(exe), 6);
	ASSERT_OK(accel_executable_lookup(exe, "saxpy", &o));
	ASSERT_OK(accel_executable_export_info(exe, o, &info));
	ck_assert_str_eq(info.name, "saxpy");
	ck_assert_uint_eq(info.binding_count, 2);
	ck_assert_uint_eq(info.constant_count, 1);
	ck_assert_uint_eq(info.workgroup_size[0], 64);
	ASSERT_ERRNO(accel_executable_lookup(exe, "saxpi", &o), ENOENT);
}
END_TEST

START_TEST(test_executable_bad_objects)
{
	accel_executable_t *e = TEST_NOT_NULL;
	char dir[256], path[300];
	FILE *f;

	ASSERT_ERRNO(accel_executable_load(dev, getenv("ACCEL_TEST_KERNELS_BAD_ABI"), &e), ENOEXEC);
	ck_assert_ptr_null(e);
	ASSERT_MESSAGE_CONTAINS("has abi_version 8, but this libaccel reads versions 1 and 2");
	ASSERT_ERRNO(accel_executable_load(dev, getenv("ACCEL_TEST_KERNELS_NO_TABLE"), &e), ENOEXEC);
	ASSERT_MESSAGE_CONTAINS("does not export accel_cpu_executable_v1");
	ASSERT_ERRNO(accel_executable_load(dev, "/nonexistent/kernels.so", &e), ENOENT);
	ASSERT_MESSAGE_CONTAINS("/nonexistent/kernels.so: no such file");
	test_make_tmpdir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/not-elf.so", dir);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs("this is not an ELF file\n", f);
	fclose(f);
	ASSERT_ERRNO(accel_executable_load(dev, path, &e), ENOEXEC);
	ASSERT_MESSAGE_CONTAINS("is not a loadable shared object");
	unlink(path);
	rmdir(dir);
}
END_TEST

/* A dispatch with the wrong number of bindings or constants. */
START_TEST(test_executable_wrong_counts)
{
	accel_command_buffer_t *cb = cb_new(0, 1);
	accel_buffer_ref_t r[3] = { accel_buffer_ref_indirect(0, 0, 64),
				    accel_buffer_ref_indirect(0, 0, 64),
				    accel_buffer_ref_indirect(0, 0, 64) };
	uint32_t wg[3] = { 1, 1, 1 }, c = 0;

	ASSERT_ERRNO(accel_command_buffer_dispatch(cb, exe, entry(exe, "saxpy"), wg, &c, 1, r, 3), EINVAL);
	ASSERT_MESSAGE_CONTAINS("entry point 'saxpy' takes 2 bindings, but 3 were given");
	ASSERT_ERRNO(accel_command_buffer_dispatch(cb, exe, entry(exe, "saxpy"), wg, NULL, 0, r, 2), EINVAL);
	ASSERT_MESSAGE_CONTAINS("entry point 'saxpy' takes 1 constants, but 0 were given");
	ck_assert_uint_eq(accel_command_buffer_command_count(cb), 0);
	accel_command_buffer_release(cb);
}
END_TEST

static void twice(const struct accel_cpu_dispatch *d)
{
	uint32_t *p = d->bindings[0];
	uint64_t i = d->workgroup_id[0];

	if (i * 4 < d->binding_lengths[0])
		p[i] *= 2;
}

/* Linked-in tables: accepted like a shared object's, checked the same. */
START_TEST(test_executable_linked_in)
{
	static const struct accel_cpu_entry good[] = { { "twice", 1, 0, { 1, 1, 1 }, twice } };
	static const struct accel_cpu_entry no_fn[] = { { "twice", 1, 0, { 1, 1, 1 }, NULL } };
	static const struct accel_cpu_entry dup[] = { { "twice", 1, 0, { 1, 1, 1 }, twice },
						      { "twice", 1, 0, { 1, 1, 1 }, twice } };
	static const struct accel_cpu_entry zero_wg[] = { { "twice", 1, 0, { 1, 0, 1 }, twice } };
	static const struct accel_cpu_entry many[] = { { "twice", 300, 0, { 1, 1, 1 }, twice } };
	const struct accel_cpu_executable t_good = { ACCEL_CPU_EXECUTABLE_ABI_VERSION, 1, good, NULL };
	const struct {
		struct accel_cpu_executable t;
		const char *msg;
	} bad[] = {
		{ { 3, 1, good, NULL }, "the linked-in table: its accel_cpu_executable_v1 has abi_version 3" },
		{ { 1, 1, no_fn, NULL }, "entry 'twice' has no function" },
		{ { 1, 2, dup, NULL }, "two entries are named 'twice'" },
		{ { 1, 1, zero_wg, NULL }, "entry 'twice' has a zero workgroup size" },
		{ { 1, 1, many, NULL }, "entry 'twice' has 300 bindings and 0 constants; the most is 256" },
		{ { 1, 3, NULL, NULL }, "entry_count is 3 but entries is NULL" },
	};
	accel_executable_t *e = TEST_NOT_NULL;
	accel_buffer_t *b = buffer_new(16);
	uint32_t *p = map(b), wg[3] = { 4, 1, 1 };
	accel_buffer_ref_t r[1] = { accel_buffer_ref_direct(b, 0, 16) };
	accel_command_buffer_t *cb;

	for (size_t i = 0; i < ACCEL_ARRAY_SIZE_T(bad); i++) {
		ASSERT_ERRNO(accel_cpu_executable_create(dev, &bad[i].t, &e), ENOEXEC);
		ck_assert_ptr_null(e);
		ASSERT_MESSAGE_CONTAINS("accel_cpu_executable_create: ");
		ASSERT_MESSAGE_CONTAINS(bad[i].msg);
	}
	ASSERT_ERRNO(accel_cpu_executable_create(NULL, &t_good, &e), EINVAL);
	ASSERT_ERRNO(accel_cpu_executable_create(dev, NULL, &e), EINVAL);
	ASSERT_OK(accel_cpu_executable_create(dev, &t_good, &e));
	for (int i = 0; i < 4; i++)
		p[i] = (uint32_t)i + 1;
	cb = cb_new(ACCEL_COMMAND_BUFFER_ONE_SHOT, 0);
	ASSERT_OK(accel_command_buffer_dispatch(cb, e, 0, wg, NULL, 0, r, 1));
	ASSERT_OK(accel_command_buffer_end(cb));
	accel_executable_release(e); /* the command buffer holds it */
	ASSERT_OK(run(cb, NULL));
	for (int i = 0; i < 4; i++)
		ck_assert_uint_eq(p[i], 2 * ((uint32_t)i + 1));
	accel_command_buffer_release(cb);
	accel_buffer_release(b);
}
END_TEST

/*
 * Declared costs: a version 2 table's costs are read back per entry; an
 * entry with none says so (-ENODATA); a version 1 table declares none;
 * a cost above ACCEL_EXPORT_COST_MAX is refused (-ERANGE) naming the
 * entry and the field, and nothing is created.
 */
START_TEST(test_executable_declared_costs)
{
	static const struct accel_cpu_entry two[] = { { "twice", 1, 0, { 1, 1, 1 }, twice },
						      { "again", 1, 0, { 1, 1, 1 }, twice } };
	static const accel_export_cost_t costs[] = { { 3, 16 }, { 0, 0 } };
	static const accel_export_cost_t huge_ops[] = { { ACCEL_EXPORT_COST_MAX + 1, 4 }, { 0, 0 } };
	static const accel_export_cost_t huge_bytes[] = { { 1, 0 }, { 0, UINT64_MAX } };
	const struct accel_cpu_executable t = { ACCEL_CPU_EXECUTABLE_ABI_VERSION, 2, two, costs };
	const struct accel_cpu_executable v1 = { 1, 2, two, costs }; /* not read */
	const struct accel_cpu_executable bad_ops = { ACCEL_CPU_EXECUTABLE_ABI_VERSION, 2, two, huge_ops };
	const struct accel_cpu_executable bad_bytes = { ACCEL_CPU_EXECUTABLE_ABI_VERSION, 2, two, huge_bytes };
	accel_export_cost_t c = { 7, 7 };
	accel_executable_t *e = TEST_NOT_NULL;

	ASSERT_OK(accel_cpu_executable_create(dev, &t, &e));
	ASSERT_OK(accel_executable_export_cost(e, 0, &c));
	ck_assert_uint_eq(c.operations, 3);
	ck_assert_uint_eq(c.bytes, 16);
	ASSERT_ERRNO(accel_executable_export_cost(e, 1, &c), ENODATA);
	ASSERT_MESSAGE_CONTAINS("entry 'again' declares no cost");
	ck_assert_uint_eq(c.operations + c.bytes, 0);
	ASSERT_ERRNO(accel_executable_export_cost(e, 2, &c), ERANGE);
	ASSERT_ERRNO(accel_executable_export_cost(NULL, 0, &c), EINVAL);
	ASSERT_ERRNO(accel_executable_export_cost(e, 0, NULL), EINVAL);
	accel_executable_release(e);
	ASSERT_OK(accel_cpu_executable_create(dev, &v1, &e));
	ASSERT_ERRNO(accel_executable_export_cost(e, 0, &c), ENODATA);
	accel_executable_release(e);
	e = TEST_NOT_NULL;
	ASSERT_ERRNO(accel_cpu_executable_create(dev, &bad_ops, &e), ERANGE);
	ck_assert_ptr_null(e);
	ASSERT_MESSAGE_CONTAINS("entry 'twice' declares 1099511627777 operations per workgroup, above ACCEL_EXPORT_COST_MAX");
	ASSERT_ERRNO(accel_cpu_executable_create(dev, &bad_bytes, &e), ERANGE);
	ASSERT_MESSAGE_CONTAINS("entry 'again' declares 18446744073709551615 bytes per workgroup");
}
END_TEST

/* ---- replay through the binding plan ------------------------------------ */

#define INPUTS 48
#define ELEMS 1000

/*
 * One REUSABLE command buffer of three dependent stages over 5 slots:
 *   @2 = 7          (fill)            @3 = @0 + @1   (add_u32)
 *   barrier
 *   @4 = @3 * 3 + 1 (scale_add1, @4 at an offset inside its slot)
 *   barrier
 *   @2 = @4 + @2    (add_u32; @2's old value is the fill's 7)
 * submitted INPUTS times, all in flight at once, each with its own five
 * buffers at various offsets, and checked against the same in plain C.
 */
START_TEST(test_replay_many_tables)
{
	uint32_t wg[3] = { (ELEMS + 63) / 64, 1, 1 }, seven = 7, three = 3;
	uint64_t n = ELEMS * 4;
	accel_buffer_ref_t s01[3] = { accel_buffer_ref_indirect(0, 0, n),
				      accel_buffer_ref_indirect(1, 0, n),
				      accel_buffer_ref_indirect(3, 0, n) };
	accel_buffer_ref_t s34[2] = { accel_buffer_ref_indirect(3, 0, n),
				      accel_buffer_ref_indirect(4, 64, n) };
	accel_buffer_ref_t s42[3] = { accel_buffer_ref_indirect(4, 64, n),
				      accel_buffer_ref_indirect(2, 0, n),
				      accel_buffer_ref_indirect(2, 0, n) };
	accel_command_buffer_t *cb = cb_new(ACCEL_COMMAND_BUFFER_REUSABLE, 5);
	accel_buffer_t *bufs[INPUTS][5];
	accel_semaphore_t *s = sem_new(0);
	accel_semaphore_t *done[INPUTS];

	ASSERT_OK(accel_command_buffer_fill(cb, accel_buffer_ref_indirect(2, 0, n), &seven, 4));
	ASSERT_OK(accel_command_buffer_dispatch(cb, exe, entry(exe, "add_u32"), wg, NULL, 0, s01, 3));
	ASSERT_OK(accel_command_buffer_barrier(cb));
	ASSERT_OK(accel_command_buffer_dispatch(cb, pool_exe, entry(pool_exe, "scale_add1"), wg, &three, 1, s34, 2));
	ASSERT_OK(accel_command_buffer_barrier(cb));
	ASSERT_OK(accel_command_buffer_dispatch(cb, exe, entry(exe, "add_u32"), wg, NULL, 0, s42, 3));
	ASSERT_OK(accel_command_buffer_end(cb));
	for (int k = 0; k < INPUTS; k++) {
		accel_binding_t t[5];
		accel_binding_table_t table = { 5, t };
		uint64_t off = (uint64_t)(k % 4) * 16;

		for (int j = 0; j < 5; j++) {
			bufs[k][j] = buffer_new(n + 256);
			t[j] = (accel_binding_t){ bufs[k][j], off, j == 4 ? n + 64 : n };
		}
		{
			uint32_t *a = (uint32_t *)((uint8_t *)map(bufs[k][0]) + off);
			uint32_t *b = (uint32_t *)((uint8_t *)map(bufs[k][1]) + off);

			for (uint32_t i = 0; i < ELEMS; i++) {
				a[i] = i * (uint32_t)k;
				b[i] = i + (uint32_t)k;
			}
		}
		done[k] = sem_new(0);
		{
			POINT(sig, done[k], 1);
			POINT(wait, s, 1);

			ASSERT_OK(accel_queue_execute(queue, &wait, &sig, cb, &table, 0));
		}
	}
	ASSERT_OK(accel_semaphore_signal(s, 1)); /* release them all at once */
	for (int k = 0; k < INPUTS; k++) {
		uint64_t off = (uint64_t)(k % 4) * 16;
		const uint32_t *out = (const uint32_t *)((uint8_t *)map(bufs[k][2]) + off);

		ASSERT_OK(accel_semaphore_wait(done[k], 1, 0, accel_deadline_after(30 * SECOND)));
		for (uint32_t i = 0; i < ELEMS; i++) {
			uint32_t want = (i * (uint32_t)k + i + (uint32_t)k) * 3 + 1 + 7;

			ck_assert_msg(out[i] == want, "input %d, element %u: %u, expected %u",
				      k, i, out[i], want);
		}
		for (int j = 0; j < 5; j++)
			accel_buffer_release(bufs[k][j]);
		accel_semaphore_release(done[k]);
	}
	accel_semaphore_release(s);
	accel_command_buffer_release(cb);
}
END_TEST

/* ---- dispatch-indirect ---------------------------------------------------- */

/*
 * count_from writes (sum % 64, 1, 1) into the count buffer; after a
 * barrier, a dispatch-indirect of count_runs reads it. Each submission
 * gives a different input through slot 0, so a different count, including
 * 0 (nothing runs).
 */
START_TEST(test_dispatch_indirect_count_from_dispatch)
{
	accel_command_buffer_t *cb = cb_new(ACCEL_COMMAND_BUFFER_REUSABLE, 3);
	accel_buffer_ref_t cf[2] = { accel_buffer_ref_indirect(0, 0, 4),
				     accel_buffer_ref_indirect(1, 0, 12) };
	accel_buffer_ref_t out[1] = { accel_buffer_ref_indirect(2, 0, 64 * 4) };
	uint32_t one[3] = { 1, 1, 1 };
	accel_buffer_t *in = buffer_new(4), *count = buffer_new(12), *marks = buffer_new(64 * 4);
	uint32_t *pin = map(in), *pc = map(count), *pm = map(marks);
	accel_binding_t t[3] = { { in, 0, ACCEL_WHOLE_BUFFER }, { count, 0, ACCEL_WHOLE_BUFFER },
				 { marks, 0, ACCEL_WHOLE_BUFFER } };
	accel_binding_table_t table = { 3, t };
	static const uint32_t sums[] = { 5, 0, 63, 64 + 17, 1 };

	ASSERT_OK(accel_command_buffer_dispatch(cb, pool_exe, entry(pool_exe, "count_from"), one, NULL, 0, cf, 2));
	ASSERT_OK(accel_command_buffer_barrier(cb));
	ASSERT_OK(accel_command_buffer_dispatch_indirect(cb, pool_exe, entry(pool_exe, "count_runs"),
			accel_buffer_ref_indirect(1, 0, 12), NULL, 0, out, 1));
	ASSERT_OK(accel_command_buffer_end(cb));
	for (size_t k = 0; k < ACCEL_ARRAY_SIZE_T(sums); k++) {
		uint32_t want = sums[k] % 64;

		pin[0] = sums[k];
		memset(pc, 0xff, 12); /* a stale count that would fail the dispatch */
		memset(pm, 0, 64 * 4);
		ASSERT_OK(run(cb, &table));
		ck_assert_uint_eq(pc[0], want);
		for (uint32_t i = 0; i < 64; i++)
			ck_assert_msg(pm[i] == (i < want ? 1u : 0u),
				      "sum %u: workgroup %u ran %u times", sums[k], i, pm[i]);
	}
	accel_command_buffer_release(cb);
	accel_buffer_release(in);
	accel_buffer_release(count);
	accel_buffer_release(marks);
}
END_TEST

static Suite *cpu_suite(void)
{
	Suite *s = suite_create("cpu");
	TCase *tc = tcase_create("pool");
	bool cpu = test_device_is_cpu();
	/* Another device has no worker count to vary: one round. */
	int rounds = cpu ? (int)ACCEL_ARRAY_SIZE_T(thread_counts) : 1;

	tcase_add_loop_test(tc, test_pool_each_workgroup_once, 0, rounds);
	tcase_add_loop_test(tc, test_pool_many_commands_no_barrier, 0, rounds);
	if (cpu)
		tcase_add_test(tc, test_threads_options);
	suite_add_tcase(s, tc);

	tc = tcase_create("transfers");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_pool_large_fill);
	tcase_add_test(tc, test_pool_large_copy);
	suite_add_tcase(s, tc);

	tc = tcase_create("executables");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_executable_good);
	tcase_add_test(tc, test_executable_wrong_counts);
	if (cpu) { /* the cpu executable formats */
		tcase_add_test(tc, test_executable_bad_objects);
		tcase_add_test(tc, test_executable_linked_in);
		tcase_add_test(tc, test_executable_declared_costs);
	}
	suite_add_tcase(s, tc);

	tc = tcase_create("replay");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_replay_many_tables);
	tcase_add_test(tc, test_dispatch_indirect_count_from_dispatch);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	test_require_device();
	return test_run_suite(cpu_suite());
}
