// SPDX-License-Identifier: MIT
/*
 * The kernel scheduler's jobs: their records (struct kernel_job) and the
 * list of jobs in flight, the failure messages, submission (the ring's
 * submission side included), completion on the executor thread, and the
 * queues with their executors. The reaper that answers submissions is in
 * sched_kernel_reaper.c.
 *
 * Jobs: the module's job scheduler (Documentation/sched.rst).
 *
 * Queues. Each accel queue is a kernel queue (ACCEL_IOCTL_QUEUE_CREATE) on
 * the engine named after its device ("cpu" for cpu://, "vulkan:0" for
 * vulkan://0), with the priority class and weight of its options
 * (accel_queue_create(): normal, weight 1). A queue that makes an engine
 * asks for KERNEL_ENGINE_CREDITS credits, which the module grants only to
 * an administrator (CAP_SYS_ADMIN, ABI 1.4): otherwise, and for an engine
 * that exists, the limit is the module's default or the one the
 * administrator wrote in sysfs. Modules before ABI 1.4 refused a second
 * limit for an existing engine with -EEXIST; the queue then takes the
 * engine's.
 *
 * Submission. The semaphores are syncobjs already, so a submission's waits
 * and signals are their handles and values in one struct accel_job whose
 * user_data is the job's record (struct kernel_job). With io_uring it is
 * one ACCEL_URING_CMD_JOB_SUBMIT SQE (filled by hand: liburing 2.3 has no
 * helper). Submitters that come while another thread is in
 * io_uring_enter() leave their SQE to that thread (flat combining), so
 * concurrent submissions share one system call; each returns once its SQE
 * went in, that is once its signal points are promised. Without io_uring
 * it is one ACCEL_IOCTL_JOB_SUBMIT.
 *
 * Release. One reaper thread per scheduler (per open device file) learns
 * what the module decided: the SUBMIT's CQE (res = the released job's id,
 * or the error it failed or was refused with) and the device's events,
 * read with ACCEL_IOCTL_JOB_FETCH when the fd polls readable (poll(2), with
 * the eventfd the ring signals for its CQEs): RELEASED for jobs submitted
 * by ioctl, TIMEDOUT for any. It hands each released job to its queue's
 * executor thread (executor.c) in release order (SUBMIT CQEs come in no
 * set order; release_in_order() puts them back by the numbers the module
 * gives them), which runs the work on the device and
 * sends ACCEL_IOCTL_JOB_COMPLETE with the status and the time the work
 * took. COMPLETE is an ioctl so that it has happened before the job's
 * references go (the last one may destroy the kernel queue).
 *
 * Events (module ABI 1.8, unless ACCEL_KERNEL_EVENTS=0). Each job asks
 * for its outcomes as events (ACCEL_JOB_F_EVENTS): its SUBMIT is answered
 * at once and leaves no CQE (IOSQE_CQE_SKIP_SUCCESS; a refusal still
 * posts one), so the submitting thread is never on a release's path, and
 * a release or a failure before release (FAILED) is an event. The
 * executor completes with ACCEL_IOCTL_JOB_COMPLETE_FETCH, which returns
 * the releases its COMPLETE caused (the next job of a stream, mostly) and
 * hands them on from its own thread, as the embedded scheduler does; the
 * module wakes the reaper only for the rest. Fetches are serialised by
 * fetch_lock from the ioctl until the jobs are handed on, so a queue's
 * releases reach it in order; an executor that finds the lock taken
 * completes with a plain COMPLETE. A stream of small jobs then costs about
 * half as much per job (Documentation/libaccel.rst).
 *
 * Answers (module ABI 1.9, ACCEL_KERNEL_ANSWER=1, with events and no polled
 * ring). A job alone on its queue is submitted by ioctl with
 * ACCEL_JOB_F_ANSWER while the submitting thread holds fetch_lock: a
 * release the module decides during the call comes back in the ioctl's
 * answer instead of as an event (only while no event of the file waits),
 * and that thread hands the job to its executor itself, so a job waited
 * for at once wakes one thread, not two. Holding fetch_lock keeps the
 * queue's order: every release fetched before was handed on before, and
 * none fetched after can be handed on first.
 *
 * Failures are the module's: a job whose wait failed is never released and
 * its signals fail there with that error. Its FAILED event says so, or
 * without events its SUBMIT's CQE; an ioctl submission without events gets
 * no word of it, so each of its waits has a one-shot
 * ACCEL_IOCTL_SYNCOBJ_EVENTFD on the reaper's eventfd, and a wake (or one
 * second passing) makes the reaper look for ioctl jobs whose waits are all
 * settled with one failed. Either way the job goes to its executor
 * as not run, which writes the message and drops the submission's
 * references. The module fails points before the library can say why, so
 * a host wait that meets a failed semaphore without a message asks this
 * process's jobs in flight which one promised it and writes that job's
 * explanation first (resolve_failure()); messages thus read as in the
 * embedded scheduler.
 *
 * A submission the module refuses is failed by the library itself (its
 * points were never promised). A refusal with -EINVAL because a signal
 * point is not above its semaphore's value is retried once without those
 * points, which fail with -EINVAL at completion as in the embedded
 * scheduler; any other refusal fails every signal with its error. A
 * completing job's signal that a host signal passed meanwhile fails with
 * -EINVAL as well (the module would skip it; errors are never dropped).
 * TIMEDOUT: the module failed the job's points with -ETIMEDOUT already; a
 * job not started yet is dropped, a running one completes late (refused).
 *
 * Lifetime: a job holds its queue, the queue its device, the device the
 * scheduler; so a kernel queue is destroyed only once its jobs are done,
 * and the reaper, joined by kernel_destroy(), outlives every job. A
 * process that dies leaves the rest to the module (-EOWNERDEAD).
 *
 * Locking: jobs_lock (recursive) protects the
 * list of jobs in flight and their released/id/timedout/settled fields;
 * sq_lock the ring's submission side (the reaper alone reads the CQ).
 * Order: jobs_lock, then sq_lock.
 */
