// SPDX-License-Identifier: GPL-2.0
/*
 * DOC: the job scheduler
 *
 * *Engines* are named scheduling domains shared by every file that names
 * them; each has a credit limit, the most released jobs in flight at once,
 * which is what keeps the order of work in the scheduler's hands rather
 * than in a device queue. A *queue* belongs to one file and is bound to one
 * engine with a priority class and a weight. A *job* has waits and signals
 * (syncobj points), a user_data and a timeout.
 *
 * A job's life: **submitted** (its signal points are promised at once, so
 * waiters for *submitted* points wake) → **runnable** (every wait reached;
 * each wait is a callback on the point's fence, so this needs no thread and
 * no polling, and a job may wait on a point nothing has promised yet) →
 * **released** (the policy picked it within the engine's credits) →
 * **completed** by its executor with a status (its points reached, or failed
 * with the status). A job whose wait fails never runs: its points fail with
 * the same error. A released job past its timeout fails with -ETIMEDOUT; its
 * executor gets an event and a late COMPLETE is refused. When the file goes,
 * every job it did not complete is cancelled and its points fail with
 * -EOWNERDEAD, so no other process waits forever on a dead one.
 *
 * Submission follows the DRM scheduler's discipline: everything fallible
 * first (copying, lookups, allocations, the fences of the waits, the id),
 * then the point of no return (promising the signals, arming the waits),
 * which cannot fail.
 *
 * **Tenants.** Engine time is shared between *tenants* first, then among a
 * tenant's queues. A tenant is the cgroup (v2) of the task that opened the
 * file, read once at open; a file opened from the root cgroup is a tenant
 * of its own (root_tenant_per_file). So a tenant gains nothing by opening
 * more queues or more files, and per-tenant caps on queues and jobs span
 * its files. Credit limits and tenant weights are the administrator's, in
 * sysfs (/sys/kernel/accelsched/engines/<name>/credits,
 * .../tenants/<cgroup-id>/weight); a HIGH queue needs CAP_SYS_NICE.
 *
 * **Policy.** Strict priority between the classes; inside a class, the
 * tenant with the least virtual runtime goes first, then its queue with the
 * least. A tenant's virtual runtime is the engine time its queues of the
 * class consumed divided by the tenant's weight; a queue's, the engine time
 * it consumed divided by its own weight (CFS-like: a tenant or queue that
 * becomes runnable starts no lower than its level's floor, so idling banks
 * no credit). A release is charged an estimate of the job's time (the
 * queue's running average), corrected at COMPLETE by the device time the
 * executor reports, so that several credits do not all go to one queue.
 * Only points order jobs: a queue's jobs become runnable in any order and a
 * blocked job never holds back a later independent one, while the runnable
 * jobs of a queue are released in submission order. *Priority inheritance*
 * (sched_inherit.c): a job waiting on a point that an unreleased job of a
 * lower class promised raises that job, and transitively the unreleased
 * jobs it waits on, to its class until its release.
 *
 * **Statistics.** Engine time (the device time a COMPLETE reports, else the
 * time since the release), releases, and *latency*, the time from runnable
 * to released (what the credits and the policy made a job wait; summed, so
 * that latency over releases is a mean), are counted per engine, tenant,
 * file and queue: an engine's in sysfs, a cgroup tenant's in sysfs, a
 * file's and its queues' in fdinfo. A pipelined job is runnable from when
 * pipelining made it so, before its waits are reached. The engine's, file's
 * and queue's counters are written under the engine's lock; a tenant's are
 * atomic, as it spans engines.
 *
 * **Locking.** Each engine's spinlock (taken with interrupts off) protects
 * its run queues, its tenants' entities, the scheduling fields of its queues
 * and the state of their jobs; a file's event lock nests inside it. Fence
 * callbacks take no engine lock: the last wait of a job puts it on the
 * engine's lock-free ready list and kicks the engine's work item, which
 * makes it runnable and releases. Syncobjs are signalled and failed outside
 * every engine lock. accel_engines_lock and accel_tenants_lock (mutexes)
 * guard the lists of engines and tenants, their references reaching zero
 * and their administrator's pins; a sysfs write takes one of them, so an
 * object's sysfs directory is removed only after it is dropped.
 *
 * **Files.** This file holds the fronts: the module parameters, the ioctls
 * and io_uring commands (but the inline SUBMIT, which sched_job.c compiles
 * with the submission as one function, around the same
 * accel_uring_submit_begin() and accel_uring_submit_end() as the
 * SUBMIT here), a file's scheduler state from open to release,
 * fdinfo, the sysfs root and the module's init and exit. The rest is split
 * by concern, as the DRM scheduler's is: sched_engine.c (engines, their run
 * queues and the release policy), sched_inherit.c (priority inheritance),
 * sched_deadline.c (deadlines), sched_job.c (a job's life), sched_timeout.c (the released jobs'
 * timeouts) and sched_tenant.c (tenants); sched_internal.h is what they
 * share. Each opens with its own
 * DOC block, which names its locking.
 */
#include <linux/capability.h>
#include <linux/debugfs.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/poll.h>
#include <linux/sched/signal.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/srcu.h>
#include <linux/uaccess.h>

#include "internal.h"
#include "sched_internal.h"

#define CREATE_TRACE_POINTS
#include "trace.h"

/* ACCEL_JOB_TRACE()'s events, out of line. */
#define ACCEL_JOB_TRACE_FN(ev)						\
void accel_job_trace_##ev(struct accel_sched_job *job)			\
{									\
	trace_job_##ev(job->afile->client_id, accel_job_engine(job),	\
		       job->qhandle, job->id, job->priority);		\
}
ACCEL_JOB_TRACE_FN(submit)
ACCEL_JOB_TRACE_FN(runnable)
ACCEL_JOB_TRACE_FN(release)
ACCEL_JOB_TRACE_FN(timeout)

