// SPDX-License-Identifier: MIT
/*
 * Queue-ordered memory: accel_queue_alloca() and accel_queue_dealloca().
 *
 * Each device has one transient pool, made at its first alloca. The pool
 * holds *chunks*, root buffers of the driver's (cpu: host memory; vulkan:
 * one VkDeviceMemory with its VkBuffer; cuda/hip: one device allocation),
 * one memory type each (a chunk serves any request whose type bits it
 * has), and suballocates them: a chunk is a list of *blocks* in address
 * order, each FREE, LIVE (an alloca buffer's) or PENDING (deallocated, its
 * dealloca's waits not known to be reached: the *tag*). Alignment is
 * POOL_ALIGN, enough for every backend's storage offsets, so a buffer of
 * the pool is a view of its chunk at an offset, as a subspan is, and every
 * driver replays it unchanged.
 *
 * FREE blocks are in per-chunk lists by size class (a power of two), with
 * a bitmap of the classes not empty: an alloca looks at its own class
 * (best fit there) and takes the first block of the next class not empty,
 * O(1) but for its class's list. PENDING blocks are in one list in
 * dealloca order; the oldest are looked at first (queues mostly finish in
 * order), all of them only when nothing FREE fits.
 *
 * Queue order without a job of its own: a dealloca puts the block back at
 * once, tagged with its waits; an alloca takes a FREE block, or, when
 * none fits, first turns the PENDING blocks whose tags are reached into
 * FREE ones (merging neighbours), then grows the pool by a chunk if the
 * capacity allows (after freeing empty chunks), and last takes the
 * shortest run of adjacent PENDING (and FREE) blocks that fits, adding
 * their tags to its own waits: the memory is then the alloca's once the
 * work of the buffers before it ended. An alloca or dealloca with signals
 * signals them from the host when its waits are reached already, else
 * submits a barrier (waits -> signals) on its queue; without signals, no
 * job at all. So alloca + dealloca costs two locks and no allocation once
 * warm (released buffers' headers are kept for the next alloca).
 *
 * Peak memory: chunks are only made while committed + chunk <= capacity,
 * so the memory the pool holds never exceeds it (committed_peak).
 *
 * Lifetimes: an alloca buffer holds a reference to its device, which owns
 * the pool, so the pool outlives its buffers; chunks hold none (a pool
 * freed from the device's last release could not drop one), and the
 * device frees the pool before the driver's destroy. A block belongs to
 * its buffer while LIVE, to the pool otherwise.
 *
 * IREE's counterparts: iree_hal_device_queue_alloca() / _dealloca() on a
 * transient pool (iree_hal_allocator pools); CUDA's cuMemAllocAsync() with
 * cudaMemPoolReuseFollowEventDependencies is the same reuse rule.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "error.h"

/* The offset alignment of every block (vulkan's storage offsets: <= 256). */
#define POOL_ALIGN UINT64_C(256)
/* The default capacity, and the largest chunk made for small requests. */
#define POOL_DEFAULT_CAPACITY (UINT64_C(256) << 20)
#define POOL_CHUNK_MAX (UINT64_C(64) << 20)

enum block_state { BLOCK_FREE, BLOCK_LIVE, BLOCK_PENDING };

/* Size classes of FREE blocks: [256 << k, 256 << (k + 1)), k < 41 (2^48). */
#define CLASSES 41

struct chunk;

/*
 * struct block - a range of a chunk.
 * @prev, @next:   the chunk's blocks, by offset.
 * @lprev, @lnext: while FREE, its chunk's list of its size class; while
 *                 PENDING, the pool's list of PENDING blocks, in dealloca
 *                 order.
 * @tag:           while PENDING, the dealloca's waits not reached at its
 *                 call (the semaphores referenced), @tag_count of them;
 *                 while LIVE, the tag it had when an alloca took it
 *                 PENDING: the work of the buffer before may still use
 *                 the memory until it is reached, so the block goes back
 *                 PENDING on it (and the dealloca's waits) whenever its
 *                 buffer returns it, not FREE.
 */
struct block {
	struct block *prev, *next;
	struct block *lprev, *lnext;
	struct chunk *chunk;
	uint64_t offset;
	uint64_t size;
	enum block_state state;
	uint32_t tag_count;
	struct accel_sched_point *tag;
};

/*
 * struct chunk - a root buffer of the driver's, suballocated.
 * @free:    its FREE blocks by size class; @classes: which are not empty.
 * @busy:    bytes of its LIVE and PENDING blocks.
 */
struct chunk {
	struct chunk *next;
	accel_buffer_t *buffer; /* no device reference: see above */
	uint32_t memory_type;
	uint64_t size;
	uint64_t busy;
	struct block *blocks;
	struct block *free[CLASSES];
	uint64_t classes;
};

