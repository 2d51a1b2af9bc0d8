// SPDX-License-Identifier: MIT
/*
 * accel-bench: the kernel module's paths (run in the VM by `make bench`).
 *
 *	nop   a NOP uring_cmd on /dev/accelsched, batched 128 per
 *	      io_uring_enter, against one NOP ioctl per syscall and against
 *	      io_uring's own IORING_OP_NOP with the same batching.
 *	wake  a host signal -> wake round trip between two threads through
 *	      syncobjs (waiting with the WAIT ioctl, and with an io_uring
 *	      WAIT), against the same ping-pong over two eventfds.
 */
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <accelsched.h>

#include "bench.h"

#define BATCH 128

/* ns per NOP ioctl, one syscall each. */
static double run_ioctl_nop(int fd, long ops)
{
	struct accel_nop nop = { 0 };
	double t0 = now_ns();

	for (long i = 0; i < ops; i++) {
		if (ioctl(fd, ACCEL_IOCTL_NOP, &nop)) {
			fprintf(stderr, "accel-bench: NOP ioctl: %s\n", strerror(errno));
			exit(1);
		}
	}
	return (now_ns() - t0) / ops;
}

/* ns per op, BATCH SQEs per io_uring_enter; fd < 0 means IORING_OP_NOP. */
static double run_ring(struct io_uring *ring, int fd, long ops)
{
	struct accel_nop nop = { 0 };
	struct io_uring_cqe *cqe;
	double t0 = now_ns();
	long done = 0;

	while (done < ops) {
		for (int i = 0; i < BATCH; i++) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

			if (fd < 0) {
				io_uring_prep_nop(sqe);
			} else {
				io_uring_prep_rw(IORING_OP_URING_CMD, sqe, fd, NULL, 0, 0);
				sqe->cmd_op = ACCEL_URING_CMD_NOP;
				memcpy(sqe->cmd, &nop, sizeof(nop));
			}
		}
		int ret = io_uring_submit_and_wait(ring, BATCH);

		if (ret < 0) {
			fprintf(stderr, "accel-bench: io_uring_submit: %s\n", strerror(-ret));
			exit(1);
		}
		unsigned int head, seen = 0;

		io_uring_for_each_cqe(ring, head, cqe) {
			if (cqe->res < 0) {
				fprintf(stderr, "accel-bench: CQE res %d (%s)\n", cqe->res,
					strerror(-cqe->res));
				exit(1);
			}
			seen++;
		}
		io_uring_cq_advance(ring, seen);
		done += seen;
	}
	return (now_ns() - t0) / done;
}

int bench_nop(const struct opts *o)
{
	struct io_uring ring;
	int fd, ret, first = 1;
	double *io, *uc, *rn;

	fd = open("/dev/" ACCEL_DEVICE_NAME, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "accel-bench: nop: cannot open /dev/%s: %s; load the "
			"module (or run `make bench`, which boots a VM with it)\n",
			ACCEL_DEVICE_NAME, strerror(errno));
		return 1;
	}
	ret = io_uring_queue_init(BATCH, &ring, 0);
	if (ret < 0) {
		fprintf(stderr, "accel-bench: io_uring_queue_init: %s\n", strerror(-ret));
		return 1;
	}
	io = calloc(o->rounds, sizeof(double));
	uc = calloc(o->rounds, sizeof(double));
	rn = calloc(o->rounds, sizeof(double));
	/* Warm up every path once, then interleave the rounds. */
	run_ioctl_nop(fd, o->ops / 10 + 1);
	run_ring(&ring, fd, BATCH * 8);
	run_ring(&ring, -1, BATCH * 8);
	for (int r = 0; r < o->rounds; r++) {
		io[r] = run_ioctl_nop(fd, o->ops);
		uc[r] = run_ring(&ring, fd, o->ops);
		rn[r] = run_ring(&ring, -1, o->ops);
	}
	double mi = median(io, o->rounds), mu = median(uc, o->rounds);
	double mr = median(rn, o->rounds);

	if (o->json) {
		printf("{\"bench\": \"nop\", \"ioctl_nop_ns\": %.1f, "
		       "\"uring_cmd_nop_ns\": %.1f, \"ring_nop_ns\": %.1f, "
		       "\"batch\": %d, \"metrics\": {", mi, mu, mr, BATCH);
	} else {
		printf("# nop: ioctl %.1f ns/op, uring_cmd %.1f ns/op, "
		       "IORING_OP_NOP %.1f ns/op (batch %d, median of %d rounds)\n",
		       mi, mu, mr, BATCH, o->rounds);
	}
	metric(o, "submit.uring_nop_vs_ioctl_nop_rate", mi / mu, &first);
	metric(o, "submit.uring_cmd_nop_vs_ring_nop_cost", mu / mr, &first);
	if (o->json)
		printf("}}\n");
	io_uring_queue_exit(&ring);
	close(fd);
	free(io);
	free(uc);
	free(rn);
	return 0;
}

