// SPDX-License-Identifier: MIT
/*
 * Check suite "internal": white-box tests of libaccel's internals, linked
 * against its objects rather than the shared library: the reference count,
 * the configuration resolution, and the io_uring explanations and uring_cmd
 * path that a machine without the module cannot reach through the API.
 *
 * The "kernel" case runs the kernel scheduler's whole open path without the
 * module: this executable defines ioctl(), which the linker binds libaccel's
 * objects to, and it answers ACCEL_IOCTL_INFO on any fd with fake_info while
 * fake_active is set (everything else goes to the real system call). With
 * ACCEL_DEVICE=/dev/null that makes /dev/null a fake accelsched device whose
 * uring_cmd completes with 0 (Linux 6.0 and later implement it for
 * measuring io_uring passthrough).
 */
#include <accelsched.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include "src/error.h"
#include "src/pool.h"
#include "src/sched.h"
#include "src/uring.h"
#include "test-util.h"

/* The hand-made job label is what snprintf() made of it, cut alike. */
START_TEST(test_submission_label)
{
	static const uint64_t ns[] = { 0, 1, 9, 10, 99, 4294967295ull, 4294967296ull,
				       9223372036854775807ull, 9223372036854775808ull,
				       18446744073709551615ull };
	static const char *const uris[] = { "cpu://0", "", "vulkan://0" };
	char got[96], want[96];

	for (size_t u = 0; u < sizeof(uris) / sizeof(uris[0]); u++)
		for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++)
			for (size_t len = 1; len <= sizeof(got); len++) {
				memset(got, 'x', sizeof(got));
				snprintf(want, len, "submission #%" PRIu64 " on a queue of %s",
					 ns[i], uris[u]);
				accel_submission_label(got, len, ns[i], uris[u]);
				ck_assert_msg(!strcmp(got, want), "n %" PRIu64 ", len %zu: '%s', want '%s'",
					      ns[i], len, got, want);
				/* Nothing written past the end. */
				if (len < sizeof(got))
					ck_assert_int_eq(got[len], 'x');
			}
	/* A length of 0 writes nothing. */
	memset(got, 'x', sizeof(got));
	accel_submission_label(got, 0, 7, "cpu://0");
	ck_assert_int_eq(got[0], 'x');
}
END_TEST

START_TEST(test_refcount)
{
	accel_scheduler_t *s;

	setenv(ACCEL_SCHEDULER_ENV, "embedded", 1);
	ASSERT_OK(accel_scheduler_open(NULL, &s));
	ck_assert_uint_eq(atomic_load(&s->refcount), 1);
	accel_scheduler_retain(s);
	ck_assert_uint_eq(atomic_load(&s->refcount), 2);
	accel_scheduler_release(s);
	ck_assert_uint_eq(atomic_load(&s->refcount), 1);
	accel_scheduler_release(s);
}
END_TEST

/*
 * A cascaded failure whose cause has no message yet (the kernel scheduler
 * fails a chain at once; the library learns of it in any order) names the
 * first failure once that is written, whatever order the hops came in.
 */
START_TEST(test_failure_cause_any_order)
{
	enum { CHAIN = 100 };
	accel_semaphore_t *sem[CHAIN];
	accel_scheduler_t *s;
	char hop[64];
	const char *m;

	setenv(ACCEL_SCHEDULER_ENV, "embedded", 1);
	ASSERT_OK(accel_scheduler_open(NULL, &s));
	for (int i = 0; i < CHAIN; i++)
		ASSERT_OK(accel_semaphore_create(s, 0, &sem[i]));
	for (int i = CHAIN - 1; i > 0; i -= 2) { /* odd hops first, then even */
		snprintf(hop, sizeof(hop), "#%d was not run: its wait 0 (value 1) failed with EIO", i);
		accel_semaphore_set_failure_cause(sem[i], hop, sem[i - 1]);
	}
	m = accel_semaphore_failure_message(sem[CHAIN - 1]);
	ck_assert_str_eq(m, "#99 was not run: its wait 0 (value 1) failed with EIO");
	for (int i = CHAIN - 2; i > 0; i -= 2) {
		snprintf(hop, sizeof(hop), "#%d was not run: its wait 0 (value 1) failed with EIO", i);
		accel_semaphore_set_failure_cause(sem[i], hop, sem[i - 1]);
	}
	accel_semaphore_set_failure(sem[0], "#0 failed: the root cause");
	ck_assert_str_eq(m, "#99 was not run: its wait 0 (value 1) failed with EIO");
	m = accel_semaphore_failure_message(sem[CHAIN - 1]);
	ASSERT_CONTAINS("hop 99", m, "#99 was not run: its wait 0 (value 1) failed with EIO: #98 was not run");
	ASSERT_CONTAINS("hop 99", m, " submissions): #0 failed: the root cause");
	ASSERT_CONTAINS("hop 2", accel_semaphore_failure_message(sem[2]),
			"#2 was not run: its wait 0 (value 1) failed with EIO: #1 was not run");
	/* The first failure wins; a cause may not loop back. */
	accel_semaphore_set_failure(sem[5], "late");
	ASSERT_CONTAINS("hop 5", accel_semaphore_failure_message(sem[5]), "the root cause");
	for (int i = 0; i < CHAIN; i++)
		accel_semaphore_release(sem[i]);
	ASSERT_OK(accel_semaphore_create(s, 0, &sem[0]));
	accel_semaphore_set_failure_cause(sem[0], "#1 was not run: its wait 0 (value 1) failed with EIO", sem[0]);
	ck_assert_str_eq(accel_semaphore_failure_message(sem[0]),
			 "#1 was not run: its wait 0 (value 1) failed with EIO");
	accel_semaphore_release(sem[0]);
	accel_scheduler_release(s);
}
END_TEST

