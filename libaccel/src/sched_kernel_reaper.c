// SPDX-License-Identifier: MIT
/*
 * The kernel scheduler's reaper: one thread per scheduler (per open device
 * file), started with its first queue and joined by kernel_destroy(). It
 * learns what the module decided (see "Release", "Events", "Failures" and
 * TIMEDOUT under "Jobs" in sched_kernel_job.c): with io_uring, the SUBMIT
 * CQEs, which the ring announces on an eventfd, and the device's events
 * (reaper_uring()); without, the device's events and an eventfd that the
 * waits of ioctl jobs wake (reaper_ioctl()). Either way it sleeps in
 * poll(2) on the device fd and its eventfd. It hands each released job to
 * its queue's executor in release order, and each job the module will
 * never release as not run. With events, executors fetch too (their
 * COMPLETEs'), and the reaper takes what is left.
 *
 * Locking: fetch_lock around a fetch and the handing on of what it took;
 * jobs_lock for the jobs in flight, then sq_lock for the ring's submission
 * side (stopping it); the reaper alone reads the CQ, and
 * alone owns each queue's next_seq and held releases.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <accelsched.h>

#include "error.h"
#include "sched.h"
#include "sched_kernel.h"
#include "uring.h"

/* user_data of the ring's own request (records are 16-byte aligned). */
#define TAG_STOP 1
/* The ioctl reaper's look at its jobs when nothing woke it, in ms. */
#define SCAN_PERIOD_MS 1000

/* @r is released (@id with ACCEL_JOB_RES_PIPELINED): to its executor. */
void kernel_release(struct accel_sched_kernel *k, struct kernel_job *r, uint32_t id)
{
	pthread_mutex_lock(&k->jobs_lock);
	r->id = id & ACCEL_JOB_RES_ID_MASK;
	r->released = true;
	pthread_mutex_unlock(&k->jobs_lock);
	/* Pipelined: the executor orders it after its waits (executor.c). */
	atomic_store(&r->job->pipelined, (id & ACCEL_JOB_RES_PIPELINED) != 0);
	/* Released for its waits: what came before their signals, came first. */
	for (uint32_t i = 0; i < r->job->wait_count; i++)
		ksem_hb_acquire(r->job->waits[i].sem);
	accel_executor_push(r->job->executor, r->job);
}

/* @r will never be released: its executor completes it as not run. */
static void not_run(struct accel_sched_kernel *k, struct kernel_job *r,
		    int err, uint32_t wait)
{
	struct accel_sched_job *job = r->job;

	if (wait < job->wait_count) {
		kernel_resolve_failure(k, job->waits[wait].sem, err);
		atomic_store(&job->wait_index, wait);
		atomic_store(&job->wait_error, err);
	} else {
		kernel_refusal_message(k, r, err);
		atomic_store(&job->cancel_error, err);
	}
	accel_executor_push(job->executor, job);
}

/*
 * A release CQE, handed on in its queue's release order. CQEs of SUBMITs
 * answered from task work reach the ring in no set order (each is posted
 * by the thread that entered it); the module numbers them in @x1
 * (ACCEL_URING_SEQ_VALID), and one without a number takes the next (the
 * module answers at once only when all earlier releases are posted). A
 * release that comes early waits in its queue's @held list for the gap.
 * Without big CQEs (an older module) @x1 is 0: arrival order.
 */
static void release_in_order(struct accel_sched_kernel *k, struct kernel_job *r,
			     uint32_t res, uint64_t x1)
{
	struct kernel_queue *q = accel_executor_data(r->job->executor);
	struct kernel_job **p;

	r->seq = x1 & ACCEL_URING_SEQ_VALID ? (uint32_t)(x1 & ACCEL_URING_SEQ_MASK) :
					      q->next_seq;
	if (r->seq != q->next_seq) {
		r->res = res;
		for (p = &q->held; *p && (int32_t)((*p)->seq - r->seq) < 0; p = &(*p)->next)
			;
		r->next = *p;
		*p = r;
		return;
	}
	/*
	 * Take the run of releases off @q first: once the last of them is
	 * pushed, its job may complete and drop the last queue reference,
	 * which frees @q (and each pushed @r) under this thread.
	 */
	r->res = res;
	r->next = NULL;
	for (p = &r->next, q->next_seq++; q->held && q->held->seq == q->next_seq;
	     q->next_seq++, p = &(*p)->next) {
		*p = q->held;
		q->held = q->held->next;
		(*p)->next = NULL;
	}
	while (r) {
		struct kernel_job *next = r->next;

		kernel_release(k, r, r->res);
		r = next;
	}
}

