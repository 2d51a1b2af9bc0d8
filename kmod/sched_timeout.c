// SPDX-License-Identifier: GPL-2.0
/*
 * DOC: job timeouts
 *
 * Each engine keeps its released jobs in a list by expiry (the release
 * plus the job's timeout), and one delayed work per engine fires at the
 * earliest: it fails the jobs past their expiry with -ETIMEDOUT, gives
 * their credits back, releases what the credits then allow, and pushes a
 * TIMEDOUT event to each job's executor once its points have failed (a
 * late COMPLETE is refused).
 * Completing or cancelling a job only unlinks it, and a release queues the
 * work only when it is not queued already for an earlier time, so the hot
 * path touches a timer about once per timeout period, not once per job:
 * a submission that finds its engine idle would otherwise queue the work
 * and its COMPLETE cancel it again, a timer add and delete per job, more
 * than the rest of the release. The price is at most one run of the work
 * per timeout period that finds nothing expired; it queues itself again
 * for the first job then, or stays idle when there is none.
 *
 * **Locking.** The list and the work's armed flag are under the engine's
 * spinlock (interrupts off); the expired jobs' points are failed after it
 * is dropped, with no engine lock held. The work holds no engine
 * reference: freeing the engine cancels it (accel_engine_free()), and the
 * work may itself put the engine's last job.
 */
#include "internal.h"
#include "sched_internal.h"
#include "trace.h"

/*
 * Queue (or move) the engine's timeout work to run at @expires
 * (accel_timeout_add_locked(), inline in sched_internal.h for the
 * submission path, decides when). The work holds no engine reference;
 * freeing the engine cancels it (accel_engine_free()).
 */
void accel_timeout_arm_locked(struct accel_engine *e, u64 expires)
{
	u64 now = ktime_get_ns();
	unsigned long delay = expires > now ?
		nsecs_to_jiffies(expires - now) + 1 : 0;

	lockdep_assert_held(&e->lock);
	e->timeout_armed = true;
	e->timeout_at = expires;
	mod_delayed_work(accel_wq, &e->timeout_work, delay);
}

/*
 * Unlink a job from the released list. The work stays queued if the list
 * empties: the next release most likely needs it again, and a run that
 * finds nothing costs less than a cancel and a queue per job.
 */
void accel_timeout_del_locked(struct accel_engine *e,
			      struct accel_sched_job *job)
{
	lockdep_assert_held(&e->lock);
	list_del_init(&job->tlink);
}

void accel_engine_timeout(struct work_struct *work)
{
	struct accel_engine *e =
		container_of(to_delayed_work(work), struct accel_engine, timeout_work);
	struct accel_sched_job *job, *tmp;
	LIST_HEAD(expired);
	u64 now = ktime_get_ns();

	spin_lock_irq(&e->lock);
	list_for_each_entry_safe(job, tmp, &e->released, tlink) {
		if (job->expires > now)
			break;
		list_move_tail(&job->tlink, &expired);
		job->state = ACCEL_JOB_TIMEDOUT;
		e->in_flight--;
		job->queue->nr_in_flight--; /* released: its queue is here */
		e->nr_timedout++;
		if (job->deadline_ns)
			accel_job_dl_count_locked(job, 0);
		kref_get(&job->ref);
		ACCEL_JOB_TRACE(timeout, job);
	}
	/* Past the expired ones: the first still to expire, if any. */
	job = list_first_entry_or_null(&e->released, struct accel_sched_job, tlink);
	if (job)
		accel_timeout_arm_locked(e, job->expires);
	else
		e->timeout_armed = false;
	accel_engine_schedule_locked(e);
	spin_unlock_irq(&e->lock);
	/*
	 * The points fail before the executor hears of it, so that one that
	 * reads TIMEDOUT finds them failed (libaccel relies on it). The
	 * file is still here: its release flushes this work before it
	 * drains its events.
	 */
	list_for_each_entry_safe(job, tmp, &expired, tlink) {
		list_del_init(&job->tlink);
		accel_job_signal(job, -ETIMEDOUT);
		local_irq_disable(); /* the event lock is taken with them off */
		accel_event_push_locked(job, &job->ev_timedout,
					ACCEL_JOB_EVENT_TIMEDOUT, -ETIMEDOUT);
		local_irq_enable();
		accel_job_put(job); /* the last may free the engine: see its free */
	}
}
