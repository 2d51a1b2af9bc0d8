// SPDX-License-Identifier: GPL-2.0
/*
 * DOC: jobs
 *
 * A job's life, in the DRM scheduler's discipline: accel_job_init() does
 * everything fallible (copying, lookups, allocations, the fences of the
 * waits, the id), accel_job_arm() is the point of no return (promising the
 * signals, arming the waits) and cannot fail. Each wait is a callback on
 * its point's fence; the last one puts the job on its engine's ready list,
 * whose kick makes it runnable (accel_job_ready_locked()), or failed if a
 * wait failed. A job whose waits not yet reached are all promised by jobs
 * of its file already released to its engine is pipelined: runnable at
 * once (accel_job_try_pipeline()). Released by the policy
 * (accel_job_release_locked()), a job is answered to its executor through
 * its pending io_uring SUBMIT or by an event pushed to its file; a job that
 * asked for events (ACCEL_JOB_F_EVENTS) never leaves a SUBMIT pending, and
 * learns a failure before release by a FAILED event too. COMPLETE
 * (accel_job_do_complete()) reaches or fails its points;
 * accel_job_cancel() fails a job not completed. Its id stays in its file's
 * table until it is unlinked, which drops the table's reference; the last
 * reference gives its memory to its engine's pool (to the slab under
 * KASAN, pool.h). The inline io_uring SUBMIT
 * (accel_uring_job_submit_inline()) is here too: its job is read from the
 * SQE where the submission is compiled, one function from its uring_cmd
 * to its answer.
 *
 * **Locking.** A job's state, like its queue's scheduling fields, is under
 * its engine's spinlock (interrupts off); the file's event lock nests
 * inside it. Fence callbacks (accel_job_dep_cb()) take no engine lock,
 * and take their reference on the job only after the decrement that tells
 * a COMPLETE the waits are reached: whatever drops a job's references
 * while a wait may still be calling back first removes its callbacks
 * (accel_job_disarm(), which waits for one running under its fence's
 * lock). Decisions made under the engine lock are not read again from
 * the job after it: the state may have moved on another thread.
 * Syncobjs are promised, signalled and failed with no engine lock held
 * (accel_job_arm(), accel_job_signal()). The file's id table has its own
 * lock (idtable.c). A job holds a reference to its engine.
 */
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "internal.h"
#include "sched_internal.h"
#include "trace.h"

struct kmem_cache *accel_job_cache;

/* ---------------------------------------------------------------- jobs */

static void accel_job_free(struct kref *ref)
{
	struct accel_sched_job *job = container_of(ref, struct accel_sched_job, ref);
	struct accel_engine *e;
	u32 i;

	for (i = 0; i < job->nwaits; i++) {
		/*
		 * Every wait has fired (the fence unlinks the callback before
		 * calling it) or was disarmed (accel_job_disarm()): a callback
		 * still linked would call into this job once it is reused.
		 */
		WARN_ON_ONCE(!list_empty(&job->deps[i].cb.node));
		if (job->deps[i].fence)
			dma_fence_put(job->deps[i].fence);
		accel_syncobj_put(job->deps[i].s);
	}
	/* A pipelined job that timed out still holds them. */
	accel_job_drop_promisers(job);
	for (i = 0; i < job->nsignals; i++) {
		/* No promise leads here once the memory is reused. */
		accel_syncobj_forget_promiser(job->sigs[i].s, &job->ref);
		accel_syncobj_put(job->sigs[i].s);
	}
	if (job->deps != job->deps_inline)
		kfree(job->deps);
	if (job->sigs != job->sigs_inline)
		kfree(job->sigs);
	if (job->task)
		put_task_struct(job->task);
	/*
	 * A pooled job keeps its links (accel_job_init()): each must be
	 * empty. Checked where jobs go back to the slab, with KASAN, whose
	 * kernel runs every suite; a pool's kernel would not pay for it.
	 */
	if (!ACCEL_POOLING)
		WARN_ON_ONCE(!list_empty(&job->qlink) || !list_empty(&job->wlink) ||
			     !list_empty(&job->tlink) || !list_empty(&job->flink) ||
			     !list_empty(&job->dlink) ||
			     !list_empty(&job->ev_released.link) ||
			     !list_empty(&job->ev_timedout.link));
	e = job->engine;
	accel_engine_pool_put(e, job);
	accel_engine_put(e);
}

void accel_job_put(struct accel_sched_job *job)
{
	kref_put(&job->ref, accel_job_free);
}

/* Off its engine's follower list (see accel_job_try_pipeline()). */
static void accel_job_unfollow_locked(struct accel_sched_job *job)
{
	lockdep_assert_held(&job->engine->lock);
	if (!list_empty(&job->flink)) {
		list_del_init(&job->flink);
		job->engine->nr_followers--;
	}
}

bool accel_event_push_locked(struct accel_sched_job *job,
			     struct accel_event_node *n, u32 type,
			     int status)
{
	struct accel_file *afile = job->afile;

	n->ev = (struct accel_job_event){
		.user_data = job->user_data, .id = job->id, .type = type,
		.status = status,
		.flags = job->pipelined && type == ACCEL_JOB_EVENT_RELEASED ?
			 ACCEL_JOB_RES_PIPELINED : 0,
	};
	spin_lock(&afile->events_lock);
	/* A TIMEDOUT that a late COMPLETE overtook: nobody would fetch it. */
	if (unlikely(job->events_closed)) {
		spin_unlock(&afile->events_lock);
		return false;
	}
	kref_get(&job->ref);
	list_add_tail(&n->link, &afile->events);
	spin_unlock(&afile->events_lock);
	/* Queued by a COMPLETE_FETCH's COMPLETE: that call fetches it. */
	if (READ_ONCE(afile->fetcher) != current)
		wake_up_interruptible(&afile->events_wq);
	return true;
}

/*
 * The job leaves its file's and tenant's counts (max_jobs, tenant_max_jobs):
 * when it leaves the id table (accel_job_unlink()), or, for a job failed
 * with a FAILED event, when that event leaves the file's list.
 */
void accel_job_uncount(struct accel_sched_job *job)
{
	atomic_dec(&job->afile->nr_jobs);
	atomic_dec(&job->afile->tenant->nr_jobs);
}

/* The job an event node is embedded in (a FAILED job was never released). */
struct accel_sched_job *accel_event_job(struct accel_event_node *n)
{
	if (n->ev.type == ACCEL_JOB_EVENT_TIMEDOUT)
		return container_of(n, struct accel_sched_job, ev_timedout);
	return container_of(n, struct accel_sched_job, ev_released);
}

/*
 * A SUBMIT's answer, in its task. The file's count of answers in transit
 * drops only once the CQE is posted: io_uring posts it in done(), or (a
 * task work run under the ring's lock) before that lock is dropped, and
 * a SUBMIT is issued under the same lock. The file is still here: the
 * request holds it, and a last fput() is deferred past this callback.
 */
static void accel_submit_tw(struct io_uring_cmd *cmd, unsigned int issue_flags)
{
	struct accel_submit_pdu *pdu = accel_uring_cmd_pdu(cmd, struct accel_submit_pdu);
	struct accel_file *afile = cmd->file->private_data;
	struct accel_sched_job *job = pdu->job;
	int res = pdu->res;

	accel_uring_cmd_done(cmd, res, res >= 0 ? ACCEL_URING_SEQ_VALID | pdu->seq : 0,
			     issue_flags);
	atomic_dec(&afile->answers_in_transit);
	accel_job_put(job);
}

