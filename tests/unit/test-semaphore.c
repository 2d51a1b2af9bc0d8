// SPDX-License-Identifier: MIT
/*
 * Check suite "semaphore": timeline semantics (Documentation/syncobj.rst)
 * through the public API only.
 *
 * The scheduler is whatever accel_scheduler_open(NULL) gives, so that
 * ACCEL_SCHEDULER picks it: the same suite runs on the embedded scheduler
 * natively and on the kernel one (timeline syncobjs) inside the VM. The
 * list mirrors the kernel's syncobj tests. Every error path checks the
 * errno, the message, and that nothing changed.
 */
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "test-util.h"

static accel_scheduler_t *sched;

static void setup(void)
{
	ASSERT_OK(accel_scheduler_open(NULL, &sched));
}

static void teardown(void)
{
	accel_scheduler_release(sched);
}

static accel_semaphore_t *sem_new(uint64_t initial)
{
	accel_semaphore_t *s = TEST_NOT_NULL;

	ASSERT_OK(accel_semaphore_create(sched, initial, &s));
	ck_assert_ptr_nonnull(s);
	return s;
}

static void expect_state(accel_semaphore_t *s, uint64_t value, int error)
{
	uint64_t v = 12345;
	int e = 12345;

	ASSERT_OK(accel_semaphore_query(s, &v, &e));
	ck_assert_msg(v == value && e == error,
		      "accel_semaphore_query: value %llu error %d, expected %llu and %d",
		      (unsigned long long)v, e, (unsigned long long)value, error);
}

#define MS INT64_C(1000000)
#define SEC INT64_C(1000000000)

START_TEST(test_create_query)
{
	accel_semaphore_t *s = sem_new(7);

	expect_state(s, 7, 0);
	ck_assert_str_eq(accel_semaphore_failure_message(s), "");
	ASSERT_OK(accel_semaphore_query(s, NULL, NULL));
	accel_semaphore_release(s);
}
END_TEST

START_TEST(test_create_null)
{
	accel_semaphore_t *s = TEST_NOT_NULL;

	ASSERT_ERRNO(accel_semaphore_create(NULL, 0, &s), EINVAL);
	ASSERT_MESSAGE_CONTAINS("accel_semaphore_create: scheduler is NULL");
	ck_assert_ptr_null(s);
	ASSERT_ERRNO(accel_semaphore_create(sched, 0, NULL), EINVAL);
	ASSERT_MESSAGE_CONTAINS("out is NULL");
	ASSERT_ERRNO(accel_semaphore_query(NULL, NULL, NULL), EINVAL);
	ASSERT_MESSAGE_CONTAINS("accel_semaphore_query: semaphore is NULL");
	ASSERT_ERRNO(accel_semaphore_signal(NULL, 1), EINVAL);
	ASSERT_MESSAGE_CONTAINS("accel_semaphore_signal: semaphore is NULL");
	ASSERT_ERRNO(accel_semaphore_fail(NULL, -EIO), EINVAL);
	ASSERT_MESSAGE_CONTAINS("accel_semaphore_fail: semaphore is NULL");
	ASSERT_ERRNO(accel_semaphore_wait(NULL, 1, 0, 0), EINVAL);
	ASSERT_MESSAGE_CONTAINS("accel_semaphore_wait: semaphore is NULL");
	accel_semaphore_retain(NULL);
	accel_semaphore_release(NULL);
}
END_TEST

START_TEST(test_signal_grows)
{
	accel_semaphore_t *s = sem_new(0);

	ASSERT_OK(accel_semaphore_signal(s, 1));
	ASSERT_OK(accel_semaphore_signal(s, 10));
	expect_state(s, 10, 0);
	accel_semaphore_release(s);
}
END_TEST

START_TEST(test_signal_equal_rejected)
{
	accel_semaphore_t *s = sem_new(5);

	ASSERT_ERRNO(accel_semaphore_signal(s, 5), EINVAL);
	ASSERT_MESSAGE_CONTAINS("accel_semaphore_signal: value 5 is not greater than the current value 5");
	expect_state(s, 5, 0);
	accel_semaphore_release(s);
}
END_TEST

START_TEST(test_signal_lower_rejected)
{
	accel_semaphore_t *s = sem_new(5);

	ASSERT_ERRNO(accel_semaphore_signal(s, 3), EINVAL);
	ASSERT_MESSAGE_CONTAINS("value 3 is not greater than the current value 5");
	expect_state(s, 5, 0);
	accel_semaphore_release(s);
}
END_TEST

START_TEST(test_wait_reached)
{
	accel_semaphore_t *s = sem_new(3);

	ASSERT_OK(accel_semaphore_wait(s, 3, 0, accel_deadline_after(SEC)));
	ASSERT_OK(accel_semaphore_wait(s, 2, 0, 0));
	accel_semaphore_release(s);
}
END_TEST

START_TEST(test_wait_reached_past_deadline)
{
	accel_semaphore_t *s = sem_new(3);

	ASSERT_OK(accel_semaphore_wait(s, 3, 0, 1)); /* 1 ns after boot */
	accel_semaphore_release(s);
}
END_TEST

START_TEST(test_wait_poll_unreached)
{
	accel_semaphore_t *s = sem_new(3);

	ASSERT_ERRNO(accel_semaphore_wait(s, 4, 0, 0), ETIME);
	ASSERT_MESSAGE_CONTAINS("the deadline passed before all of the 1 points were reached");
	expect_state(s, 3, 0);
	accel_semaphore_release(s);
}
END_TEST

START_TEST(test_wait_never_signalled_times_out)
{
	accel_semaphore_t *s = sem_new(0);
	int64_t start = accel_deadline_after(0);

	ASSERT_ERRNO(accel_semaphore_wait(s, 1, 0, accel_deadline_after(20 * MS)), ETIME);
	ck_assert_int_ge(accel_deadline_after(0) - start, 20 * MS);
	ASSERT_MESSAGE_CONTAINS("deadline passed");
	expect_state(s, 0, 0);
	accel_semaphore_release(s);
}
END_TEST

struct later {
	accel_semaphore_t *s;
	uint64_t value;
	int error; /* fail instead of signal when non-zero */
	int64_t delay;
};

