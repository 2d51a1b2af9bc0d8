// SPDX-License-Identifier: MIT
/*
 * The in-process executor: one thread per queue that runs the jobs whose
 * waits are done, in the order they became ready, and completes them.
 *
 * Completing a job signals its signal points, or fails them with the job's
 * status: the status of the first failed wait (the job is then not run),
 * the scheduler's reason to cancel it, or its execute callback's. Errors
 * are never dropped: a signal that cannot move the timeline forward fails
 * that semaphore with -EINVAL. A scheduler kind with ->job_complete (the
 * kernel one) completes the job itself; the executor then only runs it and
 * measures how long the work took (the device time the module charges).
 *
 * Asynchronous work: an execute callback may return ACCEL_JOB_PENDING (the
 * vulkan driver does: its work is queued on the device); the executor then
 * goes on with its next job and whoever sees the work finish calls
 * accel_sched_job_finish(), which completes the job the same way. Either
 * way a job's ->release drops what it holds before in-process signals are
 * signalled, so a waiter never races the teardown of what it released.
 *
 * Lifetime: the queue owns the executor; each job holds a queue reference,
 * so the executor is destroyed only when no job is left. The last job's
 * destroy may drop the last queue reference on the executor thread itself:
 * then the thread is detached and frees the executor when its loop ends.
 *
 * Process exit: the job that drops the last reference to a queue, and so
 * perhaps to its device, tears the device down on the thread that
 * completes it (an executor, or a driver's completion thread): for vulkan
 * that is vkDestroyDevice and vkDestroyInstance. An application may
 * release everything, signal the last point and return from main() while
 * that runs; exit() then finalizes the libraries libaccel loaded (the
 * Vulkan loader destroys its global locks in its destructor) under the
 * teardown's feet. So every job counts as active from the moment it is
 * pushed to an executor until its completion and destroy returned, and an
 * atexit() handler, registered when the first executor starts (after its
 * device's driver loaded its libraries, so it runs before their exit
 * handlers and destructors), waits until no job is active, for at most
 * ACCEL_EXIT_WAIT_NS. Jobs whose waits are never reached are not active
 * and hold nothing up.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "error.h"
#include <accel/semaphore.h>

#include "pool.h"
#include "sched.h"
#include "worker.h"

/* How long process exit waits for active jobs before it goes on anyway. */
#define ACCEL_EXIT_WAIT_NS (30 * INT64_C(1000000000))

/*
 * Jobs pushed to an executor and not yet completed, in this process: an
 * atomic count, which every executor of the process changes twice a job.
 * Only process exit waits for it to reach 0: it says so in
 * @active_waiting, and from then on the job that takes the count to 0
 * takes @active_lock and signals @active_idle. Both sides order their
 * store before their load (sequentially consistent), so either the last
 * job sees the waiter or the waiter sees the count at 0; the waiter reads
 * the count under the lock the signaller takes, so no signal is lost.
 */
static pthread_mutex_t active_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t active_idle;
static atomic_uint_fast64_t active_jobs;
static atomic_bool active_waiting;
static pthread_once_t exit_once = PTHREAD_ONCE_INIT;

static void active_get(void)
{
	atomic_fetch_add_explicit(&active_jobs, 1, memory_order_relaxed);
}

static void active_put(void)
{
	if (atomic_fetch_sub(&active_jobs, 1) == 1 && atomic_load(&active_waiting)) {
		pthread_mutex_lock(&active_lock);
		pthread_cond_broadcast(&active_idle);
		pthread_mutex_unlock(&active_lock);
	}
}

/* atexit(): lets the active jobs finish before the libraries are finalized. */
static void wait_active_at_exit(void)
{
	struct timespec ts;
	int64_t deadline = accel_now_ns() + ACCEL_EXIT_WAIT_NS;

	ts.tv_sec = deadline / 1000000000;
	ts.tv_nsec = deadline % 1000000000;
	atomic_store(&active_waiting, true);
	pthread_mutex_lock(&active_lock);
	while (atomic_load(&active_jobs) &&
	       pthread_cond_timedwait(&active_idle, &active_lock, &ts) != ETIMEDOUT)
		;
	pthread_mutex_unlock(&active_lock);
}

