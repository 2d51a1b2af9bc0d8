// SPDX-License-Identifier: MIT
/*
 * Check suite "semaphore": timeline semantics (DESIGN.md section 3) through
 * the public API only.
 *
 * The scheduler is whatever accel_scheduler_open(NULL) gives, so that
 * ACCEL_SCHEDULER picks it: the same suite runs on the embedded scheduler
 * natively and on the kernel one (timeline syncobjs) inside the VM. The
 * list mirrors the kernel's syncobj tests. Every error path checks the
 * errno, the message, and that nothing changed.
 */
#include <pthread.h>
#include <time.h>

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

static Suite *semaphore_suite(void)
{
	Suite *suite = suite_create("semaphore");
	TCase *tc = tcase_create("timeline");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_create_query);
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
	return suite;
}

int main(void)
{
	printf("scheduler: %s\n", getenv(ACCEL_SCHEDULER_ENV) ? getenv(ACCEL_SCHEDULER_ENV) : "auto");
	return test_run_suite(semaphore_suite());
}
