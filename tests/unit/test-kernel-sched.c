// SPDX-License-Identifier: MIT
/*
 * Check suite "kernel-sched": libaccel on the module's job scheduler.
 *
 * Queue submissions must become kernel jobs: the module accounts their
 * engine time to the device file (fdinfo), knows their promises, and
 * propagates their failures from queue to queue; the io_uring path and the
 * ioctl path (io_uring forbidden by seccomp) must behave alike, and a job
 * the module times out must fail with a message that says so.
 *
 * Runs where /dev/accelsched answers (the VM, through scripts/check.sh);
 * elsewhere every test prints "SKIP:" and passes. The kernels are linked
 * in (accel_cpu_executable_create()), so the static variant needs no
 * dlopen().
 */
#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#include <accelsched.h>

#include "test-accel.h"

#define TIMEOUT_PARAM "/sys/module/accelsched/parameters/job_timeout_ms"

/* bindings: out (u32[]); constants: value. Every workgroup fills 64. */
static void k_fill(const struct accel_cpu_dispatch *d)
{
	uint32_t *out = d->bindings[0];
	uint64_t n = d->binding_lengths[0] / 4, b = (uint64_t)d->workgroup_id[0] * 64;

	for (uint64_t i = b; i < b + 64 && i < n; i++)
		out[i] = d->constants[0];
}

/* constants: milliseconds to sleep (once, in workgroup 0). */
static void k_sleep(const struct accel_cpu_dispatch *d)
{
	struct timespec ts = { d->constants[0] / 1000,
			       (long)(d->constants[0] % 1000) * 1000000L };

	if (!d->workgroup_id[0])
		nanosleep(&ts, NULL);
}

static const struct accel_cpu_entry k_entries[] = {
	{ "fill", 1, 1, { 64, 1, 1 }, k_fill },
	{ "sleep", 0, 1, { 1, 1, 1 }, k_sleep },
};

static const struct accel_cpu_executable k_table = {
	ACCEL_CPU_EXECUTABLE_ABI_VERSION, 2, k_entries, NULL,
};

static accel_executable_t *exe;
static accel_queue_t *queue;

/* Skips unless the module answers; sets up the device (io_uring or not). */
static bool kernel_setup(bool deny_uring)
{
	accel_scheduler_options_t o;
	accel_scheduler_t *s;

	test_clear_env();
	if (deny_uring)
		test_deny_io_uring();
	accel_scheduler_options_init(&o);
	o.kind = ACCEL_SCHEDULER_KERNEL;
	if (accel_scheduler_open(&o, &s)) {
		printf("SKIP: no kernel scheduler here: %s\n", accel_error_message());
		return false;
	}
	ASSERT_OK(accel_device_open("cpu://", s, &dev));
	accel_scheduler_release(s);
	sched = accel_device_scheduler(dev);
	ASSERT_OK(accel_cpu_executable_create(dev, &k_table, &exe));
	ASSERT_OK(accel_queue_create(dev, 0, &queue));
	return true;
}

static void kernel_teardown(void)
{
	accel_queue_release(queue);
	queue = NULL;
	accel_executable_release(exe);
	exe = NULL;
	device_teardown();
}

static bool uses_uring(void)
{
	accel_scheduler_info_t info;

	ASSERT_OK(accel_scheduler_query(sched, &info));
	return info.uring;
}

/*
 * The sum, over the fdinfo lines of this process's device file(s) that
 * start with @prefix, of the number right after @key in the line (after
 * @prefix when @key is NULL): ("drm-engine-cpu:", NULL) the engine time,
 * ("accel-released-cpu:", NULL) the jobs, ("accel-queue-",
 * " predicted_ns=") the queues' predictions.
 */
static uint64_t fdinfo_sum(const char *prefix, const char *key)
{
	char path[300], target[64], line[512];
	uint64_t total = 0;
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int found = 0;

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d))) {
		ssize_t n;
		FILE *f;

		snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
		n = readlink(path, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = '\0';
		if (strcmp(target, "/dev/" ACCEL_DEVICE_NAME) != 0)
			continue;
		found++;
		snprintf(path, sizeof(path), "/proc/self/fdinfo/%s", e->d_name);
		f = fopen(path, "re");
		ck_assert_msg(f != NULL, "fopen(%s): %s", path, strerror(errno));
		while (fgets(line, sizeof(line), f)) {
			const char *v = line + strlen(prefix);
			unsigned long long ns;

			if (strncmp(line, prefix, strlen(prefix)) != 0)
				continue;
			if (key)
				v = strstr(line, key);
			if (v && sscanf(v + (key ? strlen(key) : 0), "%llu", &ns) == 1)
				total += ns;
		}
		fclose(f);
	}
	closedir(d);
	ck_assert_msg(found > 0, "no fd of this process is /dev/%s", ACCEL_DEVICE_NAME);
	return total;
}