static void *later_main(void *arg)
{
	struct later *l = arg;
	struct timespec ts = { 0, (long)l->delay };

	nanosleep(&ts, NULL);
	if (l->error)
		accel_semaphore_fail(l->s, l->error);
	else
		accel_semaphore_signal(l->s, l->value);
	return NULL;
}

static pthread_t later(struct later *l)
{
	pthread_t t;

	ck_assert_int_eq(pthread_create(&t, NULL, later_main, l), 0);
	return t;
}

START_TEST(test_wait_before_signal)
{
	accel_semaphore_t *s = sem_new(0);
	struct later l = { s, 5, 0, 20 * MS };
	pthread_t t = later(&l);

	ASSERT_OK(accel_semaphore_wait(s, 5, 0, accel_deadline_after(10 * SEC)));
	expect_state(s, 5, 0);
	pthread_join(t, NULL);
	accel_semaphore_release(s);
}
END_TEST

START_TEST(test_wait_infinite)
{
	accel_semaphore_t *s = sem_new(0);
	struct later l = { s, 2, 0, 5 * MS };
	pthread_t t = later(&l);

	ASSERT_OK(accel_semaphore_wait(s, 2, 0, ACCEL_DEADLINE_INFINITE));
	pthread_join(t, NULL);
	accel_semaphore_release(s);
}
END_TEST

START_TEST(test_any_returns_first_index)
{
	accel_semaphore_t *s[3] = { sem_new(0), sem_new(5), sem_new(9) };
	uint64_t v[3] = { 1, 5, 9 };
	accel_semaphore_list_t list = { 3, s, v };
	uint32_t index = 99;

	ASSERT_OK(accel_semaphore_list_wait(&list, ACCEL_SEMAPHORE_WAIT_ANY, 0, &index));
	ck_assert_uint_eq(index, 1);
	ASSERT_ERRNO(accel_semaphore_list_wait(&list, ACCEL_SEMAPHORE_WAIT_ALL, 0, &index), ETIME);
	ASSERT_OK(accel_semaphore_signal(s[0], 1));
	index = 99;
	ASSERT_OK(accel_semaphore_list_wait(&list, ACCEL_SEMAPHORE_WAIT_ANY, 0, &index));
	ck_assert_uint_eq(index, 0);
	ASSERT_OK(accel_semaphore_list_wait(&list, ACCEL_SEMAPHORE_WAIT_ALL, 0, NULL));
	for (int i = 0; i < 3; i++)
		accel_semaphore_release(s[i]);
}
END_TEST

/*
 * ANY over [unreached, failed]: the failed entry decides (the first, in
 * index order, that failed or is reached), its error and its index;
 * blocking or polling alike. And [reached, failed]: the reached one wins.
 */
START_TEST(test_any_failed_after_unreached)
{
	accel_semaphore_t *s[2] = { sem_new(0), sem_new(0) };
	uint64_t v[2] = { 1, 1 };
	accel_semaphore_list_t list = { 2, s, v };
	uint32_t index = 99;

	ASSERT_OK(accel_semaphore_fail(s[1], -EPIPE));
	ASSERT_ERRNO(accel_semaphore_list_wait(&list, ACCEL_SEMAPHORE_WAIT_ANY, 0, &index), EPIPE);
	ck_assert_uint_eq(index, 1);
	index = 99;
	ASSERT_ERRNO(accel_semaphore_list_wait(&list, ACCEL_SEMAPHORE_WAIT_ANY,
					       accel_deadline_after(10 * SEC), &index), EPIPE);
	ck_assert_uint_eq(index, 1);
	ASSERT_OK(accel_semaphore_signal(s[0], 1));
	index = 99;
	ASSERT_OK(accel_semaphore_list_wait(&list, ACCEL_SEMAPHORE_WAIT_ANY, 0, &index));
	ck_assert_uint_eq(index, 0);
	accel_semaphore_release(s[0]);
	accel_semaphore_release(s[1]);
}
END_TEST

/* accel_deadline_after() saturates at ACCEL_DEADLINE_INFINITE. */
START_TEST(test_deadline_after_saturates)
{
	int64_t now = accel_deadline_after(0);

	ck_assert_int_gt(now, 0);
	ck_assert_int_eq(accel_deadline_after(UINT64_MAX), ACCEL_DEADLINE_INFINITE);
	ck_assert_int_eq(accel_deadline_after(UINT64_C(1) << 63), ACCEL_DEADLINE_INFINITE);
	ck_assert_int_eq(accel_deadline_after((uint64_t)INT64_MAX), ACCEL_DEADLINE_INFINITE);
	ck_assert_int_eq(accel_deadline_after((uint64_t)INT64_MAX - (uint64_t)now + 1),
			 ACCEL_DEADLINE_INFINITE);
	ck_assert_int_lt(accel_deadline_after(UINT64_C(1) << 40), ACCEL_DEADLINE_INFINITE);
	ck_assert_int_ge(accel_deadline_after(UINT64_C(1) << 40), now + (INT64_C(1) << 40));
}
END_TEST

START_TEST(test_any_wakes_on_later_entry)
{
	accel_semaphore_t *s[2] = { sem_new(0), sem_new(0) };
	uint64_t v[2] = { 1, 1 };
	accel_semaphore_list_t list = { 2, s, v };
	struct later l = { s[1], 1, 0, 10 * MS };
	pthread_t t = later(&l);
	uint32_t index = 99;

	ASSERT_OK(accel_semaphore_list_wait(&list, ACCEL_SEMAPHORE_WAIT_ANY,
					    accel_deadline_after(10 * SEC), &index));
	ck_assert_uint_eq(index, 1);
	pthread_join(t, NULL);
	accel_semaphore_release(s[0]);
	accel_semaphore_release(s[1]);
}
END_TEST