#include <ctype.h>
#include <sched.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <accelsched.h>

#include "error.h"
#include "pool.h"
#include "sched.h"
#include "sched_kernel.h"
#include "uring.h"

_Static_assert(ACCEL_SCHED_PRIO_HIGH == ACCEL_PRIORITY_HIGH &&
	       ACCEL_SCHED_PRIO_NORMAL == ACCEL_PRIORITY_NORMAL &&
	       ACCEL_SCHED_PRIO_LOW == ACCEL_PRIORITY_LOW &&
	       ACCEL_QUEUE_WEIGHT_MIN == ACCEL_WEIGHT_MIN &&
	       ACCEL_QUEUE_WEIGHT_MAX == ACCEL_WEIGHT_MAX,
	       "the library's priority classes and weights are the module's");

/* Credits of an engine this library creates: released jobs in flight. */
#define KERNEL_ENGINE_CREDITS 4

static struct accel_sched_kernel *to_kernel(accel_scheduler_t *s)
{
	return (struct accel_sched_kernel *)s;
}

static void link_locked(struct accel_sched_kernel *k, struct kernel_job *r)
{
	r->link.next = &k->jobs;
	r->link.prev = k->jobs.prev;
	k->jobs.prev->next = &r->link;
	k->jobs.prev = &r->link;
}

static void unlink_locked(struct kernel_job *r)
{
	r->link.prev->next = r->link.next;
	r->link.next->prev = r->link.prev;
	r->link.prev = r->link.next = NULL;
}

static void jobs_link(struct accel_sched_kernel *k, struct kernel_job *r)
{
	pthread_mutex_lock(&k->jobs_lock);
	link_locked(k, r);
	pthread_mutex_unlock(&k->jobs_lock);
}

static void jobs_unlink(struct accel_sched_kernel *k, struct kernel_job *r)
{
	pthread_mutex_lock(&k->jobs_lock);
	unlink_locked(r);
	pthread_mutex_unlock(&k->jobs_lock);
}

/* ---- failure messages ------------------------------------------------- */

/*
 * The first wait of @job whose syncobj failed (with @want, or with any
 * error when @want is 0), or UINT32_MAX; *@error gets its error and
 * *@settled whether every wait is reached or failed.
 */
uint32_t kernel_failed_wait(struct accel_sched_job *job, int want,
			    int *error, bool *settled)
{
	uint32_t found = UINT32_MAX;
	uint64_t v;
	int e;

	if (settled)
		*settled = true;
	for (uint32_t i = 0; i < job->wait_count; i++) {
		kernel_sem_query(job->waits[i].sem, &v, &e);
		if (e && found == UINT32_MAX && (!want || e == want)) {
			found = i;
			if (error)
				*error = e;
		} else if (!e && v < job->waits[i].value && settled) {
			*settled = false;
		}
	}
	return found;
}

/* Writes @msg as @sem's failure message, unless it failed for another reason. */
static void note_failure(accel_semaphore_t *sem, int error, const char *msg)
{
	uint64_t v;
	int e;

	kernel_sem_query(sem, &v, &e);
	if (!e || e == error)
		accel_semaphore_set_failure(sem, msg);
}

/*
 * @job was not run, or failed, because its wait @i failed with @error: its
 * signals' messages are its sentence and that wait's message, however
 * late that one is written.
 */
static void note_wait_failure(struct accel_sched_job *job, uint32_t i,
			      int error)
{
	char hop[ACCEL_FAILURE_MAX];
	uint64_t v;
	int e;

	accel_sched_wait_failed_hop(job, i, error, hop, sizeof(hop));
	for (uint32_t j = 0; j < job->signal_count; j++) {
		accel_semaphore_t *sem = job->signals[j].sem;

		kernel_sem_query(sem, &v, &e);
		if (!e || e == error)
			accel_semaphore_set_failure_cause(sem, hop, job->waits[i].sem);
	}
}

/* Notes @msg, then fails @sem with @error (the first failure wins). */
static void fail_signal(accel_semaphore_t *sem, int error, const char *msg)
{
	struct accel_syncobj_fail args = { .handle = to_ksem(sem)->handle,
					   .error = error };

	note_failure(sem, error, msg);
	ksem_hb_release(sem);
	kioctl(to_ksem(sem)->fd, ACCEL_IOCTL_SYNCOBJ_FAIL, &args);
}

static bool job_signals(const struct accel_sched_job *job,
			const accel_semaphore_t *sem)
{
	for (uint32_t i = 0; i < job->signal_count; i++)
		if (job->signals[i].sem == sem)
			return true;
	return false;
}

static void timeout_message(const struct accel_sched_job *job, char *msg,
			    size_t len)
{
	accel_strfmt(msg, len,
		"%s timed out: the kernel scheduler failed it with ETIMEDOUT because it did not complete within its job timeout (the accelsched module parameter job_timeout_ms)",
		job->label);
}

/*
 * Why @r's points failed with @error, as the embedded scheduler says it,
 * when no wait of its failed: its signals get the message. Otherwise its
 * signals name the failed wait as their cause, which is returned.
 */
