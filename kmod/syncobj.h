/* SPDX-License-Identifier: GPL-2.0 */
/*
 * accelsched: timeline sync objects, the interface the rest of the module
 * (ioctls, notifications, the scheduler) uses. See syncobj.c.
 */
#ifndef _ACCEL_SYNCOBJ_H
#define _ACCEL_SYNCOBJ_H

#include <linux/dma-fence.h>
#include <linux/kref.h>
#include <linux/rbtree.h>
#include <linux/refcount.h>
#include <linux/spinlock.h>
#include <linux/types.h>

#include "pool.h"

/**
 * enum accel_point_kind - what a point fence tracks.
 * @ACCEL_POINT_REACHED:   the syncobj's value reaching the point.
 * @ACCEL_POINT_SUBMITTED: something promising to reach it.
 */
enum accel_point_kind {
	ACCEL_POINT_REACHED = 0,
	ACCEL_POINT_SUBMITTED = 1,
	ACCEL_POINT_KINDS,
	/* Not a point: the fence of the syncobj's failure (or its end). */
	ACCEL_POINT_FAILURE = ACCEL_POINT_KINDS,
};

/**
 * struct accel_syncobj - a timeline sync object.
 * @ref:       references: handles, exported fds, imports in flight, jobs.
 * @lock:      protects every field below.
 * @value:     the highest reached point.
 * @submitted: the highest submitted point; never below @value.
 * @error:     0, or the negative errno the syncobj failed with (for good).
 * @pending:   per &enum accel_point_kind, the point fences not yet signalled,
 *             by point; each holds one reference owned by the tree.
 * @npending:  fences in @pending, both kinds.
 * @sweep_at:  when @npending reaches it, the fences that only @pending
 *             still references are dropped (see accel_sweep_locked()).
 * @fail_fence: made on demand for waiters on points already reached; it
 *             signals with the error when the syncobj fails, or without
 *             one when it goes.
 * @weak_imports: imports of accelsched points into this syncobj, which
 *             do not keep it alive (accel_imports_lock; see syncobj.c).
 * @context:   the first of three dma_fence contexts (one per kind, and
 *             one for @fail_fence).
 * @promiser:  who made the latest promise (an opaque owner, a job id and
 *             its point), for the scheduler's pipelining, and a weak
 *             reference to it (@promiser.ref, cleared by its owner before
 *             it goes), for priority inheritance; never dereferenced here.
 *
 * Waiting is always through a point fence (a &struct dma_fence whose seqno
 * is the point): accel_syncobj_point_fence() finds or makes it, and every
 * state change signals the fences it satisfies, outside @lock.
 */
struct accel_syncobj {
	struct kref ref;
	spinlock_t lock;
	u64 value;
	u64 submitted;
	int error;
	struct rb_root pending[ACCEL_POINT_KINDS];
	u32 npending;
	u32 sweep_at;
	struct dma_fence *fail_fence;
	struct list_head weak_imports;
	u64 context;
	struct accel_promiser {
		const void *owner;
		u32 id;
		u64 point;
		struct kref *ref;
	} promiser;
	struct rcu_head rcu;
};

extern atomic_t accel_point_fences_live;
extern struct accel_pool accel_fence_pool;

int accel_fence_cache_init(void);
void accel_fence_cache_fini(void);
struct accel_syncobj *accel_syncobj_create(u64 initial);
void accel_syncobj_free(struct kref *ref);

static inline struct accel_syncobj *accel_syncobj_get(struct accel_syncobj *s)
{
	kref_get(&s->ref);
	return s;
}

static inline void accel_syncobj_put(struct accel_syncobj *s)
{
	if (s)
		kref_put(&s->ref, accel_syncobj_free);
}

/* The dma_fence context of @s's "reached" point fences (seqno = point). */
static inline u64 accel_syncobj_reached_context(const struct accel_syncobj *s)
{
	return s->context + ACCEL_POINT_REACHED;
}

/*
 * @s's value, read without its lock: a snapshot that a signal may pass at
 * once, as any read under the lock could be passed once it is dropped.
 */
static inline u64 accel_syncobj_value(const struct accel_syncobj *s)
{
	return READ_ONCE(s->value);
}

int accel_syncobj_signal(struct accel_syncobj *s, u64 value);
int accel_syncobj_promise(struct accel_syncobj *s, u64 point,
			  const void *owner, u32 id, struct kref *ref);
int accel_syncobj_reach(struct accel_syncobj *s, u64 point, bool *passed);
bool accel_syncobj_get_promiser(struct accel_syncobj *s, const void *owner,
				u32 *id, u64 *point);
struct kref *accel_syncobj_promiser_get(struct accel_syncobj *s, u64 point);
void accel_syncobj_forget_promiser(struct accel_syncobj *s, struct kref *ref);
int accel_syncobj_fail(struct accel_syncobj *s, int error);
void accel_syncobj_query(struct accel_syncobj *s, u64 *value, u64 *submitted,
			 int *error);
bool accel_syncobj_signalling(void);
bool accel_point_fence_settling(struct dma_fence *f);
struct dma_fence *accel_syncobj_point_fence(struct accel_syncobj *s, u64 point,
					    enum accel_point_kind kind);
int accel_syncobj_point_status(struct accel_syncobj *s, u64 point,
			       enum accel_point_kind kind);
struct dma_fence *accel_syncobj_fail_fence(struct accel_syncobj *s);
/**
 * struct accel_import_quota - a file's imports still pending.
 * @ref:     the file's, and one per pending import (which may outlive it).
 * @pending: imports made through the file and not yet done.
 */
struct accel_import_quota {
	refcount_t ref;
	atomic_t pending;
};

struct accel_import_quota *accel_import_quota_new(void);
void accel_import_quota_put(struct accel_import_quota *q);
int accel_syncobj_import_fence(struct accel_syncobj *s, u64 point,
			       struct dma_fence *fence,
			       struct accel_import_quota *quota);

struct file *accel_syncobj_export_file(struct accel_syncobj *s, int *fd);
struct accel_syncobj *accel_syncobj_from_fd(int fd);

#endif /* _ACCEL_SYNCOBJ_H */