START_TEST(test_all_waits_for_every_entry)
{
	accel_semaphore_t *s[2] = { sem_new(0), sem_new(0) };
	uint64_t v[2] = { 1, 2 };
	accel_semaphore_list_t list = { 2, s, v };
	struct later l0 = { s[0], 1, 0, 5 * MS }, l1 = { s[1], 2, 0, 30 * MS };
	pthread_t t0 = later(&l0), t1 = later(&l1);

	ASSERT_OK(accel_semaphore_list_wait(&list, ACCEL_SEMAPHORE_WAIT_ALL,
					    accel_deadline_after(10 * SEC), NULL));
	expect_state(s[1], 2, 0);
	pthread_join(t0, NULL);
	pthread_join(t1, NULL);
	accel_semaphore_release(s[0]);
	accel_semaphore_release(s[1]);
}
END_TEST

START_TEST(test_fail_wakes_sleeping_waiter)
{
	accel_semaphore_t *s = sem_new(0);
	struct later l = { s, 0, -EPIPE, 20 * MS };
	pthread_t t = later(&l);

	ASSERT_ERRNO(accel_semaphore_wait(s, 1, 0, accel_deadline_after(10 * SEC)), EPIPE);
	ASSERT_MESSAGE_CONTAINS("the semaphore failed with EPIPE");
	ASSERT_MESSAGE_CONTAINS("accel_semaphore_fail(EPIPE)");
	pthread_join(t, NULL);
	accel_semaphore_release(s);
}
END_TEST

/*
 * A waiter already blocked on [A:1 reached, B:5 pending] hears of A's
 * failure at once: with no deadline, a waiter that missed it would hang
 * (the join gives up after 20 s and the test fails).
 */
struct blocked_all {
	accel_semaphore_list_t list;
	uint32_t index;
	int ret;
};

static void *blocked_all_main(void *arg)
{
	struct blocked_all *b = arg;

	b->ret = accel_semaphore_list_wait(&b->list, ACCEL_SEMAPHORE_WAIT_ALL,
					   ACCEL_DEADLINE_INFINITE, &b->index);
	return NULL;
}

START_TEST(test_fail_wakes_waiter_on_reached_point)
{
	accel_semaphore_t *s[2] = { sem_new(1), sem_new(0) };
	uint64_t v[2] = { 1, 5 };
	struct blocked_all b = { .list = { 2, s, v }, .index = 99 };
	struct timespec ts = { 0, 50 * MS }, until;
	pthread_t t;

	ck_assert_int_eq(pthread_create(&t, NULL, blocked_all_main, &b), 0);
	nanosleep(&ts, NULL); /* blocked by now, or not yet: both must work */
	ASSERT_OK(accel_semaphore_fail(s[0], -EIO));
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 20;
	ck_assert_msg(pthread_timedjoin_np(t, NULL, &until) == 0,
		      "a waiter blocked on a reached point missed its failure");
	ck_assert_int_eq(b.ret, -EIO);
	ck_assert_uint_eq(b.index, 0);
	accel_semaphore_release(s[0]);
	accel_semaphore_release(s[1]);
}
END_TEST

START_TEST(test_fail_future_waiters)
{
	accel_semaphore_t *s = sem_new(4);
	uint32_t index = 99;

	ASSERT_OK(accel_semaphore_fail(s, -EIO));
	expect_state(s, 4, -EIO);
	/* Every wait, even on a point reached before, gets the error. */
	ASSERT_ERRNO(accel_semaphore_wait(s, 2, 0, 0), EIO);
	ASSERT_ERRNO(accel_semaphore_wait(s, 9, 0, accel_deadline_after(SEC)), EIO);
	{
		accel_semaphore_t *l[2] = { s, s };
		uint64_t v[2] = { 1, 2 };
		accel_semaphore_list_t list = { 2, l, v };

		ASSERT_ERRNO(accel_semaphore_list_wait(&list, 0, 0, &index), EIO);
		ck_assert_uint_eq(index, 0);
	}
	ASSERT_CONTAINS("failure message", accel_semaphore_failure_message(s),
			"failed by accel_semaphore_fail(EIO)");
	accel_semaphore_release(s);
}
END_TEST

START_TEST(test_first_failure_wins)
{
	accel_semaphore_t *s = sem_new(0);

	ASSERT_OK(accel_semaphore_fail(s, -EIO));
	ASSERT_OK(accel_semaphore_fail(s, -EPIPE));
	expect_state(s, 0, -EIO);
	ASSERT_ERRNO(accel_semaphore_wait(s, 1, 0, 0), EIO);
	ASSERT_CONTAINS("failure message", accel_semaphore_failure_message(s), "EIO");
	accel_semaphore_release(s);
}
END_TEST

START_TEST(test_signal_failed)
{
	accel_semaphore_t *s = sem_new(2);

	ASSERT_OK(accel_semaphore_fail(s, -ENOLINK));
	ASSERT_ERRNO(accel_semaphore_signal(s, 3), ENOLINK);
	ASSERT_MESSAGE_CONTAINS("the semaphore has failed (ENOLINK)");
	expect_state(s, 2, -ENOLINK);
	accel_semaphore_release(s);
}
END_TEST

START_TEST(test_fail_bad_error)
{
	accel_semaphore_t *s = sem_new(0);

	ASSERT_ERRNO(accel_semaphore_fail(s, 0), EINVAL);
	ASSERT_MESSAGE_CONTAINS("error 0 is not a negative errno in [-4095, -1]");
	ASSERT_ERRNO(accel_semaphore_fail(s, 5), EINVAL);
	ASSERT_ERRNO(accel_semaphore_fail(s, -4096), EINVAL);
	ASSERT_MESSAGE_CONTAINS("error -4096");
	expect_state(s, 0, 0);
	accel_semaphore_release(s);
}
END_TEST

START_TEST(test_zero_count)
{
	accel_semaphore_list_t list = { 0, NULL, NULL };

	ASSERT_OK(accel_semaphore_list_wait(&list, ACCEL_SEMAPHORE_WAIT_ALL, 0, NULL));
	ASSERT_OK(accel_semaphore_list_wait(&list, 0, 1, NULL));
	ASSERT_OK(accel_semaphore_list_wait(NULL, 0, 0, NULL));
}
END_TEST