/* Complete the job's pending SUBMIT with @res, if it has one. */
static void accel_job_answer_locked(struct accel_sched_job *job, int res)
{
	struct io_uring_cmd *cmd = job->cmd;
	struct accel_submit_pdu *pdu;
	struct accel_file *afile;

	lockdep_assert_held(&job->engine->lock);
	if (!cmd)
		return;
	job->cmd = NULL;
	pdu = accel_uring_cmd_pdu(cmd, struct accel_submit_pdu);
	pdu->res = res;
	pdu->seq = job->answer_seq;
	afile = cmd->file->private_data;
	atomic_inc(&afile->answers_in_transit);
	io_uring_cmd_complete_in_task(cmd, accel_submit_tw);
}

static int accel_job_release_res(const struct accel_sched_job *job)
{
	return job->id | (job->pipelined ? ACCEL_JOB_RES_PIPELINED : 0);
}

/*
 * Count a release of @q's job that waited @latency_ns since it became
 * runnable: on the engine, the queue, the file's totals on the engine
 * (all under the engine's lock), and the tenant (per CPU: its other
 * engines count under other locks).
 */
static __always_inline void accel_queue_count_release_locked(struct accel_queue *q,
							     u64 latency_ns)
{
	struct accel_engine *e = q->engine;
	struct accel_tenant *t = q->afile->tenant;

	lockdep_assert_held(&e->lock);
	e->in_flight++;
	e->nr_released++;
	q->nr_in_flight++;
	q->nr_released++;
	q->fstat->nr_released++;
	this_cpu_inc(t->stats->nr_released);
	/* Not even a test for a release at once: 0 where it is compiled. */
	if (latency_ns) {
		e->latency_ns += latency_ns;
		q->latency_ns += latency_ns;
		q->fstat->latency_ns += latency_ns;
		this_cpu_add(t->stats->latency_ns, latency_ns);
	}
}

/*
 * Release a runnable job (already off its queue's runnable list) to its
 * executor at @now. Its latency, from runnable to now, is what the credits and the
 * policy made it wait: a pipelined job counts from when pipelining made it
 * runnable, so a latency is never negative, and the wait for its
 * predecessors, the executor's to order, is not the scheduler's.
 * @latency_ns is that, passed in so that a release at once (0, known where
 * it is compiled) adds nothing to the four sums.
 */
static __always_inline void __accel_job_release_locked(struct accel_sched_job *job,
						       u64 now, u64 latency_ns)
{
	struct accel_engine *e = job->engine;
	struct accel_queue *q = job->queue;

	lockdep_assert_held(&e->lock);
	accel_job_unboost_locked(job);
	job->state = ACCEL_JOB_RELEASED;
	job->release_ns = now;
	if (job->has_followers && !list_empty(&e->followers)) {
		/* Its followers may be pipelined now: the kick tries them. */
		e->follow_retry = true;
		kref_get(&e->ref);
		if (!queue_work(accel_wq, &e->kick))
			refcount_dec(&e->ref.refcount); /* never the last: the job has one */
	}
	accel_queue_count_release_locked(q, latency_ns);
	/*
	 * Charge now, so credits spread fairly: the executor's prediction,
	 * else the queue's average; COMPLETE corrects it.
	 */
	job->charged = job->predicted_ns ?: q->avg_ns;
	if (job->charged)
		accel_queue_charge_locked(q, job->charged);
	accel_timeout_add_locked(e, job);
	ACCEL_JOB_TRACE(release, job);
	/*
	 * Releases answered through io_uring are numbered per queue, in
	 * release order: CQEs of several tasks' SUBMITs, some answered at
	 * once and some from task work, reach the ring in no set order, and
	 * the number lets an executor put them back (uapi: ACCEL_URING_SEQ_*).
	 */
	if (job->cmd || (job->issuing && !job->answer))
		job->answer_seq = q->answer_seq++;
	/*
	 * An answer takes the release out of the file's events: only while
	 * none is queued, so that the queue's earlier releases, which are
	 * all queued under this lock, are fetched before this one is seen.
	 * One fetched meanwhile by another thread is that thread's to hand
	 * on first (libaccel: under the lock its fetches and submits share).
	 */
	if (job->issuing &&
	    (!job->answer || list_empty(&job->afile->events)))
		job->released_inline = true;
	else if (job->cmd)
		accel_job_answer_locked(job, accel_job_release_res(job));
	else
		accel_event_push_locked(job, &job->ev_released,
					ACCEL_JOB_EVENT_RELEASED, 0);
}

void accel_job_release_locked(struct accel_sched_job *job, u64 now)
{
	__accel_job_release_locked(job, now, now - job->runnable_ns);
}

/* The job's waits are all reached: runnable, or failed if one failed. */
static __always_inline void accel_job_runnable_locked(struct accel_sched_job *job,
						      u64 now);

/* As accel_job_ready_locked(), at @now if it becomes runnable. */
static __always_inline bool __accel_job_ready_locked(struct accel_sched_job *job,
						     u64 now)
{
	struct accel_engine *e = job->engine;
	int error = atomic_read(&job->error);

	lockdep_assert_held(&e->lock);
	if (job->state == ACCEL_JOB_FINISHING) {
		/* Pipelined and completed: its waits are reached now. */
		job->state = ACCEL_JOB_DONE;
		if (!error)
			error = job->status;
		atomic_set(&job->error, error);
		if (error) /* not counted at its COMPLETE: here, once */
			e->nr_failed++;
		else
			e->nr_completed++;
		return true; /* the caller finishes it */
	}
	if (job->state != ACCEL_JOB_PENDING)
		return false;
	accel_job_unfollow_locked(job);
	if (error) {
		list_del_init(&job->wlink);
		accel_job_unboost_locked(job);
		job->state = ACCEL_JOB_DONE;
		e->nr_failed++;
		accel_job_answer_locked(job, error);
		return true; /* the caller fails its points */
	}
	accel_job_runnable_locked(job, now);
	return false;
}

bool accel_job_ready_locked(struct accel_sched_job *job)
{
	return __accel_job_ready_locked(job, ktime_get_ns());
}

/*
 * Into its queue's runnable list, in submission order; or, when nothing
 * else on the engine is runnable and a credit is free, released at once:
 * the policy would pick this job next, so it skips the trip through the
 * run queues (two red-black inserts and two erases) and moves the floors
 * as accel_engine_schedule_locked() would. This is every submission's
 * path on an engine that keeps up with its load.
 */
static __always_inline void accel_job_runnable_locked(struct accel_sched_job *job,
						      u64 now)
{
	struct accel_engine *e = job->engine;
	struct accel_queue *q = job->queue;
	struct accel_entity *ent = q->ent;
	struct accel_sched_job *it;

	lockdep_assert_held(&e->lock);
	if (unlikely(!list_empty(&job->wlink)))
		list_del_init(&job->wlink);
	job->state = ACCEL_JOB_RUNNABLE;
	job->runnable_ns = now;
	ACCEL_JOB_TRACE(runnable, job);
	if (e->in_flight < e->credits && list_empty(&q->runnable) &&
	    !READ_ONCE(q->dead) && accel_engine_idle_locked(e)) {
		/*
		 * Not on a run queue: nothing of the engine is runnable. The
		 * floors move as the run queues' would: the queue's vruntime
		 * to its entity's floor, the entity's to its priority's, which
		 * then is the entity's (never below it), and the entity's
		 * floor to the queue's. Read once and written once each: the
		 * compiler must assume the four may alias.
		 */
		u64 *prio_min = &e->min_vruntime[ent->priority];
		u64 qv = max(q->vruntime, ent->min_vruntime);
		u64 ev = max(ent->vruntime, *prio_min);

		q->vruntime = qv;
		ent->vruntime = ev;
		*prio_min = ev;
		ent->min_vruntime = max(ent->min_vruntime, qv);
		__accel_job_release_locked(job, now, 0);
		return;
	}
	/* Submission order among the runnable: usually an append. */
	list_for_each_entry_reverse(it, &q->runnable, qlink)
		if (it->seq < job->seq)
			break;
	list_add(&job->qlink, &it->qlink);
	q->nr_runnable++;
	if (!q->on_rq && !READ_ONCE(q->dead)) {
		q->vruntime = max(q->vruntime, q->ent->min_vruntime);
		accel_rq_add_locked(e, q);
	}
	accel_job_dl_runnable_locked(job, job->qlink.next == &q->runnable);
	if (job->boosted) /* inherited while pending */
		accel_job_runnable_boost_locked(job);
}