struct accel_transient_pool {
	pthread_mutex_t lock;
	accel_device_t *device;
	struct chunk *chunks;
	accel_transient_pool_stats_t stats;
	uint32_t pending;          /* PENDING blocks */
	struct block *pending_head, *pending_tail;
	struct block *spare;       /* unused block nodes, by ->next */
	/*
	 * Headers of released alloca buffers, by ->next_free: pushed
	 * without the lock (a release), popped under it (one at a time:
	 * no ABA).
	 */
	_Atomic(struct transient_buffer *) headers;
};

/*
 * Looked at when more are PENDING: the oldest first, since queues
 * mostly finish in order; all of them only when nothing FREE fits.
 */
#define PENDING_REAP 8

/* An alloca buffer: a view of its block's chunk. */
struct transient_buffer {
	accel_buffer_t base;
	struct accel_transient_pool *pool;
	struct block *block;    /* NULL once deallocated */
	struct transient_buffer *next_free;
};

/* ACCEL_TRANSIENT_POOL_BYTES, or the default; 0 or -EINVAL. */
static int pool_capacity(const char *fn, uint64_t *out)
{
	const char *env = getenv("ACCEL_TRANSIENT_POOL_BYTES");
	unsigned long long v;
	unsigned int shift = 0;
	char *end;

	*out = POOL_DEFAULT_CAPACITY;
	if (!env || !*env)
		return 0;
	errno = 0;
	v = strtoull(env, &end, 10);
	if (*end == 'K' || *end == 'M' || *end == 'G') {
		shift = *end == 'K' ? 10 : *end == 'M' ? 20 : 30;
		end++;
	}
	if (errno || end == env || *end || env[0] == '-' || v == 0 ||
	    v > (ACCEL_BUFFER_MAX_SIZE >> shift))
		return accel_fail(EINVAL,
			"%s: ACCEL_TRANSIENT_POOL_BYTES is \"%.32s\"; it must be a number of bytes from 1 to 2^48, with an optional K, M or G suffix (unset: 256M)",
			fn, env);
	/*
	 * Every block is a multiple of POOL_ALIGN: a capacity that is not
	 * would refuse a size at or below it with -EAGAIN for ever.
	 */
	*out = (((uint64_t)v << shift) + POOL_ALIGN - 1) & ~(POOL_ALIGN - 1);
	return 0;
}

/* The device's pool into *@out, made at the first call; 0 or -errno. */
static int pool_get(accel_device_t *d, const char *fn,
		    struct accel_transient_pool **out)
{
	struct accel_transient_pool *p = atomic_load(&d->transient), *none = NULL;
	uint64_t capacity;
	int err;

	*out = p;
	if (p)
		return 0;
	err = pool_capacity(fn, &capacity);
	if (err)
		return err;
	p = calloc(1, sizeof(*p));
	if (!p)
		return accel_fail(ENOMEM, "%s: out of memory", fn);
	pthread_mutex_init(&p->lock, NULL);
	p->device = d;
	p->stats.capacity = capacity;
	if (atomic_compare_exchange_strong(&d->transient, &none, p)) {
		*out = p;
		return 0;
	}
	pthread_mutex_destroy(&p->lock); /* another thread made it first */
	free(p);
	*out = none;
	return 0;
}

static void tag_free(struct accel_sched_point *tag, uint32_t count)
{
	for (uint32_t i = 0; i < count; i++)
		accel_semaphore_release(tag[i].sem);
	free(tag);
}

/* A point is reached, or failed (the work it ends will not run). */
static bool point_reached(const struct accel_sched_point *pt)
{
	accel_semaphore_t *sem = pt->sem;
	uint64_t value = 0;
	int error = 0;

	sem->scheduler->ops->sem_query(sem, &value, &error);
	return error || value >= pt->value;
}

static bool tag_reached(const struct block *b)
{
	for (uint32_t i = 0; i < b->tag_count; i++)
		if (!point_reached(&b->tag[i]))
			return false;
	return true;
}

static unsigned int size_class(uint64_t size)
{
	unsigned int k = 63 - (unsigned int)__builtin_clzll(size / POOL_ALIGN);

	return k < CLASSES ? k : CLASSES - 1;
}

static void free_insert(struct chunk *c, struct block *b)
{
	unsigned int k = size_class(b->size);

	b->state = BLOCK_FREE;
	b->lprev = NULL;
	b->lnext = c->free[k];
	if (b->lnext)
		b->lnext->lprev = b;
	c->free[k] = b;
	c->classes |= UINT64_C(1) << k;
}

