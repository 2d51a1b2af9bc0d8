// SPDX-License-Identifier: MIT
/*
 * Timeline syncobjs: every rule of Documentation/syncobj.rst has a test here that fails
 * if the rule breaks — create/destroy/query, host signal, waits (ALL, ANY,
 * deadlines, wait-before-signal, submitted), failure, sharing through fds,
 * eventfd and io_uring notifications with their cancellation, limits, and
 * bad input of every kind.
 */
#include <signal.h>
#include <stdatomic.h>
#include <sys/eventfd.h>
#include "syncobj_util.h"

/*
 * Every test: skipped without the module, failed by a splat in the kernel
 * log (accel_test.h).
 */
FIXTURE(syncobj) {};

FIXTURE_SETUP(syncobj)
{
	accel_test_setup(_metadata, variant);
}

FIXTURE_TEARDOWN_PARENT(syncobj)
{
	accel_test_teardown(_metadata, variant);
}

TEST_F(syncobj, create_query_destroy)
{
	int fd = accel_test_open();
	uint64_t v, sub;
	int err;
	uint32_t h;

	ASSERT_GE(fd, 0);
	h = so_new(_metadata, fd, 5);
	ASSERT_EQ(0, so_query(fd, h, &v, &sub, &err));
	ASSERT_EQ(5, v);
	ASSERT_EQ(5, sub);
	ASSERT_EQ(0, err);
	ASSERT_EQ(0, so_destroy(fd, h));
	ASSERT_EQ(-ENOENT, so_destroy(fd, h));
	ASSERT_EQ(-ENOENT, so_query(fd, h, NULL, NULL, NULL));
	ASSERT_EQ(-ENOENT, so_signal(fd, h, 6));
}

TEST_F(syncobj, create_rejects_bad_fields)
{
	struct accel_syncobj_create a = { .flags = 1 };
	int fd = accel_test_open();

	ASSERT_GE(fd, 0);
	ASSERT_ERRNO(ioctl(fd, ACCEL_IOCTL_SYNCOBJ_CREATE, &a), EINVAL);
	a = (struct accel_syncobj_create){ .handle = 7 };
	ASSERT_ERRNO(ioctl(fd, ACCEL_IOCTL_SYNCOBJ_CREATE, &a), EINVAL);
	ASSERT_ERRNO(ioctl(fd, ACCEL_IOCTL_SYNCOBJ_CREATE, NULL), EFAULT);
}

TEST_F(syncobj, destroy_and_query_reject_bad_fields)
{
	struct accel_syncobj_destroy d;
	struct accel_syncobj_query q;
	int fd = accel_test_open();
	uint32_t h;

	ASSERT_GE(fd, 0);
	h = so_new(_metadata, fd, 0);
	d = (struct accel_syncobj_destroy){ .handle = h, .pad = 1 };
	ASSERT_ERRNO(ioctl(fd, ACCEL_IOCTL_SYNCOBJ_DESTROY, &d), EINVAL);
	q = (struct accel_syncobj_query){ .handle = h, .flags = 1 };
	ASSERT_ERRNO(ioctl(fd, ACCEL_IOCTL_SYNCOBJ_QUERY, &q), EINVAL);
	q = (struct accel_syncobj_query){ .handle = h, .value = 1 };
	ASSERT_ERRNO(ioctl(fd, ACCEL_IOCTL_SYNCOBJ_QUERY, &q), EINVAL);
	ASSERT_EQ(-ENOENT, so_destroy(fd, 0));
	ASSERT_EQ(-ENOENT, so_destroy(fd, 0xffffffff));
	/* Still alive after the refused destroy. */
	ASSERT_EQ(0, so_value(_metadata, fd, h));
}

TEST_F(syncobj, signal_must_grow)
{
	int fd = accel_test_open();
	struct accel_syncobj_signal a;
	uint32_t h;

	ASSERT_GE(fd, 0);
	h = so_new(_metadata, fd, 5);
	ASSERT_EQ(-EINVAL, so_signal(fd, h, 5));
	ASSERT_EQ(5, so_value(_metadata, fd, h));
	ASSERT_EQ(-EINVAL, so_signal(fd, h, 4));
	ASSERT_EQ(5, so_value(_metadata, fd, h));
	ASSERT_EQ(0, so_signal(fd, h, 6));
	ASSERT_EQ(6, so_value(_metadata, fd, h));
	ASSERT_EQ(0, so_signal(fd, h, UINT64_MAX));
	ASSERT_EQ(UINT64_MAX, so_value(_metadata, fd, h));
	a = (struct accel_syncobj_signal){ .handle = h, .flags = 2, .value = 1 };
	ASSERT_ERRNO(ioctl(fd, ACCEL_IOCTL_SYNCOBJ_SIGNAL, &a), EINVAL);
}

TEST_F(syncobj, wait_unsignalled_times_out_at_deadline)
{
	int fd = accel_test_open();
	int64_t deadline;
	uint32_t h;

	ASSERT_GE(fd, 0);
	h = so_new(_metadata, fd, 0);
	deadline = in_ms(50);
	ASSERT_EQ(-ETIME, so_wait1(fd, h, 1, 0, deadline));
	/* -ETIME must not come before the deadline. */
	ASSERT_GE(now_ns(), (uint64_t)deadline);
	ASSERT_EQ(0, so_value(_metadata, fd, h));
}

TEST_F(syncobj, wait_poll_and_past_deadline)
{
	int fd = accel_test_open();
	uint32_t h;

	ASSERT_GE(fd, 0);
	h = so_new(_metadata, fd, 3);
	ASSERT_EQ(-ETIME, so_wait1(fd, h, 4, 0, 0));
	ASSERT_EQ(0, so_wait1(fd, h, 3, 0, 0));
	ASSERT_EQ(0, so_wait1(fd, h, 0, 0, 1));  /* reached, deadline long past */
	ASSERT_EQ(0, so_wait1(fd, h, 2, 0, -5)); /* a negative deadline polls */
	ASSERT_EQ(-ETIME, so_wait1(fd, h, 4, 0, 1));
}

TEST_F(syncobj, wait_empty_list_succeeds)
{
	int fd = accel_test_open();

	ASSERT_GE(fd, 0);
	ASSERT_EQ(0, so_wait(fd, NULL, NULL, 0, 0, 0, NULL));
	ASSERT_EQ(0, so_wait(fd, NULL, NULL, 0, ACCEL_WAIT_ALL, 1, NULL));
}

/*
 * A blocking WAIT of ACCEL_WAIT_MAX_COUNT entries: any one reached (the
 * last) ends it with that index; with ACCEL_WAIT_ALL, the last one
 * reached ends it. The exported fds are close-on-exec.
 */
struct max_waiter {
	int fd, ret;
	uint32_t flags, index;
	uint32_t *hs;
	uint64_t *ps;
};

static void *max_waiter_fn(void *arg)
{
	struct max_waiter *m = arg;

	m->ret = so_wait(m->fd, m->hs, m->ps, ACCEL_WAIT_MAX_COUNT, m->flags,
			 in_ms(20000), &m->index);
	return NULL;
}

TEST_F(syncobj, wait_of_the_most_entries_and_cloexec_fds)
{
	static uint32_t hs[ACCEL_WAIT_MAX_COUNT];
	static uint64_t ps[ACCEL_WAIT_MAX_COUNT];
	int fd = accel_test_open(), sfd, sync_fd;
	struct max_waiter m = { .hs = hs, .ps = ps };
	pthread_t t;

	ASSERT_GE(fd, 0);
	m.fd = fd;
	for (int i = 0; i < ACCEL_WAIT_MAX_COUNT; i++) {
		hs[i] = so_new(_metadata, fd, 0);
		ps[i] = 1;
	}
	ASSERT_EQ(0, pthread_create(&t, NULL, max_waiter_fn, &m));
	usleep(50000);
	ASSERT_EQ(0, so_signal(fd, hs[ACCEL_WAIT_MAX_COUNT - 1], 1));
	ASSERT_EQ(0, pthread_join(t, NULL));
	ASSERT_EQ(0, m.ret);
	ASSERT_EQ(ACCEL_WAIT_MAX_COUNT - 1, m.index);
	m.flags = ACCEL_WAIT_ALL;
	ASSERT_EQ(0, pthread_create(&t, NULL, max_waiter_fn, &m));
	for (int i = 0; i < ACCEL_WAIT_MAX_COUNT - 1; i++)
		ASSERT_EQ(0, so_signal(fd, hs[i], 1));
	ASSERT_EQ(0, pthread_join(t, NULL));
	ASSERT_EQ(0, m.ret);

	ASSERT_EQ(0, so_export(fd, hs[0], &sfd));
	ASSERT_EQ(0, so_export_sync_file(fd, hs[1], 1, &sync_fd));
	ASSERT_NE(0, fcntl(sfd, F_GETFD) & FD_CLOEXEC);
	ASSERT_NE(0, fcntl(sync_fd, F_GETFD) & FD_CLOEXEC);
	ASSERT_EQ(0, close(sync_fd));
	ASSERT_EQ(0, close(sfd));
	ASSERT_EQ(0, close(fd));
}

