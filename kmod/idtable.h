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
 * @adds:  objects ever added: the last one's number in adding order (ids
 *         wrap, this does not).
 */
struct accel_idtable {
	spinlock_t lock;
	struct accel_idtable_slot *slots;
	u32 mask;
	u32 count;
	u32 next;
	u32 max;
	u64 adds;
};

void accel_idtable_init(struct accel_idtable *t, u32 max);
void accel_idtable_destroy(struct accel_idtable *t);
int accel_idtable_add_slow(struct accel_idtable *t, void *ptr, u32 *id,
			   u64 *nr);
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

/* Whether one more id keeps the table at most half full. */
static inline bool accel_idtable_room_locked(const struct accel_idtable *t)
{
	return 2 * (t->count + 1) <= t->mask + 1;
}

/*
 * Under @t->lock, with room: the next free id for @ptr, in *@id, and its
 * number in adding order in *@nr.
 */
static inline void accel_idtable_take_locked(struct accel_idtable *t,
					     void *ptr, u32 *id, u64 *nr)
{
	struct accel_idtable_slot *s;

	lockdep_assert_held(&t->lock);
	/* At most half full: a free slot is at most mask + 2 ids away. */
	for (;;) {
		u32 n = t->next;

		t->next = n >= t->max ? 1 : n + 1;
		s = &t->slots[n & t->mask];
		if (!s->ptr) {
			s->ptr = ptr;
			s->id = n;
			*id = n;
			break;
		}
	}
	t->count++;
	*nr = ++t->adds;
}

/**
 * accel_idtable_add() - give @ptr the next free id.
 * @t:   the table.
 * @ptr: the object (not NULL).
 * @id:  out: its id.
 * @nr:  out: its number in adding order (1, 2, ...): for the scheduler, a
 *       job's submission order, had in the lock section the id needs
 *       anyway rather than by an atomic instruction of its own.
 *
 * Inline, as every submission takes an id: one lock section, unless the
 * array must be made or grown (accel_idtable_add_slow()).
 *
 * Context: process context; may sleep (it may grow the array).
 * Return: 0, or -ENOMEM.
 */
static inline int accel_idtable_add(struct accel_idtable *t, void *ptr, u32 *id,
				    u64 *nr)
{
	spin_lock(&t->lock);
	if (likely(t->slots && accel_idtable_room_locked(t))) {
		accel_idtable_take_locked(t, ptr, id, nr);
		spin_unlock(&t->lock);
		return 0;
	}
	spin_unlock(&t->lock);
	return accel_idtable_add_slow(t, ptr, id, nr);
}

#endif /* _ACCEL_IDTABLE_H */
