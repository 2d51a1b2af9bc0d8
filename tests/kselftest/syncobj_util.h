/* SPDX-License-Identifier: MIT */
/*
 * Small wrappers over the syncobj ioctls for the kernel tests: each returns
 * 0 or -errno, so a test can assert the exact error.
 */
#ifndef ACCEL_SYNCOBJ_UTIL_H
#define ACCEL_SYNCOBJ_UTIL_H

#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "accel_test.h"

static inline int xioctl(int fd, unsigned long req, void *arg)
{
	return ioctl(fd, req, arg) ? -errno : 0;
}

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static inline int64_t in_ms(int ms)
{
	return (int64_t)(now_ns() + (uint64_t)ms * 1000000ull);
}

static inline int so_create(int fd, uint64_t initial, uint32_t *handle)
{
	struct accel_syncobj_create a = { .initial = initial };
	int ret = xioctl(fd, ACCEL_IOCTL_SYNCOBJ_CREATE, &a);

	*handle = a.handle;
	return ret;
}

/*
 * The wait status of child @pid once it exits, waiting at most @ms: the
 * exits and execs the module must not hold up. A child still there then is
 * killed and reaped, and the test fails saying that @what did not finish.
 */
static inline int reap_within(struct __test_metadata *_metadata, pid_t pid,
			      int ms, const char *what)
{
	int status = 0;

	for (int i = 0; i < ms / 10; i++) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return status;
		usleep(10000);
	}
	TH_LOG("%s did not finish within %d ms", what, ms);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	ASSERT_TRUE(0);
	return status;
}

/* Create or fail the test. */
static inline uint32_t so_new(struct __test_metadata *_metadata, int fd,
			      uint64_t initial)
{
	uint32_t h = 0;

	ASSERT_EQ(0, so_create(fd, initial, &h));
	ASSERT_NE(0, h);
	return h;
}

static inline int so_destroy(int fd, uint32_t h)
{
	struct accel_syncobj_destroy a = { .handle = h };

	return xioctl(fd, ACCEL_IOCTL_SYNCOBJ_DESTROY, &a);
}

static inline int so_signal(int fd, uint32_t h, uint64_t v)
{
	struct accel_syncobj_signal a = { .handle = h, .value = v };

	return xioctl(fd, ACCEL_IOCTL_SYNCOBJ_SIGNAL, &a);
}

static inline int so_fail(int fd, uint32_t h, int error)
{
	struct accel_syncobj_fail a = { .handle = h, .error = error };

	return xioctl(fd, ACCEL_IOCTL_SYNCOBJ_FAIL, &a);
}

static inline int so_query(int fd, uint32_t h, uint64_t *value,
			   uint64_t *submitted, int *error)
{
	struct accel_syncobj_query a = { .handle = h };
	int ret = xioctl(fd, ACCEL_IOCTL_SYNCOBJ_QUERY, &a);

	if (value)
		*value = a.value;
	if (submitted)
		*submitted = a.submitted;
	if (error)
		*error = a.error;
	return ret;
}

static inline uint64_t so_value(struct __test_metadata *_metadata, int fd,
				uint32_t h)
{
	uint64_t v = ~0ull;

	ASSERT_EQ(0, so_query(fd, h, &v, NULL, NULL));
	return v;
}

static inline int so_wait(int fd, const uint32_t *h, const uint64_t *p,
			  uint32_t count, uint32_t flags, int64_t deadline,
			  uint32_t *index)
{
	struct accel_syncobj_wait a = {
		.handles = (uintptr_t)h, .points = (uintptr_t)p,
		.count = count, .flags = flags, .deadline = deadline,
	};
	int ret = xioctl(fd, ACCEL_IOCTL_SYNCOBJ_WAIT, &a);

	if (index)
		*index = a.index;
	return ret;
}

static inline int so_wait1(int fd, uint32_t h, uint64_t p, uint32_t flags,
			   int64_t deadline)
{
	return so_wait(fd, &h, &p, 1, flags, deadline, NULL);
}

static inline int so_export(int fd, uint32_t h, int *out)
{
	struct accel_syncobj_handle_fd a = { .handle = h };
	int ret = xioctl(fd, ACCEL_IOCTL_SYNCOBJ_EXPORT, &a);

	*out = a.fd;
	return ret;
}

static inline int so_import(int fd, int sfd, uint32_t *h)
{
	struct accel_syncobj_handle_fd a = { .fd = sfd };
	int ret = xioctl(fd, ACCEL_IOCTL_SYNCOBJ_IMPORT, &a);

	*h = a.handle;
	return ret;
}

static inline int so_export_sync_file(int fd, uint32_t h, uint64_t point,
				      int *out)
{
	struct accel_syncobj_sync_file a = { .handle = h, .point = point };
	int ret = xioctl(fd, ACCEL_IOCTL_SYNCOBJ_EXPORT_SYNC_FILE, &a);

	*out = a.fd;
	return ret;
}

