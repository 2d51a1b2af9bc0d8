// SPDX-License-Identifier: MIT
/*
 * The embedded scheduler: the accelsched semantics in process, for machines
 * without the module (DESIGN.md sections 3 and 4).
 *
 * Semaphores. Each holds its value, the highest submitted point, its error
 * and a list of *timepoints* under a mutex. A timepoint is "call me when
 * this point is reached (or submitted), or the semaphore fails"; signal,
 * promise and fail fire (and unlink) the timepoints they satisfy, under the
 * semaphore's lock. Fire callbacks therefore never take a semaphore lock;
 * they only bump a futex word (host waits) or hand a job to its executor
 * (whose lock nests inside semaphore locks, never the other way round).
 *
 * Host waits put one timepoint on every entry's semaphore, all pointing at
 * one futex word, then loop: read the word, evaluate the list, sleep on the
 * word until the absolute CLOCK_MONOTONIC deadline. A fire increments the
 * word, so a wake between evaluating and sleeping is never lost. The
 * FUTEX_WAKE itself is deferred until the signaller has dropped the
 * semaphore's lock (the fire puts the timepoint on a per-thread list that
 * unlock_sem() drains), so the woken waiter does not run straight into a
 * lock its waker still holds (a futex sleep and a second wake per signal).
 * The word and the timepoints live in one heap record with a reference
 * count: the waiter holds one, and each fired timepoint one more until its
 * deferred wake is done; whoever drops the last frees it. So a waiter that
 * sees the word move (or times out) returns at once, and a late wake still
 * points at live memory.
 *
 * Jobs. job_submit() allocates one timepoint per wait, promises every
 * signal point (raising "submitted" and waking ACCEL_SEMAPHORE_WAIT_SUBMITTED
 * waiters), then arms the waits. Each fired timepoint decrements the job's
 * pending count, recording the first failure; the last one pushes the job
 * to its executor. Nothing orders jobs except these points, so a job
 * waiting on an unreached point never holds back a later independent one.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "error.h"
#include "sched.h"

struct emb_timepoint {
	struct emb_timepoint *prev, *next; /* NULL when not linked */
	uint64_t value;
	bool submitted;
	/*
	 * A host wait's point already reached: linked only to hear of a
	 * failure, as the module's failure fence does (syncobj.rst: every
	 * waiter, present and future, gets the error).
	 */
	bool fail_only;
	void (*fire)(struct emb_timepoint *tp, int status);
};

struct emb_sem {
	accel_semaphore_t base;
	pthread_mutex_t lock;
	uint64_t value;
	uint64_t submitted;
	int error;
	struct emb_timepoint head; /* circular list sentinel */
};

struct accel_sched_embedded {
	accel_scheduler_t base;
};

static struct emb_sem *to_emb(accel_semaphore_t *sem)
{
	return (struct emb_sem *)sem;
}

/* ---- futex ------------------------------------------------------------ */

void accel_futex_wait(atomic_uint *word, unsigned int val, int64_t deadline)
{
	struct timespec ts, *tp = NULL;

	if (deadline != ACCEL_DEADLINE_INFINITE) {
		ts.tv_sec = deadline / 1000000000;
		ts.tv_nsec = deadline % 1000000000;
		tp = &ts;
	}
	/* FUTEX_WAIT_BITSET takes an absolute CLOCK_MONOTONIC timeout. */
	syscall(SYS_futex, word, FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG, val,
		tp, NULL, FUTEX_BITSET_MATCH_ANY);
}

void accel_futex_wake_all(atomic_uint *word)
{
	syscall(SYS_futex, word, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, INT_MAX,
		NULL, NULL, 0);
}

/* ---- deferred host wakes ---------------------------------------------- */

struct host_wait;

struct host_tp {
	struct emb_timepoint tp;
	struct host_wait *wait;
	struct host_tp *wake_next; /* link in this thread's pending_wakes */
};

/*
 * struct host_wait - one host wait: the futex word its timepoints bump,
 * and its references (the waiter's, plus one per wake not yet done).
 */
struct host_wait {
	atomic_uint word;
	atomic_uint refs;
	struct host_tp tps[];
};