/* A forked child has none of its parent's executor threads. */
static void active_forget_in_child(void)
{
	pthread_mutex_init(&active_lock, NULL);
	atomic_store(&active_jobs, 0);
	atomic_store(&active_waiting, false);
}

static void exit_wait_init(void)
{
	pthread_condattr_t attr;

	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&active_idle, &attr);
	pthread_condattr_destroy(&attr);
	pthread_atfork(NULL, NULL, active_forget_in_child);
	atexit(wait_active_at_exit);
}

struct accel_sched_executor {
	accel_scheduler_t *scheduler; /* no reference: the queue's device holds one */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct accel_sched_job *head, *tail;
	struct accel_worker worker;
	void *data;
};

void accel_executor_set_data(struct accel_sched_executor *ex, void *data)
{
	ex->data = data;
}

void *accel_executor_data(const struct accel_sched_executor *ex)
{
	return ex->data;
}

accel_scheduler_t *accel_executor_scheduler(const struct accel_sched_executor *ex)
{
	return ex->scheduler;
}

void accel_executor_push(struct accel_sched_executor *ex,
			 struct accel_sched_job *job)
{
	job->next = NULL;
	active_get();
	pthread_mutex_lock(&ex->lock);
	if (ex->tail)
		ex->tail->next = job;
	else
		ex->head = job;
	ex->tail = job;
	pthread_cond_signal(&ex->cond);
	pthread_mutex_unlock(&ex->lock);
}

static void job_signal(accel_scheduler_t *s, struct accel_sched_job *job,
		       const struct accel_sched_point *p)
{
	uint64_t value;
	int error;
	char msg[ACCEL_FAILURE_MAX];

	if (s->ops->sem_signal(p->sem, p->value, job->label) == 0)
		return;
	s->ops->sem_query(p->sem, &value, &error);
	if (error)
		return; /* failed already: that failure stands */
	accel_strfmt(msg, sizeof(msg),
		     "%s completed, but could not signal %" PRIu64 ": the semaphore is already at %" PRIu64 " (a timeline never moves back)",
		     job->label, p->value, value);
	s->ops->sem_fail(p->sem, -EINVAL, msg);
}

void accel_sched_wait_failed_hop(const struct accel_sched_job *job,
				 uint32_t i, int err, char *msg, size_t len)
{
	accel_strfmt(msg, len,
		     "%s was not run: its wait %u (value %" PRIu64 ") failed with %s",
		     job->label, i, job->waits[i].value, accel_errno_name(-err));
}

void accel_sched_wait_failed_message(const struct accel_sched_job *job,
				     uint32_t i, int err, char *msg, size_t len)
{
	char hop[ACCEL_FAILURE_MAX];

	accel_sched_wait_failed_hop(job, i, err, hop, sizeof(hop));
	accel_failure_compose(msg, len, hop,
			      accel_semaphore_failure_message(job->waits[i].sem));
}

static void wait_failed_message(struct accel_sched_job *job, int err,
				char *msg, size_t len)
{
	accel_sched_wait_failed_message(job, atomic_load(&job->wait_index),
					err, msg, len);
}

static int job_execute(struct accel_sched_job *job, char *msg, size_t len)
{
	int err;

	job->start_ns = accel_now_ns();
	job->device_ns = 0;
	err = job->execute(job, msg, len);
	if (err != ACCEL_JOB_PENDING)
		job->device_ns = (uint64_t)(accel_now_ns() - job->start_ns);
	return err;
}

/* Device-side ordering, counted for tests and benchmarks. */
static atomic_uint_fast64_t device_ordered_jobs, pipelined_host_waits;

void accel_sched_device_stats(struct accel_sched_device_stats *out)
{
	out->device_ordered = atomic_load(&device_ordered_jobs);
	out->host_waits = atomic_load(&pipelined_host_waits);
}

