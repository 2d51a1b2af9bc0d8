// SPDX-License-Identifier: MIT
/*
 * Device-side waits (Documentation/libaccel.rst, "Device-side waits"): a
 * submission whose waits are promised by submissions already on the same
 * device is released at once and ordered by the device (vulkan: a wait on
 * the device's timeline in vkQueueSubmit), not by the host.
 *
 * White box: the process-wide counters of executor.c say how each job was
 * ordered, so every test asserts which path ran, not only the results. On
 * cpu:// (no device timeline) every dependency is met on the host, and the
 * same tests check that the results do not depend on the path.
 */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <accel/accel.h>

#include "src/sched.h"
#include "test-accel.h"
#include "test-util.h"

static accel_executable_t *exe;
static bool device_waits; /* the device under test orders on the device */
/*
 * On the kernel scheduler the module decides which jobs are released early
 * (pipelined): those whose predecessors are released when they come, and
 * followers, pipelined when their predecessors are released (at most 64
 * waiting per engine). Whether a pipelined job then finds its predecessor
 * still on the device, or done already, is a race between threads, so
 * there the tests count some edges ordered on the device, not each one.
 */
static bool on_kernel;

static void setup(void)
{
	accel_scheduler_info_t si;

	device_setup();
	exe = kernels();
	device_waits = !test_device_is_cpu();
	ASSERT_OK(accel_scheduler_query(sched, &si));
	on_kernel = si.kind == ACCEL_SCHEDULER_KERNEL;
}

static void teardown(void)
{
	accel_executable_release(exe);
	exe = NULL;
	device_teardown();
	unsetenv("ACCEL_DEVICE_WAITS");
}

static struct accel_sched_device_stats stats(void)
{
	struct accel_sched_device_stats st;

	accel_sched_device_stats(&st);
	return st;
}

/* A command buffer of @d that increments the u32 at @counter. */
static accel_command_buffer_t *increment_cb(accel_device_t *d,
					    accel_executable_t *e,
					    accel_buffer_t *counter)
{
	const uint32_t one[3] = { 1, 1, 1 };
	accel_buffer_ref_t b[1] = { accel_buffer_ref_direct(counter, 0, 4) };
	accel_command_buffer_t *cb = NULL;

	ASSERT_OK(accel_command_buffer_create(d, 0, 0, &cb));
	ASSERT_OK(accel_command_buffer_begin(cb));
	ASSERT_OK(accel_command_buffer_dispatch(cb, e, entry(e, "increment"), one,
						NULL, 0, b, 1));
	ASSERT_OK(accel_command_buffer_end(cb));
	return cb;
}

/*
 * CHAIN submissions alternating between two queues, each waiting on the
 * one before, all submitted behind a closed gate: once the gate opens,
 * each one's predecessor is on the device before its wait is met, so on a
 * device with device-side waits every edge but the gate's is ordered
 * there, and none on the host.
 */
enum expect { NONE, SOME, EVERY };

static void chain(accel_device_t *d, accel_executable_t *e, enum expect expect)
{
	enum { CHAIN = 100 };
	accel_queue_t *q[2] = { NULL, NULL };
	accel_buffer_params_t params = { HOST_TYPE, ALL_USAGE };
	accel_buffer_t *counter = NULL;
	uint32_t *pc;
	accel_command_buffer_t *cb;
	accel_semaphore_t *gate = sem_new(0), *s[CHAIN];
	struct accel_sched_device_stats before, after;

	ASSERT_OK(accel_allocator_allocate_buffer(accel_device_allocator(d), &params,
						  16, &counter));
	pc = map(counter);
	cb = increment_cb(d, e, counter);
	pc[0] = 0;
	ASSERT_OK(accel_queue_create(d, 0, &q[0]));
	ASSERT_OK(accel_queue_create(d, 0, &q[1]));
	for (int i = 0; i < CHAIN; i++)
		s[i] = sem_new(0);
	before = stats();
	for (int i = 0; i < CHAIN; i++) {
		POINT(w, i ? s[i - 1] : gate, 1);
		POINT(sig, s[i], 1);

		ASSERT_OK(accel_queue_execute(q[i & 1], &w, &sig, cb, NULL, 0));
	}
	ck_assert_uint_eq(sem_value(s[CHAIN - 1], NULL), 0);
	ASSERT_OK(accel_semaphore_signal(gate, 1));
	ASSERT_OK(accel_semaphore_wait(s[CHAIN - 1], 1, 0, WAIT_LONG));
	after = stats();
	ck_assert_uint_eq(pc[0], CHAIN);
	if (expect == SOME) { /* the kernel scheduler's followers */
		ck_assert_uint_ge(after.device_ordered - before.device_ordered, 1);
		ck_assert_uint_le(after.device_ordered - before.device_ordered, CHAIN - 1);
	} else {
		ck_assert_uint_eq(after.device_ordered - before.device_ordered,
				  expect == EVERY ? CHAIN - 1 : 0);
	}
	/* The kernel's pipelined jobs wait on the host where nothing orders on the device. */
	if (!on_kernel || expect != NONE)
		ck_assert_uint_eq(after.host_waits - before.host_waits, 0);
	accel_command_buffer_release(cb);
	accel_queue_release(q[0]);
	accel_queue_release(q[1]);
	accel_buffer_release(counter);
	accel_semaphore_release(gate);
	for (int i = 0; i < CHAIN; i++)
		accel_semaphore_release(s[i]);
}