static unsigned int accel_max_queues = 64;
module_param_named(max_queues, accel_max_queues, uint, 0644);
MODULE_PARM_DESC(max_queues, "Most queues one open file may hold (default 64)");

unsigned int accel_max_jobs = 16384;
module_param_named(max_jobs, accel_max_jobs, uint, 0644);
MODULE_PARM_DESC(max_jobs, "Most jobs one open file may have submitted and not completed (default 16384)");

/*
 * A uint parameter that takes only @min .. @max: anything else (not a
 * number, past UINT_MAX, out of range) is refused with -EINVAL and the
 * value stays.
 */
static int accel_param_set_range(const char *val, const struct kernel_param *kp,
				 unsigned int min, unsigned int max)
{
	unsigned int v;

	if (kstrtouint(val, 0, &v) || v < min || v > max)
		return -EINVAL;
	WRITE_ONCE(*(unsigned int *)kp->arg, v);
	return 0;
}

/*
 * An engine's credits are 1 .. ACCEL_CREDITS_MAX, as an administrator's
 * write to its sysfs file: a default outside that was taken and then
 * clamped at each new engine (0 became 1), so the value shown was not the
 * one used. The write is refused instead, -EINVAL, and the value stays.
 */
static int accel_param_set_credits(const char *val,
				   const struct kernel_param *kp)
{
	return accel_param_set_range(val, kp, 1, ACCEL_CREDITS_MAX);
}

static const struct kernel_param_ops accel_credits_ops = {
	.set = accel_param_set_credits,
	.get = param_get_uint,
};

unsigned int accel_default_credits = 1;
module_param_cb(default_credits, &accel_credits_ops, &accel_default_credits, 0644);
MODULE_PARM_DESC(default_credits, "Credit limit of a new engine until the administrator sets one, 1 to 65536 (default 1)");

static unsigned int accel_tenant_max_queues = 1024;
module_param_named(tenant_max_queues, accel_tenant_max_queues, uint, 0644);
MODULE_PARM_DESC(tenant_max_queues, "Most queues one tenant may hold over all its files (default 1024)");

unsigned int accel_tenant_max_jobs = 65536;
module_param_named(tenant_max_jobs, accel_tenant_max_jobs, uint, 0644);
MODULE_PARM_DESC(tenant_max_jobs, "Most jobs one tenant may have submitted and not completed over all its files (default 65536)");

bool accel_root_tenant_per_file = true;
module_param_named(root_tenant_per_file, accel_root_tenant_per_file, bool, 0644);
MODULE_PARM_DESC(root_tenant_per_file, "A file opened from the root cgroup (or where cgroup2 is not used) is a tenant of its own; N: the root cgroup is one tenant (default Y)");

/*
 * The default timeout is one a job could ask for itself: 1 ms to an hour
 * (a job's timeout_ns is at most an hour). Outside that, every job asking
 * for none would be refused (above an hour) or time out at once (0); the
 * write is refused instead, -EINVAL, and the value stays.
 */
#define ACCEL_JOB_TIMEOUT_MS_MAX 3600000U

static int accel_param_set_timeout_ms(const char *val,
				      const struct kernel_param *kp)
{
	return accel_param_set_range(val, kp, 1, ACCEL_JOB_TIMEOUT_MS_MAX);
}

static const struct kernel_param_ops accel_timeout_ms_ops = {
	.set = accel_param_set_timeout_ms,
	.get = param_get_uint,
};

unsigned int accel_job_timeout_ms = 10000;
module_param_cb(job_timeout_ms, &accel_timeout_ms_ops, &accel_job_timeout_ms, 0644);
MODULE_PARM_DESC(job_timeout_ms, "Timeout of a released job that asks for none, 1 to 3600000 (default 10000)");

/*
 * A submission runs from its queue's lookup to the end of arming in a read
 * section of this SRCU: QUEUE_DESTROY waits for those in flight before it
 * cancels the queue's jobs and frees it, so a job is never armed on a
 * freed queue, nor after the cancel that should have taken it. A read
 * section costs a per-CPU increment; destroying a queue, a grace period.
 */
DEFINE_SRCU(accel_submit_srcu);

/*
 * An engine or tenant whose last reference went keeps its name (and its
 * sysfs directory) until its kobject is deleted, which must happen without
 * the list's mutex (a sysfs write in progress takes it). Meanwhile it
 * stays listed, marked dying, and a lookup of the same name waits for it
 * to go rather than add a second directory of that name (-EEXIST: a new
 * engine refused, or a file's open failing). Each removal bumps the
 * generation and wakes the waiters.
 */
static DECLARE_WAIT_QUEUE_HEAD(accel_sysfs_gone_wq);
atomic_t accel_sysfs_gone = ATOMIC_INIT(0);

void accel_sysfs_removed(void)
{
	atomic_inc(&accel_sysfs_gone);
	wake_up_all(&accel_sysfs_gone_wq);
}

/* Wait until a removal after generation @gen (read under the list lock). */
void accel_sysfs_wait_removal(int gen)
{
	wait_event(accel_sysfs_gone_wq, atomic_read(&accel_sysfs_gone) != gen);
}

static struct dentry *accel_debugfs;
/* /sys/kernel/accelsched/{engines,tenants}/ */
static struct kobject *accel_sysfs;
struct kobject *accel_sysfs_engines, *accel_sysfs_tenants;

/* ---------------------------------------------------------------- ioctls */

static void accel_queue_free(struct accel_queue *q);

/*
 * The file's totals on @e (a new one holds an engine reference), found or
 * made. Called with the file's sched_mutex.
 */
static struct accel_file_engine *accel_file_engine_get(struct accel_file *afile,
						       struct accel_engine *e)
{
	struct accel_file_engine *fe;