static inline int so_import_sync_file(int fd, uint32_t h, uint64_t point,
				      int sf)
{
	struct accel_syncobj_sync_file a = { .handle = h, .point = point, .fd = sf };

	return xioctl(fd, ACCEL_IOCTL_SYNCOBJ_IMPORT_SYNC_FILE, &a);
}

static inline int so_eventfd(int fd, uint32_t h, uint64_t point,
			     uint32_t flags, int efd)
{
	struct accel_syncobj_eventfd a = {
		.handle = h, .point = point, .flags = flags, .fd = efd,
	};

	return xioctl(fd, ACCEL_IOCTL_SYNCOBJ_EVENTFD, &a);
}

static inline int so_cancel(int fd, uint32_t h, uint64_t point,
			    uint32_t *cancelled)
{
	struct accel_syncobj_cancel a = { .handle = h, .point = point };
	int ret = xioctl(fd, ACCEL_IOCTL_SYNCOBJ_CANCEL, &a);

	if (cancelled)
		*cancelled = a.cancelled;
	return ret;
}

/* Is @fd readable right now? */
static inline int fd_ready(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

/* Queue an io_uring WAIT for (h, point) with @ud as user_data. */
static inline void uring_wait_prep(struct io_uring *ring, int fd, uint32_t h,
				   uint64_t point, uint32_t flags, uint64_t ud)
{
	struct accel_uring_wait w = { .point = point, .handle = h, .flags = flags };
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	accel_prep_uring_cmd(sqe, fd, ACCEL_URING_CMD_SYNCOBJ_WAIT, &w, sizeof(w));
	sqe->user_data = ud;
}

/*
 * Reap one CQE within @ms; return its res, or 1000 on timeout. *@ud gets
 * its user_data and *@x1 its big_cqe[0] (0 unless the ring is CQE32),
 * each if not NULL.
 */
static inline int uring_reap(struct io_uring *ring, int ms, uint64_t *ud,
			     uint64_t *x1)
{
	struct __kernel_timespec ts = {
		.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000ll,
	};
	struct io_uring_cqe *cqe;
	int res;

	if (io_uring_wait_cqe_timeout(ring, &cqe, &ts))
		return 1000;
	res = cqe->res;
	if (ud)
		*ud = cqe->user_data;
	if (x1)
		*x1 = ring->flags & IORING_SETUP_CQE32 ? cqe->big_cqe[0] : 0;
	io_uring_cqe_seen(ring, cqe);
	return res;
}

static inline int uring_reap1(struct io_uring *ring, int ms, uint64_t *ud)
{
	return uring_reap(ring, ms, ud, NULL);
}

/* Set a module parameter; return its old value (or -1). */
static inline long set_param(const char *name, long value)
{
	char path[128], buf[32];
	long old = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/module/accelsched/parameters/%s", name);
	f = fopen(path, "r");
	if (f) {
		if (fgets(buf, sizeof(buf), f))
			old = strtol(buf, NULL, 10);
		fclose(f);
	}
	f = fopen(path, "w");
	if (!f)
		return -1;
	fprintf(f, "%ld\n", value);
	fclose(f);
	return old;
}

/* Set a bool module parameter; return its old value (0 or 1), or -1. */
static inline int set_bool_param(const char *name, int value)
{
	char path[128], buf[8] = "";
	int old = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/module/accelsched/parameters/%s", name);
	f = fopen(path, "r");
	if (f) {
		if (fgets(buf, sizeof(buf), f))
			old = buf[0] == 'Y' || buf[0] == 'y' || buf[0] == '1';
		fclose(f);
	}
	f = fopen(path, "w");
	if (!f)
		return -1;
	fprintf(f, "%c\n", value ? 'Y' : 'N');
	if (fclose(f))
		return -1;
	return old;
}

/*
 * @fd's fdinfo (/proc/self/fdinfo), NUL-terminated in @buf of @len bytes
 * (the first @len - 1 of it): 0, or -errno (-ENODATA when it is empty).
 */
static inline int fdinfo_read(int fd, char *buf, size_t len)
{
	char path[64];
	ssize_t n;
	int f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = open(path, O_RDONLY | O_CLOEXEC);
	if (f < 0)
		return -errno;
	n = read(f, buf, len - 1);
	if (n < 0)
		n = -errno;
	close(f);
	if (n <= 0)
		return n ? (int)n : -ENODATA;
	buf[n] = '\0';
	return 0;
}

/* Pass an fd to another process over a unix socket (SCM_RIGHTS). */
static inline int send_fd(int sock, int fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 }, byte = 'x';
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);

	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	return sendmsg(sock, &msg, 0) == 1 ? 0 : -errno;
}

static inline int recv_fd(int sock)
{
	char cbuf[CMSG_SPACE(sizeof(int))], byte;
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c;
	int fd;

	if (recvmsg(sock, &msg, 0) != 1)
		return -1;
	c = CMSG_FIRSTHDR(&msg);
	if (!c || c->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

#endif /* ACCEL_SYNCOBJ_UTIL_H */