START_TEST(test_huge_count)
{
	accel_semaphore_t *s = sem_new(0);
	accel_semaphore_t *sems[1] = { s };
	uint64_t v[1] = { 0 };
	accel_semaphore_list_t list = { ACCEL_SEMAPHORE_LIST_MAX + 1, sems, v };

	ASSERT_ERRNO(accel_semaphore_list_wait(&list, 0, 0, NULL), EINVAL);
	ASSERT_MESSAGE_CONTAINS("has 1025 entries; the most is ACCEL_SEMAPHORE_LIST_MAX (1024)");
	list.count = UINT32_MAX;
	ASSERT_ERRNO(accel_semaphore_list_wait(&list, 0, 0, NULL), EINVAL);
	accel_semaphore_release(s);
}
END_TEST

START_TEST(test_max_count)
{
	accel_semaphore_t *s = sem_new(1);
	accel_semaphore_t *sems[ACCEL_SEMAPHORE_LIST_MAX];
	uint64_t v[ACCEL_SEMAPHORE_LIST_MAX];
	accel_semaphore_list_t list = { ACCEL_SEMAPHORE_LIST_MAX, sems, v };

	for (uint32_t i = 0; i < ACCEL_SEMAPHORE_LIST_MAX; i++) {
		sems[i] = s;
		v[i] = 1;
	}
	ASSERT_OK(accel_semaphore_list_wait(&list, ACCEL_SEMAPHORE_WAIT_ALL, 0, NULL));
	v[ACCEL_SEMAPHORE_LIST_MAX - 1] = 2;
	ASSERT_ERRNO(accel_semaphore_list_wait(&list, ACCEL_SEMAPHORE_WAIT_ALL,
					       accel_deadline_after(MS), NULL), ETIME);
	accel_semaphore_release(s);
}
END_TEST

START_TEST(test_null_pointers)
{
	accel_semaphore_t *s = sem_new(0);
	accel_semaphore_t *sems[2] = { s, NULL };
	uint64_t v[2] = { 0, 0 };
	accel_semaphore_list_t list = { 1, NULL, v };

	ASSERT_ERRNO(accel_semaphore_list_wait(&list, 0, 0, NULL), EINVAL);
	ASSERT_MESSAGE_CONTAINS("list->semaphores is NULL but its count is 1");
	list.semaphores = sems;
	list.values = NULL;
	ASSERT_ERRNO(accel_semaphore_list_wait(&list, 0, 0, NULL), EINVAL);
	ASSERT_MESSAGE_CONTAINS("list->values is NULL");
	list.values = v;
	list.count = 2;
	ASSERT_ERRNO(accel_semaphore_list_wait(&list, 0, 0, NULL), EINVAL);
	ASSERT_MESSAGE_CONTAINS("list entry 1: the semaphore is NULL");
	accel_semaphore_release(s);
}
END_TEST

START_TEST(test_unknown_flags)
{
	accel_semaphore_t *s = sem_new(1);

	ASSERT_ERRNO(accel_semaphore_wait(s, 1, 0x100, 0), EINVAL);
	ASSERT_MESSAGE_CONTAINS("flags 0x101 has unknown bits");
	accel_semaphore_release(s);
}
END_TEST

START_TEST(test_other_scheduler)
{
	accel_scheduler_t *other;
	accel_semaphore_t *s[2];
	uint64_t v[2] = { 0, 0 };
	accel_semaphore_list_t list = { 2, s, v };

	ASSERT_OK(accel_scheduler_open(NULL, &other));
	ASSERT_OK(accel_semaphore_create(sched, 0, &s[0]));
	ASSERT_OK(accel_semaphore_create(other, 0, &s[1]));
	ASSERT_ERRNO(accel_semaphore_list_wait(&list, ACCEL_SEMAPHORE_WAIT_ALL, 0, NULL), EXDEV);
	ASSERT_MESSAGE_CONTAINS("entry 1: the semaphore belongs to another scheduler");
	accel_semaphore_release(s[0]);
	accel_semaphore_release(s[1]);
	accel_scheduler_release(other);
}
END_TEST

/* A host signal makes its point submitted as well as reached. */
START_TEST(test_wait_submitted_by_signal)
{
	accel_semaphore_t *s = sem_new(0);
	struct later l = { s, 3, 0, 10 * MS };
	pthread_t t;

	ASSERT_ERRNO(accel_semaphore_wait(s, 3, ACCEL_SEMAPHORE_WAIT_SUBMITTED, 0), ETIME);
	ASSERT_MESSAGE_CONTAINS("points were submitted");
	t = later(&l);
	ASSERT_OK(accel_semaphore_wait(s, 3, ACCEL_SEMAPHORE_WAIT_SUBMITTED,
				       accel_deadline_after(10 * SEC)));
	pthread_join(t, NULL);
	accel_semaphore_release(s);
}
END_TEST

/* Many threads signal and wait at once; run under TSan as well. */
#define THREADS 8
#define STEPS 200

struct chain {
	accel_semaphore_t *s;
	int id;
};

/* Thread k signals k, k+T, k+2T ... each after waiting for the value before. */
static void *chain_main(void *arg)
{
	struct chain *c = arg;

	for (uint64_t v = (uint64_t)c->id + 1; v <= THREADS * STEPS; v += THREADS) {
		if (accel_semaphore_wait(c->s, v - 1, 0, accel_deadline_after(30 * SEC)))
			return (void *)1;
		if (accel_semaphore_signal(c->s, v))
			return (void *)2;
	}
	return NULL;
}

START_TEST(test_threads_signal_and_wait)
{
	accel_semaphore_t *s = sem_new(0);
	struct chain c[THREADS];
	pthread_t t[THREADS];
	void *ret;

	for (int i = 0; i < THREADS; i++) {
		c[i].s = s;
		c[i].id = i;
		ck_assert_int_eq(pthread_create(&t[i], NULL, chain_main, &c[i]), 0);
	}
	for (int i = 0; i < THREADS; i++) {
		pthread_join(t[i], &ret);
		ck_assert_msg(ret == NULL, "thread %d failed (%p)", i, ret);
	}
	expect_state(s, THREADS * STEPS, 0);
	accel_semaphore_release(s);
}
END_TEST

/* Drops the last references of @n semaphores after @delay. */
struct dropper {
	accel_semaphore_t *s[4];
	uint32_t n;
	int64_t delay;
};