/* Releasing a long chain of unresolved causes frees it all, without recursion. */
START_TEST(test_failure_cause_chain_freed)
{
	enum { CHAIN = 50000 };
	accel_semaphore_t **sem = calloc(CHAIN, sizeof(*sem));
	accel_scheduler_t *s;

	ck_assert_ptr_nonnull(sem);
	setenv(ACCEL_SCHEDULER_ENV, "embedded", 1);
	ASSERT_OK(accel_scheduler_open(NULL, &s));
	for (int i = 0; i < CHAIN; i++)
		ASSERT_OK(accel_semaphore_create(s, 0, &sem[i]));
	for (int i = 0; i + 1 < CHAIN; i++)
		accel_semaphore_set_failure_cause(sem[i], "#n was not run: its wait 0 (value 1) failed with EIO",
						  sem[i + 1]);
	for (int i = CHAIN; i--;) /* sem[0] last: it frees the whole chain */
		accel_semaphore_release(sem[i]);
	free(sem);
	accel_scheduler_release(s);
}
END_TEST

START_TEST(test_config_defaults)
{
	struct accel_sched_config cfg;

	ASSERT_OK(accel_sched_config_resolve(NULL, &cfg));
	ck_assert_int_eq(cfg.kind, ACCEL_SCHEDULER_AUTO);
	ck_assert_str_eq(cfg.device_path, ACCEL_SCHEDULER_DEFAULT_DEVICE);
	ck_assert_str_eq(cfg.path_origin, "");
	ck_assert_str_eq(cfg.kind_origin, "default");
}
END_TEST

START_TEST(test_config_env_over_options)
{
	accel_scheduler_options_t opts = {
		.kind = ACCEL_SCHEDULER_EMBEDDED,
		.device_path = "/from/options",
	};
	struct accel_sched_config cfg;

	ASSERT_OK(accel_sched_config_resolve(&opts, &cfg));
	ck_assert_int_eq(cfg.kind, ACCEL_SCHEDULER_EMBEDDED);
	ck_assert_str_eq(cfg.kind_origin, "options->kind = ACCEL_SCHEDULER_EMBEDDED");
	ck_assert_str_eq(cfg.device_path, "/from/options");
	ck_assert_str_eq(cfg.path_origin, "options->device_path");

	setenv(ACCEL_SCHEDULER_ENV, "kernel", 1);
	setenv(ACCEL_DEVICE_ENV, "/from/env", 1);
	ASSERT_OK(accel_sched_config_resolve(&opts, &cfg));
	ck_assert_int_eq(cfg.kind, ACCEL_SCHEDULER_KERNEL);
	ck_assert_str_eq(cfg.kind_origin, "ACCEL_SCHEDULER=kernel");
	ck_assert_str_eq(cfg.device_path, "/from/env");
	ck_assert_str_eq(cfg.path_origin, "ACCEL_DEVICE");
}
END_TEST

START_TEST(test_uring_explain_enomem_names_memlock)
{
	struct rlimit rl;
	char why[512];

	ck_assert_int_eq(getrlimit(RLIMIT_MEMLOCK, &rl), 0);
	rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= 65536 ?
		      65536 : rl.rlim_max;
	ck_assert_int_eq(setrlimit(RLIMIT_MEMLOCK, &rl), 0);
	accel_uring_explain_init(ENOMEM, why, sizeof(why));
	ASSERT_CONTAINS("why", why, "ENOMEM");
	ASSERT_CONTAINS("why", why, "RLIMIT_MEMLOCK");
	if (rl.rlim_cur == 65536)
		ASSERT_CONTAINS("why", why, "65536 bytes ('ulimit -l' says 64)");
	ASSERT_CONTAINS("why", why, "ulimit -l");
}
END_TEST

START_TEST(test_uring_explain_enomem_unlimited)
{
	struct rlimit rl;
	char why[512];

	ck_assert_int_eq(getrlimit(RLIMIT_MEMLOCK, &rl), 0);
	if (rl.rlim_max != RLIM_INFINITY)
		TEST_SKIP("the hard RLIMIT_MEMLOCK is finite");
	rl.rlim_cur = RLIM_INFINITY;
	ck_assert_int_eq(setrlimit(RLIMIT_MEMLOCK, &rl), 0);
	accel_uring_explain_init(ENOMEM, why, sizeof(why));
	ASSERT_CONTAINS("why", why, "RLIMIT_MEMLOCK is unlimited");
}
END_TEST

START_TEST(test_uring_explain_eperm_names_sysctl)
{
	char why[512];

	accel_uring_explain_init(EPERM, why, sizeof(why));
	ASSERT_CONTAINS("why", why, "EPERM");
	ASSERT_CONTAINS("why", why, "kernel.io_uring_disabled (now ");
	ASSERT_CONTAINS("why", why, "seccomp");
}
END_TEST

