// SPDX-License-Identifier: MIT
/*
 * The device itself: the node, open/close, INFO, NOP through an ioctl and
 * through io_uring, and the ioctl prologue every command shares (unknown
 * numbers, struct sizes, bad pointers, unknown flags).
 */
#include <sys/stat.h>
#include <sys/utsname.h>

#include "accel_test.h"

static void get_info(struct __test_metadata *_metadata, int fd,
		     struct accel_info *info)
{
	memset(info, 0xa5, sizeof(*info));
	ASSERT_EQ(0, ioctl(fd, ACCEL_IOCTL_INFO, info));
}

/*
 * Every test: skipped without the module, failed by a splat in the kernel
 * log (accel_test.h).
 */
FIXTURE(device) {};

FIXTURE_SETUP(device)
{
	accel_test_setup(_metadata, variant);
}

FIXTURE_TEARDOWN_PARENT(device)
{
	accel_test_teardown(_metadata, variant);
}

TEST_F(device, node_is_char_device_0660)
{
	struct stat st;

	if (stat(ACCEL_DEV_PATH, &st) < 0 && errno == ENOENT)
		SKIP(return, "%s does not exist: the module is not loaded",
		     ACCEL_DEV_PATH);
	ASSERT_TRUE(S_ISCHR(st.st_mode));
	ASSERT_EQ(0660, st.st_mode & 07777);
}

TEST_F(device, open_gives_distinct_clients)
{
	struct accel_info a, b;
	int fa = accel_test_open(), fb = accel_test_open();

	ASSERT_GE(fa, 0);
	ASSERT_GE(fb, 0);
	get_info(_metadata, fa, &a);
	get_info(_metadata, fb, &b);
	ASSERT_NE(0, a.client_id);
	ASSERT_NE(a.client_id, b.client_id);
	ASSERT_EQ(0, close(fa));
	ASSERT_EQ(0, close(fb));
}

TEST_F(device, info_reports_abi_and_versions)
{
	struct accel_info info;
	struct utsname u;
	int fd = accel_test_open();

	ASSERT_GE(fd, 0);
	get_info(_metadata, fd, &info);
	ASSERT_EQ(ACCEL_ABI_MAJOR, info.abi_major);
	ASSERT_EQ(ACCEL_ABI_MINOR, info.abi_minor);
	ASSERT_TRUE(info.features & ACCEL_FEATURE_URING_CMD);
	ASSERT_TRUE(info.features & ACCEL_FEATURE_SYNCOBJ);
	ASSERT_TRUE(info.features & ACCEL_FEATURE_SCHED);
	ASSERT_TRUE(info.features & ACCEL_FEATURE_URING_SEQ);
	ASSERT_TRUE(info.features & ACCEL_FEATURE_TENANTS);
	ASSERT_TRUE(info.features & ACCEL_FEATURE_JOB_PREDICTION);
	ASSERT_TRUE(info.features & ACCEL_FEATURE_URING_INLINE_JOB);
	ASSERT_TRUE(info.features & ACCEL_FEATURE_JOB_DEADLINE);
	ASSERT_TRUE(info.features & ACCEL_FEATURE_JOB_EVENTS);
	ASSERT_TRUE(info.features & ACCEL_FEATURE_JOB_ANSWER);
	/* ACCEL_FEATURE_FENCE_DEADLINE: sched.deadline_from_a_sync_file_*. */
	ASSERT_EQ(0, info.features & ~(ACCEL_FEATURE_URING_CMD |
				       ACCEL_FEATURE_JOB_DEADLINE |
				       ACCEL_FEATURE_JOB_EVENTS |
				       ACCEL_FEATURE_JOB_ANSWER |
				       ACCEL_FEATURE_FENCE_DEADLINE |
				       ACCEL_FEATURE_URING_CANCEL |
				       ACCEL_FEATURE_SYNCOBJ |
				       ACCEL_FEATURE_SCHED |
				       ACCEL_FEATURE_URING_SEQ |
				       ACCEL_FEATURE_TENANTS |
				       ACCEL_FEATURE_URING_INLINE_JOB |
				       ACCEL_FEATURE_JOB_PREDICTION));
	ASSERT_NE(NULL, memchr(info.version, 0, sizeof(info.version)));
	ASSERT_STREQ(ACCEL_VERSION, info.version); /* the project's VERSION */
	ASSERT_EQ(0, uname(&u));
	ASSERT_EQ(0, strcmp(info.kernel_release, u.release));
	for (unsigned int i = 0; i < 4; i++) {
		ASSERT_EQ(0, info.reserved[i]);
	}
	TH_LOG("ABI %u.%u features %#llx module %s kernel %s", info.abi_major,
	       info.abi_minor, (unsigned long long)info.features, info.version,
	       info.kernel_release);
}

