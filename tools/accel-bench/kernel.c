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
 *	submit  jobs submitted and completed by batched io_uring (inline jobs
 *	      in 128-byte SQEs where the module takes them) against one
 *	      ioctl per job; a SUBMIT's cost against IORING_OP_NOP and against
 *	      a batched ACCEL_URING_CMD_NOP (the module's floor: io_uring's
 *	      uring_cmd dispatch and nothing else); and how much of the NOPs'
 *	      io_uring-over-ioctl advantage the jobs keep, as a ratio of rates
 *	      (uring_advantage_kept) and as time saved (uring_saving_kept).
 *	latency the p99 release latency of high-priority jobs with low
 *	      priority queues flooding the engine, against without.
 *	inversion  the same latency for a high-priority job that waits on a
 *	      low-priority producer queued behind a low-priority flood (the
 *	      priority inversion that priority inheritance undoes), against
 *	      the same job with no dependency under the same flood.
 *	fair  two queues with weights 1:3 flooding one engine: the error of
 *	      their measured shares of device time.
 *	deadline  frames with feasible deadlines under a flood of two tenants:
 *	      the fraction that miss, with the deadlines given to the module
 *	      and without.
 */
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <poll.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <accelsched.h>

#include "accel-insn.h"
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

/* @sqe: an ACCEL_URING_CMD_NOP to the module's file @fd. */
static void prep_cmd_nop(struct io_uring_sqe *sqe, int fd)
{
	static const struct accel_nop nop;

	io_uring_prep_rw(IORING_OP_URING_CMD, sqe, fd, NULL, 0, 0);
	sqe->cmd_op = ACCEL_URING_CMD_NOP;
	memcpy(sqe->cmd, &nop, sizeof(nop));
}

int bench_uring_cmd_nop_alone(struct io_uring *ring, int fd)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	struct io_uring_cqe *cqe;
	int ret;

	if (!sqe)
		return -EBUSY;
	prep_cmd_nop(sqe, fd);
	ret = io_uring_submit(ring);
	if (ret >= 0 && io_uring_peek_cqe(ring, &cqe) < 0)
		ret = io_uring_wait_cqe(ring, &cqe);
	if (ret < 0)
		return ret;
	ret = cqe->res < 0 ? cqe->res : 0;
	io_uring_cqe_seen(ring, cqe);
	return ret;
}

