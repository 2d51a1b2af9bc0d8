/* SPDX-License-Identifier: MIT */
/*
 * Helpers of the suites that run work on the cpu device: opening it,
 * buffers, reading them back, the test executable.
 *
 * The device runs on the embedded scheduler, unless the environment says
 * ACCEL_SCHEDULER=kernel (the suites then run against the module, in the
 * VM); ACCEL_TEST_NO_URING=1 forbids io_uring to the test (a seccomp
 * filter, as a container's profile would), so that the kernel scheduler's
 * ioctl path runs. Statically linked variants (-DACCEL_TEST_STATIC_KERNELS)
 * link the test kernels in rather than dlopen() them.
 */
#ifndef ACCEL_TEST_ACCEL_H
#define ACCEL_TEST_ACCEL_H

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include <accel/cpu_executable.h>

#include "test-util.h"

#ifdef ACCEL_TEST_STATIC_KERNELS
extern const struct accel_cpu_executable accel_cpu_executable_v1;
#endif

#define ALL_USAGE ACCEL_BUFFER_USAGE_ALL
#define HOST_TYPE (ACCEL_MEMORY_TYPE_HOST_LOCAL | ACCEL_MEMORY_TYPE_HOST_VISIBLE | \
		   ACCEL_MEMORY_TYPE_HOST_COHERENT)
#define SECOND INT64_C(1000000000)
/* How long a test waits for work that should finish: generous (TCG, TSan). */
#define WAIT_LONG accel_deadline_after(30 * SECOND)

static accel_device_t *dev;
static accel_scheduler_t *sched;

/* Makes io_uring_setup fail with ENOSYS in this (forked) test process. */
static inline void test_deny_io_uring(void)
{
	struct sock_filter filter[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(filter) / sizeof(filter[0]), filter };

	ck_assert_msg(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0,
		      "PR_SET_NO_NEW_PRIVS: %s", strerror(errno));
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == 0)
		return;
	/* A kernel without seccomp filters (the debug VM kernel): ask. */
	ck_assert_msg(errno == EINVAL, "cannot install the seccomp filter: %s",
		      strerror(errno));
	setenv(ACCEL_URING_ENV, "0", 1);
}

/* True when the suite runs against the module (ACCEL_SCHEDULER=kernel). */
static inline bool test_kernel_mode(void)
{
	const char *kind = getenv(ACCEL_SCHEDULER_ENV);

	return kind && strcmp(kind, "kernel") == 0;
}

/*
 * The module's cpu engine's credit limit, the administrator's sysfs file,
 * for tests that set it (the arbiter and tenant tests, as root in the VM).
 * test_credits_save() runs in the runner before the tests (an unchecked
 * fixture): it keeps the limit, or the module's default for an engine not
 * made yet; test_credits_restore() puts it back after each test and, from
 * the runner, after them all, should a failed test not reach its teardown.
 */
#define TEST_ENGINE_CREDITS "/sys/kernel/accelsched/engines/cpu/credits"
#define TEST_DEFAULT_CREDITS "/sys/module/accelsched/parameters/default_credits"
static char test_saved_credits[32];

/* Read a line of @path into @buf (newline dropped), or write @put; 0 or -errno. */
static inline int test_file_io(const char *path, char *buf, size_t len,
			       const char *put)
{
	FILE *f = fopen(path, put ? "w" : "r");
	int err = 0;

	if (!f)
		return -errno;
	/*
	 * The read's or the write's own errno (a sysfs file whose object
	 * went after the open reads -ENODEV); -EIO for an empty file.
	 */
	errno = 0;
	if (!(put ? fputs(put, f) >= 0 : fgets(buf, (int)len, f) != NULL))
		err = errno ? -errno : -EIO;
	errno = 0;
	if (fclose(f) && !err)
		err = errno ? -errno : -EIO;
	if (err)
		return err;
	if (buf)
		buf[strcspn(buf, "\n")] = 0;
	return 0;
}

