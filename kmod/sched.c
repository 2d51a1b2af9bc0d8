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
 * jobs of a queue are released in submission order.
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
 */
#include <linux/capability.h>
#include <linux/cgroup.h>
#include <linux/debugfs.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/poll.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/srcu.h>
#include <linux/uaccess.h>

#include "internal.h"

#define CREATE_TRACE_POINTS
#include "trace.h"

static unsigned int accel_max_queues = 64;
module_param_named(max_queues, accel_max_queues, uint, 0644);
MODULE_PARM_DESC(max_queues, "Most queues one open file may hold (default 64)");

static unsigned int accel_max_jobs = 16384;
module_param_named(max_jobs, accel_max_jobs, uint, 0644);
MODULE_PARM_DESC(max_jobs, "Most jobs one open file may have submitted and not completed (default 16384)");

static unsigned int accel_default_credits = 1;
module_param_named(default_credits, accel_default_credits, uint, 0644);
MODULE_PARM_DESC(default_credits, "Credit limit of a new engine until the administrator sets one (default 1)");

static unsigned int accel_tenant_max_queues = 1024;
module_param_named(tenant_max_queues, accel_tenant_max_queues, uint, 0644);
MODULE_PARM_DESC(tenant_max_queues, "Most queues one tenant may hold over all its files (default 1024)");

static unsigned int accel_tenant_max_jobs = 65536;
module_param_named(tenant_max_jobs, accel_tenant_max_jobs, uint, 0644);
MODULE_PARM_DESC(tenant_max_jobs, "Most jobs one tenant may have submitted and not completed over all its files (default 65536)");

static bool accel_root_tenant_per_file = true;
module_param_named(root_tenant_per_file, accel_root_tenant_per_file, bool, 0644);
MODULE_PARM_DESC(root_tenant_per_file, "A file opened from the root cgroup (or where cgroup2 is not used) is a tenant of its own; N: the root cgroup is one tenant (default Y)");

static unsigned int accel_job_timeout_ms = 10000;
module_param_named(job_timeout_ms, accel_job_timeout_ms, uint, 0644);
MODULE_PARM_DESC(job_timeout_ms, "Timeout of a released job that asks for none (default 10000)");

/*
 * Job ids are allocated cyclically over [1, ACCEL_JOB_RES_ID_MASK] (30 bits,
 * what a SUBMIT's CQE can carry beside ACCEL_JOB_RES_PIPELINED), skipping
 * the ids still in use: an id comes back only after 2^30 - 1 later
 * submissions of the same file, so a stale id (a late or repeated COMPLETE)
 * names no new job within any realistic window, where reusing a slot at
 * once with a short generation would bring the same id back after a few
 * thousand jobs.
 */
#define ACCEL_JOB_ID_LIMIT XA_LIMIT(1, ACCEL_JOB_RES_ID_MASK)

/* The weight that makes vruntime equal engine time. */
#define ACCEL_WEIGHT_UNIT 1024ULL
/* Inline room for waits and signals: most jobs need no second allocation. */
#define ACCEL_JOB_INLINE 4

enum accel_job_state {
	ACCEL_JOB_PENDING,   /* waits not all reached */
	ACCEL_JOB_RUNNABLE,  /* in its queue's runnable list */
	ACCEL_JOB_RELEASED,  /* with its executor */
	ACCEL_JOB_TIMEDOUT,  /* failed by its timeout; awaits a late COMPLETE */
	ACCEL_JOB_FINISHING, /* pipelined, completed before its waits */
	ACCEL_JOB_DONE,
};

struct accel_sched_job;

struct accel_job_dep {
	struct dma_fence_cb cb;
	struct dma_fence *fence;
	struct accel_sched_job *job;
	struct accel_syncobj *s;  /* until armed: for pipelining */
	u64 point;
};

struct accel_job_sig {
	struct accel_syncobj *s;
	u64 point;
};

struct accel_event_node {
	struct list_head link;
	struct accel_job_event ev;
};

/**
 * struct accel_sched_job - one job.
 * @ref:        the id table's, the ready list's, a pending timeout's, a
 *              pending uring_cmd's, and short-lived lookups'.
 * @engine:     its queue's engine; a reference (the job may outlive its
 *              queue on the ready list or in a timeout).
 * @queue:      its queue; only dereferenced while the job is not DONE.
 * @afile:      its file; likewise.
 * @id:         its id in the file (for COMPLETE and events).
 * @qhandle:    its queue's handle (for traces; the queue may go first).
 * @priority:   its queue's class.
 * @seq:        submission order in the file.
 * @user_data:  the executor's tag.
 * @timeout_ns: how long it may stay released.
 * @state:      &enum accel_job_state (engine lock).
 * @error:      the first error among its waits (atomic).
 * @deps_left:  waits not yet reached, plus one while arming.
 * @ready:      on the engine's ready list, its last wait reached.
 * @qlink:      in its queue's runnable list.
 * @cmd:        its io_uring SUBMIT while pending (engine lock).
 * @task:       the task that issued @cmd.
 * @issuing:    submitted through io_uring, and the submission still runs
 *              (a release then is returned by the submission itself).
 * @released_inline: see @issuing.
 * @answer_seq: its place among its queue's releases answered through
 *              io_uring (see accel_job_release_locked()).
 * @runnable_ns: when it became runnable (its latency runs from there).
 * @release_ns: when it was released.
 * @charged:    engine time charged at release, corrected at COMPLETE.
 * @pipelined:  made runnable before its waits were reached, because each is
 *              promised by a job of the same file already released to the
 *              same engine (the executor orders it after them).
 * @status:     a pipelined job's COMPLETE status, while it waits for its
 *              waits (FINISHING).
 * @deadline:   when a released job times out.
 * @tlink:      in the engine's in-flight list, by @deadline.
 * @ev_released: its RELEASED event, queued for the executor.
 * @ev_timedout: its TIMEDOUT event.
 * @nwaits:     waits in @deps.
 * @nsignals:   signals in @sigs.
 * @deps:       the waits: @deps_inline, or allocated beyond it.
 * @sigs:       the signals: @sigs_inline, or allocated beyond it.
 * @deps_inline: room for the first waits.
 * @sigs_inline: room for the first signals.
 *
 * A job from the engine's pool is cleared only up to @ev_released (about a
 * third of it): the events are written whole when queued, and only the
 * first @nwaits / @nsignals entries of the inline arrays are ever read.
 */
struct accel_sched_job {
	struct kref ref;
	struct accel_engine *engine;
	struct accel_queue *queue;
	struct accel_file *afile;
	u32 id;
	u32 qhandle;
	u32 priority;
	u64 seq;
	u64 user_data;
	u64 timeout_ns;
	enum accel_job_state state;
	atomic_t error;
	atomic_t deps_left;
	struct llist_node ready;
	struct list_head qlink;
	struct io_uring_cmd *cmd;
	struct task_struct *task;
	bool issuing;
	bool released_inline;
	u32 answer_seq;
	bool pipelined;
	int status;
	u64 runnable_ns;
	u64 release_ns;
	u64 deadline;
	u64 charged;
	struct list_head tlink;
	u32 nwaits, nsignals;
	struct accel_job_dep *deps;
	struct accel_job_sig *sigs;
	/* Not cleared for a new job: each is written before it is read. */
	struct accel_event_node ev_released, ev_timedout;
	struct accel_job_dep deps_inline[ACCEL_JOB_INLINE];
	struct accel_job_sig sigs_inline[ACCEL_JOB_INLINE];
};

/* What a new job clears: the head, up to the tail written before use. */
#define ACCEL_JOB_CLEAR offsetof(struct accel_sched_job, ev_released)

struct accel_submit_pdu {
	struct accel_sched_job *job;
	int res;
	u32 seq;
};

static struct kmem_cache *accel_job_cache;

/*
 * A submission runs from its queue's lookup to the end of arming in a read
 * section of this SRCU: QUEUE_DESTROY waits for those in flight before it
 * cancels the queue's jobs and frees it, so a job is never armed on a
 * freed queue, nor after the cancel that should have taken it. A read
 * section costs a per-CPU increment; destroying a queue, a grace period.
 */
