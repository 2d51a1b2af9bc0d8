// SPDX-License-Identifier: GPL-2.0
/*
 * DOC: ids of a file's jobs
 *
 * A job's id names it in COMPLETE and in events, so a stale id (a late or
 * repeated COMPLETE) must not name a newer job: ids are handed out
 * cyclically from 1 to a maximum (2^30 - 1 for jobs, what a SUBMIT's CQE
 * carries beside ACCEL_JOB_RES_PIPELINED), skipping ids whose slot is in
 * use. The table keeps at most half its slots full, so the cursor moves at
 * most twice as fast as the submissions, and an id comes back only after
 * at least 2^29 later submissions of the same file.
 *
 * The object of id @id sits in slot ``id & mask`` of a plain array whose
 * size is a power of two: a lookup is one load and one compare, and taking
 * or freeing an id is one store, where an xarray's cyclic allocation
 * walked and grew tree nodes on every submission (a quarter of the SUBMIT
 * path in the VM's profile). Growing doubles the array; two live ids never
 * collide in the larger one, since they differ in the bits the smaller one
 * used. The array never shrinks: its size follows the most jobs the file
 * had in flight at once (bounded by max_jobs), 16 bytes a slot.
 *
 * Locking: @lock, a plain spinlock (no lookup runs in interrupt context).
 * The array is allocated and freed outside it.
 */
#include <linux/slab.h>
#include <linux/mm.h>

#include "idtable.h"

#define ACCEL_IDTABLE_MIN 64

void accel_idtable_init(struct accel_idtable *t, u32 max)
{
	spin_lock_init(&t->lock);
	t->slots = NULL;
	t->mask = 0;
	t->count = 0;
	t->next = 1;
	t->max = max;
	t->adds = 0;
}

/* Every object must be gone. */
void accel_idtable_destroy(struct accel_idtable *t)
{
	WARN_ON(t->count);
	kvfree(t->slots);
	t->slots = NULL;
}

/* Under the lock: move the objects into @fresh of @size slots. */
static struct accel_idtable_slot *
accel_idtable_grow_locked(struct accel_idtable *t,
			  struct accel_idtable_slot *fresh, u32 size)
{
	struct accel_idtable_slot *old = t->slots;
	u32 i;

	for (i = 0; old && i <= t->mask; i++)
		if (old[i].ptr)
			fresh[old[i].id & (size - 1)] = old[i];
	t->slots = fresh;
	t->mask = size - 1;
	return old;
}

/*
 * accel_idtable_add() when the array must be made or grown first (the
 * common case is inline in idtable.h).
 */
int accel_idtable_add_slow(struct accel_idtable *t, void *ptr, u32 *id,
			   u64 *nr)
{
	struct accel_idtable_slot *fresh = NULL, *old = NULL;
	u32 size = 0, want;

	for (;;) {
		spin_lock(&t->lock);
		want = !t->slots ? ACCEL_IDTABLE_MIN :
		       !accel_idtable_room_locked(t) ? 2 * (t->mask + 1) : 0;
		if (!want || want == size)
			break;
		/* Allocate outside the lock, then look again. */
		spin_unlock(&t->lock);
		kvfree(fresh);
		size = want;
		fresh = kvcalloc(size, sizeof(*fresh), GFP_KERNEL_ACCOUNT);
		if (!fresh)
			return -ENOMEM;
	}
	if (want) {
		old = accel_idtable_grow_locked(t, fresh, size);
		fresh = NULL;
	}
	accel_idtable_take_locked(t, ptr, id, nr);
	spin_unlock(&t->lock);
	kvfree(old);
	kvfree(fresh);
	return 0;
}

/**
 * accel_idtable_remove() - free @id if it still names @ptr.
 * @t:   the table.
 * @id:  the id.
 * @ptr: the object it was given to.
 *
 * Return: true if it did (the caller drops what the table held).
 */
bool accel_idtable_remove(struct accel_idtable *t, u32 id, const void *ptr)
{
	bool mine;

	spin_lock(&t->lock);
	mine = accel_idtable_find_locked(t, id) == ptr;
	if (mine) {
		t->slots[id & t->mask].ptr = NULL;
		t->count--;
	}
	spin_unlock(&t->lock);
	return mine;
}