/*
 * An id for @job in its file's table (job->id); -ENOMEM. Ids are handed out
 * cyclically over [1, ACCEL_JOB_RES_ID_MASK] (30 bits, what a SUBMIT's CQE
 * carries beside ACCEL_JOB_RES_PIPELINED): an id comes back only after at
 * least 2^29 later submissions of the same file, so a stale id (a late or
 * repeated COMPLETE) names no new job within any realistic window.
 */
static int accel_job_id_get(struct accel_file *afile,
			    struct accel_sched_job *job)
{
	return accel_idtable_add(&afile->jobs, job, &job->id, &job->seq);
}

/* Drop the job from its file: the id table's reference and the count. */
void accel_job_unlink(struct accel_sched_job *job)
{
	struct accel_file *afile = job->afile;

	if (accel_idtable_remove(&afile->jobs, job->id, job)) {
		accel_job_uncount(job);
		accel_job_put(job);
	}
}

/*
 * Reach the job's points, or fail them with @status. No lock held.
 * Returns the signals found passed already (bit i: @sigs[i]), see
 * struct accel_job_complete_fetch.
 */
u64 accel_job_signal(struct accel_sched_job *job, int status)
{
	u64 passed = 0;
	u32 i;

	for (i = 0; i < job->nsignals; i++) {
		bool p = false;

		if (status)
			accel_syncobj_fail(job->sigs[i].s, status);
		else
			accel_syncobj_reach(job->sigs[i].s, job->sigs[i].point, &p);
		if (p)
			passed |= BIT_ULL(i);
	}
	return passed;
}

/*
 * Fail a job that will not complete: its points, then its id, as
 * accel_job_unlink() does. A job that asked for events and was never
 * released then gets a FAILED event (on the node a release would use), so
 * that an executor that fetches it finds the points failed and the id
 * gone. The event holds the job's memory, so the job stays counted against
 * its file's and tenant's job limits until the event is fetched or its
 * file goes: a file that never fetches cannot pile up failed jobs without
 * bound. The caller holds a reference.
 */
void accel_job_failed(struct accel_sched_job *job, int error)
{
	struct accel_file *afile = job->afile;
	unsigned long flags;
	bool queued = false;

	trace_job_fail(afile->client_id, accel_job_engine(job),
		       job->qhandle, job->id, error);
	accel_job_signal(job, error);
	if (!accel_idtable_remove(&afile->jobs, job->id, job))
		return; /* unlinked already */
	if (job->events && !job->release_ns) {
		local_irq_save(flags); /* events_lock is taken with irqs off */
		queued = accel_event_push_locked(job, &job->ev_released,
						 ACCEL_JOB_EVENT_FAILED, error);
		local_irq_restore(flags);
	}
	if (!queued)
		accel_job_uncount(job);
	accel_job_put(job); /* the id table's */
}

static void accel_job_dep_cb(struct dma_fence *f, struct dma_fence_cb *cb)
{
	struct accel_job_dep *dep = container_of(cb, struct accel_job_dep, cb);
	struct accel_sched_job *job = dep->job;

	if (f->error)
		atomic_cmpxchg(&job->error, 0, f->error);
	if (atomic_dec_and_test(&job->deps_left)) {
		struct accel_engine *e = job->engine;

		kref_get(&job->ref);
		/*
		 * The engine's reference before the add: once the job is on
		 * the ready list, another thread may take it, release it,
		 * complete it and free it, and its engine with its file, while
		 * this callback is still here.
		 */
		kref_get(&e->ref);
		llist_add(&job->ready, &e->ready);
		/*
		 * A COMPLETE in progress makes it runnable itself; it looks
		 * at the list again once it is done (accel_engine_ready_now():
		 * the add and its decrement are both fully ordered). Not the
		 * engine's last reference to drop here (a free needs the
		 * engines' mutex): the kick drops that one.
		 */
		if (atomic_read(&e->completing) && refcount_dec_not_one(&e->ref.refcount))
			return;
		/* A queued kick holds the engine: it may run after the jobs go. */
		if (!queue_work(accel_wq, &e->kick))
			refcount_dec(&e->ref.refcount); /* never the last: the queued kick has one */
	}
}

/*
 * Take the callbacks of @job's waits off their fences (DONE already, so a
 * callback running meanwhile finds nothing to do): once this returns, no
 * fence calls back into the job. A removal is idempotent.
 */
static void accel_job_disarm(struct accel_sched_job *job)
{
	u32 i;

	for (i = 0; i < job->nwaits; i++)
		dma_fence_remove_callback(job->deps[i].fence, &job->deps[i].cb);
}

/*
 * Cancel a job not completed: it leaves whatever list it is on, gives back
 * its credit, and its points fail with @error. Its id goes.
 */
void accel_job_cancel(struct accel_sched_job *job, int error)
{
	struct accel_engine *e = job->engine;
	enum accel_job_state was;

	spin_lock_irq(&e->lock);
	was = job->state;
	switch (was) {
	case ACCEL_JOB_RUNNABLE:
		list_del_init(&job->qlink);
		job->queue->nr_runnable--;
		if (list_empty(&job->queue->runnable) && job->queue->on_rq)
			accel_rq_del_locked(e, job->queue);
		accel_job_dl_leave_locked(job, false);
		break;
	case ACCEL_JOB_RELEASED:
		e->in_flight--;
		job->queue->nr_in_flight--;
		accel_timeout_del_locked(e, job);
		break;
	case ACCEL_JOB_TIMEDOUT:
		break;
	case ACCEL_JOB_PENDING:
		list_del_init(&job->wlink);
		accel_job_unfollow_locked(job);
		break;
	case ACCEL_JOB_FINISHING:
		break;
	case ACCEL_JOB_DONE:
		spin_unlock_irq(&e->lock);
		return;
	}
	accel_job_unboost_locked(job);
	job->state = ACCEL_JOB_DONE;
	if (was != ACCEL_JOB_TIMEDOUT) /* counted once, as timed out */
		e->nr_failed++;
	accel_job_answer_locked(job, error);
	accel_engine_schedule_locked(e);
	spin_unlock_irq(&e->lock);

	if (was == ACCEL_JOB_PENDING || was == ACCEL_JOB_FINISHING ||
	    job->pipelined)
		accel_job_disarm(job);
	accel_job_drop_promisers(job);
	if (was == ACCEL_JOB_TIMEDOUT) /* its points failed already */
		accel_job_unlink(job);
	else
		accel_job_failed(job, error);
}

/* accel_job_point() found the job's deadline, in pt->point: no syncobj. */
#define ACCEL_POINT_IS_DEADLINE 1

/*
 * Read wait (or, with @sig, signal) @i of a submission into @pt and look up
 * its syncobj (*@s, a reference); or, for a signal entry flagged
 * ACCEL_POINT_F_DEADLINE, check the deadline it holds and return
 * ACCEL_POINT_IS_DEADLINE. The entry is @kp, in the kernel (an SQE), or
 * else the @i-th of the user array at @uptr: one small copy each, since a
 * whole array on the stack would be zeroed on every submission by kernels
 * built with INIT_STACK_ALL_ZERO (Debian's are). The caller passes fields,
 * not its struct accel_job_args: a struct whose address went to this call
 * would be built in memory on every submission, points or none.
 */