DEFINE_STATIC_SRCU(accel_submit_srcu);
static DEFINE_MUTEX(accel_engines_lock);
static LIST_HEAD(accel_engines);

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
static atomic_t accel_sysfs_gone = ATOMIC_INIT(0);

static void accel_sysfs_removed(void)
{
	atomic_inc(&accel_sysfs_gone);
	wake_up_all(&accel_sysfs_gone_wq);
}

/* Wait until a removal after generation @gen (read under the list lock). */
static void accel_sysfs_wait_removal(int gen)
{
	wait_event(accel_sysfs_gone_wq, atomic_read(&accel_sysfs_gone) != gen);
}
static DEFINE_MUTEX(accel_tenants_lock);
static LIST_HEAD(accel_tenants);
static struct dentry *accel_debugfs;
/* /sys/kernel/accelsched/{engines,tenants}/ */
static struct kobject *accel_sysfs, *accel_sysfs_engines, *accel_sysfs_tenants;

#define ACCEL_TENANT_WEIGHT_DEFAULT 100

/* ---------------------------------------------------------------- engines */

static void accel_engine_kick(struct work_struct *work);
static void accel_engine_timeout(struct work_struct *work);
static struct accel_sched_job *accel_job_lookup(struct accel_file *afile, u32 id);
static void accel_timeout_add_locked(struct accel_engine *e,
				     struct accel_sched_job *job);

/*
 * Each engine keeps up to ACCEL_ENGINE_POOL jobs freed on it for the next
 * submissions: a job's memory comes from the pool, not the slab. Under a
 * batched load the slab handed back whole pages and zeroed new ones (on a
 * kernel built with INIT_ON_ALLOC) for every batch: a fifth of the
 * submission path. Frees push without a lock (llist); allocations pop
 * under pool_lock, as llist_del_first() needs its consumers serialised.
 */
#define ACCEL_ENGINE_POOL 256

static struct accel_sched_job *accel_engine_pool_get(struct accel_engine *e)
{
	struct llist_node *n;

	if (llist_empty(&e->pool))
		return NULL;
	spin_lock(&e->pool_lock);
	n = llist_del_first(&e->pool);
	spin_unlock(&e->pool_lock);
	if (!n)
		return NULL;
	atomic_dec(&e->pool_count);
	return llist_entry(n, struct accel_sched_job, ready);
}

static void accel_engine_pool_put(struct accel_engine *e,
				  struct accel_sched_job *job)
{
	if (atomic_inc_return(&e->pool_count) > ACCEL_ENGINE_POOL) {
		atomic_dec(&e->pool_count);
		kmem_cache_free(accel_job_cache, job);
		return;
	}
	llist_add(&job->ready, &e->pool);
}

static void accel_engine_free(struct kref *ref)
{
	struct accel_engine *e = container_of(ref, struct accel_engine, ref);
	struct accel_sched_job *job, *tmp;

	e->dying = true; /* listed, so its name stays taken until deleted */
	mutex_unlock(&accel_engines_lock);
	llist_for_each_entry_safe(job, tmp, llist_del_all(&e->pool), ready)
		kmem_cache_free(accel_job_cache, job);
	/*
	 * The timeout work holds no reference (a running instance and one it
	 * re-queued would share one, and both dropped it): the engine waits
	 * for it here instead, unless this is that work, putting the last
	 * job it timed out (it touches the engine no more).
	 */
	if (current_work() == &e->timeout_work.work)
		cancel_delayed_work(&e->timeout_work);
	else
		cancel_delayed_work_sync(&e->timeout_work);
	/* Waits for a sysfs read or write in progress; the release frees. */
	kobject_del(&e->kobj);
	mutex_lock(&accel_engines_lock);
	list_del_init(&e->link);
	mutex_unlock(&accel_engines_lock);
	accel_sysfs_removed();
	kobject_put(&e->kobj);
}

static void accel_engine_put(struct accel_engine *e)
{
	kref_put_mutex(&e->ref, accel_engine_free, &accel_engines_lock);
}

static bool accel_engine_name_valid(const char *name)
{
	size_t i, len = strnlen(name, ACCEL_ENGINE_NAME_LEN);

	if (!len || len == ACCEL_ENGINE_NAME_LEN)
		return false;
	for (i = 0; i < len; i++) {
		char c = name[i];

		if (!(isdigit(c) || (c >= 'a' && c <= 'z') || c == ':' ||
		      c == '.' || c == '_' || c == '-'))
			return false;
	}
	/* Everything after the NUL must be zero too. */
	for (; i < ACCEL_ENGINE_NAME_LEN; i++)
		if (name[i])
			return false;
	return true;
}

static void accel_engine_kobj_release(struct kobject *kobj)
{
	kfree(container_of(kobj, struct accel_engine, kobj));
}

static const struct kobj_type accel_engine_ktype;

/*
 * Find or create the engine @name; a reference. @credits, from the queue
 * creation that names it, sets the limit of an engine this call creates
 * only when the caller has CAP_SYS_ADMIN (an administrator); otherwise, and
 * for an engine that exists, it is ignored: credit limits are the
 * administrator's (sysfs), never the first process's to name an engine.
 */
static struct accel_engine *accel_engine_get(const char *name, u32 credits)
{
	struct accel_engine *e;
	int i, ret;

retry:
	mutex_lock(&accel_engines_lock);
	list_for_each_entry(e, &accel_engines, link) {
		if (strcmp(e->name, name))
			continue;
		if (e->dying) {
			int gen = atomic_read(&accel_sysfs_gone);

			mutex_unlock(&accel_engines_lock);
			accel_sysfs_wait_removal(gen);
			goto retry;
		}
		kref_get(&e->ref);
		mutex_unlock(&accel_engines_lock);
		return e;
	}
	e = kzalloc(sizeof(*e), GFP_KERNEL);
	if (!e) {
		mutex_unlock(&accel_engines_lock);
		return ERR_PTR(-ENOMEM);
	}
	kobject_init(&e->kobj, &accel_engine_ktype);
	ret = kobject_add(&e->kobj, accel_sysfs_engines, "%s", name);
	if (ret) {
		mutex_unlock(&accel_engines_lock);
		kobject_put(&e->kobj);
		return ERR_PTR(ret);
	}
	kref_init(&e->ref);
	strscpy(e->name, name, sizeof(e->name));
	spin_lock_init(&e->lock);
	if (!credits || !capable(CAP_SYS_ADMIN))
		credits = clamp(accel_default_credits, 1U, (u32)ACCEL_CREDITS_MAX);
	e->credits = credits;
	INIT_LIST_HEAD(&e->entities);
	for (i = 0; i < ACCEL_PRIORITY_COUNT; i++)
		e->rq[i] = RB_ROOT_CACHED;
	init_llist_head(&e->ready);
	init_llist_head(&e->pool);
	spin_lock_init(&e->pool_lock);
	INIT_WORK(&e->kick, accel_engine_kick);
	INIT_LIST_HEAD(&e->released);
	INIT_DELAYED_WORK(&e->timeout_work, accel_engine_timeout);
	list_add_tail(&e->link, &accel_engines);
	mutex_unlock(&accel_engines_lock);
	return e;
}

static bool accel_queue_less(struct rb_node *a, const struct rb_node *b)
{
	return rb_entry(a, struct accel_queue, rb)->vruntime <
	       rb_entry(b, struct accel_queue, rb)->vruntime;
}

static bool accel_entity_less(struct rb_node *a, const struct rb_node *b)
{
	return rb_entry(a, struct accel_entity, rb)->vruntime <
	       rb_entry(b, struct accel_entity, rb)->vruntime;
}

/*
 * Two levels: the engine's class holds the tenants (entities) with a
 * runnable queue, each entity its runnable queues. An entity that becomes
 * runnable starts no lower than its class's floor, as a queue does within
 * its entity (accel_job_runnable_locked()).
 */
