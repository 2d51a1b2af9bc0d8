// SPDX-License-Identifier: MIT
/*
 * Check suite "error": the per-thread message behind accel_error_message().
 */
#include <pthread.h>

#include "test-util.h"

static accel_scheduler_options_t bad_kind_options(int kind)
{
	accel_scheduler_options_t opts;

	accel_scheduler_options_init(&opts);
	opts.kind = (accel_scheduler_kind_t)kind;
	return opts;
}

START_TEST(test_message_starts_empty)
{
	ck_assert_ptr_nonnull(accel_error_message());
	ck_assert_str_eq(accel_error_message(), "");
}
END_TEST

START_TEST(test_message_names_function_and_argument)
{
	accel_scheduler_options_t opts = bad_kind_options(9);
	accel_scheduler_t *s;

	ASSERT_ERRNO(accel_scheduler_open(&opts, &s), EINVAL);
	ck_assert_ptr_null(s);
	ck_assert_msg(strncmp(accel_error_message(), "accel_scheduler_open: ", 22) == 0,
		      "message does not start with the function: \"%s\"",
		      accel_error_message());
	ASSERT_MESSAGE_CONTAINS("options->kind is 9");
}
END_TEST

START_TEST(test_success_keeps_message)
{
	accel_scheduler_options_t opts = bad_kind_options(9);
	accel_scheduler_t *s;
	char before[256];

	ASSERT_ERRNO(accel_scheduler_open(&opts, &s), EINVAL);
	snprintf(before, sizeof(before), "%s", accel_error_message());
	setenv(ACCEL_SCHEDULER_ENV, "embedded", 1);
	ASSERT_OK(accel_scheduler_open(NULL, &s));
	ck_assert_str_eq(accel_error_message(), before);
	accel_scheduler_release(s);
}
END_TEST

START_TEST(test_next_failure_replaces_message)
{
	accel_scheduler_options_t opts = bad_kind_options(9);
	accel_scheduler_t *s;

	ASSERT_ERRNO(accel_scheduler_open(&opts, &s), EINVAL);
	ASSERT_ERRNO(accel_scheduler_open(NULL, NULL), EINVAL);
	ASSERT_MESSAGE_CONTAINS("out is NULL");
	ck_assert_msg(strstr(accel_error_message(), "options->kind") == NULL,
		      "old message text survived: \"%s\"", accel_error_message());
}
END_TEST

/*
 * Two threads fail differently, interleaved by a barrier:
 *   thread: fail (kind 11) | wait | wait | read its message again
 *   main:   wait | fail (out NULL) | wait | read its message again
 */
struct per_thread {
	pthread_barrier_t barrier;
	char first[256];
	char after[256];
};

static void *failing_thread(void *arg)
{
	struct per_thread *pt = arg;
	accel_scheduler_options_t opts = bad_kind_options(11);
	accel_scheduler_t *s;

	accel_scheduler_open(&opts, &s);
	snprintf(pt->first, sizeof(pt->first), "%s", accel_error_message());
	pthread_barrier_wait(&pt->barrier);
	pthread_barrier_wait(&pt->barrier);
	snprintf(pt->after, sizeof(pt->after), "%s", accel_error_message());
	return NULL;
}

START_TEST(test_message_is_per_thread)
{
	struct per_thread pt;
	pthread_t thread;

	ck_assert_int_eq(pthread_barrier_init(&pt.barrier, NULL, 2), 0);
	ck_assert_int_eq(pthread_create(&thread, NULL, failing_thread, &pt), 0);
	pthread_barrier_wait(&pt.barrier);
	ck_assert_str_eq(accel_error_message(), "");
	ASSERT_ERRNO(accel_scheduler_open(NULL, NULL), EINVAL);
	pthread_barrier_wait(&pt.barrier);
	ck_assert_int_eq(pthread_join(thread, NULL), 0);
	pthread_barrier_destroy(&pt.barrier);

	ASSERT_CONTAINS("the thread's message", pt.first, "options->kind is 11");
	ck_assert_str_eq(pt.after, pt.first);
	ASSERT_MESSAGE_CONTAINS("out is NULL");
	ck_assert_msg(strstr(accel_error_message(), "options->kind") == NULL,
		      "the thread's message leaked into main's: \"%s\"",
		      accel_error_message());
}
END_TEST

static void *read_message(void *arg)
{
	snprintf(arg, 256, "%s", accel_error_message());
	return NULL;
}

START_TEST(test_new_thread_starts_empty)
{
	char seen[256] = "unset";
	pthread_t thread;

	ASSERT_ERRNO(accel_scheduler_open(NULL, NULL), EINVAL);
	ck_assert_int_eq(pthread_create(&thread, NULL, read_message, seen), 0);
	ck_assert_int_eq(pthread_join(thread, NULL), 0);
	ck_assert_str_eq(seen, "");
}
END_TEST

static Suite *error_suite(void)
{
	Suite *suite = suite_create("error");
	TCase *tc = tcase_create("message");

	tcase_add_checked_fixture(tc, test_clear_env, NULL);
	tcase_add_test(tc, test_message_starts_empty);
	tcase_add_test(tc, test_message_names_function_and_argument);
	tcase_add_test(tc, test_success_keeps_message);
	tcase_add_test(tc, test_next_failure_replaces_message);
	tcase_add_test(tc, test_message_is_per_thread);
	tcase_add_test(tc, test_new_thread_starts_empty);
	suite_add_tcase(suite, tc);
	return suite;
}

int main(void)
{
	return test_run_suite(error_suite());
}