START_TEST(test_uring_explain_enosys)
{
	char why[512];

	accel_uring_explain_init(ENOSYS, why, sizeof(why));
	ASSERT_CONTAINS("why", why, "ENOSYS");
	ASSERT_CONTAINS("why", why, "CONFIG_IO_URING");
}
END_TEST

START_TEST(test_uring_explain_other)
{
	char why[512];

	accel_uring_explain_init(EINVAL, why, sizeof(why));
	ASSERT_CONTAINS("why", why, "io_uring_queue_init(64) failed with EINVAL");
}
END_TEST

START_TEST(test_uring_needs_feature)
{
	struct io_uring ring;
	char why[512];

	unsigned int sq = 5;

	ASSERT_ERRNO(accel_uring_setup(&ring, -1, 0, &sq, why, sizeof(why)),
		     EOPNOTSUPP);
	ck_assert_uint_eq(sq, 0); /* no ring: nothing polls it */
	ASSERT_CONTAINS("why", why, "ACCEL_FEATURE_URING_CMD");
}
END_TEST

/* Skips the calling test when this process cannot have an io_uring. */
#define REQUIRE_URING(ring) do {                                              \
	char why_[512];                                                       \
	int ret_ = io_uring_queue_init(ACCEL_URING_ENTRIES, (ring), 0);       \
	if (ret_ < 0) {                                                       \
		accel_uring_explain_init(-ret_, why_, sizeof(why_));          \
		TEST_SKIP("no io_uring here: %s", why_);                      \
	}                                                                     \
} while (0)

/*
 * The hand-made uring_cmd SQE reaches a driver and its completion comes back.
 * /dev/null implements ->uring_cmd as "return 0" (for measuring the path)
 * since Linux 6.0; before that the kernel answers -EOPNOTSUPP.
 */
START_TEST(test_uring_cmd_round_trip)
{
	struct accel_nop nop = { 0 };
	struct io_uring ring;
	int fd, ret;

	REQUIRE_URING(&ring);
	fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	for (int i = 0; i < 2 * ACCEL_URING_ENTRIES; i++) {
		ret = accel_uring_cmd(&ring, fd, ACCEL_URING_CMD_NOP, &nop,
				      sizeof(nop), ACCEL_URING_PROBE_TIMEOUT_MS);
		ck_assert_msg(ret == 0 || ret == -EOPNOTSUPP,
			      "accel_uring_cmd(/dev/null) #%d returned %d (%s), expected 0 (or -EOPNOTSUPP before Linux 6.0)",
			      i, ret, test_errname(ret));
	}
	ASSERT_ERRNO(accel_uring_cmd(&ring, fd, ACCEL_URING_CMD_NOP, &nop, 17,
				     ACCEL_URING_PROBE_TIMEOUT_MS), EINVAL);
	close(fd);
	io_uring_queue_exit(&ring);
}
END_TEST

/* A driver without ->uring_cmd (a pipe): the probe fails and says so. */
START_TEST(test_uring_setup_without_uring_cmd)
{
	struct io_uring ring;
	char why[512];
	int fds[2], before, ret;
	unsigned int sq = 5;

	REQUIRE_URING(&ring);
	io_uring_queue_exit(&ring);
	before = test_count_fds();
	ck_assert_int_eq(pipe2(fds, O_CLOEXEC), 0);
	ret = accel_uring_setup(&ring, fds[0], ACCEL_FEATURE_URING_CMD, &sq,
				why, sizeof(why));
	ck_assert_msg(ret == -EOPNOTSUPP,
		      "accel_uring_setup(pipe) returned %d (%s), expected -EOPNOTSUPP; why: \"%s\"",
		      ret, test_errname(ret), why);
	ASSERT_CONTAINS("why", why, "the ACCEL_URING_CMD_NOP probe failed with EOPNOTSUPP");
	ASSERT_CONTAINS("why", why, "does not implement uring_cmd");
	ck_assert_uint_eq(sq, 0); /* the ring is gone: nothing polls it */
	close(fds[0]);
	close(fds[1]);
	ck_assert_int_eq(test_count_fds(), before); /* the ring is gone too */
}
END_TEST

/*
 * A driver that completes uring_cmds (/dev/null): the ring is kept, as an
 * ordinary one and as a polled one (or, where the kernel refuses polling,
 * an ordinary ring that says why), and the NOP is answered either way.
 */
START_TEST(test_uring_setup_round_trip)
{
	static const unsigned int asked[] = { 0, 5 };
	struct io_uring ring;
	char why[512] = "";
	int fd, ret;

	REQUIRE_URING(&ring);
	io_uring_queue_exit(&ring);
	fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	for (size_t i = 0; i < sizeof(asked) / sizeof(asked[0]); i++) {
		unsigned int sq = asked[i];

		ret = accel_uring_setup(&ring, fd, ACCEL_FEATURE_URING_CMD, &sq,
					why, sizeof(why));
		if (ret == -EOPNOTSUPP) {
			close(fd);
			TEST_SKIP("/dev/null has no uring_cmd before Linux 6.0: %s", why);
		}
		ck_assert_msg(ret == 0, "accel_uring_setup(/dev/null, polling %u ms) returned %d (%s); why: \"%s\"",
			      asked[i], ret, test_errname(ret), why);
		if (sq) {
			ck_assert_uint_eq(sq, asked[i]);
			ck_assert(ring.flags & IORING_SETUP_SQPOLL);
			ck_assert_str_eq(why, "");
		} else {
			ck_assert(!(ring.flags & IORING_SETUP_SQPOLL));
			if (asked[i])
				ASSERT_CONTAINS("why", why, "ACCEL_URING_SQPOLL was refused");
		}
		io_uring_queue_exit(&ring);
	}
	close(fd);
}
END_TEST