TEST_F(syncobj, wait_rejects_bad_input)
{
	int fd = accel_test_open();
	uint64_t points[2] = { 1, 1 };
	uint32_t h, hs[2];
	char raw[32] __attribute__((aligned(8)));
	struct accel_syncobj_wait a;

	ASSERT_GE(fd, 0);
	h = so_new(_metadata, fd, 1);
	hs[0] = h;
	hs[1] = h;
	ASSERT_EQ(-EINVAL, so_wait(fd, hs, points, 1, 1u << 5, 0, NULL));
	ASSERT_EQ(-EINVAL, so_wait(fd, hs, points, ACCEL_WAIT_MAX_COUNT + 1, 0, 0, NULL));
	ASSERT_EQ(-EINVAL, so_wait(fd, hs, points, UINT32_MAX, 0, 0, NULL));
	ASSERT_EQ(-EFAULT, so_wait(fd, NULL, points, 1, 0, 0, NULL));
	ASSERT_EQ(-EFAULT, so_wait(fd, hs, NULL, 1, 0, 0, NULL));
	ASSERT_EQ(-EFAULT, so_wait(fd, hs, (uint64_t *)8, 1, 0, 0, NULL));
	/* Misaligned arrays. */
	memcpy(raw + 1, &h, sizeof(h));
	ASSERT_EQ(-EINVAL, so_wait(fd, (uint32_t *)(raw + 1), points, 1, 0, 0, NULL));
	memcpy(raw + 4, points, sizeof(points[0]));
	ASSERT_EQ(-EINVAL, so_wait(fd, hs, (uint64_t *)(raw + 4), 1, 0, 0, NULL));
	/* Bad handles, even after a good one: -ENOENT before any wait. */
	hs[1] = h + 100;
	ASSERT_EQ(-ENOENT, so_wait(fd, hs, points, 2, ACCEL_WAIT_ALL, 0, NULL));
	hs[1] = 0;
	ASSERT_EQ(-ENOENT, so_wait(fd, hs, points, 2, 0, 0, NULL));
	/* Non-zero pad or index on input. */
	a = (struct accel_syncobj_wait){ .handles = (uintptr_t)hs,
		.points = (uintptr_t)points, .count = 1, .pad = 1 };
	ASSERT_ERRNO(ioctl(fd, ACCEL_IOCTL_SYNCOBJ_WAIT, &a), EINVAL);
	a.pad = 0;
	a.index = 3;
	ASSERT_ERRNO(ioctl(fd, ACCEL_IOCTL_SYNCOBJ_WAIT, &a), EINVAL);
	/* A destroyed handle. */
	ASSERT_EQ(0, so_destroy(fd, h));
	ASSERT_EQ(-ENOENT, so_wait1(fd, h, 1, 0, 0));
}

TEST_F(syncobj, handles_are_per_file)
{
	int a = accel_test_open(), b = accel_test_open();
	uint32_t h;

	ASSERT_GE(a, 0);
	ASSERT_GE(b, 0);
	h = so_new(_metadata, a, 0);
	ASSERT_EQ(-ENOENT, so_query(b, h, NULL, NULL, NULL));
	ASSERT_EQ(-ENOENT, so_signal(b, h, 1));
	ASSERT_EQ(-ENOENT, so_wait1(b, h, 0, 0, 0));
	ASSERT_EQ(-ENOENT, so_destroy(b, h));
	ASSERT_EQ(0, so_value(_metadata, a, h));
}

TEST_F(syncobj, wait_all_and_any)
{
	int fd = accel_test_open();
	uint32_t h[3], index = 99;
	uint64_t p[3] = { 1, 1, 1 };

	ASSERT_GE(fd, 0);
	for (int i = 0; i < 3; i++)
		h[i] = so_new(_metadata, fd, 0);
	ASSERT_EQ(-ETIME, so_wait(fd, h, p, 3, 0, 0, &index));
	ASSERT_EQ(0, so_signal(fd, h[2], 1));
	ASSERT_EQ(0, so_wait(fd, h, p, 3, 0, 0, &index));
	ASSERT_EQ(2, index);
	ASSERT_EQ(-ETIME, so_wait(fd, h, p, 3, ACCEL_WAIT_ALL, 0, NULL));
	ASSERT_EQ(0, so_signal(fd, h[0], 1));
	ASSERT_EQ(0, so_wait(fd, h, p, 3, 0, 0, &index));
	ASSERT_EQ(0, index); /* the first index reached */
	ASSERT_EQ(0, so_signal(fd, h[1], 7));
	ASSERT_EQ(0, so_wait(fd, h, p, 3, ACCEL_WAIT_ALL, 0, NULL));
}

struct waiter {
	int fd;
	uint32_t handle;
	uint64_t point;
	uint32_t flags;
	int64_t deadline;
	volatile int done;
	int result;
};

