/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A pool of freed objects kept for the next allocations, bounded: the
 * engines' jobs and the point fences. Puts push to a shared llist without
 * a lock (so from any context, an RCU callback included). Gets run in
 * process context: each pops from its CPU's stash, with preemption off,
 * and refills an empty stash with the whole shared list by
 * llist_del_all(), which needs no lock against puts or other takers
 * (llist_del_first() would: a spinlock and a cmpxchg loop on every get,
 * about 40 instructions of an inline SUBMIT, scripts/insn-vm.sh).
 * @count is what the pool holds, stashes included, for the bound and for
 * debugfs.
 *
 * On a KASAN kernel (the debug kernel of make check) nothing is kept:
 * accel_pool_put() refuses, so a freed object goes back to its slab, whose
 * quarantine turns a use after free into a KASAN report. A pool would hand
 * the memory to the next allocation unchecked: a job used after its last
 * reference (the defect robust.submit_races_release_and_complete was
 * written for) could go unseen.
 */
#ifndef _ACCEL_POOL_H
#define _ACCEL_POOL_H

#include <linux/atomic.h>
#include <linux/llist.h>
#include <linux/percpu.h>

/* Whether pools keep anything: not under KASAN (above). */
#define ACCEL_POOLING (!IS_ENABLED(CONFIG_KASAN))

struct accel_pool {
	struct llist_head head;
	struct llist_node * __percpu *stash;
	atomic_t count;
};

/* An empty pool; -ENOMEM (accel_pool_fini() is then still safe). */
static inline int accel_pool_init(struct accel_pool *p)
{
	init_llist_head(&p->head);
	atomic_set(&p->count, 0);
	p->stash = alloc_percpu(struct llist_node *);
	return p->stash ? 0 : -ENOMEM;
}

/* Keep @n unless @p holds @max already; false: the caller frees it. */
static inline bool accel_pool_put(struct accel_pool *p, struct llist_node *n,
				  int max)
{
	if (!ACCEL_POOLING)
		return false;
	if (atomic_inc_return(&p->count) > max) {
		atomic_dec(&p->count);
		return false;
	}
	llist_add(n, &p->head);
	return true;
}

/* A node from @p, or NULL. Context: process context. */
static inline struct llist_node *accel_pool_get(struct accel_pool *p)
{
	struct llist_node **stash, *n;

	stash = get_cpu_ptr(p->stash);
	n = *stash;
	if (!n && !llist_empty(&p->head))
		n = llist_del_all(&p->head);
	if (n)
		*stash = n->next;
	put_cpu_ptr(p->stash);
	if (n)
		atomic_dec(&p->count);
	return n;
}

/* Everything in @p, stashes too, to free (no get or put may run). */
static inline struct llist_node *accel_pool_drain(struct accel_pool *p)
{
	struct llist_node *all = llist_del_all(&p->head), *n;
	int cpu;

	for_each_possible_cpu(cpu) {
		struct llist_node **stash;

		if (!p->stash)
			break;
		stash = per_cpu_ptr(p->stash, cpu);
		while ((n = *stash)) {
			*stash = n->next;
			n->next = all;
			all = n;
		}
	}
	atomic_set(&p->count, 0);
	return all;
}

/* After accel_pool_drain(): the stashes' memory. */
static inline void accel_pool_fini(struct accel_pool *p)
{
	free_percpu(p->stash);
	p->stash = NULL;
}

#endif /* _ACCEL_POOL_H */