static void *dropper_main(void *arg)
{
	struct dropper *d = arg;
	struct timespec ts = { 0, (long)d->delay };

	nanosleep(&ts, NULL);
	for (uint32_t i = 0; i < d->n; i++)
		accel_semaphore_release(d->s[i]);
	return NULL;
}

/*
 * Waits in progress hold their own references: the last references
 * dropped by another thread while a list wait sleeps leave the semaphores
 * alive until the wait times out (ASan saw the embedded scheduler's
 * evaluate() read them after they were freed).
 */
START_TEST(test_release_during_list_wait)
{
	accel_semaphore_t *s[2] = { sem_new(0), sem_new(0) };
	uint64_t v[2] = { 1, 1 };
	accel_semaphore_list_t list = { 2, s, v };
	struct dropper d = { { s[0], s[1] }, 2, 30 * MS };
	pthread_t t;

	ck_assert_int_eq(pthread_create(&t, NULL, dropper_main, &d), 0);
	ASSERT_ERRNO(accel_semaphore_list_wait(&list, 0, accel_deadline_after(300 * MS), NULL), ETIME);
	ASSERT_MESSAGE_CONTAINS("the deadline passed before any of the 2 points were reached");
	pthread_join(t, NULL);
}
END_TEST

START_TEST(test_release_during_wait)
{
	accel_semaphore_t *s = sem_new(0);
	struct dropper d = { { s }, 1, 30 * MS };
	pthread_t t;

	ck_assert_int_eq(pthread_create(&t, NULL, dropper_main, &d), 0);
	ASSERT_ERRNO(accel_semaphore_wait(s, 1, 0, accel_deadline_after(300 * MS)), ETIME);
	pthread_join(t, NULL);
}
END_TEST

/*
 * ---- sharing (kernel scheduler) -----------------------------------------
 *
 * On the kernel scheduler these go across fork(), the fd over a
 * socketpair with SCM_RIGHTS, as two applications would. On the embedded
 * one every sharing call must answer -EOPNOTSUPP with the message that
 * names the module, and change nothing.
 */
static bool kernel_sched(void)
{
	return accel_scheduler_kind(sched) == ACCEL_SCHEDULER_KERNEL;
}

#define UNSUPPORTED "needs the kernel scheduler (/dev/accelsched, the accelsched module); this process uses the embedded scheduler ("

/* The embedded answer to each sharing call, with nothing changed. */
static void expect_unsupported(accel_semaphore_t *s)
{
	accel_semaphore_t *in = TEST_NOT_NULL;
	int fd = 1234, pipefd[2], fds = test_count_fds();

	ck_assert_int_eq(pipe(pipefd), 0);
	ASSERT_ERRNO(accel_semaphore_export_fd(s, &fd), EOPNOTSUPP);
	ASSERT_MESSAGE_CONTAINS("accel_semaphore_export_fd: sharing a semaphore between processes " UNSUPPORTED);
	ck_assert_int_eq(fd, -1);
	ASSERT_ERRNO(accel_semaphore_import_fd(sched, pipefd[0], &in), EOPNOTSUPP);
	ASSERT_MESSAGE_CONTAINS("accel_semaphore_import_fd: sharing a semaphore between processes " UNSUPPORTED);
	ck_assert_ptr_null(in);
	fd = 1234;
	ASSERT_ERRNO(accel_semaphore_export_sync_file(s, 1, &fd), EOPNOTSUPP);
	ASSERT_MESSAGE_CONTAINS("accel_semaphore_export_sync_file: a sync_file");
	ASSERT_MESSAGE_CONTAINS(UNSUPPORTED);
	ck_assert_int_eq(fd, -1);
	ASSERT_ERRNO(accel_semaphore_import_sync_file(s, 1, pipefd[0]), EOPNOTSUPP);
	ASSERT_MESSAGE_CONTAINS("accel_semaphore_import_sync_file: importing a sync_file as a point " UNSUPPORTED);
	fd = 1234;
	ASSERT_ERRNO(accel_semaphore_notify_fd(s, 1, &fd), EOPNOTSUPP);
	ASSERT_MESSAGE_CONTAINS("accel_semaphore_notify_fd: ");
	ASSERT_MESSAGE_CONTAINS(UNSUPPORTED);
	ASSERT_MESSAGE_CONTAINS(accel_scheduler_reason(sched));
	ck_assert_int_eq(fd, -1);
	expect_state(s, 0, 0);
	ASSERT_ERRNO(accel_semaphore_wait(s, 1, ACCEL_SEMAPHORE_WAIT_SUBMITTED, 0), ETIME);
	close(pipefd[0]);
	close(pipefd[1]);
	ck_assert_int_eq(test_count_fds(), fds);
}

static void send_fd(int sock, int fd)
{
	char byte = 'f', cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { &byte, 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);

	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	ck_assert_msg(sendmsg(sock, &msg, 0) == 1, "sendmsg(SCM_RIGHTS): %s", strerror(errno));
}

/* -1 on error: also called in the child, where Check cannot assert. */
static int recv_fd(int sock)
{
	char byte, cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { &byte, 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c;
	int fd;

	if (recvmsg(sock, &msg, MSG_CMSG_CLOEXEC) != 1)
		return -1;
	c = CMSG_FIRSTHDR(&msg);
	if (!c || c->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

/* In a forked child: say what failed and exit 1 (the parent asserts 0). */
#define CHILD_CHECK(cond, ...) do {                                          \
	if (!(cond)) {                                                       \
		fprintf(stderr, "child, line %d: ", __LINE__);               \
		fprintf(stderr, __VA_ARGS__);                                \
		fprintf(stderr, " (%s)\n", accel_error_message());           \
		_exit(1);                                                    \
	}                                                                    \
} while (0)

/*
 * Forks a child that runs @child with its end of a socketpair and never
 * returns; returns its pid, *@sock the parent's end.
 */
static pid_t fork_child(void (*child)(int sock), int *sock)
{
	int sv[2];
	pid_t pid;

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		close(sv[0]);
		child(sv[1]);
		_exit(1);
	}
	close(sv[1]);
	*sock = sv[0];
	return pid;
}

static void expect_child_ok(pid_t pid)
{
	int status;

	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "the child process failed (status 0x%x); its stderr says where",
		      status);
}