static void *waiter_thread(void *arg)
{
	struct waiter *w = arg;

	w->result = so_wait1(w->fd, w->handle, w->point, w->flags, w->deadline);
	__atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * A blocking WAIT and signals of the caller's: the handler runs, and the
 * call is restarted (SA_RESTART) with its struct as it was, so with the
 * same absolute deadline, or returns EINTR with the struct intact.
 */
static atomic_int sig_seen;

static void sig_count(int sig)
{
	(void)sig;
	atomic_fetch_add(&sig_seen, 1);
}

struct sig_waiter {
	int fd;
	struct accel_syncobj_wait w;
	int ret, err;
	atomic_int done;
	int64_t returned;
};

static void *sig_waiter_fn(void *arg)
{
	struct sig_waiter *sw = arg;

	sw->ret = ioctl(sw->fd, ACCEL_IOCTL_SYNCOBJ_WAIT, &sw->w);
	sw->err = errno;
	sw->returned = (int64_t)now_ns();
	atomic_store(&sw->done, 1);
	return NULL;
}

/*
 * Signals @t every 20 ms until it is done, at most 10 s (the wait's
 * deadline is 300 ms away: a restart that took the time left as a new
 * relative timeout would never end under them). Returns how many.
 */
static int signal_until_done(pthread_t t, struct sig_waiter *sw)
{
	int sent = 0;

	for (int ms = 0; ms < 10000 && !atomic_load(&sw->done); ms += 20) {
		pthread_kill(t, SIGUSR1);
		sent++;
		usleep(20000);
	}
	return sent;
}

TEST_F(syncobj, wait_interrupted_by_signals_keeps_its_deadline)
{
	int fd = accel_test_open();
	struct sigaction sa = { .sa_handler = sig_count };
	struct sig_waiter sw = { 0 };
	uint64_t point = 5;
	pthread_t t;
	uint32_t h;

	ASSERT_GE(fd, 0);
	h = so_new(_metadata, fd, 0);
	sw.fd = fd;

	/* SA_RESTART: -ETIME, no earlier than the deadline, struct intact. */
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	ASSERT_EQ(0, sigaction(SIGUSR1, &sa, NULL));
	sw.w = (struct accel_syncobj_wait){
		.handles = (uintptr_t)&h, .points = (uintptr_t)&point,
		.count = 1, .deadline = in_ms(300),
	};
	atomic_store(&sig_seen, 0);
	ASSERT_EQ(0, pthread_create(&t, NULL, sig_waiter_fn, &sw));
	signal_until_done(t, &sw);
	ASSERT_EQ(0, pthread_join(t, NULL));
	ASSERT_TRUE(atomic_load(&sw.done));
	ASSERT_EQ(-1, sw.ret);
	ASSERT_EQ(ETIME, sw.err);
	ASSERT_GE(sw.returned, sw.w.deadline);
	ASSERT_GT(atomic_load(&sig_seen), 1);
	ASSERT_EQ((uintptr_t)&h, sw.w.handles);
	ASSERT_EQ(1, sw.w.count);

	/* Restarted under signals, then reached: 0. */
	sw.w = (struct accel_syncobj_wait){
		.handles = (uintptr_t)&h, .points = (uintptr_t)&point,
		.count = 1, .deadline = in_ms(10000),
	};
	atomic_store(&sw.done, 0);
	atomic_store(&sig_seen, 0);
	ASSERT_EQ(0, pthread_create(&t, NULL, sig_waiter_fn, &sw));
	for (int i = 0; i < 5; i++) {
		pthread_kill(t, SIGUSR1);
		usleep(20000);
	}
	ASSERT_FALSE(atomic_load(&sw.done));
	ASSERT_EQ(0, so_signal(fd, h, 5));
	ASSERT_EQ(0, pthread_join(t, NULL));
	ASSERT_EQ(0, sw.ret);
	ASSERT_EQ(0, sw.w.index);
	ASSERT_GT(atomic_load(&sig_seen), 0);

	/* No SA_RESTART: EINTR, and the same struct waits on to its end. */
	point = 6;
	sa.sa_flags = 0;
	ASSERT_EQ(0, sigaction(SIGUSR1, &sa, NULL));
	sw.w = (struct accel_syncobj_wait){
		.handles = (uintptr_t)&h, .points = (uintptr_t)&point,
		.count = 1, .deadline = in_ms(300),
	};
	int64_t deadline = sw.w.deadline;

	atomic_store(&sw.done, 0);
	ASSERT_EQ(0, pthread_create(&t, NULL, sig_waiter_fn, &sw));
	usleep(50000);
	signal_until_done(t, &sw);
	ASSERT_EQ(0, pthread_join(t, NULL));
	ASSERT_EQ(-1, sw.ret);
	ASSERT_EQ(EINTR, sw.err);
	ASSERT_EQ(deadline, sw.w.deadline);
	ASSERT_EQ(-1, ioctl(fd, ACCEL_IOCTL_SYNCOBJ_WAIT, &sw.w));
	ASSERT_EQ(ETIME, errno);
	ASSERT_GE((int64_t)now_ns(), deadline);
	signal(SIGUSR1, SIG_DFL);
	ASSERT_EQ(0, close(fd));
}

TEST_F(syncobj, wait_before_signal_from_a_thread)
{
	struct waiter w = { .point = 3, .deadline = in_ms(10000) };
	pthread_t t;

	w.fd = accel_test_open();
	ASSERT_GE(w.fd, 0);
	w.handle = so_new(_metadata, w.fd, 0);
	ASSERT_EQ(0, pthread_create(&t, NULL, waiter_thread, &w));
	usleep(50000);
	ASSERT_EQ(0, __atomic_load_n(&w.done, __ATOMIC_ACQUIRE));
	ASSERT_EQ(0, so_signal(w.fd, w.handle, 2)); /* not enough */
	usleep(20000);
	ASSERT_EQ(0, __atomic_load_n(&w.done, __ATOMIC_ACQUIRE));
	ASSERT_EQ(0, so_signal(w.fd, w.handle, 3));
	ASSERT_EQ(0, pthread_join(t, NULL));
	ASSERT_EQ(0, w.result);
}

/*
 * A second process gets the syncobj through an exported fd sent with
 * SCM_RIGHTS, imports it into its own file, and waits before the first
 * process signals.
 */
TEST_F(syncobj, wait_before_signal_from_another_process)
{
	int fd = accel_test_open(), sv[2], sfd, status;
	uint32_t h;
	pid_t pid;

	ASSERT_GE(fd, 0);
	h = so_new(_metadata, fd, 0);
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		int cfd = open(ACCEL_DEV_PATH, O_RDWR), got = recv_fd(sv[1]);
		uint32_t ch;
		char ready = 'r';

		if (cfd < 0 || got < 0 || so_import(cfd, got, &ch))
			_exit(10);
		close(got); /* the handle keeps it alive */
		if (write(sv[1], &ready, 1) != 1)
			_exit(11);
		_exit(so_wait1(cfd, ch, 4, 0, in_ms(10000)) == 0 ? 0 : 12);
	}
	ASSERT_EQ(0, so_export(fd, h, &sfd));
	ASSERT_EQ(0, send_fd(sv[0], sfd));
	close(sfd);
	char c;
	ASSERT_EQ(1, read(sv[0], &c, 1));
	usleep(50000);
	ASSERT_EQ(0, waitpid(pid, &status, WNOHANG)); /* still waiting */
	ASSERT_EQ(0, so_signal(fd, h, 4));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));
}

TEST_F(syncobj, export_import_reject_bad_input)
{
	int fd = accel_test_open(), sfd, nfd = open("/dev/null", O_RDONLY);
	struct accel_syncobj_handle_fd a;
	uint32_t h, h2;

	ASSERT_GE(fd, 0);
	h = so_new(_metadata, fd, 2);
	ASSERT_EQ(-ENOENT, so_export(fd, h + 1, &sfd));
	a = (struct accel_syncobj_handle_fd){ .handle = h, .flags = 1 };
	ASSERT_ERRNO(ioctl(fd, ACCEL_IOCTL_SYNCOBJ_EXPORT, &a), EINVAL);
	ASSERT_EQ(-EBADF, so_import(fd, -1, &h2));
	ASSERT_EQ(-EINVAL, so_import(fd, nfd, &h2)); /* not a syncobj fd */
	ASSERT_EQ(-EINVAL, so_import(fd, fd, &h2));  /* the device itself */
	/* Round trip: the imported handle is the same syncobj. */
	ASSERT_EQ(0, so_export(fd, h, &sfd));
	ASSERT_EQ(0, so_import(fd, sfd, &h2));
	ASSERT_NE(h, h2);
	ASSERT_EQ(0, so_signal(fd, h2, 9));
	ASSERT_EQ(9, so_value(_metadata, fd, h));
	/* The exported fd alone keeps the syncobj alive. */
	ASSERT_EQ(0, so_destroy(fd, h));
	ASSERT_EQ(0, so_destroy(fd, h2));
	ASSERT_EQ(0, so_import(fd, sfd, &h2));
	ASSERT_EQ(9, so_value(_metadata, fd, h2));
}

TEST_F(syncobj, fail_wakes_sleepers_and_sticks)
{
	struct waiter w = { .point = 10, .deadline = in_ms(10000) };
	uint32_t index = 99, hs[2];
	uint64_t ps[2] = { 0, 5 }, v;
	pthread_t t;
	int err;

	w.fd = accel_test_open();
	ASSERT_GE(w.fd, 0);
	w.handle = so_new(_metadata, w.fd, 1);
	ASSERT_EQ(0, pthread_create(&t, NULL, waiter_thread, &w));
	usleep(50000);
	ASSERT_EQ(0, so_fail(w.fd, w.handle, -EIO));
	ASSERT_EQ(0, pthread_join(t, NULL));
	ASSERT_EQ(-EIO, w.result);
	/* Failed for good: query, later waits (even on a reached point), signals. */
	ASSERT_EQ(0, so_query(w.fd, w.handle, &v, NULL, &err));
	ASSERT_EQ(-EIO, err);
	ASSERT_EQ(1, v);
	ASSERT_EQ(-EIO, so_wait1(w.fd, w.handle, 20, 0, in_ms(1000)));
	ASSERT_EQ(-EIO, so_wait1(w.fd, w.handle, 1, 0, 0));
	ASSERT_EQ(-EIO, so_signal(w.fd, w.handle, 30));
	ASSERT_EQ(1, so_value(_metadata, w.fd, w.handle));
	/* The first failure wins. */
	ASSERT_EQ(0, so_fail(w.fd, w.handle, -EPERM));
	ASSERT_EQ(0, so_query(w.fd, w.handle, NULL, NULL, &err));
	ASSERT_EQ(-EIO, err);
	/* A wait reports which entry failed. */
	hs[0] = so_new(_metadata, w.fd, 0);
	hs[1] = w.handle;
	ASSERT_EQ(-EIO, so_wait(w.fd, hs, ps, 2, ACCEL_WAIT_ALL, 0, &index));
	ASSERT_EQ(1, index);
}