/* Host timepoints fired under a lock this thread still holds. */
static __thread struct host_tp *pending_wakes;

static void host_wait_put(struct host_wait *w)
{
	if (atomic_fetch_sub(&w->refs, 1) == 1)
		free(w);
}

/* Unlocks @s, then performs the wakes its fires deferred. */
static void unlock_sem(struct emb_sem *s)
{
	pthread_mutex_unlock(&s->lock);
	while (pending_wakes) {
		struct host_tp *h = pending_wakes;

		pending_wakes = h->wake_next;
		accel_futex_wake_all(&h->wait->word);
		host_wait_put(h->wait);
	}
}

/* ---- timepoints (called with the semaphore's lock held) --------------- */

static void tp_link(struct emb_sem *s, struct emb_timepoint *tp)
{
	tp->next = &s->head;
	tp->prev = s->head.prev;
	s->head.prev->next = tp;
	s->head.prev = tp;
}

static void tp_unlink(struct emb_timepoint *tp)
{
	tp->prev->next = tp->next;
	tp->next->prev = tp->prev;
	tp->next = tp->prev = NULL;
}

static bool tp_satisfied(const struct emb_sem *s, const struct emb_timepoint *tp)
{
	return tp->value <= (tp->submitted ? s->submitted : s->value);
}

/* Fires every timepoint that is satisfied now (or all, with @error). */
static void fire_ready(struct emb_sem *s, int error)
{
	struct emb_timepoint *tp = s->head.next, *next;

	for (; tp != &s->head; tp = next) {
		next = tp->next;
		if (!error && (tp->fail_only || !tp_satisfied(s, tp)))
			continue;
		tp_unlink(tp);
		tp->fire(tp, error);
	}
}

/* Links @tp, or fires it at once if satisfied or failed. */
static void tp_arm(struct emb_sem *s, struct emb_timepoint *tp)
{
	tp->next = tp->prev = NULL;
	pthread_mutex_lock(&s->lock);
	if (s->error)
		tp->fire(tp, s->error);
	else if (tp_satisfied(s, tp))
		tp->fire(tp, 0);
	else
		tp_link(s, tp);
	unlock_sem(s);
}

/*
 * A host wait's tp_arm(): a point reached already stays linked, for a
 * failure during the wait to wake the waiter at once.
 */
static void tp_arm_host(struct emb_sem *s, struct emb_timepoint *tp)
{
	tp->next = tp->prev = NULL;
	pthread_mutex_lock(&s->lock);
	tp->fail_only = !s->error && tp_satisfied(s, tp);
	if (s->error)
		tp->fire(tp, s->error);
	else
		tp_link(s, tp);
	unlock_sem(s);
}

static void tp_disarm(struct emb_sem *s, struct emb_timepoint *tp)
{
	pthread_mutex_lock(&s->lock);
	if (tp->next)
		tp_unlink(tp);
	pthread_mutex_unlock(&s->lock);
}

/* ---- semaphore ops ---------------------------------------------------- */

static int emb_sem_create(accel_scheduler_t *sched, uint64_t initial,
			  accel_semaphore_t **out)
{
	struct emb_sem *s = calloc(1, sizeof(*s));

	if (!s)
		return accel_fail(ENOMEM, "accel_semaphore_create: out of memory");
	accel_semaphore_init(&s->base, sched);
	pthread_mutex_init(&s->lock, NULL);
	s->value = s->submitted = initial;
	s->head.next = s->head.prev = &s->head;
	*out = &s->base;
	return 0;
}

static void emb_sem_destroy(accel_semaphore_t *sem)
{
	struct emb_sem *s = to_emb(sem);

	/* Jobs and waits hold references: no timepoint can be linked here. */
	pthread_mutex_destroy(&s->lock);
	accel_semaphore_fini(sem);
	free(s);
}

static void emb_sem_query(accel_semaphore_t *sem, uint64_t *value, int *error)
{
	struct emb_sem *s = to_emb(sem);

	pthread_mutex_lock(&s->lock);
	*value = s->value;
	*error = s->error;
	pthread_mutex_unlock(&s->lock);
}