/*
 * The child: imports the semaphore it receives, waits for 5 (the
 * parent's signal), then signals 7 for the parent.
 */
static void share_child(int sock)
{
	accel_scheduler_t *s;
	accel_semaphore_t *sem;
	uint64_t v;
	int fd, err;

	CHILD_CHECK(accel_scheduler_open(NULL, &s) == 0, "accel_scheduler_open");
	fd = recv_fd(sock);
	CHILD_CHECK(fd >= 0, "no fd received");
	CHILD_CHECK(accel_semaphore_import_fd(s, fd, &sem) == 0, "accel_semaphore_import_fd");
	close(fd);
	err = accel_semaphore_wait(sem, 5, 0, accel_deadline_after(30 * SEC));
	CHILD_CHECK(err == 0, "wait for 5 through the imported semaphore: %d", err);
	CHILD_CHECK(accel_semaphore_query(sem, &v, &err) == 0 && v == 5 && !err,
		    "query: value %llu error %d, expected 5 and 0", (unsigned long long)v, err);
	CHILD_CHECK(accel_semaphore_signal(sem, 7) == 0, "signal 7");
	accel_semaphore_release(sem);
	accel_scheduler_release(s);
	_exit(0);
}

START_TEST(test_share_fd_fork)
{
	accel_semaphore_t *s = sem_new(0);
	int sock, fd = -2, fds;
	pid_t pid;

	if (!kernel_sched()) {
		expect_unsupported(s);
		accel_semaphore_release(s);
		return;
	}
	pid = fork_child(share_child, &sock);
	fds = test_count_fds();
	ASSERT_OK(accel_semaphore_export_fd(s, &fd));
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fcntl(fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	send_fd(sock, fd);
	close(fd);
	ck_assert_int_eq(test_count_fds(), fds);
	ASSERT_OK(accel_semaphore_signal(s, 5));
	ASSERT_OK(accel_semaphore_wait(s, 7, 0, accel_deadline_after(30 * SEC)));
	expect_state(s, 7, 0);
	expect_child_ok(pid);
	close(sock);
	accel_semaphore_release(s);
}
END_TEST

/* The child fails the semaphore it imports with -EPIPE. */
static void fail_child(int sock)
{
	accel_scheduler_t *s;
	accel_semaphore_t *sem;
	int fd;

	CHILD_CHECK(accel_scheduler_open(NULL, &s) == 0, "accel_scheduler_open");
	fd = recv_fd(sock);
	CHILD_CHECK(fd >= 0, "no fd received");
	CHILD_CHECK(accel_semaphore_import_fd(s, fd, &sem) == 0, "accel_semaphore_import_fd");
	close(fd);
	CHILD_CHECK(accel_semaphore_fail(sem, -EPIPE) == 0, "accel_semaphore_fail");
	accel_semaphore_release(sem);
	accel_scheduler_release(s);
	_exit(0);
}

START_TEST(test_share_fd_failure_crosses)
{
	accel_semaphore_t *s = sem_new(0), *again = NULL;
	int sock, fd;
	pid_t pid;

	if (!kernel_sched()) {
		expect_unsupported(s);
		accel_semaphore_release(s);
		return;
	}
	pid = fork_child(fail_child, &sock);
	ASSERT_OK(accel_semaphore_export_fd(s, &fd));
	send_fd(sock, fd);
	/* The same timeline imported in this process too: a second object. */
	ASSERT_OK(accel_semaphore_import_fd(sched, fd, &again));
	ck_assert_ptr_nonnull(again);
	ck_assert_ptr_ne(again, s);
	close(fd);
	ASSERT_ERRNO(accel_semaphore_wait(s, 1, 0, accel_deadline_after(30 * SEC)), EPIPE);
	ASSERT_MESSAGE_CONTAINS("outside this process's submissions");
	expect_state(s, 0, -EPIPE);
	expect_state(again, 0, -EPIPE);
	ASSERT_ERRNO(accel_semaphore_signal(again, 1), EPIPE);
	expect_child_ok(pid);
	close(sock);
	accel_semaphore_release(again);
	accel_semaphore_release(s);
}
END_TEST

/*
 * The child: imports the parent's point 3 (a sync_file) as point 1 of its
 * own semaphore and waits for it; then exports its own point 2 to the
 * parent and signals it.
 */
static void sync_file_child(int sock)
{
	accel_scheduler_t *s;
	accel_semaphore_t *mine, *back;
	int fd, err;

	CHILD_CHECK(accel_scheduler_open(NULL, &s) == 0, "accel_scheduler_open");
	CHILD_CHECK(accel_semaphore_create(s, 0, &mine) == 0, "create");
	fd = recv_fd(sock);
	CHILD_CHECK(fd >= 0, "no fd received");
	CHILD_CHECK(accel_semaphore_import_sync_file(mine, 1, fd) == 0, "import_sync_file");
	close(fd);
	err = accel_semaphore_wait(mine, 1, ACCEL_SEMAPHORE_WAIT_SUBMITTED, 0);
	CHILD_CHECK(err == 0, "point 1 is submitted once imported: %d", err);
	err = accel_semaphore_wait(mine, 1, 0, accel_deadline_after(30 * SEC));
	CHILD_CHECK(err == 0, "wait for the imported point: %d", err);
	CHILD_CHECK(accel_semaphore_create(s, 0, &back) == 0, "create");
	CHILD_CHECK(accel_semaphore_export_sync_file(back, 2, &fd) == 0, "export_sync_file");
	send_fd(sock, fd);
	close(fd);
	CHILD_CHECK(accel_semaphore_signal(back, 2) == 0, "signal 2");
	accel_semaphore_release(back);
	accel_semaphore_release(mine);
	accel_scheduler_release(s);
	_exit(0);
}

START_TEST(test_sync_file_fork)
{
	accel_semaphore_t *s = sem_new(0);
	int sock, fd;
	pid_t pid;

	if (!kernel_sched()) {
		expect_unsupported(s);
		accel_semaphore_release(s);
		return;
	}
	pid = fork_child(sync_file_child, &sock);
	ASSERT_OK(accel_semaphore_export_sync_file(s, 3, &fd));
	ck_assert_int_eq(fcntl(fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	send_fd(sock, fd);
	close(fd);
	ASSERT_OK(accel_semaphore_signal(s, 3));
	fd = recv_fd(sock);
	ck_assert_int_ge(fd, 0);
	ASSERT_OK(accel_semaphore_import_sync_file(s, 10, fd));
	close(fd);
	ASSERT_OK(accel_semaphore_wait(s, 10, ACCEL_SEMAPHORE_WAIT_SUBMITTED, 0));
	ASSERT_OK(accel_semaphore_wait(s, 10, 0, accel_deadline_after(30 * SEC)));
	expect_state(s, 10, 0);
	expect_child_ok(pid);
	close(sock);
	accel_semaphore_release(s);
}
END_TEST

START_TEST(test_sync_file_failure_propagates)
{
	accel_semaphore_t *a = sem_new(0), *b = sem_new(0);
	int fd;

	if (!kernel_sched()) {
		expect_unsupported(a);
		goto out;
	}
	ASSERT_OK(accel_semaphore_export_sync_file(a, 1, &fd));
	ASSERT_OK(accel_semaphore_import_sync_file(b, 5, fd));
	close(fd);
	ASSERT_OK(accel_semaphore_fail(a, -EIO));
	ASSERT_ERRNO(accel_semaphore_wait(b, 5, 0, accel_deadline_after(30 * SEC)), EIO);
	ASSERT_MESSAGE_CONTAINS("sync_file fence imported into it");
	expect_state(b, 0, -EIO);
out:
	accel_semaphore_release(b);
	accel_semaphore_release(a);
}
END_TEST

static short poll_now(int fd, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int n = poll(&p, 1, timeout_ms);

	ck_assert_msg(n >= 0, "poll: %s", strerror(errno));
	return n ? p.revents : 0;
}

START_TEST(test_notify_fd_poll)
{
	accel_semaphore_t *s = sem_new(0);
	int fd, reached;

	if (!kernel_sched()) {
		expect_unsupported(s);
		accel_semaphore_release(s);
		return;
	}
	ASSERT_OK(accel_semaphore_notify_fd(s, 2, &fd));
	ck_assert_int_eq(fcntl(fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	ck_assert_msg(poll_now(fd, 0) == 0, "readable before anything was signalled");
	ASSERT_OK(accel_semaphore_signal(s, 1));
	ck_assert_msg(poll_now(fd, 50) == 0, "readable at 1, before point 2");
	ASSERT_OK(accel_semaphore_signal(s, 2));
	ck_assert_msg(poll_now(fd, 10000) & POLLIN, "not readable once point 2 was reached");
	ck_assert_msg(poll_now(fd, 0) & POLLIN, "no longer readable: it should stay so");
	close(fd);
	/* A point already reached: readable at once. */
	ASSERT_OK(accel_semaphore_notify_fd(s, 1, &reached));
	ck_assert_msg(poll_now(reached, 0) & POLLIN, "a reached point's fd is not readable");
	close(reached);
	accel_semaphore_release(s);
}
END_TEST

START_TEST(test_notify_fd_failure)
{
	accel_semaphore_t *s = sem_new(0);
	int fd;

	if (!kernel_sched()) {
		expect_unsupported(s);
		accel_semaphore_release(s);
		return;
	}
	ASSERT_OK(accel_semaphore_notify_fd(s, 4, &fd));
	ck_assert_msg(poll_now(fd, 0) == 0, "readable before the failure");
	ASSERT_OK(accel_semaphore_fail(s, -ECANCELED));
	ck_assert_msg(poll_now(fd, 10000) & POLLIN, "not readable once the semaphore failed");
	expect_state(s, 0, -ECANCELED);
	close(fd);
	accel_semaphore_release(s);
}
END_TEST

START_TEST(test_share_bad_args)
{
	accel_semaphore_t *s = sem_new(3), *in = TEST_NOT_NULL;
	int fd = 1234, devnull = open("/dev/null", O_RDWR | O_CLOEXEC), fds;

	ck_assert_int_ge(devnull, 0);
	fds = test_count_fds();
	ASSERT_ERRNO(accel_semaphore_export_fd(NULL, &fd), EINVAL);
	ASSERT_MESSAGE_CONTAINS("accel_semaphore_export_fd: semaphore is NULL");
	ck_assert_int_eq(fd, -1);
	ASSERT_ERRNO(accel_semaphore_export_fd(s, NULL), EINVAL);
	ASSERT_MESSAGE_CONTAINS("accel_semaphore_export_fd: fd is NULL");

	ASSERT_ERRNO(accel_semaphore_import_fd(NULL, devnull, &in), EINVAL);
	ASSERT_MESSAGE_CONTAINS("accel_semaphore_import_fd: scheduler is NULL");
	ck_assert_ptr_null(in);
	ASSERT_ERRNO(accel_semaphore_import_fd(sched, devnull, NULL), EINVAL);
	ASSERT_MESSAGE_CONTAINS("accel_semaphore_import_fd: out is NULL");
	in = TEST_NOT_NULL;
	ASSERT_ERRNO(accel_semaphore_import_fd(sched, -1, &in), EBADF);
	ASSERT_MESSAGE_CONTAINS("accel_semaphore_import_fd: fd -1 is negative");
	ck_assert_ptr_null(in);
	ASSERT_ERRNO(accel_semaphore_import_fd(sched, 1000000, &in), EBADF);
	ASSERT_MESSAGE_CONTAINS("fd 1000000 is not open");
	in = TEST_NOT_NULL;
	if (kernel_sched()) {
		ASSERT_ERRNO(accel_semaphore_import_fd(sched, devnull, &in), EINVAL);
		ASSERT_MESSAGE_CONTAINS("is not a semaphore exported by accel_semaphore_export_fd() (it is a character device)");
	} else {
		ASSERT_ERRNO(accel_semaphore_import_fd(sched, devnull, &in), EOPNOTSUPP);
	}
	ck_assert_ptr_null(in);

	fd = 1234;
	ASSERT_ERRNO(accel_semaphore_export_sync_file(NULL, 1, &fd), EINVAL);
	ASSERT_MESSAGE_CONTAINS("accel_semaphore_export_sync_file: semaphore is NULL");
	ck_assert_int_eq(fd, -1);
	ASSERT_ERRNO(accel_semaphore_export_sync_file(s, 1, NULL), EINVAL);
	ASSERT_MESSAGE_CONTAINS("accel_semaphore_export_sync_file: fd is NULL");
	fd = 1234;
	ASSERT_ERRNO(accel_semaphore_notify_fd(NULL, 1, &fd), EINVAL);
	ASSERT_MESSAGE_CONTAINS("accel_semaphore_notify_fd: semaphore is NULL");
	ck_assert_int_eq(fd, -1);
	ASSERT_ERRNO(accel_semaphore_notify_fd(s, 1, NULL), EINVAL);
	ASSERT_MESSAGE_CONTAINS("accel_semaphore_notify_fd: fd is NULL");

	ASSERT_ERRNO(accel_semaphore_import_sync_file(NULL, 5, devnull), EINVAL);
	ASSERT_MESSAGE_CONTAINS("accel_semaphore_import_sync_file: semaphore is NULL");
	ASSERT_ERRNO(accel_semaphore_import_sync_file(s, 5, -1), EBADF);
	ASSERT_MESSAGE_CONTAINS("accel_semaphore_import_sync_file: fd -1 is negative");
	ASSERT_ERRNO(accel_semaphore_import_sync_file(s, 5, 1000000), EBADF);
	ASSERT_MESSAGE_CONTAINS("fd 1000000 is not open");
	if (kernel_sched()) {
		ASSERT_ERRNO(accel_semaphore_import_sync_file(s, 5, devnull), EINVAL);
		ASSERT_MESSAGE_CONTAINS("is not a sync_file (it is a character device)");
	} else {
		ASSERT_ERRNO(accel_semaphore_import_sync_file(s, 5, devnull), EOPNOTSUPP);
	}
	/* Nothing changed: the value, the state, nothing submitted, no fd. */
	expect_state(s, 3, 0);
	ASSERT_ERRNO(accel_semaphore_wait(s, 5, ACCEL_SEMAPHORE_WAIT_SUBMITTED, 0), ETIME);
	ck_assert_int_eq(test_count_fds(), fds);
	close(devnull);
	accel_semaphore_release(s);
}
END_TEST

START_TEST(test_import_sync_file_behind)
{
	accel_semaphore_t *a = sem_new(0), *b = sem_new(4);
	int fd;

	if (!kernel_sched()) {
		expect_unsupported(a);
		goto out;
	}
	ASSERT_OK(accel_semaphore_export_sync_file(a, 1, &fd));
	ASSERT_ERRNO(accel_semaphore_import_sync_file(b, 4, fd), EINVAL);
	ASSERT_MESSAGE_CONTAINS("value 4 is not greater than the current value 4");
	ASSERT_OK(accel_semaphore_fail(b, -EIO));
	ASSERT_ERRNO(accel_semaphore_import_sync_file(b, 9, fd), EIO);
	ASSERT_MESSAGE_CONTAINS("the semaphore has failed (EIO)");
	close(fd);
	expect_state(b, 4, -EIO);
	expect_state(a, 0, 0);
out:
	accel_semaphore_release(b);
	accel_semaphore_release(a);
}
END_TEST

static Suite *semaphore_suite(void)
{
	Suite *suite = suite_create("semaphore");
	TCase *tc = tcase_create("timeline");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_create_query);
	tcase_add_test(tc, test_any_failed_after_unreached);
	tcase_add_test(tc, test_deadline_after_saturates);
	tcase_add_test(tc, test_create_null);
	tcase_add_test(tc, test_signal_grows);
	tcase_add_test(tc, test_signal_equal_rejected);
	tcase_add_test(tc, test_signal_lower_rejected);
	tcase_add_test(tc, test_wait_reached);
	tcase_add_test(tc, test_wait_reached_past_deadline);
	tcase_add_test(tc, test_wait_poll_unreached);
	tcase_add_test(tc, test_wait_never_signalled_times_out);
	tcase_add_test(tc, test_wait_before_signal);
	tcase_add_test(tc, test_wait_infinite);
	tcase_add_test(tc, test_any_returns_first_index);
	tcase_add_test(tc, test_any_wakes_on_later_entry);
	tcase_add_test(tc, test_all_waits_for_every_entry);
	tcase_add_test(tc, test_fail_wakes_sleeping_waiter);
	tcase_add_test(tc, test_fail_wakes_waiter_on_reached_point);
	tcase_add_test(tc, test_fail_future_waiters);
	tcase_add_test(tc, test_first_failure_wins);
	tcase_add_test(tc, test_signal_failed);
	tcase_add_test(tc, test_fail_bad_error);
	tcase_add_test(tc, test_zero_count);
	tcase_add_test(tc, test_huge_count);
	tcase_add_test(tc, test_max_count);
	tcase_add_test(tc, test_null_pointers);
	tcase_add_test(tc, test_unknown_flags);
	tcase_add_test(tc, test_other_scheduler);
	tcase_add_test(tc, test_wait_submitted_by_signal);
	tcase_add_test(tc, test_threads_signal_and_wait);
	tcase_add_test(tc, test_release_during_list_wait);
	tcase_add_test(tc, test_release_during_wait);
	suite_add_tcase(suite, tc);

	tc = tcase_create("sharing");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_share_fd_fork);
	tcase_add_test(tc, test_share_fd_failure_crosses);
	tcase_add_test(tc, test_sync_file_fork);
	tcase_add_test(tc, test_sync_file_failure_propagates);
	tcase_add_test(tc, test_notify_fd_poll);
	tcase_add_test(tc, test_notify_fd_failure);
	tcase_add_test(tc, test_share_bad_args);
	tcase_add_test(tc, test_import_sync_file_behind);
	suite_add_tcase(suite, tc);
	return suite;
}

int main(void)
{
	printf("scheduler: %s\n", getenv(ACCEL_SCHEDULER_ENV) ? getenv(ACCEL_SCHEDULER_ENV) : "auto");
	return test_run_suite(semaphore_suite());
}