static accel_command_buffer_t *fill_cb(accel_buffer_t *b, uint32_t n, uint32_t v)
{
	accel_command_buffer_t *cb = NULL;
	accel_buffer_ref_t r[1] = { accel_buffer_ref_direct(b, 0, ACCEL_WHOLE_BUFFER) };
	uint32_t wg[3] = { (n + 63) / 64, 1, 1 };

	ASSERT_OK(accel_command_buffer_create(dev, ACCEL_COMMAND_BUFFER_REUSABLE, 0, &cb));
	ASSERT_OK(accel_command_buffer_begin(cb));
	ASSERT_OK(accel_command_buffer_dispatch(cb, exe, 0, wg, &v, 1, r, 1));
	ASSERT_OK(accel_command_buffer_end(cb));
	return cb;
}

/* ---- the work goes through the module ------------------------------------ */

static void jobs_are_kernel_jobs(bool deny_uring)
{
	enum { N = 1 << 20 };
	accel_buffer_t *b;
	accel_command_buffer_t *cb;
	accel_semaphore_t *gate, *s;
	uint64_t before, after;

	if (!kernel_setup(deny_uring))
		return;
	ck_assert_int_eq(uses_uring(), !deny_uring);
	b = buffer_new(N * 4);
	cb = fill_cb(b, N, 0x600d);
	gate = sem_new(0);
	s = sem_new(0);
	{
		POINT(w, gate, 1);
		POINT(sig, s, 1);

		memset(map(b), 0, N * 4);
		before = fdinfo_sum("drm-engine-cpu:", NULL);
		ASSERT_OK(accel_queue_execute(queue, &w, &sig, cb, NULL, 0));
		/* The module holds the promise: wait-for-submitted answers now. */
		ASSERT_OK(accel_semaphore_wait(s, 1, ACCEL_SEMAPHORE_WAIT_SUBMITTED, 0));
		ASSERT_ERRNO(accel_semaphore_wait(s, 1, 0, 0), ETIME);
		ASSERT_OK(accel_semaphore_signal(gate, 1));
		ASSERT_OK(accel_semaphore_wait(s, 1, 0, WAIT_LONG));
	}
	test_expect_u32(map(b), N, 0x600d, "buffer");
	after = fdinfo_sum("drm-engine-cpu:", NULL);
	ck_assert_msg(after > before,
		      "fdinfo drm-engine-cpu did not grow (%" PRIu64 " then %" PRIu64 " ns): the work did not run as a kernel job",
		      before, after);
	accel_semaphore_release(gate);
	accel_semaphore_release(s);
	accel_command_buffer_release(cb);
	accel_buffer_release(b);
	kernel_teardown();
}

START_TEST(test_jobs_are_kernel_jobs_uring)
{
	jobs_are_kernel_jobs(false);
}
END_TEST

START_TEST(test_jobs_are_kernel_jobs_ioctl)
{
	jobs_are_kernel_jobs(true);
}
END_TEST

/* A copy of variable @name (NULL if unset), for env_restore(). */
static char *env_save(const char *name)
{
	const char *was = getenv(name);

	return was ? strdup(was) : NULL;
}

/* Put @name back as env_save() found it; frees @saved. */
static void env_restore(const char *name, char *saved)
{
	if (saved)
		setenv(name, saved, 1);
	else
		unsetenv(name);
	free(saved);
}

/*
 * ACCEL_URING_SQPOLL: the ring is polled by a kernel thread and the reason
 * says so; a submission's points are promised by the time this process
 * looks (a wait for submitted points with no time to wait passes right
 * after it), and the work still runs as kernel jobs. A bad value is said
 * in the reason and ignored: io_uring still works, unpolled.
 */
START_TEST(test_jobs_are_kernel_jobs_polled)
{
	char *saved = env_save(ACCEL_URING_SQPOLL_ENV);
	const char *reason;

	setenv(ACCEL_URING_SQPOLL_ENV, "bogus", 1);
	if (!kernel_setup(false))
		goto out;
	reason = accel_scheduler_reason(sched);
	ASSERT_CONTAINS("reason", reason, "ACCEL_URING_SQPOLL='bogus' ignored");
	ck_assert(uses_uring());
	kernel_teardown();

	setenv(ACCEL_URING_SQPOLL_ENV, "2", 1);
	ck_assert(kernel_setup(false));
	reason = accel_scheduler_reason(sched);
	if (!strstr(reason, "was refused"))
		ASSERT_CONTAINS("reason", reason, "polled by a kernel thread (idle 2 ms)");
	kernel_teardown();
	jobs_are_kernel_jobs(false);
out:
	env_restore(ACCEL_URING_SQPOLL_ENV, saved);
}
END_TEST

