// SPDX-License-Identifier: GPL-2.0
/*
 * DOC: timeline sync objects
 *
 * A syncobj holds a 64-bit *value* that only grows. A *point* is a value on
 * it; the point is *reached* once the value is at least the point. A point is
 * *submitted* once something has promised to reach it: a host signal, an
 * imported fence, a job of the scheduler. ``submitted`` never falls below
 * ``value``.
 *
 * A syncobj can *fail*: it then keeps, for good, the first negative errno it
 * was failed with, and later failures are ignored. Every waiter, present or
 * future, receives that error unchanged, and so does a host signal.
 *
 * Waiting is built on the kernel's &struct dma_fence. accel_syncobj_point_fence()
 * returns a fence that signals once a point is reached (or submitted), or
 * signals with the failure's error. Fences are made on demand, one per
 * (point, kind) that someone waits on, and kept in an rbtree by point, so a
 * signal costs O(log n + fences it signals) and a point that nobody waits on
 * costs nothing. A point already reached gets the kernel's signalled stub
 * fence. Because waits are fences, a point exports as a ``sync_file`` as it is,
 * and any driver's fence imports as a point.
 *
 * Fences are signalled outside the syncobj's lock, in point order, so a
 * fence callback may itself signal another syncobj without nesting locks.
 *
 * When the last reference to a syncobj goes (handles, exported fds, imports
 * still in flight), nothing can reach its pending points any more: their
 * fences signal with -ENOENT rather than wait forever.
 */
#include <linux/anon_inodes.h>
#include <linux/dma-fence-array.h>
#include <linux/dma-fence-chain.h>
#include <linux/file.h>
#include <linux/llist.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/workqueue.h>

#include "internal.h"

/* The fewest pending fences at which a syncobj sweeps its tree. */
#define ACCEL_SWEEP_MIN 64

/**
 * struct accel_point_fence - a fence on one point of a syncobj.
 * @base: the fence; its seqno is the point.
 * @lock: the fence's own lock: the fence may outlive its syncobj (an
 *        exported sync_file), so it cannot borrow the syncobj's.
 * @kind: what the fence tracks.
 * @node: in &accel_syncobj.pending[@kind] while pending.
 * @link: in a local list between detaching and signalling.
 * @s:    its syncobj while it is in the tree (a weak reference: cleared
 *        under the syncobj's lock when it leaves, and the syncobj is freed
 *        after an RCU grace period), for a deadline set on the fence.
 * @deadline: the earliest deadline set on it (its @lock).
 * @dl_work: takes that deadline to the job that promised the point, in
 *        process context (a fence's deadline may be set from any context).
 *
 * Each point fence holds a reference on the module: its ops are module code,
 * and a sync_file can keep it alive after every file is closed.
 */
struct accel_point_fence {
	struct dma_fence base;
	spinlock_t lock;
	enum accel_point_kind kind;
	struct rb_node node;
	struct list_head link;
	struct accel_syncobj *s;
	u64 deadline;
	struct work_struct dl_work;
	struct llist_node free; /* in accel_fence_pool */
};

static struct accel_point_fence *to_point_fence(struct dma_fence *f)
{
	return container_of(f, struct accel_point_fence, base);
}

static const char *accel_fence_driver_name(struct dma_fence *f)
{
	return ACCEL_DEVICE_NAME;
}

static const char *accel_fence_timeline_name(struct dma_fence *f)
{
	static const char *const names[] = {
		[ACCEL_POINT_REACHED] = "syncobj",
		[ACCEL_POINT_SUBMITTED] = "syncobj-submitted",
		[ACCEL_POINT_FAILURE] = "syncobj-failure",
	};

	return names[to_point_fence(f)->kind];
}

/* Point fences alive, module-wide (debugfs point_fences). */
atomic_t accel_point_fences_live = ATOMIC_INIT(0);

/*
 * Point fences are recycled, but only after a grace period. dma_resv reads
 * a dma-buf's fences under RCU alone and replaces them in place, taking a
 * reference with dma_fence_get_rcu() and no check that the pointer still
 * names the same fence: a fence's memory must not serve again while an RCU
 * reader may hold its old pointer. (A SLAB_TYPESAFE_BY_RCU cache, tried,
 * let a dma-buf reader take another syncobj's failed fence:
 * interop.reused_fences_race_a_dmabuf caught it on 6.1.)
 *
 * So a freed fence waits out a grace period (call_rcu()) and then goes to a
 * pool of up to ACCEL_FENCE_POOL, from which the next fences are taken
 * before the slab. With kfree_rcu() each went back to the slab, and a CPU
 * that makes a fence per job (each wait on a point not yet reached) took a
 * new slab page every 21 fences: that was the tail of a waiting submission
 * (accel-bench inversion). The pool is pool.h's, as the engines' jobs
 * have; the RCU callback puts. Module exit waits for the callbacks
 * (rcu_barrier()) before it empties the pool.
 */
#define ACCEL_FENCE_POOL 1024

/*
 * The grace periods can fall behind: under a stream of waits the RCU
 * callbacks that recycle come in batches (ten per softirq run unless many
 * are queued), and meanwhile each fence came from the slab, a new slab
 * page every 24 of them (168 bytes each): under TCG a waiting submission
 * 9 us slower, every 24th (accel-bench inversion). So when the pool runs
 * below ACCEL_FENCE_LOW a work fills it up to ACCEL_FENCE_FILL with new
 * fences, off the submission's path; they are never used yet, so need no
 * grace period.
 */
#define ACCEL_FENCE_LOW 64
#define ACCEL_FENCE_FILL 256