static void free_remove(struct chunk *c, struct block *b)
{
	unsigned int k = size_class(b->size);

	if (b->lprev)
		b->lprev->lnext = b->lnext;
	else
		c->free[k] = b->lnext;
	if (b->lnext)
		b->lnext->lprev = b->lprev;
	if (!c->free[k])
		c->classes &= ~(UINT64_C(1) << k);
}

static void pending_insert(struct accel_transient_pool *p, struct block *b)
{
	b->state = BLOCK_PENDING;
	b->lnext = NULL;
	b->lprev = p->pending_tail;
	if (p->pending_tail)
		p->pending_tail->lnext = b;
	else
		p->pending_head = b;
	p->pending_tail = b;
	p->pending++;
}

static void pending_remove(struct accel_transient_pool *p, struct block *b)
{
	if (b->lprev)
		b->lprev->lnext = b->lnext;
	else
		p->pending_head = b->lnext;
	if (b->lnext)
		b->lnext->lprev = b->lprev;
	else
		p->pending_tail = b->lprev;
	p->pending--;
}

static struct block *block_new(struct accel_transient_pool *p)
{
	struct block *b = p->spare;

	if (!b)
		return calloc(1, sizeof(*b));
	p->spare = b->next;
	memset(b, 0, sizeof(*b));
	return b;
}

/* Takes @b out of its chunk's blocks (no list of state) into the spares. */
static void block_unlink(struct accel_transient_pool *p, struct block *b)
{
	if (b->prev)
		b->prev->next = b->next;
	else
		b->chunk->blocks = b->next;
	if (b->next)
		b->next->prev = b->prev;
	b->next = p->spare;
	p->spare = b;
}

/*
 * @b (LIVE or PENDING) becomes FREE and merges with its FREE neighbours.
 * Locked. Returns the FREE block it is now part of.
 */
static struct block *block_free_locked(struct accel_transient_pool *p,
				       struct block *b)
{
	struct chunk *c = b->chunk;

	if (b->state == BLOCK_PENDING)
		pending_remove(p, b);
	tag_free(b->tag, b->tag_count);
	b->tag = NULL;
	b->tag_count = 0;
	c->busy -= b->size;
	p->stats.reserved -= b->size;
	if (b->next && b->next->state == BLOCK_FREE) {
		free_remove(c, b->next);
		b->size += b->next->size;
		block_unlink(p, b->next);
	}
	if (b->prev && b->prev->state == BLOCK_FREE) {
		struct block *prev = b->prev;

		free_remove(c, prev);
		prev->size += b->size;
		block_unlink(p, b);
		b = prev;
	}
	free_insert(c, b);
	return b;
}

/*
 * PENDING blocks whose tags are reached become FREE: from the oldest on,
 * up to the first not reached (@all: every one). Locked.
 */
static void reap_locked(struct accel_transient_pool *p, bool all)
{
	struct block *b = p->pending_head, *next;

	for (; b; b = next) {
		next = b->lnext;
		if (tag_reached(b))
			block_free_locked(p, b);
		else if (!all)
			return;
	}
}

/* A chunk has every property asked for (its own may be more). */
static bool chunk_serves(const struct chunk *c, uint32_t memory_type)
{
	return (c->memory_type & memory_type) == memory_type;
}

/*
 * The smallest FREE block of @memory_type with @size bytes, looking in
 * @size's class, else taking the first of the next class not empty (any
 * of it is larger). Locked.
 */
static struct block *best_fit_locked(struct accel_transient_pool *p,
				     uint32_t memory_type, uint64_t size)
{
	unsigned int k = size_class(size);
	struct block *best = NULL;

	for (struct chunk *c = p->chunks; c; c = c->next) {
		uint64_t above;

		if (!chunk_serves(c, memory_type) || c->size - c->busy < size)
			continue;
		for (struct block *b = c->free[k]; b; b = b->lnext)
			if (b->size >= size && (!best || b->size < best->size))
				best = b;
		above = k + 1 < CLASSES ? c->classes >> (k + 1) : 0;
		if (above) {
			struct block *b = c->free[k + 1 + __builtin_ctzll(above)];

			if (!best || b->size < best->size)
				best = b;
		}
	}
	return best;
}

static void chunk_free(struct accel_transient_pool *p, struct chunk *c)
{
	struct block *b, *next;

	for (b = c->blocks; b; b = next) {
		next = b->next;
		tag_free(b->tag, b->tag_count);
		free(b);
	}
	p->stats.committed -= c->size;
	accel_buffer_release(c->buffer); /* weak: no device reference */
	free(c);
}

/* Frees the chunks no block is in (after reap_locked()). Locked. */
static void trim_locked(struct accel_transient_pool *p)
{
	struct chunk **at = &p->chunks;

	while (*at) {
		struct chunk *c = *at;

		if (c->busy) {
			at = &c->next;
			continue;
		}
		*at = c->next;
		chunk_free(p, c);
	}
}