/* Is @nr a poll(2) of some kind? */
static bool is_poll(long nr)
{
#ifdef SYS_poll
	if (nr == SYS_poll)
		return true;
#endif
	return nr == SYS_ppoll;
}

/* The id of a thread of this process named @comm, or -1 if none is. */
static long thread_named(const char *comm)
{
	char path[300], buf[256];
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	long tid = -1;

	ck_assert_ptr_nonnull(d);
	while (tid < 0 && (e = readdir(d))) {
		FILE *f;

		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		if (fgets(buf, sizeof(buf), f) && strcspn(buf, "\n") == strlen(comm) &&
		    strncmp(buf, comm, strlen(comm)) == 0)
			tid = strtol(e->d_name, NULL, 10);
		fclose(f);
	}
	closedir(d);
	return tid;
}

/*
 * The system call the thread named @comm of this process is blocked in,
 * from /proc/self/task/TID/syscall, read every 10 ms until it is a poll
 * (a thread blocked for a moment on a lock is not asleep) or 5 s pass:
 * the last one it was blocked in, -1 if it never was, -2 if no thread has
 * that name.
 */
static long blocked_syscall(const char *comm)
{
	char path[64], buf[256];
	long tid = thread_named(comm), nr = -1;

	if (tid < 0)
		return -2;
	snprintf(path, sizeof(path), "/proc/self/task/%ld/syscall", tid);
	for (int tries = 0; tries < 500 && !is_poll(nr); tries++) {
		FILE *f;

		if (tries)
			usleep(10000);
		f = fopen(path, "re");
		ck_assert_msg(f != NULL, "fopen(%s): %s", path, strerror(errno));
		if (fgets(buf, sizeof(buf), f) && isdigit((unsigned char)buf[0]))
			nr = strtol(buf, NULL, 10);
		fclose(f);
	}
	return nr;
}

/*
 * The reaper sleeps in poll(2) on the device fd and on the eventfd the
 * ring signals, not in io_uring_enter: a thread waiting there for
 * completions makes every submission's io_uring_enter wake its wait
 * queue. Jobs still run, and a refused SUBMIT's CQE still reaches it.
 */
START_TEST(test_reaper_sleeps_in_poll)
{
	accel_buffer_t *b;
	accel_command_buffer_t *cb;
	accel_semaphore_t *s;
	long nr;

	if (!kernel_setup(false))
		return;
	ck_assert(uses_uring());
	b = buffer_new(64 * 4);
	cb = fill_cb(b, 64, 7);
	s = sem_new(0);
	{
		POINT(sig, s, 1);
		POINT(again, s, 1);

		ASSERT_OK(accel_queue_execute(queue, NULL, &sig, cb, NULL, 0));
		ASSERT_OK(accel_semaphore_wait(s, 1, 0, WAIT_LONG));
		nr = blocked_syscall("accel-reap");
		ck_assert_msg(nr != -2, "no thread of this process is named accel-reap");
		ck_assert_msg(is_poll(nr),
			"the reaper is blocked in system call %ld, not poll or ppoll (io_uring_enter is %d; -1: it never blocked in 5 s)",
			nr, SYS_io_uring_enter);
		/* A point the semaphore has passed: the job runs, the signal fails. */
		ASSERT_OK(accel_queue_execute(queue, NULL, &again, cb, NULL, 0));
		ASSERT_ERRNO(accel_semaphore_wait(s, 2, 0, WAIT_LONG), EINVAL);
	}
	test_expect_u32(map(b), 64, 7, "buffer");
	accel_semaphore_release(s);
	accel_command_buffer_release(cb);
	accel_buffer_release(b);
	kernel_teardown();
}
END_TEST

/* The module's reference count: one per open file of the device; -1 if unknown. */
static long module_refcnt(void)
{
	FILE *f = fopen("/sys/module/accelsched/refcnt", "re");
	long n = -1;

	if (f) {
		if (fscanf(f, "%ld", &n) != 1)
			n = -1;
		fclose(f);
	}
	return n;
}