void accel_sched_job_on_device(struct accel_sched_job *job, uint64_t token)
{
	accel_scheduler_t *s = accel_executor_scheduler(job->executor);

	if (!s->ops->sem_device_promise || !job->domain)
		return;
	for (uint32_t i = 0; i < job->signal_count; i++)
		s->ops->sem_device_promise(job->signals[i].sem, job->domain,
					   job->signals[i].value, token);
}

/* Blocks until @job's waits are reached; 0 or the failed wait's error. */
static int waits_reached(accel_scheduler_t *s, struct accel_sched_job *job)
{
	uint32_t index = 0;
	int err;

	err = s->ops->sem_wait(s, job->wait_count, job->waits,
			       ACCEL_SEMAPHORE_WAIT_ALL, INT64_MAX, &index);
	if (err && err != -ETIME) {
		atomic_store(&job->wait_index, index);
		atomic_store(&job->wait_error, err);
	}
	return err;
}

/*
 * A pipelined job (released before its waits were reached, because each is
 * promised by a job of this process already released) runs only once its
 * waits are reached: its predecessors may run on other executors. Returns
 * 0, or the failed wait's error with its index recorded. A job ordered on
 * the device (->device_wait) does not wait here: the device waits for it.
 */
static int pipelined_wait(accel_scheduler_t *s, struct accel_sched_job *job)
{
	uint64_t token = 0;
	int how;

	if (atomic_load(&job->device_wait)) {
		atomic_fetch_add(&device_ordered_jobs, 1);
		return 0;
	}
	if (!atomic_load(&job->pipelined) || !job->wait_count)
		return 0;
	how = s->ops->job_device_wait && job->domain ?
	      s->ops->job_device_wait(s, job, &token) : -1;
	if (how > 0) { /* the kernel kind: promised on this device */
		atomic_store(&job->device_wait, token);
		atomic_fetch_add(&device_ordered_jobs, 1);
		return 0;
	}
	if (how < 0)
		atomic_fetch_add(&pipelined_host_waits, 1);
	return waits_reached(s, job);
}

/*
 * A job ordered on the device was released before its waits were
 * reached; its signals must not overtake them (and fail with their
 * failure if one failed). The driver completes work in device order, so
 * the predecessors have normally been completed already and this does not
 * block. On the kernel scheduler the module would hold the signals back as
 * well (a pipelined job's FINISHING), but the message that says why they
 * failed is this process's to write, so it waits here too: the
 * predecessors' COMPLETEs went out before this job's, from the same
 * completion thread of the device.
 */
static bool device_ordered_complete(accel_scheduler_t *s,
				    struct accel_sched_job *job,
				    char *msg, size_t len)
{
	int err;

	if (!atomic_load(&job->device_wait) || atomic_load(&job->wait_error))
		return false;
	err = waits_reached(s, job);
	if (!err)
		return false;
	{
		uint32_t i = atomic_load(&job->wait_index);
		char hop[ACCEL_FAILURE_MAX];

		accel_strfmt(hop, sizeof(hop),
			     "%s ran on the device after its wait %u (value %" PRIu64 ") failed with %s, so its results are void",
			     job->label, i, job->waits[i].value, accel_errno_name(-err));
		accel_failure_compose(msg, len, hop,
				      accel_semaphore_failure_message(job->waits[i].sem));
	}
	return true;
}

/*
 * Signals @job's signals, or fails them with @err; then frees it. The job
 * keeps @s alive only through its queue's device, and ->release may drop
 * the last of those (a device that owns its scheduler, released with its
 * queues while the job ran): @s is held here until the job is settled.
 */
static void job_complete(accel_scheduler_t *s, struct accel_sched_job *job,
			 int err, const char *msg)
{
	accel_scheduler_retain(s);
	if (s->ops->job_done)
		s->ops->job_done(s, job);
	if (s->ops->job_complete) {
		s->ops->job_complete(s, job, err, msg);
		if (job->release)
			job->release(job);
	} else {
		if (job->release)
			job->release(job);
		for (uint32_t i = 0; i < job->signal_count; i++) {
			if (err)
				s->ops->sem_fail(job->signals[i].sem, err, msg);
			else
				job_signal(s, job, &job->signals[i]);
		}
	}
	if (s->ops->job_settled)
		s->ops->job_settled(s, job);
	accel_pool_free(job->priv); /* the scheduler's, from accel_pool_alloc() */
	job->priv = NULL;
	job->destroy(job);
	accel_scheduler_release(s);
	active_put(); /* last: the destroy may have torn its device down */
}