static void on_submit_cqe(struct accel_sched_kernel *k, struct kernel_job *r,
			  int res, uint64_t x1)
{
	/* Pairs with kernel_enter_submit(): the record is the submitter's. */
	(void)atomic_load_explicit(&r->published, memory_order_acquire);
	if (res >= 0) {
		release_in_order(k, r, (uint32_t)res, x1);
		return;
	}
	if ((res == -EINVAL || res == -ETIME) && !r->retried) {
		r->retried = true;
		if ((res == -EINVAL ? kernel_drop_passed_signals(r) :
				      kernel_drop_deadline(r)) &&
		    kernel_enter_submit(k, r) == 0)
			return;
	}
	not_run(k, r, res, kernel_failed_wait(r->job, res, NULL, NULL));
}

static void on_timedout(struct accel_sched_kernel *k, uint32_t id)
{
	struct kernel_job *r;

	pthread_mutex_lock(&k->jobs_lock);
	for_each_job(r, k) {
		if (!r->released || r->id != id)
			continue;
		r->timedout = true;
		/* Not started yet: it is dropped. */
		atomic_store(&r->job->cancel_error, -ETIMEDOUT);
		break;
	}
	pthread_mutex_unlock(&k->jobs_lock);
}

/*
 * Under fetch_lock: hand on the events one fetch took, in their order
 * (the module's), before another fetch may take later ones.
 */
void kernel_handle_events_locked(struct accel_sched_kernel *k,
				 const struct accel_job_event *ev, uint32_t count)
{
	for (uint32_t i = 0; i < count; i++) {
		struct kernel_job *r = (struct kernel_job *)(uintptr_t)ev[i].user_data;

		switch (ev[i].type) {
		case ACCEL_JOB_EVENT_RELEASED:
			/* As on_submit_cqe(): the record is the submitter's. */
			(void)atomic_load_explicit(&r->published, memory_order_acquire);
			kernel_release(k, r, ev[i].id | (ev[i].flags & ACCEL_JOB_RES_PIPELINED));
			break;
		case ACCEL_JOB_EVENT_FAILED: /* ABI 1.8: never to be released */
			(void)atomic_load_explicit(&r->published, memory_order_acquire);
			not_run(k, r, ev[i].status,
				kernel_failed_wait(r->job, ev[i].status, NULL, NULL));
			break;
		case ACCEL_JOB_EVENT_TIMEDOUT:
			on_timedout(k, ev[i].id);
			break;
		}
	}
}

static void fetch_events(struct accel_sched_kernel *k)
{
	struct accel_job_event ev[KERNEL_FETCH_MAX];
	struct accel_job_fetch f;

	pthread_mutex_lock(&k->fetch_lock);
	do {
		f = (struct accel_job_fetch){ .events = (uint64_t)(uintptr_t)ev,
					      .max = KERNEL_FETCH_MAX };
		if (kioctl(k->fd, ACCEL_IOCTL_JOB_FETCH, &f))
			break;
		kernel_handle_events_locked(k, ev, f.count);
	} while (f.count == KERNEL_FETCH_MAX);
	pthread_mutex_unlock(&k->fetch_lock);
}

/* ioctl jobs whose waits all settled with one failed: the module dropped them. */
static void scan_failed(struct accel_sched_kernel *k)
{
	struct kernel_job *failed = NULL, *r;
	int err = 0;

	pthread_mutex_lock(&k->jobs_lock);
	for_each_job(r, k) {
		bool settled;
		uint32_t i;

		if (!r->submitted || r->released || r->settled)
			continue;
		i = kernel_failed_wait(r->job, 0, &err, &settled);
		if (!settled || i >= r->job->wait_count)
			continue;
		r->settled = true;
		r->id = i;              /* never released: reuse as the wait index */
		atomic_store(&r->job->wait_error, err);
		r->next = failed;
		failed = r;
	}
	pthread_mutex_unlock(&k->jobs_lock);
	while (failed) {
		r = failed;
		failed = r->next;
		not_run(k, r, atomic_load(&r->job->wait_error), r->id);
	}
}

/* The CQEs the ring holds, in their order; false at the STOP's. */
static bool reap_cqes(struct accel_sched_kernel *k)
{
	struct io_uring_cqe *cqe;

	while (io_uring_peek_cqe(&k->ring, &cqe) == 0) {
		uint64_t ud = io_uring_cqe_get_data64(cqe);
		uint64_t x1 = k->ring.flags & IORING_SETUP_CQE32 ? cqe->big_cqe[0] : 0;
		int res = cqe->res;

		io_uring_cqe_seen(&k->ring, cqe);
		if (ud == TAG_STOP)
			return false;
		if (ud > TAG_STOP)
			on_submit_cqe(k, (struct kernel_job *)(uintptr_t)ud, res, x1);
	}
	return true;
}

