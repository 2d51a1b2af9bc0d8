/* SPDX-License-Identifier: MIT */
/*
 * Internal: a queue's record pool, for what a submission allocates on the
 * submitting thread and frees on the queue's executor thread.
 *
 * glibc's per-thread caches cannot serve that pattern: the submitting
 * thread's cache stays empty and the executor's full, so every such
 * malloc() went to the arena, about 150 instructions each and two per
 * submission (the submission's record and its scheduler's). A pool hands
 * back what its queue's jobs freed, under a lock of its own.
 *
 * A record may outlive its queue (a submission drops its queue when it
 * has run, before its signals), so a pool counts the records out, under
 * its lock: it goes with its owner's accel_pool_put() or, if records are
 * out then, with the last of them. Records above the pool's size, or with
 * no pool, are plain allocations that accel_pool_free() frees.
 *
 * The kernel's counterpart is kmod/pool.h; this one needs no per-CPU part,
 * since a queue has one executor.
 */
#ifndef ACCEL_SRC_POOL_H
#define ACCEL_SRC_POOL_H

#include <stddef.h>
#include <stdint.h>

struct accel_pool;

/* At most this many free records wait in a pool. */
#define ACCEL_POOL_MAX 32

/*
 * accel_pool_new() - a pool of records of up to @size bytes; NULL if out
 * of memory. The caller holds its one reference.
 */
struct accel_pool *accel_pool_new(size_t size);

/*
 * accel_pool_put() - the owner lets @pool go: at once, or once every
 * record taken from it is freed. @pool may be NULL.
 */
void accel_pool_put(struct accel_pool *pool);

/*
 * accel_pool_alloc() - @size bytes, not zeroed, as malloc(); from @pool
 * when @size fits its records (@pool may be NULL: plain). The caller is
 * the owner, or acts for it: not after accel_pool_put(). Free it with
 * accel_pool_free(), on any thread. NULL if out of memory.
 */
void *accel_pool_alloc(struct accel_pool *pool, size_t size);

/* accel_pool_free() - free @rec (from accel_pool_alloc(); NULL is nothing). */
void accel_pool_free(void *rec);

/* accel_pool_count() - free records waiting in @pool (for tests). */
uint32_t accel_pool_count(struct accel_pool *pool);

#endif /* ACCEL_SRC_POOL_H */