static void accel_rq_add_locked(struct accel_engine *e, struct accel_queue *q)
{
	struct accel_entity *ent = q->ent;

	lockdep_assert_held(&e->lock);
	rb_add_cached(&q->rb, &ent->rq, accel_queue_less);
	q->on_rq = true;
	if (!ent->on_rq) {
		ent->vruntime = max(ent->vruntime, e->min_vruntime[ent->priority]);
		rb_add_cached(&ent->rb, &e->rq[ent->priority], accel_entity_less);
		ent->on_rq = true;
	}
}

static void accel_rq_del_locked(struct accel_engine *e, struct accel_queue *q)
{
	struct accel_entity *ent = q->ent;

	lockdep_assert_held(&e->lock);
	rb_erase_cached(&q->rb, &ent->rq);
	q->on_rq = false;
	if (RB_EMPTY_ROOT(&ent->rq.rb_root)) {
		rb_erase_cached(&ent->rb, &e->rq[ent->priority]);
		ent->on_rq = false;
	}
}

static u64 accel_vruntime_add(u64 v, s64 ns, u32 weight)
{
	s64 dv = div_s64(ns * (s64)ACCEL_WEIGHT_UNIT, weight);

	return dv < 0 && (u64)-dv > v ? 0 : v + dv;
}

/*
 * Charge @ns of engine time (may be negative: a correction) to @q, and to
 * its tenant on the engine: the queue by its weight among its tenant's
 * queues, the tenant by its weight among the engine's tenants.
 */
static void accel_queue_charge_locked(struct accel_queue *q, s64 ns)
{
	struct accel_engine *e = q->engine;
	struct accel_entity *ent = q->ent;
	struct rb_root_cached *rq = &e->rq[ent->priority];

	lockdep_assert_held(&e->lock);
	if (ent->on_rq)
		rb_erase_cached(&ent->rb, rq);
	if (q->on_rq)
		rb_erase_cached(&q->rb, &ent->rq);
	q->vruntime = accel_vruntime_add(q->vruntime, ns, q->weight);
	ent->vruntime = accel_vruntime_add(ent->vruntime, ns,
					   READ_ONCE(ent->tenant->weight));
	if (q->on_rq)
		rb_add_cached(&q->rb, &ent->rq, accel_queue_less);
	if (ent->on_rq)
		rb_add_cached(&ent->rb, rq, accel_entity_less);
}

/* ---------------------------------------------------------------- jobs */

static void accel_job_free(struct kref *ref)
{
	struct accel_sched_job *job = container_of(ref, struct accel_sched_job, ref);
	struct accel_engine *e;
	u32 i;

	for (i = 0; i < job->nwaits; i++) {
		if (job->deps[i].fence)
			dma_fence_put(job->deps[i].fence);
		accel_syncobj_put(job->deps[i].s);
	}
	for (i = 0; i < job->nsignals; i++)
		accel_syncobj_put(job->sigs[i].s);
	if (job->deps != job->deps_inline)
		kfree(job->deps);
	if (job->sigs != job->sigs_inline)
		kfree(job->sigs);
	if (job->task)
		put_task_struct(job->task);
	e = job->engine;
	accel_engine_pool_put(e, job);
	accel_engine_put(e);
}

static void accel_job_put(struct accel_sched_job *job)
{
	kref_put(&job->ref, accel_job_free);
}

static const char *accel_job_engine(struct accel_sched_job *job)
{
	return job->engine->name;
}

#define ACCEL_JOB_TRACE(ev, job)                                             \
	trace_job_##ev((job)->afile->client_id, accel_job_engine(job),        \
		       (job)->qhandle, (job)->id, (job)->priority)

static void accel_event_push_locked(struct accel_sched_job *job,
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
	kref_get(&job->ref);
	spin_lock(&afile->events_lock);
	list_add_tail(&n->link, &afile->events);
	spin_unlock(&afile->events_lock);
	wake_up_interruptible(&afile->events_wq);
}

/* The job an event node is embedded in. */
static struct accel_sched_job *accel_event_job(struct accel_event_node *n)
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
 * (all under the engine's lock), and the tenant (atomics: its other
 * engines count under other locks).
 */
static void accel_queue_count_release_locked(struct accel_queue *q,
					     u64 latency_ns)
{
	struct accel_engine *e = q->engine;
	struct accel_tenant *t = q->afile->tenant;

	lockdep_assert_held(&e->lock);
	e->in_flight++;
	e->nr_released++;
	e->latency_ns += latency_ns;
	q->nr_in_flight++;
	q->nr_released++;
	q->latency_ns += latency_ns;
	q->fstat->nr_released++;
	q->fstat->latency_ns += latency_ns;
	atomic64_inc(&t->nr_released);
	atomic64_add(latency_ns, &t->latency_ns);
}

/*
 * Release a runnable job (already off its queue's runnable list) to its
 * executor. Its latency, from runnable to now, is what the credits and the
 * policy made it wait: a pipelined job counts from when pipelining made it
 * runnable, so a latency is never negative, and the wait for its
 * predecessors, the executor's to order, is not the scheduler's.
 */
static void accel_job_release_locked(struct accel_sched_job *job)
{
	struct accel_engine *e = job->engine;
	struct accel_queue *q = job->queue;

	lockdep_assert_held(&e->lock);
	job->state = ACCEL_JOB_RELEASED;
	job->release_ns = ktime_get_ns();
	accel_queue_count_release_locked(q, job->release_ns - job->runnable_ns);
	/* Charge the queue's average now, so credits spread fairly. */
	job->charged = q->avg_ns;
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
	if (job->issuing || job->cmd)
		job->answer_seq = q->answer_seq++;
	if (job->issuing)
		job->released_inline = true;
	else if (job->cmd)
		accel_job_answer_locked(job, accel_job_release_res(job));
	else
		accel_event_push_locked(job, &job->ev_released,
					ACCEL_JOB_EVENT_RELEASED, 0);
}

/* Release what the credits allow. */
static void accel_engine_schedule_locked(struct accel_engine *e)
{
	lockdep_assert_held(&e->lock);
	while (e->in_flight < e->credits) {
		struct accel_queue *q = NULL;
		struct accel_sched_job *job;
		int p;

		/* The class first, then its tenant, then the tenant's queue. */
		for (p = 0; p < ACCEL_PRIORITY_COUNT; p++) {
			struct rb_node *n = rb_first_cached(&e->rq[p]);
			struct accel_entity *ent;

			if (n) {
				ent = rb_entry(n, struct accel_entity, rb);
				e->min_vruntime[p] = max(e->min_vruntime[p], ent->vruntime);
				q = rb_entry(rb_first_cached(&ent->rq),
					     struct accel_queue, rb);
				ent->min_vruntime = max(ent->min_vruntime, q->vruntime);
				break;
			}
		}
		if (!q)
			break;
		job = list_first_entry(&q->runnable, struct accel_sched_job, qlink);
		list_del_init(&job->qlink);
		q->nr_runnable--;
		if (list_empty(&q->runnable))
			accel_rq_del_locked(e, q);
		accel_job_release_locked(job);
	}
}

/* The job's waits are all reached: runnable, or failed if one failed. */
static void accel_job_runnable_locked(struct accel_sched_job *job);

static bool accel_job_ready_locked(struct accel_sched_job *job)
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
		return true; /* the caller finishes it */
	}
	if (job->state != ACCEL_JOB_PENDING)
		return false;
	if (error) {
		job->state = ACCEL_JOB_DONE;
		e->nr_failed++;
		accel_job_answer_locked(job, error);
		return true; /* the caller fails its points */
	}
	accel_job_runnable_locked(job);
	return false;
}

/* Into its queue's runnable list, in submission order. */
static void accel_job_runnable_locked(struct accel_sched_job *job)
{
	struct accel_engine *e = job->engine;
	struct accel_queue *q = job->queue;
	struct accel_sched_job *it;

	lockdep_assert_held(&e->lock);
	job->state = ACCEL_JOB_RUNNABLE;
	job->runnable_ns = ktime_get_ns();
	ACCEL_JOB_TRACE(runnable, job);
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
}

