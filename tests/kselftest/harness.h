/* SPDX-License-Identifier: MIT */
/*
 * A small kselftest-style test harness for accelsched's kernel tests.
 *
 * It prints KTAP (``KTAP version 1``, ``1..N``, ``ok N name``,
 * ``ok N name # SKIP reason``, ``# Totals: ...``) and exits with the
 * kselftest codes (0 pass, 1 fail, 4 skip), like the kernel's own
 * kselftest_harness.h, whose interface it follows in spirit:
 *
 *	TEST(open_and_info) { int fd = open(...); ASSERT_GE(fd, 0); ... }
 *	TEST_HARNESS_MAIN
 *
 * Each test runs in its own forked process (a crash fails that test only)
 * with a timeout (TEST_TIMEOUT() per test, 30 s by default, multiplied by
 * $ACCEL_TEST_TIMEOUT_SCALE when set, as the VM sets it on its slower debug
 * kernel; the process group is killed past it). Before each test a marker
 * goes to /dev/kmsg; after it, the kernel log written since the marker is
 * scanned, and a BUG, WARNING, Oops, KASAN, UBSAN, lockdep, hung-task or
 * refcount report fails the test even if every assertion held: the lines
 * are printed as diagnostics.
 *
 * ASSERT_* ends the test at the first failure; EXPECT_* records it and goes
 * on. Every failure names the expression, the expected and the seen value.
 *
 * Options: -l lists the tests, -t NAME runs only NAME (repeatable).
 */
#ifndef ACCEL_TEST_HARNESS_H
#define ACCEL_TEST_HARNESS_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define KSFT_PASS 0
#define KSFT_FAIL 1
#define KSFT_SKIP 4

#define TEST_TIMEOUT_DEFAULT 30

struct th_test {
	const char *name;
	void (*fn)(struct th_test *t);
	int timeout_s;
	struct th_test *next;
};

struct th_state {
	struct th_test *head, **tail;
	int failed;        /* in the child: an EXPECT failed */
};

static struct th_state th_state = { .tail = &th_state.head };

static inline void th_register(struct th_test *t)
{
	*th_state.tail = t;
	th_state.tail = &t->next;
}

