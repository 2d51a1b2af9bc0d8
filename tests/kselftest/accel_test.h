/* SPDX-License-Identifier: MIT */
/*
 * What accelsched's kernel tests share. They are written on the kernel's
 * own selftest harness, tools/testing/selftests/kselftest_harness.h, which
 * get-harness.sh takes from the kernel's source at build time (it is
 * GPL-2.0, not this project's, and never committed). Its documentation is
 * the kernel's Documentation/dev-tools/kselftest.rst; in short:
 *
 *	FIXTURE(device) {};
 *	FIXTURE_SETUP(device) { accel_test_setup(_metadata, variant); }
 *	FIXTURE_TEARDOWN_PARENT(device) { accel_test_teardown(_metadata, variant); }
 *
 *	TEST_F(device, open_and_info) { int fd = accel_test_open(); ASSERT_GE(fd, 0); ... }
 *	TEST_F_TIMEOUT(device, slow_one, 120) { ... }
 *
 *	ACCEL_TEST_MAIN
 *
 * Every test is a TEST_F() on its file's fixture, named as the file, whose
 * set-up and teardown are the two calls above; KTAP names it
 * <fixture>[.<variant>].<test>. Each test runs in its own process with a
 * timeout, 30 s unless TEST_F_TIMEOUT() gives another. The program takes
 * the harness's options: -l lists the tests, -t NAME runs the test NAME
 * (repeatable), -v VARIANT, -f FIXTURE and -r FULL.NAME select too.
 *
 * ASSERT_* ends the test at the first failure (the harness aborts the
 * test's process), EXPECT_* records one and goes on; each names the
 * expressions and both values, and a block after it, ASSERT_EQ(a, b) { ...
 * }, runs only on failure (TH_LOG() in it adds a diagnostic line). They
 * need the test's `_metadata` in scope: a helper that asserts takes
 * `struct __test_metadata *_metadata` as its first parameter, as the
 * kernel's own selftests' helpers do. SKIP(statement, fmt, ...) marks the
 * test skipped and runs @statement, a return: from a helper, the caller
 * must return too (see interop.c's vgem_open()).
 *
 * Threads must not assert: ASSERT_* longjmp()s to the test's frame, which
 * is another thread's. They record what went wrong, and the test asserts
 * on it after pthread_join() (TH_LOG() is fine in a thread given the
 * test's _metadata, see tenants.c's fdrace_reader()). A process the test
 * forks shares _metadata with it: an EXPECT_* or ASSERT_* that fails there
 * fails the test, but a failed ASSERT_* makes that process exit with
 * status 0, so a child whose exit status the test checks _exit()s with
 * codes of its own instead of asserting.
 *
 * Besides the harness, what this header adds:
 *
 * The kernel log. accel_test_setup() skips the test when the module is not
 * loaded (no /dev/accelsched), then writes "accelsched-test: START
 * <fixture>[.<variant>].<test>" to /dev/kmsg. accel_test_teardown(), which
 * FIXTURE_TEARDOWN_PARENT() runs in the parent of the test's process (the
 * harness forks one per test, which forks the one that runs the set-up and
 * the test) once that has exited, after a failed ASSERT or a crash too, waits
 * 20 ms for what that exit set going, writes "... END ...", and scans the
 * kernel log written since the test's last START marker: a BUG, WARNING,
 * Oops, KASAN, UBSAN, lockdep, hung-task, refcount or kmemleak report (see
 * accel_test_splats[]) fails the test even if every assertion held, and
 * its lines are printed as diagnostics. A test killed at its timeout is not
 * scanned (the harness kills its whole process group); the VM's own scan
 * of the kernel log at the end of the run (tests/qemu/vm-init.sh) counts
 * that splat.
 *
 * ACCEL_TEST_MAIN, the program's main(): it multiplies every test's
 * timeout by $ACCEL_TEST_TIMEOUT_SCALE (an integer; the VM sets it on the
 * slower debug kernel, tests/qemu/run-vm.sh) and runs the harness.
 *
 * ASSERT_ERRNO(call, err): @call returns -1 with errno @err.
 *
 * And the device's helpers: accel_test_open(), accel_prep_uring_cmd() to
 * fill a uring_cmd SQE (liburing 2.3 has no io_uring_prep_uring_cmd()),
 * accel_reap().
 */