/* An id for @job in its file's table (job->id); -ENOMEM. */
static int accel_job_id_get(struct accel_file *afile,
			    struct accel_sched_job *job)
{
	int ret = xa_alloc_cyclic(&afile->jobs, &job->id, job,
				  ACCEL_JOB_ID_LIMIT, &afile->next_job_id,
				  GFP_KERNEL);

	/* 1: the ids wrapped, fine. -EBUSY cannot be: max_jobs is lower. */
	return ret < 0 ? (ret == -EBUSY ? -ENOSPC : ret) : 0;
}

/* Drop the job from its file: the id table's reference and the count. */
static void accel_job_unlink(struct accel_sched_job *job)
{
	struct accel_file *afile = job->afile;
	bool mine;

	xa_lock(&afile->jobs);
	mine = xa_load(&afile->jobs, job->id) == job;
	if (mine)
		__xa_erase(&afile->jobs, job->id);
	xa_unlock(&afile->jobs);
	if (mine) {
		atomic_dec(&afile->nr_jobs);
		atomic_dec(&afile->tenant->nr_jobs);
		accel_job_put(job);
	}
}

/* Reach the job's points, or fail them with @status. No lock held. */
static void accel_job_signal(struct accel_sched_job *job, int status)
{
	u32 i;

	for (i = 0; i < job->nsignals; i++) {
		if (status)
			accel_syncobj_fail(job->sigs[i].s, status);
		else
			accel_syncobj_reach(job->sigs[i].s, job->sigs[i].point);
	}
}

static void accel_job_failed(struct accel_sched_job *job, int error)
{
	trace_job_fail(job->afile->client_id, accel_job_engine(job),
		       job->qhandle, job->id, error);
	accel_job_signal(job, error);
	accel_job_unlink(job);
}

static void accel_engine_kick(struct work_struct *work)
{
	struct accel_engine *e = container_of(work, struct accel_engine, kick);
	struct llist_node *list;
	struct accel_sched_job *job, *tmp;
	LIST_HEAD(failed);

	list = llist_reverse_order(llist_del_all(&e->ready));
	spin_lock_irq(&e->lock);
	llist_for_each_entry(job, list, ready)
		if (accel_job_ready_locked(job))
			list_add_tail(&job->qlink, &failed);
	accel_engine_schedule_locked(e);
	spin_unlock_irq(&e->lock);
	list_for_each_entry_safe(job, tmp, &failed, qlink) {
		int error = atomic_read(&job->error);

		list_del_init(&job->qlink);
		if (error) {
			accel_job_failed(job, error);
		} else { /* a pipelined job, finished */
			accel_job_signal(job, 0);
			accel_job_unlink(job);
		}
	}
	llist_for_each_entry_safe(job, tmp, list, ready)
		accel_job_put(job);
	accel_engine_put(e);
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
		llist_add(&job->ready, &e->ready);
		/* A queued kick holds the engine: it may run after the jobs go. */
		kref_get(&e->ref);
		if (!queue_work(accel_wq, &e->kick))
			refcount_dec(&e->ref.refcount); /* never the last: the job has one */
	}
}

/*
 * Timeouts: the engine keeps its released jobs in a list by deadline, and
 * one delayed work per engine fires at the earliest. Completing a job only
 * unlinks it, so the hot path touches no timer. The work holds no engine
 * reference; freeing the engine cancels it (accel_engine_free()).
 */
static void accel_timeout_arm_locked(struct accel_engine *e, u64 deadline)
{
	u64 now = ktime_get_ns();
	unsigned long delay = deadline > now ?
		nsecs_to_jiffies(deadline - now) + 1 : 0;

	lockdep_assert_held(&e->lock);
	e->timeout_armed = true;
	mod_delayed_work(accel_wq, &e->timeout_work, delay);
}

static void accel_timeout_add_locked(struct accel_engine *e,
				     struct accel_sched_job *job)
{
	struct accel_sched_job *it;

	lockdep_assert_held(&e->lock);
	job->deadline = job->release_ns + job->timeout_ns;
	list_for_each_entry_reverse(it, &e->released, tlink)
		if (it->deadline <= job->deadline)
			break;
	list_add(&job->tlink, &it->tlink);
	if (e->released.next == &job->tlink)
		accel_timeout_arm_locked(e, job->deadline);
}

/* Unlink a job from the released list; disarm the timeout work if empty. */
static void accel_timeout_del_locked(struct accel_engine *e,
				     struct accel_sched_job *job)
{
	lockdep_assert_held(&e->lock);
	list_del_init(&job->tlink);
	if (list_empty(&e->released) && e->timeout_armed &&
	    cancel_delayed_work(&e->timeout_work))
		e->timeout_armed = false;
}

static void accel_engine_timeout(struct work_struct *work)
{
	struct accel_engine *e =
		container_of(to_delayed_work(work), struct accel_engine, timeout_work);
	struct accel_sched_job *job, *tmp;
	LIST_HEAD(expired);
	u64 now = ktime_get_ns();

	spin_lock_irq(&e->lock);
	list_for_each_entry_safe(job, tmp, &e->released, tlink) {
		if (job->deadline > now)
			break;
		list_move_tail(&job->tlink, &expired);
		job->state = ACCEL_JOB_TIMEDOUT;
		e->in_flight--;
		job->queue->nr_in_flight--; /* released: its queue is here */
		e->nr_timedout++;
		kref_get(&job->ref);
		ACCEL_JOB_TRACE(timeout, job);
		accel_event_push_locked(job, &job->ev_timedout,
					ACCEL_JOB_EVENT_TIMEDOUT, -ETIMEDOUT);
	}
	job = list_first_entry_or_null(&e->released, struct accel_sched_job, tlink);
	if (job) {
		u64 d = job->deadline;

		mod_delayed_work(accel_wq, &e->timeout_work,
				 d > now ? nsecs_to_jiffies(d - now) + 1 : 0);
		e->timeout_armed = true;
	} else {
		e->timeout_armed = false;
	}
	accel_engine_schedule_locked(e);
	spin_unlock_irq(&e->lock);
	list_for_each_entry_safe(job, tmp, &expired, tlink) {
		list_del_init(&job->tlink);
		accel_job_signal(job, -ETIMEDOUT);
		accel_job_put(job); /* the last may free the engine: see its free */
	}
}

/*
 * Cancel a job not completed: it leaves whatever list it is on, gives back
 * its credit, and its points fail with @error. Its id goes.
 */
static void accel_job_cancel(struct accel_sched_job *job, int error)
{
	struct accel_engine *e = job->engine;
	enum accel_job_state was;
	u32 i;

	spin_lock_irq(&e->lock);
	was = job->state;
	switch (was) {
	case ACCEL_JOB_RUNNABLE:
		list_del_init(&job->qlink);
		job->queue->nr_runnable--;
		if (list_empty(&job->queue->runnable) && job->queue->on_rq)
			accel_rq_del_locked(e, job->queue);
		break;
	case ACCEL_JOB_RELEASED:
		e->in_flight--;
		job->queue->nr_in_flight--;
		accel_timeout_del_locked(e, job);
		break;
	case ACCEL_JOB_TIMEDOUT:
		break;
	case ACCEL_JOB_PENDING:
	case ACCEL_JOB_FINISHING:
		break;
	case ACCEL_JOB_DONE:
		spin_unlock_irq(&e->lock);
		return;
	}
	job->state = ACCEL_JOB_DONE;
	if (was != ACCEL_JOB_TIMEDOUT) /* counted once, as timed out */
		e->nr_failed++;
	accel_job_answer_locked(job, error);
	accel_engine_schedule_locked(e);
	spin_unlock_irq(&e->lock);

	if (was == ACCEL_JOB_PENDING || was == ACCEL_JOB_FINISHING ||
	    job->pipelined)
		for (i = 0; i < job->nwaits; i++)
			dma_fence_remove_callback(job->deps[i].fence,
						  &job->deps[i].cb);
	if (was == ACCEL_JOB_TIMEDOUT) /* its points failed already */
		accel_job_unlink(job);
	else
		accel_job_failed(job, error);
}