/*
 * A new chunk of @memory_type holding at least @size bytes: 0, -EAGAIN
 * (over the capacity; no message) or -errno with the message set.
 */
static int chunk_add_locked(struct accel_transient_pool *p, uint32_t memory_type,
			    uint64_t size, const char *fn)
{
	accel_device_t *d = p->device;
	uint64_t room = p->stats.capacity - p->stats.committed;
	uint64_t want = p->stats.capacity < POOL_CHUNK_MAX ?
			p->stats.capacity : POOL_CHUNK_MAX;
	accel_buffer_params_t params = {
		.memory_type = memory_type,
		.usage = ACCEL_BUFFER_USAGE_ALL,
	};
	struct chunk *c;
	struct block *b;
	int err;

	if (want < size)
		want = size;
	if (want > room)
		want = room & ~(POOL_ALIGN - 1);
	if (want < size)
		return -EAGAIN;
	c = calloc(1, sizeof(*c));
	b = block_new(p);
	if (!c || !b) {
		free(c);
		free(b);
		return accel_fail(ENOMEM, "%s: out of memory", fn);
	}
	err = d->ops->buffer_allocate(d, &params, want, &c->buffer);
	if (err) {
		free(c);
		free(b);
		return err;
	}
	/* The pool's chunks must not keep the device alive: see above. */
	c->buffer->weak_device = true;
	(void)accel_ref_put(&d->ref); /* the caller holds one: not the last */
	c->memory_type = memory_type;
	c->size = want;
	b->chunk = c;
	b->size = want;
	c->blocks = b;
	free_insert(c, b);
	c->next = p->chunks;
	p->chunks = c;
	p->stats.committed += want;
	if (p->stats.committed > p->stats.committed_peak)
		p->stats.committed_peak = p->stats.committed;
	return 0;
}

/*
 * @b, FREE or PENDING, becomes LIVE; a FREE one keeps @size bytes and
 * leaves the rest FREE. 0 or -ENOMEM (nothing changed). Locked.
 */
static int take_locked(struct accel_transient_pool *p, struct block *b,
		       uint64_t size)
{
	struct chunk *c = b->chunk;

	if (b->state == BLOCK_PENDING) {
		pending_remove(p, b); /* its tag goes to the caller */
		b->state = BLOCK_LIVE;
		return 0;
	}
	if (b->size > size) {
		struct block *rest = block_new(p);

		if (!rest)
			return -ENOMEM;
		free_remove(c, b);
		rest->chunk = c;
		rest->offset = b->offset + size;
		rest->size = b->size - size;
		rest->prev = b;
		rest->next = b->next;
		if (b->next)
			b->next->prev = rest;
		b->next = rest;
		b->size = size;
		free_insert(c, rest);
	} else {
		free_remove(c, b);
	}
	b->state = BLOCK_LIVE;
	c->busy += b->size;
	p->stats.reserved += b->size;
	if (p->stats.reserved > p->stats.reserved_peak)
		p->stats.reserved_peak = p->stats.reserved;
	return 0;
}

/*
 * The shortest run of adjacent blocks, none LIVE, of @memory_type holding
 * @size bytes: its first block, its last in *@last. Locked.
 */
static struct block *best_run_locked(struct accel_transient_pool *p,
				     uint32_t memory_type, uint64_t size,
				     struct block **last)
{
	struct block *best = NULL;
	uint64_t best_total = UINT64_MAX;

	for (struct chunk *c = p->chunks; c; c = c->next) {
		if (!chunk_serves(c, memory_type))
			continue;
		for (struct block *first = c->blocks; first; first = first->next) {
			struct block *b = first;
			uint64_t total = 0;

			for (; b && b->state != BLOCK_LIVE; b = b->next) {
				total += b->size;
				if (total >= size)
					break;
			}
			if (b && b->state != BLOCK_LIVE && total < best_total) {
				best = first;
				best_total = total;
				*last = b;
			}
		}
	}
	return best;
}

/* Adds @pt to @tag (one point per semaphore: the highest value). */
static void tag_add(struct accel_sched_point *tag, uint32_t *count,
		    struct accel_sched_point pt)
{
	for (uint32_t i = 0; i < *count; i++)
		if (tag[i].sem == pt.sem) {
			if (pt.value > tag[i].value)
				tag[i].value = pt.value;
			accel_semaphore_release(pt.sem);
			return;
		}
	tag[(*count)++] = pt;
}

/*
 * The run @first..@last becomes one PENDING block whose tag is all of
 * theirs (its FREE blocks count as reserved from now on). 0, or -ENOMEM
 * with nothing changed. Locked.
 */