static accel_semaphore_t *describe_job(struct kernel_job *r, int error)
{
	struct accel_sched_job *job = r->job;
	uint32_t i = kernel_failed_wait(job, error, NULL, NULL);
	char msg[ACCEL_FAILURE_MAX];

	if (i < job->wait_count) {
		note_wait_failure(job, i, error);
		return job->waits[i].sem;
	}
	if (error == -ETIMEDOUT && r->released)
		timeout_message(job, msg, sizeof(msg));
	else if (r->why[0])
		accel_strfmt(msg, sizeof(msg), "%s", r->why);
	else
		accel_strfmt(msg, sizeof(msg), "%s failed in the kernel scheduler with %s",
			     job->label, accel_errno_name(-error));
	for (uint32_t j = 0; j < job->signal_count; j++)
		note_failure(job->signals[j].sem, error, msg);
	return NULL;
}

/*
 * kernel_resolve_failure() - give @sem, failed with @error by the module, the
 * message of the job of this process that promised it, if it has none;
 * and so on down the chain of jobs not run because the one before failed,
 * to the first failure. Each link names its cause, so the order in which
 * the jobs of a chain are resolved does not matter (semaphore.c); the walk
 * ends at a semaphore with a message, or after as many steps as there are
 * jobs in flight (a job may wait on what it signals).
 */
void kernel_resolve_failure(struct accel_sched_kernel *k, accel_semaphore_t *sem,
			    int error)
{
	struct kernel_job *r;
	size_t steps = 0, jobs = 0;

	pthread_mutex_lock(&k->jobs_lock);
	for_each_job(r, k)
		jobs++;
	while (sem && steps++ <= jobs && !accel_semaphore_failure_known(sem)) {
		accel_semaphore_t *next = NULL;

		for_each_job(r, k) {
			if (job_signals(r->job, sem)) {
				next = describe_job(r, error);
				break;
			}
		}
		sem = next;
	}
	pthread_mutex_unlock(&k->jobs_lock);
}

/* ---- submission ------------------------------------------------------- */

static struct kernel_job *kernel_job_new(struct accel_sched_kernel *k,
					 struct accel_sched_job *job,
					 const struct kernel_queue *q)
{
	uint32_t nw = job->wait_count, ns = job->signal_count;
	struct kernel_job *r = accel_pool_alloc(q->pool, sizeof(*r) +
						(nw + ns + 1) * sizeof(r->pts[0]));

	if (!r)
		return NULL;
	/* Not the message: written before it is read, and most never are. */
	memset(r, 0, offsetof(struct kernel_job, why));
	r->why[0] = '\0';
	for (uint32_t i = 0; i < nw + ns; i++) {
		const struct accel_sched_point *p =
			i < nw ? &job->waits[i] : &job->signals[i - nw];

		r->pts[i].handle = to_ksem(p->sem)->handle;
		r->pts[i].flags = 0;
		r->pts[i].point = p->value;
	}
	r->job = job;
	/*
	 * The cost model's prediction, which the module charges at release
	 * (ABI 1.6); an older module requires the field to be zero. Rounded
	 * up: a job predicted at all is charged at least a microsecond.
	 */
	if (k->info.features & ACCEL_FEATURE_JOB_PREDICTION && job->predicted_ns) {
		uint64_t us = job->predicted_ns / 1000 + (job->predicted_ns % 1000 != 0);

		r->kj.predicted_us = us > ACCEL_JOB_PREDICTION_MAX_US ?
				     ACCEL_JOB_PREDICTION_MAX_US : (uint32_t)us;
	}
	r->kj.user_data = (uint64_t)(uintptr_t)r;
	r->kj.waits = (uint64_t)(uintptr_t)r->pts;
	r->kj.signals = (uint64_t)(uintptr_t)(r->pts + nw);
	r->kj.nwaits = nw;
	r->kj.nsignals = ns;
	r->kj.queue = q->handle;
	r->kj.flags = k->events ? ACCEL_JOB_F_EVENTS : 0;
	/*
	 * The deadline rides last among the signals (ABI 1.7); a module
	 * without deadlines refuses the entry, so it gets the job without.
	 */
	if (job->deadline_ns && k->info.features & ACCEL_FEATURE_JOB_DEADLINE) {
		r->pts[nw + ns] = (struct accel_point){
			.flags = ACCEL_POINT_F_DEADLINE,
			.point = (uint64_t)job->deadline_ns,
		};
		r->kj.nsignals++;
		r->has_deadline = true;
	}
	return r;
}

/*
 * Drops from @r's kernel signals the points their semaphore has passed
 * already (the module refuses them; they fail with -EINVAL at completion).
 * True if it dropped any. Only before the first retry: the kernel's list
 * then still matches job->signals.
 */
bool kernel_drop_passed_signals(struct kernel_job *r)
{
	struct accel_point *sig = r->pts + r->job->wait_count;
	uint32_t n = 0;
	uint64_t v;
	int e;

	for (uint32_t i = 0; i < r->job->signal_count; i++) {
		kernel_sem_query(r->job->signals[i].sem, &v, &e);
		if (!e && v >= sig[i].point)
			continue;
		sig[n++] = sig[i];
	}
	if (n == r->job->signal_count)
		return false;
	if (r->has_deadline)
		sig[n++] = sig[r->job->signal_count];
	r->kj.nsignals = n;
	return true;
}

/*
 * Drops @r's deadline: it passed between the submitter's check and the
 * module's (-ETIME). A deadline is a hint; the job goes without it. True
 * if it had one. Only before the first retry, as above.
 */
bool kernel_drop_deadline(struct kernel_job *r)
{
	if (!r->has_deadline)
		return false;
	r->has_deadline = false;
	r->kj.nsignals--;
	return true;
}

