/* SPDX-License-Identifier: MIT */
/*
 * Helpers of the suites that run work on the cpu device: opening it,
 * buffers, reading them back, the test executable.
 */
#ifndef ACCEL_TEST_ACCEL_H
#define ACCEL_TEST_ACCEL_H

#include "test-util.h"

#define ALL_USAGE ACCEL_BUFFER_USAGE_ALL
#define HOST_TYPE (ACCEL_MEMORY_TYPE_HOST_LOCAL | ACCEL_MEMORY_TYPE_HOST_VISIBLE | \
		   ACCEL_MEMORY_TYPE_HOST_COHERENT)
#define SECOND INT64_C(1000000000)

static accel_device_t *dev;
static accel_scheduler_t *sched;

static inline void device_setup(void)
{
	test_clear_env();
	setenv(ACCEL_SCHEDULER_ENV, "embedded", 1);
	ck_assert_int_eq(accel_device_open("cpu://", NULL, &dev), 0);
	sched = accel_device_scheduler(dev);
}

static inline void device_teardown(void)
{
	accel_device_release(dev);
	dev = NULL;
}

static inline accel_buffer_t *buffer_usage(uint64_t size, uint32_t usage)
{
	accel_buffer_params_t p = { HOST_TYPE, usage };
	accel_buffer_t *b = NULL;

	ASSERT_OK(accel_allocator_allocate_buffer(accel_device_allocator(dev), &p, size, &b));
	return b;
}

static inline accel_buffer_t *buffer_new(uint64_t size)
{
	return buffer_usage(size, ALL_USAGE);
}

static inline void *map(accel_buffer_t *b)
{
	void *p = NULL;

	ASSERT_OK(accel_buffer_map(b, ACCEL_MAP_READ | ACCEL_MAP_WRITE, 0,
				   ACCEL_WHOLE_BUFFER, &p));
	ASSERT_OK(accel_buffer_unmap(b)); /* cpu memory stays addressable */
	return p;
}

static inline accel_executable_t *kernels(void)
{
	accel_executable_t *e = NULL;
	const char *path = getenv("ACCEL_TEST_KERNELS");

	ck_assert_msg(path, "ACCEL_TEST_KERNELS is not set (run through meson test)");
	ASSERT_OK(accel_executable_load(dev, path, &e));
	return e;
}

static inline uint32_t entry(accel_executable_t *e, const char *name)
{
	uint32_t o = UINT32_MAX;

	ASSERT_OK(accel_executable_lookup(e, name, &o));
	return o;
}

static inline accel_semaphore_t *sem_new(uint64_t initial)
{
	accel_semaphore_t *s = NULL;

	ASSERT_OK(accel_semaphore_create(sched, initial, &s));
	return s;
}

/* A list of one point. */
#define POINT(name, sem, value)                                              \
	accel_semaphore_t *name##_s[1] = { (sem) };                          \
	uint64_t name##_v[1] = { (value) };                                  \
	accel_semaphore_list_t name = { 1, name##_s, name##_v }

static inline uint64_t sem_value(accel_semaphore_t *s, int *error)
{
	uint64_t v = 0;
	int e = 0;

	ASSERT_OK(accel_semaphore_query(s, &v, &e));
	if (error)
		*error = e;
	return v;
}

#endif /* ACCEL_TEST_ACCEL_H */