static struct kmem_cache *accel_fence_cache;
struct accel_pool accel_fence_pool; /* set up by accel_fence_cache_init() */

static void accel_fence_recycle(struct rcu_head *rcu)
{
	struct accel_point_fence *pf =
		to_point_fence(container_of(rcu, struct dma_fence, rcu));

	if (!accel_pool_put(&accel_fence_pool, &pf->free, ACCEL_FENCE_POOL))
		kmem_cache_free(accel_fence_cache, pf);
}

static void accel_fence_release(struct dma_fence *f)
{
	atomic_dec(&accel_point_fences_live);
	call_rcu(&f->rcu, accel_fence_recycle);
	module_put(THIS_MODULE); /* module exit waits for the callback */
}

static void accel_fence_fill(struct work_struct *work)
{
	while (atomic_read(&accel_fence_pool.count) < ACCEL_FENCE_FILL) {
		struct accel_point_fence *pf =
			kmem_cache_alloc(accel_fence_cache, GFP_KERNEL);

		if (!pf)
			return;
		if (!accel_pool_put(&accel_fence_pool, &pf->free, ACCEL_FENCE_POOL)) {
			kmem_cache_free(accel_fence_cache, pf);
			return;
		}
	}
}

/* Queued on accel_wq, which module exit destroys (waiting for it) first. */
static DECLARE_WORK(accel_fence_fill_work, accel_fence_fill);

/* A zeroed point fence: from the pool, else from the slab. */
static struct accel_point_fence *accel_fence_get(void)
{
	struct llist_node *n = accel_pool_get(&accel_fence_pool);
	struct accel_point_fence *pf;

	if (ACCEL_POOLING &&
	    atomic_read(&accel_fence_pool.count) < ACCEL_FENCE_LOW &&
	    !work_pending(&accel_fence_fill_work))
		queue_work(accel_wq, &accel_fence_fill_work);
	if (!n)
		return kmem_cache_zalloc(accel_fence_cache, GFP_KERNEL);
	pf = llist_entry(n, struct accel_point_fence, free);
	memset(pf, 0, sizeof(*pf));
	return pf;
}

int accel_fence_cache_init(void)
{
	if (accel_pool_init(&accel_fence_pool)) {
		accel_pool_fini(&accel_fence_pool);
		return -ENOMEM;
	}
	accel_fence_cache = KMEM_CACHE(accel_point_fence, 0);
	if (!accel_fence_cache) {
		accel_pool_fini(&accel_fence_pool);
		return -ENOMEM;
	}
	return 0;
}

void accel_fence_cache_fini(void)
{
	struct accel_point_fence *pf, *tmp;

	rcu_barrier(); /* every recycle callback has run */
	llist_for_each_entry_safe(pf, tmp, accel_pool_drain(&accel_fence_pool), free)
		kmem_cache_free(accel_fence_cache, pf);
	accel_pool_fini(&accel_fence_pool);
	kmem_cache_destroy(accel_fence_cache);
}

static void accel_fence_deadline_work(struct work_struct *work)
{
	struct accel_point_fence *pf =
		container_of(work, struct accel_point_fence, dl_work);
	struct accel_syncobj *s;
	unsigned long flags;
	u64 d;

	spin_lock_irqsave(&pf->lock, flags);
	d = pf->deadline;
	spin_unlock_irqrestore(&pf->lock, flags);
	rcu_read_lock();
	s = READ_ONCE(pf->s);
	if (s && !kref_get_unless_zero(&s->ref))
		s = NULL;
	rcu_read_unlock();
	if (s) {
		accel_sched_point_deadline(s, pf->base.seqno, d);
		accel_syncobj_put(s);
	}
	dma_fence_put(&pf->base);
}

#if ACCEL_FENCE_DEADLINE
/*
 * dma_fence_ops.set_deadline: someone (SYNC_IOC_SET_DEADLINE on an exported
 * sync_file, a display driver) needs the point reached by @deadline. Any
 * context: note the earliest, and let the work find the promiser.
 */
static void accel_fence_set_deadline(struct dma_fence *f, ktime_t deadline)
{
	struct accel_point_fence *pf = to_point_fence(f);
	u64 d = max_t(s64, ktime_to_ns(deadline), 1);
	unsigned long flags;

	if (pf->kind != ACCEL_POINT_REACHED)
		return;
	spin_lock_irqsave(&pf->lock, flags);
	if (!pf->deadline || d < pf->deadline)
		pf->deadline = d;
	spin_unlock_irqrestore(&pf->lock, flags);
	dma_fence_get(f); /* the work's; never the last: the caller has one */
	if (!queue_work(accel_wq, &pf->dl_work))
		dma_fence_put(f);
}
#endif

static const struct dma_fence_ops accel_point_fence_ops = {
	.get_driver_name = accel_fence_driver_name,
	.get_timeline_name = accel_fence_timeline_name,
	.release = accel_fence_release,
	ACCEL_FENCE_OPS_SEQNO64
	ACCEL_FENCE_OPS_DEADLINE(accel_fence_set_deadline)
};

static struct accel_point_fence *accel_point_fence_alloc(void)
{
	struct accel_point_fence *pf = accel_fence_get();

	if (!pf)
		return NULL;
	spin_lock_init(&pf->lock);
	RB_CLEAR_NODE(&pf->node);
	INIT_LIST_HEAD(&pf->link);
	INIT_WORK(&pf->dl_work, accel_fence_deadline_work);
	return pf;
}