static int accel_job_point(struct accel_file *afile,
			   const struct accel_point *kp, u64 uptr, bool sig,
			   u32 i, struct accel_point *pt, struct accel_syncobj **s)
{
	if (kp) {
		/* In an SQE, perhaps in the shared ring: each field once. */
		pt->handle = READ_ONCE(kp->handle);
		pt->flags = READ_ONCE(kp->flags);
		pt->point = READ_ONCE(kp->point);
	} else {
		if (!IS_ALIGNED(uptr, sizeof(u64)))
			return -EINVAL;
		if (copy_from_user(pt, u64_to_user_ptr(uptr) + i * sizeof(*pt),
				   sizeof(*pt)))
			return -EFAULT;
	}
	if (unlikely(pt->flags)) {
		if (!sig || pt->flags != ACCEL_POINT_F_DEADLINE || pt->handle ||
		    !pt->point || pt->point > S64_MAX)
			return -EINVAL;
		if (pt->point <= ktime_get_ns())
			return -ETIME;
		return ACCEL_POINT_IS_DEADLINE;
	}
	*s = accel_syncobj_lookup(afile, pt->handle);
	return *s ? 0 : -ENOENT;
}

/*
 * Clear a pooled job's @zeroed: eleven stores. GCC makes memset() of it
 * a rep stosq, which costs more to start than the stores do on most x86
 * CPUs; with it and the inline SUBMIT's two, an inline SUBMIT ran 21 more
 * guest instructions in the VM (scripts/insn-vm.sh, 1274 against 1253).
 */
static __always_inline void accel_job_clear(struct accel_sched_job *job)
{
	u64 *p = (u64 *)&job->zeroed;
	unsigned int i;

	BUILD_BUG_ON(offsetof(struct accel_sched_job, zeroed) % sizeof(u64) ||
		     sizeof(job->zeroed) % sizeof(u64));
#pragma GCC unroll 16
	for (i = 0; i < sizeof(job->zeroed) / sizeof(u64); i++)
		WRITE_ONCE(p[i], 0);
}

/* The fallible half of a submission: a job ready to arm, or an error. */
static __always_inline struct accel_sched_job *
accel_job_init(struct accel_file *afile, const struct accel_job_args *args)
{
	struct accel_point pt __uninitialized; /* accel_job_point() writes it */
	struct accel_queue *q;
	struct accel_sched_job *job;
	u64 timeout_ns;
	u32 i;
	int ret;

	/* An answer replaces a RELEASED event: only with events. */
	if (args->nwaits > ACCEL_JOB_MAX_POINTS ||
	    args->nsignals > ACCEL_JOB_MAX_POINTS || (args->answer && !args->events))
		return ERR_PTR(-EINVAL);
	timeout_ns = args->timeout_ns ?:
		(u64)READ_ONCE(accel_job_timeout_ms) * NSEC_PER_MSEC;
	if (timeout_ns > 3600ULL * NSEC_PER_SEC)
		return ERR_PTR(-EINVAL);

	/*
	 * No lock: the caller's accel_submit_srcu section keeps the queue,
	 * and QUEUE_DESTROY marks it dead before it waits for that section.
	 */
	q = args->queue < ACCEL_QUEUE_FAST ?
	    READ_ONCE(afile->queue_fast[args->queue]) :
	    xa_load(&afile->queues, args->queue);
	if (q && READ_ONCE(q->dead))
		q = NULL;
	if (!q)
		return ERR_PTR(-ENOENT);
	if (atomic_inc_return(&afile->nr_jobs) > accel_max_jobs) {
		atomic_dec(&afile->nr_jobs);
		return ERR_PTR(-ENOSPC);
	}
	/* One tenant cannot take every job's memory, however many files. */
	if (atomic_inc_return(&afile->tenant->nr_jobs) > accel_tenant_max_jobs) {
		atomic_dec(&afile->tenant->nr_jobs);
		atomic_dec(&afile->nr_jobs);
		return ERR_PTR(-ENOSPC);
	}

	job = accel_engine_pool_get(q->engine);
	if (job) {
		accel_job_clear(job);
	} else {
		job = kmem_cache_zalloc(accel_job_cache, GFP_KERNEL);
		if (!job) {
			ret = -ENOMEM;
			goto err_count;
		}
		/* Never cleared: unlinked whenever they leave a list. */
		INIT_LIST_HEAD(&job->ev_released.link);
		INIT_LIST_HEAD(&job->ev_timedout.link);
		INIT_LIST_HEAD(&job->qlink);
		INIT_LIST_HEAD(&job->wlink);
		INIT_LIST_HEAD(&job->tlink);
		INIT_LIST_HEAD(&job->flink);
		INIT_LIST_HEAD(&job->dlink);
	}
	kref_init(&job->ref);
	job->engine = q->engine;
	kref_get(&q->engine->ref);
	job->queue = q;
	job->qhandle = q->handle;
	job->afile = afile;
	job->priority = q->priority;
	job->user_data = args->user_data;
	job->events = args->events;
	job->answer = args->answer;
	job->timeout_ns = timeout_ns;
	/* No job runs longer than its timeout; nor is it charged more. */
	job->predicted_ns = min((u64)args->predicted_us * NSEC_PER_USEC,
				timeout_ns);
	job->state = ACCEL_JOB_PENDING;
	for (i = 0; i < min(args->nwaits, ACCEL_JOB_INLINE); i++)
		INIT_LIST_HEAD(&job->deps_inline[i].cb.node);
	job->deps = job->deps_inline;
	job->sigs = job->sigs_inline;
	if (args->nwaits > ACCEL_JOB_INLINE) {
		job->deps = kcalloc(args->nwaits, sizeof(*job->deps), GFP_KERNEL);
		if (!job->deps) {
			job->deps = job->deps_inline;
			ret = -ENOMEM;
			goto err_job;
		}
		for (i = 0; i < args->nwaits; i++)
			INIT_LIST_HEAD(&job->deps[i].cb.node);
	}
	if (args->nsignals > ACCEL_JOB_INLINE) {
		job->sigs = kcalloc(args->nsignals, sizeof(*job->sigs), GFP_KERNEL);
		if (!job->sigs) {
			job->sigs = job->sigs_inline;
			ret = -ENOMEM;
			goto err_job;
		}
	}

	for (i = 0; i < args->nsignals; i++) {
		struct accel_syncobj *s;

		ret = accel_job_point(afile, args->kpoints ?
				      &args->kpoints[args->nwaits + i] : NULL,
				      args->usignals, true, i, &pt, &s);
		if (ret == ACCEL_POINT_IS_DEADLINE) {
			/* Not a point: the job's deadline (one at most). */
			ret = -EINVAL;
			if (job->deadline_ns)
				goto err_job;
			job->deadline_ns = pt.point;
			continue;
		}
		if (ret)
			goto err_job;
		job->sigs[job->nsignals].s = s;
		job->sigs[job->nsignals++].point = pt.point;
		if (pt.point <= accel_syncobj_value(s)) {
			ret = -EINVAL;
			goto err_job;
		}
	}
	for (i = 0; i < args->nwaits; i++) {
		struct accel_syncobj *s;
		struct dma_fence *f;

		ret = accel_job_point(afile, args->kpoints ?
				      &args->kpoints[i] : NULL,
				      args->uwaits, false, i, &pt, &s);
		if (ret)
			goto err_job;
		f = accel_syncobj_point_fence(s, pt.point, ACCEL_POINT_REACHED);
		if (IS_ERR(f)) {
			accel_syncobj_put(s);
			ret = PTR_ERR(f);
			goto err_job;
		}
		job->deps[job->nwaits].fence = f;
		job->deps[job->nwaits].s = s;
		job->deps[job->nwaits].point = pt.point;
		job->deps[job->nwaits].promiser = NULL;
		job->deps[job->nwaits++].job = job;
	}
	ret = accel_job_id_get(afile, job);
	if (ret < 0)
		goto err_job;
	return job;

err_job:
	accel_job_put(job);
err_count:
	atomic_dec(&afile->tenant->nr_jobs);
	atomic_dec(&afile->nr_jobs);
	return ERR_PTR(ret);
}