	lockdep_assert_held(&afile->sched_mutex);
	list_for_each_entry(fe, &afile->engines, link)
		if (fe->engine == e)
			return fe;
	fe = kzalloc(sizeof(*fe), GFP_KERNEL);
	if (!fe)
		return NULL;
	kref_get(&e->ref);
	fe->engine = e;
	/* fdinfo walks the list without the mutex. */
	list_add_tail_rcu(&fe->link, &afile->engines);
	return fe;
}

/*
 * Bind @q to its tenant's entity of its class on its engine, made from
 * @spare if there is none yet (then *@spare is taken).
 */
static void accel_queue_bind_locked(struct accel_queue *q,
				    struct accel_entity **spare)
{
	struct accel_engine *e = q->engine;
	struct accel_tenant *t = q->afile->tenant;
	struct accel_entity *ent;

	lockdep_assert_held(&e->lock);
	list_for_each_entry(ent, &e->entities, link)
		if (ent->tenant == t && ent->priority == q->priority)
			goto found;
	ent = *spare;
	*spare = NULL;
	ent->tenant = t;
	ent->priority = q->priority;
	ent->rq = RB_ROOT_CACHED;
	RB_CLEAR_NODE(&ent->rb);
	/* A new tenant starts at the class's floor, like a waking one. */
	ent->vruntime = e->min_vruntime[q->priority];
	list_add_tail(&ent->link, &e->entities);
found:
	ent->nr_queues++;
	q->ent = ent;
	/* A new queue starts level with its tenant's runnable queues. */
	q->vruntime = ent->min_vruntime;
}

int accel_ioctl_queue_create(struct accel_file *afile, void *data)
{
	struct accel_queue_create *args = data;
	struct accel_tenant *t = afile->tenant;
	struct accel_entity *spare;
	struct accel_engine *e;
	struct accel_queue *q;
	u32 handle;
	int ret;

	if (args->flags || args->pad || args->handle)
		return -EINVAL;
	if (args->priority >= ACCEL_PRIORITY_COUNT ||
	    args->weight < ACCEL_WEIGHT_MIN || args->weight > ACCEL_WEIGHT_MAX ||
	    args->credits > ACCEL_CREDITS_MAX)
		return -EINVAL;
	if (!accel_engine_name_valid(args->engine))
		return -EINVAL;
	/* As amdgpu's context priorities: above NORMAL needs CAP_SYS_NICE. */
	if (args->priority == ACCEL_PRIORITY_HIGH && !capable(CAP_SYS_NICE))
		return -EACCES;
	if (atomic_inc_return(&t->nr_queues) > accel_tenant_max_queues) {
		ret = -EMFILE;
		goto err_count;
	}
	/*
	 * The handle first, reserved (it reads as no queue): a file at its
	 * max_queues is refused before an engine is made or its credits are
	 * set, or each refused call with a new name left one behind.
	 */
	xa_lock(&afile->queues);
	ret = __accel_handle_alloc(&afile->queues, &afile->nr_queues, &handle,
				   NULL, READ_ONCE(accel_max_queues));
	xa_unlock(&afile->queues);
	if (ret)
		goto err_count;
	q = kzalloc(sizeof(*q), GFP_KERNEL);
	spare = kzalloc(sizeof(*spare), GFP_KERNEL);
	if (!q || !spare) {
		ret = -ENOMEM;
		goto err_alloc;
	}
	e = accel_engine_get(args->engine, args->credits);
	if (IS_ERR(e)) {
		ret = PTR_ERR(e);
		goto err_alloc;
	}
	q->afile = afile;
	q->engine = e;
	q->priority = args->priority;
	q->weight = args->weight;
	q->inv_weight = accel_inv_weight(q->weight);
	INIT_LIST_HEAD(&q->runnable);
	INIT_LIST_HEAD(&q->waiting);
	RB_CLEAR_NODE(&q->rb);
	INIT_LIST_HEAD(&q->blink);
	INIT_LIST_HEAD(&q->dl_jobs);
	RB_CLEAR_NODE(&q->dl_rb);
	mutex_lock(&afile->sched_mutex);
	q->fstat = accel_file_engine_get(afile, e);
	mutex_unlock(&afile->sched_mutex);
	if (!q->fstat) {
		ret = -ENOMEM;
		goto err_engine;
	}
	spin_lock_irq(&e->lock);
	accel_queue_bind_locked(q, &spare);
	spin_unlock_irq(&e->lock);
	kfree(spare);
	/*
	 * Once stored, another thread may destroy and free the queue: set
	 * its handle under the xarray's lock, which destroy's lookup takes.
	 * The reserved slot needs no memory (a store over a reservation
	 * replaces it; a compare with NULL would not match it).
	 */
	q->handle = handle;
	args->handle = handle;
	xa_lock(&afile->queues);
	WARN_ON_ONCE(xa_is_err(__xa_store(&afile->queues, handle, q, GFP_NOWAIT)));
	if (handle < ACCEL_QUEUE_FAST)
		WRITE_ONCE(afile->queue_fast[handle], q);
	xa_unlock(&afile->queues);
	return 0;

err_engine:
	accel_engine_put(e);
err_alloc:
	kfree(spare);
	kfree(q);
	xa_lock(&afile->queues);
	__xa_erase(&afile->queues, handle); /* a reservation: releases it */
	afile->nr_queues--;
	xa_unlock(&afile->queues);
err_count:
	atomic_dec(&t->nr_queues);
	return ret;
}

/* Cancel every job of @afile (of @q only, if given) with @error. */
static void accel_cancel_jobs(struct accel_file *afile, struct accel_queue *q,
			      int error)
{
	struct accel_sched_job *job;
	u32 pos = 0;

	while ((job = accel_job_next(afile, &pos))) {
		if (!q || job->queue == q)
			accel_job_cancel(job, error);
		accel_job_put(job);
	}
}

