// SPDX-License-Identifier: GPL-2.0
/*
 * DOC: engines and their run queues
 *
 * An engine is a named scheduling domain shared by every file that names
 * it (accel_engine_get()). Its queues, its jobs, the files' totals on it
 * and a queued kick each hold a reference, and so does the administrator's
 * pin (a write of its credits) until the module goes. Its last reference
 * makes it dying: it stays listed, its name taken, until its sysfs
 * directory is deleted. Each engine keeps a pool of the jobs freed on it
 * for the next submissions.
 *
 * Its run queues have two levels: per priority class, the tenants'
 * entities with a runnable queue, by tenant vruntime; in each entity, its
 * runnable queues, by queue vruntime. Charging engine time advances both,
 * scaled by the queue's and the tenant's weights. The release policy,
 * accel_engine_schedule_locked(), releases what the credits allow: the
 * class first, then its tenant, then the tenant's queue; a queue that
 * priority inheritance raised to a class (sched_inherit.c) is served in
 * that class after the class's own queues, from the engine's per-class
 * list of raised queues, and is still charged in its own class. The engine's kick
 * work makes the jobs of its ready list runnable (or fails them) and
 * releases, then tries the followers a release freed (pipelining, in
 * sched_job.c). Also here: the engines' sysfs (credits, in_flight and the
 * counters) and the debugfs engines listing.
 *
 * **Locking.** The engine's spinlock, taken with interrupts off, protects
 * its run queues, its tenants' entities, the scheduling fields of its
 * queues and the state of their jobs (the *_locked functions); fence locks
 * and a file's event lock nest inside it. Fence callbacks take no engine
 * lock: they push to the lock-free ready list and queue the kick, which
 * holds an engine reference while queued. accel_engines_lock (a mutex)
 * guards the engine list, references reaching zero and the administrator's
 * pins; a sysfs write takes it, so an engine's directory is removed only
 * after it is dropped. The pool (pool.h) takes no lock.
 */
#include <linux/capability.h>
#include <linux/debugfs.h>
#include <linux/seq_file.h>
#include <linux/slab.h>

#include "internal.h"
#include "sched_internal.h"

/* The engine list; its mutex also guards last references and pins. */
DEFINE_MUTEX(accel_engines_lock);
LIST_HEAD(accel_engines);

/* ---------------------------------------------------------------- engines */

static void accel_engine_kick(struct work_struct *work);

/*
 * Each engine keeps up to ACCEL_ENGINE_POOL jobs freed on it for the next
 * submissions: a job's memory comes from the pool, not the slab. Under a
 * batched load the slab handed back whole pages and zeroed new ones (on a
 * kernel built with INIT_ON_ALLOC) for every batch: a fifth of the
 * submission path. The pool is pool.h's, as the point fences have, and
 * keeps nothing on a KASAN kernel (freed jobs go to the slab's quarantine).
 */
#define ACCEL_ENGINE_POOL 256

void accel_engine_pool_put(struct accel_engine *e,
			   struct accel_sched_job *job)
{
	if (!accel_pool_put(&e->pool, &job->ready, ACCEL_ENGINE_POOL))
		kmem_cache_free(accel_job_cache, job);
}

static void accel_engine_free(struct kref *ref)
{
	struct accel_engine *e = container_of(ref, struct accel_engine, ref);
	struct accel_sched_job *job, *tmp;

	e->dying = true; /* listed, so its name stays taken until deleted */
	mutex_unlock(&accel_engines_lock);
	/* A follower holds the engine (its job does): none is left. */
	WARN_ON_ONCE(!list_empty(&e->followers));
	llist_for_each_entry_safe(job, tmp, accel_pool_drain(&e->pool), ready)
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

void accel_engine_put(struct accel_engine *e)
{
	kref_put_mutex(&e->ref, accel_engine_free, &accel_engines_lock);
}

bool accel_engine_name_valid(const char *name)
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
	/* Its sysfs directory could not be told from these. */
	return strcmp(name, ".") && strcmp(name, "..");
}

static void accel_engine_kobj_release(struct kobject *kobj)
{
	struct accel_engine *e = container_of(kobj, struct accel_engine, kobj);

	accel_pool_fini(&e->pool);
	kfree(e);
}

static const struct kobj_type accel_engine_ktype;

/*
 * Find or create the engine @name; a reference. @credits, from the queue
 * creation that names it, sets the limit of an engine this call creates
 * only when the caller has CAP_SYS_ADMIN (an administrator); otherwise, and
 * for an engine that exists, it is ignored: credit limits are the
 * administrator's (sysfs), never the first process's to name an engine.
 */