/* ACCEL_URING_SQPOLL: milliseconds 1..10000, or none; anything else is said. */
START_TEST(test_uring_sqpoll_env)
{
	static const struct { const char *v; unsigned int ms; bool note; } c[] = {
		{ NULL, 0, false }, { "", 0, false }, { "0", 0, false },
		{ "2", 2, false }, { "10000", 10000, false },
		{ "10001", 0, true }, { "-1", 0, true }, { "abc", 0, true },
		{ "5ms", 0, true }, { "4294967298", 0, true },
		{ "99999999999999999999", 0, true },
	};
	char note[256];

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		if (c[i].v)
			setenv(ACCEL_URING_SQPOLL_ENV, c[i].v, 1);
		else
			unsetenv(ACCEL_URING_SQPOLL_ENV);
		ck_assert_msg(accel_uring_sqpoll_ms(note, sizeof(note)) == c[i].ms,
			      "%s='%s': expected %u ms", ACCEL_URING_SQPOLL_ENV,
			      c[i].v ? c[i].v : "(unset)", c[i].ms);
		if (c[i].note) {
			ASSERT_CONTAINS("note", note, "ignored");
			ASSERT_CONTAINS("note", note, c[i].v);
			ASSERT_CONTAINS("note", note, "1 to 10000");
		} else {
			ck_assert_msg(!note[0], "'%s': unexpected note \"%s\"",
				      c[i].v ? c[i].v : "(unset)", note);
		}
	}
	unsetenv(ACCEL_URING_SQPOLL_ENV);
}
END_TEST


/* ---- the kernel scheduler on a fake device ------------------------------ */

static bool fake_active;
static struct accel_info fake_info;

int ioctl(int fd, unsigned long request, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, request);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (fake_active && request == ACCEL_IOCTL_INFO) {
		memcpy(arg, &fake_info, sizeof(fake_info));
		return 0;
	}
	return (int)syscall(SYS_ioctl, fd, request, arg);
}

static void fake_device(uint32_t abi_major, uint64_t features)
{
	memset(&fake_info, 0, sizeof(fake_info));
	fake_info.abi_major = abi_major;
	fake_info.abi_minor = 3;
	fake_info.features = features;
	fake_info.client_id = 42;
	snprintf(fake_info.version, sizeof(fake_info.version), "9.8.7");
	snprintf(fake_info.kernel_release, sizeof(fake_info.kernel_release),
		 "6.1.0-fake");
	fake_active = true;
	test_clear_env();
	setenv(ACCEL_DEVICE_ENV, "/dev/null", 1);
}

/* Makes io_uring_setup fail with @err in this (forked) test process. */
static bool deny_io_uring_setup(int err)
{
	struct sock_filter filter[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1),
		BPF_STMT(BPF_RET | BPF_K,
			 SECCOMP_RET_ERRNO | (err & SECCOMP_RET_DATA)),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {
		.len = ACCEL_ARRAY_SIZE(filter),
		.filter = filter,
	};

	return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
	       prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == 0;
}

START_TEST(test_kernel_answers)
{
	accel_scheduler_info_t info;
	accel_scheduler_t *s;
	int before = test_count_fds();

	fake_device(ACCEL_ABI_MAJOR, ACCEL_FEATURE_URING_CMD | (1ULL << 40));
	ASSERT_OK(accel_scheduler_open(NULL, &s));
	ck_assert_int_eq(accel_scheduler_kind(s), ACCEL_SCHEDULER_KERNEL);
	ASSERT_OK(accel_scheduler_query(s, &info));
	ck_assert_int_eq(info.kind, ACCEL_SCHEDULER_KERNEL);
	ck_assert_uint_eq(info.abi_major, ACCEL_ABI_MAJOR);
	ck_assert_uint_eq(info.abi_minor, 3);
	ck_assert_uint_eq(info.features, ACCEL_FEATURE_URING_CMD | (1ULL << 40));
	ck_assert_uint_eq(info.client_id, 42);
	ck_assert_str_eq(info.module_version, "9.8.7");
	ck_assert_str_eq(info.kernel_release, "6.1.0-fake");
	ASSERT_CONTAINS("reason", accel_scheduler_reason(s),
			"/dev/null (from ACCEL_DEVICE) answered: module 9.8.7, ABI 1.3, io_uring ");
	if (info.uring)
		ASSERT_CONTAINS("reason", accel_scheduler_reason(s), "io_uring ok");
	else
		ASSERT_CONTAINS("reason", accel_scheduler_reason(s),
				"ACCEL_URING_CMD_NOP probe failed with EOPNOTSUPP");
	ck_assert_int_gt(test_count_fds(), before);
	accel_scheduler_release(s);
	ck_assert_msg(test_count_fds() == before,
		      "the last release left %d fds open",
		      test_count_fds() - before);
}
END_TEST