/* An older userspace with a shorter struct gets the prefix, nothing more. */
TEST_F(device, info_short_struct_gets_prefix)
{
	unsigned char buf[sizeof(struct accel_info)];
	struct accel_info *info = (struct accel_info *)buf;
	int fd = accel_test_open();

	ASSERT_GE(fd, 0);
	memset(buf, 0xa5, sizeof(buf));
	ASSERT_EQ(0, ioctl(fd, _IOC(_IOC_READ, ACCEL_IOCTL_BASE, 0x00, 16), buf));
	ASSERT_EQ(ACCEL_ABI_MAJOR, info->abi_major);
	for (size_t i = 16; i < sizeof(buf); i++) {
		ASSERT_EQ(0xa5, buf[i]);
	}
}

/*
 * A newer userspace with a longer struct: the fields this module does not
 * know read zero (uapi.h: "new binaries on old modules see zeroes in the
 * fields the module did not know"), as copy_struct_to_user() does. This
 * test said the tail was left alone, the opposite of that promise, until
 * an outside test built on the header found the difference.
 */
TEST_F(device, info_long_struct_tail_zeroed)
{
	unsigned char buf[sizeof(struct accel_info) + 64];
	int fd = accel_test_open(), nonzero = 0;

	ASSERT_GE(fd, 0);
	memset(buf, 0xa5, sizeof(buf));
	ASSERT_EQ(0, ioctl(fd, _IOC(_IOC_READ, ACCEL_IOCTL_BASE, 0x00,
				    sizeof(buf)), buf));
	ASSERT_EQ(ACCEL_ABI_MAJOR, ((struct accel_info *)buf)->abi_major);
	for (size_t i = sizeof(struct accel_info); i < sizeof(buf); i++)
		nonzero += buf[i] != 0;
	ASSERT_EQ(0, nonzero);
}

TEST_F(device, info_bad_pointer_is_efault)
{
	int fd = accel_test_open();

	ASSERT_GE(fd, 0);
	ASSERT_ERRNO(ioctl(fd, ACCEL_IOCTL_INFO, NULL), EFAULT);
	ASSERT_ERRNO(ioctl(fd, ACCEL_IOCTL_INFO, (void *)16), EFAULT);
}

TEST_F(device, nop_ioctl)
{
	struct accel_nop nop = { 0 };
	int fd = accel_test_open();

	ASSERT_GE(fd, 0);
	ASSERT_EQ(0, ioctl(fd, ACCEL_IOCTL_NOP, &nop));
	nop.flags = ACCEL_NOP_F_RESULT;
	nop.result = -EAGAIN;
	ASSERT_ERRNO(ioctl(fd, ACCEL_IOCTL_NOP, &nop), EAGAIN);
	nop.result = 0;
	ASSERT_EQ(0, ioctl(fd, ACCEL_IOCTL_NOP, &nop));
}

TEST_F(device, nop_ioctl_rejects_bad_fields)
{
	struct accel_nop nop = { .flags = 1u << 31 };
	int fd = accel_test_open();

	ASSERT_GE(fd, 0);
	ASSERT_ERRNO(ioctl(fd, ACCEL_IOCTL_NOP, &nop), EINVAL);
	nop = (struct accel_nop){ .result = -EIO }; /* result without its flag */
	ASSERT_ERRNO(ioctl(fd, ACCEL_IOCTL_NOP, &nop), EINVAL);
	nop = (struct accel_nop){ .flags = ACCEL_NOP_F_RESULT, .result = 1 };
	ASSERT_ERRNO(ioctl(fd, ACCEL_IOCTL_NOP, &nop), EINVAL);
	nop.result = -4096;
	ASSERT_ERRNO(ioctl(fd, ACCEL_IOCTL_NOP, &nop), EINVAL);
	ASSERT_ERRNO(ioctl(fd, ACCEL_IOCTL_NOP, NULL), EFAULT);
}

/* A longer input struct is fine if its tail is zero, E2BIG if not. */
TEST_F(device, nop_ioctl_long_struct)
{
	unsigned char buf[sizeof(struct accel_nop) + 8] = { 0 };
	unsigned int cmd = _IOC(_IOC_WRITE, ACCEL_IOCTL_BASE, 0x01, sizeof(buf));
	int fd = accel_test_open();

	ASSERT_GE(fd, 0);
	ASSERT_EQ(0, ioctl(fd, cmd, buf));
	buf[sizeof(buf) - 1] = 1;
	ASSERT_ERRNO(ioctl(fd, cmd, buf), E2BIG);
}