struct accel_engine *accel_engine_get(const char *name, u32 credits)
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
	if (!e || accel_pool_init(&e->pool)) {
		mutex_unlock(&accel_engines_lock);
		if (e)
			accel_pool_fini(&e->pool);
		kfree(e);
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
		credits = READ_ONCE(accel_default_credits); /* 1 .. max: its setter */
	e->credits = credits;
	INIT_LIST_HEAD(&e->entities);
	for (i = 0; i < ACCEL_PRIORITY_COUNT; i++) {
		e->rq[i] = RB_ROOT_CACHED;
		INIT_LIST_HEAD(&e->boosted[i]);
		e->dl[i] = RB_ROOT_CACHED;
	}
	init_llist_head(&e->ready);
	INIT_WORK(&e->kick, accel_engine_kick);
	INIT_LIST_HEAD(&e->released);
	INIT_LIST_HEAD(&e->followers);
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
void accel_rq_add_locked(struct accel_engine *e, struct accel_queue *q)
{
	struct accel_entity *ent = q->ent;

	lockdep_assert_held(&e->lock);
	rb_add_cached(&q->rb, &ent->rq, accel_queue_less);
	q->on_rq = true;
	if (!list_empty(&q->dl_jobs))
		accel_queue_dl_update_locked(q);
	if (!ent->on_rq) {
		ent->vruntime = max(ent->vruntime, e->min_vruntime[ent->priority]);
		rb_add_cached(&ent->rb, &e->rq[ent->priority], accel_entity_less);
		ent->on_rq = true;
		e->nr_on_rq++;
	}
}

void accel_rq_del_locked(struct accel_engine *e, struct accel_queue *q)
{
	struct accel_entity *ent = q->ent;

	lockdep_assert_held(&e->lock);
	rb_erase_cached(&q->rb, &ent->rq);
	q->on_rq = false;
	list_del_init(&q->blink); /* nothing runnable, or destroyed */
	if (q->on_dl)
		accel_queue_dl_update_locked(q);
	if (RB_EMPTY_ROOT(&ent->rq.rb_root)) {
		rb_erase_cached(&ent->rb, &e->rq[ent->priority]);
		ent->on_rq = false;
		e->nr_on_rq--;
	}
}

/*
 * Whether @node, its key just changed, is where rb_add_cached() would put
 * it again: after every node whose key is not above its own (a key equal
 * to others goes after them, as a new node's does), before every node
 * whose key is. The tree is sorted but for @node, so its neighbours tell.
 */
static bool accel_rb_in_place(struct rb_node *node,
			      bool (*less)(struct rb_node *, const struct rb_node *))
{
	struct rb_node *prev = rb_prev(node), *next = rb_next(node);

	return (!prev || !less(node, prev)) && (!next || less(node, next));
}

/*
 * accel_queue_charge_locked() for a queue or tenant on its run queue. A
 * node whose new vruntime leaves it between the same neighbours stays: a
 * queue with jobs waiting is charged at each release and each COMPLETE,
 * and is usually alone in its tenant, its tenant alone in the class, or
 * still short of the next one, where moving it (an erase and an insert in
 * each tree) changed nothing. Where it must move, it moves as before.
 */
void accel_queue_charge_slow_locked(struct accel_queue *q, s64 ns)
{
	struct accel_engine *e = q->engine;
	struct accel_entity *ent = q->ent;
	struct rb_root_cached *rq = &e->rq[ent->priority];

	lockdep_assert_held(&e->lock);
	accel_vruntime_charge(q, ns);
	/* An erase reads no key: the node may leave after its key changed. */
	if (q->on_rq && !accel_rb_in_place(&q->rb, accel_queue_less)) {
		rb_erase_cached(&q->rb, &ent->rq);
		rb_add_cached(&q->rb, &ent->rq, accel_queue_less);
	}
	if (ent->on_rq && !accel_rb_in_place(&ent->rb, accel_entity_less)) {
		rb_erase_cached(&ent->rb, rq);
		rb_add_cached(&ent->rb, rq, accel_entity_less);
	}
}

/*
 * The queue to release from next: the class first, then its tenant, then
 * the tenant's queue. A queue raised to a class by priority inheritance
 * (sched_inherit.c) is served in that class after its own queues, as a
 * boosted task queues behind the tasks already runnable at its new
 * priority; it stays in its own class's run queue too, and is charged
 * there. Within the class, a queue whose deadline is near goes ahead of
 * fair share, within its bound (sched_deadline.c).
 */
static struct accel_queue *accel_engine_pick_locked(struct accel_engine *e)
{
	int p;

	for (p = 0; p < ACCEL_PRIORITY_COUNT; p++) {
		struct rb_node *n = rb_first_cached(&e->rq[p]);
		struct accel_entity *ent;
		struct accel_queue *q, *dq;

		if (!n && !list_empty(&e->boosted[p]))
			return list_first_entry(&e->boosted[p],
						struct accel_queue, blink);
		if (!n)
			continue;
		ent = rb_entry(n, struct accel_entity, rb);
		e->min_vruntime[p] = max(e->min_vruntime[p], ent->vruntime);
		q = rb_entry(rb_first_cached(&ent->rq), struct accel_queue, rb);
		ent->min_vruntime = max(ent->min_vruntime, q->vruntime);
		if (unlikely(!RB_EMPTY_ROOT(&e->dl[p].rb_root))) {
			dq = accel_engine_dl_pick_locked(e, p, q, ent,
							 ktime_get_ns());
			if (dq)
				return dq;
		}
		return q;
	}
	return NULL;
}

/* Release what the credits allow. */
void accel_engine_schedule_locked(struct accel_engine *e)
{
	struct accel_queue *q;

	lockdep_assert_held(&e->lock);
	while (e->in_flight < e->credits && (q = accel_engine_pick_locked(e))) {
		struct accel_sched_job *job;

		job = list_first_entry(&q->runnable, struct accel_sched_job, qlink);
		list_del_init(&job->qlink);
		q->nr_runnable--;
		if (list_empty(&q->runnable))
			accel_rq_del_locked(e, q);
		accel_job_dl_leave_locked(job, true);
		accel_job_release_locked(job, ktime_get_ns());
	}
}

/* Queue @e's kick, which holds an engine reference while queued. */
static void accel_engine_queue_kick(struct accel_engine *e)
{
	kref_get(&e->ref);
	if (!queue_work(accel_wq, &e->kick))
		refcount_dec(&e->ref.refcount); /* never the last: the caller has one */
}

/**
 * accel_engine_ready_now() - make the jobs on @e's ready list runnable, and
 * release, now rather than in the kick.
 * @e: the engine; the caller holds a reference.
 *
 * For a COMPLETE whose points were just reached: the fence callbacks of
 * the jobs that waited on them put those jobs on the ready list and queue
 * the kick, which may run much later (a workqueue's wake-up), after the
 * credit the COMPLETE freed went to a job that was runnable before. Here
 * they become runnable first, and then the COMPLETE gives its credit back
 * (it kept it taken until now), so that it goes to the best by the
 * policy. Jobs that fail or finish (a failed wait, a pipelined job
 * completed before its waits) go back to the ready list for the kick,
 * which finishes them: their files wait for the kick, not for this.
 *
 * The COMPLETE counted itself in &accel_engine.completing before reaching
 * its points, so that the fence callbacks of its waiters queue no kick
 * (a wake-up for nothing, once this has taken their jobs); this ends that
 * count, and queues the kick for what a callback added meanwhile.
 *
 * Context: process context, no lock held; takes the engine lock.
 */
/**
 * accel_engine_take_ready_locked() - make the jobs on @e's ready list
 * runnable, in the order their waits were reached.
 * @e:    the engine, its lock held.
 * @took: what was taken; pass it to accel_engine_took_ready() once the
 *        lock is dropped.
 *
 * Taken under the lock, as the kick takes it: a job on the list is
 * runnable before anything the caller releases next, never in a kick's
 * hands meanwhile. Jobs that fail or finish (a failed wait, a pipelined
 * job completed before its waits) are kept aside for the kick, which
 * finishes them: their files wait for the kick, not for the caller.
 */
void accel_engine_take_ready_locked(struct accel_engine *e,
				    struct accel_ready_take *took)
{
	struct llist_node *list;
	struct accel_sched_job *job, *tmp;

	lockdep_assert_held(&e->lock);
	*took = (struct accel_ready_take){ 0 };
	list = llist_reverse_order(llist_del_all(&e->ready));
	llist_for_each_entry_safe(job, tmp, list, ready) {
		if (job->state == ACCEL_JOB_FINISHING ||
		    (job->state == ACCEL_JOB_PENDING && atomic_read(&job->error))) {
			job->ready.next = took->back;
			took->back = &job->ready;
			if (!took->back_last)
				took->back_last = took->back;
			continue;
		}
		accel_job_ready_locked(job); /* runnable, or nothing to do */
		job->ready.next = took->keep;
		took->keep = &job->ready;
	}
}

/*
 * After accel_engine_take_ready_locked(), the lock dropped: the jobs kept
 * aside go back to the ready list for the kick, and the references the
 * fence callbacks took on the others go. With @kick, the kick is queued
 * for whatever is on the list now (what went back, what a callback added
 * meanwhile): a kick that ran between the take and the return found the
 * list empty.
 */
void accel_engine_took_ready(struct accel_engine *e,
			     struct accel_ready_take *took, bool kick)
{
	struct accel_sched_job *job, *tmp;

	if (took->back)
		llist_add_batch(took->back, took->back_last, &e->ready);
	if (kick && !llist_empty(&e->ready))
		accel_engine_queue_kick(e);
	llist_for_each_entry_safe(job, tmp, took->keep, ready) {
		accel_job_drop_promisers(job); /* not pending any more */
		accel_job_put(job);
	}
}

void accel_engine_ready_now(struct accel_engine *e)
{
	struct accel_ready_take took;

	spin_lock_irq(&e->lock);
	accel_engine_take_ready_locked(e, &took);
	e->in_flight--; /* the COMPLETE's credit, held until now */
	accel_engine_schedule_locked(e);
	spin_unlock_irq(&e->lock);
	if (took.back)
		llist_add_batch(took.back, took.back_last, &e->ready);
	took.back = NULL;
	/* Pairs with the fully ordered add of accel_job_dep_cb(). */
	smp_mb__before_atomic();
	atomic_dec(&e->completing);
	smp_mb__after_atomic();
	accel_engine_took_ready(e, &took, true);
}

static void accel_engine_kick(struct work_struct *work)
{
	struct accel_engine *e = container_of(work, struct accel_engine, kick);
	struct llist_node *list;
	struct accel_sched_job *job, *tmp;
	LIST_HEAD(failed);

	spin_lock_irq(&e->lock);
	list = llist_reverse_order(llist_del_all(&e->ready)); /* see ready_now */
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
	llist_for_each_entry_safe(job, tmp, list, ready) {
		accel_job_drop_promisers(job); /* not pending any more */
		accel_job_put(job);
	}
	accel_engine_follow(e);
	accel_engine_put(e);
}

/* ------------------------------------------------------------------ sysfs */

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

static ssize_t accel_engine_counter_show(struct kobject *kobj,
					 struct kobj_attribute *attr, char *buf)
{
	struct accel_engine *e = container_of(kobj, struct accel_engine, kobj);
	u64 *v = (void *)e + accel_counter_offset(attr);

	return sysfs_emit(buf, "%llu\n", READ_ONCE(*v));
}

static struct kobj_attribute accel_engine_credits = __ATTR_RW(credits);
static struct kobj_attribute accel_engine_in_flight = __ATTR_RO(in_flight);
ACCEL_COUNTER_ATTR(engine, busy_ns, busy_ns);
ACCEL_COUNTER_ATTR(engine, released, nr_released);
ACCEL_COUNTER_ATTR(engine, completed, nr_completed);
ACCEL_COUNTER_ATTR(engine, failed, nr_failed);
ACCEL_COUNTER_ATTR(engine, timedout, nr_timedout);
ACCEL_COUNTER_ATTR(engine, latency_ns, latency_ns);
ACCEL_COUNTER_ATTR(engine, deadlines_met, nr_deadlines_met);
ACCEL_COUNTER_ATTR(engine, deadlines_missed, nr_deadlines_missed);
ACCEL_COUNTER_ATTR(engine, released_ahead, nr_ahead);

static struct attribute *accel_engine_attrs[] = {
	&accel_engine_credits.attr,
	&accel_engine_in_flight.attr,
	&accel_engine_busy_ns.attr.attr,
	&accel_engine_released.attr.attr,
	&accel_engine_completed.attr.attr,
	&accel_engine_failed.attr.attr,
	&accel_engine_timedout.attr.attr,
	&accel_engine_latency_ns.attr.attr,
	&accel_engine_deadlines_met.attr.attr,
	&accel_engine_deadlines_missed.attr.attr,
	&accel_engine_released_ahead.attr.attr,
	NULL,
};
ATTRIBUTE_GROUPS(accel_engine);

static const struct kobj_type accel_engine_ktype = {
	.release = accel_engine_kobj_release,
	.sysfs_ops = &kobj_sysfs_ops,
	.default_groups = accel_engine_groups,
};

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

					seq_printf(m, "  runnable %s client %llu queue %u weight %u vruntime %llu busy_ns %llu runnable %u in_flight %u latency_ns %llu",
						   prio[p], q->afile->client_id, q->handle,
						   q->weight, q->vruntime, q->busy_ns,
						   q->nr_runnable, q->nr_in_flight,
						   q->latency_ns);
					if (q->nr_boosted)
						seq_printf(m, " boosted %s %u",
							   prio[q->boost], q->nr_boosted);
					if (q->on_dl)
						seq_printf(m, " deadline_lst %llu",
							   q->dl_lst);
					seq_putc(m, '\n');
				}
			}
		}
		spin_unlock_irq(&e->lock);
	}
	mutex_unlock(&accel_engines_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(accel_engines);

/* The engines listing: <debugfs>/accelsched/engines. */
void accel_engine_debugfs_init(struct dentry *dir)
{
	debugfs_create_file("engines", 0444, dir, NULL, &accel_engines_fops);
}