/* Free @pf (may be NULL), which accel_point_fence_init() never published. */
static void accel_point_fence_discard(struct accel_point_fence *pf)
{
	if (pf)
		kmem_cache_free(accel_fence_cache, pf);
}

static void accel_point_fence_init(struct accel_syncobj *s,
				   struct accel_point_fence *pf, u64 point,
				   enum accel_point_kind kind)
{
	__module_get(THIS_MODULE);
	atomic_inc(&accel_point_fences_live);
	pf->kind = kind;
	dma_fence_init(&pf->base, &accel_point_fence_ops, &pf->lock,
		       s->context + kind, point);
	accel_fence_set_seqno64(&pf->base);
}

/**
 * accel_syncobj_create() - a new syncobj.
 * @initial: its initial value (also its submitted point).
 *
 * Context: process context; may sleep.
 * Return: the syncobj with one reference, or NULL without memory.
 */
struct accel_syncobj *accel_syncobj_create(u64 initial)
{
	struct accel_syncobj *s = kzalloc(sizeof(*s), GFP_KERNEL);

	if (!s)
		return NULL;
	kref_init(&s->ref);
	spin_lock_init(&s->lock);
	s->value = initial;
	s->submitted = initial;
	s->pending[ACCEL_POINT_REACHED] = RB_ROOT;
	s->pending[ACCEL_POINT_SUBMITTED] = RB_ROOT;
	s->sweep_at = ACCEL_SWEEP_MIN;
	INIT_LIST_HEAD(&s->weak_imports);
	s->context = dma_fence_context_alloc(ACCEL_POINT_KINDS + 1);
	return s;
}

/*
 * A pending fence that only the tree still references (its waiters gave
 * up: a poll, a timed-out wait, a cancelled job) is garbage, but it would
 * stay until its point is reached or the syncobj goes, so waits on ever
 * new points could pin memory without bound. Each insertion that brings
 * the tree to @sweep_at fences drops those, then sets @sweep_at to twice
 * what is left (at least ACCEL_SWEEP_MIN): the sweep's cost is amortised
 * over the insertions before it, and the tree holds at most about twice
 * the fences someone references. Under the syncobj's lock no new
 * reference can be taken from the tree, so a reference count of one there
 * is final.
 */
static void accel_sweep_locked(struct accel_syncobj *s, struct list_head *dead)
{
	int kind;

	lockdep_assert_held(&s->lock);
	for (kind = 0; kind < ACCEL_POINT_KINDS; kind++) {
		struct rb_node *n = rb_first(&s->pending[kind]);

		while (n) {
			struct accel_point_fence *pf =
				rb_entry(n, struct accel_point_fence, node);

			n = rb_next(n);
			if (kref_read(&pf->base.refcount) != 1)
				continue;
			smp_rmb(); /* a waiter removes its callback, then puts */
			if (!list_empty(&pf->base.cb_list))
				continue;
			rb_erase(&pf->node, &s->pending[kind]);
			RB_CLEAR_NODE(&pf->node);
			WRITE_ONCE(pf->s, NULL);
			s->npending--;
			list_add_tail(&pf->link, dead);
		}
	}
	s->sweep_at = max_t(u32, ACCEL_SWEEP_MIN, 2 * s->npending);
}

/* Free what accel_sweep_locked() collected; no lock held. */
static void accel_sweep_free(struct list_head *dead)
{
	struct accel_point_fence *pf, *tmp;

	list_for_each_entry_safe(pf, tmp, dead, link) {
		list_del_init(&pf->link);
		dma_fence_put(&pf->base); /* the last reference */
	}
}

/* Take the failure fence out (to signal it), under the lock. */
static struct dma_fence *accel_take_fail_fence_locked(struct accel_syncobj *s)
{
	struct dma_fence *f = s->fail_fence;

	lockdep_assert_held(&s->lock);
	s->fail_fence = NULL;
	return f;
}

/* With @error 0: the syncobj went, and never failed. */
static void accel_fail_fence_signal(struct dma_fence *f, int error)
{
	if (!f)
		return;
	if (error)
		dma_fence_set_error(f, error);
	dma_fence_signal(f);
	dma_fence_put(f);
}

/*
 * Move the pending fences of @kind with a point <= @upto (all of them when
 * @upto is U64_MAX) to @list, in point order, with the tree's reference.
 */
static void accel_detach_locked(struct accel_syncobj *s,
				enum accel_point_kind kind, u64 upto,
				struct list_head *list)
{
	struct rb_node *n;

	lockdep_assert_held(&s->lock);
	while ((n = rb_first(&s->pending[kind]))) {
		struct accel_point_fence *pf =
			rb_entry(n, struct accel_point_fence, node);

		if (pf->base.seqno > upto)
			break;
		rb_erase(n, &s->pending[kind]);
		RB_CLEAR_NODE(n);
		WRITE_ONCE(pf->s, NULL);
		s->npending--;
		list_add_tail(&pf->link, list);
	}
}

/*
 * Signals calling back: raised under the syncobj's lock before the value
 * that detached the fences is written, lowered once their callbacks have
 * run. A SUBMIT that read a value can then tell that the waiters of that
 * value may not be ready yet (accel_syncobj_signalling()).
 */
static atomic_t accel_signals_in_flight = ATOMIC_INIT(0);

/* Count @list's signal in flight, before what detached it is visible. */
static void accel_signal_begin_locked(struct accel_syncobj *s,
				      struct list_head *list)
{
	lockdep_assert_held(&s->lock);
	if (list_empty(list))
		return;
	atomic_inc(&accel_signals_in_flight);
	smp_mb__after_atomic(); /* pairs with accel_syncobj_signalling() */
}