/* BATCH NOPs in one io_uring_enter; fd < 0 means IORING_OP_NOP. */
static long ring_batch(struct io_uring *ring, int fd)
{
	struct io_uring_cqe *cqe;

	for (int i = 0; i < BATCH; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

		if (fd < 0)
			io_uring_prep_nop(sqe);
		else
			prep_cmd_nop(sqe, fd);
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
	return seen;
}

/* ns per op, BATCH SQEs per io_uring_enter; fd < 0 means IORING_OP_NOP. */
static double run_ring(struct io_uring *ring, int fd, long ops)
{
	double t0 = now_ns();
	long done = 0;

	while (done < ops)
		done += ring_batch(ring, fd);
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
		fprintf(notes, "# nop: ioctl %.1f ns/op, uring_cmd %.1f ns/op, "
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
		fprintf(notes, "# wake: round trip eventfd %.1f ns, syncobj ioctl wait %.1f ns, "
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


/* ------------------------------------------------------------- scheduler */

static int cmp_double_asc(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int bench_open_dev(const char *bench)
{
	int fd = open("/dev/" ACCEL_DEVICE_NAME, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		fprintf(stderr, "accel-bench: %s: cannot open /dev/%s: %s; load the "
			"module (or run `make bench`, which boots a VM with it)\n",
			bench, ACCEL_DEVICE_NAME, strerror(errno));
	return fd;
}

static uint32_t bench_queue(int fd, const char *engine, uint32_t prio,
			    uint32_t weight, uint32_t credits)
{
	struct accel_queue_create q = { .priority = prio, .weight = weight,
					.credits = credits };

	snprintf(q.engine, sizeof(q.engine), "bench-%s-%d", engine, getpid());
	if (ioctl(fd, ACCEL_IOCTL_QUEUE_CREATE, &q)) {
		fprintf(stderr, "accel-bench: QUEUE_CREATE: %s\n", strerror(errno));
		exit(1);
	}
	return q.handle;
}

static void must(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "accel-bench: %s: %s\n", what, strerror(errno));
		exit(1);
	}
}

/* One job of queue @q by ioctl: its SUBMIT, then its COMPLETE. */
static void ioctl_job_cycle(int fd, uint32_t q)
{
	struct accel_job j = { .queue = q };
	struct accel_job_submit s = { .jobs = (uintptr_t)&j, .count = 1 };
	struct accel_job_complete c;

	must(!ioctl(fd, ACCEL_IOCTL_JOB_SUBMIT, &s), "JOB_SUBMIT");
	c = (struct accel_job_complete){ .id = j.id };
	must(!ioctl(fd, ACCEL_IOCTL_JOB_COMPLETE, &c), "JOB_COMPLETE");
}

/* ns per job: submit and complete @n jobs, one ioctl each. */
static double run_jobs_ioctl(int fd, uint32_t q, long n)
{
	double t0 = now_ns();

	for (long i = 0; i < n; i++)
		ioctl_job_cycle(fd, q);
	return (now_ns() - t0) / n;
}

/*
 * BATCH SUBMITs of queue @q's job in one io_uring_enter (inline in 128-byte
 * SQEs where the ring has them, as libaccel sends them): the released
 * jobs' ids into @ids, their number returned.
 */
static unsigned int submit_batch(struct io_uring *ring, int fd, uint32_t q,
				 uint32_t ids[BATCH])
{
	static struct accel_job j; /* read at submission: one serves all */
	struct accel_uring_submit us = { .job = (uintptr_t)&j };
	struct io_uring_cqe *cqe;
	unsigned int head, k = 0;

	j = (struct accel_job){ .queue = q };
	for (int i = 0; i < BATCH; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

		io_uring_prep_rw(IORING_OP_URING_CMD, sqe, fd, NULL, 0, 0);
		if (ring->flags & IORING_SETUP_SQE128) {
			/* The whole job in the SQE, as libaccel sends it. */
			struct accel_uring_job ij = { .queue = q };

			sqe->cmd_op = ACCEL_URING_CMD_JOB_SUBMIT_INLINE;
			/* 80 bytes there in a 128-byte SQE. */
			memcpy((void *)((uintptr_t)sqe + offsetof(struct io_uring_sqe, cmd)),
			       &ij, sizeof(ij));
		} else {
			sqe->cmd_op = ACCEL_URING_CMD_JOB_SUBMIT;
			memcpy(sqe->cmd, &us, sizeof(us));
		}
	}
	must(io_uring_submit_and_wait(ring, BATCH) >= 0, "io_uring_submit");
	io_uring_for_each_cqe(ring, head, cqe) {
		if (cqe->res <= 0) {
			fprintf(stderr, "accel-bench: SUBMIT CQE %d (%s)\n",
				cqe->res, strerror(-cqe->res));
			exit(1);
		}
		ids[k++] = cqe->res & ACCEL_JOB_RES_ID_MASK;
	}
	io_uring_cq_advance(ring, k);
	return k;
}

/* COMPLETEs of the @k jobs @ids in one io_uring_enter. */
static void complete_batch(struct io_uring *ring, int fd, const uint32_t *ids,
			   unsigned int k)
{
	struct io_uring_cqe *cqe;
	unsigned int head, seen = 0;

	for (unsigned int i = 0; i < k; i++) {
		struct accel_job_complete c = { .id = ids[i] };
		struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

		io_uring_prep_rw(IORING_OP_URING_CMD, sqe, fd, NULL, 0, 0);
		sqe->cmd_op = ACCEL_URING_CMD_JOB_COMPLETE;
		memcpy(sqe->cmd, &c, sizeof(c));
	}
	must(io_uring_submit_and_wait(ring, k) >= 0, "io_uring_submit");
	io_uring_for_each_cqe(ring, head, cqe) {
		if (cqe->res < 0) {
			fprintf(stderr, "accel-bench: COMPLETE CQE %d\n", cqe->res);
			exit(1);
		}
		seen++;
	}
	io_uring_cq_advance(ring, seen);
}

/*
 * ns per job through the ring, BATCH per io_uring_enter: the SUBMITs (each
 * CQE carries the released job's id), then the COMPLETEs. With @submit_ns,
 * also the time of the SUBMIT batches alone.
 */
static double run_jobs_uring(struct io_uring *ring, int fd, uint32_t q, long n,
			     double *submit_ns)
{
	uint32_t ids[BATCH];
	double t0 = now_ns(), ts = 0;
	long done = 0;

	while (done < n) {
		double t1 = now_ns();
		unsigned int k = submit_batch(ring, fd, q, ids);

		ts += now_ns() - t1;
		complete_batch(ring, fd, ids, k);
		done += k;
	}
	if (submit_ns)
		*submit_ns = ts / done;
	return (now_ns() - t0) / done;
}

/* The ring as bench_jobs() sets it up: SQE128 where the module takes inline jobs. */
static void jobs_ring(int fd, struct io_uring *ring)
{
	struct accel_info info = { 0 };

	must(!ioctl(fd, ACCEL_IOCTL_INFO, &info), "ACCEL_IOCTL_INFO");
	must(io_uring_queue_init(2 * BATCH, ring,
				 info.features & ACCEL_FEATURE_URING_INLINE_JOB ?
				 IORING_SETUP_SQE128 : 0) == 0, "io_uring_queue_init");
}

/*
 * The windows of `accel-bench insn` (insn.c) on the module's paths: what
 * bench_jobs() times, a batch at a time. Each window is one batch, its
 * SQEs' preparation and its CQEs' reaping included, as the times are.
 */
int insn_kernel(const struct opts *o)
{
	struct io_uring ring;
	struct accel_nop nop = { 0 };
	uint32_t ids[BATCH], q;
	int fd = bench_open_dev("insn");

	if (fd < 0)
		return 1;
	jobs_ring(fd, &ring);
	q = bench_queue(fd, "insn", ACCEL_PRIORITY_NORMAL, 1, ACCEL_CREDITS_MAX);
	/* Warm: the job cache, the ring's request cache, the code. */
	run_jobs_uring(&ring, fd, q, BATCH * 4, NULL);
	run_ring(&ring, -1, BATCH * 4);
	run_ring(&ring, fd, BATCH * 4);
	run_ioctl_nop(fd, BATCH);
	insn_window(INSN_URING_SUBMIT, "uring_job_submit", BATCH);
	insn_window(INSN_URING_CMD_NOP, "uring_cmd_nop", BATCH);
	insn_window(INSN_RING_NOP, "ring_nop", BATCH);
	insn_window(INSN_IOCTL_NOP, "ioctl_nop", 1);
	insn_window(INSN_URING_CMD_NOP_ALONE, "uring_cmd_nop_alone", 1);
	insn_window(INSN_URING_COMPLETE, "uring_job_complete", BATCH);
	insn_window(INSN_IOCTL_JOB, "ioctl_job_cycle", 1);
	insn_pin();
	for (int r = 0; r < o->rounds; r++) {
		unsigned int k;
		int ret;

		ACCEL_INSN_BEGIN(INSN_URING_SUBMIT);
		k = submit_batch(&ring, fd, q, ids);
		ACCEL_INSN_END(INSN_URING_SUBMIT);
		/* The other half of submit.uring_vs_ioctl_rate's job cycle. */
		ACCEL_INSN_BEGIN(INSN_URING_COMPLETE);
		complete_batch(&ring, fd, ids, k);
		ACCEL_INSN_END(INSN_URING_COMPLETE);
		/* The cycle one ioctl per half: run_jobs_ioctl()'s. */
		ACCEL_INSN_BEGIN(INSN_IOCTL_JOB);
		ioctl_job_cycle(fd, q);
		ACCEL_INSN_END(INSN_IOCTL_JOB);
		ACCEL_INSN_BEGIN(INSN_URING_CMD_NOP);
		ring_batch(&ring, fd);
		ACCEL_INSN_END(INSN_URING_CMD_NOP);
		ACCEL_INSN_BEGIN(INSN_RING_NOP);
		ring_batch(&ring, -1);
		ACCEL_INSN_END(INSN_RING_NOP);
		ACCEL_INSN_BEGIN(INSN_IOCTL_NOP);
		must(!ioctl(fd, ACCEL_IOCTL_NOP, &nop), "ACCEL_IOCTL_NOP");
		ACCEL_INSN_END(INSN_IOCTL_NOP);
		/* As libaccel enters one SUBMIT: io_uring_submit(), no wait. */
		ACCEL_INSN_BEGIN(INSN_URING_CMD_NOP_ALONE);
		ret = bench_uring_cmd_nop_alone(&ring, fd);
		ACCEL_INSN_END(INSN_URING_CMD_NOP_ALONE);
		if (ret < 0) {
			fprintf(stderr, "accel-bench: insn: ACCEL_URING_CMD_NOP alone: %s\n",
				strerror(-ret));
			exit(1);
		}
	}
	insn_unpin();
	io_uring_queue_exit(&ring);
	close(fd);
	return 0;
}

int bench_jobs(const struct opts *o)
{
	double *io = calloc(o->rounds, sizeof(double));
	double *ur = calloc(o->rounds, sizeof(double));
	double *us = calloc(o->rounds, sizeof(double));
	double *nop = calloc(o->rounds, sizeof(double));
	double *cnop = calloc(o->rounds, sizeof(double));
	double *inop = calloc(o->rounds, sizeof(double));
	struct io_uring ring;
	long n = o->ops / 4 / BATCH * BATCH;
	int fd = bench_open_dev("submit"), first = 1;
	uint32_t q;

	if (fd < 0)
		return 1;
	if (n < BATCH)
		n = BATCH;
	/* SQE128 where the module takes inline jobs: libaccel's path. */
	jobs_ring(fd, &ring);
	q = bench_queue(fd, "submit", ACCEL_PRIORITY_NORMAL, 1, ACCEL_CREDITS_MAX);
	run_jobs_ioctl(fd, q, n / 10 + 1);
	run_jobs_uring(&ring, fd, q, BATCH * 2, NULL);
	run_ring(&ring, -1, BATCH * 8);
	run_ring(&ring, fd, BATCH * 8);
	run_ioctl_nop(fd, n / 10 + 1);
	for (int r = 0; r < o->rounds; r++) {
		io[r] = run_jobs_ioctl(fd, q, n);
		ur[r] = run_jobs_uring(&ring, fd, q, n, &us[r]);
		nop[r] = run_ring(&ring, -1, n);
		cnop[r] = run_ring(&ring, fd, n);
		inop[r] = run_ioctl_nop(fd, n);
	}
	double mi = median(io, o->rounds), mu = median(ur, o->rounds);
	double ms = median(us, o->rounds), mn = median(nop, o->rounds);
	double mc = median(cnop, o->rounds), mo = median(inop, o->rounds);

	if (o->json)
		printf("{\"bench\": \"submit\", \"ioctl_job_ns\": %.1f, \"uring_job_ns\": %.1f, "
		       "\"uring_submit_ns\": %.1f, \"ring_nop_ns\": %.1f, "
		       "\"uring_cmd_nop_ns\": %.1f, \"ioctl_nop_ns\": %.1f, \"metrics\": {",
		       mi, mu, ms, mn, mc, mo);
	else
		fprintf(notes, "# submit: submit+complete per job: ioctl %.1f ns, io_uring %.1f ns "
		       "(batch %d); SUBMIT alone %.1f ns vs ACCEL_URING_CMD_NOP %.1f ns "
		       "vs IORING_OP_NOP %.1f ns; NOP ioctl %.1f ns\n",
		       mi, mu, BATCH, ms, mc, mn, mo);
	metric(o, "submit.uring_vs_ioctl_rate", mi / mu, &first);
	metric(o, "submit.uring_job_vs_nop_cost", ms / mn, &first);
	metric(o, "submit.uring_job_vs_uring_cmd_nop", ms / mc, &first);
	/* What the jobs keep of the NOPs' advantage of io_uring over ioctl. */
	metric(o, "submit.uring_advantage_kept", (mi / mu) / (mo / mc), &first);
	/*
	 * The same advantage in time: what the ring saves a job (a SUBMIT
	 * and a COMPLETE) over what it saves two NOPs. A ratio of rates
	 * falls with any work the job does on both paths alike: with W ns of
	 * it, (2 * mo + W) / (2 * mc + W) tends to 1 whatever the ring saves,
	 * and 0.9 of mo / mc would need W below a third of a NOP here. A
	 * difference of times keeps only what differs between the paths: 1
	 * when the ring saves a job what it saves two NOPs, above 1 when the
	 * job costs less on the ring (an inline job needs no copy), below 1
	 * when the ring adds work of its own.
	 */
	metric(o, "submit.uring_saving_kept", (mi - mu) / (2 * (mo - mc)), &first);
	if (o->json)
		printf("}}\n");
	io_uring_queue_exit(&ring);
	close(fd);
	free(io);
	free(ur);
	free(us);
	free(nop);
	free(cnop);
	free(inop);
	return 0;
}

/*
 * The latency of high-priority jobs: from submission to release, seen by an
 * executor thread that completes every job it gets at once, with and
 * without low-priority queues flooding the same one-credit engine.
 */
struct lat_ctx {
	int fd;
	uint32_t hq, lq[2];
	int flood;
	volatile int stop;
	volatile uint64_t released_at; /* of the current high job */
	volatile uint32_t high_id;
	long low_target;
};

#define HIGH_TAG 0x4849474855ull

static void *lat_executor(void *arg)
{
	struct lat_ctx *c = arg;
	struct accel_job_event ev[64];
	struct pollfd p = { .fd = c->fd, .events = POLLIN };

	while (!c->stop) {
		struct accel_job_fetch f = { .events = (uintptr_t)ev, .max = 64 };

		if (poll(&p, 1, 10) <= 0)
			continue;
		must(!ioctl(c->fd, ACCEL_IOCTL_JOB_FETCH, &f), "JOB_FETCH");
		for (uint32_t i = 0; i < f.count; i++) {
			struct accel_job_complete done = { .id = ev[i].id,
							   .device_ns = 1000 };

			if (ev[i].user_data == HIGH_TAG)
				c->released_at = now_ns();
			must(!ioctl(c->fd, ACCEL_IOCTL_JOB_COMPLETE, &done), "JOB_COMPLETE");
			if (ev[i].user_data != HIGH_TAG && c->flood) {
				/* Keep the flood topped up. */
				struct accel_job j = { .queue = c->lq[ev[i].user_data & 1],
						       .user_data = ev[i].user_data };
				struct accel_job_submit s = { .jobs = (uintptr_t)&j, .count = 1 };

				must(!ioctl(c->fd, ACCEL_IOCTL_JOB_SUBMIT, &s), "JOB_SUBMIT");
			}
		}
	}
	return NULL;
}

/* p99 of @n high-priority release latencies, in ns. */
static double run_latency(int fd, uint32_t hq, uint32_t lq0, uint32_t lq1,
			  int flood, int n)
{
	struct lat_ctx c = { .fd = fd, .hq = hq, .lq = { lq0, lq1 }, .flood = flood };
	double *lat = calloc(n, sizeof(double));
	pthread_t t;
	double p99;

	if (flood) {
		for (int i = 0; i < 32; i++) {
			struct accel_job j = { .queue = c.lq[i & 1], .user_data = i };
			struct accel_job_submit s = { .jobs = (uintptr_t)&j, .count = 1 };

			must(!ioctl(fd, ACCEL_IOCTL_JOB_SUBMIT, &s), "JOB_SUBMIT");
		}
	}
	pthread_create(&t, NULL, lat_executor, &c);
	for (int i = 0; i < n; i++) {
		struct accel_job j = { .queue = hq, .user_data = HIGH_TAG };
		struct accel_job_submit s = { .jobs = (uintptr_t)&j, .count = 1 };
		double t0;

		c.released_at = 0;
		t0 = now_ns();
		must(!ioctl(fd, ACCEL_IOCTL_JOB_SUBMIT, &s), "JOB_SUBMIT");
		while (!c.released_at)
			sched_yield();
		lat[i] = c.released_at - t0;
		usleep(200);
	}
	c.flood = 0;
	c.stop = 1;
	pthread_join(t, NULL);
	/* Drain the flood: complete what is left. */
	for (int k = 0; k < 1000; k++) {
		struct accel_job_event ev[64];
		struct accel_job_fetch f = { .events = (uintptr_t)ev, .max = 64 };

		must(!ioctl(fd, ACCEL_IOCTL_JOB_FETCH, &f), "JOB_FETCH");
		if (!f.count && k > 50)
			break;
		for (uint32_t i = 0; i < f.count; i++) {
			struct accel_job_complete done = { .id = ev[i].id };

			ioctl(fd, ACCEL_IOCTL_JOB_COMPLETE, &done);
		}
		usleep(200);
	}
	qsort(lat, n, sizeof(double), cmp_double_asc);
	p99 = lat[(int)(n * 0.99) < n ? (int)(n * 0.99) : n - 1];
	free(lat);
	return p99;
}

int bench_latency(const struct opts *o)
{
	int fd = bench_open_dev("latency"), first = 1, n = 100;
	double *idle = calloc(o->rounds, sizeof(double));
	double *load = calloc(o->rounds, sizeof(double));
	uint32_t hq, l0, l1;

	if (fd < 0)
		return 1;
	hq = bench_queue(fd, "lat", ACCEL_PRIORITY_HIGH, 1, 1);
	l0 = bench_queue(fd, "lat", ACCEL_PRIORITY_LOW, 1, 0);
	l1 = bench_queue(fd, "lat", ACCEL_PRIORITY_LOW, 1, 0);
	run_latency(fd, hq, l0, l1, 0, 10);
	for (int r = 0; r < o->rounds; r++) {
		idle[r] = run_latency(fd, hq, l0, l1, 0, n);
		load[r] = run_latency(fd, hq, l0, l1, 1, n);
	}
	double mi = median(idle, o->rounds), ml = median(load, o->rounds);

	if (o->json)
		printf("{\"bench\": \"latency\", \"high_p99_idle_ns\": %.1f, "
		       "\"high_p99_loaded_ns\": %.1f, \"metrics\": {", mi, ml);
	else
		fprintf(notes, "# latency: high-priority release p99 idle %.1f ns, with two "
		       "low-priority queues flooding %.1f ns\n", mi, ml);
	metric(o, "sched.high_p99_loaded_vs_idle", ml / mi, &first);
	if (o->json)
		printf("}}\n");
	free(idle);
	free(load);
	close(fd);
	return 0;
}

/*
 * Priority inversion: a LOW flood of INV_FLOOD jobs queued on a one-credit
 * engine (topped up before each sample); per sample, (dep)
 * a LOW producer promising a point, from another file (another process's,
 * as it were: not pipelined), and a HIGH job waiting on that point, or
 * (direct) the HIGH job alone, the two kinds alternating sample by sample.
 * This thread is the executor of both files:
 * it completes every job as soon as it sees it released, without sleeping,
 * so that the latency counts the scheduler's decisions (how many jobs go
 * first) and not a thread's wake-ups. The producer's jobs report a second
 * of device time each (and one such job runs first), so that its tenant
 * is always far over its share and fair share alone puts the producer
 * behind the whole flood: only priority inheritance releases it early.
 * The latency is the HIGH job's, from its SUBMIT to its release seen.
 */
#define INV_FLOOD 32
#define INV_PRODUCER_NS 1000000000ull
#define PROD_TAG 0x50524f44ull

struct inv_setup {
	int fd[2];            /* the flood's and consumer's file, the producer's */
	uint32_t hq, lq, pq;  /* pq in the producer's file */
	uint32_t x[2];        /* one syncobj, its handle in each file */
	uint64_t point;
	int flood;            /* flood jobs submitted and not completed */
};

/* Submit @n jobs in one ioctl. */
static void inv_submit(int fd, struct accel_job *j, uint32_t n)
{
	struct accel_job_submit s = { .jobs = (uintptr_t)j, .count = n };

	must(!ioctl(fd, ACCEL_IOCTL_JOB_SUBMIT, &s), "JOB_SUBMIT");
}

/*
 * Complete what both files have released. *@high: when the HIGH job's
 * release was seen, if it was; *@ahead counts the flood's jobs released
 * before it.
 */
static void inv_complete(struct inv_setup *s, double *high, int *ahead)
{
	struct accel_job_event ev[64];

	for (int k = 0; k < 2; k++) {
		struct accel_job_fetch f = { .events = (uintptr_t)ev, .max = 64 };

		must(!ioctl(s->fd[k], ACCEL_IOCTL_JOB_FETCH, &f), "JOB_FETCH");
		for (uint32_t i = 0; i < f.count; i++) {
			struct accel_job_complete done = { .id = ev[i].id,
							   .device_ns = 1000 };

			/* The producer's tenant stays over its share. */
			if (ev[i].user_data == PROD_TAG)
				done.device_ns = INV_PRODUCER_NS;
			if (ev[i].user_data == HIGH_TAG) {
				*high = now_ns();
			} else if (ev[i].user_data < INV_FLOOD) {
				s->flood--;
				if (!*high)
					++*ahead;
			}
			must(!ioctl(s->fd[k], ACCEL_IOCTL_JOB_COMPLETE, &done),
			     "JOB_COMPLETE");
		}
	}
}

/* Top the flood up to INV_FLOOD jobs. */
static void inv_flood(struct inv_setup *s)
{
	struct accel_job flood[INV_FLOOD];
	int n = INV_FLOOD - s->flood;

	for (int i = 0; i < n; i++)
		flood[i] = (struct accel_job){ .queue = s->lq, .user_data = i };
	if (n > 0)
		inv_submit(s->fd[0], flood, n);
	s->flood = INV_FLOOD;
}

/*
 * One HIGH release latency, in ns; with @dep, behind a producer. *@ahead:
 * the most flood jobs released before the HIGH one so far.
 */
static double inv_sample(struct inv_setup *s, int dep, int *ahead)
{
	struct accel_point ps = { .handle = s->x[1], .point = ++s->point };
	struct accel_point pw = { .handle = s->x[0], .point = s->point };
	struct accel_job prod = { .queue = s->pq, .user_data = PROD_TAG,
				  .signals = (uintptr_t)&ps, .nsignals = 1 };
	struct accel_job high = { .queue = s->hq, .user_data = HIGH_TAG,
				  .waits = (uintptr_t)&pw, .nwaits = dep };
	double t0, t1 = 0;
	int a = 0;

	inv_flood(s);
	if (dep)
		inv_submit(s->fd[1], &prod, 1);
	t0 = now_ns();
	inv_submit(s->fd[0], &high, 1);
	while (!t1)
		inv_complete(s, &t1, &a);
	*ahead = a > *ahead ? a : *ahead;
	if (!dep) /* the point stays in step: the host reaches it */
		must(!ioctl(s->fd[0], ACCEL_IOCTL_SYNCOBJ_SIGNAL,
			    &(struct accel_syncobj_signal){ .handle = s->x[0],
							    .value = s->point }),
		     "SYNCOBJ_SIGNAL");
	return t1 - t0;
}

/* The p99 of @n latencies in @lat (sorted here), and *@p50 their median. */
static double inv_p99(double *lat, int n, double *p50)
{
	qsort(lat, n, sizeof(double), cmp_double_asc);
	*p50 = lat[n / 2];
	return lat[(int)(n * 0.99) < n ? (int)(n * 0.99) : n - 1];
}

/*
 * A round: @n samples of each kind, alternating one by one, so that what
 * slows the whole machine for a while (the host, under TCG) falls on both
 * alike; the p99s (p50s) of the direct and dependent HIGH jobs.
 */
static void run_inversion(struct inv_setup *s, int n, int ahead[2],
			  double p99[2], double p50[2])
{
	double *lat[2] = { calloc(n, sizeof(double)), calloc(n, sizeof(double)) };

	for (int i = 0; i < n; i++)
		for (int dep = 0; dep < 2; dep++)
			lat[dep][i] = inv_sample(s, dep, &ahead[dep]);
	for (int dep = 0; dep < 2; dep++) {
		p99[dep] = inv_p99(lat[dep], n, &p50[dep]);
		free(lat[dep]);
	}
}

/* The module's priority_inheritance parameter: 1, 0, or -1 unreadable. */
static int inv_inheritance(void)
{
	FILE *f = fopen("/sys/module/accelsched/parameters/priority_inheritance", "r");
	int ch = f ? fgetc(f) : EOF;

	if (f)
		fclose(f);
	return ch == 'Y' ? 1 : ch == 'N' ? 0 : -1;
}

/* Charge a second of engine time to @q of @fd, on an idle engine. */
static void inv_handicap(int fd, uint32_t q)
{
	struct accel_job j = { .queue = q };
	struct accel_job_event ev;
	struct accel_job_fetch f = { .events = (uintptr_t)&ev, .max = 1 };
	struct accel_job_complete done = { .device_ns = INV_PRODUCER_NS };

	inv_submit(fd, &j, 1);
	while (!f.count)
		must(!ioctl(fd, ACCEL_IOCTL_JOB_FETCH, &f), "JOB_FETCH");
	done.id = ev.id;
	must(!ioctl(fd, ACCEL_IOCTL_JOB_COMPLETE, &done), "JOB_COMPLETE");
}

int bench_inversion(const struct opts *o)
{
	int fd = bench_open_dev("inversion"), pfd = bench_open_dev("inversion"), first = 1;
	int n = 1000, inherit = inv_inheritance(), ahead[2] = { 0, 0 };
	double *direct = calloc(o->rounds, sizeof(double));
	double *dep = calloc(o->rounds, sizeof(double));
	double *direct50 = calloc(o->rounds, sizeof(double));
	double *dep50 = calloc(o->rounds, sizeof(double));
	struct accel_syncobj_create sc = { 0 };
	struct accel_syncobj_handle_fd ex = { 0 }, im = { 0 };
	struct inv_setup s = { .fd = { fd, pfd } };

	if (fd < 0 || pfd < 0)
		return 1;
	s.hq = bench_queue(fd, "inv", ACCEL_PRIORITY_HIGH, 1, 1);
	s.lq = bench_queue(fd, "inv", ACCEL_PRIORITY_LOW, 1, 0);
	s.pq = bench_queue(pfd, "inv", ACCEL_PRIORITY_LOW, 1, 0);
	must(!ioctl(fd, ACCEL_IOCTL_SYNCOBJ_CREATE, &sc), "SYNCOBJ_CREATE");
	ex.handle = sc.handle;
	must(!ioctl(fd, ACCEL_IOCTL_SYNCOBJ_EXPORT, &ex), "SYNCOBJ_EXPORT");
	im.fd = ex.fd;
	must(!ioctl(pfd, ACCEL_IOCTL_SYNCOBJ_IMPORT, &im), "SYNCOBJ_IMPORT");
	close(ex.fd);
	s.x[0] = sc.handle;
	s.x[1] = im.handle;
	inv_handicap(pfd, s.pq);
	for (int i = 0; i < 10; i++) /* warm up */
		inv_sample(&s, i & 1, &ahead[i & 1]);
	ahead[0] = ahead[1] = 0;
	for (int r = 0; r < o->rounds; r++) {
		double p99[2], p50[2];

		run_inversion(&s, n, ahead, p99, p50);
		direct[r] = p99[0];
		dep[r] = p99[1];
		direct50[r] = p50[0];
		dep50[r] = p50[1];
	}
	while (s.flood) {
		double t = 1;
		int a = 0;

		inv_complete(&s, &t, &a);
	}
	double md = median(direct, o->rounds), mp = median(dep, o->rounds);
	double md50 = median(direct50, o->rounds), mp50 = median(dep50, o->rounds);

	if (o->json)
		printf("{\"bench\": \"inversion\", \"flood\": %d, \"priority_inheritance\": %d, "
		       "\"high_p99_direct_ns\": %.1f, \"high_p99_behind_producer_ns\": %.1f, "
		       "\"high_p50_direct_ns\": %.1f, \"high_p50_behind_producer_ns\": %.1f, "
		       "\"flood_jobs_ahead_max\": [%d, %d], \"metrics\": {",
		       INV_FLOOD, inherit, md, mp, md50, mp50, ahead[0], ahead[1]);
	else
		fprintf(notes, "# inversion: HIGH release p99 (p50) under a LOW flood of %d: "
			"no dependency %.1f (%.1f) ns, behind a LOW producer of another "
			"file %.1f (%.1f) ns; at most %d and %d flood jobs released "
			"before it (priority_inheritance %s)\n", INV_FLOOD, md, md50,
			mp, mp50, ahead[0], ahead[1],
			inherit > 0 ? "on" : inherit == 0 ? "off" : "unknown");
	metric(o, "sched.inversion_p99_vs_direct", mp / md, &first);
	metric(o, "sched.inversion_p50_vs_direct", mp50 / md50, &first);
	if (o->json)
		printf("}}\n");
	free(direct);
	free(dep);
	free(direct50);
	free(dep50);
	close(pfd);
	close(fd);
	return 0;
}

/*
 * Two normal queues with weights 1:3 flood a one-credit engine; the
 * executor completes each job reporting its device time (jobs of the
 * light queue take longer, so shares are of time, not of counts).
 */
int bench_fair(const struct opts *o)
{
	int fd = bench_open_dev("fair"), first = 1, jobs = o->ops / 20 > 200 ? o->ops / 20 : 200;
	uint64_t busy[2] = { 0, 0 };
	uint32_t q[2];

	if (fd < 0)
		return 1;
	q[0] = bench_queue(fd, "fair", ACCEL_PRIORITY_NORMAL, 1, 1);
	q[1] = bench_queue(fd, "fair", ACCEL_PRIORITY_NORMAL, 3, 0);
	for (int k = 0; k < 2; k++)
		for (int i = 0; i < 16; i++) {
			struct accel_job j = { .queue = q[k], .user_data = k };
			struct accel_job_submit s = { .jobs = (uintptr_t)&j, .count = 1 };

			must(!ioctl(fd, ACCEL_IOCTL_JOB_SUBMIT, &s), "JOB_SUBMIT");
		}
	for (int n = 0; n < jobs;) {
		struct accel_job_event ev[8];
		struct accel_job_fetch f = { .events = (uintptr_t)ev, .max = 8 };
		struct pollfd p = { .fd = fd, .events = POLLIN };

		poll(&p, 1, 100);
		must(!ioctl(fd, ACCEL_IOCTL_JOB_FETCH, &f), "JOB_FETCH");
		for (uint32_t i = 0; i < f.count; i++, n++) {
			int k = (int)ev[i].user_data;
			uint64_t ns = k ? 40000 : 70000;
			struct accel_job_complete done = { .id = ev[i].id, .device_ns = ns };
			struct accel_job j = { .queue = q[k], .user_data = k };
			struct accel_job_submit s = { .jobs = (uintptr_t)&j, .count = 1 };

			must(!ioctl(fd, ACCEL_IOCTL_JOB_COMPLETE, &done), "JOB_COMPLETE");
			busy[k] += ns;
			must(!ioctl(fd, ACCEL_IOCTL_JOB_SUBMIT, &s), "JOB_SUBMIT");
		}
	}
	double share = (double)busy[1] / (busy[0] + busy[1]);
	double err = fabs(share - 0.75) / 0.75;

	if (o->json)
		printf("{\"bench\": \"fair\", \"weights\": [1, 3], \"share_of_weight_3\": %.4f, "
		       "\"jobs\": %d, \"metrics\": {", share, jobs);
	else
		fprintf(notes, "# fair: weights 1:3, measured share of the weight-3 queue %.4f "
		       "(ideal 0.75) over %d jobs\n", share, jobs);
	metric(o, "sched.fair_share_error", err, &first);
	if (o->json)
		printf("}}\n");
	close(fd);
	return 0;
}

/*
 * Deadlines: a one-credit engine shared by two tenants (two files), each
 * keeping DL_BULK jobs of DL_T runnable (the flood); the second tenant also
 * submits a frame every DL_PERIOD (from the last one's submission) on a
 * queue of its own, needed DL_WITHIN after its submission. Feasible: a
 * frame needs at most the job in flight and itself, 2 * DL_T < DL_WITHIN.
 * This thread is the executor: a released
 * job "runs" for DL_T of wall time, busy-waiting, and is completed with
 * that device time, which every job also predicts. A frame misses when it
 * is completed after its deadline. The same load runs with the frames'
 * deadlines given to the module and without (fair share alone). A miss is
 * the policy's when a flood job was released between the frame's
 * submission and its release (counted apart, in a note); else it is this
 * thread's or the machine's (a wake-up or a busy-wait late by the slack,
 * DL_WITHIN - 2 * DL_T).
 */
#define DL_T 2000000.0
#define DL_PERIOD (4 * DL_T)
#define DL_WITHIN (5 * DL_T / 2)
#define DL_BULK 8
#define DL_FRAME 0x46000000ull

static void dl_submit(int fd, uint32_t q, uint64_t tag, uint64_t deadline)
{
	struct accel_point p = { .flags = ACCEL_POINT_F_DEADLINE, .point = deadline };
	struct accel_job j = { .queue = q, .user_data = tag,
			       .predicted_us = (uint32_t)(DL_T / 1000),
			       .signals = (uintptr_t)&p, .nsignals = !!deadline };
	struct accel_job_submit s = { .jobs = (uintptr_t)&j, .count = 1 };

	must(!ioctl(fd, ACCEL_IOCTL_JOB_SUBMIT, &s), "JOB_SUBMIT");
}

/*
 * Frames missed of @frames, with the deadlines given (@give) or not;
 * *@policy counts the misses that had a flood job released before them.
 */
static int run_deadline(int frames, int give, long *ahead, int *policy)
{
	int fd[2] = { bench_open_dev("deadline"), bench_open_dev("deadline") };
	uint32_t q[3]; /* tenant 0's bulk, tenant 1's bulk, tenant 1's frames */
	double *due = calloc(frames, sizeof(double)), next, end = 0;
	int sent = 0, done = 0, missed = 0, run_fd = -1, waiting = 0;
	int *passed = calloc(frames, sizeof(int)); /* flood jobs released before */
	struct accel_job_event run = { 0 };
	char path[128];
	FILE *f;

	if (fd[0] < 0 || fd[1] < 0 || !due || !passed)
		exit(1);
	q[0] = bench_queue(fd[0], "deadline", ACCEL_PRIORITY_NORMAL, 1, 1);
	q[1] = bench_queue(fd[1], "deadline", ACCEL_PRIORITY_NORMAL, 1, 0);
	q[2] = bench_queue(fd[1], "deadline", ACCEL_PRIORITY_NORMAL, 1, 0);
	for (int i = 0; i < DL_BULK; i++) {
		dl_submit(fd[0], q[0], 0, 0);
		dl_submit(fd[1], q[1], 1, 0);
	}
	/*
	 * The first frame a period in, once the flood runs: at once, it would
	 * come just after the flood's first job was released on the idle
	 * engine, and behind this process's first fetch and COMPLETE.
	 */
	next = now_ns() + DL_PERIOD;
	while (done < frames) {
		double t = now_ns();

		if (sent < frames && t >= next) {
			due[sent] = t + DL_WITHIN;
			dl_submit(fd[1], q[2], DL_FRAME | sent,
				  give ? (uint64_t)due[sent] : 0);
			sent++;
			waiting++;
			/*
			 * From this submission, not from the schedule: after a
			 * stall of this thread, frames due at once would come
			 * back to back, and only the first could be feasible.
			 */
			next = t + DL_PERIOD;
		}
		if (run_fd >= 0 && t >= end) {
			struct accel_job_complete c = { .id = run.id,
							.device_ns = (uint64_t)DL_T };

			must(!ioctl(run_fd, ACCEL_IOCTL_JOB_COMPLETE, &c), "JOB_COMPLETE");
			if (run.user_data & DL_FRAME) {
				uint64_t k = run.user_data & ~DL_FRAME;

				done++;
				missed += t > due[k];
				*policy += t > due[k] && passed[k];
			} else {
				dl_submit(run_fd, q[run.user_data], run.user_data, 0);
			}
			run_fd = -1;
		}
		for (int i = 0; i < 2 && run_fd < 0; i++) {
			struct accel_job_fetch fe = { .events = (uintptr_t)&run, .max = 1 };

			must(!ioctl(fd[i], ACCEL_IOCTL_JOB_FETCH, &fe), "JOB_FETCH");
			if (fe.count) {
				run_fd = fd[i];
				end = now_ns() + DL_T;
				if (run.user_data & DL_FRAME)
					waiting--;
				else /* ahead of each frame submitted and not released */
					for (int k = sent - waiting; k < sent; k++)
						passed[k]++;
			}
		}
	}
	snprintf(path, sizeof(path),
		 "/sys/kernel/accelsched/engines/bench-deadline-%d/released_ahead",
		 getpid());
	f = fopen(path, "r");
	if (f) {
		long n = 0;

		if (fscanf(f, "%ld", &n) == 1)
			*ahead += n;
		fclose(f);
	}
	close(fd[0]);
	close(fd[1]);
	free(due);
	free(passed);
	return missed;
}

int bench_deadline(const struct opts *o)
{
	int frames = o->ops / 500 > 100 ? (int)(o->ops / 500) : 100, first = 1;
	int missed[2] = { 0, 0 }, policy[2] = { 0, 0 };
	long ahead[2] = { 0, 0 };

	for (int r = 0; r < o->rounds; r++) {
		missed[1] += run_deadline(frames, 1, &ahead[1], &policy[1]);
		missed[0] += run_deadline(frames, 0, &ahead[0], &policy[0]);
	}
	double with = (double)missed[1] / (frames * o->rounds);
	double without = (double)missed[0] / (frames * o->rounds);

	if (o->json)
		printf("{\"bench\": \"deadline\", \"frames\": %d, \"rounds\": %d, "
		       "\"missed_with\": %d, \"missed_without\": %d, "
		       "\"released_ahead\": [%ld, %ld], \"missed_behind_a_release\": [%d, %d], "
		       "\"metrics\": {",
		       frames, o->rounds, missed[1], missed[0], ahead[1], ahead[0],
		       policy[1], policy[0]);
	else
		fprintf(notes, "# deadline: %d frames of %.1f ms every %.1f ms, due %.1f ms "
			"after submission, under two tenants' floods of %.1f ms jobs on a "
			"one-credit engine: %d missed with their deadlines given (%ld "
			"releases ahead of fair share; %d of the misses had a flood job "
			"released after their submission, the rest were late on this "
			"thread or machine), %d without\n",
			frames * o->rounds, DL_T / 1e6, DL_PERIOD / 1e6, DL_WITHIN / 1e6,
			DL_T / 1e6, missed[1], ahead[1], policy[1], missed[0]);
	metric(o, "sched.deadline_miss_rate", with, &first);
	metric(o, "sched.deadline_miss_rate_without", without, &first);
	if (o->json)
		printf("}}\n");
	return 0;
}
