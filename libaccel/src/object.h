/* SPDX-License-Identifier: MIT */
/*
 * Internal: the reference count every libaccel object starts with.
 *
 * Retain is relaxed (a caller already holds a reference); the release that
 * drops the count to zero is acq_rel so that the destroying thread sees
 * every write made under the other references.
 */
#ifndef ACCEL_SRC_OBJECT_H
#define ACCEL_SRC_OBJECT_H

#include <stdatomic.h>
#include <stdbool.h>

struct accel_ref {
	atomic_uint count;
};

static inline void accel_ref_init(struct accel_ref *ref)
{
	atomic_init(&ref->count, 1);
}

static inline void accel_ref_get(struct accel_ref *ref)
{
	atomic_fetch_add_explicit(&ref->count, 1, memory_order_relaxed);
}

/* Returns true when this dropped the last reference: destroy the object. */
static inline bool accel_ref_put(struct accel_ref *ref)
{
	return atomic_fetch_sub_explicit(&ref->count, 1,
					 memory_order_acq_rel) == 1;
}

#endif /* ACCEL_SRC_OBJECT_H */