/* Signal and release what accel_detach_locked() collected; no lock held. */
static void accel_signal_list(struct list_head *list, int error)
{
	struct accel_point_fence *pf, *tmp;

	if (list_empty(list))
		return;
	list_for_each_entry_safe(pf, tmp, list, link) {
		list_del_init(&pf->link);
		if (error)
			dma_fence_set_error(&pf->base, error);
		dma_fence_signal(&pf->base);
		dma_fence_put(&pf->base);
	}
	smp_mb__before_atomic(); /* the callbacks before the count */
	atomic_dec(&accel_signals_in_flight);
}

/**
 * accel_syncobj_signalling() - some signal may still be calling back.
 *
 * True from before a signal (a host signal, a job's COMPLETE, a failure)
 * makes its new value visible until every fence it detached has called
 * back: a caller that read a value, and then this as false, knows that
 * the waiters that value satisfied have been called.
 *
 * Context: any context.
 */
bool accel_syncobj_signalling(void)
{
	smp_mb(); /* what the caller read before the count */
	return atomic_read(&accel_signals_in_flight);
}

/**
 * accel_point_fence_settling() - @f is signalled, or about to be.
 * @f: a fence a job waits on.
 *
 * A point fence taken off its syncobj by a signal, a failure or the
 * syncobj's end is signalled next by that caller, with no lock held and
 * nothing to wait for; until then its callbacks have not run.
 *
 * Context: any context.
 */
bool accel_point_fence_settling(struct dma_fence *f)
{
	if (test_bit(DMA_FENCE_FLAG_SIGNALED_BIT, &f->flags))
		return true;
	return f->ops == &accel_point_fence_ops &&
	       !READ_ONCE(to_point_fence(f)->s);
}

static void accel_syncobj_drop_weak_imports(struct accel_syncobj *s);

/**
 * accel_syncobj_free() - kref release: the last reference is gone.
 * @ref: &accel_syncobj.ref.
 *
 * Pending points can no longer be reached: their fences fail with -ENOENT.
 *
 * Context: any context in which dma_fence_signal() may be called.
 */
void accel_syncobj_free(struct kref *ref)
{
	struct accel_syncobj *s = container_of(ref, struct accel_syncobj, ref);
	struct dma_fence *fail;
	LIST_HEAD(list);

	accel_syncobj_drop_weak_imports(s);
	spin_lock(&s->lock);
	accel_detach_locked(s, ACCEL_POINT_REACHED, U64_MAX, &list);
	accel_detach_locked(s, ACCEL_POINT_SUBMITTED, U64_MAX, &list);
	accel_signal_begin_locked(s, &list);
	fail = accel_take_fail_fence_locked(s);
	spin_unlock(&s->lock);
	accel_signal_list(&list, -ENOENT);
	accel_fail_fence_signal(fail, 0);
	kfree_rcu(s, rcu); /* a point fence's deadline work may still look */
}

/*
 * Raise value and/or submitted and signal what that satisfies; with @by,
 * record it as the latest promise when it is at least as high (in the same
 * lock section: every job's signal promises, and says who promised).
 */
static int accel_syncobj_advance(struct accel_syncobj *s, u64 value,
				 u64 submitted, bool strict,
				 const struct accel_promiser *by, bool *passed)
{
	LIST_HEAD(list);
	int ret = 0;

	spin_lock(&s->lock);
	if (s->error) {
		ret = s->error;
		goto out_unlock;
	}
	if (strict && value <= s->value) {
		ret = -EINVAL;
		goto out_unlock;
	}
	submitted = max(submitted, value);
	if (value > s->value)
		accel_detach_locked(s, ACCEL_POINT_REACHED, value, &list);
	else if (passed)
		*passed = true;
	if (submitted > s->submitted)
		accel_detach_locked(s, ACCEL_POINT_SUBMITTED, submitted, &list);
	/* Counted before the value that detached them can be read. */
	accel_signal_begin_locked(s, &list);
	if (value > s->value)
		WRITE_ONCE(s->value, value); /* accel_syncobj_value() */
	if (submitted > s->submitted)
		WRITE_ONCE(s->submitted, submitted);
	if (by && (by->point >= s->promiser.point || !s->promiser.owner))
		s->promiser = *by;
out_unlock:
	spin_unlock(&s->lock);
	accel_signal_list(&list, 0);
	return ret;
}

/**
 * accel_syncobj_signal() - reach @value (the host signal).
 * @s:     the syncobj.
 * @value: the new value; must be above the current one.
 *
 * Context: any context; takes &accel_syncobj.lock.
 * Return: 0; -EINVAL if @value is not above the current value; the
 * syncobj's error if it has failed. Nothing changes on error.
 */
int accel_syncobj_signal(struct accel_syncobj *s, u64 value)
{
	return accel_syncobj_advance(s, value, value, true, NULL, NULL);
}

/**
 * accel_syncobj_reach() - reach @point if the value is below it (a job
 * completing: a host signal may have gone further meanwhile).
 * @s:      the syncobj.
 * @point:  the point.
 * @passed: set if the value was at @point or past it already (not failed):
 *          nothing was reached.
 *
 * Context: any context; takes &accel_syncobj.lock.
 * Return: 0, or the syncobj's error if it has failed.
 */
int accel_syncobj_reach(struct accel_syncobj *s, u64 point, bool *passed)
{
	return accel_syncobj_advance(s, point, point, false, NULL, passed);
}