#ifndef ACCEL_TEST_H
#define ACCEL_TEST_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "accelsched.h"
#include "splats.h"
#include "kselftest_harness.h"

#define ACCEL_DEV_PATH "/dev/" ACCEL_DEVICE_NAME

/**
 * ASSERT_ERRNO() - @call returns -1 and sets errno to @err
 * @call: the call, e.g. ioctl(fd, ACCEL_IOCTL_INFO, NULL)
 * @err: a positive errno value, e.g. EFAULT
 *
 * A failure names the call, the errno expected and the one seen (0 if
 * @call did not return -1), by name.
 */
#define ASSERT_ERRNO(call, err)						\
	do {								\
		long __ret;						\
		int __errno, __err;					\
									\
		errno = 0;						\
		__ret = (long)(call);					\
		__errno = errno;					\
		__err = __ret == -1 ? __errno : 0;			\
		ASSERT_EQ(err, __err) {					\
			TH_LOG("expected %s to fail with %s (%d); it returned %ld, errno %d (%s)", \
			       #call, strerrorname_np(err), (err), __ret, \
			       __errno, strerrorname_np(__errno) ?: "0"); \
		}							\
	} while (0)

/*
 * Open the device. The fixture's set-up (accel_test_setup()) skipped the
 * test already if the module is not loaded, so a failure here fails it.
 */
static inline int accel_test_open(void)
{
	return open(ACCEL_DEV_PATH, O_RDWR | O_CLOEXEC);
}

/* Fill @sqe as an IORING_OP_URING_CMD with opcode @op and @len payload bytes. */
static inline void accel_prep_uring_cmd(struct io_uring_sqe *sqe, int fd,
					__u32 op, const void *payload,
					size_t len)
{
	io_uring_prep_rw(IORING_OP_URING_CMD, sqe, fd, NULL, 0, 0);
	sqe->cmd_op = op;
	memset(sqe->cmd, 0, 16);
	memcpy(sqe->cmd, payload, len);
}

/* Submit everything queued on @ring and reap exactly @n CQEs into res[]/ud[]. */
static inline int accel_reap(struct io_uring *ring, unsigned int n,
			     int *res, __u64 *ud)
{
	struct io_uring_cqe *cqe;
	int ret;

	ret = io_uring_submit_and_wait(ring, n);
	if (ret < 0)
		return ret;
	for (unsigned int i = 0; i < n; i++) {
		ret = io_uring_wait_cqe(ring, &cqe);
		if (ret < 0)
			return ret;
		res[i] = cqe->res;
		if (ud)
			ud[i] = cqe->user_data;
		io_uring_cqe_seen(ring, cqe);
	}
	return 0;
}

/* ---- the kernel log around each test ------------------------------------ */


/*
 * The marker "accelsched-test: @what <fixture>[.<variant>].<test>" in @buf,
 * the test's name as KTAP gives it. @variant is the fixture's set-up or
 * teardown's `variant` (NULL for a fixture without variants).
 */
static inline void accel_test_marker(struct __test_metadata *_metadata,
				     const void *variant, const char *what,
				     char *buf, size_t len)
{
	const struct __fixture_variant_metadata *v = _metadata->fixture->variant;

	while (v && v->data != variant)
		v = v->next;
	snprintf(buf, len, "accelsched-test: %s %s%s%s.%s", what,
		 _metadata->fixture->name, v ? "." : "", v ? v->name : "",
		 _metadata->name);
}

/*
 * Write @line to the kernel log; false if there is no /dev/kmsg to write.
 * A file of its own each time: /dev/kmsg rate-limits writes per open file.
 */