/*
 * wake: two threads ping-pong N times. Thread A reaches point i on X and
 * waits for point i on Y; thread B waits for X's point i and reaches Y's.
 * One round trip is two signal -> wake hand-offs.
 */
enum wake_mode { WAKE_EVENTFD, WAKE_IOCTL, WAKE_URING };

struct wake_side {
	enum wake_mode mode;
	int fd;              /* the device (ioctl/uring) */
	uint32_t mine, other; /* syncobj I signal, syncobj I wait on */
	int efd_mine, efd_other;
	long iters;
	int starts; /* signals first */
	int err;
};

static int wake_signal(struct wake_side *w, uint64_t v)
{
	if (w->mode == WAKE_EVENTFD) {
		uint64_t one = 1;

		return write(w->efd_mine, &one, 8) == 8 ? 0 : -errno;
	}
	struct accel_syncobj_signal a = { .handle = w->mine, .value = v };

	return ioctl(w->fd, ACCEL_IOCTL_SYNCOBJ_SIGNAL, &a) ? -errno : 0;
}

static int wake_wait(struct wake_side *w, struct io_uring *ring, uint64_t v)
{
	if (w->mode == WAKE_EVENTFD) {
		uint64_t n;

		return read(w->efd_other, &n, 8) == 8 ? 0 : -errno;
	}
	if (w->mode == WAKE_IOCTL) {
		struct accel_syncobj_wait a = {
			.handles = (uintptr_t)&w->other, .points = (uintptr_t)&v,
			.count = 1, .deadline = INT64_MAX,
		};

		return ioctl(w->fd, ACCEL_IOCTL_SYNCOBJ_WAIT, &a) ? -errno : 0;
	}
	struct accel_uring_wait uw = { .point = v, .handle = w->other };
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	struct io_uring_cqe *cqe;
	int ret;

	io_uring_prep_rw(IORING_OP_URING_CMD, sqe, w->fd, NULL, 0, 0);
	sqe->cmd_op = ACCEL_URING_CMD_SYNCOBJ_WAIT;
	memcpy(sqe->cmd, &uw, sizeof(uw));
	ret = io_uring_submit_and_wait(ring, 1);
	if (ret < 0)
		return ret;
	ret = io_uring_wait_cqe(ring, &cqe);
	if (ret < 0)
		return ret;
	ret = cqe->res;
	io_uring_cqe_seen(ring, cqe);
	return ret;
}

static void *wake_thread(void *arg)
{
	struct wake_side *w = arg;
	int starts = w->starts;
	struct io_uring ring;

	/* An executor owns its ring: single issuer, completions run on enter. */
	if (w->mode == WAKE_URING &&
	    io_uring_queue_init(4, &ring, IORING_SETUP_SINGLE_ISSUER |
				IORING_SETUP_DEFER_TASKRUN) < 0 &&
	    io_uring_queue_init(4, &ring, 0) < 0) {
		w->err = -ENOMEM;
		return NULL;
	}
	for (long i = 1; i <= w->iters && !w->err; i++) {
		if (starts) {
			w->err = wake_signal(w, i);
			if (!w->err)
				w->err = wake_wait(w, &ring, i);
		} else {
			w->err = wake_wait(w, &ring, i);
			if (!w->err)
				w->err = wake_signal(w, i);
		}
	}
	if (w->mode == WAKE_URING)
		io_uring_queue_exit(&ring);
	return NULL;
}