/**
 * accel_syncobj_get_promiser() - the latest promise, if @owner made it.
 * @s:     the syncobj.
 * @owner: the owner asking.
 * @id:    out: its id for the promise.
 * @point: out: the promised point.
 *
 * Context: any context.
 * Return: true if @owner made the latest promise.
 */
bool accel_syncobj_get_promiser(struct accel_syncobj *s, const void *owner,
				u32 *id, u64 *point)
{
	bool mine;

	spin_lock(&s->lock);
	mine = s->promiser.owner == owner && !s->error;
	*id = s->promiser.id;
	*point = s->promiser.point;
	spin_unlock(&s->lock);
	return mine;
}

/**
 * accel_syncobj_promiser_get() - a reference to whoever promised @point.
 * @s:     the syncobj.
 * @point: the point waited on.
 *
 * The latest promise counts if it is at or above @point: reaching it
 * reaches @point too. Its reference is taken under &accel_syncobj.lock,
 * only while it is not zero: its owner forgets the promise under the same
 * lock before the memory is reused (accel_syncobj_forget_promiser()).
 *
 * Context: any context; takes &accel_syncobj.lock.
 * Return: the promise's &struct kref with a reference taken, or NULL (no
 * promise covers @point, its owner is going, or the syncobj failed).
 */
struct kref *accel_syncobj_promiser_get(struct accel_syncobj *s, u64 point)
{
	struct kref *ref = NULL;

	spin_lock(&s->lock);
	if (s->promiser.ref && s->promiser.point >= point && !s->error &&
	    kref_get_unless_zero(s->promiser.ref))
		ref = s->promiser.ref;
	spin_unlock(&s->lock);
	return ref;
}

/**
 * accel_syncobj_forget_promiser() - drop the weak reference to @ref, if
 * the latest promise is still its.
 * @s:   the syncobj.
 * @ref: what accel_syncobj_promise() was given.
 *
 * The promise's id and point stay (pipelining compares them only).
 * Context: any context; takes &accel_syncobj.lock.
 */
void accel_syncobj_forget_promiser(struct accel_syncobj *s, struct kref *ref)
{
	spin_lock(&s->lock);
	if (s->promiser.ref == ref)
		s->promiser.ref = NULL;
	spin_unlock(&s->lock);
}

/**
 * accel_syncobj_promise() - mark @point submitted (something will reach
 * it), and record who promised it.
 * @s:     the syncobj.
 * @point: the point.
 * @owner: an opaque owner (the scheduler passes the job's file).
 * @id:    the owner's id for the promise (its job id).
 * @ref:   the promise's reference count (the scheduler's job), kept as a
 *         weak reference for accel_syncobj_promiser_get(); its owner calls
 *         accel_syncobj_forget_promiser() before the memory goes.
 *
 * Only the latest promise is kept; a failed syncobj records none.
 *
 * Context: any context; takes &accel_syncobj.lock.
 * Return: 0, or the syncobj's error if it has failed.
 */
int accel_syncobj_promise(struct accel_syncobj *s, u64 point,
			  const void *owner, u32 id, struct kref *ref)
{
	const struct accel_promiser by = {
		.owner = owner, .id = id, .point = point, .ref = ref,
	};

	return accel_syncobj_advance(s, 0, point, false, &by, NULL);
}

/**
 * accel_syncobj_fail() - fail the syncobj for good.
 * @s:     the syncobj.
 * @error: a negative errno.
 *
 * The first failure wins; a later one changes nothing. Every pending fence
 * signals with @error.
 *
 * Context: any context; takes &accel_syncobj.lock.
 * Return: 0.
 */
int accel_syncobj_fail(struct accel_syncobj *s, int error)
{
	struct dma_fence *fail = NULL;
	LIST_HEAD(list);

	if (WARN_ON_ONCE(error >= 0 || error < -MAX_ERRNO))
		error = -EINVAL;
	/* A foreign fence's internal code (say -ERESTARTSYS): no waiter's. */
	if (error <= -512 && error >= -530)
		error = -EIO;
	spin_lock(&s->lock);
	if (!s->error) {
		accel_detach_locked(s, ACCEL_POINT_REACHED, U64_MAX, &list);
		accel_detach_locked(s, ACCEL_POINT_SUBMITTED, U64_MAX, &list);
		accel_signal_begin_locked(s, &list);
		WRITE_ONCE(s->error, error);
		fail = accel_take_fail_fence_locked(s);
	}
	spin_unlock(&s->lock);
	accel_signal_list(&list, error);
	accel_fail_fence_signal(fail, error);
	return 0;
}

/**
 * accel_syncobj_query() - read the state.
 * @s:         the syncobj.
 * @value:     out: the value.
 * @submitted: out: the highest submitted point.
 * @error:     out: 0 or the failure.
 *
 * Context: any context.
 */
void accel_syncobj_query(struct accel_syncobj *s, u64 *value, u64 *submitted,
			 int *error)
{
	spin_lock(&s->lock);
	*value = s->value;
	*submitted = s->submitted;
	*error = s->error;
	spin_unlock(&s->lock);
}

/* A fence already signalled with @error, for waits on a failed syncobj. */
static struct dma_fence *accel_failed_fence(struct accel_syncobj *s,
					    struct accel_point_fence *pf,
					    u64 point,
					    enum accel_point_kind kind,
					    int error)
{
	accel_point_fence_init(s, pf, point, kind);
	dma_fence_set_error(&pf->base, error);
	dma_fence_signal(&pf->base);
	return &pf->base;
}

/*
 * Look @point up; with @pf, insert it if missing. Return a referenced fence,
 * or NULL when @pf is needed and missing.
 */