static inline bool accel_kmsg_write(const char *line)
{
	int fd = open("/dev/kmsg", O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return false;
	n = write(fd, line, strlen(line));
	close(fd);
	return n > 0;
}

/*
 * The next record of the kernel log open on @fd: its sequence number in
 * *@seq, its text (up to its first newline) returned. NULL at the end.
 */
static inline const char *accel_kmsg_next(int fd, char *rec, size_t len,
					  unsigned long long *seq)
{
	for (;;) {
		ssize_t n = read(fd, rec, len - 1);
		char *msg, *nl;

		if (n < 0 && errno == EPIPE)
			continue; /* records overwritten: go on with the next */
		if (n <= 0)
			return NULL;
		rec[n] = 0;
		msg = strchr(rec, ';');
		if (!msg || sscanf(rec, "%*u,%llu,", seq) != 1)
			continue;
		msg++;
		nl = strchr(msg, '\n');
		if (nl)
			*nl = 0;
		return msg;
	}
}

/*
 * Print the kernel log's splat lines after the record numbered @after;
 * return how many there are.
 */
static inline int accel_kmsg_splats(int fd, unsigned long long after)
{
	unsigned long long seq;
	const char *msg;
	char rec[8192];
	int splats = 0;

	while ((msg = accel_kmsg_next(fd, rec, sizeof(rec), &seq))) {
		if (seq <= after || strstr(msg, "accelsched-test: "))
			continue;
		for (size_t i = 0; i < ARRAY_SIZE(accel_test_splats); i++) {
			if (strstr(msg, accel_test_splats[i])) {
				ksft_print_msg("kernel: %s\n", msg);
				splats++;
				break;
			}
		}
	}
	return splats;
}

/*
 * The fixture's set-up: skip the test when the module is not loaded, and
 * mark the kernel log where the test starts.
 */
static inline void accel_test_setup(struct __test_metadata *_metadata,
				    const void *variant)
{
	char start[256];

	if (access(ACCEL_DEV_PATH, F_OK) && errno == ENOENT)
		SKIP(return, "%s does not exist: the module is not loaded",
		     ACCEL_DEV_PATH);
	accel_test_marker(_metadata, variant, "START", start, sizeof(start));
	accel_kmsg_write(start);
}

/*
 * The fixture's teardown, in the harness's process once the test's has
 * exited: fail the test if the kernel log since its START marker shows a
 * splat. Without the marker (the log wrapped around since), everything
 * the log still holds came after it.
 */
static inline void accel_test_teardown(struct __test_metadata *_metadata,
				       const void *variant)
{
	char start[256], end[256], rec[8192];
	unsigned long long seq, after = 0;
	const char *msg;
	int fd, splats;

	/* Let the kernel finish what the test's exit set going. */
	usleep(20000);
	accel_test_marker(_metadata, variant, "START", start, sizeof(start));
	accel_test_marker(_metadata, variant, "END", end, sizeof(end));
	if (!accel_kmsg_write(end))
		return; /* no markers, no scan */
	fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return;
	while ((msg = accel_kmsg_next(fd, rec, sizeof(rec), &seq)))
		if (!strcmp(msg, start))
			after = seq;
	lseek(fd, 0, SEEK_SET);
	splats = accel_kmsg_splats(fd, after);
	close(fd);
	if (splats) {
		TH_LOG("the kernel log shows %d splat line(s) during the test (above)",
		       splats);
		_metadata->exit_code = KSFT_FAIL;
	}
}

/* ---- main ----------------------------------------------------------------- */

/* $ACCEL_TEST_TIMEOUT_SCALE: a factor for every test's timeout (default 1). */
static inline int accel_test_timeout_scale(void)
{
	const char *s = getenv("ACCEL_TEST_TIMEOUT_SCALE");
	int scale = s ? atoi(s) : 1;

	return scale > 0 ? scale : 1;
}

static inline int accel_test_main(int argc, char **argv)
{
	int scale = accel_test_timeout_scale();

	for (struct __fixture_metadata *f = __fixture_list; f; f = f->next)
		for (struct __test_metadata *t = f->tests; t; t = t->next)
			t->timeout *= scale;
	return test_harness_run(argc, argv);
}

/* The test program's main(), in place of the harness's TEST_HARNESS_MAIN. */
#define ACCEL_TEST_MAIN							\
	int main(int argc, char **argv)					\
	{								\
		return accel_test_main(argc, argv);			\
	}

#endif /* ACCEL_TEST_H */