/*
 * The reaper sleeps in poll(2) on the device fd (its events) and on an
 * eventfd the ring signals when it posts CQEs (io_uring_register_eventfd:
 * SUBMIT answers and refusals, and the STOP), never in io_uring_enter:
 * a thread waiting for CQEs there makes every submitter's io_uring_enter
 * wake its wait queue on the way out (even when it posted no CQE, as a
 * SUBMIT with events does), and a multishot POLL_ADD would post the
 * device's wakes as task work that takes the ring's lock against them.
 * The eventfd is read before the CQ is drained, so a CQE posted meanwhile
 * wakes the next poll. The CQEs go before the events, as they came on the
 * ring before: a release answered on the ring (ACCEL_KERNEL_EVENTS=0) is
 * handed on before its job's TIMEDOUT is looked for. reaper_ioctl() is a
 * loop of its own: it stops on @stop, looks at its jobs every
 * SCAN_PERIOD_MS, and fetches before it looks (a job released by an event
 * is not one to fail).
 */
static void *reaper_uring(void *arg)
{
	struct accel_sched_kernel *k = arg;
	struct pollfd p[2] = { { .fd = k->fd, .events = POLLIN },
			       { .fd = k->efd, .events = POLLIN } };
	uint64_t v;

	for (;;) {
		if (poll(p, 2, -1) < 0)
			continue;
		if (p[1].revents & POLLIN) {
			if (read(k->efd, &v, sizeof(v)) < 0 && errno != EAGAIN)
				usleep(1000);
			if (!reap_cqes(k))
				break;
		}
		if (p[0].revents & POLLIN)
			fetch_events(k);
	}
	return NULL;
}

static void *reaper_ioctl(void *arg)
{
	struct accel_sched_kernel *k = arg;
	struct pollfd p[2] = { { .fd = k->fd, .events = POLLIN },
			       { .fd = k->efd, .events = POLLIN } };
	uint64_t v;

	while (!atomic_load(&k->stop)) {
		int n = poll(p, 2, SCAN_PERIOD_MS);

		if (n < 0)
			continue;
		if (p[0].revents & POLLIN)
			fetch_events(k);
		if (n == 0 || (p[1].revents & POLLIN)) {
			if (read(k->efd, &v, sizeof(v)) < 0 && errno != EAGAIN)
				usleep(1000);
			if (!k->events) /* else failures are events */
				scan_failed(k);
		}
	}
	return NULL;
}

/* Under jobs_lock: start the reaper with the first queue. */
int kernel_reaper_start_locked(struct accel_sched_kernel *k)
{
	int err;

	if (k->reaping)
		return 0;
	if (k->efd < 0) {
		k->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (k->efd < 0)
			return accel_fail(errno,
				"accel_queue_create: eventfd() for the kernel scheduler's reaper failed: %s",
				accel_errno_name(errno));
		err = k->uring ? io_uring_register_eventfd(&k->ring, k->efd) : 0;
		if (err) {
			close(k->efd);
			k->efd = -1;
			return accel_fail(-err,
				"accel_queue_create: io_uring_register_eventfd() for the kernel scheduler's reaper failed: %s",
				accel_errno_name(-err));
		}
	}
	err = pthread_create(&k->reaper, NULL, k->uring ? reaper_uring : reaper_ioctl, k);
	if (err)
		return accel_fail(EAGAIN,
			"accel_queue_create: cannot start the kernel scheduler's reaper thread: %s (check RLIMIT_NPROC and the memory limit)",
			accel_errno_name(err));
	pthread_setname_np(k->reaper, "accel-reap");
	k->reaping = true;
	return 0;
}

void kernel_reaper_stop(struct accel_sched_kernel *k)
{
	uint64_t one = 1;

	if (!k->reaping)
		return;
	atomic_store(&k->stop, true);
	if (k->uring) {
		struct io_uring_sqe *sqe;

		pthread_mutex_lock(&k->sq_lock);
		while (!(sqe = kernel_get_sqe_locked(k)))
			usleep(1000);
		io_uring_prep_nop(sqe);
		io_uring_sqe_set_data64(sqe, TAG_STOP);
		kernel_ring_flush_locked(k);
		pthread_mutex_unlock(&k->sq_lock);
	} else if (write(k->efd, &one, sizeof(one)) < 0) {
		/* a full counter wakes it as well */
	}
	pthread_join(k->reaper, NULL);
	k->reaping = false;
}