static int merge_run_locked(struct accel_transient_pool *p, struct block *first,
			    struct block *last)
{
	struct chunk *c = first->chunk;
	struct accel_sched_point *tag;
	uint32_t n = 0, count = 0;
	uint64_t add = 0;
	struct block *b, *next, *end = last->next;

	for (b = first; b != end; b = b->next)
		n += b->tag_count;
	tag = malloc((n ? n : 1) * sizeof(*tag));
	if (!tag)
		return -ENOMEM;
	for (b = first; b != end; b = next) {
		next = b->next;
		for (uint32_t i = 0; i < b->tag_count; i++)
			tag_add(tag, &count, b->tag[i]);
		free(b->tag);
		b->tag = NULL;
		b->tag_count = 0;
		if (b->state == BLOCK_PENDING) {
			pending_remove(p, b);
		} else {
			free_remove(c, b);
			add += b->size;
		}
		if (b != first) {
			first->size += b->size;
			block_unlink(p, b);
		}
	}
	c->busy += add;
	p->stats.reserved += add;
	if (p->stats.reserved > p->stats.reserved_peak)
		p->stats.reserved_peak = p->stats.reserved;
	first->tag = tag;
	first->tag_count = count;
	pending_insert(p, first);
	return 0;
}

static void header_push(struct accel_transient_pool *p,
			struct transient_buffer *t)
{
	struct transient_buffer *head = atomic_load_explicit(&p->headers,
							     memory_order_relaxed);

	do {
		t->next_free = head;
	} while (!atomic_compare_exchange_weak_explicit(&p->headers, &head, t,
							memory_order_release,
							memory_order_relaxed));
}

/* A cached header, or NULL. Locked: the only popper. */
static struct transient_buffer *header_pop_locked(struct accel_transient_pool *p)
{
	struct transient_buffer *head = atomic_load_explicit(&p->headers,
							     memory_order_acquire);

	while (head && !atomic_compare_exchange_weak_explicit(&p->headers, &head,
							      head->next_free,
							      memory_order_acquire,
							      memory_order_acquire))
		;
	return head;
}

/*
 * A LIVE block of @size bytes (aligned) of @memory_type into *@out; when
 * it was PENDING, its tag in *@tag and *@tag_count (the caller's to wait
 * for; the block keeps it, see struct block), which only a caller that
 * @may_wait (an alloca with signals to order after it) is given; a cached
 * header of a released buffer into *@header, or NULL. 0 or -errno with
 * the message set.
 */
static int reserve(struct accel_transient_pool *p, uint32_t memory_type,
		   uint64_t size, bool may_wait, struct block **out,
		   struct accel_sched_point **tag, uint32_t *tag_count,
		   struct transient_buffer **header, const char *fn)
{
	struct block *b;
	int err = 0;

	pthread_mutex_lock(&p->lock);
	*header = header_pop_locked(p);
	if (p->pending > PENDING_REAP)
		reap_locked(p, false);
	b = best_fit_locked(p, memory_type, size);
	if (!b && p->pending) {
		reap_locked(p, true);
		b = best_fit_locked(p, memory_type, size);
	}
	if (!b) {
		err = chunk_add_locked(p, memory_type, size, fn);
		if (err == -EAGAIN) {
			trim_locked(p);
			err = chunk_add_locked(p, memory_type, size, fn);
		}
		if (!err)
			b = best_fit_locked(p, memory_type, size);
	}
	if (!b && err == -EAGAIN && p->pending && may_wait) {
		struct block *last = NULL;

		/* Memory that is free once earlier work ended: wait for it. */
		b = best_run_locked(p, memory_type, size, &last);
		if (b)
			err = b == last ? 0 : merge_run_locked(p, b, last);
	}
	*tag = NULL;
	*tag_count = 0;
	if (b && !err) {
		if (b->state == BLOCK_PENDING) {
			*tag = b->tag;
			*tag_count = b->tag_count;
		}
		err = take_locked(p, b, size); /* a PENDING one: never fails */
	}
	if (err == -EAGAIN && !may_wait && p->pending)
		accel_fail(EAGAIN,
			"%s: the transient pool of %s has no free range of %" PRIu64 " bytes now, and an alloca without signals cannot wait for the ranges deallocated on waits not reached yet: pass signals (and have the work that uses the buffer wait for them), or try again once those waits are reached",
			fn, p->device->uri, size);
	else if (err == -EAGAIN)
		accel_fail(EAGAIN,
			"%s: the transient pool of %s has no free range of %" PRIu64 " bytes now: %" PRIu64 " of its %" PRIu64 " bytes are in buffers not deallocated yet (or split into smaller ranges); dealloca some and try again, or raise ACCEL_TRANSIENT_POOL_BYTES",
			fn, p->device->uri, size, p->stats.reserved,
			p->stats.capacity);
	else if (err == -ENOMEM && b)
		accel_fail(ENOMEM, "%s: out of memory", fn);
	pthread_mutex_unlock(&p->lock);
	*out = err ? NULL : b;
	return err;
}