/*
 * The device's file goes when the scheduler goes, not later: the ring
 * holds the fd as its registered file 0 (SUBMITs name it, so io_uring
 * takes no file reference per SQE), and io_uring tears a ring down on a
 * worker after close() returns, so the library unregisters the file
 * first. Each open file of the device holds a module reference, so the
 * count is back where it was once the scheduler is gone. (A straggler of
 * an earlier test, a ring torn down meanwhile, can only lower it.) On a
 * polled ring no file is registered (sched_kernel.h).
 *
 * The scheduler may go on the job's executor thread, just after the
 * test's last release: the job signals its semaphore, which lets the test
 * go on, before it drops its own reference to the scheduler (executor.c).
 * Seen under load on 6.1: the count was 1 right after the release and 0
 * a moment later, with no thread of the process left holding the device
 * open. So the count is read once the library's executor threads are gone
 * (5 s at most): a file left to a kernel worker still fails the test.
 */
START_TEST(test_release_closes_the_device_file_at_once)
{
	accel_buffer_t *b;
	accel_command_buffer_t *cb;
	accel_semaphore_t *s;
	long before = module_refcnt(), during, after;
	bool polled;

	if (before < 0 || !kernel_setup(false))
		return;
	ck_assert(uses_uring());
	/* make check runs this suite on a polled ring too. */
	polled = strstr(accel_scheduler_reason(sched), "polled by a kernel thread");
	b = buffer_new(64 * 4);
	cb = fill_cb(b, 64, 9);
	s = sem_new(0);
	{
		POINT(sig, s, 1);

		ASSERT_OK(accel_queue_execute(queue, NULL, &sig, cb, NULL, 0));
		ASSERT_OK(accel_semaphore_wait(s, 1, 0, WAIT_LONG));
	}
	test_expect_u32(map(b), 64, 9, "buffer");
	during = module_refcnt();
	ck_assert_msg(during > before, "refcnt %ld with the scheduler open, %ld before", during,
		      before);
	accel_semaphore_release(s);
	accel_command_buffer_release(cb);
	accel_buffer_release(b);
	kernel_teardown();
	for (int i = 0; i < 5000 && thread_named("accel-exec") >= 0; i++)
		usleep(1000);
	after = module_refcnt();
	/*
	 * A polled ring's SQ thread frees its last requests, and drops their
	 * files, on its own time (6.12): there the file goes soon, not at
	 * once, with or without the registered file.
	 */
	for (int i = 0; polled && after > before && i < 500; i++) {
		usleep(10000);
		after = module_refcnt();
	}
	ck_assert_msg(after <= before,
		      "refcnt %ld %s after the last release, %ld before: the device's file outlived the scheduler",
		      after, polled ? "5 s" : "right", before);
}
END_TEST

/*
 * Releases as events (module ABI 1.8) unless ACCEL_KERNEL_EVENTS=0, those
 * decided during a submission answered by it (ABI 1.9) with
 * ACCEL_KERNEL_ANSWER=1, and the reason says which, on io_uring and on
 * ioctls; the work runs in each mode.
 */
START_TEST(test_releases_as_events_or_answers)
{
	static const char *const said[3] = {
		"releases as events, or in the answer of the submission that made them (ACCEL_KERNEL_ANSWER=1)",
		"releases as events",
		"releases as SUBMIT answers (ACCEL_KERNEL_EVENTS=0)",
	};
	char *saved = env_save(ACCEL_KERNEL_EVENTS_ENV);
	char *saved_answer = env_save(ACCEL_KERNEL_ANSWER_ENV);

	/* io_uring denied last: the seccomp filter stays for the process. */
	for (int deny = 0; deny < 2; deny++)
		for (int mode = 0; mode < 3; mode++) {
			unsetenv(ACCEL_KERNEL_EVENTS_ENV);
			unsetenv(ACCEL_KERNEL_ANSWER_ENV);
			if (mode == 0)
				setenv(ACCEL_KERNEL_ANSWER_ENV, "1", 1);
			if (mode == 2) {
				/* Answers need events: asked for, not given. */
				setenv(ACCEL_KERNEL_ANSWER_ENV, "1", 1);
				setenv(ACCEL_KERNEL_EVENTS_ENV, "0", 1);
			}
			if (!kernel_setup(deny))
				goto out;
			const char *reason = accel_scheduler_reason(sched);
			/* make check runs this suite on a polled ring too. */
			bool polled = strstr(reason, "polled by a kernel thread");

			if (mode == 0 && polled) {
				ASSERT_CONTAINS("reason", reason,
						"ACCEL_KERNEL_ANSWER=1 ignored: a polled ring submits without a system call");
				ASSERT_CONTAINS("reason", reason, said[1]);
			} else {
				ASSERT_CONTAINS("reason", reason, said[mode]);
			}
			if (mode || polled)
				ck_assert_msg(!strstr(reason, "in the answer of"),
					      "mode %d: the reason claims answers: %s", mode, reason);
			if (mode == 2)
				ASSERT_CONTAINS("reason", reason,
						"ACCEL_KERNEL_ANSWER=1 ignored: releases are not events");
			kernel_teardown();
			jobs_are_kernel_jobs(deny);
		}
out:
	env_restore(ACCEL_KERNEL_EVENTS_ENV, saved);
	env_restore(ACCEL_KERNEL_ANSWER_ENV, saved_answer);
}
END_TEST