static int emb_sem_signal(accel_semaphore_t *sem, uint64_t value,
			  const char *caller)
{
	struct emb_sem *s = to_emb(sem);
	uint64_t cur;
	int error;

	pthread_mutex_lock(&s->lock);
	error = s->error;
	cur = s->value;
	if (!error && value > cur) {
		s->value = value;
		if (value > s->submitted)
			s->submitted = value;
		fire_ready(s, 0);
	}
	unlock_sem(s);
	if (error)
		return accel_fail(-error,
			"%s: the semaphore has failed (%s): %s; a failed semaphore stays failed",
			caller, accel_errno_name(-error),
			accel_semaphore_failure_message(sem));
	if (value <= cur)
		return accel_fail(EINVAL,
			"%s: value %" PRIu64 " is not greater than the current value %" PRIu64 "; a timeline only moves forward",
			caller, value, cur);
	return 0;
}

static int emb_sem_fail(accel_semaphore_t *sem, int error, const char *message)
{
	struct emb_sem *s = to_emb(sem);

	pthread_mutex_lock(&s->lock);
	if (!s->error) {
		accel_semaphore_set_failure(sem, message);
		s->error = error;
		fire_ready(s, error);
	}
	unlock_sem(s);
	return 0;
}

/* Promises @value: ACCEL_SEMAPHORE_WAIT_SUBMITTED waiters up to it wake. */
static void emb_sem_promise(accel_semaphore_t *sem, uint64_t value)
{
	struct emb_sem *s = to_emb(sem);

	pthread_mutex_lock(&s->lock);
	if (!s->error && value > s->submitted) {
		s->submitted = value;
		fire_ready(s, 0);
	}
	unlock_sem(s);
}

/* ---- host waits ------------------------------------------------------- */

/* Under the semaphore's lock: bump the word, defer the wake. */
static void host_tp_fire(struct emb_timepoint *tp, int status)
{
	struct host_tp *h = (struct host_tp *)tp;

	atomic_fetch_add(&h->wait->word, 1);
	atomic_fetch_add(&h->wait->refs, 1);
	h->wake_next = pending_wakes;
	pending_wakes = h;
}

/* 0: satisfied; 1: not yet; <0: an entry failed. Sets *index. */
static int evaluate(uint32_t count, const struct accel_sched_point *p,
		    bool all, bool submitted, uint32_t *index)
{
	uint32_t done = 0;

	for (uint32_t i = 0; i < count; i++) {
		struct emb_sem *s = to_emb(p[i].sem);
		int error;
		bool ok;

		pthread_mutex_lock(&s->lock);
		error = s->error;
		ok = p[i].value <= (submitted ? s->submitted : s->value);
		pthread_mutex_unlock(&s->lock);
		if (error) {
			*index = i;
			return error;
		}
		if (!ok)
			continue;
		if (!all) {
			*index = i;
			return 0;
		}
		done++;
	}
	return done == count ? 0 : 1;
}

static int sleep_until(uint32_t count, const struct accel_sched_point *p,
		       bool all, bool submitted, int64_t deadline,
		       uint32_t *index)
{
	struct host_wait *w = calloc(1, sizeof(*w) + count * sizeof(w->tps[0]));
	int ret;

	if (!w)
		return accel_fail(ENOMEM, "accel_semaphore_list_wait: out of memory for %u waits", count);
	atomic_init(&w->word, 0);
	atomic_init(&w->refs, 1);
	for (uint32_t i = 0; i < count; i++) {
		w->tps[i].tp.value = p[i].value;
		w->tps[i].tp.submitted = submitted;
		w->tps[i].tp.fire = host_tp_fire;
		w->tps[i].wait = w;
		tp_arm_host(to_emb(p[i].sem), &w->tps[i].tp);
	}
	for (;;) {
		unsigned int seen = atomic_load(&w->word);

		ret = evaluate(count, p, all, submitted, index);
		if (ret <= 0)
			break;
		if (accel_now_ns() >= deadline) {
			ret = -ETIME;
			break;
		}
		accel_futex_wait(&w->word, seen, deadline);
	}
	for (uint32_t i = 0; i < count; i++)
		tp_disarm(to_emb(p[i].sem), &w->tps[i].tp);
	host_wait_put(w);
	return ret;
}