void accel_sched_job_run(accel_scheduler_t *s, struct accel_sched_job *job)
{
	char msg[ACCEL_FAILURE_MAX] = "";
	int err = atomic_load(&job->wait_error);

	if (!err)
		pipelined_wait(s, job);
	err = atomic_load(&job->wait_error);
	if (err)
		wait_failed_message(job, err, msg, sizeof(msg));
	else if ((err = atomic_load(&job->cancel_error)))
		accel_strfmt(msg, sizeof(msg), "%s was not run: the scheduler cancelled it with %s",
			     job->label, accel_errno_name(-err));
	else if (job->execute && (err = job_execute(job, msg, sizeof(msg))) == ACCEL_JOB_PENDING)
		return; /* in flight: accel_sched_job_finish() completes it */
	if (device_ordered_complete(s, job, msg, sizeof(msg)))
		err = atomic_load(&job->wait_error);
	job_complete(s, job, err, msg);
}

void accel_sched_job_finish(struct accel_sched_job *job, int status,
			    const char *msg)
{
	/* Read now: ->release may destroy the executor. */
	accel_scheduler_t *s = job->executor->scheduler;

	char why[ACCEL_FAILURE_MAX];

	if (!job->device_ns)
		job->device_ns = (uint64_t)(accel_now_ns() - job->start_ns);
	if (device_ordered_complete(s, job, why, sizeof(why))) {
		status = atomic_load(&job->wait_error);
		msg = why;
	}
	job_complete(s, job, status, status ? msg : "");
}

static void *executor_main(void *arg)
{
	struct accel_sched_executor *ex = arg;
	struct accel_sched_job *job;
	bool detached;

	for (;;) {
		pthread_mutex_lock(&ex->lock);
		while (!ex->head && !ex->worker.stop)
			pthread_cond_wait(&ex->cond, &ex->lock);
		job = ex->head;
		if (!job) {
			detached = ex->worker.detached;
			pthread_mutex_unlock(&ex->lock);
			break;
		}
		ex->head = job->next;
		if (!ex->head)
			ex->tail = NULL;
		pthread_mutex_unlock(&ex->lock);
		accel_sched_job_run(ex->scheduler, job);
	}
	if (detached) {
		pthread_cond_destroy(&ex->cond);
		pthread_mutex_destroy(&ex->lock);
		free(ex);
	}
	return NULL;
}

int accel_executor_thread_create(accel_scheduler_t *s, const char *name,
				 struct accel_sched_executor **out)
{
	struct accel_sched_executor *ex = calloc(1, sizeof(*ex));
	int err;

	if (!ex)
		return accel_fail(ENOMEM, "accel_queue_create: out of memory");
	pthread_once(&exit_once, exit_wait_init);
	ex->scheduler = s;
	pthread_mutex_init(&ex->lock, NULL);
	pthread_cond_init(&ex->cond, NULL);
	ex->worker.started = true; /* before the thread can run anything */
	err = pthread_create(&ex->worker.thread, NULL, executor_main, ex);
	if (err) {
		pthread_cond_destroy(&ex->cond);
		pthread_mutex_destroy(&ex->lock);
		free(ex);
		return accel_fail(EAGAIN,
			"accel_queue_create: cannot start the executor thread of %s: %s (check RLIMIT_NPROC and the memory limit)",
			name, accel_errno_name(err));
	}
	pthread_setname_np(ex->worker.thread, "accel-exec");
	*out = ex;
	return 0;
}

void accel_executor_thread_destroy(struct accel_sched_executor *ex)
{
	if (!accel_worker_stop(&ex->worker, &ex->lock, &ex->cond))
		return;
	pthread_cond_destroy(&ex->cond);
	pthread_mutex_destroy(&ex->lock);
	free(ex);
}