/*
 * Read point @i of a job's user array into @pt and look up its syncobj
 * (*@s, a reference). One small copy each: a whole array on the stack
 * would be zeroed on every submission by kernels built with
 * INIT_STACK_ALL_ZERO (Debian's are).
 */
static int accel_job_point(struct accel_file *afile, u64 uptr, u32 i,
			   struct accel_point *pt, struct accel_syncobj **s)
{
	if (!IS_ALIGNED(uptr, sizeof(u64)))
		return -EINVAL;
	if (copy_from_user(pt, u64_to_user_ptr(uptr) + i * sizeof(*pt),
			   sizeof(*pt)))
		return -EFAULT;
	if (pt->flags)
		return -EINVAL;
	*s = accel_syncobj_lookup(afile, pt->handle);
	return *s ? 0 : -ENOENT;
}

/* The fallible half of a submission: a job ready to arm, or an error. */
static struct accel_sched_job *accel_job_init(struct accel_file *afile,
					const struct accel_job *args)
{
	struct accel_point pt;
	struct accel_queue *q;
	struct accel_sched_job *job;
	u64 timeout_ns;
	u32 i;
	int ret;

	if (args->flags || args->pad)
		return ERR_PTR(-EINVAL);
	if (args->nwaits > ACCEL_JOB_MAX_POINTS ||
	    args->nsignals > ACCEL_JOB_MAX_POINTS)
		return ERR_PTR(-EINVAL);
	timeout_ns = args->timeout_ns ?:
		(u64)accel_job_timeout_ms * NSEC_PER_MSEC;
	if (timeout_ns > 3600ULL * NSEC_PER_SEC)
		return ERR_PTR(-EINVAL);

	xa_lock(&afile->queues);
	q = xa_load(&afile->queues, args->queue);
	if (q && q->dead)
		q = NULL;
	xa_unlock(&afile->queues);
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
	if (job)
		memset(job, 0, ACCEL_JOB_CLEAR);
	else
		job = kmem_cache_zalloc(accel_job_cache, GFP_KERNEL);
	if (!job) {
		ret = -ENOMEM;
		goto err_count;
	}
	kref_init(&job->ref);
	job->engine = q->engine;
	kref_get(&q->engine->ref);
	job->queue = q;
	job->qhandle = q->handle;
	job->afile = afile;
	job->priority = q->priority;
	job->user_data = args->user_data;
	job->timeout_ns = timeout_ns;
	job->state = ACCEL_JOB_PENDING;
	INIT_LIST_HEAD(&job->qlink);
	INIT_LIST_HEAD(&job->tlink);
	for (i = 0; i < ACCEL_JOB_INLINE; i++)
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
		u64 value, submitted;
		int error;

		ret = accel_job_point(afile, args->signals, i, &pt, &s);
		if (ret)
			goto err_job;
		job->sigs[job->nsignals].s = s;
		job->sigs[job->nsignals++].point = pt.point;
		accel_syncobj_query(s, &value, &submitted, &error);
		if (pt.point <= value) {
			ret = -EINVAL;
			goto err_job;
		}
	}
	for (i = 0; i < args->nwaits; i++) {
		struct accel_syncobj *s;
		struct dma_fence *f;

		ret = accel_job_point(afile, args->waits, i, &pt, &s);
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
		job->deps[job->nwaits++].job = job;
	}
	ret = accel_job_id_get(afile, job);
	if (ret < 0)
		goto err_job;
	job->seq = atomic64_inc_return(&afile->job_seq);
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
 */
static void accel_job_try_pipeline(struct accel_sched_job *job)
{
	struct accel_sched_job *pred[ACCEL_JOB_MAX_POINTS];
	struct accel_engine *e = job->engine;
	u32 i, n = 0;
	bool ok = true;

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
	accel_job_drop_dep_syncobjs(job);
	if (ok && n) {
		spin_lock_irq(&e->lock);
		for (i = 0; i < n; i++)
			if (pred[i]->engine != e ||
			    pred[i]->state != ACCEL_JOB_RELEASED)
				ok = false;
		if (ok && job->state == ACCEL_JOB_PENDING &&
		    !atomic_read(&job->error)) {
			job->pipelined = true;
			accel_job_runnable_locked(job);
			accel_engine_schedule_locked(e);
		}
		spin_unlock_irq(&e->lock);
	}
	for (i = 0; i < n; i++)
		accel_job_put(pred[i]);
}

/*
 * The io_uring SUBMIT @cmd issued @job, now armed (engine lock held):
 * returns what the SUBMIT answers at once (the release, or the failure),
 * or -EIOCBQUEUED with @cmd installed for the release to answer later.
 */
static int accel_job_issue_locked(struct accel_sched_job *job,
				  struct io_uring_cmd *cmd)
{
	struct accel_file *afile = cmd->file->private_data;
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
 * The point of no return: promise the signals, arm the waits. Cannot fail.
 * Leaves the job released, runnable, pending or (a wait failed already)
 * failed. With @cmd, the io_uring SUBMIT issuing it (job->issuing set):
 * returns accel_job_issue_locked()'s answer, decided in the same engine
 * lock section that readied the job when it has no wait left (one irq-off
 * section per submission on the hot path, not two); 0 without @cmd.
 */
static int accel_job_arm(struct accel_sched_job *job, struct io_uring_cmd *cmd)
{
	struct accel_engine *e = job->engine;
	bool failed = false;
	int ret = 0;
	u32 i;

	for (i = 0; i < job->nsignals; i++) {
		accel_syncobj_promise(job->sigs[i].s, job->sigs[i].point);
		accel_syncobj_set_promiser(job->sigs[i].s, job->afile, job->id,
					   job->sigs[i].point);
	}
	ACCEL_JOB_TRACE(submit, job);

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
		/* A fence callback takes it from here, perhaps already. */
		if (cmd) {
			spin_lock_irq(&e->lock);
			ret = accel_job_issue_locked(job, cmd);
			spin_unlock_irq(&e->lock);
		}
		return ret;
	}
	accel_job_drop_dep_syncobjs(job);

	spin_lock_irq(&e->lock);
	failed = accel_job_ready_locked(job);
	accel_engine_schedule_locked(e);
	if (cmd)
		ret = accel_job_issue_locked(job, cmd);
	spin_unlock_irq(&e->lock);
	if (failed)
		accel_job_failed(job, atomic_read(&job->error));
	return ret;
}

/* Look a job up by id; a reference. */
static struct accel_sched_job *accel_job_lookup(struct accel_file *afile, u32 id)
{
	struct accel_sched_job *job;

	xa_lock(&afile->jobs);
	job = xa_load(&afile->jobs, id);
	if (job)
		kref_get(&job->ref);
	xa_unlock(&afile->jobs);
	return job;
}

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
	INIT_LIST_HEAD(&q->runnable);
	RB_CLEAR_NODE(&q->rb);
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
	 * Once stored, another thread may destroy and free the queue: read
	 * its handle under the xarray's lock, which destroy's lookup takes.
	 */
	ret = -EBUSY;
	xa_lock(&afile->queues);
	if (accel_max_queues)
		ret = __xa_alloc(&afile->queues, &q->handle, q,
				 XA_LIMIT(1, accel_max_queues), GFP_KERNEL);
	if (!ret)
		args->handle = q->handle;
	xa_unlock(&afile->queues);
	if (ret) {
		accel_queue_free(q);
		return ret == -EBUSY ? -EMFILE : ret;
	}
	return 0;

err_engine:
	accel_engine_put(e);
err_alloc:
	kfree(spare);
	kfree(q);
err_count:
	atomic_dec(&t->nr_queues);
	return ret;
}