START_TEST(test_chain_across_queues)
{
	chain(dev, exe, !device_waits ? NONE : on_kernel ? SOME : EVERY);
}
END_TEST

/*
 * The same chain without a gate: each submission comes while its
 * predecessor is released or done. On the kernel scheduler the module
 * then releases it pipelined, and on a device with device-side waits its
 * executor orders it there as soon as the predecessor is on the device:
 * some edges at least (those whose predecessor had not completed by then),
 * and none waits on the host. The results never depend on the path.
 */
START_TEST(test_chain_released_predecessors)
{
	enum { CHAIN = 100 };
	accel_queue_t *q[2] = { NULL, NULL };
	accel_buffer_t *counter = buffer_new(16);
	uint32_t *pc = map(counter);
	accel_command_buffer_t *cb = increment_cb(dev, exe, counter);
	accel_semaphore_t *s[CHAIN];
	struct accel_sched_device_stats before, after;

	pc[0] = 0;
	ASSERT_OK(accel_queue_create(dev, 0, &q[0]));
	ASSERT_OK(accel_queue_create(dev, 0, &q[1]));
	for (int i = 0; i < CHAIN; i++)
		s[i] = sem_new(0);
	before = stats();
	for (int i = 0; i < CHAIN; i++) {
		POINT(w, s[i ? i - 1 : 0], i ? 1 : 0);
		POINT(sig, s[i], 1);

		ASSERT_OK(accel_queue_execute(q[i & 1], i ? &w : NULL, &sig, cb, NULL, 0));
	}
	ASSERT_OK(accel_semaphore_wait(s[CHAIN - 1], 1, 0, WAIT_LONG));
	after = stats();
	ck_assert_uint_eq(pc[0], CHAIN);
	if (device_waits || !on_kernel)
		ck_assert_uint_eq(after.host_waits - before.host_waits, 0);
	ck_assert_uint_le(after.device_ordered - before.device_ordered, CHAIN - 1);
	if (device_waits && on_kernel)
		ck_assert_uint_ge(after.device_ordered - before.device_ordered, 1);
	if (!device_waits)
		ck_assert_uint_eq(after.device_ordered - before.device_ordered, 0);
	accel_command_buffer_release(cb);
	accel_queue_release(q[0]);
	accel_queue_release(q[1]);
	accel_buffer_release(counter);
	for (int i = 0; i < CHAIN; i++)
		accel_semaphore_release(s[i]);
}
END_TEST

static int64_t test_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

struct later {
	accel_semaphore_t *sem;
	const void *domain; /* NULL: a host signal instead of a promise */
	uint64_t token;
};

static void *promise_later(void *arg)
{
	struct later *l = arg;

	usleep(50000);
	if (l->domain)
		sched->ops->sem_device_promise(l->sem, l->domain, 1, l->token);
	else
		ASSERT_OK(accel_semaphore_signal(l->sem, 1));
	return NULL;
}

/*
 * White box, the kernel scheduler's: what its executor decides for a
 * pipelined job (ops->job_device_wait) from its waits' device promises: on
 * the device with the largest token; nothing to order once reached; the
 * host for a failed wait or one promised on another device; and, for a
 * predecessor not yet on the device, wait for its promise (then on the
 * device) or for the point (then a host wait).
 */
