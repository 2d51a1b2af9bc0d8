/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the Check suites of libaccel.
 *
 * Each test checks one behaviour and fails loudly, naming the call, the
 * expected and the seen value, and libaccel's message for the thread.
 *
 * Check runs every test in a forked child (the default, CK_FORK=yes), so a
 * test may setenv(), setrlimit() or drop privileges without affecting the
 * next one. The checked fixture test_clear_env() runs in that child before
 * each test, so no test sees ACCEL_* variables of the caller's environment.
 *
 * Check 0.15 has no skip status. A test that cannot run here prints
 * "SKIP: <why>" on stdout and returns, which Check counts as a pass; grep the
 * test log for "SKIP:" to see what was skipped.
 */
#ifndef ACCEL_TEST_UTIL_H
#define ACCEL_TEST_UTIL_H

#include <check.h>
#include <dirent.h>
#include <ftw.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <accel/accel.h>

static inline const char *test_errname(int ret)
{
	const char *name;

	if (ret == 0)
		return "0";
	name = ret < 0 ? strerrorname_np(-ret) : NULL;
	return name ? name : "not a negative errno";
}

/* `expr` must return -`err` (an E* constant). */
#define ASSERT_ERRNO(expr, err) do {                                          \
	int ret_ = (expr);                                                    \
	ck_assert_msg(ret_ == -(err),                                         \
		      "%s returned %d (%s), expected -%s; message: \"%s\"",   \
		      #expr, ret_, test_errname(ret_), #err,                  \
		      accel_error_message());                                 \
} while (0)

/* `expr` must return 0. */
#define ASSERT_OK(expr) do {                                                  \
	int ret_ = (expr);                                                    \
	ck_assert_msg(ret_ == 0,                                              \
		      "%s returned %d (%s), expected 0; message: \"%s\"",     \
		      #expr, ret_, test_errname(ret_), accel_error_message()); \
} while (0)

/* String `hay` (what `what` is) must contain `needle`. */
#define ASSERT_CONTAINS(what, hay, needle) do {                               \
	const char *hay_ = (hay);                                             \
	ck_assert_msg(hay_ && strstr(hay_, (needle)),                         \
		      "%s does not contain \"%s\": \"%s\"", (what), (needle), \
		      hay_ ? hay_ : "(null)");                                \
} while (0)

#define ASSERT_MESSAGE_CONTAINS(needle) \
	ASSERT_CONTAINS("accel_error_message()", accel_error_message(), needle)

/* Print why a test cannot run here and return from it (a pass). */
#define TEST_SKIP(...) do {                                                   \
	printf("SKIP: %s: ", __func__);                                       \
	printf(__VA_ARGS__);                                                  \
	printf("\n");                                                         \
	fflush(stdout);                                                       \
	return;                                                               \
} while (0)

/* A non-NULL pointer that no libaccel object has, to see *out reset. */
static inline void *test_not_null(void)
{
	static char sentinel;

	return &sentinel;
}
#define TEST_NOT_NULL test_not_null()

static inline void test_clear_env(void)
{
	unsetenv(ACCEL_SCHEDULER_ENV);
	unsetenv(ACCEL_DEVICE_ENV);
	unsetenv("ACCEL_CPU_THREADS");
}

/* Open file descriptors of this process (to prove nothing leaked). */
static inline int test_count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	ck_assert_msg(d != NULL, "opendir(/proc/self/fd): %s", strerror(errno));
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1; /* the directory's own fd */
}

/*
 * The directories test_make_tmpdir() made in this process, removed with
 * what they hold when it exits: a test that fails, or forgets, leaves no
 * litter in $TMPDIR. Check runs each test in a child of its own, which
 * exits; a child a test forks inherits the list but not the removal
 * (pid), so it cannot pull a directory from under its parent.
 */
struct test_tmpdirs {
	pid_t pid;
	int n;
	char path[16][256];
};
static struct test_tmpdirs test_tmpdirs_;

static inline int test_remove_one_(const char *path, const struct stat *st,
				   int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	remove(path);
	return 0;
}

static inline void test_remove_tmpdirs_(void)
{
	if (test_tmpdirs_.pid != getpid())
		return;
	for (int i = 0; i < test_tmpdirs_.n; i++)
		nftw(test_tmpdirs_.path[i], test_remove_one_, 16,
		     FTW_DEPTH | FTW_PHYS);
	test_tmpdirs_.n = 0;
}

/*
 * A fresh directory, mode 0755, in $TMPDIR or /tmp; written into buf.
 * Removed, with what it holds, when the process exits.
 */
static inline const char *test_make_tmpdir(char *buf, size_t len)
{
	const char *base = getenv("TMPDIR");
	static int registered;

	snprintf(buf, len, "%s/libaccel-test-XXXXXX",
		 base && *base ? base : "/tmp");
	ck_assert_msg(mkdtemp(buf) != NULL, "mkdtemp(%s): %s", buf,
		      strerror(errno));
	ck_assert_msg(chmod(buf, 0755) == 0, "chmod(%s): %s", buf,
		      strerror(errno));
	if (test_tmpdirs_.pid != getpid()) {
		test_tmpdirs_.pid = getpid();
		test_tmpdirs_.n = 0;
	}
	if (!registered)
		registered = atexit(test_remove_tmpdirs_) == 0;
	if (test_tmpdirs_.n < (int)(sizeof(test_tmpdirs_.path) /
				    sizeof(test_tmpdirs_.path[0])) &&
	    strlen(buf) < sizeof(test_tmpdirs_.path[0]))
		strcpy(test_tmpdirs_.path[test_tmpdirs_.n++], buf);
	return buf;
}

/*
 * Checks over many elements assert once, naming the first that differs:
 * Check writes the place of every assertion that passes to its result file
 * (a write(2) each), which over a megabyte buffer is seconds on the VM's
 * debug kernel.
 */

/* The @n bytes at @seen must equal @model's. */
static inline void test_expect_bytes(const void *seen, const void *model,
				     size_t n, const char *what)
{
	const uint8_t *s = seen, *m = model;
	size_t i = 0;

	if (n && memcmp(s, m, n))
		while (s[i] == m[i])
			i++;
	else
		i = n;
	ck_assert_msg(i == n, "%s: byte %zu of %zu is 0x%02x, expected 0x%02x",
		      what, i, n, i < n ? s[i] : 0, i < n ? m[i] : 0);
}

/* The @n 32-bit words at @p must all be @v. */
static inline void test_expect_u32(const uint32_t *p, size_t n, uint32_t v,
				   const char *what)
{
	size_t i = 0;

	while (i < n && p[i] == v)
		i++;
	ck_assert_msg(i == n, "%s[%zu] is 0x%x, expected 0x%x", what, i,
		      i < n ? p[i] : 0, v);
}

/* Runs the suite; Check prints its "N%: Checks: ..." line on stdout. */
static inline int test_run_suite(Suite *suite)
{
	SRunner *sr = srunner_create(suite);
	int failed;

	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

#endif /* ACCEL_TEST_UTIL_H */