/*
 * @b, LIVE, goes back: FREE, or PENDING on @tag (taken) and on what is
 * not reached yet of the tag it kept from its alloca (struct block). @tag
 * has room for b->tag_count more points. Locked.
 */
static void give_back_locked(struct accel_transient_pool *p, struct block *b,
			     struct accel_sched_point *tag, uint32_t tag_count)
{
	for (uint32_t i = 0; i < b->tag_count; i++) {
		if (point_reached(&b->tag[i]))
			accel_semaphore_release(b->tag[i].sem);
		else
			tag_add(tag, &tag_count, b->tag[i]);
	}
	free(b->tag);
	b->tag = NULL;
	b->tag_count = 0;
	if (!tag_count) {
		free(tag);
		block_free_locked(p, b);
		return;
	}
	b->tag = tag;
	b->tag_count = tag_count;
	pending_insert(p, b);
}

static void transient_buffer_destroy(accel_buffer_t *buf)
{
	struct transient_buffer *t = (struct transient_buffer *)buf;
	struct accel_transient_pool *p = t->pool;
	accel_device_t *d = buf->device;

	if (t->block) {
		/*
		 * Never deallocated: nothing of its own uses it any more, but
		 * the work of the buffer before it may, until the tag its
		 * block kept from the alloca is reached.
		 */
		struct block *b = t->block;

		pthread_mutex_lock(&p->lock);
		if (b->tag_count && !tag_reached(b))
			pending_insert(p, b);
		else
			block_free_locked(p, b);
		pthread_mutex_unlock(&p->lock);
	}
	/*
	 * The header goes to the pool for the next alloca, then the device
	 * reference (accel_buffer_fini()): the last one frees the pool, and
	 * the header with it.
	 */
	header_push(p, t);
	accel_device_release(d);
}

static const struct accel_buffer_ops transient_buffer_ops = {
	.destroy = transient_buffer_destroy,
};

/* @waits followed by @tag, in @sems and @values (count returned). */
static accel_semaphore_list_t join_waits(const accel_semaphore_list_t *waits,
					 const struct accel_sched_point *tag,
					 uint32_t tag_count,
					 accel_semaphore_t **sems,
					 uint64_t *values)
{
	uint32_t n = 0;

	for (uint32_t i = 0; waits && i < waits->count; i++, n++) {
		sems[n] = waits->semaphores[i];
		values[n] = waits->values[i];
	}
	for (uint32_t i = 0; i < tag_count; i++, n++) {
		sems[n] = tag[i].sem;
		values[n] = tag[i].value;
	}
	return (accel_semaphore_list_t){ .count = n, .semaphores = sems,
					 .values = values };
}

/* Every point of @waits is reached now, none failed. */
static bool waits_reached(const accel_semaphore_list_t *waits)
{
	for (uint32_t i = 0; waits && i < waits->count; i++) {
		accel_semaphore_t *sem = waits->semaphores[i];
		uint64_t value = 0;
		int error = 0;

		sem->scheduler->ops->sem_query(sem, &value, &error);
		if (error || value < waits->values[i])
			return false;
	}
	return true;
}

/*
 * Signals @signals from the host, as a barrier would once run: a point not
 * above its semaphore's value fails it with -EINVAL (its failure message
 * says so), a failed semaphore stays as it is. The call that signals
 * succeeds: the thread's message is left as it was.
 */
static void signal_now(const accel_semaphore_list_t *signals, const char *fn)
{
	char saved[ACCEL_ERROR_MAX];
	bool refused = false;

	accel_error_save(saved);
	for (uint32_t i = 0; i < signals->count; i++) {
		accel_semaphore_t *sem = signals->semaphores[i];
		const struct accel_scheduler_ops *ops = sem->scheduler->ops;
		char msg[ACCEL_FAILURE_MAX];
		uint64_t value = 0;
		int error = 0;

		if (ops->sem_signal(sem, signals->values[i], fn) == 0)
			continue;
		refused = true;
		ops->sem_query(sem, &value, &error);
		if (error)
			continue;
		accel_strfmt(msg, sizeof(msg),
			     "%s could not signal %" PRIu64 ": the semaphore is already at %" PRIu64 " (a timeline never moves back)",
			     fn, signals->values[i], value);
		ops->sem_fail(sem, -EINVAL, msg);
	}
	if (refused)
		accel_error_restore(saved);
}

/*
 * @signals after @waits and @tag: at once from the host when they are all
 * reached, else by a barrier on @q; nothing without signals. 0 or -errno
 * with the message set (a barrier not submitted).
 */