/*
 * A destroyed queue (@dead set) leaves its engine's run queue first, so
 * that the credits its cancelled jobs give back go to other queues, never
 * to one of its own jobs about to be cancelled.
 */
static void accel_queue_retire(struct accel_queue *q)
{
	struct accel_engine *e = q->engine;

	spin_lock_irq(&e->lock);
	if (q->on_rq)
		accel_rq_del_locked(e, q);
	spin_unlock_irq(&e->lock);
}

static void accel_queue_free(struct accel_queue *q)
{
	struct accel_engine *e = q->engine;
	struct accel_entity *ent = q->ent;

	spin_lock_irq(&e->lock);
	WARN_ON_ONCE(!list_empty(&q->waiting)); /* each was cancelled */
	if (q->on_rq)
		accel_rq_del_locked(e, q);
	if (--ent->nr_queues)
		ent = NULL;
	else
		list_del(&ent->link);
	spin_unlock_irq(&e->lock);
	kfree(ent);
	atomic_dec(&q->afile->tenant->nr_queues);
	accel_engine_put(e);
	kfree(q);
}

int accel_ioctl_queue_destroy(struct accel_file *afile, void *data)
{
	struct accel_queue_destroy *args = data;
	struct accel_queue *q;

	if (args->pad)
		return -EINVAL;
	mutex_lock(&afile->sched_mutex);
	xa_lock(&afile->queues);
	q = xa_load(&afile->queues, args->handle);
	if (q && !q->dead)
		WRITE_ONCE(q->dead, true); /* no new jobs from now on */
	else
		q = NULL;
	xa_unlock(&afile->queues);
	if (!q) {
		mutex_unlock(&afile->sched_mutex);
		return -ENOENT;
	}
	/*
	 * Unpublish first, then wait: a submission on another thread may
	 * have looked the queue up before it went from the table. Every such
	 * one is inside accel_submit_srcu; once they are all out, each has
	 * either seen @dead or armed its job (which is then in the job table,
	 * for the cancel below), and no later one can find @q. Waiting before
	 * the erase would let a lookup that starts after the wait still find
	 * @q and read it after it is freed.
	 */
	xa_lock(&afile->queues);
	if (args->handle < ACCEL_QUEUE_FAST)
		WRITE_ONCE(afile->queue_fast[args->handle], NULL);
	__xa_erase(&afile->queues, args->handle);
	afile->nr_queues--;
	xa_unlock(&afile->queues);
	synchronize_srcu(&accel_submit_srcu);
	accel_queue_retire(q);
	accel_cancel_jobs(afile, q, -ECANCELED);
	mutex_unlock(&afile->sched_mutex);
	/* Jobs still on the ready list or in a timeout do not touch @q. */
	accel_queue_free(q);
	return 0;
}

int accel_ioctl_job_submit(struct accel_file *afile, void *data)
{
	struct accel_job_submit *args = data;
	struct accel_job __user *ujobs;
	/* Each written whole before it is read: no zeroing per call. */
	struct accel_job_args a __uninitialized;
	struct accel_job uj __uninitialized;
	u32 i;

	if (args->flags || args->pad || args->submitted)
		return -EINVAL;
	if (!args->count || args->count > ACCEL_JOB_SUBMIT_MAX)
		return -EINVAL;
	if (!IS_ALIGNED(args->jobs, sizeof(u64)))
		return -EINVAL;
	ujobs = u64_to_user_ptr(args->jobs);
	for (i = 0; i < args->count; i++) {
		int idx, ret;

		if (copy_from_user(&uj, &ujobs[i], sizeof(uj)))
			return -EFAULT;
		if (accel_job_args_user(&a, &uj))
			return -EINVAL;
		idx = srcu_read_lock(&accel_submit_srcu);
		ret = accel_job_submit(afile, &a, &ujobs[i].id, NULL);
		srcu_read_unlock(&accel_submit_srcu, idx);
		if (ret < 0)
			return ret;
		args->submitted = i + 1;
		/*
		 * Released with ACCEL_JOB_F_ANSWER: no event tells, so the id
		 * says it. If that write faults (the array was unmapped during
		 * the call), -EFAULT with the job counted as submitted: it
		 * times out, as any job its executor never runs.
		 */
		if (ret > 0 && put_user((u32)ret | ACCEL_JOB_ID_RELEASED,
					&ujobs[i].id))
			return -EFAULT;
	}
	return 0;
}

int accel_ioctl_job_complete(struct accel_file *afile, void *data)
{
	return accel_job_do_complete(afile, data, NULL);
}

/*
 * Move up to @max of @afile's events to @events, in order: how many, in
 * *@countp; -EFAULT if none could be written (each stays queued).
 */
static int accel_events_fetch(struct accel_file *afile, u64 events, u32 max,
			      u32 *countp)
{
	struct accel_job_event __user *uev = u64_to_user_ptr(events);
	struct accel_event_node *n;
	u32 count = 0;

	while (count < max) {
		struct accel_sched_job *job;

		spin_lock_irq(&afile->events_lock);
		n = list_first_entry_or_null(&afile->events,
					     struct accel_event_node, link);
		if (n)
			list_del_init(&n->link);
		spin_unlock_irq(&afile->events_lock);
		if (!n)
			break;
		job = accel_event_job(n);
		if (copy_to_user(&uev[count], &n->ev, sizeof(n->ev))) {
			/* Put it back, first: nothing is lost. */
			spin_lock_irq(&afile->events_lock);
			list_add(&n->link, &afile->events);
			spin_unlock_irq(&afile->events_lock);
			if (!count)
				return -EFAULT;
			break;
		}
		if (n->ev.type == ACCEL_JOB_EVENT_FAILED)
			accel_job_uncount(job);
		accel_job_put(job);
		count++;
	}
	*countp = count;
	return 0;
}