/* Cancel every job of @afile (of @q only, if given) with @error. */
static void accel_cancel_jobs(struct accel_file *afile, struct accel_queue *q,
			      int error)
{
	struct accel_sched_job *job;
	unsigned long id;

	xa_for_each(&afile->jobs, id, job) {
		job = accel_job_lookup(afile, id);
		if (!job)
			continue;
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
	 * A submission on another thread may have looked the queue up
	 * before it died: let every such one finish arming its job (which
	 * is then in the table, for the cancel below) before the queue goes.
	 */
	synchronize_srcu(&accel_submit_srcu);
	accel_queue_retire(q);
	accel_cancel_jobs(afile, q, -ECANCELED);
	xa_erase(&afile->queues, args->handle);
	mutex_unlock(&afile->sched_mutex);
	/* Jobs still on the ready list or in a timeout do not touch @q. */
	accel_queue_free(q);
	return 0;
}

int accel_ioctl_job_submit(struct accel_file *afile, void *data)
{
	struct accel_job_submit *args = data;
	struct accel_job __user *ujobs;
	struct accel_job uj;
	u32 i;

	if (args->flags || args->pad || args->submitted)
		return -EINVAL;
	if (!args->count || args->count > ACCEL_JOB_SUBMIT_MAX)
		return -EINVAL;
	if (!IS_ALIGNED(args->jobs, sizeof(u64)))
		return -EINVAL;
	ujobs = u64_to_user_ptr(args->jobs);
	for (i = 0; i < args->count; i++) {
		struct accel_sched_job *job;
		int idx;

		if (copy_from_user(&uj, &ujobs[i], sizeof(uj)))
			return -EFAULT;
		idx = srcu_read_lock(&accel_submit_srcu);
		job = accel_job_init(afile, &uj);
		if (IS_ERR(job)) {
			srcu_read_unlock(&accel_submit_srcu, idx);
			return PTR_ERR(job);
		}
		if (put_user(job->id, &ujobs[i].id)) {
			/* Not armed yet: undo it whole. */
			accel_job_unlink(job);
			srcu_read_unlock(&accel_submit_srcu, idx);
			return -EFAULT;
		}
		/*
		 * Once its waits are armed, the job may be released, fetched
		 * and completed by another thread before arming returns, which
		 * drops the id table's reference: hold our own, as the io_uring
		 * path does.
		 */
		kref_get(&job->ref);
		accel_job_arm(job, NULL);
		srcu_read_unlock(&accel_submit_srcu, idx);
		accel_job_put(job);
		args->submitted = i + 1;
	}
	return 0;
}

static int accel_job_do_complete(struct accel_file *afile,
				 const struct accel_job_complete *args)
{
	struct accel_sched_job *job;
	struct accel_engine *e;
	struct accel_queue *q;
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
		accel_job_unlink(job);
		accel_job_put(job);
		return -ETIMEDOUT;
	}
	if (job->state != ACCEL_JOB_RELEASED) {
		spin_unlock_irq(&e->lock);
		accel_job_put(job);
		return -EINVAL; /* not released: nothing to complete */
	}
	job->state = ACCEL_JOB_DONE;
	if (job->pipelined && atomic_read(&job->deps_left)) {
		/* Completed before its waits: finish when they are reached. */
		job->state = ACCEL_JOB_FINISHING;
		job->status = args->status;
	}
	e->in_flight--;
	q->nr_in_flight--;
	if (args->status)
		e->nr_failed++;
	else
		e->nr_completed++;
	dt = args->device_ns ?: ktime_get_ns() - job->release_ns;
	q->avg_ns = q->avg_ns ? (q->avg_ns * 7 + dt) / 8 : dt;
	q->busy_ns += dt;
	q->fstat->busy_ns += dt;
	e->busy_ns += dt;
	accel_queue_charge_locked(q, (s64)dt - (s64)job->charged);
	accel_timeout_del_locked(e, job);
	accel_engine_schedule_locked(e);
	spin_unlock_irq(&e->lock);
	/* The job is the caller's file's, and so is the tenant. */
	atomic64_add(dt, &afile->tenant->busy_ns);

	trace_job_complete(afile->client_id, e->name, job->qhandle, job->id,
			   args->status, dt);
	if (job->state == ACCEL_JOB_DONE) {
		/* A pipelined job's failed wait overrides its status. */
		accel_job_signal(job, atomic_read(&job->error) ?: args->status);
		accel_job_unlink(job);
	}
	accel_job_put(job);
	return 0;
}

int accel_ioctl_job_complete(struct accel_file *afile, void *data)
{
	return accel_job_do_complete(afile, data);
}

int accel_ioctl_job_fetch(struct accel_file *afile, void *data)
{
	struct accel_job_fetch *args = data;
	struct accel_job_event __user *uev;
	struct accel_event_node *n;
	u32 count = 0;

	if (args->flags || args->pad || args->count)
		return -EINVAL;
	if (!args->max || args->max > ACCEL_JOB_SUBMIT_MAX)
		return -EINVAL;
	if (!IS_ALIGNED(args->events, sizeof(u64)))
		return -EINVAL;
	uev = u64_to_user_ptr(args->events);
	while (count < args->max) {
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
		accel_job_put(job);
		count++;
	}
	args->count = count;
	return 0;
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
	struct accel_job uj;
	struct accel_sched_job *job;
	bool early;
	int ret, idx;

	memcpy(&args, accel_uring_cmd_payload(cmd), sizeof(args));
	if (args.reserved || !IS_ALIGNED(args.job, sizeof(u64)))
		return -EINVAL;
	if (copy_from_user(&uj, u64_to_user_ptr(args.job), sizeof(uj)))
		return -EFAULT;
	idx = srcu_read_lock(&accel_submit_srcu);
	job = accel_job_init(afile, &uj);
	if (IS_ERR(job)) {
		srcu_read_unlock(&accel_submit_srcu, idx);
		return PTR_ERR(job);
	}
	/*
	 * Issued by io-wq (IOSQE_ASYNC, or a punt), not by the submitter: a
	 * release answered from task work runs in the submitter as soon as
	 * the command is installed, so it must be cancelable before, and an
	 * answer at once is then posted here (done() takes it off the
	 * cancelable list), as accel_uring_wait() does.
	 */
	early = issue_flags & IO_URING_F_UNLOCKED;
	if (early) {
		accel_uring_cmd_pdu(cmd, struct accel_submit_pdu)->job = NULL;
		accel_uring_cmd_mark_cancelable(cmd, issue_flags);
	}
	job->issuing = true;
	kref_get(&job->ref); /* arming may fail and free it */
	ret = accel_job_arm(job, cmd);
	srcu_read_unlock(&accel_submit_srcu, idx);
	accel_job_put(job);
	if (ret != -EIOCBQUEUED) {
		if (!early)
			return ret;
		accel_uring_cmd_done(cmd, ret, 0, issue_flags);
		return -EIOCBQUEUED;
	}
	/* Pending: the release (or a failure) completes the command. */
	if (!early)
		accel_uring_cmd_mark_cancelable(cmd, issue_flags);
	if (!ACCEL_URING_CANCELABLE)
		queue_delayed_work(accel_wq, &afile->monitor,
				   msecs_to_jiffies(ACCEL_MONITOR_MS));
	return -EIOCBQUEUED;
}

int accel_uring_job_complete(struct accel_file *afile, struct io_uring_cmd *cmd)
{
	struct accel_job_complete args;

	memcpy(&args, accel_uring_cmd_payload(cmd), sizeof(args));
	return accel_job_do_complete(afile, &args);
}