START_TEST(test_kernel_device_wait_verdicts)
{
	static const int here = 0, other = 0;
	accel_semaphore_t *a, *b, *c, *d, *e;
	struct accel_sched_point w[2];
	struct accel_sched_job job;
	struct later l;
	pthread_t th;
	uint64_t token = 0;
	int64_t t0;

	if (!on_kernel)
		TEST_SKIP("the kernel scheduler's executor (ACCEL_SCHEDULER=kernel, in the VM)");
	a = sem_new(0);
	b = sem_new(0);
	c = sem_new(0);
	d = sem_new(0);
	e = sem_new(0);
	memset(&job, 0, sizeof(job));
	job.waits = w;
	job.domain = &here;
	atomic_init(&job.pipelined, true);
	/* Promised here: on the device, the largest token. */
	sched->ops->sem_device_promise(a, &here, 1, 42);
	sched->ops->sem_device_promise(b, &here, 2, 57);
	w[0] = (struct accel_sched_point){ a, 1 };
	w[1] = (struct accel_sched_point){ b, 2 };
	job.wait_count = 2;
	ck_assert_int_eq(sched->ops->job_device_wait(sched, &job, &token), 1);
	ck_assert_uint_eq(token, 57);
	/* A promise below the value waited for does not count... */
	w[1].value = 3;
	/* ...and one on another device sends the job to the host. */
	sched->ops->sem_device_promise(b, &other, 3, 99);
	ck_assert_int_eq(sched->ops->job_device_wait(sched, &job, &token), -1);
	/* Reached: nothing to order, whatever was promised. */
	ASSERT_OK(accel_semaphore_signal(a, 1));
	job.wait_count = 1;
	ck_assert_int_eq(sched->ops->job_device_wait(sched, &job, &token), 0);
	/* Failed: the host path, which says why. */
	sched->ops->sem_device_promise(c, &here, 1, 5);
	ck_assert_int_eq(sched->ops->sem_fail(c, -EIO, "test: c failed"), 0);
	w[0] = (struct accel_sched_point){ c, 1 };
	ck_assert_int_eq(sched->ops->job_device_wait(sched, &job, &token), -1);
	/* Not yet on the device: it waits for the promise... */
	w[0] = (struct accel_sched_point){ d, 1 };
	l = (struct later){ d, &here, 7 };
	t0 = test_now_ns();
	ck_assert_int_eq(pthread_create(&th, NULL, promise_later, &l), 0);
	ck_assert_int_eq(sched->ops->job_device_wait(sched, &job, &token), 1);
	pthread_join(th, NULL);
	ck_assert_uint_eq(token, 7);
	ck_assert_int_ge(test_now_ns() - t0, 40000000);
	/* ...or for the point, reached without a promise: a host wait. */
	w[0] = (struct accel_sched_point){ e, 1 };
	l = (struct later){ e, NULL, 0 };
	ck_assert_int_eq(pthread_create(&th, NULL, promise_later, &l), 0);
	ck_assert_int_eq(sched->ops->job_device_wait(sched, &job, &token), -1);
	pthread_join(th, NULL);
	accel_semaphore_release(a);
	accel_semaphore_release(b);
	accel_semaphore_release(c);
	accel_semaphore_release(d);
	accel_semaphore_release(e);
}
END_TEST

/* ACCEL_DEVICE_WAITS=0: the same chain, every edge on the host. */
START_TEST(test_chain_host_when_disabled)
{
	accel_device_t *d = NULL;
	accel_executable_t *e = NULL;

	setenv("ACCEL_DEVICE_WAITS", "0", 1);
	ASSERT_OK(accel_device_open(test_device_uri(), sched, &d));
	ASSERT_OK(accel_executable_load(d, getenv("ACCEL_TEST_KERNELS"), &e));
	chain(d, e, NONE);
	accel_executable_release(e);
	accel_device_release(d);
}
END_TEST

START_TEST(test_bad_env)
{
	const char *bad[] = { "2", "yes", "00", "1 ", "-1" };
	accel_device_t *d = (accel_device_t *)&d;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char want[64];

		setenv("ACCEL_DEVICE_WAITS", bad[i], 1);
		ASSERT_ERRNO(accel_device_open(test_device_uri(), sched, &d), EINVAL);
		ck_assert_ptr_null(d);
		snprintf(want, sizeof(want), "ACCEL_DEVICE_WAITS is \"%s\"", bad[i]);
		ASSERT_MESSAGE_CONTAINS(want);
		ASSERT_MESSAGE_CONTAINS("it must be 0");
	}
	/* Empty means unset. */
	setenv("ACCEL_DEVICE_WAITS", "", 1);
	ASSERT_OK(accel_device_open(test_device_uri(), sched, &d));
	accel_device_release(d);
}
END_TEST

