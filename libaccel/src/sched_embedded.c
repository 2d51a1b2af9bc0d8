// SPDX-License-Identifier: MIT
/*
 * The embedded scheduler: the accelsched semantics in process, for machines
 * without the module (Documentation/syncobj.rst and sched.rst).
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
 * to the arbiter. Nothing orders jobs except these points, so a job
 * waiting on an unreached point never holds back a later independent one.
 *
 * Arbitration, with the module's semantics (kmod/sched_engine.c): one
 * engine per device URI with a credit limit (ACCEL_ENGINE_CREDITS, default
 * 4). A runnable job joins its queue's runnable list in submission order; the
 * engine releases (pushes to the queue's executor) while it has credits:
 * from the highest class with runnable work, the queue with the least
 * virtual time (device time * 1024 / weight; charged at release with the
 * job's predicted device time from the cost model, or the queue's running
 * average when it has none, and corrected by ->job_done with the measured
 * time). The credit comes back at ->job_settled, once the job's signals
 * are signalled: what they made runnable competes for it, as in the
 * module. A queue that becomes runnable
 * starts at its class's floor. A job whose wait failed skips the arbiter: it is not run.
 *
 * Deadlines, as the module's (kmod/sched_deadline.c): within a class, the
 * queue whose first runnable job with a deadline has the earliest latest
 * start (that deadline less the predictions of the queue's runnable jobs
 * up to it, looking at most EMB_DL_WALK deep) goes ahead of the fair-share
 * choice when that latest start is within the fair-share job's prediction
 * plus EMB_DL_SLACK_NS of now, and only while the queue's device time is at
 * most EMB_DL_LAG_NS past the fair-share queue's (there are no tenants
 * here: queues share alone). A semaphore remembers the job that made its
 * latest promise (@dl_job, cleared by ->job_done under its lock), so a
 * deadline set on a point (accel_semaphore_set_deadline()) finds that job
 * if it is not released yet; a pending job passes its deadline, less its
 * prediction, on to its waits' promisers, at most EMB_DL_VISITS along a
 * chain, one semaphore lock (and the arbiter's inside it) at a time.
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
#include "pool.h"
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
	/*
	 * A job's wait that a promise on the device @domain may meet
	 * (sem_device_promise): it then fires with @token, the device
	 * timeline value the job waits for on the device. NULL: only the
	 * point reached meets it.
	 */
	const void *domain;
	uint64_t token;
	void (*fire)(struct emb_timepoint *tp, int status);
};

struct emb_sem {
	accel_semaphore_t base;
	pthread_mutex_t lock;
	uint64_t value;
	uint64_t submitted;
	int error;
	struct emb_timepoint head; /* circular list sentinel */
	/* The latest promise by a job on a device (sem_device_promise). */
	const void *dev_domain;
	uint64_t dev_value;
	uint64_t dev_token;
	/* The job that made the latest promise, until its ->job_done. */
	struct accel_sched_job *dl_job;
	uint64_t dl_value;
};

struct emb_engine;

/*
 * struct accel_sched_embedded - the scheduler: its engines.
 * @lock:    the arbiter's lock: protects every engine and the scheduling
 *           fields of their queues and jobs. It nests inside semaphore
 *           locks (a job becomes runnable from a fire) and outside the
 *           executors' locks (a release pushes to an executor).
 * @engines: the engines that have queues, one per device URI.
 */