static bool accel_fetch_args_ok(u64 events, u32 max)
{
	return max && max <= ACCEL_JOB_SUBMIT_MAX && IS_ALIGNED(events, sizeof(u64));
}

int accel_ioctl_job_fetch(struct accel_file *afile, void *data)
{
	struct accel_job_fetch *args = data;

	if (args->flags || args->pad || args->count ||
	    !accel_fetch_args_ok(args->events, args->max))
		return -EINVAL;
	return accel_events_fetch(afile, args->events, args->max, &args->count);
}

/*
 * COMPLETE, then FETCH: an executor learns the releases its COMPLETE
 * caused without a wake of whoever polls the fd (a thread that would only
 * hand them back to it). While the COMPLETE runs, this task is the file's
 * fetcher: what it queues for the file wakes nobody
 * (accel_event_push_locked()), since the fetch below takes it; whatever
 * is still queued after the fetch (more than @max, a fault) wakes the
 * pollers as usual. Events queued meanwhile by others wake as always.
 */
int accel_ioctl_job_complete_fetch(struct accel_file *afile, void *data)
{
	struct accel_job_complete_fetch *args = data;
	struct accel_job_complete c = {
		.id = args->id, .status = args->status,
		.device_ns = args->device_ns,
	};
	bool left;
	int ret;

	if (args->flags || args->count || args->result || args->passed ||
	    !accel_fetch_args_ok(args->events, args->max))
		return -EINVAL;
	WRITE_ONCE(afile->fetcher, current);
	args->passed = 0;
	args->result = accel_job_do_complete(afile, &c, &args->passed);
	cmpxchg(&afile->fetcher, current, NULL);
	ret = accel_events_fetch(afile, args->events, args->max, &args->count);
	spin_lock_irq(&afile->events_lock);
	left = !list_empty(&afile->events);
	spin_unlock_irq(&afile->events_lock);
	if (left)
		wake_up_interruptible(&afile->events_wq);
	return ret;
}

__poll_t accel_sched_poll(struct accel_file *afile, struct file *file,
			  struct poll_table_struct *wait)
{
	__poll_t mask = 0;

	poll_wait(file, &afile->events_wq, wait);
	spin_lock_irq(&afile->events_lock);
	if (!list_empty(&afile->events))
		mask |= EPOLLIN | EPOLLRDNORM;
	spin_unlock_irq(&afile->events_lock);
	return mask;
}

/* ------------------------------------------------------------- io_uring */

int accel_uring_job_submit(struct accel_file *afile, struct io_uring_cmd *cmd,
			   unsigned int issue_flags)
{
	struct accel_uring_submit args;
	/* Each written whole before it is read: no zeroing per SUBMIT. */
	struct accel_job_args a __uninitialized;
	struct accel_job uj __uninitialized;
	int idx, ret;

	memcpy(&args, accel_uring_cmd_payload(cmd), sizeof(args));
	if (args.reserved || !IS_ALIGNED(args.job, sizeof(u64)))
		return -EINVAL;
	if (copy_from_user(&uj, u64_to_user_ptr(args.job), sizeof(uj)))
		return -EFAULT;
	if (accel_job_args_user(&a, &uj))
		return -EINVAL;
	idx = accel_uring_submit_begin(cmd, issue_flags);
	ret = accel_job_submit(afile, &a, NULL, cmd);
	return accel_uring_submit_end(afile, cmd, issue_flags, idx, ret);
}

int accel_uring_job_complete(struct accel_file *afile, struct io_uring_cmd *cmd)
{
	struct accel_job_complete args;

	memcpy(&args, accel_uring_cmd_payload(cmd), sizeof(args));
	return accel_job_do_complete(afile, &args, NULL);
}

/* io_uring cancels a pending SUBMIT (its task execs, or its ring goes). */
void accel_uring_job_cancel(struct io_uring_cmd *cmd, unsigned int issue_flags)
{
	struct accel_sched_job *job =
		READ_ONCE(accel_uring_cmd_pdu(cmd, struct accel_submit_pdu)->job);
	struct accel_engine *e;
	bool mine;

	if (!job)
		return; /* io-wq still issuing it: a later cancel round takes it */
	e = job->engine;
	spin_lock_irq(&e->lock);
	mine = job->cmd == cmd;
	if (mine)
		job->cmd = NULL; /* we answer it here */
	spin_unlock_irq(&e->lock);
	if (!mine)
		return; /* answered already, through task work */
	/*
	 * io_uring cancels a uring_cmd only when its ring or its task goes
	 * (a process killed, an executor closing its ring): the job's owner
	 * is gone, so its points fail with -EOWNERDEAD, as on every other
	 * producer-death path; the request itself is answered -ECANCELED.
	 */
	accel_job_cancel(job, -EOWNERDEAD);
	accel_uring_cmd_done(cmd, -ECANCELED, 0, issue_flags);
	accel_job_put(job);
}

/*
 * Without cancelable uring_cmds: cancel the pending SUBMITs whose
 * submitter's process is going or exec'ing (accel_uring_cmd_abandoned();
 * notify.c's monitor calls this). A thread that exits leaves its SUBMITs
 * to its process, as io_uring does.
 */
void accel_sched_monitor(struct accel_file *afile, bool *again)
{
	struct accel_sched_job *job;
	u32 pos = 0;

	while ((job = accel_job_next(afile, &pos))) {
		bool pending, abandoned = false;

		/*
		 * Judged under the lock: while job->cmd names the SUBMIT, the
		 * request is pending and alive, and the release that answers
		 * it clears job->cmd here first. Read after the unlock, it
		 * may be NULL, or a request completed and reused.
		 */
		spin_lock_irq(&job->engine->lock);
		pending = job->cmd && job->task;
		if (pending)
			abandoned = accel_uring_cmd_abandoned(job->task, job->cmd);
		spin_unlock_irq(&job->engine->lock);
		if (abandoned)
			accel_job_cancel(job, -EOWNERDEAD); /* answers the cmd */
		else if (pending)
			*again = true;
		accel_job_put(job);
	}
}