static void accel_job_drop_dep_syncobjs(struct accel_sched_job *job)
{
	u32 i;

	for (i = 0; i < job->nwaits; i++) {
		accel_syncobj_put(job->deps[i].s);
		job->deps[i].s = NULL;
	}
}

/*
 * Pipelining: a job whose waits not yet reached are all promised by jobs of
 * the same file already released to the same engine is runnable at once;
 * its release says so (ACCEL_JOB_RES_PIPELINED) and its executor orders it
 * after those jobs on the device. This saves two host round trips per
 * dependency edge. Its waits stay armed: if one fails, the job's points fail
 * with that error whatever its COMPLETE says; if it completes before them,
 * its points are reached only once its waits are (FINISHING).
 *
 * A job whose promisers are all of its file and engine, but some not yet
 * released (pending behind a gate, or runnable behind the credits), is a
 * *follower*: it waits on its engine's follower list, and the release of
 * such a promiser (marked has_followers) makes the engine's kick try the
 * list again (accel_engine_follow()). So a chain submitted ahead of its
 * first wait is pipelined edge by edge as it is released, not only a chain
 * submitted behind jobs already released. The list holds at most
 * ACCEL_FOLLOWERS_MAX jobs (a job beyond it waits for its points, as
 * before), each try is the bounded walk below (ACCEL_JOB_MAX_POINTS
 * lookups), and a job leaves the list whenever it leaves PENDING
 * (accel_job_unfollow_locked()), so the list never holds a job that could
 * go away.
 */
#define ACCEL_FOLLOWERS_MAX 64

enum accel_pipe { ACCEL_PIPE_NO, ACCEL_PIPE_LATER, ACCEL_PIPE_DONE };

static enum accel_pipe accel_job_try_pipeline(struct accel_sched_job *job)
{
	struct accel_sched_job *pred[ACCEL_JOB_MAX_POINTS];
	struct accel_engine *e = job->engine;
	enum accel_pipe verdict = ACCEL_PIPE_NO;
	bool ok = true, later = false;
	u32 i, n = 0;

	/* A follower tried again may have gone meanwhile (its file too). */
	if (READ_ONCE(job->state) != ACCEL_JOB_PENDING)
		ok = false;
	for (i = 0; i < job->nwaits && ok; i++) {
		struct accel_job_dep *d = &job->deps[i];
		u64 point;
		u32 id;

		if (dma_fence_is_signaled(d->fence))
			continue;
		if (!accel_syncobj_get_promiser(d->s, job->afile, &id, &point) ||
		    point < d->point || id == job->id) {
			ok = false;
			break;
		}
		pred[n] = accel_job_lookup(job->afile, id);
		if (!pred[n])
			ok = false;
		else
			n++;
	}
	if (ok && n) {
		spin_lock_irq(&e->lock);
		for (i = 0; i < n; i++) {
			if (pred[i]->engine != e)
				ok = false;
			else if (pred[i]->state == ACCEL_JOB_PENDING ||
				 pred[i]->state == ACCEL_JOB_RUNNABLE)
				later = true;
			else if (pred[i]->state != ACCEL_JOB_RELEASED)
				ok = false;
		}
		if (ok && job->state == ACCEL_JOB_PENDING &&
		    !atomic_read(&job->error)) {
			if (!later) {
				accel_job_unfollow_locked(job);
				job->pipelined = true;
				accel_job_runnable_locked(job, ktime_get_ns());
				accel_engine_schedule_locked(e);
				verdict = ACCEL_PIPE_DONE;
			} else if (!list_empty(&job->flink) ||
				   e->nr_followers < ACCEL_FOLLOWERS_MAX) {
				if (list_empty(&job->flink)) {
					list_add_tail(&job->flink, &e->followers);
					e->nr_followers++;
				}
				for (i = 0; i < n; i++)
					if (pred[i]->state != ACCEL_JOB_RELEASED)
						pred[i]->has_followers = true;
				verdict = ACCEL_PIPE_LATER;
			}
		}
		spin_unlock_irq(&e->lock);
	}
	for (i = 0; i < n; i++)
		accel_job_put(pred[i]);
	/* A follower keeps its waits' syncobjs, for the next try. */
	if (verdict != ACCEL_PIPE_LATER)
		accel_job_drop_dep_syncobjs(job);
	return verdict;
}

/*
 * The engine's kick, after a release of a job that followers wait on: try
 * them again. Each is taken off the list with a reference; the file of
 * one that is cancelled meanwhile waits for this work before it goes
 * (accel_sched_file_release() flushes accel_wq), so its lookups stay valid.
 */
void accel_engine_follow(struct accel_engine *e)
{
	struct accel_sched_job *jobs[ACCEL_FOLLOWERS_MAX], *job;
	u32 i, n = 0;

	spin_lock_irq(&e->lock);
	if (!e->follow_retry) {
		spin_unlock_irq(&e->lock);
		return;
	}
	e->follow_retry = false;
	while (!list_empty(&e->followers) && n < ACCEL_FOLLOWERS_MAX) {
		job = list_first_entry(&e->followers, struct accel_sched_job, flink);
		accel_job_unfollow_locked(job);
		kref_get(&job->ref);
		jobs[n++] = job;
	}
	spin_unlock_irq(&e->lock);
	for (i = 0; i < n; i++) {
		accel_job_try_pipeline(jobs[i]);
		accel_job_put(jobs[i]);
	}
}

/*
 * The io_uring SUBMIT @cmd issued @job, now armed (engine lock held):
 * returns what the SUBMIT answers at once (the release, or the failure),
 * or -EIOCBQUEUED with @cmd installed for the release to answer later.
 */
static __always_inline int accel_job_issue_locked(struct accel_sched_job *job,
						  struct io_uring_cmd *cmd)
{
	struct accel_file *afile = job->afile; /* @cmd's file's */
	bool answer = false;

	lockdep_assert_held(&job->engine->lock);
	job->issuing = false;
	if (job->state == ACCEL_JOB_DONE && !job->released_inline)
		return atomic_read(&job->error) ?: -ECANCELED;
	/*
	 * Released: answered at once (its CQE carries no sequence) only if
	 * every earlier answer of this file is posted, so that all of its
	 * queue's earlier releases precede it on the ring; else from task
	 * work, numbered like the rest.
	 */
	if (job->released_inline) {
		if (!atomic_read(&afile->answers_in_transit))
			return accel_job_release_res(job);
		answer = true;
	}
	kref_get(&job->ref); /* the pending cmd's */
	WRITE_ONCE(accel_uring_cmd_pdu(cmd, struct accel_submit_pdu)->job, job);
	job->cmd = cmd;
	if (answer) {
		accel_job_answer_locked(job, accel_job_release_res(job));
		return -EIOCBQUEUED;
	}
	if (!ACCEL_URING_CANCELABLE)
		job->task = get_task_struct(current);
	return -EIOCBQUEUED;
}

/*
 * The end of a submission that may answer a release (job->issuing), in the
 * engine lock section that armed the job: the io_uring SUBMIT's answer
 * (accel_job_issue_locked()), or for ACCEL_JOB_F_ANSWER the release's
 * answer if it was answered, else 0 (an event tells); 0 for the rest.
 */
static __always_inline int accel_job_issued_locked(struct accel_sched_job *job,
						   struct io_uring_cmd *cmd)
{
	lockdep_assert_held(&job->engine->lock);
	if (cmd)
		return accel_job_issue_locked(job, cmd);
	if (!job->issuing)
		return 0;
	job->issuing = false;
	return job->released_inline ? accel_job_release_res(job) : 0;
}