static const char *refusal_hint(int err)
{
	switch (err) {
	case ENOSPC:
		return " (the module's per-file limit of jobs submitted and not completed, parameter max_jobs)";
	case ENOENT:
		return " (a semaphore or the queue is unknown to the module)";
	case ENOMEM:
		return " (the kernel is out of memory)";
	}
	return "";
}

void kernel_refusal_message(struct accel_sched_kernel *k, struct kernel_job *r, int err)
{
	char why[sizeof(r->why)];

	accel_strfmt(why, sizeof(why),
		     "%s was not run: the kernel scheduler refused it with %s%s",
		     r->job->label, accel_errno_name(-err), refusal_hint(-err));
	/*
	 * Under the lock: @r is still listed, and a waiter woken by the
	 * module's failure of its points reads it there (describe_job()).
	 */
	pthread_mutex_lock(&k->jobs_lock);
	memcpy(r->why, why, sizeof(why));
	pthread_mutex_unlock(&k->jobs_lock);
}

/*
 * The SUBMIT of @r: on a ring of 128-byte SQEs (ABI 1.5), a job with up to
 * ACCEL_URING_JOB_POINTS points travels whole in its SQE, so the module
 * reads nothing from this process; otherwise the SQE points at @r->kj.
 */
static void prep_submit(struct io_uring_sqe *sqe, const struct accel_sched_kernel *k,
			struct kernel_job *r)
{
	bool sqe128 = k->ring.flags & IORING_SETUP_SQE128;
	bool events = r->kj.flags & ACCEL_JOB_F_EVENTS;
	struct accel_uring_submit p = { .job = (uint64_t)(uintptr_t)&r->kj };
	uint32_t n = r->kj.nwaits + r->kj.nsignals;

	/* The registered file 0 where there is one: no file reference per SQE. */
	io_uring_prep_rw(IORING_OP_URING_CMD, sqe, k->fixed_fd ? 0 : k->fd, NULL, 0, 0);
	if (k->fixed_fd)
		sqe->flags |= IOSQE_FIXED_FILE;
	if (sqe128 && n <= ACCEL_URING_JOB_POINTS) {
		struct accel_uring_job j = {
			.user_data = r->kj.user_data, .timeout_ns = r->kj.timeout_ns,
			.queue = r->kj.queue, .nwaits = (uint8_t)r->kj.nwaits,
			.nsignals = (uint8_t)r->kj.nsignals,
			.flags = (r->kj.predicted_us ? ACCEL_URING_JOB_F_PREDICTED : 0) |
				 (events ? ACCEL_URING_JOB_F_EVENTS : 0),
			.predicted_us = r->kj.predicted_us,
		};

		/* The waits, then the signals: already so in @r->pts. */
		memcpy(j.points, r->pts, n * sizeof(r->pts[0]));
		sqe->cmd_op = ACCEL_URING_CMD_JOB_SUBMIT_INLINE;
		/* sqe->cmd is declared empty; a 128-byte SQE has 80 bytes there. */
		memcpy((void *)((uintptr_t)sqe + offsetof(struct io_uring_sqe, cmd)),
		       &j, sizeof(j));
	} else {
		sqe->cmd_op = ACCEL_URING_CMD_JOB_SUBMIT;
		memset(sqe->cmd, 0, 16);
		memcpy(sqe->cmd, &p, sizeof(p));
	}
	/*
	 * Answered at once, and released by an event: a CQE would come only
	 * for a refusal (the record may be freed by the time a success's
	 * CQE were read).
	 */
	if (events)
		sqe->flags |= IOSQE_CQE_SKIP_SUCCESS;
	io_uring_sqe_set_data64(sqe, (uint64_t)(uintptr_t)r);
}

/*
 * Under sq_lock: hand the SQ to the kernel. Transient failures (a full
 * completion queue, a signal) are retried; the reaper drains the CQ.
 */
int kernel_ring_flush_locked(struct accel_sched_kernel *k)
{
	int ret;

	for (;;) {
		ret = io_uring_submit(&k->ring);
		if (ret >= 0 || (ret != -EINTR && ret != -EAGAIN && ret != -EBUSY))
			return ret;
		if (ret != -EINTR)
			usleep(1000);
	}
}

struct io_uring_sqe *kernel_get_sqe_locked(struct accel_sched_kernel *k)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&k->ring);

	if (!sqe && kernel_ring_flush_locked(k) >= 0)
		sqe = io_uring_get_sqe(&k->ring);
	/* Polled: flushing frees no entry; the thread's taking them does. */
	if (!sqe && k->sqpoll_ms && io_uring_sqring_wait(&k->ring) >= 0)
		sqe = io_uring_get_sqe(&k->ring);
	return sqe;
}

/*
 * With a polled ring (ACCEL_URING_SQPOLL), a submission returns once its
 * SQE is in the ring, before the module has taken it and promised its
 * points. Semaphore operations of this process call this first, and so
 * does a COMPLETE, which frees a credit: it waits until the module has
 * taken every SQE in the ring when it was called, so that they see this
 * process's earlier submissions as without polling (a host signal after a
 * submission, a wait for submitted points, priority among the jobs
 * waiting for that credit). The
 * polling thread took them within microseconds (or is woken here); a
 * ring without polling returns at once.
 */
void kernel_sq_drain(struct accel_sched_kernel *k)
{
	unsigned int tail;

	if (!k->sqpoll_ms)
		return;
	pthread_mutex_lock(&k->sq_lock);
	tail = *k->ring.sq.ktail; /* every SQE handed out is flushed here */
	pthread_mutex_unlock(&k->sq_lock);
	while ((int)(io_uring_smp_load_acquire(k->ring.sq.khead) - tail) < 0) {
		if (IO_URING_READ_ONCE(*k->ring.sq.kflags) & IORING_SQ_NEED_WAKEUP) {
			pthread_mutex_lock(&k->sq_lock);
			kernel_ring_flush_locked(k); /* wakes the thread */
			pthread_mutex_unlock(&k->sq_lock);
		} else {
			sched_yield();
		}
	}
}