static inline void test_credits_save(void)
{
	if (!test_kernel_mode())
		return;
	if (test_file_io(TEST_ENGINE_CREDITS, test_saved_credits,
			 sizeof(test_saved_credits), NULL))
		test_file_io(TEST_DEFAULT_CREDITS, test_saved_credits,
			     sizeof(test_saved_credits), NULL);
}

static inline void test_credits_restore(void)
{
	int err;

	if (!test_kernel_mode() || !test_saved_credits[0] ||
	    access(TEST_ENGINE_CREDITS, F_OK))
		return;
	err = test_file_io(TEST_ENGINE_CREDITS, NULL, 0, test_saved_credits);
	ck_assert_msg(err == 0 || err == -EACCES, "restoring %s to %s failed: %s",
		      TEST_ENGINE_CREDITS, test_saved_credits, strerror(-err));
}

/*
 * The device under test: ACCEL_TEST_DEVICE, default "cpu://". meson runs
 * the device-agnostic suites (queue, command-buffer, the replay part of
 * cpu) once more on vulkan://0, ACCEL_TEST_KERNELS then naming the vulkan
 * build of the same kernels (same entry points, same names, same order).
 */
static inline const char *test_device_uri(void)
{
	const char *uri = getenv("ACCEL_TEST_DEVICE");

	return uri && *uri ? uri : "cpu://";
}

static inline bool test_device_is_cpu(void)
{
	return strncmp(test_device_uri(), "cpu:", 4) == 0;
}

/* In main(): exits 77 (meson's SKIP), saying why, if the device is absent. */
static inline void test_require_device(void)
{
	accel_device_t *d = NULL;
	int err;

	if (test_device_is_cpu())
		return;
	err = accel_device_open(test_device_uri(), NULL, &d);
	if (err == -ENODEV) {
		printf("SKIP: %s: %s\n", test_device_uri(), accel_error_message());
		exit(77);
	}
	accel_device_release(d);
}

static inline void device_setup(void)
{
	bool kernel = test_kernel_mode();
	const char *no_uring = getenv("ACCEL_TEST_NO_URING");

	if (kernel && no_uring && strcmp(no_uring, "1") == 0)
		test_deny_io_uring();
	test_clear_env();
	setenv(ACCEL_SCHEDULER_ENV, kernel ? "kernel" : "embedded", 1);
	ASSERT_OK(accel_device_open(test_device_uri(), NULL, &dev));
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
	ASSERT_OK(accel_buffer_unmap(b)); /* host-visible memory stays mapped */
	return p;
}

static inline accel_executable_t *kernels(void)
{
	accel_executable_t *e = NULL;
#ifdef ACCEL_TEST_STATIC_KERNELS
	ASSERT_OK(accel_cpu_executable_create(dev, &accel_cpu_executable_v1, &e));
#else
	const char *path = getenv("ACCEL_TEST_KERNELS");

	ck_assert_msg(path, "ACCEL_TEST_KERNELS is not set (run through meson test)");
	ASSERT_OK(accel_executable_load(dev, path, &e));
#endif
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

/* A command buffer of the device under test, begun. */
static inline accel_command_buffer_t *cb_new(uint32_t mode, uint32_t capacity)
{
	accel_command_buffer_t *cb = NULL;

	ASSERT_OK(accel_command_buffer_create(dev, mode, capacity, &cb));
	ASSERT_OK(accel_command_buffer_begin(cb));
	return cb;
}

/* Submits @cb with @table on @q, waits for it, and returns its status. */
static inline int run_on(accel_queue_t *q, accel_command_buffer_t *cb,
			 const accel_binding_table_t *table)
{
	accel_semaphore_t *s = sem_new(0);
	POINT(sig, s, 1);
	int err;

	ASSERT_OK(accel_queue_execute(q, NULL, &sig, cb, table, 0));
	err = accel_semaphore_wait(s, 1, 0, WAIT_LONG);
	accel_semaphore_release(s);
	return err;
}

#endif /* ACCEL_TEST_ACCEL_H */