/*
 * The cost model's predictions reach the module (ABI 1.6): a command
 * buffer run once is predicted from then on, and the queue's fdinfo line
 * counts those predictions and the time their jobs took.
 */
START_TEST(test_predictions_reach_the_module)
{
	enum { N = 1 << 16 };
	accel_buffer_t *b;
	accel_command_buffer_t *cb;
	accel_semaphore_t *s;
	accel_scheduler_info_t info;

	if (!kernel_setup(false))
		return;
	ASSERT_OK(accel_scheduler_query(sched, &info));
	if (!(info.features & ACCEL_FEATURE_JOB_PREDICTION)) {
		printf("SKIP: the module predates ABI 1.6 (no job predictions)\n");
		kernel_teardown();
		return;
	}
	b = buffer_new(N * 4);
	cb = fill_cb(b, N, 7);
	s = sem_new(0);
	ck_assert_uint_eq(fdinfo_sum("accel-queue-", " predicted_ns="), 0);
	for (uint64_t i = 1; i <= 4; i++) {
		POINT(sig, s, i);

		ASSERT_OK(accel_queue_execute(queue, NULL, &sig, cb, NULL, 0));
		ASSERT_OK(accel_semaphore_wait(s, i, 0, WAIT_LONG));
	}
	/* The first run had nothing to learn from; the next three did. */
	ck_assert_msg(fdinfo_sum("accel-queue-", " predicted_ns=") > 0,
		      "no prediction reached the module");
	ck_assert_msg(fdinfo_sum("accel-queue-", " predicted_busy_ns=") > 0,
		      "the predicted jobs' engine time is not counted");
	test_expect_u32(map(b), N, 7, "buffer");
	accel_semaphore_release(s);
	accel_command_buffer_release(cb);
	accel_buffer_release(b);
	kernel_teardown();
}
END_TEST

/*
 * A batch of 8 command buffers is one job of the module: the file's
 * released jobs grow by 1, and all 8 ran.
 */
START_TEST(test_batch_is_one_job)
{
	enum { N = 1024, PARTS = 8 };
	accel_buffer_t *b[PARTS];
	accel_command_buffer_t *cbs[PARTS];
	accel_semaphore_t *s;
	uint64_t before, after;

	if (!kernel_setup(false))
		return;
	for (int i = 0; i < PARTS; i++) {
		b[i] = buffer_new(N * 4);
		memset(map(b[i]), 0, N * 4);
		cbs[i] = fill_cb(b[i], N, 0x100u + (uint32_t)i);
	}
	s = sem_new(0);
	{
		POINT(sig, s, 1);

		before = fdinfo_sum("accel-released-cpu:", NULL);
		ASSERT_OK(accel_queue_execute_batch(queue, NULL, &sig, PARTS, cbs, NULL, 0));
		ASSERT_OK(accel_semaphore_wait(s, 1, 0, WAIT_LONG));
		after = fdinfo_sum("accel-released-cpu:", NULL);
	}
	ck_assert_msg(after == before + 1,
		      "fdinfo accel-released-cpu went from %" PRIu64 " to %" PRIu64 ": a batch of %d must be one job",
		      before, after, PARTS);
	for (int i = 0; i < PARTS; i++) {
		test_expect_u32(map(b[i]), N, 0x100u + (uint32_t)i, "buffer");
		accel_command_buffer_release(cbs[i]);
		accel_buffer_release(b[i]);
	}
	accel_semaphore_release(s);
	kernel_teardown();
}
END_TEST

/* ---- failures travel from queue to queue, in the module ------------------ */