static struct dma_fence *accel_point_lookup(struct accel_syncobj *s, u64 point,
					    enum accel_point_kind kind,
					    struct accel_point_fence **pf)
{
	struct rb_node **link, *parent = NULL;
	struct dma_fence *f;
	LIST_HEAD(dead);
	int error;
	u64 cur;

	spin_lock(&s->lock);
	error = s->error;
	cur = kind == ACCEL_POINT_REACHED ? s->value : s->submitted;
	if (!error && point <= cur) {
		spin_unlock(&s->lock);
		return dma_fence_get_stub();
	}
	if (error) {
		spin_unlock(&s->lock);
		if (!*pf)
			return NULL;
		f = accel_failed_fence(s, *pf, point, kind, error);
		*pf = NULL;
		return f;
	}
	link = &s->pending[kind].rb_node;
	while (*link) {
		struct accel_point_fence *it;

		parent = *link;
		it = rb_entry(parent, struct accel_point_fence, node);
		if (point < it->base.seqno) {
			link = &parent->rb_left;
		} else if (point > it->base.seqno) {
			link = &parent->rb_right;
		} else {
			f = dma_fence_get(&it->base);
			spin_unlock(&s->lock);
			return f;
		}
	}
	if (!*pf) {
		spin_unlock(&s->lock);
		return NULL;
	}
	accel_point_fence_init(s, *pf, point, kind);
	WRITE_ONCE((*pf)->s, s);
	rb_link_node(&(*pf)->node, parent, link);
	rb_insert_color(&(*pf)->node, &s->pending[kind]);
	f = dma_fence_get(&(*pf)->base); /* the tree keeps the first reference */
	*pf = NULL;
	if (++s->npending >= s->sweep_at)
		accel_sweep_locked(s, &dead);
	spin_unlock(&s->lock);
	accel_sweep_free(&dead);
	return f;
}

/**
 * accel_syncobj_point_fence() - the fence of a point.
 * @s:     the syncobj.
 * @point: the point.
 * @kind:  signal when reached, or when submitted.
 *
 * The fence signals once @point is reached (submitted), or with the
 * syncobj's error once it fails (at once if it has failed already), or with
 * -ENOENT if the syncobj goes away first. A point already reached gets the
 * signalled stub fence.
 *
 * Context: process context; may sleep (allocates).
 * Return: a new reference to the fence, or ERR_PTR(-ENOMEM).
 */
struct dma_fence *accel_syncobj_point_fence(struct accel_syncobj *s, u64 point,
					    enum accel_point_kind kind)
{
	struct accel_point_fence *pf = NULL;
	struct dma_fence *f;

	f = accel_point_lookup(s, point, kind, &pf);
	if (f)
		return f;
	pf = accel_point_fence_alloc();
	if (!pf)
		return ERR_PTR(-ENOMEM);
	f = accel_point_lookup(s, point, kind, &pf);
	accel_point_fence_discard(pf); /* someone inserted the point meanwhile */
	return f;
}

/**
 * accel_syncobj_point_status() - where a point stands, without a fence.
 * @s:     the syncobj.
 * @point: the point.
 * @kind:  reached, or submitted.
 *
 * For polls, which must not leave a fence behind for every point they look
 * at.
 *
 * Context: any context.
 * Return: 1 if reached (submitted), 0 if not, the error if the syncobj
 * failed (whatever its value).
 */
int accel_syncobj_point_status(struct accel_syncobj *s, u64 point,
			       enum accel_point_kind kind)
{
	int ret;

	spin_lock(&s->lock);
	if (s->error)
		ret = s->error;
	else
		ret = point <= (kind == ACCEL_POINT_REACHED ? s->value :
							      s->submitted);
	spin_unlock(&s->lock);
	return ret;
}

/**
 * accel_syncobj_fail_fence() - a fence that signals when @s fails.
 * @s: the syncobj.
 *
 * It signals with the syncobj's error when it fails (at once if it has),
 * or without an error when the syncobj goes (its reached points stay
 * reached). A wait in progress watches it for
 * the points it has seen reached already, so that a failure during the
 * wait reaches it as it reaches waits that start after (syncobj.rst).
 *
 * Context: process context; may sleep (allocates).
 * Return: a new reference, or ERR_PTR(-ENOMEM).
 */
struct dma_fence *accel_syncobj_fail_fence(struct accel_syncobj *s)
{
	struct accel_point_fence *pf = accel_point_fence_alloc();
	struct dma_fence *f;
	int error;

	if (!pf)
		return ERR_PTR(-ENOMEM);
	spin_lock(&s->lock);
	error = s->error;
	if (s->fail_fence) {
		f = dma_fence_get(s->fail_fence);
	} else if (!error) {
		accel_point_fence_init(s, pf, 0, ACCEL_POINT_FAILURE);
		s->fail_fence = &pf->base; /* the syncobj's reference */
		f = dma_fence_get(&pf->base);
		pf = NULL;
	}
	spin_unlock(&s->lock);
	if (error && pf)
		return accel_failed_fence(s, pf, 0, ACCEL_POINT_FAILURE, error);
	accel_point_fence_discard(pf);
	return f;
}

/*
 * Imports: a foreign fence that reaches a point when it signals. Its
 * callback runs in whatever context the foreign driver signals from, so it
 * only queues work; the work advances the syncobj in process context. The
 * list lets module exit detach the callbacks of imports still pending.
 *
 * An import of another driver's fence keeps its syncobj alive until the
 * fence signals. An import of an accelsched point (a sync_file exported
 * from a syncobj, alone or merged with others) does not: the syncobj would
 * otherwise keep itself alive through a cycle (point 3 of S imported into
 * S at 3, or A:1 into B and B:1 into A), each waiting on the other for
 * good, and never be freed. Such a *weak* import is listed on its syncobj,
 * which clears it when it goes; its pending points then fail with -ENOENT
 * as for any syncobj whose last handle, fd and job are gone.
 */