/* ns per round trip of one mode, @iters round trips. */
static double run_wake(int fd, enum wake_mode mode, long iters)
{
	struct wake_side a = { .mode = mode, .fd = fd, .iters = iters };
	struct wake_side b = a;
	pthread_t ta, tb;

	a.starts = 1;
	double t0;

	if (mode == WAKE_EVENTFD) {
		a.efd_mine = b.efd_other = eventfd(0, 0);
		b.efd_mine = a.efd_other = eventfd(0, 0);
	} else {
		struct accel_syncobj_create c = { 0 };

		if (ioctl(fd, ACCEL_IOCTL_SYNCOBJ_CREATE, &c))
			return -1;
		a.other = b.mine = c.handle;
		c.handle = 0;
		if (ioctl(fd, ACCEL_IOCTL_SYNCOBJ_CREATE, &c))
			return -1;
		a.mine = b.other = c.handle;
	}
	t0 = now_ns();
	pthread_create(&ta, NULL, wake_thread, &a);
	pthread_create(&tb, NULL, wake_thread, &b);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	t0 = (now_ns() - t0) / iters;
	if (mode == WAKE_EVENTFD) {
		close(a.efd_mine);
		close(b.efd_mine);
	} else {
		struct accel_syncobj_destroy d = { .handle = a.mine };

		ioctl(fd, ACCEL_IOCTL_SYNCOBJ_DESTROY, &d);
		d.handle = b.mine;
		ioctl(fd, ACCEL_IOCTL_SYNCOBJ_DESTROY, &d);
	}
	if (a.err || b.err) {
		fprintf(stderr, "accel-bench: wake: %s\n", strerror(-(a.err ? a.err : b.err)));
		return -1;
	}
	return t0;
}

int bench_wake(const struct opts *o)
{
	long iters = o->ops / 40 > 0 ? o->ops / 40 : 1;
	double *ev, *io, *ur;
	int fd, first = 1;

	fd = open("/dev/" ACCEL_DEVICE_NAME, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "accel-bench: wake: cannot open /dev/%s: %s; load the "
			"module (or run `make bench`, which boots a VM with it)\n",
			ACCEL_DEVICE_NAME, strerror(errno));
		return 1;
	}
	ev = calloc(o->rounds, sizeof(double));
	io = calloc(o->rounds, sizeof(double));
	ur = calloc(o->rounds, sizeof(double));
	run_wake(fd, WAKE_EVENTFD, iters / 10 + 1);
	run_wake(fd, WAKE_IOCTL, iters / 10 + 1);
	run_wake(fd, WAKE_URING, iters / 10 + 1);
	for (int r = 0; r < o->rounds; r++) {
		ev[r] = run_wake(fd, WAKE_EVENTFD, iters);
		io[r] = run_wake(fd, WAKE_IOCTL, iters);
		ur[r] = run_wake(fd, WAKE_URING, iters);
		if (ev[r] < 0 || io[r] < 0 || ur[r] < 0)
			return 1;
	}
	double me = median(ev, o->rounds), mi = median(io, o->rounds);
	double mu = median(ur, o->rounds);

	if (o->json)
		printf("{\"bench\": \"wake\", \"eventfd_round_trip_ns\": %.1f, "
		       "\"ioctl_round_trip_ns\": %.1f, \"uring_round_trip_ns\": %.1f, "
		       "\"metrics\": {", me, mi, mu);
	else
		printf("# wake: round trip eventfd %.1f ns, syncobj ioctl wait %.1f ns, "
		       "syncobj io_uring wait %.1f ns (median of %d rounds of %ld)\n",
		       me, mi, mu, o->rounds, iters);
	metric(o, "syncobj.wake_ioctl_vs_eventfd", mi / me, &first);
	metric(o, "syncobj.wake_uring_vs_eventfd", mu / me, &first);
	if (o->json)
		printf("}}\n");
	free(ev);
	free(io);
	free(ur);
	close(fd);
	return 0;
}