START_TEST(test_kernel_explicit_answers)
{
	accel_scheduler_t *s;

	fake_device(ACCEL_ABI_MAJOR, ACCEL_FEATURE_URING_CMD);
	setenv(ACCEL_SCHEDULER_ENV, "kernel", 1);
	ASSERT_OK(accel_scheduler_open(NULL, &s));
	ck_assert_int_eq(accel_scheduler_kind(s), ACCEL_SCHEDULER_KERNEL);
	ASSERT_CONTAINS("reason", accel_scheduler_reason(s),
			"chosen by ACCEL_SCHEDULER=kernel; /dev/null (from ACCEL_DEVICE) answered");
	accel_scheduler_release(s);
}
END_TEST

START_TEST(test_kernel_strings_are_terminated)
{
	accel_scheduler_info_t info;
	accel_scheduler_t *s;

	fake_device(ACCEL_ABI_MAJOR, 0);
	memset(fake_info.version, 'v', sizeof(fake_info.version));
	memset(fake_info.kernel_release, 'k', sizeof(fake_info.kernel_release));
	ASSERT_OK(accel_scheduler_open(NULL, &s));
	ASSERT_OK(accel_scheduler_query(s, &info));
	ck_assert_uint_eq(strlen(info.module_version), sizeof(fake_info.version) - 1);
	ck_assert_uint_eq(strlen(info.kernel_release), sizeof(fake_info.kernel_release) - 1);
	accel_scheduler_release(s);
}
END_TEST

/* What the reason says about fake_device(ACCEL_ABI_MAJOR + 1, ...). */
static const char *abi_mismatch_text(void)
{
	static char text[128];

	snprintf(text, sizeof(text),
		 "speaks accelsched ABI %d.3, but this libaccel speaks ABI %d.%d: ABI major %d and %d",
		 ACCEL_ABI_MAJOR + 1, ACCEL_ABI_MAJOR, ACCEL_ABI_MINOR,
		 ACCEL_ABI_MAJOR + 1, ACCEL_ABI_MAJOR);
	return text;
}

START_TEST(test_kernel_abi_mismatch_auto)
{
	accel_scheduler_t *s;

	fake_device(ACCEL_ABI_MAJOR + 1, ACCEL_FEATURE_URING_CMD);
	ASSERT_OK(accel_scheduler_open(NULL, &s));
	ck_assert_int_eq(accel_scheduler_kind(s), ACCEL_SCHEDULER_EMBEDDED);
	ASSERT_CONTAINS("reason", accel_scheduler_reason(s), abi_mismatch_text());
	ASSERT_CONTAINS("reason", accel_scheduler_reason(s), "using the embedded scheduler");
	accel_scheduler_release(s);
}
END_TEST

START_TEST(test_kernel_abi_mismatch_kernel)
{
	accel_scheduler_t *s = TEST_NOT_NULL;
	int before;

	fake_device(ACCEL_ABI_MAJOR + 1, ACCEL_FEATURE_URING_CMD);
	setenv(ACCEL_SCHEDULER_ENV, "kernel", 1);
	before = test_count_fds();
	ASSERT_ERRNO(accel_scheduler_open(NULL, &s), EPROTO);
	ck_assert_ptr_null(s);
	ASSERT_MESSAGE_CONTAINS(abi_mismatch_text());
	ck_assert_int_eq(test_count_fds(), before);
}
END_TEST

START_TEST(test_kernel_without_uring_feature)
{
	accel_scheduler_info_t info;
	accel_scheduler_t *s;

	fake_device(ACCEL_ABI_MAJOR, 0);
	ASSERT_OK(accel_scheduler_open(NULL, &s));
	ASSERT_OK(accel_scheduler_query(s, &info));
	ck_assert_int_eq(info.kind, ACCEL_SCHEDULER_KERNEL);
	ck_assert(!info.uring);
	ASSERT_CONTAINS("reason", accel_scheduler_reason(s),
			"io_uring unavailable (the module does not announce ACCEL_FEATURE_URING_CMD), so commands go through ioctls");
	accel_scheduler_release(s);
}
END_TEST

/* io_uring forbidden (as by a container's seccomp profile): kernel, no ring. */
static void check_uring_denied(int err, const char *needle)
{
	accel_scheduler_info_t info;
	accel_scheduler_t *s;

	fake_device(ACCEL_ABI_MAJOR, ACCEL_FEATURE_URING_CMD);
	if (!deny_io_uring_setup(err))
		TEST_SKIP("cannot install a seccomp filter: %s", strerror(errno));
	ASSERT_OK(accel_scheduler_open(NULL, &s));
	ASSERT_OK(accel_scheduler_query(s, &info));
	ck_assert_int_eq(info.kind, ACCEL_SCHEDULER_KERNEL);
	ck_assert(!info.uring);
	ASSERT_CONTAINS("reason", accel_scheduler_reason(s), "io_uring unavailable (");
	ASSERT_CONTAINS("reason", accel_scheduler_reason(s), needle);
	ASSERT_CONTAINS("reason", accel_scheduler_reason(s), "so commands go through ioctls");
	accel_scheduler_release(s);
}

