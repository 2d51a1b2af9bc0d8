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
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include <accel/semaphore.h>

#include "sched.h"

struct accel_sched_executor {
	accel_scheduler_t *scheduler; /* no reference: the queue's device holds one */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct accel_sched_job *head, *tail;
	bool stop;
	bool detached;
	pthread_t thread;
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

void accel_executor_push(struct accel_sched_executor *ex,
			 struct accel_sched_job *job)
{
	job->next = NULL;
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

static void wait_failed_message(struct accel_sched_job *job, int err,
				char *msg, size_t len)
{
	uint32_t i = atomic_load(&job->wait_index);

	accel_strfmt(msg, len,
		     "%s was not run: its wait %u (value %" PRIu64 ") failed with %s: %s",
		     job->label, i, job->waits[i].value, accel_errno_name(-err),
		     accel_semaphore_failure_message(job->waits[i].sem));
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

/*
 * A pipelined job (released before its waits were reached, because each is
 * promised by a job of this process already released) runs only once its
 * waits are reached: its predecessors may run on other executors. Returns
 * 0, or the failed wait's error with its index recorded.
 */
static int pipelined_wait(accel_scheduler_t *s, struct accel_sched_job *job)
{
	uint32_t index = 0;
	int err;

	if (!atomic_load(&job->pipelined) || !job->wait_count)
		return 0;
	err = s->ops->sem_wait(s, job->wait_count, job->waits,
			       ACCEL_SEMAPHORE_WAIT_ALL, INT64_MAX, &index);
	if (err && err != -ETIME) {
		atomic_store(&job->wait_index, index);
		atomic_store(&job->wait_error, err);
	}
	return err;
}

/* Signals @job's signals, or fails them with @err; then frees it. */
static void job_complete(accel_scheduler_t *s, struct accel_sched_job *job,
			 int err, const char *msg)
{
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
	free(job->priv);
	job->priv = NULL;
	job->destroy(job);
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
	job_complete(s, job, err, msg);
}

void accel_sched_job_finish(struct accel_sched_job *job, int status,
			    const char *msg)
{
	/* Read now: ->release may destroy the executor. */
	accel_scheduler_t *s = job->executor->scheduler;

	if (!job->device_ns)
		job->device_ns = (uint64_t)(accel_now_ns() - job->start_ns);
	job_complete(s, job, status, status ? msg : "");
}

static void *executor_main(void *arg)
{
	struct accel_sched_executor *ex = arg;
	struct accel_sched_job *job;
	bool detached;

	for (;;) {
		pthread_mutex_lock(&ex->lock);
		while (!ex->head && !ex->stop)
			pthread_cond_wait(&ex->cond, &ex->lock);
		job = ex->head;
		if (!job) {
			detached = ex->detached;
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
	ex->scheduler = s;
	pthread_mutex_init(&ex->lock, NULL);
	pthread_cond_init(&ex->cond, NULL);
	err = pthread_create(&ex->thread, NULL, executor_main, ex);
	if (err) {
		pthread_cond_destroy(&ex->cond);
		pthread_mutex_destroy(&ex->lock);
		free(ex);
		return accel_fail(EAGAIN,
			"accel_queue_create: cannot start the executor thread of %s: %s (check RLIMIT_NPROC and the memory limit)",
			name, accel_errno_name(err));
	}
	pthread_setname_np(ex->thread, "accel-exec");
	*out = ex;
	return 0;
}

void accel_executor_thread_destroy(struct accel_sched_executor *ex)
{
	bool self = pthread_equal(pthread_self(), ex->thread);

	pthread_mutex_lock(&ex->lock);
	ex->stop = true;
	ex->detached = self;
	pthread_cond_signal(&ex->cond);
	pthread_mutex_unlock(&ex->lock);
	if (self) {
		pthread_detach(ex->thread);
		return;
	}
	pthread_join(ex->thread, NULL);
	pthread_cond_destroy(&ex->cond);
	pthread_mutex_destroy(&ex->lock);
	free(ex);
}
