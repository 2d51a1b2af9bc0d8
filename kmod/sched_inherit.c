// SPDX-License-Identifier: GPL-2.0
/*
 * DOC: priority inheritance along sync points
 *
 * Strict priority between classes inverts when a job of a higher class
 * waits on a point that a job of a lower class promised: the waiter cannot
 * run before the promiser, and the promiser, behind a flood of its own
 * class, runs last. So a waiter *boosts* the jobs it depends on, as an
 * rt_mutex waiter boosts the lock's owner.
 *
 * **When.** When a job of class C is armed, each of its waits not yet
 * reached is resolved to the job that made its syncobj's latest promise,
 * if that promise is at or above the point waited on (reaching it reaches
 * the point too; a syncobj remembers only its latest promise). A promiser
 * of a lower class that is not yet released is boosted to C:
 *
 * - a *runnable* promiser raises its queue to C: the queue is served in
 *   class C, after C's own runnable queues and before every lower class
 *   (from the engine's &accel_engine.boosted[C], in the order queues were
 *   raised), until the boosted job is released, as a task boosted by an
 *   rt_mutex queues behind the tasks already runnable at its new priority:
 *   work that is of class C is never delayed by a boost. The queue's
 *   runnable jobs ahead of it go first, as submission order on a queue is
 *   kept (like the critical section of a boosted lock holder);
 * - a *pending* promiser keeps the boost for when it becomes runnable, and
 *   passes it on to its own promisers, transitively.
 *
 * Points are shared, so this works across queues, files, processes and
 * engines. The boost ends when the job is released (or fails, or is
 * cancelled): the tracepoints accelsched:job_boost and job_boost_end show
 * both ends. It is not withdrawn if the waiter goes first: what a boost
 * costs the others is bounded by the boosted job and its queue's runnable
 * jobs ahead of it. A queue with several boosted jobs is served as the best
 * class among them until the last is released.
 *
 * **Bound.** Inheritance runs once per submission, in the submitting task,
 * after the job is armed, and visits at most %ACCEL_INHERIT_MAX (16)
 * promisers, depth first. A visit holds only the visited job's engine
 * lock, for O(1) plus a look at the job's own waits (at most
 * %ACCEL_JOB_MAX_POINTS): never a walk of the graph under an engine lock,
 * never two engine locks at once, so engines are visited in any order. A
 * chain longer than the bound is boosted along its first 16 promisers; the
 * rest run at their own class, which delays the waiter but changes nothing
 * else (order and completion are the points' business, not the policy's).
 * Promises made after the waiter was armed (wait before signal) are not
 * seen. The same walk passes a waiter's deadline on (sched_deadline.c): a
 * visit boosts and gives the deadline at once and passes on whichever
 * took, so a submission makes one walk of at most 16 visits for both. A
 * deadline set on a point later walks from the point's promiser alone.
 *
 * **Lifetimes.** A syncobj keeps a weak reference to its latest promiser
 * (accel_syncobj_promiser_get() takes a reference only while the job's
 * count is not zero, and accel_job_free() forgets the promise under the
 * syncobj's lock before the job's memory goes back to its engine's pool):
 * a job found so may be of any file, or already released, completed or
 * cancelled, and is then left alone. A pending job holds a reference to
 * each promiser it resolved (&accel_job_dep.promiser), read only under its
 * engine lock while it is pending, and dropped once it is not
 * (accel_job_drop_promisers()), so a visit never meets a freed job, nor a
 * job whose queue or file went: those are dereferenced only while the job
 * is pending or runnable, under its engine lock, and a queue or file goes
 * only after cancelling its jobs under the same lock.
 *
 * The module parameter priority_inheritance (writable by the
 * administrator at run time) turns it off for later submissions.
 */
#include <linux/module.h>
#include <linux/moduleparam.h>

#include "internal.h"
#include "sched_internal.h"
#include "trace.h"

bool accel_inherit = true;
module_param_named(priority_inheritance, accel_inherit, bool, 0644);
MODULE_PARM_DESC(priority_inheritance, "A job waiting on a point promised by an unreleased job of a lower class raises that job (and, transitively, its promisers) to its class until its release (default Y)");

/* The most promisers one submission visits (see the DOC block). */
#define ACCEL_INHERIT_MAX 16

