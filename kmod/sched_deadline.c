// SPDX-License-Identifier: GPL-2.0
/*
 * DOC: deadlines
 *
 * A job may carry a deadline, absolute CLOCK_MONOTONIC: by then its signals
 * should be reached (an ACCEL_POINT_F_DEADLINE entry among its signals, a
 * deadline set on a point it promised, or one passed on by a waiter). Fair
 * share does not know when work is needed, only how much each queue had;
 * a deadline tells it when, and the release policy uses that within a
 * class, never across classes.
 *
 * **When a job goes ahead.** A runnable job's *latest start* is its
 * deadline less the predicted time of its queue's runnable jobs up to and
 * including it (a queue's jobs are released in submission order, so those
 * ahead of it go first): each job's prediction (&accel_sched_job.predicted_ns),
 * else its queue's running average. A queue's latest start is that of its
 * first runnable job with a deadline (&accel_queue.dl_lst); the engine
 * keeps, per class, its queues with one in a tree by it
 * (&accel_engine.dl). Each time the policy releases in a class it looks at
 * the earliest: if that latest start is no later than now plus the
 * predicted time of the job fair share would release instead plus the
 * module parameter deadline_slack_us (the next release may come only when
 * that job is done), the queue is released from ahead of fair share (the
 * tracepoint accelsched:job_ahead shows it). Earliest latest start first:
 * EDF among the jobs whose deadlines are near, fair share otherwise.
 *
 * **The bound.** Going ahead changes the order, not the charge: the queue
 * and its tenant are charged as for any release. So what deadlines give is
 * bounded by how far ahead they may run: a queue goes ahead only while its
 * tenant's vruntime is no more than deadline_lag_us (module parameter, of
 * the tenant's own engine time) past the tenant fair share would serve,
 * and the queue's no more than that past its tenant's first queue. Over
 * any interval, a tenant's deadlines take at most deadline_lag_us of
 * engine time beyond its share in the class (one more job, which may
 * start just before the bound is reached); a deadline that cannot be met,
 * or one in every job, gets no more. Among a tenant's own queues the same
 * bound holds.
 *
 * **Passing deadlines on.** A pending job cannot start before the jobs
 * that promised its waits: each gets the waiter's latest start (its
 * deadline less its prediction) as its own deadline, if earlier, and
 * passes it on in turn, in the walk of priority inheritance
 * (sched_inherit.c: one walk for both, at most 16 promisers, one engine
 * lock at a time). ACCEL_IOCTL_SYNCOBJ_SET_DEADLINE, and on kernels with fence
 * deadlines a dma_fence_set_deadline() on a point's fence
 * (SYNC_IOC_SET_DEADLINE on an exported sync_file, say), give the job that
 * promised the point a deadline the same way. A deadline only ever moves
 * earlier, and stops mattering at release.
 *
 * **Accounting.** A completed job with a deadline counts as met or missed
 * (completed after it, or timed out) on its engine (sysfs) and its queue
 * (fdinfo).
 *
 * **Locking.** Everything here is under the engine lock, except the walk,
 * which takes one engine lock at a time, and accel_sched_point_deadline(),
 * which takes the syncobj's lock to find the promiser first.
 */
#include <linux/math64.h>
#include <linux/module.h>
#include <linux/moduleparam.h>

#include "internal.h"
#include "sched_internal.h"
#include "trace.h"

static unsigned int accel_deadline_slack_us = 1000;
module_param_named(deadline_slack_us, accel_deadline_slack_us, uint, 0644);
MODULE_PARM_DESC(deadline_slack_us, "A job with a deadline goes ahead of fair share once its latest start is within the next job's predicted time plus this many microseconds (default 1000)");

static unsigned int accel_deadline_lag_us = 20000;
module_param_named(deadline_lag_us, accel_deadline_lag_us, uint, 0644);
MODULE_PARM_DESC(deadline_lag_us, "How far ahead of its fair share, in microseconds of its own engine time, a tenant's or queue's deadlines may take it (default 20000)");

/* What @job is predicted to take: its executor's word, else its queue's. */
static inline u64 accel_job_pred_locked(const struct accel_sched_job *job)
{
	return job->predicted_ns ?: job->queue->avg_ns;
}

static bool accel_dl_less(struct rb_node *a, const struct rb_node *b)
{
	return rb_entry(a, struct accel_queue, dl_rb)->dl_lst <
	       rb_entry(b, struct accel_queue, dl_rb)->dl_lst;
}