/* ---------------------------------------------------------------- files */

/*
 * Every open file, for the debugfs jobs listing (accel_jobs_show()): a file
 * leaves the list first thing in accel_sched_file_release(), under the
 * mutex that the listing holds while it reads the file's jobs.
 */
static DEFINE_MUTEX(accel_files_lock);
static LIST_HEAD(accel_files);

void accel_sched_file_init(struct accel_file *afile)
{
	xa_init_flags(&afile->queues, XA_FLAGS_ALLOC1);
	accel_idtable_init(&afile->jobs, ACCEL_JOB_RES_ID_MASK);
	spin_lock_init(&afile->events_lock);
	INIT_LIST_HEAD(&afile->events);
	init_waitqueue_head(&afile->events_wq);
	mutex_init(&afile->sched_mutex);
	INIT_LIST_HEAD(&afile->engines);
	atomic_set(&afile->nr_jobs, 0);
	atomic_set(&afile->answers_in_transit, 0);
	mutex_lock(&accel_files_lock);
	list_add_tail(&afile->link, &accel_files);
	mutex_unlock(&accel_files_lock);
}

/*
 * The file goes (its process may have died): every job it did not complete
 * is cancelled and its points fail with -EOWNERDEAD.
 */
void accel_sched_file_release(struct accel_file *afile)
{
	struct accel_file_engine *fe, *fetmp;
	struct accel_event_node *n, *tmp;
	struct accel_queue *q;
	unsigned long handle;

	mutex_lock(&accel_files_lock);
	list_del(&afile->link);
	mutex_unlock(&accel_files_lock);

	mutex_lock(&afile->sched_mutex);
	xa_lock(&afile->queues);
	xa_for_each(&afile->queues, handle, q)
		WRITE_ONCE(q->dead, true);
	xa_unlock(&afile->queues);
	xa_for_each(&afile->queues, handle, q)
		accel_queue_retire(q);
	accel_cancel_jobs(afile, NULL, -EOWNERDEAD);
	mutex_unlock(&afile->sched_mutex);
	/*
	 * A kick may be finishing a job it took before we cancelled (a failed
	 * wait, a pipelined job whose waits were just reached): it unlinks
	 * the job from this file after dropping the engine lock. Wait for it.
	 */
	flush_workqueue(accel_wq);

	spin_lock_irq(&afile->events_lock);
	list_for_each_entry_safe(n, tmp, &afile->events, link) {
		struct accel_sched_job *job = accel_event_job(n);

		list_del_init(&n->link);
		spin_unlock_irq(&afile->events_lock);
		if (n->ev.type == ACCEL_JOB_EVENT_FAILED)
			accel_job_uncount(job);
		accel_job_put(job);
		spin_lock_irq(&afile->events_lock);
	}
	spin_unlock_irq(&afile->events_lock);

	xa_for_each(&afile->queues, handle, q) {
		if (handle < ACCEL_QUEUE_FAST)
			afile->queue_fast[handle] = NULL;
		xa_erase(&afile->queues, handle);
		accel_queue_free(q);
	}
	xa_destroy(&afile->queues);
	accel_idtable_destroy(&afile->jobs); /* warns if a job is left linked */
	list_for_each_entry_safe(fe, fetmp, &afile->engines, link) {
		list_del(&fe->link);
		accel_engine_put(fe->engine);
		kfree(fe);
	}
	accel_tenant_put(afile->tenant);
}

/*
 * An engine's name in fdinfo: the drm-usage-stats format splits a line at
 * its first ':' and allows none in a key, while engine names may hold one.
 * Each ':' is written "%3a" ('%' is never in an engine name, so the
 * mapping is one to one), in keys and, alike, in values.
 */
static void accel_seq_engine_name(struct seq_file *m, const char *name)
{
	for (; *name; name++) {
		if (*name == ':')
			seq_puts(m, "%3a");
		else
			seq_putc(m, *name);
	}
}

static void accel_seq_engine_key(struct seq_file *m, const char *prefix,
				 const char *name)
{
	seq_puts(m, prefix);
	accel_seq_engine_name(m, name);
	seq_putc(m, ':');
}

/* The file's totals on one engine: four lines. */
static void accel_show_file_engine(struct seq_file *m,
				   struct accel_file_engine *fe)
{
	struct accel_engine *e = fe->engine;
	u64 busy_ns, released, latency_ns;

	/* One snapshot, so that latency over released is a true mean. */
	spin_lock_irq(&e->lock);
	busy_ns = fe->busy_ns;
	released = fe->nr_released;
	latency_ns = fe->latency_ns;
	spin_unlock_irq(&e->lock);
	accel_seq_engine_key(m, "drm-engine-", e->name);
	seq_printf(m, "\t%llu ns\n", busy_ns);
	accel_seq_engine_key(m, "drm-engine-capacity-", e->name);
	seq_printf(m, "\t%u\n", READ_ONCE(e->credits));
	accel_seq_engine_key(m, "accel-released-", e->name);
	seq_printf(m, "\t%llu\n", released);
	accel_seq_engine_key(m, "accel-latency-", e->name);
	seq_printf(m, "\t%llu ns\n", latency_ns);
}

const char *const accel_priority_names[ACCEL_PRIORITY_COUNT] = {
	"high", "normal", "low",
};