TEST_F(device, bad_ioctl_numbers_are_enotty)
{
	struct accel_info info;
	int fd = accel_test_open();

	ASSERT_GE(fd, 0);
	/* Another driver's type letter, same number and size. */
	ASSERT_ERRNO(ioctl(fd, _IOR('d', 0x00, struct accel_info), &info), ENOTTY);
	/* Our letter, a number that does not exist. */
	ASSERT_ERRNO(ioctl(fd, _IOR(ACCEL_IOCTL_BASE, 0x7f, struct accel_info),
			   &info), ENOTTY);
	/* INFO with the wrong direction. */
	ASSERT_ERRNO(ioctl(fd, _IOW(ACCEL_IOCTL_BASE, 0x00, struct accel_info),
			   &info), ENOTTY);
	/* A uring_cmd opcode is not an ioctl. */
	ASSERT_ERRNO(ioctl(fd, ACCEL_URING_CMD_NOP, &info), ENOTTY);
	/* A terminal ioctl. */
	ASSERT_ERRNO(ioctl(fd, TCGETS, &info), ENOTTY);
}

TEST_F(device, fdinfo_names_the_client)
{
	struct accel_info info;
	char path[64], buf[4096], want[64];
	int fd = accel_test_open(), ffd;
	ssize_t n;

	ASSERT_GE(fd, 0);
	get_info(_metadata, fd, &info);
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	ffd = open(path, O_RDONLY);
	ASSERT_GE(ffd, 0);
	n = read(ffd, buf, sizeof(buf) - 1);
	ASSERT_GT(n, 0);
	buf[n] = 0;
	snprintf(want, sizeof(want), "drm-client-id:\t%llu\n",
		 (unsigned long long)info.client_id);
	ASSERT_NE(NULL, strstr(buf, want));
	ASSERT_NE(NULL, strstr(buf, "drm-driver:\taccelsched\n"));
}

static void uring_nop_ring(struct __test_metadata *_metadata,
			   unsigned int setup_flags)
{
	struct io_uring ring;
	struct accel_nop nop = { 0 };
	int fd = accel_test_open(), res;

	ASSERT_GE(fd, 0);
	ASSERT_EQ(0, io_uring_queue_init(8, &ring, setup_flags));
	accel_prep_uring_cmd(io_uring_get_sqe(&ring), fd, ACCEL_URING_CMD_NOP,
			     &nop, sizeof(nop));
	ASSERT_EQ(0, accel_reap(&ring, 1, &res, NULL));
	ASSERT_EQ(0, res);
	io_uring_queue_exit(&ring);
}

TEST_F(device, uring_nop)
{
	uring_nop_ring(_metadata, 0);
}

TEST_F(device, uring_nop_sqe128_ring)
{
	uring_nop_ring(_metadata, IORING_SETUP_SQE128);
}

/* 128 NOPs in one io_uring_enter, each CQE carrying its own result. */
TEST_F(device, uring_nop_batch_results)
{
	enum { N = 128 };
	struct io_uring ring;
	int fd = accel_test_open(), res[N];
	__u64 ud[N];

	ASSERT_GE(fd, 0);
	ASSERT_EQ(0, io_uring_queue_init(N, &ring, 0));
	for (int i = 0; i < N; i++) {
		struct accel_nop nop = { .cookie = i };
		struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);

		if (i % 3 == 1) {
			nop.flags = ACCEL_NOP_F_RESULT;
			nop.result = -(1 + i % 100);
		}
		ASSERT_NE(NULL, sqe);
		accel_prep_uring_cmd(sqe, fd, ACCEL_URING_CMD_NOP, &nop,
				     sizeof(nop));
		sqe->user_data = i;
	}
	ASSERT_EQ(0, accel_reap(&ring, N, res, ud));
	for (int i = 0; i < N; i++) {
		int want = (ud[i] % 3 == 1) ? -(int)(1 + ud[i] % 100) : 0;

		ASSERT_LT(ud[i], N);
		ASSERT_EQ(want, res[i]);
	}
	io_uring_queue_exit(&ring);
}

TEST_F(device, uring_bad_commands)
{
	struct io_uring ring;
	struct accel_nop nop = { .flags = 1u << 7 };
	int fd = accel_test_open(), res[3];

	ASSERT_GE(fd, 0);
	ASSERT_EQ(0, io_uring_queue_init(8, &ring, 0));
	accel_prep_uring_cmd(io_uring_get_sqe(&ring), fd, ACCEL_URING_CMD_NOP,
			     &nop, sizeof(nop));
	nop = (struct accel_nop){ 0 };
	accel_prep_uring_cmd(io_uring_get_sqe(&ring), fd,
			     _IOW(ACCEL_IOCTL_BASE, 0xff, struct accel_nop),
			     &nop, sizeof(nop));
	accel_prep_uring_cmd(io_uring_get_sqe(&ring), fd, ACCEL_IOCTL_NOP,
			     &nop, sizeof(nop));
	ASSERT_EQ(0, accel_reap(&ring, 3, res, NULL));
	ASSERT_EQ(-EINVAL, res[0]);
	ASSERT_EQ(-ENOTTY, res[1]);
	ASSERT_EQ(-ENOTTY, res[2]);
	io_uring_queue_exit(&ring);
}

ACCEL_TEST_MAIN