/*
 * At most this many jobs waited for at a time, and this many waiting jobs
 * looked at per engine-lock section: a queue may have thousands waiting,
 * and the lock is every tenant's of the engine.
 */
#define ACCEL_SETTLE_MAX 8
#define ACCEL_SETTLE_SCAN 32

/*
 * Before @job, ready at submission, goes to its queue's runnable list:
 * the earlier jobs of its queue whose waits are all reached must be
 * there first, since the runnable jobs of a queue keep submission order.
 *
 * A signal writes the new value, then calls the callbacks of the fences
 * it reached (accel_syncobj_advance()). A SUBMIT on another thread can
 * read the value in between, through QUERY, a WAIT that returned or its
 * own wait found reached, and come here before those callbacks have put
 * the earlier jobs on the engine's ready list: it would be released ahead
 * of them. So while a signal calls back (one load, on a queue with jobs
 * waiting), this waits out the fences of the earlier jobs whose every
 * wait is reached or about to be (accel_point_fence_settling()): each is
 * signalled next by its signaller, with nothing to wait for, and once its
 * lock is free its callbacks have run. A job still waiting on a point not
 * reached holds nothing back. The caller takes the ready list next.
 *
 * The walk goes ACCEL_SETTLE_SCAN jobs per lock section, resuming at a
 * job it holds; if that one left the list meanwhile, it starts again
 * from the head, once what it waited for is off the list.
 *
 * Context: process context, no lock held; may sleep.
 */
static void accel_job_settle_earlier(struct accel_sched_job *job)
{
	struct accel_sched_job *settling[ACCEL_SETTLE_MAX], *w, *at = NULL, *held;
	struct list_head *waiting = &job->queue->waiting;
	struct accel_engine *e = job->engine;
	struct accel_ready_take took;
	u32 i, k, n, looked;
	bool taken;

	if (!accel_syncobj_signalling())
		return;
	do {
		n = 0;
		looked = 0;
		taken = false;
		held = at; /* its reference goes once the lock is dropped */
		spin_lock_irq(&e->lock);
		if (at && list_empty(&at->wlink)) {
			/* It left: from the head, what was waited for gone. */
			accel_engine_take_ready_locked(e, &took);
			taken = true;
			at = NULL;
		}
		w = at ?: list_first_entry(waiting, struct accel_sched_job, wlink);
		at = NULL;
		list_for_each_entry_from(w, waiting, wlink) {
			if (looked++ == ACCEL_SETTLE_SCAN || n == ACCEL_SETTLE_MAX) {
				kref_get(&w->ref);
				at = w; /* resume here */
				break;
			}
			if (w->seq > job->seq || atomic_read(&w->error))
				continue; /* later, or failing: never runnable */
			for (i = 0; i < w->nwaits; i++)
				if (!accel_point_fence_settling(w->deps[i].fence))
					break;
			if (i < w->nwaits)
				continue; /* waits on a point not reached: not it */
			kref_get(&w->ref);
			settling[n++] = w;
		}
		spin_unlock_irq(&e->lock);
		if (taken)
			accel_engine_took_ready(e, &took, true);
		if (held)
			accel_job_put(held);
		for (k = 0; k < n; k++) {
			w = settling[k];
			for (i = 0; i < w->nwaits; i++) {
				struct dma_fence *f = w->deps[i].fence;
				unsigned long flags;

				dma_fence_wait(f, false);
				/* Signalled under its lock, callbacks and all. */
				spin_lock_irqsave(f->lock, flags);
				spin_unlock_irqrestore(f->lock, flags);
			}
			accel_job_put(w);
		}
		if (at)
			cond_resched();
	} while (at);
}

/*
 * The point of no return: promise the signals, arm the waits. Cannot fail.
 * Leaves the job released, runnable, pending or (a wait failed already)
 * failed. With @cmd, the io_uring SUBMIT issuing it (job->issuing set):
 * returns accel_job_issue_locked()'s answer, decided in the same engine
 * lock section that readied the job when it has no wait left (one irq-off
 * section per submission on the hot path, not two); 0 without @cmd.
 */
static __always_inline int accel_job_arm(struct accel_sched_job *job,
					 struct io_uring_cmd *cmd)
{
	struct accel_engine *e = job->engine;
	bool guard = job->nwaits, failed = false, taken = false;
	/*
	 * Read only once taken, after accel_engine_take_ready_locked()
	 * wrote it: not zeroed on every submission (INIT_STACK_ALL_ZERO).
	 */
	struct accel_ready_take took __uninitialized;
	int ret = 0;
	u64 now;
	u32 i;

	/*
	 * Until its waits are armed, nothing but this call can ready the
	 * job, so it cannot be released, completed and freed under us:
	 * QUEUE_DESTROY waits for the caller's accel_submit_srcu section
	 * before it cancels, a COMPLETE finds it not released, and the
	 * file cannot go during the call. A job with no wait is readied in
	 * the one engine-lock section below and not touched after it; one
	 * with waits may be readied by a fence callback as soon as the
	 * first is armed, and holds a reference until this returns.
	 */
	if (guard)
		kref_get(&job->ref);

	accel_job_find_promisers(job); /* before its own promises */
	for (i = 0; i < job->nsignals; i++) {
		accel_syncobj_promise(job->sigs[i].s, job->sigs[i].point,
				      job->afile, job->id, &job->ref);
	}
	ACCEL_JOB_TRACE(submit, job);
	if (trace_job_wait_enabled())
		for (i = 0; i < job->nwaits; i++)
			trace_job_wait(job->afile->client_id, job->qhandle,
				       job->id, job->deps[i].fence->context,
				       job->deps[i].point);
	if (trace_job_signal_enabled())
		for (i = 0; i < job->nsignals; i++)
			trace_job_signal(job->afile->client_id, job->qhandle,
					 job->id,
					 accel_syncobj_reached_context(job->sigs[i].s),
					 job->sigs[i].point);

	if (!guard)
		goto ready;
	atomic_set(&job->deps_left, job->nwaits + 1);
	for (i = 0; i < job->nwaits; i++) {
		struct dma_fence *f = job->deps[i].fence;

		if (dma_fence_add_callback(f, &job->deps[i].cb, accel_job_dep_cb)) {
			if (f->error)
				atomic_cmpxchg(&job->error, 0, f->error);
			atomic_dec(&job->deps_left);
		}
	}
	/*
	 * A QUEUE_DESTROY on another thread may have cancelled the job while
	 * its waits were being armed, removing the callbacks added so far
	 * but not the later ones: remove them all again (a removal is
	 * idempotent), or a fence would call back into a freed job. Pairs
	 * with the engine lock section in accel_job_cancel() that marks it
	 * DONE before its own removals.
	 */
	smp_mb();
	if (unlikely(READ_ONCE(job->state) == ACCEL_JOB_DONE))
		for (i = 0; i < job->nwaits; i++)
			dma_fence_remove_callback(job->deps[i].fence,
						  &job->deps[i].cb);
	if (!atomic_dec_and_test(&job->deps_left)) {
		accel_job_try_pipeline(job);
		accel_job_inherit(job); /* and its deadline */
		/* A fence callback takes it from here, perhaps already. */
		spin_lock_irq(&e->lock);
		if (job->state == ACCEL_JOB_PENDING)
			list_add_tail(&job->wlink, &job->queue->waiting);
		ret = accel_job_issued_locked(job, cmd);
		spin_unlock_irq(&e->lock);
		accel_job_put(job);
		return ret;
	}
	accel_job_drop_dep_syncobjs(job);

ready:
	/* Not while a signal calls back: see accel_job_settle_earlier(). */
	if (unlikely(!list_empty(&job->queue->waiting)))
		accel_job_settle_earlier(job);
	/*
	 * The clock is read before the lock: fewer values live across the
	 * call than in the section (each one held there was spilled to the
	 * stack and read back), and the irq-off section is that much shorter.
	 */
	now = ktime_get_ns();
	spin_lock_irq(&e->lock);
	/*
	 * Jobs whose waits were reached before this submission (a host
	 * signal's fence callbacks put them on the ready list, for a kick
	 * that may run much later) become runnable first: a queue's ready
	 * jobs are released in submission order, and this one must not go
	 * ahead of an earlier job of its queue that was ready before it.
	 * One load on the hot path while the list is empty.
	 */
	if (unlikely(!llist_empty(&e->ready))) {
		accel_engine_take_ready_locked(e, &took);
		taken = true;
	}
	failed = __accel_job_ready_locked(job, now);
	/*
	 * Released as it came, or left where the credits keep it: the
	 * engine's invariant (accel_engine_unsettled_locked()) leaves
	 * nothing else to release, the jobs just taken from the ready list
	 * included. Checked, and mended, where a job stays: a section that
	 * broke it would otherwise leave this job, and those before it, for
	 * the next COMPLETE, kick or timeout.
	 */
	if (job->state != ACCEL_JOB_RELEASED &&
	    WARN_ON_ONCE(accel_engine_unsettled_locked(e)))
		accel_engine_schedule_locked(e);
	ret = accel_job_issued_locked(job, cmd);
	spin_unlock_irq(&e->lock);
	if (taken)
		accel_engine_took_ready(e, &took, true);
	/* Only a wait can fail a job here: it has a reference then. */
	if (failed)
		accel_job_failed(job, atomic_read(&job->error));
	if (guard) {
		accel_job_drop_promisers(job); /* not pending any more */
		accel_job_put(job);
	}
	return ret;
}