static void failure_across_queues(bool deny_uring)
{
	enum { N = 256 };
	accel_queue_t *q2;
	accel_buffer_t *b1, *b2, *b3;
	accel_command_buffer_t *c1, *c2, *c3;
	accel_semaphore_t *gate, *s1, *s2, *s3;
	const char *m;
	int error;

	if (!kernel_setup(deny_uring))
		return;
	ASSERT_OK(accel_queue_create(dev, 0, &q2));
	b1 = buffer_new(N * 4);
	b2 = buffer_new(N * 4);
	b3 = buffer_new(N * 4);
	memset(map(b1), 0, N * 4);
	memset(map(b2), 0, N * 4);
	memset(map(b3), 0, N * 4);
	c1 = fill_cb(b1, N, 1);
	c2 = fill_cb(b2, N, 2);
	c3 = fill_cb(b3, N, 3);
	gate = sem_new(0);
	s1 = sem_new(0);
	s2 = sem_new(0);
	s3 = sem_new(0);
	{
		POINT(wg, gate, 1);
		POINT(p1, s1, 1);
		POINT(p2, s2, 1);
		POINT(p3, s3, 1);

		/* queue: gate -> s1; q2: s1 -> s2; queue: independent -> s3. */
		ASSERT_OK(accel_queue_execute(queue, &wg, &p1, c1, NULL, 0));
		ASSERT_OK(accel_queue_execute(q2, &p1, &p2, c2, NULL, 0));
		ASSERT_OK(accel_queue_execute(queue, NULL, &p3, c3, NULL, 0));
		ASSERT_OK(accel_semaphore_wait(s3, 1, 0, WAIT_LONG));
		ASSERT_OK(accel_semaphore_fail(gate, -EPIPE));
		ASSERT_ERRNO(accel_semaphore_wait(s2, 1, 0, WAIT_LONG), EPIPE);
		ASSERT_MESSAGE_CONTAINS("submission #1 on a queue of cpu://0 was not run: its wait 0 (value 1) failed with EPIPE: submission #1 on a queue of cpu://0 was not run: its wait 0 (value 1) failed with EPIPE: failed by accel_semaphore_fail(EPIPE) from the host");
		ASSERT_ERRNO(accel_semaphore_wait(s1, 1, 0, WAIT_LONG), EPIPE);
	}
	sem_value(s1, &error);
	ck_assert_int_eq(error, -EPIPE);
	sem_value(s2, &error);
	ck_assert_int_eq(error, -EPIPE);
	m = accel_semaphore_failure_message(s2);
	ASSERT_CONTAINS("s2 failure", m, "was not run: its wait 0 (value 1) failed with EPIPE: ");
	ASSERT_CONTAINS("s2 failure", m, "from the host");
	test_expect_u32(map(b1), N, 0, "b1"); /* neither ran */
	test_expect_u32(map(b2), N, 0, "b2");
	test_expect_u32(map(b3), N, 3, "b3"); /* the independent one did */
	/* Both queues still work. */
	{
		accel_semaphore_t *s4 = sem_new(0);
		POINT(p4, s4, 1);
		POINT(p5, s4, 2);

		ASSERT_OK(accel_queue_execute(q2, NULL, &p4, c2, NULL, 0));
		ASSERT_OK(accel_queue_execute(queue, &p4, &p5, c1, NULL, 0));
		ASSERT_OK(accel_semaphore_wait(s4, 2, 0, WAIT_LONG));
		test_expect_u32(map(b1), N, 1, "b1");
		test_expect_u32(map(b2), N, 2, "b2");
		accel_semaphore_release(s4);
	}
	accel_semaphore_release(gate);
	accel_semaphore_release(s1);
	accel_semaphore_release(s2);
	accel_semaphore_release(s3);
	accel_command_buffer_release(c1);
	accel_command_buffer_release(c2);
	accel_command_buffer_release(c3);
	accel_buffer_release(b1);
	accel_buffer_release(b2);
	accel_buffer_release(b3);
	accel_queue_release(q2);
	kernel_teardown();
}

START_TEST(test_failure_across_queues_uring)
{
	failure_across_queues(false);
}
END_TEST

START_TEST(test_failure_across_queues_ioctl)
{
	failure_across_queues(true);
}
END_TEST

/* ---- the module's timeout ------------------------------------------------- */

static int write_param(const char *path, const char *value)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, value, strlen(value));
	close(fd);
	return n == (ssize_t)strlen(value) ? 0 : -EIO;
}