TEST_F(syncobj, fail_rejects_bad_errors)
{
	int fd = accel_test_open(), err;
	uint32_t h;

	ASSERT_GE(fd, 0);
	h = so_new(_metadata, fd, 0);
	ASSERT_EQ(-EINVAL, so_fail(fd, h, 0));
	ASSERT_EQ(-EINVAL, so_fail(fd, h, 5));
	ASSERT_EQ(-EINVAL, so_fail(fd, h, -4096));
	ASSERT_EQ(-ENOENT, so_fail(fd, h + 1, -EIO));
	ASSERT_EQ(0, so_query(fd, h, NULL, NULL, &err));
	ASSERT_EQ(0, err);
	ASSERT_EQ(0, so_signal(fd, h, 1));
}

TEST_F(syncobj, eventfd_written_when_reached)
{
	int fd = accel_test_open(), efd = eventfd(0, EFD_NONBLOCK);
	uint64_t n = 0;
	uint32_t h;

	ASSERT_GE(fd, 0);
	h = so_new(_metadata, fd, 0);
	ASSERT_EQ(0, so_eventfd(fd, h, 2, 0, efd));
	ASSERT_EQ(0, so_signal(fd, h, 1));
	ASSERT_FALSE(fd_ready(efd));
	ASSERT_EQ(0, so_signal(fd, h, 2));
	ASSERT_TRUE(fd_ready(efd));
	ASSERT_EQ(8, read(efd, &n, 8));
	ASSERT_EQ(1, n);
	/* Already reached: written at once. */
	ASSERT_EQ(0, so_eventfd(fd, h, 1, 0, efd));
	ASSERT_TRUE(fd_ready(efd));
	ASSERT_EQ(8, read(efd, &n, 8));
	/* A failure writes it too (query tells the error). */
	ASSERT_EQ(0, so_eventfd(fd, h, 5, 0, efd));
	ASSERT_FALSE(fd_ready(efd));
	ASSERT_EQ(0, so_fail(fd, h, -ENODATA));
	ASSERT_TRUE(fd_ready(efd));
}

TEST_F(syncobj, eventfd_rejects_bad_input)
{
	int fd = accel_test_open(), efd = eventfd(0, 0), nfd = open("/dev/null", O_RDONLY);
	struct accel_syncobj_eventfd a;
	uint32_t h;

	ASSERT_GE(fd, 0);
	h = so_new(_metadata, fd, 0);
	ASSERT_EQ(-ENOENT, so_eventfd(fd, h + 1, 1, 0, efd));
	ASSERT_EQ(-EINVAL, so_eventfd(fd, h, 1, ACCEL_WAIT_ALL, efd));
	ASSERT_EQ(-EBADF, so_eventfd(fd, h, 1, 0, -1));
	ASSERT_EQ(-EINVAL, so_eventfd(fd, h, 1, 0, nfd));
	a = (struct accel_syncobj_eventfd){ .handle = h, .point = 1, .fd = efd, .pad = 1 };
	ASSERT_ERRNO(ioctl(fd, ACCEL_IOCTL_SYNCOBJ_EVENTFD, &a), EINVAL);
}

/* The lowest free fd number: a call that leaked an fd moves it up. */
static int lowest_free_fd(void)
{
	int probe = dup(0);

	if (probe >= 0)
		close(probe);
	return probe;
}

/*
 * Every flag, padding and out field of the syncobj commands the other
 * tests leave out, set on input: -EINVAL, and nothing changes (no handle
 * or fd made, no point reached, no registration cancelled). Out fields
 * must be zero on input (Documentation/uapi.rst), so that a struct
 * reused from an earlier call is refused, not read half stale.
 */
TEST_F(syncobj, reserved_and_out_fields_are_refused)
{
	int fd = accel_test_open(), efd = eventfd(0, EFD_NONBLOCK);
	int sfd, sync_fd, fd0;
	struct accel_syncobj_cancel c;
	struct accel_syncobj_handle_fd hf;
	struct accel_syncobj_sync_file sf;
	struct accel_syncobj_query q;
	uint32_t h, other, next, n;

	ASSERT_GE(fd, 0);
	ASSERT_GE(efd, 0);
	h = so_new(_metadata, fd, 0);
	other = so_new(_metadata, fd, 0);
	ASSERT_EQ(0, so_export(fd, h, &sfd));
	ASSERT_EQ(0, so_export_sync_file(fd, other, 1, &sync_fd));
	ASSERT_EQ(0, so_eventfd(fd, h, 3, 0, efd));
	fd0 = lowest_free_fd();

	/* CANCEL: flags, pad, the count it writes back. */
	c = (struct accel_syncobj_cancel){ .handle = h, .point = 3, .flags = 1 };
	ASSERT_ERRNO(ioctl(fd, ACCEL_IOCTL_SYNCOBJ_CANCEL, &c), EINVAL);
	c = (struct accel_syncobj_cancel){ .handle = h, .point = 3, .pad = 1 };
	ASSERT_ERRNO(ioctl(fd, ACCEL_IOCTL_SYNCOBJ_CANCEL, &c), EINVAL);
	c = (struct accel_syncobj_cancel){ .handle = h, .point = 3, .cancelled = 1 };
	ASSERT_ERRNO(ioctl(fd, ACCEL_IOCTL_SYNCOBJ_CANCEL, &c), EINVAL);
	/* EXPORT: pad, the fd it writes back. IMPORT: flags, pad, handle. */
	hf = (struct accel_syncobj_handle_fd){ .handle = h, .pad = 1 };
	ASSERT_ERRNO(ioctl(fd, ACCEL_IOCTL_SYNCOBJ_EXPORT, &hf), EINVAL);
	hf = (struct accel_syncobj_handle_fd){ .handle = h, .fd = sfd };
	ASSERT_ERRNO(ioctl(fd, ACCEL_IOCTL_SYNCOBJ_EXPORT, &hf), EINVAL);
	hf = (struct accel_syncobj_handle_fd){ .fd = sfd, .flags = 1 };
	ASSERT_ERRNO(ioctl(fd, ACCEL_IOCTL_SYNCOBJ_IMPORT, &hf), EINVAL);
	hf = (struct accel_syncobj_handle_fd){ .fd = sfd, .pad = 1 };
	ASSERT_ERRNO(ioctl(fd, ACCEL_IOCTL_SYNCOBJ_IMPORT, &hf), EINVAL);
	hf = (struct accel_syncobj_handle_fd){ .fd = sfd, .handle = h };
	ASSERT_ERRNO(ioctl(fd, ACCEL_IOCTL_SYNCOBJ_IMPORT, &hf), EINVAL);
	/* EXPORT_SYNC_FILE: pad, the fd. IMPORT_SYNC_FILE: flags, pad. */
	sf = (struct accel_syncobj_sync_file){ .handle = h, .point = 1, .pad = 1 };
	ASSERT_ERRNO(ioctl(fd, ACCEL_IOCTL_SYNCOBJ_EXPORT_SYNC_FILE, &sf), EINVAL);
	sf = (struct accel_syncobj_sync_file){ .handle = h, .point = 1, .fd = sfd };
	ASSERT_ERRNO(ioctl(fd, ACCEL_IOCTL_SYNCOBJ_EXPORT_SYNC_FILE, &sf), EINVAL);
	sf = (struct accel_syncobj_sync_file){ .handle = h, .point = 2, .fd = sync_fd, .flags = 1 };
	ASSERT_ERRNO(ioctl(fd, ACCEL_IOCTL_SYNCOBJ_IMPORT_SYNC_FILE, &sf), EINVAL);
	sf = (struct accel_syncobj_sync_file){ .handle = h, .point = 2, .fd = sync_fd, .pad = 1 };
	ASSERT_ERRNO(ioctl(fd, ACCEL_IOCTL_SYNCOBJ_IMPORT_SYNC_FILE, &sf), EINVAL);
	/* QUERY: what it writes back, and pad. */
	q = (struct accel_syncobj_query){ .handle = h, .submitted = 1 };
	ASSERT_ERRNO(ioctl(fd, ACCEL_IOCTL_SYNCOBJ_QUERY, &q), EINVAL);
	q = (struct accel_syncobj_query){ .handle = h, .error = -1 };
	ASSERT_ERRNO(ioctl(fd, ACCEL_IOCTL_SYNCOBJ_QUERY, &q), EINVAL);
	q = (struct accel_syncobj_query){ .handle = h, .pad = 1 };
	ASSERT_ERRNO(ioctl(fd, ACCEL_IOCTL_SYNCOBJ_QUERY, &q), EINVAL);

	/* Nothing changed: no fd, no handle, no point, no cancel. */
	ASSERT_EQ(fd0, lowest_free_fd());
	next = so_new(_metadata, fd, 0);
	ASSERT_EQ(other + 1, next);
	ASSERT_EQ(0, so_value(_metadata, fd, h));
	/* The refused sync_file imports made point 2 submitted nowhere. */
	ASSERT_EQ(-ETIME, so_wait1(fd, h, 2, ACCEL_WAIT_SUBMITTED, 0));
	ASSERT_EQ(0, so_cancel(fd, h, 4, &n));
	ASSERT_EQ(0, n);
	ASSERT_FALSE(fd_ready(efd));
	ASSERT_EQ(0, so_signal(fd, h, 3));
	ASSERT_TRUE(fd_ready(efd)); /* its registration was still there */
	ASSERT_EQ(0, close(sync_fd));
	ASSERT_EQ(0, close(sfd));
	ASSERT_EQ(0, close(efd));
	ASSERT_EQ(0, close(fd));
}

