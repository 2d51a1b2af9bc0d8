/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by accelsched's kernel tests: opening the device and
 * filling uring_cmd SQEs (liburing 2.3 has no io_uring_prep_uring_cmd()).
 */
#ifndef ACCEL_TEST_H
#define ACCEL_TEST_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <liburing.h>
#include <sys/ioctl.h>

#include "accelsched.h"
#include "harness.h"

#define ACCEL_DEV_PATH "/dev/" ACCEL_DEVICE_NAME

/* Open the device or skip the test when the module is not loaded. */
static inline int accel_test_open(void)
{
	int fd = open(ACCEL_DEV_PATH, O_RDWR | O_CLOEXEC);

	if (fd < 0 && errno == ENOENT)
		SKIP(return -1, "%s does not exist: the module is not loaded",
		     ACCEL_DEV_PATH);
	return fd;
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

#endif /* ACCEL_TEST_H */