/*
 * The latest start of @q's first runnable job with a deadline: the deadline
 * less the predicted time of the queue's runnable jobs up to it (at least
 * its own, should the sums have drifted: a job put back out of order).
 */
static u64 accel_queue_dl_lst_locked(struct accel_queue *q)
{
	struct accel_sched_job *job =
		list_first_entry(&q->dl_jobs, struct accel_sched_job, dlink);
	u64 ahead = job->pred_end > q->pred_deq ? job->pred_end - q->pred_deq :
		    accel_job_pred_locked(job);

	return job->deadline_ns > ahead ? job->deadline_ns - ahead : 0;
}

/**
 * accel_queue_dl_update_locked() - put @q where it belongs in its engine's
 * deadline tree: by its latest start while it has a runnable job with a
 * deadline and is on its run queue; out of it otherwise.
 * @q: the queue.
 *
 * Context: the engine lock held.
 */
void accel_queue_dl_update_locked(struct accel_queue *q)
{
	struct rb_root_cached *root = &q->engine->dl[q->priority];

	lockdep_assert_held(&q->engine->lock);
	if (q->on_dl) {
		rb_erase_cached(&q->dl_rb, root);
		q->on_dl = false;
	}
	if (list_empty(&q->dl_jobs) || !q->on_rq)
		return;
	q->dl_lst = accel_queue_dl_lst_locked(q);
	rb_add_cached(&q->dl_rb, root, accel_dl_less);
	q->on_dl = true;
}

/*
 * Into @q's runnable jobs with a deadline, in submission order (usually
 * an append), unless there already; @q moves in its engine's tree if @job
 * is now its first.
 */
static void accel_queue_dl_link_locked(struct accel_queue *q,
				       struct accel_sched_job *job)
{
	struct accel_sched_job *it;

	if (list_empty(&job->dlink)) {
		list_for_each_entry_reverse(it, &q->dl_jobs, dlink)
			if (it->seq < job->seq)
				break;
		list_add(&job->dlink, &it->dlink);
	}
	if (q->dl_jobs.next == &job->dlink)
		accel_queue_dl_update_locked(q);
}

/**
 * accel_job_dl_runnable_locked() - @job, just added to its queue's
 * runnable list, counts among its queue's predictions, and its deadline,
 * if any, among its queue's.
 * @job: a runnable job, in its queue's runnable list.
 * @tail: it was appended (the usual case).
 *
 * Context: the engine lock held.
 */
void accel_job_dl_runnable_locked(struct accel_sched_job *job, bool tail)
{
	struct accel_queue *q = job->queue;
	u64 pred = accel_job_pred_locked(job);
	struct accel_sched_job *it;

	lockdep_assert_held(&job->engine->lock);
	q->pred_enq += pred;
	if (tail || list_is_first(&job->qlink, &q->runnable)) {
		job->pred_end = tail ? q->pred_enq : q->pred_deq + pred;
	} else {
		it = list_prev_entry(job, qlink);
		job->pred_end = it->pred_end + pred;
	}
	if (job->deadline_ns)
		accel_queue_dl_link_locked(q, job);
}

/**
 * accel_job_dl_leave_locked() - @job left its queue's runnable list
 * (released or cancelled).
 * @job: the job.
 * @released: it was released from the head: the queue's predictions ahead
 *            of its other jobs shrink by it.
 *
 * Context: the engine lock held.
 */
void accel_job_dl_leave_locked(struct accel_sched_job *job, bool released)
{
	struct accel_queue *q = job->queue;

	lockdep_assert_held(&job->engine->lock);
	if (released)
		q->pred_deq = job->pred_end;
	if (!list_empty(&job->dlink))
		list_del_init(&job->dlink);
	else if (!q->on_dl)
		return;
	accel_queue_dl_update_locked(q);
}

/*
 * How far ahead of @first's vruntime @v is, in the engine time of an owner
 * of @weight; 0 if not ahead.
 */
static inline u64 accel_dl_lag(u64 v, u64 first, u32 weight)
{
	return v > first ? mul_u64_u32_div(v - first, weight, ACCEL_WEIGHT_UNIT) : 0;
}

/**
 * accel_engine_dl_pick_locked() - the queue to release from ahead of fair
 * share for a deadline, or NULL.
 * @e:    the engine.
 * @p:    the class being served.
 * @fair: the queue fair share would release from.
 * @fent: its tenant's entity, the class's first.
 * @now:  the time of the release.
 *
 * Context: the engine lock held.
 */