#define ACCEL_JOB_BOOST_TRACE(ev, job)                                       \
	trace_job_##ev((job)->afile->client_id, accel_job_engine(job),        \
		       (job)->qhandle, (job)->id, (job)->priority, (job)->boost)

/**
 * __accel_job_find_promisers() - resolve the promisers of @job's waits.
 * @job: a job being armed, before it promises its own points.
 *
 * Each wait not yet reached takes a reference to the job that made its
 * syncobj's latest promise covering the point, if any: for boosts, and for
 * deadlines (sched_deadline.c), which pass along the same references, so
 * even with priority_inheritance off. Resolved before
 * @job's own promises are published, so no one visits @job meanwhile and
 * no job is its own promiser.
 *
 * Context: process context; takes syncobj locks.
 */
void __accel_job_find_promisers(struct accel_sched_job *job)
{
	u32 i;

	for (i = 0; i < job->nwaits; i++) {
		struct accel_job_dep *d = &job->deps[i];
		struct kref *ref;

		if (dma_fence_is_signaled(d->fence))
			continue;
		ref = accel_syncobj_promiser_get(d->s, d->point);
		if (ref)
			d->promiser = container_of(ref, struct accel_sched_job, ref);
	}
}

/**
 * __accel_job_drop_promisers() - drop @job's references to its promisers.
 * @job: a job no longer pending (or being freed).
 *
 * Visits read them only while @job is pending, under its engine lock, so
 * once the caller saw @job leave that state under the lock, none reads
 * them any more.
 *
 * Context: process context, no lock held: a reference may be the last.
 */
void __accel_job_drop_promisers(struct accel_sched_job *job)
{
	u32 i;

	for (i = 0; i < job->nwaits; i++) {
		struct accel_sched_job *p = xchg(&job->deps[i].promiser, NULL);

		if (p)
			accel_job_put(p);
	}
}

/**
 * accel_job_runnable_boost_locked() - a boosted job is runnable: raise its
 * queue.
 * @job: a runnable job, in its queue's runnable list.
 *
 * Counts @job among its queue's boosted jobs (once) and serves the queue
 * as the best class among them, from its engine's list for that class. A
 * queue off its run queue (destroyed, its jobs about to be cancelled) is
 * counted but not listed.
 *
 * Context: the job's engine lock held.
 */
void accel_job_runnable_boost_locked(struct accel_sched_job *job)
{
	struct accel_engine *e = job->engine;
	struct accel_queue *q = job->queue;
	bool listed = !list_empty(&q->blink);
	u32 was = q->boost;

	lockdep_assert_held(&e->lock);
	if (!job->boosted || job->state != ACCEL_JOB_RUNNABLE)
		return;
	if (!job->qboost) {
		job->qboost = true;
		if (!q->nr_boosted++)
			q->boost = job->boost;
	}
	q->boost = min(q->boost, job->boost);
	if (q->on_rq && (!listed || q->boost != was))
		list_move_tail(&q->blink, &e->boosted[q->boost]);
}

/**
 * __accel_job_unboost_locked() - @job's boost ends: it is released, failed
 * or cancelled (accel_job_unboost_locked(), which calls this only for a
 * boosted job).
 * @job: a boosted job not yet DONE (its queue and file are still there).
 *
 * Context: the job's engine lock held.
 */
void __accel_job_unboost_locked(struct accel_sched_job *job)
{
	struct accel_queue *q = job->queue;

	lockdep_assert_held(&job->engine->lock);
	job->boosted = false;
	ACCEL_JOB_BOOST_TRACE(boost_end, job);
	if (!job->qboost)
		return;
	job->qboost = false;
	if (!--q->nr_boosted)
		list_del_init(&q->blink);
}

/*
 * Raise @job to class @prio, if it is of a lower one and not yet released.
 * Returns whether to pass the boost on to its promisers: it is pending.
 */
static bool accel_job_boost_locked(struct accel_sched_job *job, u32 prio)
{
	lockdep_assert_held(&job->engine->lock);
	if (job->state != ACCEL_JOB_PENDING && job->state != ACCEL_JOB_RUNNABLE)
		return false;
	if (job->priority <= prio || (job->boosted && job->boost <= prio))
		return false;
	job->boost = prio;
	job->boosted = true;
	ACCEL_JOB_BOOST_TRACE(boost, job);
	if (job->state == ACCEL_JOB_PENDING)
		return true;
	accel_job_runnable_boost_locked(job);
	return false;
}