/* io_uring cancels a pending SUBMIT (ring or task exit). */
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
 * Without cancelable uring_cmds: cancel the pending SUBMITs whose task is
 * exiting (see notify.c's monitor, which calls this).
 */
void accel_sched_monitor(struct accel_file *afile, bool *again)
{
	struct accel_sched_job *job;
	unsigned long id;

	xa_for_each(&afile->jobs, id, job) {
		struct task_struct *t;
		bool pending;

		job = accel_job_lookup(afile, id);
		if (!job)
			continue;
		spin_lock_irq(&job->engine->lock);
		pending = job->cmd != NULL;
		t = job->task;
		spin_unlock_irq(&job->engine->lock);
		if (!pending || !t) {
			accel_job_put(job);
			continue;
		}
		if ((t->flags & PF_EXITING) || fatal_signal_pending(t) ||
		    (READ_ONCE(t->signal->flags) & SIGNAL_GROUP_EXIT) ||
		    accel_uring_cmd_ring_dying(job->cmd)) {
			accel_job_cancel(job, -EOWNERDEAD); /* answers the cmd */
		} else {
			*again = true;
		}
		accel_job_put(job);
	}
}

/* ---------------------------------------------------------------- files */

void accel_sched_file_init(struct accel_file *afile)
{
	xa_init_flags(&afile->queues, XA_FLAGS_ALLOC1);
	xa_init_flags(&afile->jobs, XA_FLAGS_ALLOC1);
	afile->next_job_id = 0;
	spin_lock_init(&afile->events_lock);
	INIT_LIST_HEAD(&afile->events);
	init_waitqueue_head(&afile->events_wq);
	mutex_init(&afile->sched_mutex);
	INIT_LIST_HEAD(&afile->engines);
	atomic_set(&afile->nr_jobs, 0);
	atomic64_set(&afile->job_seq, 0);
	atomic_set(&afile->answers_in_transit, 0);
}

static void accel_tenant_put(struct accel_tenant *t);

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
		accel_job_put(job);
		spin_lock_irq(&afile->events_lock);
	}
	spin_unlock_irq(&afile->events_lock);

	xa_for_each(&afile->queues, handle, q) {
		xa_erase(&afile->queues, handle);
		accel_queue_free(q);
	}
	xa_destroy(&afile->queues);
	WARN_ON(!xa_empty(&afile->jobs)); /* a job left linked */
	xa_destroy(&afile->jobs);
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

static const char *const accel_priority_names[ACCEL_PRIORITY_COUNT] = {
	"high", "normal", "low",
};

/* One queue's line, its counters read in one engine lock section. */
static void accel_show_queue(struct seq_file *m, unsigned long handle,
			     struct accel_queue *q)
{
	struct accel_engine *e = q->engine;
	u32 runnable, in_flight;
	u64 released, busy_ns, latency_ns;

