/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A pool of freed objects kept for the next allocations, bounded: the
 * engines' jobs and the point fences. Puts push without a lock (llist, so
 * from any context, an RCU callback included); gets pop under @lock, as
 * llist_del_first() needs its consumers serialised. @count is what the
 * pool holds, for the bound and for debugfs.
 */
#ifndef _ACCEL_POOL_H
#define _ACCEL_POOL_H

#include <linux/atomic.h>
#include <linux/llist.h>
#include <linux/spinlock.h>

struct accel_pool {
	struct llist_head head;
	spinlock_t lock;
	atomic_t count;
};

#define ACCEL_POOL_INIT(name) {						\
	.head = LLIST_HEAD_INIT((name).head),				\
	.lock = __SPIN_LOCK_UNLOCKED((name).lock),			\
	.count = ATOMIC_INIT(0),					\
}

static inline void accel_pool_init(struct accel_pool *p)
{
	init_llist_head(&p->head);
	spin_lock_init(&p->lock);
	atomic_set(&p->count, 0);
}

/* Keep @n unless @p holds @max already; false: the caller frees it. */
static inline bool accel_pool_put(struct accel_pool *p, struct llist_node *n,
				  int max)
{
	if (atomic_inc_return(&p->count) > max) {
		atomic_dec(&p->count);
		return false;
	}
	llist_add(n, &p->head);
	return true;
}

/* A node from @p, or NULL. */
static inline struct llist_node *accel_pool_get(struct accel_pool *p)
{
	struct llist_node *n;

	if (llist_empty(&p->head))
		return NULL;
	spin_lock(&p->lock);
	n = llist_del_first(&p->head);
	spin_unlock(&p->lock);
	if (n)
		atomic_dec(&p->count);
	return n;
}

/* Everything in @p, to free (no get or put may run). */
static inline struct llist_node *accel_pool_drain(struct accel_pool *p)
{
	atomic_set(&p->count, 0);
	return llist_del_all(&p->head);
}

#endif /* _ACCEL_POOL_H */