START_TEST(test_kernel_uring_denied_eperm)
{
	check_uring_denied(EPERM, "io_uring_queue_init(64) failed with EPERM");
}
END_TEST

START_TEST(test_kernel_uring_denied_enosys)
{
	check_uring_denied(ENOSYS, "io_uring_queue_init(64) failed with ENOSYS");
}
END_TEST

START_TEST(test_kernel_uring_denied_enomem)
{
	check_uring_denied(ENOMEM, "RLIMIT_MEMLOCK is ");
}
END_TEST

/* ---- the executor's contract with asynchronous work --------------------- */

/* A job that signals one point; its execute says what mode asks. */
struct pend_job {
	struct accel_sched_job job;
	struct accel_sched_point signal;
	bool pending;           /* execute returns ACCEL_JOB_PENDING */
	atomic_int *destroyed;
	uint64_t *device_ns;    /* out, at destroy */
	uint64_t released_at;   /* the signal's value when ->release ran */
	bool released;
};

static _Atomic(struct accel_sched_job *) in_flight;

static int pend_execute(struct accel_sched_job *job, char *msg, size_t len)
{
	struct pend_job *p = (struct pend_job *)job;

	(void)msg;
	(void)len;
	if (!p->pending)
		return 0;
	atomic_store(&in_flight, job);
	return ACCEL_JOB_PENDING;
}

static void pend_release(struct accel_sched_job *job)
{
	struct pend_job *p = (struct pend_job *)job;

	ck_assert(!p->released);
	p->released = true;
	accel_semaphore_query(p->signal.sem, &p->released_at, NULL);
}

static void pend_destroy(struct accel_sched_job *job)
{
	struct pend_job *p = (struct pend_job *)job;

	/* Released once, before its signal: whoever saw it saw nothing held. */
	ck_assert(p->released);
	ck_assert_uint_eq(p->released_at, 0);
	*p->device_ns = job->device_ns;
	atomic_fetch_add(p->destroyed, 1);
	free(p);
}

static void pend_submit(accel_scheduler_t *s, struct accel_sched_executor *ex,
			accel_semaphore_t *sem, bool pending, atomic_int *destroyed,
			uint64_t *device_ns)
{
	struct pend_job *p = calloc(1, sizeof(*p));

	ck_assert_ptr_nonnull(p);
	p->signal = (struct accel_sched_point){ sem, 1 };
	p->pending = pending;
	p->destroyed = destroyed;
	p->device_ns = device_ns;
	p->job.executor = ex;
	p->job.signals = &p->signal;
	p->job.signal_count = 1;
	p->job.execute = pend_execute;
	p->job.release = pend_release;
	p->job.destroy = pend_destroy;
	snprintf(p->job.label, sizeof(p->job.label), "job %s", pending ? "A" : "B");
	ck_assert_int_eq(s->ops->job_submit(s, &p->job), 0);
}

/*
 * A job whose work is still in flight (execute returned ACCEL_JOB_PENDING)
 * holds back neither its executor nor the next job; it completes when
 * accel_sched_job_finish() says so, from another thread, with its status,
 * its message and a device time. Either way ->release runs once, before
 * the signal (pend_destroy checks).
 */
START_TEST(test_executor_pending_job)
{
	accel_scheduler_t *s;
	struct accel_sched_executor *ex;
	accel_semaphore_t *a, *b;
	atomic_int destroyed = 0;
	uint64_t ns_a = 0, ns_b = 0, value;
	char why[ACCEL_REASON_MAX];
	int error;
	struct accel_sched_queue_params params = {
		"test", ACCEL_SCHED_PRIO_NORMAL, 1, 1,
	};

	ck_assert_int_eq(accel_sched_embedded_open(&s, why, sizeof(why)), 0);
	ck_assert_int_eq(s->ops->executor_create(s, "test", &params, &ex), 0);
	ck_assert_int_eq(accel_semaphore_create(s, 0, &a), 0);
	ck_assert_int_eq(accel_semaphore_create(s, 0, &b), 0);
	atomic_store(&in_flight, NULL);
	pend_submit(s, ex, a, true, &destroyed, &ns_a);
	pend_submit(s, ex, b, false, &destroyed, &ns_b);

	/* B ran and completed behind A, which is still in flight. */
	ck_assert_int_eq(accel_semaphore_wait(b, 1, 0, accel_deadline_after(UINT64_C(60000000000))), 0);
	ck_assert_ptr_nonnull(atomic_load(&in_flight));
	ck_assert_int_eq(accel_semaphore_query(a, &value, &error), 0);
	ck_assert_uint_eq(value, 0);
	ck_assert_int_eq(error, 0);
	/* B is destroyed after its signal: on the executor, a moment later. */
	for (int i = 0; i < 10000 && atomic_load(&destroyed) < 1; i++)
		usleep(1000);
	ck_assert_int_eq(atomic_load(&destroyed), 1);

	/* Its work fails: A's signal fails with that status and message. */
	accel_sched_job_finish(atomic_load(&in_flight), -EIO, "the device fell over");
	ck_assert_int_eq(atomic_load(&destroyed), 2);
	ck_assert_int_eq(accel_semaphore_query(a, &value, &error), 0);
	ck_assert_uint_eq(value, 0);
	ck_assert_int_eq(error, -EIO);
	ck_assert_str_eq(accel_semaphore_failure_message(a), "the device fell over");
	ck_assert_uint_gt(ns_a, 0); /* from execute to finish */
	ck_assert_uint_gt(ns_b, 0);

	accel_semaphore_release(a);
	accel_semaphore_release(b);
	s->ops->executor_destroy(ex);
	accel_scheduler_release(s);
}
END_TEST