/*
 * Puts @r's SUBMIT in the ring and enters it. Once its SQE is in the ring
 * it counts as submitted (a later enter takes it if this one failed), and
 * the record may be released, run and freed at any time: the caller must
 * not touch it after a 0. Returns -EBUSY when the ring has no free SQE.
 *
 * Each thread enters its own SQE: io_uring binds a request to the task
 * that issued it, and a task's exit cancels (6.12) or waits for (6.1) its
 * requests in flight, so a SUBMIT entered on another thread's behalf
 * would fail that thread's job when the issuer exits first. Entering from
 * the long-lived reaper would allow batching across threads. A polled
 * ring's requests are all its polling thread's, which lives as long as
 * the ring; entering is then no system call while that thread is awake.
 */
int kernel_enter_submit(struct accel_sched_kernel *k, struct kernel_job *r)
{
	struct io_uring_sqe *sqe;

	pthread_mutex_lock(&k->sq_lock);
	sqe = kernel_get_sqe_locked(k);
	if (sqe) {
		prep_submit(sqe, k, r);
		/* After the last read of @r here; the kernel sees the SQE later. */
		atomic_store_explicit(&r->published, true, memory_order_release);
		kernel_ring_flush_locked(k);
	}
	pthread_mutex_unlock(&k->sq_lock);
	return sqe ? 0 : -EBUSY;
}

static int submit_uring(struct accel_sched_kernel *k, struct kernel_job *r)
{
	int ret;

	jobs_link(k, r);
	ret = kernel_enter_submit(k, r);
	if (ret)
		jobs_unlink(k, r); /* its SQE never went in */
	return ret;
}

/* One-shot wakes of the reaper when a wait of an ioctl job settles. */
static void watch_waits(struct accel_sched_kernel *k, const struct kernel_job *r)
{
	for (uint32_t i = 0; i < r->kj.nwaits; i++) {
		struct accel_syncobj_eventfd a = {
			.handle = r->pts[i].handle,
			.point = r->pts[i].point,
			.fd = k->efd,
		};

		kioctl(k->fd, ACCEL_IOCTL_SYNCOBJ_EVENTFD, &a); /* else the scan period */
	}
}

static int submit_ioctl_locked(struct accel_sched_kernel *k, struct kernel_job *r)
{
	struct accel_job_submit a = { .jobs = (uint64_t)(uintptr_t)&r->kj, .count = 1 };
	int err = kioctl(k->fd, ACCEL_IOCTL_JOB_SUBMIT, &a);

	if ((err == -EINVAL || err == -ETIME) && !r->retried) {
		r->retried = true;
		if (err == -EINVAL ? kernel_drop_passed_signals(r) :
				     kernel_drop_deadline(r)) {
			a.submitted = 0;
			err = kioctl(k->fd, ACCEL_IOCTL_JOB_SUBMIT, &a);
		}
	}
	return err;
}

/*
 * Under jobs_lock, so that the reaper sees the job only once the module
 * took it (its RELEASED event may come before the ioctl returns).
 */
static int submit_ioctl(struct accel_sched_kernel *k, struct kernel_job *r)
{
	int err;

	if (!k->events) /* else a failed wait comes as an event */
		watch_waits(k, r);
	pthread_mutex_lock(&k->jobs_lock);
	link_locked(k, r);
	err = submit_ioctl_locked(k, r);
	if (err)
		unlink_locked(r);
	else
		r->submitted = true;
	pthread_mutex_unlock(&k->jobs_lock);
	return err;
}

/*
 * Under fetch_lock, which it drops: submit @r by ioctl with
 * ACCEL_JOB_F_ANSWER, and hand it to its executor if the module answered
 * its release. No fetch runs meanwhile, so an event for @r (released
 * later, or failed) is handed on only after this returns, and every
 * release fetched before was handed on before: the queue's order holds.
 */
static int submit_answer_unlock(struct accel_sched_kernel *k, struct kernel_job *r)
{
	int err;

	r->kj.flags |= ACCEL_JOB_F_ANSWER;
	jobs_link(k, r);
	err = submit_ioctl_locked(k, r);
	if (err)
		jobs_unlink(k, r);
	else if (r->kj.id & ACCEL_JOB_ID_RELEASED)
		kernel_release(k, r, r->kj.id & ~ACCEL_JOB_ID_RELEASED);
	pthread_mutex_unlock(&k->fetch_lock);
	return err;
}

static int check_points(const struct accel_sched_kernel *k,
			const struct accel_sched_job *job)
{
	/* A deadline takes a signal entry (ABI 1.7). */
	uint32_t dl = job->deadline_ns && k->info.features & ACCEL_FEATURE_JOB_DEADLINE;
	const char *what = job->wait_count > ACCEL_JOB_MAX_POINTS ? "waits" : "signals";
	uint32_t n = job->wait_count > ACCEL_JOB_MAX_POINTS ? job->wait_count :
		     job->signal_count + dl;

	if (n <= ACCEL_JOB_MAX_POINTS)
		return 0;
	return accel_fail(E2BIG,
		"accel_queue_execute: %s has %u entries%s, but the kernel scheduler takes at most ACCEL_JOB_MAX_POINTS (%u) per submission; split it (a barrier can gather points) or use ACCEL_SCHEDULER=embedded",
		what, n, dl && n == job->signal_count + 1 ? " with the deadline's" : "",
		ACCEL_JOB_MAX_POINTS);
}