/*
 * Submit one job: accel_job_init(), then accel_job_arm(). Both halves
 * are here, each with this one caller, so that the compiler makes the
 * submission one function; and this is inlined into its two entries,
 * accel_job_submit() and accel_uring_job_submit_inline(), so that each is
 * one function with its own source of fields (see there).
 */
static __always_inline int __accel_job_submit(struct accel_file *afile,
					      const struct accel_job_args *args,
					      u32 __user *uid,
					      struct io_uring_cmd *cmd)
{
	struct accel_sched_job *job = accel_job_init(afile, args);

	if (IS_ERR(job))
		return PTR_ERR(job);
	if (uid && put_user(job->id, uid)) {
		accel_job_unlink(job); /* not armed yet: undo it whole */
		return -EFAULT;
	}
	/* A job that asked for events is answered at once, as by ioctl. */
	if (job->events)
		cmd = NULL;
	job->issuing = cmd != NULL || job->answer;
	return accel_job_arm(job, cmd);
}

/**
 * accel_job_submit() - submit one job.
 * @afile: the submitting file.
 * @args:  the job.
 * @uid:   where to write the job's id before it is armed
 *         (ACCEL_IOCTL_JOB_SUBMIT's struct accel_job), or NULL.
 * @cmd:   the io_uring SUBMIT issuing it, or NULL.
 *
 * Context: the caller's accel_submit_srcu read section, which keeps the
 * job's queue.
 *
 * Return: with @cmd, what the SUBMIT answers at once, or -EIOCBQUEUED when
 * the release answers it later; without @cmd, or for a job that asked for
 * events (ACCEL_JOB_F_EVENTS: its release and failure are events), 0,
 * except that a job with ACCEL_JOB_F_ANSWER released meanwhile returns its
 * release's answer (the id, with ACCEL_JOB_RES_PIPELINED). A
 * negative errno if the job was refused (nothing of it remains then). The
 * job may be gone once this returns: released, completed and freed on
 * another thread.
 */
int accel_job_submit(struct accel_file *afile, const struct accel_job_args *args,
		     u32 __user *uid, struct io_uring_cmd *cmd)
{
	return __accel_job_submit(afile, args, uid, cmd);
}

/* The inline SUBMIT's job, read from its SQE: see below. */
static __always_inline int
accel_job_submit_sqe(struct accel_file *afile, struct io_uring_cmd *cmd,
		     unsigned int issue_flags)
{
	const struct accel_uring_job *uj = accel_uring_cmd_payload(cmd);
	u16 flags = READ_ONCE(uj->flags);
	/*
	 * Every field given where it is declared: a struct declared bare
	 * is cleared first on kernels built with INIT_STACK_ALL_ZERO
	 * (Debian's), and a compound literal assigned to it cleared again
	 * what it leaves out.
	 */
	const struct accel_job_args a = {
		.user_data = READ_ONCE(uj->user_data),
		.timeout_ns = READ_ONCE(uj->timeout_ns),
		.uwaits = 0, .usignals = 0, .kpoints = uj->points,
		/* Before ABI 1.6 the last 8 bytes were not the job's: only if said. */
		.predicted_us = flags & ACCEL_URING_JOB_F_PREDICTED ?
				READ_ONCE(uj->predicted_us) : 0,
		.nwaits = READ_ONCE(uj->nwaits),
		.nsignals = READ_ONCE(uj->nsignals),
		.queue = READ_ONCE(uj->queue),
		.events = flags & ACCEL_URING_JOB_F_EVENTS,
		.answer = flags & ACCEL_URING_JOB_F_ANSWER,
	};
	int idx, ret;

	if (flags & ~ACCEL_URING_JOB_FLAGS_ALL ||
	    a.nwaits + a.nsignals > ACCEL_URING_JOB_POINTS ||
	    a.predicted_us > ACCEL_JOB_PREDICTION_MAX_US)
		return -EINVAL;
	idx = accel_uring_submit_begin(cmd, issue_flags);
	ret = __accel_job_submit(afile, &a, NULL, cmd);
	return accel_uring_submit_end(afile, cmd, issue_flags, idx, ret);
}

/**
 * accel_uring_job_submit_inline() - ACCEL_URING_CMD_JOB_SUBMIT_INLINE.
 * @afile:       the submitting file.
 * @cmd:         the SUBMIT, its job in the SQE (struct accel_uring_job).
 * @issue_flags: io_uring's issue flags.
 *
 * The io_uring SUBMIT with the whole job in the SQE: nothing is read from
 * user memory. Only an SQE128 ring has its 80 bytes; on a ring of 64-byte
 * SQEs the bytes past the 16th are the next SQE's.
 *
 * Here, where the submission is compiled, and not in the fronts of
 * sched.c: the uring_cmd reaches its answer in one function, and the
 * fields stay in registers. What an SQE cannot hold (user pointers, an id
 * to write back) is known absent, so no struct accel_job_args is built in
 * memory for a call to read back. The SQE may sit in the ring userspace
 * shares: each field is read once (accel_job_point() copies each point
 * before it checks it), with no copy of the whole job first.
 *
 * Context: process context (the submitter, or an io-wq worker).
 * Return: as accel_job_submit() with @cmd, through
 * accel_uring_submit_end(); -EINVAL also for what the SQE's format refuses
 * (no SQE128, unknown flags, more than ACCEL_URING_JOB_POINTS points, a
 * prediction past ACCEL_JOB_PREDICTION_MAX_US).
 */
int accel_uring_job_submit_inline(struct accel_file *afile,
				  struct io_uring_cmd *cmd,
				  unsigned int issue_flags)
{
	/* Not one byte past the 16th of a 64-byte SQE is read. */
	if (!(issue_flags & IO_URING_F_SQE128))
		return -EINVAL;
	return accel_job_submit_sqe(afile, cmd, issue_flags);
}

/* Look a job up by id; a reference. */
struct accel_sched_job *accel_job_lookup(struct accel_file *afile, u32 id)
{
	struct accel_sched_job *job;

	spin_lock(&afile->jobs.lock);
	job = accel_idtable_find_locked(&afile->jobs, id);
	if (job)
		kref_get(&job->ref);
	spin_unlock(&afile->jobs.lock);
	return job;
}