TEST_F(syncobj, eventfd_cancel_and_close)
{
	int fd = accel_test_open(), efd = eventfd(0, EFD_NONBLOCK), fd2;
	uint32_t h, n = 99;

	ASSERT_GE(fd, 0);
	h = so_new(_metadata, fd, 0);
	ASSERT_EQ(0, so_eventfd(fd, h, 3, 0, efd));
	ASSERT_EQ(0, so_eventfd(fd, h, 3, 0, efd));
	ASSERT_EQ(0, so_eventfd(fd, h, 4, 0, efd));
	ASSERT_EQ(0, so_cancel(fd, h, 3, &n));
	ASSERT_EQ(2, n);
	ASSERT_EQ(0, so_cancel(fd, h, 3, &n));
	ASSERT_EQ(0, n);
	ASSERT_EQ(-ENOENT, so_cancel(fd, h + 1, 3, &n));
	ASSERT_EQ(0, so_signal(fd, h, 3));
	ASSERT_FALSE(fd_ready(efd)); /* the cancelled ones stay silent */
	ASSERT_EQ(0, so_signal(fd, h, 4));
	ASSERT_TRUE(fd_ready(efd));
	/* Closing the file with a registration pending cancels it cleanly. */
	fd2 = accel_test_open();
	ASSERT_GE(fd2, 0);
	h = so_new(_metadata, fd2, 0);
	uint64_t drain;
	ASSERT_EQ(8, read(efd, &drain, 8));
	ASSERT_EQ(0, so_eventfd(fd2, h, 1, 0, efd));
	ASSERT_EQ(0, close(fd2));
	ASSERT_FALSE(fd_ready(efd));
}

/*
 * CANCEL names a point through a handle: a notification registered
 * through a handle since destroyed is not the new syncobj's that got its
 * number, and stays pending on its own (kept alive here by an export).
 * The module once matched the number alone: the CANCEL answered 1 and the
 * old syncobj's eventfd was never written.
 */
TEST_F(syncobj, cancel_after_the_handle_was_given_again)
{
	int fd = accel_test_open(), efd = eventfd(0, EFD_NONBLOCK), sfd;
	uint32_t h, h2, old, n = 99;

	ASSERT_GE(fd, 0);
	ASSERT_GE(efd, 0);
	h = so_new(_metadata, fd, 0);
	ASSERT_EQ(0, so_export(fd, h, &sfd));
	ASSERT_EQ(0, so_eventfd(fd, h, 5, 0, efd));
	ASSERT_EQ(0, so_destroy(fd, h));
	h2 = so_new(_metadata, fd, 0);
	ASSERT_EQ(h, h2); /* the lowest free number: the test's premise */
	ASSERT_EQ(0, so_cancel(fd, h2, 5, &n));
	ASSERT_EQ(0, n);
	/* The new syncobj's own registration on 5 is its to cancel. */
	ASSERT_EQ(0, so_eventfd(fd, h2, 5, 0, efd));
	ASSERT_EQ(0, so_cancel(fd, h2, 5, &n));
	ASSERT_EQ(1, n);
	ASSERT_EQ(0, so_signal(fd, h2, 5));
	ASSERT_FALSE(fd_ready(efd));
	/* The old one, reached through its export, writes its eventfd. */
	ASSERT_EQ(0, so_import(fd, sfd, &old));
	ASSERT_EQ(0, so_signal(fd, old, 5));
	ASSERT_TRUE(fd_ready(efd));
	ASSERT_EQ(0, close(sfd));
	ASSERT_EQ(0, close(efd));
	ASSERT_EQ(0, close(fd));
}

TEST_F(syncobj, wait_submitted)
{
	int fd = accel_test_open();
	uint32_t h;

	ASSERT_GE(fd, 0);
	h = so_new(_metadata, fd, 2);
	ASSERT_EQ(0, so_wait1(fd, h, 2, ACCEL_WAIT_SUBMITTED, 0));
	ASSERT_EQ(-ETIME, so_wait1(fd, h, 3, ACCEL_WAIT_SUBMITTED, 0));
	ASSERT_EQ(0, so_signal(fd, h, 3)); /* reached implies submitted */
	ASSERT_EQ(0, so_wait1(fd, h, 3, ACCEL_WAIT_SUBMITTED, 0));
}

/* Pending point fences of a syncobj that goes away fail with -ENOENT. */
TEST_F(syncobj, destroy_with_waiters_pending)
{
	struct io_uring ring;
	int fd = accel_test_open();
	uint32_t h;

	ASSERT_GE(fd, 0);
	ASSERT_EQ(0, io_uring_queue_init(8, &ring, 0));
	h = so_new(_metadata, fd, 0);
	uring_wait_prep(&ring, fd, h, 5, 0, 1);
	ASSERT_EQ(1, io_uring_submit(&ring));
	ASSERT_EQ(1000, uring_reap1(&ring, 50, NULL));
	ASSERT_EQ(0, so_destroy(fd, h));
	ASSERT_EQ(-ENOENT, uring_reap1(&ring, 5000, NULL));
	io_uring_queue_exit(&ring);
}

TEST_F(syncobj, uring_wait_completes_when_reached)
{
	struct io_uring ring;
	int fd = accel_test_open();
	uint64_t ud = 0;
	uint32_t h;

	ASSERT_GE(fd, 0);
	ASSERT_EQ(0, io_uring_queue_init(8, &ring, 0));
	h = so_new(_metadata, fd, 0);
	uring_wait_prep(&ring, fd, h, 2, 0, 42);
	uring_wait_prep(&ring, fd, h, 0, 0, 43); /* reached: completes at once */
	ASSERT_EQ(2, io_uring_submit(&ring));
	ASSERT_EQ(0, uring_reap1(&ring, 1000, &ud));
	ASSERT_EQ(43, ud);
	ASSERT_EQ(1000, uring_reap1(&ring, 50, NULL));
	ASSERT_EQ(0, so_signal(fd, h, 1));
	ASSERT_EQ(1000, uring_reap1(&ring, 50, NULL));
	ASSERT_EQ(0, so_signal(fd, h, 2));
	ASSERT_EQ(0, uring_reap1(&ring, 5000, &ud));
	ASSERT_EQ(42, ud);
	io_uring_queue_exit(&ring);
}