int kernel_job_submit(accel_scheduler_t *s, struct accel_sched_job *job)
{
	struct accel_sched_kernel *k = to_kernel(s);
	struct kernel_queue *q = accel_executor_data(job->executor);
	struct kernel_job *r;
	int err = check_points(k, job);

	if (err)
		return err;
	r = kernel_job_new(k, job, q);
	if (!r)
		return accel_fail(ENOMEM, "accel_queue_execute: out of memory for the kernel job");
	atomic_init(&job->pending, 0);
	atomic_init(&job->wait_error, 0);
	atomic_init(&job->wait_index, 0);
	atomic_init(&job->cancel_error, 0);
	atomic_init(&job->pipelined, false);
	atomic_init(&job->device_wait, 0);
	job->device_ns = 0;
	job->priv = r;
	/*
	 * From here on, a success hands @job to the reaper, or to its
	 * executor: touch nothing. A job alone on its queue is most likely
	 * released at once, and nothing else of the queue competes for
	 * fetch_lock: it asks for the answer, on a system call that returns
	 * it (an ioctl) and holding fetch_lock through it. Behind other jobs
	 * its release most likely comes from a COMPLETE, which fetches it
	 * itself if fetch_lock is free: those take the ring, and leave the
	 * lock to the executors. So does a thread that finds the lock taken.
	 */
	bool lone = k->answer && atomic_fetch_add(&q->in_flight, 1) == 0;
	bool answer = lone && pthread_mutex_trylock(&k->fetch_lock) == 0;

	if (answer)
		err = submit_answer_unlock(k, r);
	else
		err = k->uring ? submit_uring(k, r) : submit_ioctl(k, r);
	if (!err)
		return 0;
	if (k->answer)
		atomic_fetch_sub(&q->in_flight, 1);
	job->priv = NULL;
	accel_pool_free(r);
	return accel_fail(-err,
		"accel_queue_execute: the kernel scheduler refused the submission: %s failed with %s%s",
		k->uring && !answer ? "io_uring_enter (ACCEL_URING_CMD_JOB_SUBMIT)" :
				      "ACCEL_IOCTL_JOB_SUBMIT",
		accel_errno_name(-err), refusal_hint(-err));
}

/* ---- completion (executor thread) ------------------------------------- */

/*
 * Success: a signal a host signal passed fails with -EINVAL, as embedded:
 * those of @passed (bit i: signal i, as the module found them), or with
 * @passed UINT64_MAX each one whose semaphore is at its value or past it.
 */
static void check_signals(struct accel_sched_job *job, uint64_t passed)
{
	char msg[ACCEL_FAILURE_MAX];
	uint64_t v;
	int e;

	for (uint32_t i = 0; i < job->signal_count; i++) {
		const struct accel_sched_point *p = &job->signals[i];

		if (!(passed & UINT64_C(1) << i))
			continue;
		kernel_sem_query(p->sem, &v, &e);
		if (e || v < p->value)
			continue;
		accel_strfmt(msg, sizeof(msg),
			     "%s completed, but could not signal %" PRIu64 ": the semaphore is already at %" PRIu64 " (a timeline never moves back)",
			     job->label, p->value, v);
		fail_signal(p->sem, -EINVAL, msg);
	}
}

/*
 * COMPLETE @r's job with @c; @check: on success, look for signals that a
 * host signal passed (check_signals()). With events, the releases it
 * causes for this process (the credit it frees, the waits it reaches) come
 * back with it and are handed on here, on the executor's thread, as the
 * embedded scheduler releases from the completing thread: no wake of the
 * reaper, no hop through it. The module then also says which signals it
 * found passed, so none is queried first, unless the job was pipelined
 * (its points may be reached later) or retried (its kernel signals are
 * fewer than its own). Only one thread fetches at a time (fetch_lock);
 * when another does, this one completes alone and what it caused wakes
 * the reaper.
 */
static void complete(struct accel_sched_kernel *k, struct kernel_job *r,
		     struct accel_job_complete *c, bool check)
{
	struct accel_job_event ev[KERNEL_FETCH_MAX];
	struct accel_job_complete_fetch f = {
		.id = c->id, .status = c->status, .device_ns = c->device_ns,
		.events = (uint64_t)(uintptr_t)ev, .max = KERNEL_FETCH_MAX,
	};
	bool fetch = k->events && pthread_mutex_trylock(&k->fetch_lock) == 0;
	bool told = fetch && !atomic_load(&r->job->pipelined) && !r->retried;

	if (check && !told)
		check_signals(r->job, UINT64_MAX);
	if (!fetch) {
		kioctl(k->fd, ACCEL_IOCTL_JOB_COMPLETE, c); /* late: -ETIMEDOUT */
		return;
	}
	if (kioctl(k->fd, ACCEL_IOCTL_JOB_COMPLETE_FETCH, &f) == 0)
		kernel_handle_events_locked(k, ev, f.count);
	pthread_mutex_unlock(&k->fetch_lock);
	if (check && told && f.passed)
		check_signals(r->job, f.passed);
}