/*
 * The predecessor's dispatch-indirect count is out of range. Vulkan
 * learns that at completion, on the device: its device-ordered successor
 * ran, but its signal fails with the predecessor's failure, and so does the
 * next one's, never reached ahead of its waits. cuda reads the count back
 * on the host before it launches, and cpu has no device timeline: there
 * the predecessor fails before it is on the device, and the successors are
 * not run.
 */
START_TEST(test_failed_predecessor)
{
	accel_buffer_t *count = buffer_new(12), *o = buffer_new(16);
	uint32_t *pc = map(count), *po = map(o), v = 7;
	accel_buffer_ref_t ob[1] = { accel_buffer_ref_direct(o, 0, 4) };
	accel_command_buffer_t *bad = cb_new(0, 0), *fill = cb_new(0, 0);
	accel_semaphore_t *gate = sem_new(0), *a = sem_new(0), *b = sem_new(0),
			  *c = sem_new(0);
	accel_queue_t *q2 = NULL;
	struct accel_sched_device_stats before, after;
	const char *m;
	int error;

	pc[0] = 1;
	pc[1] = ACCEL_WORKGROUP_COUNT_MAX + 1;
	pc[2] = 1;
	memset(po, 0, 16);
	ASSERT_OK(accel_command_buffer_dispatch_indirect(bad, exe, entry(exe, "increment"),
			accel_buffer_ref_direct(count, 0, 12), NULL, 0, ob, 1));
	ASSERT_OK(accel_command_buffer_end(bad));
	ASSERT_OK(accel_command_buffer_fill(fill, accel_buffer_ref_direct(o, 4, 4), &v, 4));
	ASSERT_OK(accel_command_buffer_end(fill));
	ASSERT_OK(accel_queue_create(dev, 0, &q2));
	before = stats();
	{
		POINT(wg, gate, 1);
		POINT(sa, a, 1);
		POINT(sb, b, 1);
		POINT(sc, c, 1);

		ASSERT_OK(accel_queue_execute(q2, &wg, &sa, bad, NULL, 0));
		ASSERT_OK(accel_queue_execute(q2, &sa, &sb, fill, NULL, 0));
		ASSERT_OK(accel_queue_execute(q2, &sb, &sc, fill, NULL, 0));
	}
	ASSERT_OK(accel_semaphore_signal(gate, 1));
	ASSERT_ERRNO(accel_semaphore_wait(c, 1, 0, WAIT_LONG), ERANGE);
	after = stats();
	sem_value(b, &error);
	ck_assert_int_eq(error, -ERANGE);
	m = accel_semaphore_failure_message(b);
	ASSERT_CONTAINS("b's failure", m, "(1, 65536, 1)");
	if (strncmp(test_device_uri(), "vulkan:", 7) == 0 && on_kernel) {
		/*
		 * Pipelined as followers: each of b and c ran on the device
		 * after a, or (a already failed when its executor looked)
		 * waited for a on the host and was not run.
		 */
		ck_assert_uint_eq(after.device_ordered - before.device_ordered +
				  after.host_waits - before.host_waits, 2);
		if (!strstr(m, "ran on the device after its wait 0 (value 1) failed with ERANGE, so its results are void"))
			ASSERT_CONTAINS("b's failure", m, "was not run: its wait 0 (value 1) failed with ERANGE");
	} else if (strncmp(test_device_uri(), "vulkan:", 7) == 0) {
		/* b and c were on the device before a failed. */
		ck_assert_uint_eq(after.device_ordered - before.device_ordered, 2);
		ASSERT_CONTAINS("b's failure", m, "ran on the device after its wait 0 (value 1) failed with ERANGE, so its results are void");
		ck_assert_uint_eq(po[1], 7); /* it ran */
	} else {
		ck_assert_uint_eq(after.device_ordered - before.device_ordered, 0);
		ASSERT_CONTAINS("b's failure", m, "was not run: its wait 0 (value 1) failed with ERANGE");
		ck_assert_uint_eq(po[1], 0);
	}
	if (!on_kernel)
		ck_assert_uint_eq(after.host_waits - before.host_waits, 0);
	sem_value(c, &error);
	ck_assert_int_eq(error, -ERANGE);
	ASSERT_CONTAINS("c's failure", accel_semaphore_failure_message(c), "(1, 65536, 1)");
	accel_queue_release(q2);
	accel_command_buffer_release(bad);
	accel_command_buffer_release(fill);
	accel_buffer_release(count);
	accel_buffer_release(o);
	accel_semaphore_release(gate);
	accel_semaphore_release(a);
	accel_semaphore_release(b);
	accel_semaphore_release(c);
}
END_TEST