TEST_F(syncobj, uring_wait_gets_the_failure)
{
	struct io_uring ring;
	int fd = accel_test_open();
	uint32_t h;

	ASSERT_GE(fd, 0);
	ASSERT_EQ(0, io_uring_queue_init(8, &ring, 0));
	h = so_new(_metadata, fd, 0);
	uring_wait_prep(&ring, fd, h, 2, 0, 1);
	ASSERT_EQ(1, io_uring_submit(&ring));
	ASSERT_EQ(1000, uring_reap1(&ring, 50, NULL));
	ASSERT_EQ(0, so_fail(fd, h, -EPIPE));
	ASSERT_EQ(-EPIPE, uring_reap1(&ring, 5000, NULL));
	/* And on an already failed syncobj, at once. */
	uring_wait_prep(&ring, fd, h, 9, 0, 2);
	ASSERT_EQ(1, io_uring_submit(&ring));
	ASSERT_EQ(-EPIPE, uring_reap1(&ring, 5000, NULL));
	io_uring_queue_exit(&ring);
}

TEST_F(syncobj, uring_wait_rejects_bad_input)
{
	struct io_uring ring;
	int fd = accel_test_open();
	uint32_t h;

	ASSERT_GE(fd, 0);
	ASSERT_EQ(0, io_uring_queue_init(8, &ring, 0));
	h = so_new(_metadata, fd, 0);
	uring_wait_prep(&ring, fd, h + 7, 1, 0, 1);
	ASSERT_EQ(1, io_uring_submit(&ring));
	ASSERT_EQ(-ENOENT, uring_reap1(&ring, 5000, NULL));
	uring_wait_prep(&ring, fd, h, 1, ACCEL_WAIT_ALL, 2);
	ASSERT_EQ(1, io_uring_submit(&ring));
	ASSERT_EQ(-EINVAL, uring_reap1(&ring, 5000, NULL));
	io_uring_queue_exit(&ring);
}

TEST_F(syncobj, uring_wait_cancel_ioctl)
{
	struct io_uring ring;
	int fd = accel_test_open();
	uint32_t h, n = 0;

	ASSERT_GE(fd, 0);
	ASSERT_EQ(0, io_uring_queue_init(8, &ring, 0));
	h = so_new(_metadata, fd, 0);
	uring_wait_prep(&ring, fd, h, 2, 0, 1);
	ASSERT_EQ(1, io_uring_submit(&ring));
	ASSERT_EQ(1000, uring_reap1(&ring, 50, NULL));
	ASSERT_EQ(0, so_cancel(fd, h, 2, &n));
	ASSERT_EQ(1, n);
	ASSERT_EQ(-ECANCELED, uring_reap1(&ring, 5000, NULL));
	ASSERT_EQ(0, so_signal(fd, h, 2));
	ASSERT_EQ(1000, uring_reap1(&ring, 50, NULL));
	io_uring_queue_exit(&ring);
}

TEST_F(syncobj, uring_signal)
{
	struct io_uring ring;
	struct accel_syncobj_signal s;
	struct io_uring_sqe *sqe;
	int fd = accel_test_open(), res[2];
	__u64 ud[2];
	uint32_t h;

	ASSERT_GE(fd, 0);
	ASSERT_EQ(0, io_uring_queue_init(8, &ring, 0));
	h = so_new(_metadata, fd, 0);
	s = (struct accel_syncobj_signal){ .handle = h, .value = 5 };
	sqe = io_uring_get_sqe(&ring);
	accel_prep_uring_cmd(sqe, fd, ACCEL_URING_CMD_SYNCOBJ_SIGNAL, &s, sizeof(s));
	sqe->user_data = 0;
	sqe->flags |= IOSQE_IO_LINK; /* the second runs after the first */
	s.value = 4;
	sqe = io_uring_get_sqe(&ring);
	accel_prep_uring_cmd(sqe, fd, ACCEL_URING_CMD_SYNCOBJ_SIGNAL, &s, sizeof(s));
	sqe->user_data = 1;
	ASSERT_EQ(0, accel_reap(&ring, 2, res, ud));
	for (int i = 0; i < 2; i++) {
		ASSERT_EQ(ud[i] == 0 ? 0 : -EINVAL, res[i]);
	}
	ASSERT_EQ(5, so_value(_metadata, fd, h));
	s = (struct accel_syncobj_signal){ .handle = h + 1, .value = 9 };
	accel_prep_uring_cmd(io_uring_get_sqe(&ring), fd,
			     ACCEL_URING_CMD_SYNCOBJ_SIGNAL, &s, sizeof(s));
	ASSERT_EQ(0, accel_reap(&ring, 1, res, NULL));
	ASSERT_EQ(-ENOENT, res[0]);
	io_uring_queue_exit(&ring);
}

/*
 * A process whose io_uring WAIT is pending must exit promptly, both when
 * it exits by itself (ring teardown) and when it is killed.
 */
static void exit_with_pending_wait(struct __test_metadata *_metadata,
				   int kill_it)
{
	int fd = accel_test_open(), pipefd[2], status;
	uint32_t h;
	pid_t pid;
	char c;

	ASSERT_GE(fd, 0);
	h = so_new(_metadata, fd, 0);
	ASSERT_EQ(0, pipe(pipefd));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		struct io_uring ring;

		if (io_uring_queue_init(8, &ring, 0))
			_exit(10);
		uring_wait_prep(&ring, fd, h, 1, 0, 1);
		if (io_uring_submit(&ring) != 1)
			_exit(11);
		if (write(pipefd[1], "r", 1) != 1)
			_exit(12);
		if (kill_it)
			pause();
		_exit(0); /* with the WAIT pending */
	}
	ASSERT_EQ(1, read(pipefd[0], &c, 1));
	usleep(20000);
	if (kill_it) {
		ASSERT_EQ(0, kill(pid, SIGKILL));
	}
	status = reap_within(_metadata, pid, 5000, "the process's exit");
	if (kill_it) {
		ASSERT_TRUE(WIFSIGNALED(status));
	} else {
		ASSERT_EQ(0, WEXITSTATUS(status));
	}
	/* The syncobj is untouched and still usable. */
	ASSERT_EQ(0, so_signal(fd, h, 1));
}

TEST_F(syncobj, uring_wait_pending_at_exit)
{
	exit_with_pending_wait(_metadata, 0);
}

TEST_F(syncobj, uring_wait_pending_at_sigkill)
{
	exit_with_pending_wait(_metadata, 1);
}

struct thread_waiter {
	struct io_uring *ring;
	int fd;
	uint32_t h;
	int ret;
};

static void *wait_then_exit(void *arg)
{
	struct thread_waiter *t = arg;

	uring_wait_prep(t->ring, t->fd, t->h, 1, 0, 1);
	t->ret = io_uring_submit(t->ring);
	return NULL;
}

/*
 * A WAIT whose thread exited is still its process's: it completes with 0
 * when the point is reached, not -ECANCELED when the thread goes (6.1's
 * monitor took one thread's exit for its process's).
 */
TEST_F(syncobj, uring_wait_outlives_its_thread)
{
	int fd = accel_test_open(), res;
	struct thread_waiter t = { .fd = fd };
	struct io_uring ring;
	uint64_t ud = 0;
	pthread_t th;

	ASSERT_GE(fd, 0);
	t.h = so_new(_metadata, fd, 0);
	ASSERT_EQ(0, io_uring_queue_init(8, &ring, 0));
	t.ring = &ring;
	ASSERT_EQ(0, pthread_create(&th, NULL, wait_then_exit, &t));
	ASSERT_EQ(0, pthread_join(th, NULL));
	ASSERT_EQ(1, t.ret);
	usleep(300000); /* several of 6.1's monitor rounds */
	ASSERT_EQ(0, so_signal(fd, t.h, 1));
	res = uring_reap1(&ring, 5000, &ud);
	ASSERT_EQ(1, ud);
	ASSERT_EQ(0, res);
	io_uring_queue_exit(&ring);
	close(fd);
}

/*
 * A process that execs with an io_uring WAIT pending goes on into the new
 * program: an exec cancels the task's requests (where io_uring cannot
 * cancel a uring_cmd, 6.1, the module's monitor sees the exec), and the
 * syncobj stays usable.
 */