/* One queue's line, its counters read in one engine lock section. */
static void accel_show_queue(struct seq_file *m, unsigned long handle,
			     struct accel_queue *q)
{
	struct accel_engine *e = q->engine;
	u32 runnable, in_flight;
	u64 released, busy_ns, latency_ns, predicted_ns, predicted_busy_ns;
	u64 dl_met, dl_missed;

	spin_lock_irq(&e->lock);
	runnable = q->nr_runnable;
	in_flight = q->nr_in_flight;
	released = q->nr_released;
	busy_ns = q->busy_ns;
	latency_ns = q->latency_ns;
	predicted_ns = q->predicted_ns;
	predicted_busy_ns = q->predicted_busy_ns;
	dl_met = q->nr_deadlines_met;
	dl_missed = q->nr_deadlines_missed;
	spin_unlock_irq(&e->lock);
	seq_printf(m, "accel-queue-%lu:\tengine=", handle);
	accel_seq_engine_name(m, e->name);
	seq_printf(m, " priority=%s weight=%u runnable=%u in_flight=%u released=%llu busy_ns=%llu latency_ns=%llu predicted_ns=%llu predicted_busy_ns=%llu deadlines_met=%llu deadlines_missed=%llu\n",
		   accel_priority_names[q->priority], q->weight, runnable,
		   in_flight, released, busy_ns, latency_ns, predicted_ns,
		   predicted_busy_ns, dl_met, dl_missed);
}

/**
 * accel_sched_show_fdinfo - the file's scheduler lines of its fdinfo.
 * @m:     the fdinfo.
 * @afile: the file.
 *
 * Per engine the file ever named, in the drm-usage-stats format:
 * ``drm-engine-<engine>: <ns> ns``, the engine time its jobs consumed over
 * the file's whole life (queues destroyed included), and
 * ``drm-engine-capacity-<engine>: <credits>``; then, likewise for the
 * file's whole life, ``accel-released-<engine>: <n>``, its jobs released
 * there, and ``accel-latency-<engine>: <ns> ns``, the sum of their
 * latencies (runnable to released). Then ``accel-tenant`` (the cgroup id of
 * the file's tenant, 0 for a tenant of its own). Last, per live queue in
 * handle order, ``accel-queue-<handle>:`` and space-separated
 * ``name=value`` fields: ``engine``, ``priority``, ``weight``,
 * ``runnable`` (jobs runnable, not released), ``in_flight`` (released, not
 * completed), ``released``, ``busy_ns`` and ``latency_ns`` (since the
 * queue was made).
 *
 * It takes no mutex: a QUEUE_DESTROY of the file holds its sched_mutex for
 * an SRCU grace period, and a reader queued behind a thread destroying
 * queues in a loop would wait for one per read. The file's engine totals
 * are only ever added to their list (RCU list insertion) and freed with
 * the file, which outlives its fdinfo read. The queues are walked under
 * the lock of the file's queue table: QUEUE_DESTROY and the file's release
 * take a queue out of the table, under that lock, before freeing it, so
 * each queue found stays allocated while it is held; a queue being
 * destroyed (dead) is left out. Each queue's counters are one engine lock
 * section, nested in the table's lock (nothing takes them the other way).
 *
 * Context: process context; takes the file's queue table lock, then each
 * engine's lock; never sleeps.
 */
void accel_sched_show_fdinfo(struct seq_file *m, struct accel_file *afile)
{
	struct accel_file_engine *fe;
	struct accel_queue *q;
	unsigned long handle;

	rcu_read_lock();
	list_for_each_entry_rcu(fe, &afile->engines, link)
		accel_show_file_engine(m, fe);
	rcu_read_unlock();
	seq_printf(m, "accel-tenant:\t%llu\n", afile->tenant->cgroup_id);
	xa_lock(&afile->queues);
	xa_for_each(&afile->queues, handle, q)
		if (!q->dead)
			accel_show_queue(m, handle, q);
	xa_unlock(&afile->queues);
}

/* ------------------------------------------------------------------ sysfs */

/*
 * /sys/kernel/accelsched/engines/<name>/credits and
 * /sys/kernel/accelsched/tenants/<cgroup-id>/weight: the administrator's
 * (0644, and CAP_SYS_ADMIN checked on write too, as a file mode alone does
 * not hold in a user namespace's view of sysfs). A write pins its object:
 * the configuration stays until the module is unloaded, even when the last
 * queue of the engine, or the last file of the tenant, goes.
 */
/* An administrator's write of a number in [@min, @max]: -EPERM, -EINVAL. */
int accel_sysfs_admin_u32(const char *buf, u32 min, u32 max, u32 *v)
{
	int ret;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	ret = kstrtou32(buf, 10, v);
	if (ret)
		return ret;
	return *v < min || *v > max ? -EINVAL : 0;
}

/*
 * Pin an engine or tenant that a write configures, under its list's lock;
 * false if it is going (off its list, or dying): the write then fails.
 */
bool accel_sysfs_pin_locked(struct list_head *link, bool dying,
			    bool *pinned, struct kref *ref)
{
	if (list_empty(link) || dying)
		return false;
	if (!*pinned)
		*pinned = kref_get_unless_zero(ref);
	return true;
}

static int accel_sysfs_init(void)
{
	accel_sysfs = kobject_create_and_add(ACCEL_DEVICE_NAME, kernel_kobj);
	if (!accel_sysfs)
		return -ENOMEM;
	accel_sysfs_engines = kobject_create_and_add("engines", accel_sysfs);
	accel_sysfs_tenants = kobject_create_and_add("tenants", accel_sysfs);
	if (!accel_sysfs_engines || !accel_sysfs_tenants) {
		kobject_put(accel_sysfs_engines);
		kobject_put(accel_sysfs_tenants);
		kobject_put(accel_sysfs);
		return -ENOMEM;
	}
	return 0;
}