/*
 * A point promised on another device (another VkDevice, though the same
 * URI) cannot be waited for on this one: that edge is met on the host.
 */
START_TEST(test_other_device_on_host)
{
	accel_device_t *d2 = NULL;
	accel_queue_t *q1 = NULL, *q2 = NULL;
	accel_buffer_t *x = buffer_new(16);
	uint32_t *px = map(x), v = 5;
	accel_command_buffer_t *c1 = cb_new(0, 0), *c2 = NULL;
	accel_semaphore_t *gate = sem_new(0), *a = sem_new(0), *b = sem_new(0);
	struct accel_sched_device_stats before, after;

	memset(px, 0, 16);
	ASSERT_OK(accel_device_open(test_device_uri(), sched, &d2));
	ASSERT_OK(accel_command_buffer_fill(c1, accel_buffer_ref_direct(x, 0, 4), &v, 4));
	ASSERT_OK(accel_command_buffer_end(c1));
	ASSERT_OK(accel_command_buffer_create(d2, 0, 0, &c2));
	ASSERT_OK(accel_command_buffer_begin(c2));
	ASSERT_OK(accel_command_buffer_end(c2)); /* empty: d2's side of the edge */
	ASSERT_OK(accel_queue_create(dev, 0, &q1));
	ASSERT_OK(accel_queue_create(d2, 0, &q2));
	before = stats();
	{
		POINT(wg, gate, 1);
		POINT(sa, a, 1);
		POINT(sb, b, 1);

		ASSERT_OK(accel_queue_execute(q1, &wg, &sa, c1, NULL, 0));
		ASSERT_OK(accel_queue_execute(q2, &sa, &sb, c2, NULL, 0));
	}
	ASSERT_OK(accel_semaphore_signal(gate, 1));
	ASSERT_OK(accel_semaphore_wait(b, 1, 0, WAIT_LONG));
	after = stats();
	ck_assert_uint_eq(px[0], 5);
	ck_assert_uint_eq(sem_value(a, NULL), 1);
	ck_assert_uint_eq(after.device_ordered - before.device_ordered, 0);
	accel_queue_release(q1);
	accel_queue_release(q2);
	accel_command_buffer_release(c1);
	accel_command_buffer_release(c2);
	accel_device_release(d2);
	accel_buffer_release(x);
	accel_semaphore_release(gate);
	accel_semaphore_release(a);
	accel_semaphore_release(b);
}
END_TEST

/*
 * A batch promises its signals when its last command buffer is on the
 * device: the successor sees what the last one wrote.
 */
START_TEST(test_batch_then_successor)
{
	accel_buffer_t *x = buffer_new(16);
	uint32_t *px = map(x);
	accel_command_buffer_t *f[3], *copy = cb_new(0, 0);
	accel_semaphore_t *gate = sem_new(0), *a = sem_new(0), *b = sem_new(0);
	struct accel_sched_device_stats before, after;

	memset(px, 0, 16);
	for (uint32_t i = 0; i < 3; i++) {
		uint32_t v = i + 1;

		f[i] = cb_new(0, 0);
		ASSERT_OK(accel_command_buffer_fill(f[i], accel_buffer_ref_direct(x, 0, 4), &v, 4));
		ASSERT_OK(accel_command_buffer_end(f[i]));
	}
	ASSERT_OK(accel_command_buffer_copy(copy, accel_buffer_ref_direct(x, 0, 4),
					    accel_buffer_ref_direct(x, 8, 4)));
	ASSERT_OK(accel_command_buffer_end(copy));
	before = stats();
	{
		POINT(wg, gate, 1);
		POINT(sa, a, 1);
		POINT(sb, b, 1);
		accel_queue_t *q = NULL;

		ASSERT_OK(accel_queue_create(dev, 0, &q));
		ASSERT_OK(accel_queue_execute_batch(q, &wg, &sa, 3, f, NULL, 0));
		ASSERT_OK(accel_queue_execute(q, &sa, &sb, copy, NULL, 0));
		ASSERT_OK(accel_semaphore_signal(gate, 1));
		ASSERT_OK(accel_semaphore_wait(b, 1, 0, WAIT_LONG));
		accel_queue_release(q);
	}
	after = stats();
	ck_assert_uint_eq(px[0], 3);
	ck_assert_uint_eq(px[2], 3);
	/* On the kernel scheduler: if the batch was still on the device. */
	if (device_waits && on_kernel)
		ck_assert_uint_le(after.device_ordered - before.device_ordered, 1);
	else
		ck_assert_uint_eq(after.device_ordered - before.device_ordered,
				  device_waits ? 1 : 0);
	if (device_waits || !on_kernel)
		ck_assert_uint_eq(after.host_waits - before.host_waits, 0);
	for (uint32_t i = 0; i < 3; i++)
		accel_command_buffer_release(f[i]);
	accel_command_buffer_release(copy);
	accel_buffer_release(x);
	accel_semaphore_release(gate);
	accel_semaphore_release(a);
	accel_semaphore_release(b);
}
END_TEST