TEST_F(syncobj, uring_wait_pending_at_exec)
{
	int fd = accel_test_open(), pipefd[2], status = 0;
	uint32_t h;
	pid_t pid;
	char c;

	ASSERT_GE(fd, 0);
	h = so_new(_metadata, fd, 0);
	ASSERT_EQ(0, pipe(pipefd));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		struct io_uring ring;

		if (io_uring_queue_init(8, &ring, 0))
			_exit(10);
		uring_wait_prep(&ring, fd, h, 1, 0, 1);
		if (io_uring_submit(&ring) != 1)
			_exit(11);
		if (write(pipefd[1], "r", 1) != 1)
			_exit(12);
		execl("/bin/sh", "sh", "-c", "exit 7", (char *)NULL);
		_exit(13);
	}
	ASSERT_EQ(1, read(pipefd[0], &c, 1));
	status = reap_within(_metadata, pid, 5000, "the exec");
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(7, WEXITSTATUS(status));
	ASSERT_EQ(0, so_signal(fd, h, 1));
	close(pipefd[0]);
	close(pipefd[1]);
}

/* Ring closed (not the process) with a WAIT pending. */
TEST_F(syncobj, uring_wait_pending_at_ring_close)
{
	struct io_uring ring;
	int fd = accel_test_open();
	uint32_t h;

	ASSERT_GE(fd, 0);
	h = so_new(_metadata, fd, 0);
	ASSERT_EQ(0, io_uring_queue_init(8, &ring, 0));
	uring_wait_prep(&ring, fd, h, 1, 0, 1);
	ASSERT_EQ(1, io_uring_submit(&ring));
	io_uring_queue_exit(&ring);
	/* The file must become free: closing it must not hang, and a new
	 * WAIT on a new ring works. */
	ASSERT_EQ(0, io_uring_queue_init(8, &ring, 0));
	uring_wait_prep(&ring, fd, h, 1, 0, 2);
	ASSERT_EQ(1, io_uring_submit(&ring));
	ASSERT_EQ(0, so_signal(fd, h, 1));
	ASSERT_EQ(0, uring_reap1(&ring, 5000, NULL));
	io_uring_queue_exit(&ring);
}

TEST_F(syncobj, limits)
{
	int fd = accel_test_open(), efd = eventfd(0, 0);
	long old_s, old_w;
	uint32_t h, hs[4];
	int ret;

	ASSERT_GE(fd, 0);
	old_s = set_param("max_syncobjs", 4);
	if (old_s < 0)
		SKIP(return, "cannot set the module parameter max_syncobjs");
	for (int i = 0; i < 4; i++)
		hs[i] = so_new(_metadata, fd, 0);
	ret = so_create(fd, 0, &h);
	set_param("max_syncobjs", old_s);
	ASSERT_EQ(-EMFILE, ret);
	/* A freed slot can be used again. */
	set_param("max_syncobjs", 4);
	ASSERT_EQ(0, so_destroy(fd, hs[0]));
	ret = so_create(fd, 0, &h);
	set_param("max_syncobjs", old_s);
	ASSERT_EQ(0, ret);

	old_w = set_param("max_pending_waits", 2);
	ASSERT_EQ(0, so_eventfd(fd, hs[1], 1, 0, efd));
	ASSERT_EQ(0, so_eventfd(fd, hs[1], 2, 0, efd));
	ret = so_eventfd(fd, hs[1], 3, 0, efd);
	/* An io_uring WAIT counts against the same limit: its CQE says so. */
	struct io_uring ring;
	int ring_ret = io_uring_queue_init(4, &ring, 0), cqe_res = 0;

	if (!ring_ret) {
		uring_wait_prep(&ring, fd, hs[1], 4, 0, 7);
		if (io_uring_submit(&ring) == 1)
			cqe_res = uring_reap1(&ring, 5000, NULL);
		io_uring_queue_exit(&ring);
	}
	set_param("max_pending_waits", old_w);
	ASSERT_EQ(-ENOSPC, ret);
	ASSERT_EQ(0, ring_ret);
	ASSERT_EQ(-ENOSPC, cqe_res);
	/* Nothing was registered by the refusals: 3 and 4 stay silent. */
	uint64_t drain;

	ASSERT_EQ(0, so_signal(fd, hs[1], 2));
	ASSERT_EQ(8, read(efd, &drain, 8));
	ASSERT_EQ(2, drain); /* the two registrations on 1 and 2 */
	ASSERT_EQ(0, so_signal(fd, hs[1], 4));
	ASSERT_FALSE(fd_ready(efd));
}

/*
 * max_syncobjs bounds how many handles a file holds, not their numbers:
 * lowered to 4 while the file holds handles 5 to 8, it refuses a fifth.
 * The module once allocated numbers up to the limit and so gave out 1
 * to 4 as well, 8 held under a limit of 4.
 */
TEST_F(syncobj, lowered_limit_counts_the_handles_held)
{
	int fd = accel_test_open(), ret, ret2;
	uint32_t hs[8], h, h2;
	long old;

	ASSERT_GE(fd, 0);
	for (int i = 0; i < 8; i++)
		hs[i] = so_new(_metadata, fd, 0);
	for (int i = 0; i < 4; i++)
		ASSERT_EQ(0, so_destroy(fd, hs[i]));
	old = set_param("max_syncobjs", 4);
	if (old < 0)
		SKIP(return, "cannot set the module parameter max_syncobjs");
	ret = so_create(fd, 0, &h);
	set_param("max_syncobjs", old);
	ASSERT_EQ(-EMFILE, ret);
	/* One given back makes room for one, under the limit's numbers. */
	ASSERT_EQ(0, so_destroy(fd, hs[4]));
	set_param("max_syncobjs", 4);
	ret = so_create(fd, 0, &h);
	ret2 = so_create(fd, 0, &h2);
	set_param("max_syncobjs", old);
	ASSERT_EQ(0, ret);
	ASSERT_LE(h, 4);
	ASSERT_EQ(-EMFILE, ret2);
	/* A refused create counted nothing: the slot is there once more. */
	ASSERT_EQ(0, so_destroy(fd, h));
	set_param("max_syncobjs", 4);
	ret = so_create(fd, 0, &h);
	set_param("max_syncobjs", old);
	ASSERT_EQ(0, ret);
	ASSERT_EQ(0, close(fd));
}

/*
 * Three threads creating syncobjs at once against max_syncobjs: the file
 * never holds more than the limit (the count is reserved before the
 * allocation, which may sleep with the lock dropped), it holds exactly the
 * limit once all are refused, and every destroy gives one back.
 */
struct creator {
	int fd, made;
	uint32_t h[64];
};

static void *creator_fn(void *arg)
{
	struct creator *c = arg;

	for (int i = 0; i < 64; i++)
		if (so_create(c->fd, 0, &c->h[c->made]) == 0)
			c->made++;
	return NULL;
}

TEST_F(syncobj, limit_holds_under_racing_creates)
{
	struct creator c[3] = { { 0 } };
	int fd = accel_test_open(), total = 0, ret, ret2, ret3;
	bool destroyed = false;
	pthread_t t[3];
	uint32_t h;
	long old;

	ASSERT_GE(fd, 0);
	old = set_param("max_syncobjs", 40);
	if (old < 0)
		SKIP(return, "cannot set the module parameter max_syncobjs");
	for (int i = 0; i < 3; i++) {
		c[i].fd = fd;
		pthread_create(&t[i], NULL, creator_fn, &c[i]);
	}
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	ret = so_create(fd, 0, &h);
	for (int i = 0; i < 3; i++)
		total += c[i].made;
	/* A destroy (of a handle whichever thread made it) makes room for one only. */
	for (int i = 0; i < 3 && !destroyed; i++)
		if (c[i].made)
			destroyed = so_destroy(fd, c[i].h[0]) == 0;
	ret2 = so_create(fd, 0, &h);
	ret3 = so_create(fd, 0, &h);
	/* The limit goes back before any assertion: the next suites need it. */
	set_param("max_syncobjs", old);
	ASSERT_EQ(40, total);
	ASSERT_EQ(-EMFILE, ret);
	ASSERT_TRUE(destroyed);
	ASSERT_EQ(0, ret2);
	ASSERT_EQ(-EMFILE, ret3);
	ASSERT_EQ(0, close(fd));
}

/*
 * The module finds the lowest handles through a small table beside the
 * xarray (kmod/syncobj_ioctl.c, ACCEL_SYNCOBJ_FAST = 64): a handle on
 * either side of it, at its edges, destroyed and given out again, must
 * name the syncobj it names now, never the one it named before.
 */
