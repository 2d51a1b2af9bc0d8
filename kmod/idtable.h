/* SPDX-License-Identifier: GPL-2.0 */
/*
 * accelsched: a file's objects by cyclic id, in a plain array. See idtable.c.
 */
#ifndef _ACCEL_IDTABLE_H
#define _ACCEL_IDTABLE_H

#include <linux/lockdep.h>
#include <linux/spinlock.h>
#include <linux/types.h>

/**
 * struct accel_idtable_slot - one slot: an object and its id (0: free).
 * @ptr: the object, or NULL.
 * @id:  its id.
 */
struct accel_idtable_slot {
	void *ptr;
	u32 id;
};

/**
 * struct accel_idtable - objects by id, ids handed out cyclically.
 * @lock:  protects everything below; never taken in interrupt context.
 * @slots: the array; the object of id @id is in slot @id & @mask.
 * @mask:  the number of slots minus one (a power of two), or 0 before the
 *         first object.
 * @count: objects in the table, at most half its slots.
 * @next:  the next id to try.
 * @max:   the highest id; ids run from 1 to @max and wrap.
 */
struct accel_idtable {
	spinlock_t lock;
	struct accel_idtable_slot *slots;
	u32 mask;
	u32 count;
	u32 next;
	u32 max;
};

void accel_idtable_init(struct accel_idtable *t, u32 max);
void accel_idtable_destroy(struct accel_idtable *t);
int accel_idtable_add(struct accel_idtable *t, void *ptr, u32 *id);
bool accel_idtable_remove(struct accel_idtable *t, u32 id, const void *ptr);

/* The object of @id, or NULL; under @t->lock. */
static inline void *accel_idtable_find_locked(struct accel_idtable *t, u32 id)
{
	struct accel_idtable_slot *s;

	lockdep_assert_held(&t->lock);
	if (!t->slots || !id)
		return NULL;
	s = &t->slots[id & t->mask];
	return s->id == id ? s->ptr : NULL;
}

/*
 * The first object at or after slot *@pos, with *@pos moved past it; NULL
 * at the end. Under @t->lock; the table may grow between two calls (the
 * walk then visits some objects twice or not at all, as any walk of a
 * table that changes under it).
 */
static inline void *accel_idtable_next_locked(struct accel_idtable *t, u32 *pos)
{
	lockdep_assert_held(&t->lock);
	for (; t->slots && *pos <= t->mask; (*pos)++)
		if (t->slots[*pos].ptr)
			return t->slots[(*pos)++].ptr;
	return NULL;
}

#endif /* _ACCEL_IDTABLE_H */