struct accel_sched_embedded {
	accel_scheduler_t base;
	pthread_mutex_t lock;
	struct emb_engine *engines;
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

void accel_futex_wake_one(atomic_uint *word)
{
	syscall(SYS_futex, word, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, 1, NULL, NULL, 0);
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

/* Met by a promise on its device: records the device value to wait for. */
static bool tp_device_met(const struct emb_sem *s, struct emb_timepoint *tp)
{
	if (!tp->domain || tp->domain != s->dev_domain || tp->value > s->dev_value)
		return false;
	tp->token = s->dev_token;
	return true;
}

/* Fires every timepoint that is satisfied now (or all, with @error). */
static void fire_ready(struct emb_sem *s, int error)
{
	struct emb_timepoint *tp = s->head.next, *next;

	for (; tp != &s->head; tp = next) {
		next = tp->next;
		if (!error && (tp->fail_only ||
			       (!tp_satisfied(s, tp) && !tp_device_met(s, tp))))
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
	else if (tp_satisfied(s, tp) || tp_device_met(s, tp))
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

/*
 * @job promises @value: ACCEL_SEMAPHORE_WAIT_SUBMITTED waiters up to it
 * wake, and a deadline set on it finds the job.
 */
static void emb_sem_promise(accel_semaphore_t *sem, uint64_t value,
			    struct accel_sched_job *job)
{
	struct emb_sem *s = to_emb(sem);

	pthread_mutex_lock(&s->lock);
	if (!s->dl_job || value >= s->dl_value) {
		s->dl_job = job;
		s->dl_value = value;
	}
	if (!s->error && value > s->submitted) {
		s->submitted = value;
		fire_ready(s, 0);
	}
	unlock_sem(s);
}

/*
 * A job submitted to device @domain brings @sem to @value once @domain's
 * timeline reaches @token: the jobs of that device waiting on @sem up to
 * @value become runnable, to wait for @token on the device. Only the
 * latest promise is kept (a later one of another device replaces it, and
 * a wait it does not cover is met on the host, as before).
 */
static void emb_sem_device_promise(accel_semaphore_t *sem, const void *domain,
				   uint64_t value, uint64_t token)
{
	struct emb_sem *s = to_emb(sem);

	pthread_mutex_lock(&s->lock);
	if (s->dev_domain != domain || value >= s->dev_value) {
		s->dev_domain = domain;
		s->dev_value = value;
		s->dev_token = token;
		if (!s->error)
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

/* ---- the arbiter ------------------------------------------------------ */

/* The weight that makes virtual time equal device time (the module's). */
#define EMB_WEIGHT_UNIT 1024
/* Credits of an engine when ACCEL_ENGINE_CREDITS does not say. */
#define EMB_ENGINE_CREDITS 4
#define EMB_ENGINE_CREDITS_MAX 65536

/*
 * struct emb_engine - the arbitration of one device (by URI).
 * @credits:      released jobs that may be in flight at once.
 * @in_flight:    released jobs not done yet.
 * @min_vruntime: per class, the floor a queue that becomes runnable
 *                starts from (it only grows): idling banks nothing.
 * @queues:       every queue on the engine.
 * @refs:         its queues; the last one frees it.
 */
struct emb_engine {
	struct emb_engine *next;
	char name[64];
	uint32_t credits;
	uint32_t in_flight;
	uint64_t min_vruntime[ACCEL_SCHED_PRIO_COUNT];
	struct emb_queue *queues;
	uint32_t refs;
};

/*
 * struct emb_queue - a queue's place in its engine (the executor's data).
 * @vruntime: device time consumed (estimated at release, corrected when
 *            done) times EMB_WEIGHT_UNIT over @weight.
 * @avg_ns:   running average of its jobs' device time: the charge of a
 *            release without a prediction.
 * @runnable: its runnable jobs not released yet, by submission number.
 * @dl_runnable: how many of them have a deadline.
 * @next_seq: the next job's submission number.
 */
struct emb_queue {
	struct emb_queue *next;
	struct emb_engine *engine;
	struct accel_sched_executor *executor;
	uint32_t priority;
	uint32_t weight;
	uint64_t vruntime;
	uint64_t avg_ns;
	struct emb_job *runnable;
	uint32_t dl_runnable;
	atomic_uint_fast64_t next_seq;
	struct accel_pool *pool; /* its jobs' struct emb_job (pool.h) */
};

struct job_tp {
	struct emb_timepoint tp;
	struct accel_sched_job *job;
	uint32_t index;
};

/*
 * struct emb_job - a job's arbitration state and its wait timepoints
 * (struct accel_sched_job.priv; one allocation from its queue's pool,
 * freed by the executor).
 * @charged: the device time charged at release (its prediction, else the
 *           queue's average).
 * @credit:  it holds one of its engine's credits.
 * @deadline: 0, or when its signals should be reached (it only moves
 *           earlier; the arbiter's lock).
 * @pred:    while listed: what it is predicted to take.
 * @listed:  in its queue's runnable jobs.
 * @released: pushed to its executor (run, or not run: a wait failed).
 */
struct emb_job {
	struct accel_sched_job *job;
	struct emb_queue *queue;
	struct emb_job *next;
	uint64_t seq;
	uint64_t charged;
	bool credit;
	int64_t deadline;
	uint64_t pred;
	bool listed;
	bool released;
	struct emb_engine *settle; /* a reference, from ->job_done to ->job_settled */
	struct job_tp tps[];
};

/* A job of this many waits or fewer takes its struct emb_job from its queue's pool. */
#define EMB_JOB_POOLED_WAITS 16
#define EMB_JOB_POOLED (sizeof(struct emb_job) + EMB_JOB_POOLED_WAITS * sizeof(struct job_tp))

static struct accel_sched_embedded *to_sched(accel_scheduler_t *s)
{
	return (struct accel_sched_embedded *)s;
}

/* Charges @ns (negative: a correction) of device time to @q. */
static void queue_charge_locked(struct emb_queue *q, int64_t ns)
{
	int64_t dv = ns * EMB_WEIGHT_UNIT / (int64_t)q->weight;

	q->vruntime = dv < 0 && (uint64_t)-dv > q->vruntime ? 0 : q->vruntime + (uint64_t)dv;
}

/* Deadlines (see the top of the file). */
#define EMB_DL_SLACK_NS 1000000
#define EMB_DL_LAG_NS 20000000
#define EMB_DL_WALK 64
#define EMB_DL_VISITS 16

/*
 * @q's latest start: its first runnable job with a deadline, less the
 * predictions of its runnable jobs up to it; INT64_MAX without one in its
 * first EMB_DL_WALK.
 */
static int64_t queue_lst_locked(const struct emb_queue *q)
{
	int64_t sum = 0;
	uint32_t n = 0;

	for (const struct emb_job *j = q->runnable; j && n < EMB_DL_WALK;
	     j = j->next, n++) {
		/* Saturating: a prediction of 2^63 ns or more puts it at 0. */
		sum = j->pred > (uint64_t)(INT64_MAX - sum) ? INT64_MAX : sum + (int64_t)j->pred;
		if (j->deadline)
			return j->deadline > sum ? j->deadline - sum : 0;
	}
	return INT64_MAX;
}

/*
 * The queue of class @p to release from ahead of @fair for a deadline, or
 * @fair: the earliest latest start, if near and within the lag bound.
 */
static struct emb_queue *pick_deadline_locked(struct emb_engine *e, uint32_t p,
					      struct emb_queue *fair)
{
	struct emb_queue *dq = NULL;
	int64_t lst = INT64_MAX;

	for (struct emb_queue *q = e->queues; q; q = q->next) {
		int64_t l;

		if (q->priority != p || !q->dl_runnable || !q->runnable)
			continue;
		l = queue_lst_locked(q);
		if (l < lst) {
			lst = l;
			dq = q;
		}
	}
	if (!dq || dq == fair ||
	    lst > accel_now_ns() + (int64_t)fair->runnable->pred + EMB_DL_SLACK_NS)
		return fair;
	if (dq->vruntime > fair->vruntime &&
	    (unsigned __int128)(dq->vruntime - fair->vruntime) * dq->weight >
	    (unsigned __int128)EMB_DL_LAG_NS * EMB_WEIGHT_UNIT)
		return fair;
	return dq;
}

/*
 * The queue to release from: strict class order, then least vruntime, but
 * a near deadline first (pick_deadline_locked()).
 */
static struct emb_queue *pick_locked(struct emb_engine *e)
{
	for (uint32_t p = 0; p < ACCEL_SCHED_PRIO_COUNT; p++) {
		struct emb_queue *best = NULL;
		bool deadlines = false;

		for (struct emb_queue *q = e->queues; q; q = q->next) {
			if (!q->runnable || q->priority != p)
				continue;
			deadlines |= q->dl_runnable != 0;
			if (!best || q->vruntime < best->vruntime)
				best = q;
		}
		if (best) {
			if (best->vruntime > e->min_vruntime[p])
				e->min_vruntime[p] = best->vruntime;
			return deadlines ? pick_deadline_locked(e, p, best) : best;
		}
	}
	return NULL;
}

/*
 * The most a release charges: an hour, as the module charges no job more
 * than its timeout (at most an hour). A prediction can be far larger (up
 * to UINT64_MAX, for a grid of costly workgroups), and a charge times
 * EMB_WEIGHT_UNIT must stay within an int64_t.
 */
#define EMB_CHARGE_MAX_NS (3600 * INT64_C(1000000000))

/*
 * What a release charges: the cost model's prediction, which is right from
 * a queue's first job and follows jobs that change size, else the queue's
 * running average of measured times, which lags both.
 */
static uint64_t release_charge(const struct emb_queue *q,
			       const struct accel_sched_job *job)
{
	uint64_t ns = job->predicted_ns ? job->predicted_ns : q->avg_ns;

	return ns < (uint64_t)EMB_CHARGE_MAX_NS ? ns : (uint64_t)EMB_CHARGE_MAX_NS;
}

/* Releases what the engine's credits allow. */
static void schedule_locked(struct emb_engine *e)
{
	while (e->in_flight < e->credits) {
		struct emb_queue *q = pick_locked(e);
		struct emb_job *j;

		if (!q)
			break;
		j = q->runnable;
		q->runnable = j->next;
		j->listed = false;
		j->released = true;
		if (j->deadline)
			q->dl_runnable--;
		j->credit = true;
		j->charged = release_charge(q, j->job);
		queue_charge_locked(q, (int64_t)j->charged);
		e->in_flight++;
		accel_executor_push(q->executor, j->job);
	}
}

/* Into its queue's runnable jobs, in submission order; then release. */
static void job_runnable(struct accel_sched_job *job)
{
	struct emb_job *j = job->priv;
	struct emb_queue *q = j->queue;
	struct accel_sched_embedded *es = to_sched(accel_executor_scheduler(job->executor));
	struct emb_job **at;

	pthread_mutex_lock(&es->lock);
	if (atomic_load(&job->wait_error)) {
		/* Not run: no credit, its signals fail at once. */
		j->released = true;
		pthread_mutex_unlock(&es->lock);
		accel_executor_push(job->executor, job);
		return;
	}
	if (!q->runnable)
		q->vruntime = q->vruntime > q->engine->min_vruntime[q->priority] ?
			      q->vruntime : q->engine->min_vruntime[q->priority];
	for (at = &q->runnable; *at && (*at)->seq < j->seq; at = &(*at)->next)
		;
	j->next = *at;
	*at = j;
	j->listed = true;
	j->pred = release_charge(q, job);
	if (j->deadline)
		q->dl_runnable++;
	schedule_locked(q->engine);
	pthread_mutex_unlock(&es->lock);
}

static void engine_put_locked(struct accel_sched_embedded *es,
			      struct emb_engine *e);

/*
 * ->job_done: correct the charge. The credit stays taken until the job's
 * signals are signalled (->job_settled); the engine stays with it, since
 * its queue, and so the queue's hold on the engine, may go before that.
 */
static void emb_job_done(accel_scheduler_t *sched, struct accel_sched_job *job)
{
	struct accel_sched_embedded *es = to_sched(sched);
	struct emb_job *j = job->priv;
	struct emb_queue *q = j->queue;
	uint64_t dt = job->device_ns;

	/* Before it is freed: no deadline may find it any more. */
	for (uint32_t i = 0; i < job->signal_count; i++) {
		struct emb_sem *s = to_emb(job->signals[i].sem);

		pthread_mutex_lock(&s->lock);
		if (s->dl_job == job)
			s->dl_job = NULL;
		unlock_sem(s);
	}
	if (!j->credit)
		return;
	pthread_mutex_lock(&es->lock);
	j->credit = false;
	queue_charge_locked(q, (int64_t)dt - (int64_t)j->charged);
	q->avg_ns = q->avg_ns ? (q->avg_ns * 7 + dt) / 8 : dt;
	j->settle = q->engine;
	j->settle->refs++;
	pthread_mutex_unlock(&es->lock);
}

/* ->job_settled: give the credit back and release the next. */
static void emb_job_settled(accel_scheduler_t *sched, struct accel_sched_job *job)
{
	struct accel_sched_embedded *es = to_sched(sched);
	struct emb_job *j = job->priv;
	struct emb_engine *e = j->settle;

	if (!e)
		return;
	j->settle = NULL;
	pthread_mutex_lock(&es->lock);
	e->in_flight--;
	schedule_locked(e);
	engine_put_locked(es, e);
	pthread_mutex_unlock(&es->lock);
}

/* ---- deadlines -------------------------------------------------------- */

/*
 * Give @j deadline @d if earlier than its own. Returns the deadline to pass
 * on to its waits' promisers (its latest start) when it is pending, else 0.
 */
static int64_t job_set_deadline_locked(struct emb_job *j, int64_t d)
{
	uint64_t pred;

	if (j->released || (j->deadline && j->deadline <= d))
		return 0;
	if (j->listed) {
		if (!j->deadline)
			j->queue->dl_runnable++;
		j->deadline = d;
		return 0;
	}
	j->deadline = d;
	pred = release_charge(j->queue, j->job);
	return pred < (uint64_t)d ? d - (int64_t)pred : 1;
}

struct dl_step {
	accel_semaphore_t *sem; /* a reference */
	uint64_t value;
	int64_t deadline;
};

/*
 * Give deadlines along @todo (@n steps), passing them on; at most
 * EMB_DL_VISITS visits. Drops the steps' references.
 */
static void deadline_walk(struct accel_sched_embedded *es, struct dl_step *todo,
			  uint32_t n)
{
	for (uint32_t visits = 0; n && visits < EMB_DL_VISITS; visits++) {
		struct dl_step st = todo[--n];
		struct emb_sem *s = to_emb(st.sem);
		struct accel_sched_job *job;

		pthread_mutex_lock(&s->lock);
		job = s->dl_job;
		if (job && !s->error && st.value > s->value && s->dl_value >= st.value) {
			int64_t pass;

			pthread_mutex_lock(&es->lock);
			pass = job_set_deadline_locked(job->priv, st.deadline);
			pthread_mutex_unlock(&es->lock);
			/* The job lives while it is @s's promiser: under its lock. */
			for (uint32_t i = 0; pass && i < job->wait_count &&
			     n < EMB_DL_VISITS; i++) {
				accel_semaphore_retain(job->waits[i].sem);
				todo[n++] = (struct dl_step){ job->waits[i].sem,
							      job->waits[i].value, pass };
			}
		}
		unlock_sem(s);
		accel_semaphore_release(st.sem);
	}
	while (n)
		accel_semaphore_release(todo[--n].sem);
}

static int emb_sem_set_deadline(accel_semaphore_t *sem, uint64_t value,
				int64_t deadline)
{
	struct dl_step step = { sem, value, deadline };

	accel_semaphore_retain(sem);
	deadline_walk(to_sched(sem->scheduler), &step, 1);
	return 0;
}

/* ---- jobs ------------------------------------------------------------- */

static void job_tp_fire(struct emb_timepoint *tp, int status)
{
	struct job_tp *j = (struct job_tp *)tp;
	struct accel_sched_job *job = j->job;
	int none = 0;

	if (status && atomic_compare_exchange_strong(&job->wait_error, &none, status))
		atomic_store(&job->wait_index, j->index);
	if (!status && tp->token) { /* met on the device: the largest value */
		uint_fast64_t cur = atomic_load(&job->device_wait);

		while (cur < tp->token &&
		       !atomic_compare_exchange_weak(&job->device_wait, &cur, tp->token))
			;
	}
	if (atomic_fetch_sub(&job->pending, 1) == 1)
		job_runnable(job);
}

static int emb_job_submit(accel_scheduler_t *sched, struct accel_sched_job *job)
{
	struct emb_queue *q = accel_executor_data(job->executor);
	size_t size = sizeof(struct emb_job) + job->wait_count * sizeof(struct job_tp);
	struct emb_job *j = accel_pool_alloc(q->pool, size);
	struct dl_step todo[EMB_DL_VISITS];
	uint32_t n = 0;
	struct job_tp *tps;

	if (!j)
		return accel_fail(ENOMEM, "accel_queue_execute: out of memory for %u waits",
				  job->wait_count);
	memset(j, 0, size);
	/* The point of no return. */
	j->job = job;
	j->queue = q;
	j->seq = atomic_fetch_add(&j->queue->next_seq, 1);
	tps = j->tps;
	job->priv = j;
	atomic_init(&job->pending, job->wait_count + 1);
	atomic_init(&job->wait_error, 0);
	atomic_init(&job->wait_index, 0);
	atomic_init(&job->cancel_error, 0);
	atomic_init(&job->pipelined, false);
	atomic_init(&job->device_wait, 0);
	j->deadline = job->deadline_ns;
	/*
	 * Its waits' promisers get its deadline, less its prediction (the
	 * charge its release will take: the queue's average without a cost
	 * model's, read under the arbiter's lock): taken now, since the job
	 * may run and go as soon as its waits are armed.
	 */
	if (job->deadline_ns && job->wait_count) {
		struct accel_sched_embedded *es = to_sched(sched);
		uint64_t pred;
		int64_t pass;

		pthread_mutex_lock(&es->lock);
		pred = release_charge(j->queue, job);
		pthread_mutex_unlock(&es->lock);
		pass = pred < (uint64_t)job->deadline_ns ?
		       job->deadline_ns - (int64_t)pred : 1;

		for (uint32_t i = 0; i < job->wait_count && n < EMB_DL_VISITS; i++) {
			accel_semaphore_retain(job->waits[i].sem);
			todo[n++] = (struct dl_step){ job->waits[i].sem,
						      job->waits[i].value, pass };
		}
	}
	for (uint32_t i = 0; i < job->signal_count; i++)
		emb_sem_promise(job->signals[i].sem, job->signals[i].value, job);
	for (uint32_t i = 0; i < job->wait_count; i++) {
		tps[i].tp.value = job->waits[i].value;
		tps[i].tp.fire = job_tp_fire;
		tps[i].tp.domain = job->domain;
		tps[i].job = job;
		tps[i].index = i;
		tp_arm(to_emb(job->waits[i].sem), &tps[i].tp);
	}
	if (atomic_fetch_sub(&job->pending, 1) == 1)
		job_runnable(job);
	if (n)
		deadline_walk(to_sched(sched), todo, n);
	return 0;
}

/* ---- executors -------------------------------------------------------- */

/* ACCEL_ENGINE_CREDITS, or the default; 0 with the message set if bad. */
static uint32_t engine_credits(const char *caller)
{
	const char *env = getenv("ACCEL_ENGINE_CREDITS");
	char *end;
	unsigned long v;

	if (!env || !*env)
		return EMB_ENGINE_CREDITS;
	errno = 0;
	v = strtoul(env, &end, 10);
	if (errno || *end || v < 1 || v > EMB_ENGINE_CREDITS_MAX) {
		accel_fail(EINVAL,
			"%s: ACCEL_ENGINE_CREDITS is \"%s\"; it must be a number in 1..%u (unset: %u)",
			caller, env, EMB_ENGINE_CREDITS_MAX, EMB_ENGINE_CREDITS);
		return 0;
	}
	return (uint32_t)v;
}

/* The engine named @name into *@out, made if none; 0 or -errno. */
static int engine_get_locked(struct accel_sched_embedded *es, const char *name,
			     const char *caller, struct emb_engine **out)
{
	struct emb_engine *e;
	uint32_t credits;

	for (e = es->engines; e; e = e->next)
		if (strcmp(e->name, name) == 0) {
			e->refs++;
			*out = e;
			return 0;
		}
	credits = engine_credits(caller);
	if (!credits)
		return -EINVAL;
	e = calloc(1, sizeof(*e));
	if (!e)
		return accel_fail(ENOMEM, "%s: out of memory", caller);
	accel_strfmt(e->name, sizeof(e->name), "%s", name);
	e->credits = credits;
	e->refs = 1;
	e->next = es->engines;
	es->engines = e;
	*out = e;
	return 0;
}

static void engine_put_locked(struct accel_sched_embedded *es,
			      struct emb_engine *e)
{
	struct emb_engine **at;

	if (--e->refs)
		return;
	for (at = &es->engines; *at != e; at = &(*at)->next)
		;
	*at = e->next;
	free(e);
}

static int emb_executor_create(accel_scheduler_t *sched, const char *name,
			       const struct accel_sched_queue_params *params,
			       struct accel_sched_executor **out)
{
	struct accel_sched_embedded *es = to_sched(sched);
	struct emb_queue *q = calloc(1, sizeof(*q));
	int err;

	if (q)
		q->pool = accel_pool_new(EMB_JOB_POOLED);
	if (!q || !q->pool) {
		free(q);
		return accel_fail(ENOMEM, "%s: out of memory", params->caller);
	}
	q->priority = params->priority;
	q->weight = params->weight;
	atomic_init(&q->next_seq, 0);
	err = accel_executor_thread_create(sched, name, &q->executor);
	if (err) {
		accel_pool_put(q->pool);
		free(q);
		return err;
	}
	pthread_mutex_lock(&es->lock);
	err = engine_get_locked(es, name, params->caller, &q->engine);
	if (!err) {
		q->vruntime = q->engine->min_vruntime[q->priority];
		q->next = q->engine->queues;
		q->engine->queues = q;
	}
	pthread_mutex_unlock(&es->lock);
	if (err) {
		accel_executor_thread_destroy(q->executor);
		accel_pool_put(q->pool);
		free(q);
		return err;
	}
	accel_executor_set_data(q->executor, q);
	*out = q->executor;
	return 0;
}

/* The queue's last job is done: nothing of it is left in the engine. */
static void emb_executor_destroy(struct accel_sched_executor *ex)
{
	struct emb_queue *q = accel_executor_data(ex);
	struct accel_sched_embedded *es = to_sched(accel_executor_scheduler(ex));
	struct emb_queue **at;

	accel_executor_thread_destroy(ex);
	pthread_mutex_lock(&es->lock);
	for (at = &q->engine->queues; *at != q; at = &(*at)->next)
		;
	*at = q->next;
	engine_put_locked(es, q->engine);
	pthread_mutex_unlock(&es->lock);
	accel_pool_put(q->pool);
	free(q);
}

/* ---- the scheduler ---------------------------------------------------- */

static void embedded_destroy(accel_scheduler_t *s)
{
	pthread_mutex_destroy(&to_sched(s)->lock);
	free(to_sched(s));
}

static void embedded_query(const accel_scheduler_t *s,
			   accel_scheduler_info_t *info)
{
	/* No module: every kernel field stays zero or "". */
}

/*
 * ---- sharing: needs the module ---------------------------------------
 *
 * An embedded semaphore lives in this process's memory: no fd can carry
 * it, and no other driver can wait on it. Say so, and how to get one that
 * can be shared.
 */
static int emb_unshared(const accel_scheduler_t *s, const char *fn,
			const char *what)
{
	return accel_fail(EOPNOTSUPP,
		"%s: %s needs the kernel scheduler (/dev/accelsched, the accelsched module); this process uses the embedded scheduler (%s)",
		fn, what, s->reason[0] ? s->reason : "no reason recorded");
}

static int emb_sem_export_fd(accel_semaphore_t *sem, int *fd)
{
	return emb_unshared(sem->scheduler, "accel_semaphore_export_fd",
			    "sharing a semaphore between processes");
}

static int emb_sem_import_fd(accel_scheduler_t *s, int fd,
			     accel_semaphore_t **out)
{
	return emb_unshared(s, "accel_semaphore_import_fd",
			    "sharing a semaphore between processes");
}

static int emb_sem_export_sync_file(accel_semaphore_t *sem, uint64_t value,
				    int *fd, const char *caller)
{
	return emb_unshared(sem->scheduler, caller,
			    "a sync_file (a pollable fence of a point)");
}

static int emb_sem_import_sync_file(accel_semaphore_t *sem, uint64_t value,
				    int fd)
{
	return emb_unshared(sem->scheduler, "accel_semaphore_import_sync_file",
			    "importing a sync_file as a point");
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
	.sem_export_fd = emb_sem_export_fd,
	.sem_import_fd = emb_sem_import_fd,
	.sem_export_sync_file = emb_sem_export_sync_file,
	.sem_import_sync_file = emb_sem_import_sync_file,
	.sem_set_deadline = emb_sem_set_deadline,
	.executor_create = emb_executor_create,
	.executor_destroy = emb_executor_destroy,
	.job_submit = emb_job_submit,
	.job_done = emb_job_done,
	.job_settled = emb_job_settled,
	.sem_device_promise = emb_sem_device_promise,
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
	pthread_mutex_init(&e->lock, NULL);
	*out = &e->base;
	return 0;
}