void kernel_job_complete(accel_scheduler_t *s, struct accel_sched_job *job,
			 int status, const char *msg)
{
	struct accel_sched_kernel *k = to_kernel(s);
	struct kernel_queue *q = accel_executor_data(job->executor);
	struct kernel_job *r = job->priv;
	char buf[ACCEL_FAILURE_MAX];
	bool released, timedout;

	/*
	 * Before the COMPLETE, not after: a thread waiting for this job's
	 * signal wakes inside the COMPLETE (the module signals after it
	 * frees the credit) and most often submits the next job before this
	 * thread is back from the system call; that job must find its queue
	 * empty to ask for an answer. Lowered after, answered round trips
	 * read 0.64 of evented ones instead of 0.54 (accel-bench ksubmit,
	 * six pairs in one VM). The price: a submission in the window before
	 * the COMPLETE asks for an answer the full engine cannot give, and
	 * gets an event.
	 */
	if (k->answer)
		atomic_fetch_sub(&q->in_flight, 1);
	pthread_mutex_lock(&k->jobs_lock);
	released = r->released;
	timedout = r->timedout;
	pthread_mutex_unlock(&k->jobs_lock);
	if (timedout) {
		status = -ETIMEDOUT;
		timeout_message(job, buf, sizeof(buf));
		msg = buf;
	} else if (!released && r->why[0]) {
		msg = r->why;
	} else if (status && status == atomic_load(&job->wait_error)) {
		/* Not run: its signals name the failed wait as their cause. */
		note_wait_failure(job, atomic_load(&job->wait_index), status);
	}
	if (status)
		for (uint32_t i = 0; i < job->signal_count; i++)
			fail_signal(job->signals[i].sem, status, msg);
	else if (!released)
		check_signals(job, UINT64_MAX);
	if (released) {
		struct accel_job_complete c = { .id = r->id, .status = status,
						.device_ns = job->device_ns };

		for (uint32_t i = 0; i < job->signal_count; i++)
			ksem_hb_release(job->signals[i].sem);
		/*
		 * The credit this frees goes by priority among what the module
		 * holds: with a polled ring, first let it take what this
		 * process submitted before (a HIGH job submitted while this
		 * one ran goes ahead of earlier LOW ones, as unpolled).
		 */
		kernel_sq_drain(k);
		complete(k, r, &c, !status);
	}
	jobs_unlink(k, r);
	kernel_dev_wake(k); /* its points may be reached: pipelined jobs look again */
}

/* ---- device-side waits of pipelined jobs ------------------------------ */

/*
 * The module releases a job early, flagged pipelined, when each of its
 * waits not reached is promised by a job of this file already released to
 * the same engine. Its executor used to wait for those waits on the host.
 * Now, when each such wait is promised on the job's own device (the
 * predecessor's work is on it: accel_sched_job_on_device() recorded the
 * device timeline's token here), the device orders it instead: the driver
 * makes it wait for the largest token, as on the embedded scheduler.
 *
 * A predecessor released but not yet on the device makes the executor wait
 * for its promise, or for the wait to be reached (a predecessor that
 * completes without reaching the device, a barrier): both are this
 * process's doing, and each broadcasts dev_cond. A wait promised on
 * another device (another accel_device_t of the same URI shares the
 * engine), or failed, leaves the job to the host. Its signals stay the
 * module's to hold back until its waits are reached (FINISHING), and the
 * executor writes the message if one failed (device_ordered_complete()).
 */
void kernel_dev_wake(struct accel_sched_kernel *k)
{
	if (!atomic_load(&k->dev_waiters))
		return;
	pthread_mutex_lock(&k->dev_lock);
	k->dev_gen++;
	pthread_cond_broadcast(&k->dev_cond);
	pthread_mutex_unlock(&k->dev_lock);
}

void kernel_sem_device_promise(accel_semaphore_t *sem, const void *domain,
			       uint64_t value, uint64_t token)
{
	struct accel_sched_kernel *k = to_kernel(sem->scheduler);
	struct kernel_sem *ks = to_ksem(sem);

	pthread_mutex_lock(&k->dev_lock);
	if (ks->dev_domain != domain || value >= ks->dev_value) {
		ks->dev_domain = domain;
		ks->dev_value = value;
		ks->dev_token = token;
	}
	k->dev_gen++;
	if (atomic_load(&k->dev_waiters))
		pthread_cond_broadcast(&k->dev_cond);
	pthread_mutex_unlock(&k->dev_lock);
}

/*
 * The verdict on @job's waits now: 1 device (*token), 0 reached, -1 host,
 * 2 not yet (a predecessor neither on the device nor done). dev_lock held;
 * dropped around each query. A wait reached is never ordered on the
 * device, even if a promise names it: that promise may be from a device
 * gone since (its address reused by this one), whose timeline values mean
 * nothing here.
 */
static int dev_verdict_locked(struct accel_sched_kernel *k,
			      struct accel_sched_job *job, uint64_t *token,
			      bool *host)
{
	int verdict = 0;

	*token = 0;
	*host = false;
	for (uint32_t i = 0; i < job->wait_count; i++) {
		const struct accel_sched_point *p = &job->waits[i];
		struct kernel_sem *ks = to_ksem(p->sem);
		uint64_t v;
		int e;

		pthread_mutex_unlock(&k->dev_lock);
		kernel_sem_query(p->sem, &v, &e);
		pthread_mutex_lock(&k->dev_lock);
		if (e)
			return -1; /* failed: the host path says so */
		if (v >= p->value) { /* reached: nothing to order */
			/* by a predecessor that never was on this device? */
			if (ks->dev_domain != job->domain || ks->dev_value < p->value)
				*host = true;
			continue;
		}
		if (ks->dev_value < p->value || !ks->dev_domain) {
			verdict = 2;
			continue;
		}
		if (ks->dev_domain != job->domain)
			return -1; /* on another device */
		if (ks->dev_token > *token)
			*token = ks->dev_token;
		if (!verdict)
			verdict = 1;
	}
	return verdict;
}