/* A walk step that boosts nothing (it carries only a deadline). */
#define ACCEL_NO_BOOST ACCEL_PRIORITY_COUNT

/* A step of the walk: a promiser, with a reference, and what it inherits. */
struct accel_walk_step {
	struct accel_sched_job *job;
	u64 deadline; /* 0: none */
	u32 prio;     /* ACCEL_NO_BOOST: none */
};

/*
 * Push the promisers of @job (pending, its engine lock held) on @todo,
 * which holds @n, up to ACCEL_INHERIT_MAX, each to inherit @prio and
 * @deadline; the new count.
 */
static u32 accel_walk_push_locked(struct accel_sched_job *job, u32 prio,
				  u64 deadline, struct accel_walk_step *todo,
				  u32 n)
{
	u32 i;

	lockdep_assert_held(&job->engine->lock);
	for (i = 0; i < job->nwaits && n < ACCEL_INHERIT_MAX; i++) {
		struct accel_sched_job *p = job->deps[i].promiser;

		if (p) {
			kref_get(&p->ref);
			todo[n++] = (struct accel_walk_step){ p, deadline, prio };
		}
	}
	return n;
}

/*
 * The bounded walk of the DOC block, from @todo (@n steps): at most
 * %ACCEL_INHERIT_MAX visits, each under the visited job's engine lock only,
 * boosting and giving deadlines (sched_deadline.c) in the same visit, and
 * passing on what took. Drops the steps' references. Any context.
 */
static void accel_walk(struct accel_walk_step *todo, u32 n)
{
	u32 visits;

	for (visits = 0; n && visits < ACCEL_INHERIT_MAX; visits++) {
		struct accel_walk_step s = todo[--n];
		struct accel_engine *e = s.job->engine;
		u32 prio = ACCEL_NO_BOOST;
		unsigned long flags;
		u64 d = 0;

		spin_lock_irqsave(&e->lock, flags);
		if (s.prio != ACCEL_NO_BOOST && accel_job_boost_locked(s.job, s.prio))
			prio = s.prio;
		if (s.deadline)
			d = accel_job_set_deadline_locked(s.job, s.deadline);
		if (prio != ACCEL_NO_BOOST || d)
			n = accel_walk_push_locked(s.job, prio, d, todo, n);
		spin_unlock_irqrestore(&e->lock, flags);
		accel_job_put(s.job);
	}
	while (n)
		accel_job_put(todo[--n].job);
}

/**
 * accel_job_inherit() - boost the promisers @job waits on to its class,
 * and pass its deadline on to them, in one walk.
 * @job: a job just armed.
 *
 * Context: process context, no lock held.
 */
void accel_job_inherit(struct accel_sched_job *job)
{
	struct accel_walk_step todo[ACCEL_INHERIT_MAX];
	struct accel_engine *e = job->engine;
	u32 prio = job->priority, n = 0;
	u64 d;

	if (!READ_ONCE(accel_inherit) || prio == ACCEL_PRIORITY_COUNT - 1)
		prio = ACCEL_NO_BOOST; /* nothing to boost */
	if (prio == ACCEL_NO_BOOST && !READ_ONCE(job->deadline_ns))
		return;
	spin_lock_irq(&e->lock);
	if (job->state == ACCEL_JOB_PENDING) {
		d = accel_job_dl_passed_locked(job);
		if (prio != ACCEL_NO_BOOST || d)
			n = accel_walk_push_locked(job, prio, d, todo, 0);
	}
	spin_unlock_irq(&e->lock);
	accel_walk(todo, n);
}

/**
 * accel_walk_deadline() - give @job, and along the walk its promisers,
 * deadline @d.
 * @job: a job, whose reference this takes over.
 * @d:   absolute CLOCK_MONOTONIC ns, not 0.
 *
 * Context: any context; no engine lock held.
 */
void accel_walk_deadline(struct accel_sched_job *job, u64 d)
{
	struct accel_walk_step todo[ACCEL_INHERIT_MAX] = {
		{ .job = job, .deadline = d, .prio = ACCEL_NO_BOOST },
	};

	accel_walk(todo, 1);
}