#define TH_TEST(_name, _timeout)                                           \
	static void _name(struct th_test *_th);                            \
	static struct th_test _th_##_name = {                              \
		.name = #_name, .fn = _name, .timeout_s = _timeout,        \
	};                                                                 \
	__attribute__((constructor)) static void _th_reg_##_name(void)    \
	{                                                                  \
		th_register(&_th_##_name);                                 \
	}                                                                  \
	static void _name(struct th_test *_th __attribute__((unused)))

/** TEST(name) - define a test with the default timeout. */
#define TEST(name) TH_TEST(name, TEST_TIMEOUT_DEFAULT)
/** TEST_TIMEOUT(name, seconds) - define a test with its own timeout. */
#define TEST_TIMEOUT(name, s) TH_TEST(name, s)

/** TH_LOG(fmt, ...) - a diagnostic line, printed as "# ...". */
#define TH_LOG(fmt, ...)                                                   \
	do {                                                               \
		fprintf(stdout, "# %s:%d: " fmt "\n", __FILE__, __LINE__,  \
			##__VA_ARGS__);                                    \
		fflush(stdout);                                            \
	} while (0)

/* Exit statuses of the test child. */
#define TH_CHILD_PASS 0
#define TH_CHILD_FAIL 1
#define TH_CHILD_SKIP 4

/**
 * SKIP(statement, fmt, ...) - skip the rest of the test, saying why.
 *
 * The test runs in its own child, so the child ends here, from however deep
 * a helper: @statement (kselftest_harness.h's interface) is never reached.
 */
#define SKIP(statement, fmt, ...)                                          \
	do {                                                               \
		printf("# SKIP: " fmt "\n", ##__VA_ARGS__);                \
		fflush(stdout);                                            \
		dprintf(100, fmt, ##__VA_ARGS__);                          \
		exit(TH_CHILD_SKIP);                                       \
		statement;                                                 \
	} while (0)

#define TH_CMP(_exp, _seen, _op, _fatal, _es, _ss)                         \
	do {                                                               \
		__typeof__(_exp) __e = (_exp);                             \
		__typeof__(_seen) __s = (_seen);                           \
		if (!(__e _op __s)) {                                      \
			printf("# %s:%d: expected %s (%lld) %s %s (%lld)", \
			       __FILE__, __LINE__, _es, (long long)__e,    \
			       #_op, _ss, (long long)__s);                 \
			if (errno)                                         \
				printf(" [errno %d: %s]", errno,           \
				       strerror(errno));                   \
			printf("\n");                                      \
			fflush(stdout);                                    \
			th_state.failed = 1;                               \
			if (_fatal)                                        \
				exit(TH_CHILD_FAIL);                       \
		}                                                          \
	} while (0)

#define ASSERT_EQ(e, s) TH_CMP(e, s, ==, 1, #e, #s)
#define ASSERT_NE(e, s) TH_CMP(e, s, !=, 1, #e, #s)
#define ASSERT_LT(e, s) TH_CMP(e, s, <, 1, #e, #s)
#define ASSERT_LE(e, s) TH_CMP(e, s, <=, 1, #e, #s)
#define ASSERT_GT(e, s) TH_CMP(e, s, >, 1, #e, #s)
#define ASSERT_GE(e, s) TH_CMP(e, s, >=, 1, #e, #s)
#define EXPECT_EQ(e, s) TH_CMP(e, s, ==, 0, #e, #s)
#define EXPECT_NE(e, s) TH_CMP(e, s, !=, 0, #e, #s)
#define EXPECT_LT(e, s) TH_CMP(e, s, <, 0, #e, #s)
#define EXPECT_LE(e, s) TH_CMP(e, s, <=, 0, #e, #s)
#define EXPECT_GT(e, s) TH_CMP(e, s, >, 0, #e, #s)
#define EXPECT_GE(e, s) TH_CMP(e, s, >=, 0, #e, #s)
#define ASSERT_TRUE(c) TH_CMP(1, !!(c), ==, 1, "true", #c)
#define ASSERT_FALSE(c) TH_CMP(0, !!(c), ==, 1, "false", #c)
#define EXPECT_TRUE(c) TH_CMP(1, !!(c), ==, 0, "true", #c)
#define EXPECT_FALSE(c) TH_CMP(0, !!(c), ==, 0, "false", #c)

/**
 * ASSERT_ERRNO(call, err) - @call returns -1 and sets errno to @err
 * (@err is a positive errno value, e.g. ENOTTY).
 */
#define ASSERT_ERRNO(call, err)                                            \
	do {                                                               \
		errno = 0;                                                 \
		long __r = (long)(call);                                   \
		int __en = errno;                                          \
		if (__r != -1 || __en != (err)) {                          \
			printf("# %s:%d: expected %s to fail with %s (%d); " \
			       "it returned %ld, errno %d (%s)\n",          \
			       __FILE__, __LINE__, #call, strerrorname_np(err), \
			       err, __r, __en, strerrorname_np(__en) ?: "0"); \
			fflush(stdout);                                    \
			exit(TH_CHILD_FAIL);                               \
		}                                                          \
	} while (0)

/* The kernel log lines that fail a test however it ended. */
static const char *const th_splats[] = {
	"BUG:", "WARNING:", "Oops", "KASAN", "UBSAN", "kernel BUG",
	"possible circular locking", "inconsistent lock state",
	"suspicious RCU usage", "possible recursive locking",
	"sleeping function called from invalid context", "hung task",
	"blocked for more than", "refcount_t:", "general protection fault",
	"Call Trace:", "list_add corruption", "list_del corruption",
	"unreferenced object",
};

/* Open /dev/kmsg positioned at its end; -1 if there is none (no splat scan). */
static inline int th_kmsg_open_end(void)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd >= 0)
		lseek(fd, 0, SEEK_END);
	return fd;
}

static inline void th_kmsg_mark(const char *what, const char *name)
{
	int fd = open("/dev/kmsg", O_WRONLY | O_CLOEXEC);
	char buf[256];
	int n;

	if (fd < 0)
		return;
	n = snprintf(buf, sizeof(buf), "accelsched-test: %s %s\n", what, name);
	if (write(fd, buf, n) < 0) {
		/* Best effort: the marker is only a help for reading logs. */
	}
	close(fd);
}

/* Scan the log since @fd's position; print splat lines; return their count. */
static inline int th_kmsg_scan(int fd)
{
	char rec[8192];
	int splats = 0;

	if (fd < 0)
		return 0;
	for (;;) {
		ssize_t n = read(fd, rec, sizeof(rec) - 1);

		if (n < 0 && errno == EPIPE)
			continue; /* overwritten records: keep reading */
		if (n <= 0)
			break;
		rec[n] = 0;
		char *msg = strchr(rec, ';');
		msg = msg ? msg + 1 : rec;
		for (size_t i = 0; i < sizeof(th_splats) / sizeof(th_splats[0]); i++) {
			if (strstr(msg, th_splats[i])) {
				char *nl = strchr(msg, '\n');
				if (nl)
					*nl = 0;
				printf("# kernel: %s\n", msg);
				splats++;
				break;
			}
		}
	}
	return splats;
}

/* $ACCEL_TEST_TIMEOUT_SCALE: a factor for every test's timeout (default 1). */
static inline int th_timeout_scale(void)
{
	const char *s = getenv("ACCEL_TEST_TIMEOUT_SCALE");
	int scale = s ? atoi(s) : 1;

	return scale > 0 ? scale : 1;
}

static inline double th_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Run one test in a child; return KSFT_PASS, KSFT_FAIL or KSFT_SKIP. */
static inline int th_run_one(struct th_test *t, char *skip, size_t skiplen)
{
	int kfd = th_kmsg_open_end();
	int pipefd[2], status = 0, result, timeout_s;
	double deadline;
	pid_t pid;

	th_kmsg_mark("START", t->name);
	fflush(stdout);
	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return KSFT_FAIL;
	pid = fork();
	if (pid < 0) {
		printf("# fork: %s\n", strerror(errno));
		return KSFT_FAIL;
	}
	if (pid == 0) {
		setpgid(0, 0);
		close(pipefd[0]);
		dup2(pipefd[1], 100); /* the skip reason goes back through it */
		t->fn(t);
		exit(th_state.failed ? TH_CHILD_FAIL : TH_CHILD_PASS);
	}
	close(pipefd[1]);
	fcntl(pipefd[0], F_SETFL, O_NONBLOCK);
	timeout_s = t->timeout_s * th_timeout_scale();
	deadline = th_now() + timeout_s;
	for (;;) {
		pid_t w = waitpid(pid, &status, WNOHANG);

		if (w == pid)
			break;
		if (th_now() > deadline) {
			printf("# %s: timed out after %d s; killed\n", t->name,
			       timeout_s);
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			status = -1;
			break;
		}
		usleep(2000);
	}
	ssize_t got = read(pipefd[0], skip, skiplen - 1);
	skip[got > 0 ? got : 0] = 0;
	close(pipefd[0]);
	if (status == -1)
		result = KSFT_FAIL;
	else if (WIFSIGNALED(status)) {
		printf("# %s: killed by signal %d (%s)\n", t->name,
		       WTERMSIG(status), strsignal(WTERMSIG(status)));
		result = KSFT_FAIL;
	} else if (WEXITSTATUS(status) == TH_CHILD_SKIP)
		result = KSFT_SKIP;
	else if (WEXITSTATUS(status) == TH_CHILD_PASS)
		result = KSFT_PASS;
	else
		result = KSFT_FAIL;

	/* Let the kernel finish anything the child's exit set going. */
	usleep(20000);
	th_kmsg_mark("END", t->name);
	if (th_kmsg_scan(kfd) > 0) {
		printf("# %s: the kernel log shows a splat during the test\n",
		       t->name);
		result = KSFT_FAIL;
	}
	if (kfd >= 0)
		close(kfd);
	return result;
}

static inline int th_selected(const char *name, char **only, int nonly)
{
	if (!nonly)
		return 1;
	for (int i = 0; i < nonly; i++)
		if (!strcmp(only[i], name))
			return 1;
	return 0;
}

static inline int th_main(int argc, char **argv)
{
	char *only[64];
	int nonly = 0, n = 0, i = 0, pass = 0, fail = 0, skip = 0, opt;
	struct th_test *t;

	while ((opt = getopt(argc, argv, "lt:")) != -1) {
		switch (opt) {
		case 'l':
			for (t = th_state.head; t; t = t->next)
				printf("%s\n", t->name);
			return KSFT_PASS;
		case 't':
			if (nonly < 64)
				only[nonly++] = optarg;
			break;
		default:
			fprintf(stderr, "usage: %s [-l] [-t test]...\n", argv[0]);
			return KSFT_FAIL;
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (t = th_state.head; t; t = t->next)
		n += th_selected(t->name, only, nonly);
	printf("KTAP version 1\n1..%d\n", n);
	for (t = th_state.head; t; t = t->next) {
		char reason[256] = "";
		double t0;
		int r;

		if (!th_selected(t->name, only, nonly))
			continue;
		i++;
		printf("# RUN %s\n", t->name);
		t0 = th_now();
		r = th_run_one(t, reason, sizeof(reason));
		printf("# %s: %.3f s\n", t->name, th_now() - t0);
		if (r == KSFT_PASS) {
			pass++;
			printf("ok %d %s\n", i, t->name);
		} else if (r == KSFT_SKIP) {
			skip++;
			printf("ok %d %s # SKIP %s\n", i, t->name, reason);
		} else {
			fail++;
			printf("not ok %d %s\n", i, t->name);
		}
	}
	printf("# Totals: pass:%d fail:%d xfail:0 xpass:0 skip:%d error:0\n",
	       pass, fail, skip);
	if (fail)
		return KSFT_FAIL;
	return pass ? KSFT_PASS : KSFT_SKIP;
}

#define TEST_HARNESS_MAIN                                                  \
	int main(int argc, char **argv) { return th_main(argc, argv); }

#endif /* ACCEL_TEST_HARNESS_H */