int kernel_job_device_wait(accel_scheduler_t *s, struct accel_sched_job *job,
			   uint64_t *token)
{
	struct accel_sched_kernel *k = to_kernel(s);
	bool waited = false, host = false;
	int verdict;

	pthread_mutex_lock(&k->dev_lock);
	atomic_fetch_add(&k->dev_waiters, 1);
	for (;;) {
		uint64_t gen = k->dev_gen;
		struct timespec ts;

		verdict = dev_verdict_locked(k, job, token, &host);
		if (verdict != 2)
			break;
		if (gen != k->dev_gen)
			continue; /* something changed while we looked */
		/* A bound, not a poll: every change broadcasts. */
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_nsec += 100 * 1000 * 1000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&k->dev_cond, &k->dev_lock, &ts);
		waited = true;
	}
	atomic_fetch_sub(&k->dev_waiters, 1);
	pthread_mutex_unlock(&k->dev_lock);
	/*
	 * Reached only after waiting for a predecessor that never was on this
	 * device (a barrier, another device's job): the host ordered it.
	 */
	return verdict == 0 && waited && host ? -1 : verdict;
}

/* ---- queues ----------------------------------------------------------- */

/* "cpu://0" -> "cpu", "vulkan://1?x=y" -> "vulkan:1": [a-z0-9:._-]. */
static void engine_name(const char *uri, char *out, size_t len)
{
	const char *sep = strstr(uri, "://");
	size_t dlen;

	if (!sep) {
		accel_strfmt(out, len, "%s", uri);
	} else if (sep - uri == 3 && strncmp(uri, "cpu", 3) == 0) {
		accel_strfmt(out, len, "cpu");
	} else {
		dlen = strcspn(sep + 3, "?");
		accel_strfmt(out, len, "%.*s:%.*s", (int)(sep - uri), uri,
			     dlen ? (int)dlen : 1, dlen ? sep + 3 : "0");
	}
	for (char *c = out; *c; c++) {
		*c = (char)tolower((unsigned char)*c);
		if (!isalnum((unsigned char)*c) && !strchr(":._-", *c))
			*c = '_';
	}
	if (!out[0])
		accel_strfmt(out, len, "unnamed");
}

static int queue_create(struct accel_sched_kernel *k, const char *name,
			const struct accel_sched_queue_params *params,
			struct kernel_queue *q)
{
	struct accel_queue_create a = {
		.priority = params->priority,
		.weight = params->weight,
		.credits = KERNEL_ENGINE_CREDITS,
	};
	int err;

	engine_name(name, a.engine, sizeof(a.engine));
	memcpy(q->engine, a.engine, sizeof(q->engine));
	err = kioctl(k->fd, ACCEL_IOCTL_QUEUE_CREATE, &a);
	if (err == -EEXIST) { /* ABI < 1.4: another limit; take the engine's */
		a.credits = 0;
		err = kioctl(k->fd, ACCEL_IOCTL_QUEUE_CREATE, &a);
	}
	if (err == -EACCES && a.priority == ACCEL_PRIORITY_HIGH)
		return accel_fail(EACCES,
			"%s: the accelsched module refused priority HIGH on engine \"%s\" for %s (EACCES): this process lacks CAP_SYS_NICE, which HIGH requires; ACCEL_QUEUE_PRIORITY_NORMAL works without it",
			params->caller, a.engine, name);
	if (err)
		return accel_fail(-err,
			"%s: ACCEL_IOCTL_QUEUE_CREATE on engine \"%s\" for %s (priority %u, weight %u) failed with %s%s",
			params->caller, a.engine, name, a.priority, a.weight,
			accel_errno_name(-err),
			err == -EMFILE ? " (the module's per-file queue limit, parameter max_queues)" : "");
	q->handle = a.handle;
	return 0;
}

static void queue_destroy(struct accel_sched_kernel *k, struct kernel_queue *q)
{
	struct accel_queue_destroy a = { .handle = q->handle };

	kioctl(k->fd, ACCEL_IOCTL_QUEUE_DESTROY, &a);
	accel_pool_put(q->pool);
	free(q);
}

int kernel_executor_create(accel_scheduler_t *s, const char *name,
			   const struct accel_sched_queue_params *params,
			   struct accel_sched_executor **out)
{
	struct accel_sched_kernel *k = to_kernel(s);
	struct kernel_queue *q;
	int err;

	if (!(k->info.features & ACCEL_FEATURE_SCHED))
		return accel_fail(EOPNOTSUPP,
			"accel_queue_create: the accelsched module (ABI %u.%u) has no job scheduler (ACCEL_FEATURE_SCHED, ABI 1.2); upgrade the module or use ACCEL_SCHEDULER=embedded",
			k->info.abi_major, k->info.abi_minor);
	pthread_mutex_lock(&k->jobs_lock);
	err = kernel_reaper_start_locked(k);
	pthread_mutex_unlock(&k->jobs_lock);
	if (err)
		return err;
	q = calloc(1, sizeof(*q));
	if (q)
		q->pool = accel_pool_new(KERNEL_JOB_POOLED);
	if (!q || !q->pool) {
		free(q);
		return accel_fail(ENOMEM, "accel_queue_create: out of memory");
	}
	q->k = k;
	err = queue_create(k, name, params, q);
	if (err) {
		accel_pool_put(q->pool);
		free(q);
		return err;
	}
	err = accel_executor_thread_create(s, name, out);
	if (err) {
		queue_destroy(k, q);
		return err;
	}
	accel_executor_set_data(*out, q);
	return 0;
}

/* Called when the queue's last job is done: nothing is left to cancel. */
void kernel_executor_destroy(struct accel_sched_executor *ex)
{
	/* The executor may be this very thread: read it before it goes. */
	struct kernel_queue *q = accel_executor_data(ex);

	accel_executor_thread_destroy(ex);
	queue_destroy(q->k, q);
}