struct accel_queue *accel_engine_dl_pick_locked(struct accel_engine *e, int p,
						struct accel_queue *fair,
						struct accel_entity *fent,
						u64 now)
{
	struct rb_node *n = rb_first_cached(&e->dl[p]);
	u64 lag = (u64)READ_ONCE(accel_deadline_lag_us) * NSEC_PER_USEC;
	struct accel_sched_job *next;
	struct accel_queue *q, *first;
	struct accel_entity *ent;

	lockdep_assert_held(&e->lock);
	if (!n)
		return NULL;
	q = rb_entry(n, struct accel_queue, dl_rb);
	if (q == fair)
		return NULL;
	next = list_first_entry(&fair->runnable, struct accel_sched_job, qlink);
	if (q->dl_lst > now + accel_job_pred_locked(next) +
			(u64)READ_ONCE(accel_deadline_slack_us) * NSEC_PER_USEC)
		return NULL;
	ent = q->ent;
	if (accel_dl_lag(ent->vruntime, fent->vruntime,
			 READ_ONCE(ent->tenant->weight)) > lag)
		return NULL;
	first = rb_entry(rb_first_cached(&ent->rq), struct accel_queue, rb);
	if (accel_dl_lag(q->vruntime, first->vruntime, q->weight) > lag)
		return NULL;
	e->nr_ahead++;
	next = list_first_entry(&q->runnable, struct accel_sched_job, qlink);
	trace_job_ahead(next->afile->client_id, e->name, q->handle, next->id,
			p, list_first_entry(&q->dl_jobs, struct accel_sched_job,
					    dlink)->deadline_ns, q->dl_lst);
	return q;
}

/**
 * accel_job_dl_count_locked() - count @job's deadline as met or missed.
 * @job: a job with a deadline, completed at @now or timed out (@now 0).
 * @now: when.
 *
 * Context: the engine lock held.
 */
void accel_job_dl_count_locked(struct accel_sched_job *job, u64 now)
{
	struct accel_queue *q = job->queue;

	lockdep_assert_held(&job->engine->lock);
	if (now && now <= job->deadline_ns) {
		job->engine->nr_deadlines_met++;
		q->nr_deadlines_met++;
	} else {
		job->engine->nr_deadlines_missed++;
		q->nr_deadlines_missed++;
	}
}

/*
 * The deadline @job (pending) passes on to its promisers, its latest
 * start: its deadline less its prediction (at least 1); 0 without one.
 */
u64 accel_job_dl_passed_locked(struct accel_sched_job *job)
{
	u64 pred;

	lockdep_assert_held(&job->engine->lock);
	if (!job->deadline_ns)
		return 0;
	pred = accel_job_pred_locked(job);
	return job->deadline_ns > pred ? job->deadline_ns - pred : 1;
}

/*
 * Give @job (not yet released) deadline @d if it is earlier than its own.
 * Returns the deadline to pass on to its promisers (its latest start) if
 * it is pending and its deadline moved; 0 otherwise. For the walk of
 * sched_inherit.c.
 */
u64 accel_job_set_deadline_locked(struct accel_sched_job *job, u64 d)
{
	lockdep_assert_held(&job->engine->lock);
	if (job->state != ACCEL_JOB_PENDING && job->state != ACCEL_JOB_RUNNABLE)
		return 0;
	if (job->deadline_ns && job->deadline_ns <= d)
		return 0;
	if (job->state == ACCEL_JOB_RUNNABLE) {
		job->deadline_ns = d;
		accel_queue_dl_link_locked(job->queue, job);
		return 0;
	}
	job->deadline_ns = d;
	return accel_job_dl_passed_locked(job);
}

/**
 * accel_sched_point_deadline() - someone needs @point of @s reached by
 * @deadline: the job that promised it, if not yet released, takes it.
 * @s:        the syncobj.
 * @point:    the point.
 * @deadline: absolute CLOCK_MONOTONIC ns, not 0.
 *
 * Context: any context (a fence's set_deadline); takes the syncobj's lock
 * and then, one at a time, engine locks.
 */
void accel_sched_point_deadline(struct accel_syncobj *s, u64 point, u64 deadline)
{
	u64 value, submitted;
	struct kref *ref;
	int error;

	/* A point reached needs nothing, whoever promised it last. */
	accel_syncobj_query(s, &value, &submitted, &error);
	if (point <= value || error)
		return;
	ref = accel_syncobj_promiser_get(s, point);
	if (!ref)
		return;
	accel_walk_deadline(container_of(ref, struct accel_sched_job, ref),
			    deadline);
}