TEST_F(syncobj, handles_either_side_of_the_fast_table)
{
	enum { N = 70 };
	int fd = accel_test_open();
	uint32_t h[N + 1], again;
	uint64_t want[N + 2];

	ASSERT_GE(fd, 0);
	for (int i = 1; i <= N; i++) {
		h[i] = so_new(_metadata, fd, 1000 + i);
		ASSERT_EQ((uint32_t)i, h[i]); /* handles from 1, lowest free first */
		want[i] = 1000 + i;
	}
	for (int i = 1; i <= N; i++)
		ASSERT_EQ(1000u + i, so_value(_metadata, fd, h[i]));
	/* The table's last slot, the xarray's first handle, one well inside each. */
	for (int k = 0; k < 4; k++) {
		static const uint32_t which[4] = { 5, 63, 64, 66 };
		uint32_t g = which[k];

		ASSERT_EQ(0, so_destroy(fd, g));
		ASSERT_EQ(-ENOENT, so_query(fd, g, NULL, NULL, NULL));
		ASSERT_EQ(-ENOENT, so_signal(fd, g, 5000));
		ASSERT_EQ(-ENOENT, so_destroy(fd, g));
		/* Its neighbours are untouched. */
		ASSERT_EQ(want[g - 1], so_value(_metadata, fd, g - 1));
		ASSERT_EQ(want[g + 1], so_value(_metadata, fd, g + 1));
		/* Given out again: the new syncobj, not the old one. */
		again = so_new(_metadata, fd, 7);
		ASSERT_EQ(g, again);
		ASSERT_EQ(7, so_value(_metadata, fd, g));
		ASSERT_EQ(0, so_signal(fd, g, 8));
		ASSERT_EQ(8, so_value(_metadata, fd, g));
		want[g] = 8;
	}
	for (int i = 1; i <= N; i++)
		ASSERT_EQ(want[i], so_value(_metadata, fd, h[i]));
	/*
	 * A destroyed handle stays unknown once its syncobj's memory is freed
	 * (after a grace period: drop_caches runs kfree_rcu()'s shrinker,
	 * which starts it) and given to new syncobjs: a lookup that still
	 * reached the old memory would find one of them, or KASAN would
	 * report it.
	 */
	ASSERT_EQ(0, so_destroy(fd, 9));
	{
		int dc = open("/proc/sys/vm/drop_caches", O_WRONLY);

		if (dc >= 0) {
			ASSERT_EQ(1, write(dc, "2", 1));
			close(dc);
		}
		usleep(300 * 1000);
	}
	{
		int fd2 = accel_test_open(); /* its handles are its own */

		ASSERT_GE(fd2, 0);
		for (int i = 0; i < 64; i++)
			so_new(_metadata, fd2, 4242);
		ASSERT_EQ(-ENOENT, so_query(fd, 9, NULL, NULL, NULL));
		close(fd2);
	}
	ASSERT_EQ(-ENOENT, so_signal(fd, 9, 5000));
	/* Handles never given out, on both sides and at the ends. */
	ASSERT_EQ(-ENOENT, so_query(fd, 0, NULL, NULL, NULL));
	ASSERT_EQ(-ENOENT, so_query(fd, N + 66, NULL, NULL, NULL));
	ASSERT_EQ(-ENOENT, so_query(fd, 0x7fffffff, NULL, NULL, NULL));
	ASSERT_EQ(-ENOENT, so_query(fd, 0xffffffff, NULL, NULL, NULL));
	ASSERT_EQ(-ENOENT, so_signal(fd, 0xffffffff, 1));
	close(fd);
}

/*
 * Three threads on one low handle: one destroys it and creates it again
 * (the same handle comes back), two look it up (QUERY, SIGNAL, a WAIT
 * that polls). A lookup gets a live syncobj (a value of at least the
 * 100 every generation starts at) or ENOENT, never one freed under it
 * (KASAN on the debug kernel reports a use after free).
 */
struct churn {
	int fd;
	uint32_t h;
	atomic_int stop;
	atomic_int bad;
};

static void *churn_lookups(void *arg)
{
	struct churn *c = arg;
	unsigned int n = 0;

	while (!atomic_load(&c->stop)) {
		uint64_t v = 0;
		int err = 0, ret = so_query(c->fd, c->h, &v, NULL, &err);

		/* Every generation starts at 100 and is only signalled up. */
		if ((ret && ret != -ENOENT) || (!ret && v < 100))
			atomic_fetch_add(&c->bad, 1);
		ret = so_signal(c->fd, c->h, 100 + (++n % 3));
		if (ret && ret != -ENOENT && ret != -EINVAL)
			atomic_fetch_add(&c->bad, 1);
		ret = so_wait1(c->fd, c->h, 1, 0, 0);
		if (ret && ret != -ENOENT)
			atomic_fetch_add(&c->bad, 1);
	}
	return NULL;
}

TEST_F_TIMEOUT(syncobj, destroy_races_lookups_of_a_low_handle, 60)
{
	struct churn c = { .fd = accel_test_open() };
	pthread_t t[2];
	uint32_t g;

	ASSERT_GE(c.fd, 0);
	c.h = so_new(_metadata, c.fd, 100);
	ASSERT_LT(c.h, 64u); /* in the fast table */
	for (int i = 0; i < 2; i++)
		ASSERT_EQ(0, pthread_create(&t[i], NULL, churn_lookups, &c));
	for (int i = 0; i < 3000; i++) {
		ASSERT_EQ(0, so_destroy(c.fd, c.h));
		ASSERT_EQ(0, so_create(c.fd, 100, &g));
		ASSERT_EQ(c.h, g);
	}
	atomic_store(&c.stop, 1);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	ASSERT_EQ(0, atomic_load(&c.bad));
	ASSERT_LE(100, so_value(_metadata, c.fd, c.h));
	close(c.fd);
}

/* Several threads signalling and waiting on several syncobjs for a while:
 * every waiter sees its value, and no wake-up is lost. */
struct stress {
	int fd;
	uint32_t h[4];
	uint64_t last;
	volatile int failures;
};

static void *stress_signaller(void *arg)
{
	struct stress *s = arg;

	for (uint64_t v = 1; v <= s->last; v++) {
		for (int i = 0; i < 4; i++)
			if (so_signal(s->fd, s->h[i], v))
				__atomic_add_fetch(&s->failures, 1, __ATOMIC_RELAXED);
		if (v % 32 == 0)
			usleep(200); /* let the waiters get ahead and sleep */
	}
	return NULL;
}

static void *stress_waiter(void *arg)
{
	struct stress *s = arg;
	unsigned int seed = (unsigned int)(uintptr_t)pthread_self();

	for (uint64_t p = 1; p <= s->last; p += 1 + rand_r(&seed) % 7) {
		uint32_t i = rand_r(&seed) % 4;
		uint64_t pts[4] = { p, p, p, p };

		if (so_wait(s->fd, s->h, pts, 4,
			    (i & 1) ? ACCEL_WAIT_ALL : 0, in_ms(20000), NULL))
			__atomic_add_fetch(&s->failures, 1, __ATOMIC_RELAXED);
		if (so_wait1(s->fd, s->h[i], p, 0, in_ms(20000)))
			__atomic_add_fetch(&s->failures, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

TEST_F_TIMEOUT(syncobj, stress_signal_and_wait, 60)
{
	struct stress s = { .last = 4000 };
	pthread_t sig, w[4];

	s.fd = accel_test_open();
	ASSERT_GE(s.fd, 0);
	for (int i = 0; i < 4; i++)
		s.h[i] = so_new(_metadata, s.fd, 0);
	for (int i = 0; i < 4; i++) {
		ASSERT_EQ(0, pthread_create(&w[i], NULL, stress_waiter, &s));
	}
	ASSERT_EQ(0, pthread_create(&sig, NULL, stress_signaller, &s));
	ASSERT_EQ(0, pthread_join(sig, NULL));
	for (int i = 0; i < 4; i++) {
		ASSERT_EQ(0, pthread_join(w[i], NULL));
	}
	ASSERT_EQ(0, s.failures);
	for (int i = 0; i < 4; i++) {
		ASSERT_EQ(s.last, so_value(_metadata, s.fd, s.h[i]));
	}
}

ACCEL_TEST_MAIN