static int order(accel_queue_t *q, const accel_semaphore_list_t *waits,
		 const accel_semaphore_list_t *signals,
		 const struct accel_sched_point *tag, uint32_t tag_count,
		 const char *fn)
{
	uint32_t n = (waits ? waits->count : 0) + tag_count;
	accel_semaphore_t *sem_buf[8], **sems = sem_buf;
	uint64_t value_buf[8], *values = value_buf;
	accel_semaphore_list_t all;
	int err;

	if (!signals || !signals->count)
		return 0;
	if (!tag_count && waits_reached(waits)) {
		signal_now(signals, fn);
		return 0;
	}
	if (!tag_count)
		return accel_queue_submit_barrier(q, waits, signals, fn);
	if (n > ACCEL_ARRAY_SIZE(sem_buf)) {
		sems = malloc(n * sizeof(*sems));
		values = malloc(n * sizeof(*values));
		if (!sems || !values) {
			free(sems);
			free(values);
			return accel_fail(ENOMEM, "%s: out of memory", fn);
		}
	}
	all = join_waits(waits, tag, tag_count, sems, values);
	err = accel_queue_submit_barrier(q, &all, signals, fn);
	if (sems != sem_buf) {
		free(sems);
		free(values);
	}
	return err;
}

static int check_lists(accel_queue_t *q, const accel_semaphore_list_t *waits,
		       const accel_semaphore_list_t *signals, uint32_t flags,
		       const char *fn)
{
	accel_scheduler_t *s = q->device->scheduler;
	int err;

	if (flags)
		return accel_fail(EINVAL, "%s: flags 0x%x: no flags are defined; pass 0",
				  fn, flags);
	err = waits ? accel_semaphore_check_list(waits, fn, "waits", &s) : 0;
	if (!err && signals)
		err = accel_semaphore_check_list(signals, fn, "signals", &s);
	return err;
}

static int check_params(const accel_buffer_params_t *params, uint64_t size,
			const struct accel_transient_pool *p, const char *fn)
{
	if (accel_buffer_params_check(params, fn))
		return -EINVAL;
	if (size > p->stats.capacity)
		return accel_fail(ENOSPC,
			"%s: size %" PRIu64 " is above the capacity of the transient pool of %s (%" PRIu64 " bytes), so it could never fit; raise ACCEL_TRANSIENT_POOL_BYTES or allocate it with accel_allocator_allocate_buffer()",
			fn, size, p->device->uri, p->stats.capacity);
	return 0;
}

ACCEL_EXPORT int accel_queue_alloca(accel_queue_t *queue,
				    const accel_semaphore_list_t *waits,
				    const accel_semaphore_list_t *signals,
				    const accel_buffer_params_t *params,
				    uint64_t size, uint32_t flags,
				    accel_buffer_t **out)
{
	static const char fn[] = "accel_queue_alloca";
	struct accel_transient_pool *p;
	struct accel_sched_point *tag = NULL;
	struct transient_buffer *t;
	uint32_t tag_count = 0, memory_type;
	struct block *b;
	uint64_t need;
	int err;

	if (!out)
		return accel_fail(EINVAL, "%s: out is NULL", fn);
	*out = NULL;
	if (!queue || !params)
		return accel_fail(EINVAL, "%s: %s is NULL", fn,
				  queue ? "params" : "queue");
	err = check_lists(queue, waits, signals, flags, fn);
	if (err)
		return err;
	err = pool_get(queue->device, fn, &p);
	if (err)
		return err;
	err = check_params(params, size, p, fn);
	if (err)
		return err;
	need = size ? (size + POOL_ALIGN - 1) & ~(POOL_ALIGN - 1) : POOL_ALIGN;
	memory_type = params->memory_type | ACCEL_MEMORY_TYPE_DEVICE_VISIBLE;
	err = reserve(p, memory_type, need, signals && signals->count, &b,
		      &tag, &tag_count, &t, fn);
	if (!err && !t) {
		t = malloc(sizeof(*t));
		err = t ? 0 : accel_fail(ENOMEM, "%s: out of memory", fn);
	}
	if (!err)
		err = order(queue, waits, signals, tag, tag_count, fn);
	if (err) {
		if (b) { /* as it was: PENDING on its tag, or FREE */
			pthread_mutex_lock(&p->lock);
			if (tag_count)
				pending_insert(p, b);
			else
				block_free_locked(p, b);
			pthread_mutex_unlock(&p->lock);
		}
		if (t)
			header_push(p, t);
		return err;
	}
	memset(t, 0, sizeof(*t));
	accel_buffer_init(&t->base, &transient_buffer_ops, queue->device,
			  params, size);
	t->pool = p;
	t->block = b;
	t->base.root_offset = b->offset;
	t->base.address = b->chunk->buffer->address + b->offset;
	t->base.host = b->chunk->buffer->host ?
		       (uint8_t *)b->chunk->buffer->host + b->offset : NULL;
	t->base.transient = &t->base;
	*out = &t->base;
	return 0;
}