/*
 * Three threads, each a chain on its own two queues of the one device,
 * every chain also waiting on the other threads' progress: promises,
 * device-met waits and completions race on shared semaphores.
 */
enum { THREADS = 3, STEPS = 60 };
static accel_semaphore_t *progress[THREADS];
static accel_buffer_t *counters;

static void *chain_thread(void *arg)
{
	uintptr_t t = (uintptr_t)arg;
	accel_queue_t *q[2] = { NULL, NULL };
	accel_buffer_t *mine = NULL;
	accel_command_buffer_t *cb;

	ASSERT_OK(accel_buffer_subspan(counters, t * 16, 16, &mine));
	cb = increment_cb(dev, exe, mine);
	ASSERT_OK(accel_queue_create(dev, 0, &q[0]));
	ASSERT_OK(accel_queue_create(dev, 0, &q[1]));
	for (uint64_t i = 1; i <= STEPS; i++) {
		/* My previous step, and the other threads' step before. */
		accel_semaphore_t *ws[THREADS];
		uint64_t wv[THREADS];
		accel_semaphore_list_t w = { 0, ws, wv };
		POINT(sig, progress[t], i);

		for (uint32_t o = 0; o < THREADS; o++) {
			if (o == t && i == 1)
				continue;
			if (o != t && i < 3)
				continue;
			ws[w.count] = progress[o];
			wv[w.count++] = o == t ? i - 1 : i - 2;
		}
		ASSERT_OK(accel_queue_execute(q[i & 1], w.count ? &w : NULL, &sig,
					      cb, NULL, 0));
	}
	ASSERT_OK(accel_semaphore_wait(progress[t], STEPS, 0, WAIT_LONG));
	accel_command_buffer_release(cb);
	accel_queue_release(q[0]);
	accel_queue_release(q[1]);
	accel_buffer_release(mine);
	return NULL;
}

START_TEST(test_threads_cross_chains)
{
	pthread_t th[THREADS];
	uint32_t *pc;

	counters = buffer_new(16 * THREADS);
	pc = map(counters);
	memset(pc, 0, 16 * THREADS);
	for (uintptr_t t = 0; t < THREADS; t++)
		progress[t] = sem_new(0);
	for (uintptr_t t = 0; t < THREADS; t++)
		ck_assert_int_eq(pthread_create(&th[t], NULL, chain_thread, (void *)t), 0);
	for (uintptr_t t = 0; t < THREADS; t++)
		pthread_join(th[t], NULL);
	for (uintptr_t t = 0; t < THREADS; t++) {
		ck_assert_uint_eq(pc[t * 4], STEPS);
		accel_semaphore_release(progress[t]);
	}
	accel_buffer_release(counters);
}
END_TEST

static Suite *device_waits_suite(void)
{
	Suite *s = suite_create("device-waits");
	TCase *tc = tcase_create("device-waits");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_chain_across_queues);
	tcase_add_test(tc, test_chain_released_predecessors);
	tcase_add_test(tc, test_kernel_device_wait_verdicts);
	tcase_add_test(tc, test_chain_host_when_disabled);
	tcase_add_test(tc, test_bad_env);
	tcase_add_test(tc, test_failed_predecessor);
	tcase_add_test(tc, test_other_device_on_host);
	tcase_add_test(tc, test_batch_then_successor);
	tcase_add_test(tc, test_threads_cross_chains);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	test_require_device();
	return test_run_suite(device_waits_suite());
}