START_TEST(test_errno_name)
{
	ck_assert_str_eq(accel_errno_name(ENOENT), "ENOENT");
	ck_assert_str_eq(accel_errno_name(99999), "errno 99999");
}
END_TEST

/* ---- record pools (src/pool.h) ---------------------------------------- */

/*
 * A freed record is handed out again for any size that fits; a size over
 * the pool's is a plain allocation that never enters it.
 */
START_TEST(test_pool_reuses_freed_records)
{
	struct accel_pool *pool = accel_pool_new(256);
	uint8_t *a, *b, *big;

	ck_assert_ptr_nonnull(pool);
	a = accel_pool_alloc(pool, 100);
	ck_assert_ptr_nonnull(a);
	memset(a, 0xa5, 256); /* the whole pooled size is the record's */
	ck_assert_uint_eq(accel_pool_count(pool), 0);
	accel_pool_free(a);
	ck_assert_uint_eq(accel_pool_count(pool), 1);
	b = accel_pool_alloc(pool, 256);
	ck_assert_ptr_eq(b, a);
	ck_assert_uint_eq(accel_pool_count(pool), 0);

	big = accel_pool_alloc(pool, 257);
	ck_assert_ptr_nonnull(big);
	ck_assert_ptr_ne(big, b);
	memset(big, 0x5a, 257);
	accel_pool_free(big);
	ck_assert_uint_eq(accel_pool_count(pool), 0);

	/* No pool: plain, and freed the same way. */
	big = accel_pool_alloc(NULL, 64);
	ck_assert_ptr_nonnull(big);
	accel_pool_free(big);
	accel_pool_free(NULL);

	accel_pool_free(b);
	ck_assert_uint_eq(accel_pool_count(pool), 1);
	accel_pool_put(pool);
}
END_TEST

/* At most ACCEL_POOL_MAX free records wait; the rest go back to malloc. */
START_TEST(test_pool_keeps_at_most_max)
{
	struct accel_pool *pool = accel_pool_new(64);
	void *rec[ACCEL_POOL_MAX + 5];

	ck_assert_ptr_nonnull(pool);
	for (uint32_t i = 0; i < ACCEL_ARRAY_SIZE(rec); i++) {
		rec[i] = accel_pool_alloc(pool, 64);
		ck_assert_ptr_nonnull(rec[i]);
		for (uint32_t j = 0; j < i; j++)
			ck_assert_ptr_ne(rec[i], rec[j]);
	}
	for (uint32_t i = 0; i < ACCEL_ARRAY_SIZE(rec); i++)
		accel_pool_free(rec[i]);
	ck_assert_uint_eq(accel_pool_count(pool), ACCEL_POOL_MAX);
	accel_pool_put(pool);
}
END_TEST

/*
 * Records outlive the owner's reference (a submission outlives its queue):
 * they stay usable, and the pool goes with the last of them, its free
 * records too (the ASan build's leak check would name them).
 */
START_TEST(test_pool_outlives_its_owner)
{
	struct accel_pool *pool = accel_pool_new(128);
	uint8_t *a, *b;

	ck_assert_ptr_nonnull(pool);
	a = accel_pool_alloc(pool, 128);
	b = accel_pool_alloc(pool, 16);
	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	accel_pool_free(b);
	accel_pool_put(pool); /* the owner goes; @a holds the pool */
	memset(a, 0x3c, 128);
	ck_assert_uint_eq(a[127], 0x3c);
	accel_pool_free(a); /* the last: the pool, and @b's memory, go */
}
END_TEST

#define POOL_THREADS 3
#define POOL_ROUNDS 20000

struct pool_race {
	struct accel_pool *pool;
	_Atomic(uint64_t *) slot[8];
	atomic_uint done;
	atomic_uint bad;
};

/* Takes records and hands them to the freeing thread through the slots. */
static void *pool_race_taker(void *arg)
{
	struct pool_race *r = arg;

	for (uint32_t n = 0; n < POOL_ROUNDS; n++) {
		uint64_t *rec = accel_pool_alloc(r->pool, 8 + n % 120);
		uint64_t *none = NULL;

		if (!rec)
			abort();
		/* Still marked as held: handed out twice. */
		if (rec[0] == (uint64_t)(uintptr_t)rec)
			atomic_fetch_add(&r->bad, 1);
		rec[0] = (uint64_t)(uintptr_t)rec;
		while (!atomic_compare_exchange_weak(&r->slot[n % 8], &none, rec))
			none = NULL;
	}
	atomic_fetch_add(&r->done, 1);
	return NULL;
}