/*
 * @waits not reached now, retained, into *@tag, with room for @extra more
 * points; 0 or -ENOMEM.
 */
static int make_tag(const accel_semaphore_list_t *waits, uint32_t extra,
		    struct accel_sched_point **tag, uint32_t *count,
		    const char *fn)
{
	uint32_t n = 0, want = (waits ? waits->count : 0) + extra;

	*tag = NULL;
	*count = 0;
	if (!want)
		return 0;
	*tag = malloc(want * sizeof(**tag));
	if (!*tag)
		return accel_fail(ENOMEM, "%s: out of memory", fn);
	for (uint32_t i = 0; waits && i < waits->count; i++) {
		struct accel_sched_point pt = {
			.sem = waits->semaphores[i],
			.value = waits->values[i],
		};

		if (point_reached(&pt))
			continue;
		accel_semaphore_retain(pt.sem);
		(*tag)[n++] = pt;
	}
	*count = n;
	return 0;
}

ACCEL_EXPORT int accel_queue_dealloca(accel_queue_t *queue,
				      const accel_semaphore_list_t *waits,
				      const accel_semaphore_list_t *signals,
				      accel_buffer_t *buffer, uint32_t flags)
{
	static const char fn[] = "accel_queue_dealloca";
	struct accel_sched_point *tag;
	struct transient_buffer *t;
	struct accel_transient_pool *p;
	uint32_t tag_count;
	struct block *b;
	int err;

	if (!queue || !buffer)
		return accel_fail(EINVAL, "%s: %s is NULL", fn,
				  queue ? "buffer" : "queue");
	if (buffer->transient != buffer)
		return accel_fail(EINVAL,
			"%s: the buffer is not one of accel_queue_alloca()'s%s; release it with accel_buffer_release()",
			fn, buffer->transient ? " (it is a subspan of one: dealloca that one)" : "");
	if (buffer->device != queue->device)
		return accel_fail(EXDEV,
			"%s: the buffer is of device %s, but the queue of %s%s",
			fn, buffer->device->uri, queue->device->uri,
			accel_device_twin(buffer->device, queue->device));
	err = check_lists(queue, waits, signals, flags, fn);
	if (err)
		return err;
	if (atomic_exchange(&buffer->returned, true))
		return accel_buffer_fail_returned(fn, "buffer");
	/*
	 * Ours to return now: the block, LIVE, is this buffer's alone, and
	 * so is the tag it kept from its alloca (struct block), which the
	 * tag made here takes in too.
	 */
	t = (struct transient_buffer *)buffer;
	p = t->pool;
	b = t->block;
	err = make_tag(waits, b->tag_count, &tag, &tag_count, fn);
	if (!err)
		err = order(queue, waits, signals, NULL, 0, fn);
	if (err) {
		atomic_store(&buffer->returned, false);
		tag_free(tag, tag_count);
		return err;
	}
	pthread_mutex_lock(&p->lock);
	t->block = NULL;
	give_back_locked(p, b, tag, tag_count);
	pthread_mutex_unlock(&p->lock);
	return 0;
}

ACCEL_EXPORT int accel_device_transient_pool_stats(accel_device_t *device,
						   accel_transient_pool_stats_t *out)
{
	static const char fn[] = "accel_device_transient_pool_stats";
	struct accel_transient_pool *p;
	uint64_t capacity;

	if (!device || !out)
		return accel_fail(EINVAL, "%s: %s is NULL", fn,
				  device ? "out" : "device");
	p = atomic_load(&device->transient);
	if (!p) {
		if (pool_capacity(fn, &capacity))
			return -EINVAL;
		memset(out, 0, sizeof(*out));
		out->capacity = capacity;
		return 0;
	}
	pthread_mutex_lock(&p->lock);
	*out = p->stats;
	pthread_mutex_unlock(&p->lock);
	return 0;
}

void accel_transient_pool_destroy(accel_device_t *d)
{
	struct accel_transient_pool *p = atomic_load(&d->transient);

	if (!p)
		return;
	/* No buffer of it is left: each held a reference to @d. */
	while (p->chunks) {
		struct chunk *c = p->chunks;

		p->chunks = c->next;
		chunk_free(p, c);
	}
	while (p->spare) {
		struct block *b = p->spare;

		p->spare = b->next;
		free(b);
	}
	for (struct transient_buffer *t = atomic_load(&p->headers), *next; t; t = next) {
		next = t->next_free;
		free(t);
	}
	pthread_mutex_destroy(&p->lock);
	free(p);
	atomic_store(&d->transient, NULL);
}