/**
 * accel_sched_unpin() - drop the administrator's pins on engines and
 * tenants; no file is open any more.
 *
 * Before the module's workqueue goes: a pinned engine may have its timeout
 * work armed (it stays armed once its released list empties), whose timer
 * would queue it on a destroyed workqueue; the engine's free cancels it.
 * Idempotent.
 */
void accel_sched_unpin(void)
{
	struct accel_engine *e, *eit;
	struct accel_tenant *t, *tit;

	for (;;) {
		e = NULL;
		mutex_lock(&accel_engines_lock);
		list_for_each_entry(eit, &accel_engines, link) {
			if (eit->pinned) {
				e = eit;
				e->pinned = false;
				break;
			}
		}
		mutex_unlock(&accel_engines_lock);
		if (!e)
			break;
		accel_engine_put(e);
	}
	for (;;) {
		t = NULL;
		mutex_lock(&accel_tenants_lock);
		list_for_each_entry(tit, &accel_tenants, link) {
			if (tit->pinned) {
				t = tit;
				t->pinned = false;
				break;
			}
		}
		mutex_unlock(&accel_tenants_lock);
		if (!t)
			break;
		accel_tenant_put(t);
	}
}

static void accel_sysfs_fini(void)
{
	accel_sched_unpin();
	kobject_put(accel_sysfs_engines);
	kobject_put(accel_sysfs_tenants);
	kobject_put(accel_sysfs);
}

/* ---------------------------------------------------------------- debugfs */

static const char *const accel_job_state_names[] = {
	[ACCEL_JOB_PENDING] = "pending",
	[ACCEL_JOB_RUNNABLE] = "runnable",
	[ACCEL_JOB_RELEASED] = "released",
	[ACCEL_JOB_TIMEDOUT] = "timedout",
	[ACCEL_JOB_FINISHING] = "finishing",
	[ACCEL_JOB_DONE] = "done",
};

/*
 * One job's line. Its state and times are read under its engine's lock;
 * its points never change once it is in its file's table, and the fences
 * of its waits live as long as it does.
 */
static void accel_show_job(struct seq_file *m, struct accel_sched_job *job,
			   u64 now)
{
	struct accel_engine *e = job->engine;
	enum accel_job_state state;
	u64 since = 0;
	bool pipelined;
	int boost = -1;
	u32 i;

	spin_lock_irq(&e->lock);
	state = job->state;
	pipelined = job->pipelined;
	if (job->boosted)
		boost = job->boost;
	if (state == ACCEL_JOB_RUNNABLE)
		since = job->runnable_ns;
	else if (state == ACCEL_JOB_RELEASED || state == ACCEL_JOB_TIMEDOUT)
		since = job->release_ns;
	spin_unlock_irq(&e->lock);

	seq_printf(m, "job client %llu queue %u id %u engine %s priority %s seq %llu state %s",
		   job->afile->client_id, job->qhandle, job->id, e->name,
		   accel_priority_names[job->priority], job->seq,
		   accel_job_state_names[state]);
	if (pipelined)
		seq_puts(m, " pipelined");
	if (boost >= 0)
		seq_printf(m, " boost %s", accel_priority_names[boost]);
	if (since)
		seq_printf(m, " for_ns %llu", now > since ? now - since : 0);
	seq_puts(m, " waits");
	for (i = 0; i < job->nwaits; i++) {
		struct dma_fence *f = job->deps[i].fence;

		seq_printf(m, " %llu:%llu%s", f->context, job->deps[i].point,
			   test_bit(DMA_FENCE_FLAG_SIGNALED_BIT, &f->flags) ?
			   "+" : "");
	}
	seq_puts(m, " signals");
	for (i = 0; i < job->nsignals; i++)
		seq_printf(m, " %llu:%llu",
			   accel_syncobj_reached_context(job->sigs[i].s),
			   job->sigs[i].point);
	seq_putc(m, '\n');
}

/*
 * <debugfs>/accelsched/jobs: every job submitted and not yet completed, a
 * line each, by file then id (see Documentation/sched.rst).
 */
static int accel_jobs_show(struct seq_file *m, void *unused)
{
	struct accel_file *afile;
	u64 now = ktime_get_ns();

	mutex_lock(&accel_files_lock);
	list_for_each_entry(afile, &accel_files, link) {
		struct accel_sched_job *job;
		u32 pos = 0;

		while ((job = accel_job_next(afile, &pos))) {
			accel_show_job(m, job, now);
			accel_job_put(job);
		}
	}
	mutex_unlock(&accel_files_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(accel_jobs);

int accel_sched_init(void)
{
	int ret;

	accel_job_cache = KMEM_CACHE(accel_sched_job, 0);
	if (!accel_job_cache)
		return -ENOMEM;
	ret = accel_sysfs_init();
	if (ret) {
		kmem_cache_destroy(accel_job_cache);
		return ret;
	}
	accel_debugfs = debugfs_create_dir(ACCEL_DEVICE_NAME, NULL);
	accel_engine_debugfs_init(accel_debugfs);
	debugfs_create_file("jobs", 0444, accel_debugfs, NULL, &accel_jobs_fops);
	/* What syncobjs hold: a gauge for the tests' bounds on memory. */
	debugfs_create_atomic_t("point_fences", 0444, accel_debugfs,
				&accel_point_fences_live);
	/* Freed point fences kept for reuse (syncobj.c): none under KASAN. */
	if (ACCEL_POOLING)
		debugfs_create_atomic_t("point_fence_pool", 0444, accel_debugfs,
					&accel_fence_pool.count);
	return 0;
}

void accel_sched_fini(void)
{
	debugfs_remove_recursive(accel_debugfs);
	accel_sysfs_fini();
	kmem_cache_destroy(accel_job_cache);
	WARN_ON(!list_empty(&accel_engines));
	WARN_ON(!list_empty(&accel_tenants));
}