static void *pool_race_freer(void *arg)
{
	struct pool_race *r = arg;

	for (;;) {
		/* Read first: a record put in after the scan is seen next time. */
		bool last = atomic_load(&r->done) == POOL_THREADS - 1;
		bool any = false;

		for (uint32_t i = 0; i < 8; i++) {
			uint64_t *rec = atomic_exchange(&r->slot[i], NULL);

			if (!rec)
				continue;
			any = true;
			if (rec[0] != (uint64_t)(uintptr_t)rec)
				atomic_fetch_add(&r->bad, 1);
			rec[0] = UINT64_MAX;
			accel_pool_free(rec);
		}
		if (!any && last)
			return NULL;
	}
}

/*
 * Two threads take records while a third frees them, as submitting
 * threads and a queue's executor do: no record is ever held twice, and
 * every one is freed. (The TSan build checks the lock; ASan's, the leaks.)
 */
START_TEST(test_pool_across_threads)
{
	struct pool_race r = { .pool = accel_pool_new(128) };
	pthread_t t[POOL_THREADS];

	ck_assert_ptr_nonnull(r.pool);
	ck_assert_int_eq(pthread_create(&t[0], NULL, pool_race_freer, &r), 0);
	for (int i = 1; i < POOL_THREADS; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, pool_race_taker, &r), 0);
	for (int i = 1; i < POOL_THREADS; i++)
		ck_assert_int_eq(pthread_join(t[i], NULL), 0);
	ck_assert_int_eq(pthread_join(t[0], NULL), 0);
	ck_assert_uint_eq(atomic_load(&r.bad), 0);
	ck_assert_uint_le(accel_pool_count(r.pool), ACCEL_POOL_MAX);
	ck_assert_uint_gt(accel_pool_count(r.pool), 0);
	accel_pool_put(r.pool);
}
END_TEST

#if defined(__SANITIZE_ADDRESS__)
/* ASan: a free record is poisoned, so a use after accel_pool_free() is reported. */
START_TEST(test_pool_poisons_free_records)
{
	struct accel_pool *pool = accel_pool_new(64);
	volatile uint8_t *a = accel_pool_alloc(pool, 64);

	accel_pool_free((void *)a);
	a[8] = 1; /* ASan halts with exit code 66 (ASAN_OPTIONS) */
}
END_TEST

/* ASan: freeing a pooled record twice aborts, naming it. */
START_TEST(test_pool_double_free_aborts)
{
	struct accel_pool *pool = accel_pool_new(64);
	void *a = accel_pool_alloc(pool, 64);

	accel_pool_free(a);
	accel_pool_free(a);
}
END_TEST
#endif

static Suite *internal_suite(void)
{
	Suite *suite = suite_create("internal");
	TCase *tc;

	tc = tcase_create("scheduler");
	tcase_add_checked_fixture(tc, test_clear_env, NULL);
	tcase_add_test(tc, test_refcount);
	tcase_add_test(tc, test_submission_label);
	tcase_add_test(tc, test_config_defaults);
	tcase_add_test(tc, test_config_env_over_options);
	tcase_add_test(tc, test_executor_pending_job);
	tcase_add_test(tc, test_failure_cause_any_order);
	tcase_add_test(tc, test_failure_cause_chain_freed);
	suite_add_tcase(suite, tc);

	tc = tcase_create("uring");
	tcase_add_test(tc, test_uring_explain_enomem_names_memlock);
	tcase_add_test(tc, test_uring_explain_enomem_unlimited);
	tcase_add_test(tc, test_uring_explain_eperm_names_sysctl);
	tcase_add_test(tc, test_uring_explain_enosys);
	tcase_add_test(tc, test_uring_explain_other);
	tcase_add_test(tc, test_uring_needs_feature);
	tcase_add_test(tc, test_uring_cmd_round_trip);
	tcase_add_test(tc, test_uring_setup_without_uring_cmd);
	tcase_add_test(tc, test_uring_setup_round_trip);
	tcase_add_test(tc, test_uring_sqpoll_env);
	suite_add_tcase(suite, tc);

	tc = tcase_create("kernel");
	tcase_add_test(tc, test_kernel_answers);
	tcase_add_test(tc, test_kernel_explicit_answers);
	tcase_add_test(tc, test_kernel_strings_are_terminated);
	tcase_add_test(tc, test_kernel_abi_mismatch_auto);
	tcase_add_test(tc, test_kernel_abi_mismatch_kernel);
	tcase_add_test(tc, test_kernel_without_uring_feature);
	tcase_add_test(tc, test_kernel_uring_denied_eperm);
	tcase_add_test(tc, test_kernel_uring_denied_enosys);
	tcase_add_test(tc, test_kernel_uring_denied_enomem);
	suite_add_tcase(suite, tc);

	tc = tcase_create("error");
	tcase_add_test(tc, test_errno_name);
	suite_add_tcase(suite, tc);

	tc = tcase_create("pool");
	tcase_add_test(tc, test_pool_reuses_freed_records);
	tcase_add_test(tc, test_pool_keeps_at_most_max);
	tcase_add_test(tc, test_pool_outlives_its_owner);
	tcase_add_test(tc, test_pool_across_threads);
#if defined(__SANITIZE_ADDRESS__)
	tcase_add_exit_test(tc, test_pool_poisons_free_records, 66);
	tcase_add_test_raise_signal(tc, test_pool_double_free_aborts, SIGABRT);
#endif
	suite_add_tcase(suite, tc);
	return suite;
}

int main(void)
{
	return test_run_suite(internal_suite());
}
