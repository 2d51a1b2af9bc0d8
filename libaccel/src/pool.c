// SPDX-License-Identifier: MIT
/*
 * A queue's record pool: see pool.h.
 *
 * Each record has a header in front: the pool it returns to, or NULL for a
 * plain allocation. A pooled record is always the pool's full size, so
 * that any request that fits may take it. Under ASan a free record is
 * poisoned, so that a use after accel_pool_free() is still reported, and
 * freeing one twice aborts.
 *
 * The lock is a futex word (Drepper, "Futexes Are Tricky", mutex 3), as
 * IREE's slim mutex: one atomic each way when nobody waits, where a
 * pthread mutex took about 50 instructions a pair, and a submission takes
 * two pools' locks. Only a push or a pop is done under it.
 */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "pool.h"
#include "sched.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define POOL_POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define POOL_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#define POOL_POISONED(p) __asan_address_is_poisoned(p)
#else
#define POOL_POISON(p, n) ((void)(p), (void)(n))
#define POOL_UNPOISON(p, n) ((void)(p), (void)(n))
#define POOL_POISONED(p) ((void)(p), 0)
#endif

struct accel_pool {
	atomic_uint lock;       /* the rest: 0 free, 1 held, 2 waited for */
	bool owned;             /* the owner has not put it */
	uint32_t out;           /* records taken and not freed */
	uint32_t count;
	size_t size;
	void *free[ACCEL_POOL_MAX];
};

/* In front of each record; keeps it aligned as malloc()'s. */
struct pool_head {
	struct accel_pool *pool;
	size_t pad;
} __attribute__((aligned(16)));

static void pool_lock(atomic_uint *w)
{
	unsigned int c = 0;

	if (atomic_compare_exchange_strong_explicit(w, &c, 1, memory_order_acquire,
						    memory_order_relaxed))
		return;
	if (c != 2)
		c = atomic_exchange_explicit(w, 2, memory_order_acquire);
	while (c) {
		accel_futex_wait(w, 2, ACCEL_DEADLINE_INFINITE);
		c = atomic_exchange_explicit(w, 2, memory_order_acquire);
	}
}

static void pool_unlock(atomic_uint *w)
{
	if (atomic_exchange_explicit(w, 0, memory_order_release) == 2)
		accel_futex_wake_one(w);
}

struct accel_pool *accel_pool_new(size_t size)
{
	struct accel_pool *pool = calloc(1, sizeof(*pool));

	if (!pool)
		return NULL;
	atomic_init(&pool->lock, 0);
	pool->owned = true;
	pool->size = size;
	return pool;
}

static void pool_destroy(struct accel_pool *pool)
{
	for (uint32_t i = 0; i < pool->count; i++)
		free(pool->free[i]);
	free(pool);
}

void accel_pool_put(struct accel_pool *pool)
{
	bool last;

	if (!pool)
		return;
	pool_lock(&pool->lock);
	pool->owned = false;
	last = !pool->out;
	pool_unlock(&pool->lock);
	if (last)
		pool_destroy(pool);
}

void *accel_pool_alloc(struct accel_pool *pool, size_t size)
{
	struct pool_head *h = NULL;

	if (!pool || size > pool->size) {
		h = malloc(sizeof(*h) + size);
		if (!h)
			return NULL;
		h->pool = NULL;
		return h + 1;
	}
	/* The owner's reference is the caller's: the pool cannot go meanwhile. */
	pool_lock(&pool->lock);
	if (pool->count)
		h = pool->free[--pool->count];
	pool->out++;
	pool_unlock(&pool->lock);
	if (h) {
		POOL_UNPOISON(h + 1, pool->size);
	} else if (!(h = malloc(sizeof(*h) + pool->size))) {
		pool_lock(&pool->lock);
		pool->out--;
		pool_unlock(&pool->lock);
		return NULL;
	}
	h->pool = pool;
	return h + 1;
}

void accel_pool_free(void *rec)
{
	struct accel_pool *pool;
	struct pool_head *h;
	bool last;

	if (!rec)
		return;
	h = (struct pool_head *)rec - 1;
	pool = h->pool;
	if (!pool) {
		free(h);
		return;
	}
	if (POOL_POISONED(rec)) {
		fprintf(stderr, "libaccel: pool record %p freed twice\n", rec);
		abort();
	}
	pool_lock(&pool->lock);
	if (pool->owned && pool->count < ACCEL_POOL_MAX) {
		POOL_POISON(rec, pool->size);
		pool->free[pool->count++] = h;
		h = NULL;
	}
	pool->out--;
	last = !pool->owned && !pool->out;
	pool_unlock(&pool->lock);
	free(h);
	if (last)
		pool_destroy(pool);
}

uint32_t accel_pool_count(struct accel_pool *pool)
{
	uint32_t n;

	pool_lock(&pool->lock);
	n = pool->count;
	pool_unlock(&pool->lock);
	return n;
}