static int emb_sem_wait(accel_scheduler_t *sched, uint32_t count,
			const struct accel_sched_point *p, uint32_t flags,
			int64_t deadline, uint32_t *index)
{
	bool all = flags & ACCEL_SEMAPHORE_WAIT_ALL;
	bool submitted = flags & ACCEL_SEMAPHORE_WAIT_SUBMITTED;
	int ret = evaluate(count, p, all, submitted, index);

	if (ret <= 0)
		return ret;
	if (deadline <= 0 || accel_now_ns() >= deadline)
		return -ETIME;
	return sleep_until(count, p, all, submitted, deadline, index);
}

/* ---- jobs ------------------------------------------------------------- */

struct job_tp {
	struct emb_timepoint tp;
	struct accel_sched_job *job;
	uint32_t index;
};

static void job_tp_fire(struct emb_timepoint *tp, int status)
{
	struct job_tp *j = (struct job_tp *)tp;
	struct accel_sched_job *job = j->job;
	int none = 0;

	if (status && atomic_compare_exchange_strong(&job->wait_error, &none, status))
		atomic_store(&job->wait_index, j->index);
	if (atomic_fetch_sub(&job->pending, 1) == 1)
		accel_executor_push(job->executor, job);
}

static int emb_job_submit(accel_scheduler_t *sched, struct accel_sched_job *job)
{
	struct job_tp *tps = NULL;

	if (job->wait_count) {
		tps = calloc(job->wait_count, sizeof(*tps));
		if (!tps)
			return accel_fail(ENOMEM, "accel_queue_execute: out of memory for %u waits",
					  job->wait_count);
	}
	/* The point of no return. */
	job->priv = tps;
	atomic_init(&job->pending, job->wait_count + 1);
	atomic_init(&job->wait_error, 0);
	atomic_init(&job->wait_index, 0);
	atomic_init(&job->cancel_error, 0);
	atomic_init(&job->pipelined, false);
	for (uint32_t i = 0; i < job->signal_count; i++)
		emb_sem_promise(job->signals[i].sem, job->signals[i].value);
	for (uint32_t i = 0; i < job->wait_count; i++) {
		tps[i].tp.value = job->waits[i].value;
		tps[i].tp.fire = job_tp_fire;
		tps[i].job = job;
		tps[i].index = i;
		tp_arm(to_emb(job->waits[i].sem), &tps[i].tp);
	}
	if (atomic_fetch_sub(&job->pending, 1) == 1)
		accel_executor_push(job->executor, job);
	return 0;
}

/* ---- executors -------------------------------------------------------- */

static int emb_executor_create(accel_scheduler_t *sched, const char *name,
			       const struct accel_sched_queue_params *params,
			       struct accel_sched_executor **out)
{
	return accel_executor_thread_create(sched, name, out);
}

/* ---- the scheduler ---------------------------------------------------- */

static void embedded_destroy(accel_scheduler_t *s)
{
	free((struct accel_sched_embedded *)s);
}

static void embedded_query(const accel_scheduler_t *s,
			   accel_scheduler_info_t *info)
{
	/* No module: every kernel field stays zero or "". */
}

static const struct accel_scheduler_ops embedded_ops = {
	.destroy = embedded_destroy,
	.query = embedded_query,
	.sem_create = emb_sem_create,
	.sem_destroy = emb_sem_destroy,
	.sem_query = emb_sem_query,
	.sem_signal = emb_sem_signal,
	.sem_fail = emb_sem_fail,
	.sem_wait = emb_sem_wait,
	.executor_create = emb_executor_create,
	.executor_destroy = accel_executor_thread_destroy,
	.job_submit = emb_job_submit,
};

int accel_sched_embedded_open(accel_scheduler_t **out, char *why,
			      size_t why_len)
{
	struct accel_sched_embedded *e = calloc(1, sizeof(*e));

	if (!e) {
		accel_strfmt(why, why_len,
			     "out of memory allocating the embedded scheduler (%zu bytes)",
			     sizeof(*e));
		return -ENOMEM;
	}
	accel_scheduler_init(&e->base, ACCEL_SCHEDULER_EMBEDDED, &embedded_ops);
	*out = &e->base;
	return 0;
}