struct accel_import {
	struct dma_fence_cb cb;
	struct work_struct work;
	struct list_head link;
	struct list_head slink;
	struct dma_fence *fence;
	struct accel_syncobj *s;
	struct accel_import_quota *quota;
	bool weak;
	u64 point;
};

static DEFINE_SPINLOCK(accel_imports_lock);
static LIST_HEAD(accel_imports);

/*
 * An import stays until its fence signals, which may be never: each file
 * may have at most max_pending_imports of them pending (-ENOSPC), counted
 * in a quota that outlives the file while its imports do.
 */
static unsigned int accel_max_pending_imports = 4096;
module_param_named(max_pending_imports, accel_max_pending_imports, uint, 0644);
MODULE_PARM_DESC(max_pending_imports,
		 "Most sync_file imports one open file may have pending (default 4096)");

struct accel_import_quota *accel_import_quota_new(void)
{
	struct accel_import_quota *q = kzalloc(sizeof(*q), GFP_KERNEL);

	if (q)
		refcount_set(&q->ref, 1);
	return q;
}

void accel_import_quota_put(struct accel_import_quota *q)
{
	if (refcount_dec_and_test(&q->ref))
		kfree(q);
}

static void accel_import_free(struct accel_import *imp)
{
	dma_fence_put(imp->fence);
	if (!imp->weak)
		accel_syncobj_put(imp->s);
	atomic_dec(&imp->quota->pending);
	accel_import_quota_put(imp->quota);
	kfree(imp);
}

/* Off the lists; the syncobj it may still advance (a reference), or NULL. */
static struct accel_syncobj *accel_import_unlist(struct accel_import *imp)
{
	struct accel_syncobj *s;

	spin_lock(&accel_imports_lock);
	list_del(&imp->link);
	s = imp->s;
	if (imp->weak && s) {
		list_del(&imp->slink);
		imp->s = NULL;
		/* Going already, and waiting for this lock to clear us. */
		if (!kref_get_unless_zero(&s->ref))
			s = NULL;
	} else if (s) {
		accel_syncobj_get(s);
	}
	spin_unlock(&accel_imports_lock);
	return s;
}

static void accel_syncobj_drop_weak_imports(struct accel_syncobj *s)
{
	struct accel_import *imp, *tmp;

	spin_lock(&accel_imports_lock);
	list_for_each_entry_safe(imp, tmp, &s->weak_imports, slink) {
		list_del_init(&imp->slink);
		imp->s = NULL;
	}
	spin_unlock(&accel_imports_lock);
}

static void accel_import_work(struct work_struct *work)
{
	struct accel_import *imp = container_of(work, struct accel_import, work);
	int status = dma_fence_get_status(imp->fence);
	struct accel_syncobj *s = accel_import_unlist(imp);

	if (s) {
		if (status < 0)
			accel_syncobj_fail(s, status);
		else
			accel_syncobj_advance(s, imp->point, imp->point, false, NULL, NULL);
		accel_syncobj_put(s);
	}
	accel_import_free(imp);
}

static void accel_import_cb(struct dma_fence *f, struct dma_fence_cb *cb)
{
	struct accel_import *imp = container_of(cb, struct accel_import, cb);

	queue_work(accel_wq, &imp->work);
}

/* Whether @f, or a member of @f if it is an array, is a point fence of ours. */
static bool accel_fence_leaf_is_ours(struct dma_fence *f)
{
	struct dma_fence_array *a = to_dma_fence_array(f);
	unsigned int i;

	if (!a)
		return f->ops == &accel_point_fence_ops;
	for (i = 0; i < a->num_fences; i++)
		if (a->fences[i]->ops == &accel_point_fence_ops)
			return true;
	return false;
}

/*
 * Whether @fence is, or contains, a point fence of ours: itself, the
 * members of an array (a merged sync_file), the fences of a chain's links
 * (a DRM timeline's). The links are walked under RCU, without taking
 * references (fences are freed after a grace period), rather than with
 * dma_fence_unwrap_for_each(), whose references leaked on Debian's 6.1.
 */
static bool accel_fence_is_ours(struct dma_fence *fence)
{
	struct dma_fence *f = fence;
	bool ours = false;

	rcu_read_lock();
	while (f && !ours) {
		struct dma_fence_chain *c = to_dma_fence_chain(f);

		ours = accel_fence_leaf_is_ours(c ? c->fence : f);
		f = c ? rcu_dereference(c->prev) : NULL;
	}
	rcu_read_unlock();
	return ours;
}

/**
 * accel_syncobj_import_fence() - make @fence reach @point.
 * @s:     the syncobj.
 * @point: the point; must be above the current value.
 * @fence: any driver's fence.
 * @quota: the importing file's.
 *
 * @point becomes submitted now, and reached when @fence signals; the
 * syncobj fails if @fence signals with an error. The import keeps @s alive
 * until then unless @fence holds an accelsched point (see above). A fence
 * signalled already is applied before this returns, and takes no room in
 * @quota.
 *
 * Context: process context; may sleep.
 * Return: 0; -EINVAL for a point not above the value; the syncobj's error if
 * it has failed; -ENOSPC past the file's max_pending_imports; -ENOMEM.
 * Nothing changes on error.
 */