/*
 * A walk of the file's jobs: the first at or after slot *@pos (from 0),
 * with a reference, *@pos moved past it; NULL at the end.
 */
struct accel_sched_job *accel_job_next(struct accel_file *afile, u32 *pos)
{
	struct accel_sched_job *job;

	spin_lock(&afile->jobs.lock);
	job = accel_idtable_next_locked(&afile->jobs, pos);
	if (job)
		kref_get(&job->ref);
	spin_unlock(&afile->jobs.lock);
	return job;
}

/*
 * Drop @job's events that its file has not fetched: the COMPLETE that
 * called this came from an executor that knows the job was released (or
 * timed out). An event holds a job reference until fetched, past the
 * file's job limit, which counts jobs until they complete: a file that
 * completes without fetching (an executor that learns its releases
 * otherwise) would otherwise pin a job's memory for each submission.
 * With @timedout (a late COMPLETE, of a job that timed out), none is
 * queued after this either. Not the last reference: the caller's lookup
 * holds one.
 */
static void accel_job_drop_events(struct accel_sched_job *job, bool timedout)
{
	struct accel_file *afile = job->afile;
	int n = 0;

	/*
	 * Usually neither is queued: fetched, or a SUBMIT answered on the
	 * ring. A RELEASED was queued before the job's state said so, and
	 * this COMPLETE read it under the engine lock. A TIMEDOUT is queued
	 * by the timeout work after its lock section and after the job's
	 * points failed, perhaps after this COMPLETE: a late COMPLETE closes
	 * the job's events, so that the work queues none any more
	 * (accel_event_push_locked()), under the lock that orders the two.
	 */
	if (!timedout && list_empty(&job->ev_released.link) &&
	    list_empty(&job->ev_timedout.link))
		return;
	spin_lock_irq(&afile->events_lock);
	if (timedout)
		job->events_closed = true;
	if (!list_empty(&job->ev_released.link)) {
		list_del_init(&job->ev_released.link);
		n++;
	}
	if (!list_empty(&job->ev_timedout.link)) {
		list_del_init(&job->ev_timedout.link);
		n++;
	}
	spin_unlock_irq(&afile->events_lock);
	while (n--)
		kref_put(&job->ref, accel_job_free);
}

/*
 * COMPLETE: *@passed (if not NULL; 0 first) gets the signals a host signal
 * had passed already, when this call reached the job's points.
 */
int accel_job_do_complete(struct accel_file *afile,
			  const struct accel_job_complete *args, u64 *passed)
{
	struct accel_sched_job *job;
	struct accel_engine *e;
	struct accel_queue *q;
	bool reach, done;
	u64 dt;

	if (args->status && !accel_user_errno_ok(args->status))
		return -EINVAL;
	job = accel_job_lookup(afile, args->id);
	if (!job)
		return -ENOENT;
	e = job->engine;
	q = job->queue;
	spin_lock_irq(&e->lock);
	if (job->state == ACCEL_JOB_TIMEDOUT) {
		job->state = ACCEL_JOB_DONE;
		spin_unlock_irq(&e->lock);
		/*
		 * A pipelined job times out with its waits still armed: take
		 * its callbacks off their fences before it goes, or reaching
		 * a wait later calls back into a freed job (as cancelling one
		 * does, accel_job_cancel()).
		 */
		if (job->pipelined)
			accel_job_disarm(job);
		/*
		 * -ETIMEDOUT says the points failed already: the timeout
		 * work fails them after its lock section, perhaps not yet.
		 * A syncobj fails once; the second call changes nothing.
		 */
		accel_job_signal(job, -ETIMEDOUT);
		accel_job_drop_events(job, true);
		accel_job_unlink(job);
		accel_job_put(job);
		return -ETIMEDOUT;
	}
	if (job->state != ACCEL_JOB_RELEASED) {
		/*
		 * Done on another thread (completed, or cancelled with its
		 * queue or its file) and about to leave the id table: gone,
		 * as a moment later. Else not released: nothing to complete.
		 */
		int ret = job->state == ACCEL_JOB_DONE ? -ENOENT : -EINVAL;

		spin_unlock_irq(&e->lock);
		accel_job_put(job);
		return ret;
	}
	job->state = ACCEL_JOB_DONE;
	if (job->pipelined && atomic_read(&job->deps_left)) {
		/* Completed before its waits: finish when they are reached. */
		job->state = ACCEL_JOB_FINISHING;
		job->status = args->status;
	}
	/*
	 * Whether this COMPLETE finishes the job, decided here: once the
	 * lock is dropped a FINISHING job may become DONE on another thread
	 * (its waits reached, or its queue destroyed), which then signals
	 * and unlinks it itself.
	 */
	done = job->state == ACCEL_JOB_DONE;
	q->nr_in_flight--;
	/*
	 * Counted where it ends, once: a finishing job when its waits are
	 * reached (__accel_job_ready_locked()) or it is cancelled; a job
	 * ending now by what it signals, a pipelined job's failed wait
	 * over its status.
	 */
	if (done) {
		if (atomic_read(&job->error) || args->status)
			e->nr_failed++;
		else
			e->nr_completed++;
	}
	if (job->deadline_ns)
		accel_job_dl_count_locked(job, ktime_get_ns());
	/*
	 * Nothing runs longer than its timeout: more is charged as the
	 * timeout. Unbounded, 2^63 ns and over would wrap the charge
	 * negative and turn the queue's vruntime back, a way to take more
	 * than its share.
	 */
	dt = min(args->device_ns ?: ktime_get_ns() - job->release_ns,
		 job->timeout_ns);
	q->avg_ns = q->avg_ns ? (q->avg_ns * 7 + dt) / 8 : dt;
	q->busy_ns += dt;
	if (job->predicted_ns) {
		q->predicted_ns += job->predicted_ns;
		q->predicted_busy_ns += dt;
	}
	q->fstat->busy_ns += dt;
	e->busy_ns += dt;
	accel_queue_charge_locked(q, (s64)dt - (s64)job->charged);
	accel_timeout_del_locked(e, job);
	/*
	 * A job that reaches points may make jobs runnable, a HIGH waiter
	 * of a boosted LOW producer say: the credit it frees goes to the
	 * best of those and the rest, so it stays taken until its points
	 * are reached and what they readied is runnable
	 * (accel_engine_ready_now(), below): no release meanwhile, by a kick
	 * or a submission, can give it to whatever was runnable before.
	 */
	reach = done && job->nsignals;
	if (!reach) {
		e->in_flight--;
		accel_engine_schedule_locked(e);
	} else {
		atomic_inc(&e->completing); /* until accel_engine_ready_now() */
	}
	spin_unlock_irq(&e->lock);
	/*
	 * A pipelined job's last wait may have been reached on another CPU
	 * a moment ago, its callback (accel_job_dep_cb()) still between the
	 * decrement this read and the reference it takes: the job's
	 * references must not go before that callback is done. It runs
	 * under its fence's lock, which a removal takes.
	 */
	if (done && job->pipelined)
		accel_job_disarm(job);
	/* The job is the caller's file's, and so is the tenant. */
	this_cpu_add(afile->tenant->stats->busy_ns, dt);
	accel_job_drop_events(job, false);

	trace_job_complete(afile->client_id, e->name, job->qhandle, job->id,
			   args->status, dt, job->predicted_ns);
	if (done) {
		/* A pipelined job's failed wait overrides its status. */
		u64 p = accel_job_signal(job, atomic_read(&job->error) ?: args->status);

		if (passed)
			*passed = p;
		accel_job_unlink(job);
	}
	/* What the points made ready on this engine competes for the credit. */
	if (reach)
		accel_engine_ready_now(e);
	accel_job_put(job);
	return 0;
}