	spin_lock_irq(&e->lock);
	runnable = q->nr_runnable;
	in_flight = q->nr_in_flight;
	released = q->nr_released;
	busy_ns = q->busy_ns;
	latency_ns = q->latency_ns;
	spin_unlock_irq(&e->lock);
	seq_printf(m, "accel-queue-%lu:\tengine=", handle);
	accel_seq_engine_name(m, e->name);
	seq_printf(m, " priority=%s weight=%u runnable=%u in_flight=%u released=%llu busy_ns=%llu latency_ns=%llu\n",
		   accel_priority_names[q->priority], q->weight, runnable,
		   in_flight, released, busy_ns, latency_ns);
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

/* ---------------------------------------------------------------- tenants */

static void accel_tenant_kobj_release(struct kobject *kobj)
{
	kfree(container_of(kobj, struct accel_tenant, kobj));
}

static const struct kobj_type accel_tenant_ktype;

/* Called with accel_tenants_lock, which it drops. */
static void accel_tenant_free(struct kref *ref)
{
	struct accel_tenant *t = container_of(ref, struct accel_tenant, ref);

	if (!t->cgroup_id) {
		mutex_unlock(&accel_tenants_lock);
		kfree(t);
		return;
	}
	t->dying = true; /* listed, so its name stays taken until deleted */
	mutex_unlock(&accel_tenants_lock);
	kobject_del(&t->kobj); /* waits for a sysfs access in progress */
	mutex_lock(&accel_tenants_lock);
	list_del_init(&t->link);
	mutex_unlock(&accel_tenants_lock);
	accel_sysfs_removed();
	kobject_put(&t->kobj);
}

static void accel_tenant_put(struct accel_tenant *t)
{
	kref_put_mutex(&t->ref, accel_tenant_free, &accel_tenants_lock);
}

/*
 * The tenant of a file opened now: the cgroup (v2) of the opening task.
 * A file opened from the root cgroup (every task, where nothing uses
 * cgroup2) is a tenant of its own while root_tenant_per_file is set (the
 * default): the root holds whatever was not placed anywhere, and sharing
 * one tenant there would make unrelated processes share one share.
 */
static u64 accel_current_tenant_id(void)
{
	u64 id = 0;
#ifdef CONFIG_CGROUPS
	struct cgroup *cg;

	rcu_read_lock();
	cg = task_dfl_cgroup(current);
	if (cgroup_parent(cg) || !READ_ONCE(accel_root_tenant_per_file))
		id = cgroup_id(cg);
	rcu_read_unlock();
#endif
	return id;
}

/**
 * accel_sched_file_tenant - bind a new file to its tenant.
 * @afile: the file, being opened.
 *
 * Return: 0, or -ENOMEM.
 * Context: process context (the opener's); takes accel_tenants_lock.
 */
int accel_sched_file_tenant(struct accel_file *afile)
{
	u64 id = accel_current_tenant_id();
	struct accel_tenant *t;

retry:
	mutex_lock(&accel_tenants_lock);
	if (id) {
		list_for_each_entry(t, &accel_tenants, link) {
			if (t->cgroup_id != id)
				continue;
			if (t->dying) {
				int gen = atomic_read(&accel_sysfs_gone);

				mutex_unlock(&accel_tenants_lock);
				accel_sysfs_wait_removal(gen);
				goto retry;
			}
			kref_get(&t->ref);
			goto out;
		}
	}
	t = kzalloc(sizeof(*t), GFP_KERNEL);
	if (!t) {
		mutex_unlock(&accel_tenants_lock);
		return -ENOMEM;
	}
	kref_init(&t->ref);
	INIT_LIST_HEAD(&t->link);
	t->cgroup_id = id;
	t->weight = ACCEL_TENANT_WEIGHT_DEFAULT;
	if (id) {
		kobject_init(&t->kobj, &accel_tenant_ktype);
		if (kobject_add(&t->kobj, accel_sysfs_tenants, "%llu", id)) {
			mutex_unlock(&accel_tenants_lock);
			kobject_put(&t->kobj);
			return -ENOMEM;
		}
		list_add_tail(&t->link, &accel_tenants);
	}
out:
	mutex_unlock(&accel_tenants_lock);
	afile->tenant = t;
	return 0;
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
static int accel_sysfs_admin_u32(const char *buf, u32 min, u32 max, u32 *v)
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
static bool accel_sysfs_pin_locked(struct list_head *link, bool dying,
				   bool *pinned, struct kref *ref)
{
	if (list_empty(link) || dying)
		return false;
	if (!*pinned)
		*pinned = kref_get_unless_zero(ref);
	return true;
}

static ssize_t credits_show(struct kobject *kobj, struct kobj_attribute *attr,
			    char *buf)
{
	struct accel_engine *e = container_of(kobj, struct accel_engine, kobj);

	return sysfs_emit(buf, "%u\n", READ_ONCE(e->credits));
}

static ssize_t credits_store(struct kobject *kobj, struct kobj_attribute *attr,
			     const char *buf, size_t count)
{
	struct accel_engine *e = container_of(kobj, struct accel_engine, kobj);
	bool alive;
	u32 v;
	int ret;

	ret = accel_sysfs_admin_u32(buf, 1, ACCEL_CREDITS_MAX, &v);
	if (ret)
		return ret;
	mutex_lock(&accel_engines_lock);
	alive = accel_sysfs_pin_locked(&e->link, e->dying, &e->pinned, &e->ref);
	mutex_unlock(&accel_engines_lock);
	if (!alive)
		return -ENODEV;
	spin_lock_irq(&e->lock);
	WRITE_ONCE(e->credits, v);
	accel_engine_schedule_locked(e); /* more credits release more now */
	spin_unlock_irq(&e->lock);
	return count;
}

static ssize_t in_flight_show(struct kobject *kobj, struct kobj_attribute *attr,
			      char *buf)
{
	struct accel_engine *e = container_of(kobj, struct accel_engine, kobj);

	return sysfs_emit(buf, "%u\n", READ_ONCE(e->in_flight));
}

/*
 * The read-only counters of engines and tenants (busy_ns, released,
 * latency_ns, ...): one show each for an engine's u64 (written under its
 * lock, read here without it) and a tenant's atomic64_t, finding the
 * counter at its offset in the object.
 */
struct accel_counter_attr {
	struct kobj_attribute attr;
	size_t offset;
};

static size_t accel_counter_offset(struct kobj_attribute *attr)
{
	return container_of(attr, struct accel_counter_attr, attr)->offset;
}

static ssize_t accel_engine_counter_show(struct kobject *kobj,
					 struct kobj_attribute *attr, char *buf)
{
	struct accel_engine *e = container_of(kobj, struct accel_engine, kobj);
	u64 *v = (void *)e + accel_counter_offset(attr);

	return sysfs_emit(buf, "%llu\n", READ_ONCE(*v));
}

static ssize_t accel_tenant_counter_show(struct kobject *kobj,
					 struct kobj_attribute *attr, char *buf)
{
	struct accel_tenant *t = container_of(kobj, struct accel_tenant, kobj);
	atomic64_t *v = (void *)t + accel_counter_offset(attr);

	return sysfs_emit(buf, "%llu\n", (u64)atomic64_read(v));
}

#define ACCEL_COUNTER_ATTR(_obj, _name, _field)                              \
	static struct accel_counter_attr accel_##_obj##_##_name = {           \
		.attr = __ATTR(_name, 0444, accel_##_obj##_counter_show, NULL), \
		.offset = offsetof(struct accel_##_obj, _field),              \
	}

static struct kobj_attribute accel_engine_credits = __ATTR_RW(credits);
static struct kobj_attribute accel_engine_in_flight = __ATTR_RO(in_flight);
ACCEL_COUNTER_ATTR(engine, busy_ns, busy_ns);
ACCEL_COUNTER_ATTR(engine, released, nr_released);
ACCEL_COUNTER_ATTR(engine, completed, nr_completed);
ACCEL_COUNTER_ATTR(engine, failed, nr_failed);
ACCEL_COUNTER_ATTR(engine, timedout, nr_timedout);
ACCEL_COUNTER_ATTR(engine, latency_ns, latency_ns);

static struct attribute *accel_engine_attrs[] = {
	&accel_engine_credits.attr,
	&accel_engine_in_flight.attr,
	&accel_engine_busy_ns.attr.attr,
	&accel_engine_released.attr.attr,
	&accel_engine_completed.attr.attr,
	&accel_engine_failed.attr.attr,
	&accel_engine_timedout.attr.attr,
	&accel_engine_latency_ns.attr.attr,
	NULL,
};
ATTRIBUTE_GROUPS(accel_engine);

static const struct kobj_type accel_engine_ktype = {
	.release = accel_engine_kobj_release,
	.sysfs_ops = &kobj_sysfs_ops,
	.default_groups = accel_engine_groups,
};

static ssize_t weight_show(struct kobject *kobj, struct kobj_attribute *attr,
			   char *buf)
{
	struct accel_tenant *t = container_of(kobj, struct accel_tenant, kobj);

	return sysfs_emit(buf, "%u\n", READ_ONCE(t->weight));
}

static ssize_t weight_store(struct kobject *kobj, struct kobj_attribute *attr,
			    const char *buf, size_t count)
{
	struct accel_tenant *t = container_of(kobj, struct accel_tenant, kobj);
	bool alive;
	u32 v;
	int ret;

	ret = accel_sysfs_admin_u32(buf, ACCEL_WEIGHT_MIN, ACCEL_WEIGHT_MAX, &v);
	if (ret)
		return ret;
	mutex_lock(&accel_tenants_lock);
	alive = accel_sysfs_pin_locked(&t->link, t->dying, &t->pinned, &t->ref);
	mutex_unlock(&accel_tenants_lock);
	if (!alive)
		return -ENODEV;
	/* Charges from now on use it; what was consumed stays consumed. */
	WRITE_ONCE(t->weight, v);
	return count;
}

static ssize_t queues_show(struct kobject *kobj, struct kobj_attribute *attr,
			   char *buf)
{
	struct accel_tenant *t = container_of(kobj, struct accel_tenant, kobj);

	return sysfs_emit(buf, "%d\n", atomic_read(&t->nr_queues));
}

static ssize_t jobs_show(struct kobject *kobj, struct kobj_attribute *attr,
			 char *buf)
{
	struct accel_tenant *t = container_of(kobj, struct accel_tenant, kobj);

	return sysfs_emit(buf, "%d\n", atomic_read(&t->nr_jobs));
}

static struct kobj_attribute accel_tenant_weight = __ATTR_RW(weight);
static struct kobj_attribute accel_tenant_queues = __ATTR_RO(queues);
static struct kobj_attribute accel_tenant_jobs = __ATTR_RO(jobs);
ACCEL_COUNTER_ATTR(tenant, busy_ns, busy_ns);
ACCEL_COUNTER_ATTR(tenant, released, nr_released);
ACCEL_COUNTER_ATTR(tenant, latency_ns, latency_ns);

static struct attribute *accel_tenant_attrs[] = {
	&accel_tenant_weight.attr,
	&accel_tenant_queues.attr,
	&accel_tenant_jobs.attr,
	&accel_tenant_busy_ns.attr.attr,
	&accel_tenant_released.attr.attr,
	&accel_tenant_latency_ns.attr.attr,
	NULL,
};
ATTRIBUTE_GROUPS(accel_tenant);

static const struct kobj_type accel_tenant_ktype = {
	.release = accel_tenant_kobj_release,
	.sysfs_ops = &kobj_sysfs_ops,
	.default_groups = accel_tenant_groups,
};

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

/* Drop the administrator's pins; no file is open any more. */
static void accel_sysfs_fini(void)
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
	kobject_put(accel_sysfs_engines);
	kobject_put(accel_sysfs_tenants);
	kobject_put(accel_sysfs);
}

/* ---------------------------------------------------------------- debugfs */

static int accel_engines_show(struct seq_file *m, void *unused)
{
	const char *const *prio = accel_priority_names;
	struct accel_engine *e;

	mutex_lock(&accel_engines_lock);
	list_for_each_entry(e, &accel_engines, link) {
		int p;

		spin_lock_irq(&e->lock);
		seq_printf(m, "engine %s credits %u in_flight %u busy_ns %llu released %llu completed %llu failed %llu timedout %llu latency_ns %llu\n",
			   e->name, e->credits, e->in_flight, e->busy_ns,
			   e->nr_released, e->nr_completed, e->nr_failed,
			   e->nr_timedout, e->latency_ns);
		for (p = 0; p < ACCEL_PRIORITY_COUNT; p++) {
			struct rb_node *tn, *n;

			for (tn = rb_first_cached(&e->rq[p]); tn; tn = rb_next(tn)) {
				struct accel_entity *ent = rb_entry(tn, struct accel_entity, rb);

				seq_printf(m, "  tenant %s %llu weight %u vruntime %llu\n",
					   prio[p], ent->tenant->cgroup_id,
					   READ_ONCE(ent->tenant->weight), ent->vruntime);
				for (n = rb_first_cached(&ent->rq); n; n = rb_next(n)) {
					struct accel_queue *q = rb_entry(n, struct accel_queue, rb);

					seq_printf(m, "  runnable %s client %llu queue %u weight %u vruntime %llu busy_ns %llu runnable %u in_flight %u latency_ns %llu\n",
						   prio[p], q->afile->client_id, q->handle,
						   q->weight, q->vruntime, q->busy_ns,
						   q->nr_runnable, q->nr_in_flight,
						   q->latency_ns);
				}
			}
		}
		spin_unlock_irq(&e->lock);
	}
	mutex_unlock(&accel_engines_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(accel_engines);

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
	debugfs_create_file("engines", 0444, accel_debugfs, NULL,
			    &accel_engines_fops);
	/* What syncobjs hold: a gauge for the tests' bounds on memory. */
	debugfs_create_atomic_t("point_fences", 0444, accel_debugfs,
				&accel_point_fences_live);
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