int accel_syncobj_import_fence(struct accel_syncobj *s, u64 point,
			       struct dma_fence *fence,
			       struct accel_import_quota *quota)
{
	struct accel_import *imp;
	LIST_HEAD(list);
	int ret = 0;

	/*
	 * Signalled already: applied now, as a host signal or a failure
	 * would be, holding nothing; it is no pending import, so the quota
	 * does not count it (a file at its limit may still import it).
	 */
	if (dma_fence_is_signaled(fence)) {
		int status = dma_fence_get_status(fence);

		if (status >= 0)
			return accel_syncobj_advance(s, point, point, true, NULL, NULL);
		spin_lock(&s->lock);
		ret = s->error ?: point <= s->value ? -EINVAL : 0;
		spin_unlock(&s->lock);
		if (!ret)
			accel_syncobj_fail(s, status);
		return ret;
	}
	if (atomic_inc_return(&quota->pending) > accel_max_pending_imports) {
		atomic_dec(&quota->pending);
		return -ENOSPC;
	}
	imp = kzalloc(sizeof(*imp), GFP_KERNEL);
	if (!imp) {
		atomic_dec(&quota->pending);
		return -ENOMEM;
	}
	INIT_WORK(&imp->work, accel_import_work);
	INIT_LIST_HEAD(&imp->slink);
	imp->point = point;
	imp->weak = accel_fence_is_ours(fence);

	spin_lock(&s->lock);
	if (s->error)
		ret = s->error;
	else if (point <= s->value)
		ret = -EINVAL;
	if (ret) {
		spin_unlock(&s->lock);
		kfree(imp);
		atomic_dec(&quota->pending);
		return ret;
	}
	if (point > s->submitted) {
		accel_detach_locked(s, ACCEL_POINT_SUBMITTED, point, &list);
		accel_signal_begin_locked(s, &list);
		WRITE_ONCE(s->submitted, point);
	}
	spin_unlock(&s->lock);
	accel_signal_list(&list, 0);

	imp->s = imp->weak ? s : accel_syncobj_get(s);
	imp->fence = dma_fence_get(fence);
	refcount_inc(&quota->ref);
	imp->quota = quota;
	spin_lock(&accel_imports_lock);
	list_add_tail(&imp->link, &accel_imports);
	if (imp->weak)
		list_add_tail(&imp->slink, &s->weak_imports);
	spin_unlock(&accel_imports_lock);
	if (dma_fence_add_callback(fence, &imp->cb, accel_import_cb))
		queue_work(accel_wq, &imp->work); /* already signalled */
	return 0;
}

/**
 * accel_syncobj_imports_fini() - detach the imports still pending.
 *
 * Called at module exit, after every file is gone: a foreign fence must not
 * call into the module once it is unloaded.
 *
 * Context: process context; may sleep.
 */
void accel_syncobj_imports_fini(void)
{
	struct accel_import *imp, *tmp;
	LIST_HEAD(detached);

	spin_lock(&accel_imports_lock);
	list_for_each_entry_safe(imp, tmp, &accel_imports, link) {
		if (dma_fence_remove_callback(imp->fence, &imp->cb)) {
			list_move(&imp->link, &detached);
			if (imp->weak && imp->s)
				list_del_init(&imp->slink);
		}
	}
	spin_unlock(&accel_imports_lock);
	/* Those whose callback ran are in accel_wq, which exit drains. */
	list_for_each_entry_safe(imp, tmp, &detached, link)
		accel_import_free(imp);
}

/*
 * Exported syncobj fds: an anon inode holding one reference. Its fops pin
 * the module while the fd lives.
 */
static int accel_syncobj_file_release(struct inode *inode, struct file *file)
{
	accel_syncobj_put(file->private_data);
	return 0;
}

static const struct file_operations accel_syncobj_fops = {
	.owner = THIS_MODULE,
	.release = accel_syncobj_file_release,
};

/**
 * accel_syncobj_export_file() - a file holding @s, for an O_CLOEXEC fd.
 * @s:  the syncobj; the file takes its own reference.
 * @fd: set to a reserved fd, for the caller to install @file at (or to
 *      put back unused, releasing the file).
 *
 * Context: process context; may sleep.
 * Return: the file, or an ERR_PTR (-EMFILE, -ENOMEM) with no fd reserved.
 */
struct file *accel_syncobj_export_file(struct accel_syncobj *s, int *fd)
{
	struct file *file;

	*fd = get_unused_fd_flags(O_CLOEXEC);
	if (*fd < 0)
		return ERR_PTR(*fd);
	file = anon_inode_getfile("accelsched-syncobj", &accel_syncobj_fops,
				  accel_syncobj_get(s), O_RDWR);
	if (IS_ERR(file)) {
		accel_syncobj_put(s);
		put_unused_fd(*fd);
	}
	return file;
}

/**
 * accel_syncobj_from_fd() - the syncobj an exported fd holds.
 * @fd: the fd.
 *
 * Context: process context.
 * Return: a new reference, or ERR_PTR(-EBADF) for a bad fd, ERR_PTR(-EINVAL)
 * for an fd that is not an exported syncobj.
 */
struct accel_syncobj *accel_syncobj_from_fd(int fd)
{
	struct accel_syncobj *s;
	struct file *file = fget(fd);

	if (!file)
		return ERR_PTR(-EBADF);
	if (file->f_op != &accel_syncobj_fops) {
		fput(file);
		return ERR_PTR(-EINVAL);
	}
	s = accel_syncobj_get(file->private_data);
	fput(file);
	return s;
}