static int read_param(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");

	if (!f)
		return -errno;
	if (!fgets(buf, (int)len, f))
		buf[0] = '\0';
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/* A job past the module's timeout fails with ETIMEDOUT and says so. */
START_TEST(test_job_timeout)
{
	accel_command_buffer_t *cb = NULL;
	accel_semaphore_t *s, *t;
	uint32_t ms = 1500, one[3] = { 1, 1, 1 };
	char old[32];

	if (!kernel_setup(false))
		return;
	if (read_param(TIMEOUT_PARAM, old, sizeof(old)) ||
	    write_param(TIMEOUT_PARAM, "200")) {
		kernel_teardown();
		TEST_SKIP("cannot set %s (not root?)", TIMEOUT_PARAM);
	}
	s = sem_new(0);
	t = sem_new(0);
	ASSERT_OK(accel_command_buffer_create(dev, ACCEL_COMMAND_BUFFER_REUSABLE, 0, &cb));
	ASSERT_OK(accel_command_buffer_begin(cb));
	ASSERT_OK(accel_command_buffer_dispatch(cb, exe, 1, one, &ms, 1, NULL, 0));
	ASSERT_OK(accel_command_buffer_end(cb));
	{
		POINT(ps, s, 1);
		POINT(pt, t, 1);

		ASSERT_OK(accel_queue_execute(queue, NULL, &ps, cb, NULL, 0));
		ASSERT_ERRNO(accel_semaphore_wait(s, 1, 0, WAIT_LONG), ETIMEDOUT);
		ASSERT_MESSAGE_CONTAINS("submission #1 on a queue of cpu://0 timed out");
		ck_assert_int_eq(write_param(TIMEOUT_PARAM, old), 0);
		/* The late COMPLETE is refused quietly; the queue goes on. */
		ASSERT_OK(accel_queue_barrier(queue, NULL, &pt, 0));
		ASSERT_OK(accel_semaphore_wait(t, 1, 0, WAIT_LONG));
	}
	accel_semaphore_release(s);
	accel_semaphore_release(t);
	accel_command_buffer_release(cb);
	kernel_teardown();
}
END_TEST

/* ---- a process killed with work in flight -------------------------------- */

#define IN_FLIGHT_PARAM "/sys/kernel/accelsched/engines/cpu/in_flight"

/* What a killed child tells its parent (MAP_SHARED, made before fork()). */
struct flight {
	atomic_uint done; /* jobs it waited for */
	char reason[512]; /* its scheduler's reason (the first child's) */
};

/* Child exit codes: the parent kills it, so any exit is a failure. */
enum { FLIGHT_NO_SETUP = 3, FLIGHT_FAILED = 4 };

/*
 * The child: jobs of 0 to 2 ms, one at a time (a lone job: with answers,
 * its release is its SUBMIT's answer) and now and then four at once
 * (their releases are events), until it is killed: in a SUBMIT, with a
 * job released and running, with jobs queued behind it, or waiting.
 */
static void __attribute__((noreturn)) flight_child(struct flight *sh, bool answer)
{
	uint32_t one[3] = { 1, 1, 1 }, ms[3] = { 0, 1, 2 };
	accel_command_buffer_t *cb[3];
	accel_scheduler_options_t o;
	accel_scheduler_t *s;
	accel_semaphore_t *sem;
	accel_queue_t *q;
	accel_executable_t *x;
	uint64_t v = 0;

	test_clear_env();
	setenv(ACCEL_KERNEL_ANSWER_ENV, answer ? "1" : "0", 1);
	accel_scheduler_options_init(&o);
	o.kind = ACCEL_SCHEDULER_KERNEL;
	if (accel_scheduler_open(&o, &s) || accel_device_open("cpu://", s, &dev))
		_exit(FLIGHT_NO_SETUP);
	accel_scheduler_release(s);
	if (!sh->reason[0])
		snprintf(sh->reason, sizeof(sh->reason), "%s",
			 accel_scheduler_reason(accel_device_scheduler(dev)));
	if (accel_cpu_executable_create(dev, &k_table, &x) ||
	    accel_queue_create(dev, 0, &q) ||
	    accel_semaphore_create(accel_device_scheduler(dev), 0, &sem))
		_exit(FLIGHT_NO_SETUP);
	for (int i = 0; i < 3; i++)
		if (accel_command_buffer_create(dev, ACCEL_COMMAND_BUFFER_REUSABLE, 0, &cb[i]) ||
		    accel_command_buffer_begin(cb[i]) ||
		    accel_command_buffer_dispatch(cb[i], x, 1, one, &ms[i], 1, NULL, 0) ||
		    accel_command_buffer_end(cb[i]))
			_exit(FLIGHT_NO_SETUP);
	for (uint32_t n = 0;; n++) {
		int burst = n % 8 == 7 ? 4 : 1;

		for (int b = 0; b < burst; b++) {
			POINT(sig, sem, ++v);

			if (accel_queue_execute(q, NULL, &sig, cb[(n + b) % 3], NULL, 0))
				_exit(FLIGHT_FAILED);
		}
		if (accel_semaphore_wait(sem, v, 0, WAIT_LONG))
			_exit(FLIGHT_FAILED);
		atomic_fetch_add(&sh->done, 1);
	}
}

static int64_t flight_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * Killed at random points of its work, a process leaves nothing behind:
 * its file's release cancels what it had in flight and gives back the
 * engine's credits, and the next process's work runs. The engine's
 * in_flight falls to 0, or its sysfs directory goes: an engine goes only
 * at its last reference, and each job holds one, so then no job of the
 * children is left. In the VM the children were killed with 0 to 4 jobs
 * holding credits.
 */
static void killed_mid_flight(bool answer)
{
	enum { ROUNDS = 12 };
	struct flight *sh;
	char buf[32];
	int64_t end;

	test_clear_env();
	if (access("/dev/" ACCEL_DEVICE_NAME, F_OK)) {
		printf("SKIP: no kernel scheduler here: /dev/%s does not exist\n",
		       ACCEL_DEVICE_NAME);
		return;
	}
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(sh, MAP_FAILED);
	srand(answer ? 2 : 1);
	for (int r = 0; r < ROUNDS; r++) {
		unsigned int want = 5 + (unsigned int)(rand() % 20);
		int status;
		pid_t pid;

		atomic_store(&sh->done, 0);
		pid = fork();
		ck_assert_int_ge(pid, 0);
		if (pid == 0)
			flight_child(sh, answer);
		for (end = flight_now_ms() + 30000;
		     atomic_load(&sh->done) < want && flight_now_ms() < end;) {
			if (waitpid(pid, &status, WNOHANG) == pid)
				ck_abort_msg("round %d: the child exited with %d before it was killed (3: no setup, 4: a job failed)",
					     r, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
			usleep(200);
		}
		ck_assert_msg(atomic_load(&sh->done) >= want,
			      "round %d: the child ran %u jobs in 30 s, not %u",
			      r, atomic_load(&sh->done), want);
		usleep((useconds_t)(rand() % 3000));
		ck_assert_int_eq(kill(pid, SIGKILL), 0);
		ck_assert_int_eq(waitpid(pid, &status, 0), pid);
		ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
			      "round %d: the child ended with status 0x%x, not by the kill",
			      r, status);
	}
	/* The mode under test was in use, or the reason says why not. */
	if (!answer)
		ck_assert_msg(!strstr(sh->reason, "in the answer of"),
			      "answers off, yet the reason claims them: %s", sh->reason);
	else if (!strstr(sh->reason, "ACCEL_KERNEL_ANSWER=1 ignored"))
		ASSERT_CONTAINS("reason", sh->reason,
				"or in the answer of the submission that made them");
	/*
	 * The files go once io_uring lets go of them: asynchronously. The
	 * engine may go between the open and the read: -ENODEV then.
	 */
	for (end = flight_now_ms() + 20000;; usleep(10000)) {
		int err = test_file_io(IN_FLIGHT_PARAM, buf, sizeof(buf), NULL);

		if (err == -ENOENT || err == -ENODEV ||
		    (!err && strtoul(buf, NULL, 10) == 0))
			break;
		ck_assert_msg(!err, "reading %s: %s", IN_FLIGHT_PARAM, strerror(-err));
		ck_assert_msg(flight_now_ms() < end,
			      "%s still reads %s 20 s after the last child was killed: credits leaked",
			      IN_FLIGHT_PARAM, buf);
	}
	munmap(sh, sizeof(*sh));
	jobs_are_kernel_jobs(false);
}

START_TEST(test_killed_mid_flight_events)
{
	killed_mid_flight(false);
}
END_TEST

START_TEST(test_killed_mid_flight_answers)
{
	killed_mid_flight(true);
}
END_TEST

static Suite *kernel_sched_suite(void)
{
	Suite *suite = suite_create("kernel-sched");
	TCase *tc = tcase_create("kernel");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_jobs_are_kernel_jobs_uring);
	tcase_add_test(tc, test_jobs_are_kernel_jobs_ioctl);
	tcase_add_test(tc, test_jobs_are_kernel_jobs_polled);
	tcase_add_test(tc, test_reaper_sleeps_in_poll);
	tcase_add_test(tc, test_release_closes_the_device_file_at_once);
	tcase_add_test(tc, test_releases_as_events_or_answers);
	tcase_add_test(tc, test_predictions_reach_the_module);
	tcase_add_test(tc, test_failure_across_queues_uring);
	tcase_add_test(tc, test_failure_across_queues_ioctl);
	tcase_add_test(tc, test_job_timeout);
	tcase_add_test(tc, test_batch_is_one_job);
	tcase_add_test(tc, test_killed_mid_flight_events);
	tcase_add_test(tc, test_killed_mid_flight_answers);
	suite_add_tcase(suite, tc);
	return suite;
}

int main(void)
{
	return test_run_suite(kernel_sched_suite());
}
