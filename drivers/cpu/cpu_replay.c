// SPDX-License-Identifier: MIT
/*
 * Replaying a command buffer on the cpu.
 *
 * The recorded commands are cut at their barriers into segments. For each
 * segment, on the executor thread, every command's refs are resolved
 * against the submission's slots (accel_plan_ref_resolve()), a
 * dispatch-indirect reads its workgroup count (so that it sees what the
 * segments before the last barrier wrote), and each command becomes a task
 * of units (cpu.h): a dispatch's workgroups, or the blocks of a fill, an
 * update or a copy. The pool runs the segment's tasks on all its workers
 * and returns when every unit is done; then the next segment is built.
 *
 * Large transfers are split into blocks of at least TRANSFER_BLOCK bytes,
 * about TRANSFER_SPLIT per worker, so that a fill or copy uses every
 * worker's share of the memory bandwidth; smaller ones are one unit. A
 * transfer of STREAM_MIN bytes or more cannot stay in the caches anyway,
 * so on x86-64 it is written with non-temporal stores (no read for
 * ownership of every destination line: about twice the bandwidth of plain
 * stores for a fill). A
 * dispatch's workgroups are claimed about DISPATCH_SPLIT chunks per worker
 * (fewer, larger chunks for dispatches of many small workgroups).
 *
 * A command that cannot run (a workgroup count read from a buffer that is
 * too large) stops the replay before its segment starts, and reports its
 * index: what came before the last barrier ran, nothing after it did.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cpu.h"
#include "src/error.h"

#if defined(__x86_64__)
#include <emmintrin.h>
#define HAVE_STREAM 1
#else
#define HAVE_STREAM 0
#endif

#define TRANSFER_BLOCK (UINT64_C(256) << 10)
#define STREAM_MIN (UINT64_C(4) << 20)
#define TRANSFER_SPLIT 2
#define DISPATCH_SPLIT 8

static void *ptr(uint64_t address)
{
	return (void *)(uintptr_t)address;
}

/* ---- units ------------------------------------------------------------ */

static void run_workgroups(const struct cpu_task *t, uint64_t begin,
			   uint64_t end)
{
	struct accel_cpu_dispatch d = t->dispatch.d;
	uint64_t xy = (uint64_t)d.workgroup_count[0] * d.workgroup_count[1];
	uint32_t *id = d.workgroup_id;

	id[2] = (uint32_t)(begin / xy);
	id[1] = (uint32_t)(begin % xy / d.workgroup_count[0]);
	id[0] = (uint32_t)(begin % d.workgroup_count[0]);
	for (uint64_t i = begin; i < end; i++) {
		t->dispatch.fn(&d);
		if (++id[0] < d.workgroup_count[0])
			continue;
		id[0] = 0;
		if (++id[1] < d.workgroup_count[1])
			continue;
		id[1] = 0;
		id[2]++;
	}
}

/* Fills [p, p + n) with the 8-byte @pattern, its byte 0 at p[0]. */
static void fill_pattern(uint8_t *p, uint64_t n, uint64_t pattern)
{
	uint64_t head = (8 - ((uintptr_t)p & 7)) & 7, *q;

	if (head > n)
		head = n;
	for (uint64_t i = 0; i < head; i++)
		p[i] = (uint8_t)(pattern >> (8 * i));
	if (head)
		pattern = pattern >> (8 * head) | pattern << (64 - 8 * head);
	p += head;
	n -= head;
	q = (uint64_t *)p;
	for (uint64_t i = 0; i < n / 8; i++)
		q[i] = pattern;
	for (uint64_t i = n & ~(uint64_t)7; i < n; i++)
		p[i] = (uint8_t)(pattern >> (8 * (i & 7)));
}

#if HAVE_STREAM
/* Bytes from @p to the next 64-byte boundary, at most @n. */
static uint64_t head_bytes(const void *p, uint64_t n)
{
	uint64_t h = (64 - ((uintptr_t)p & 63)) & 63;

	return h < n ? h : n;
}

/* fill_pattern() with non-temporal stores; @pattern's phase is @p's. */
static void stream_fill(uint8_t *p, uint64_t n, uint64_t pattern)
{
	uint64_t h = head_bytes(p, n);
	__m128i v;

	fill_pattern(p, h, pattern);
	if (h % 8)
		pattern = pattern >> (8 * (h % 8)) | pattern << (64 - 8 * (h % 8));
	p += h;
	n -= h;
	v = _mm_set1_epi64x((long long)pattern);
	for (uint64_t i = 0; i + 64 <= n; i += 64) {
		_mm_stream_si128((__m128i *)(p + i), v);
		_mm_stream_si128((__m128i *)(p + i + 16), v);
		_mm_stream_si128((__m128i *)(p + i + 32), v);
		_mm_stream_si128((__m128i *)(p + i + 48), v);
	}
	_mm_sfence();
	fill_pattern(p + (n & ~(uint64_t)63), n & 63, pattern);
}

/* memcpy() with non-temporal stores (the ranges do not overlap). */
static void stream_copy(uint8_t *dst, const uint8_t *src, uint64_t n)
{
	uint64_t h = head_bytes(dst, n);

	memcpy(dst, src, h);
	dst += h;
	src += h;
	n -= h;
	for (uint64_t i = 0; i + 64 <= n; i += 64) {
		__m128i a = _mm_loadu_si128((const __m128i *)(src + i));
		__m128i b = _mm_loadu_si128((const __m128i *)(src + i + 16));
		__m128i c = _mm_loadu_si128((const __m128i *)(src + i + 32));
		__m128i d = _mm_loadu_si128((const __m128i *)(src + i + 48));

		_mm_stream_si128((__m128i *)(dst + i), a);
		_mm_stream_si128((__m128i *)(dst + i + 16), b);
		_mm_stream_si128((__m128i *)(dst + i + 32), c);
		_mm_stream_si128((__m128i *)(dst + i + 48), d);
	}
	_mm_sfence();
	memcpy(dst + (n & ~(uint64_t)63), src + (n & ~(uint64_t)63), n & 63);
}
#endif

static void run_fill(const struct cpu_task *t, uint64_t begin, uint64_t end)
{
	uint64_t off = begin * t->fill.block;
	uint64_t n = end * t->fill.block;
	uint64_t pat = t->fill.pattern;

	if (n > t->fill.length)
		n = t->fill.length;
	n -= off;
#if HAVE_STREAM
	if (t->fill.length >= STREAM_MIN) {
		stream_fill(t->fill.p + off, n, pat); /* blocks are 8-byte multiples */
		return;
	}
#endif
	if (pat == (pat & 0xff) * UINT64_C(0x0101010101010101))
		memset(t->fill.p + off, (int)(pat & 0xff), n);
	else
		fill_pattern(t->fill.p + off, n, pat); /* blocks are 8-byte multiples */
}

static void run_copy(const struct cpu_task *t, uint64_t begin, uint64_t end)
{
	uint64_t off = begin * t->copy.block;
	uint64_t n = end * t->copy.block;

	if (n > t->copy.length)
		n = t->copy.length;
#if HAVE_STREAM
	if (t->copy.stream) {
		stream_copy(t->copy.dst + off, t->copy.src + off, n - off);
		return;
	}
#endif
	memmove(t->copy.dst + off, t->copy.src + off, n - off);
}

/* ---- building a segment ----------------------------------------------- */

struct seg {
	struct cpu_device *dev;
	struct accel_cb_exec *x;
	uint32_t count;    /* tasks */
	uint32_t nptrs;    /* bindings used in dev->ptrs / dev->lens */
	unsigned int workers;
};

static struct cpu_task *new_task(struct seg *s)
{
	struct cpu_device *dev = s->dev;
	struct cpu_task *t;

	if (s->count == dev->task_cap) {
		uint32_t cap = dev->task_cap ? dev->task_cap * 2 : 64;
		struct cpu_task *n = aligned_alloc(64, (size_t)cap * sizeof(*n));

		if (!n)
			return NULL;
		if (s->count)
			memcpy(n, dev->tasks, (size_t)s->count * sizeof(*n));
		free(dev->tasks);
		dev->tasks = n;
		dev->task_cap = cap;
	}
	t = &dev->tasks[s->count++];
	memset(t, 0, sizeof(*t));
	atomic_init(&t->next, 0);
	t->chunk = 1;
	return t;
}

/* Block size for a transfer of @n bytes: a multiple of 64, >= the minimum. */
static uint64_t transfer_block(const struct seg *s, uint64_t n)
{
	uint64_t per = n / ((uint64_t)s->workers * TRANSFER_SPLIT);

	per = (per + 4095) & ~(uint64_t)4095;
	return per < TRANSFER_BLOCK ? TRANSFER_BLOCK : per;
}

static void resolve(const struct seg *s, const struct accel_plan_ref *ref,
		    uint64_t *address, uint64_t *length)
{
	accel_plan_ref_resolve(ref, s->x->slots, address, length);
}

static void add_fill(struct seg *s, struct cpu_task *t,
		     const struct accel_cmd *cmd, const struct accel_plan_ref *refs)
{
	uint64_t a, n, pat = cmd->pattern;

	resolve(s, &refs[0], &a, &n);
	if (cmd->pattern_length == 1)
		pat &= 0xff;
	else if (cmd->pattern_length == 2)
		pat &= 0xffff;
	for (unsigned int w = cmd->pattern_length; w < 8; w *= 2)
		pat |= pat << (8 * w);
	t->run = run_fill;
	t->fill.p = ptr(a);
	t->fill.length = n;
	t->fill.pattern = pat;
	t->fill.block = transfer_block(s, n);
	t->total = (n + t->fill.block - 1) / t->fill.block;
}

static void add_copy(struct seg *s, struct cpu_task *t, const uint8_t *src,
		     uint64_t dst_address, uint64_t n)
{
	uint8_t *dst = ptr(dst_address);

	t->run = run_copy;
	t->copy.dst = dst;
	t->copy.src = src;
	t->copy.length = n;
	t->copy.block = transfer_block(s, n);
	t->copy.stream = HAVE_STREAM && n >= STREAM_MIN;
	if (src < dst + n && dst < src + n) {
		t->copy.block = n ? n : 1; /* overlapping (two slots): one memmove */
		t->copy.stream = false;
	}
	t->total = (n + t->copy.block - 1) / t->copy.block;
}

static int reserve_bindings(struct seg *s, uint32_t n)
{
	struct cpu_device *dev = s->dev;

	if (accel_vec_reserve(&dev->ptrs, n * sizeof(void *)) ||
	    accel_vec_reserve(&dev->lens, n * sizeof(uint64_t)))
		return -ENOMEM;
	dev->ptrs.size += n * sizeof(void *);
	dev->lens.size += n * sizeof(uint64_t);
	return 0;
}

static int read_count(struct seg *s, const struct accel_plan_ref *ref,
		      uint32_t count[3])
{
	uint64_t a, n;

	resolve(s, ref, &a, &n);
	memcpy(count, ptr(a), 3 * sizeof(uint32_t));
	for (int i = 0; i < 3; i++)
		if (count[i] > ACCEL_WORKGROUP_COUNT_MAX) {
			accel_strfmt(s->x->msg, s->x->msg_len,
				     "the workgroup count read from its buffer is (%u, %u, %u); each must be at most ACCEL_WORKGROUP_COUNT_MAX (%u)",
				     count[0], count[1], count[2], ACCEL_WORKGROUP_COUNT_MAX);
			return -ERANGE;
		}
	return 0;
}

static int add_dispatch(struct seg *s, struct cpu_task *t,
			const struct accel_cmd *cmd, const struct accel_plan_ref *refs)
{
	const struct accel_cpu_entry *entry = cmd->dispatch.export->fn;
	uint32_t n = cmd->dispatch.binding_count, count[3];
	struct accel_cpu_dispatch *d = &t->dispatch.d;
	uint64_t per;
	int err;

	if (cmd->type == ACCEL_CMD_DISPATCH_INDIRECT) {
		err = read_count(s, refs++, count);
		if (err)
			return err;
	} else {
		memcpy(count, cmd->dispatch.workgroup_count, sizeof(count));
	}
	if (reserve_bindings(s, n))
		return -ENOMEM;
	t->run = run_workgroups;
	t->dispatch.fn = entry->fn;
	t->dispatch.bindings = s->nptrs;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t a;

		resolve(s, &refs[i], &a, &((uint64_t *)s->dev->lens.data)[s->nptrs + i]);
		((void **)s->dev->ptrs.data)[s->nptrs + i] = ptr(a);
	}
	s->nptrs += n;
	memcpy(d->workgroup_count, count, sizeof(count));
	memcpy(d->workgroup_size, entry->workgroup_size, sizeof(d->workgroup_size));
	d->constant_count = cmd->dispatch.constant_count;
	d->binding_count = n;
	d->constants = (const uint32_t *)&refs[n];
	t->total = (uint64_t)count[0] * count[1] * count[2];
	per = t->total / ((uint64_t)s->workers * DISPATCH_SPLIT);
	t->chunk = per ? per : 1;
	return 0;
}

static int add_command(struct seg *s, const struct accel_cmd *cmd)
{
	const struct accel_plan_ref *refs =
		(const struct accel_plan_ref *)accel_cb_exec_params(s->x, cmd);
	struct cpu_task *t = new_task(s);
	uint64_t a, n, b, m;

	if (!t)
		return -ENOMEM;
	switch (cmd->type) {
	case ACCEL_CMD_FILL:
		add_fill(s, t, cmd, refs);
		return 0;
	case ACCEL_CMD_UPDATE:
		resolve(s, &refs[0], &a, &n);
		add_copy(s, t, (const uint8_t *)s->x->cb->plan.data.data + cmd->data, a, n);
		return 0;
	case ACCEL_CMD_COPY:
		resolve(s, &refs[0], &a, &n);
		resolve(s, &refs[1], &b, &m);
		add_copy(s, t, ptr(a), b, n);
		return 0;
	case ACCEL_CMD_DISPATCH:
	case ACCEL_CMD_DISPATCH_INDIRECT:
		return add_dispatch(s, t, cmd, refs);
	}
	accel_strfmt(s->x->msg, s->x->msg_len, "unknown command type %u", cmd->type);
	return -EINVAL;
}

/* Points each dispatch at its bindings, now that the scratch is complete. */
static void fix_bindings(struct seg *s)
{
	void **ptrs = s->dev->ptrs.data;
	uint64_t *lens = s->dev->lens.data;

	for (uint32_t i = 0; i < s->count; i++) {
		struct cpu_task *t = &s->dev->tasks[i];

		if (t->run != run_workgroups)
			continue;
		t->dispatch.d.bindings = ptrs + t->dispatch.bindings;
		t->dispatch.d.binding_lengths = lens + t->dispatch.bindings;
	}
}

/*
 * Builds the segment starting at command *@i and runs it; *@i ends past
 * its closing barrier. 0, or -errno with x->failed_command set.
 */
static int run_segment(struct seg *s, const struct accel_cmd *cmds, size_t n,
		       size_t *i)
{
	s->count = 0;
	s->nptrs = 0;
	s->dev->ptrs.size = 0;
	s->dev->lens.size = 0;
	for (; *i < n && cmds[*i].type != ACCEL_CMD_BARRIER; ++*i) {
		int err = add_command(s, &cmds[*i]);

		if (err) {
			if (err == -ENOMEM)
				accel_strfmt(s->x->msg, s->x->msg_len,
					     "out of memory preparing it for the worker threads");
			s->x->failed_command = (uint32_t)*i;
			return err;
		}
	}
	if (*i < n)
		++*i; /* the barrier */
	fix_bindings(s);
	cpu_pool_run(s->dev->pool, s->dev->tasks, s->count);
	return 0;
}

int accel_cpu_execute(accel_device_t *d, struct accel_cb_exec *x)
{
	struct cpu_device *dev = (struct cpu_device *)d;
	const struct accel_vec *cmds = &x->cb->plan.commands;
	size_t n = ACCEL_VEC_COUNT(cmds, struct accel_cmd), i = 0;
	struct seg s = { .dev = dev, .x = x };
	int err = 0;

	pthread_mutex_lock(&dev->lock);
	s.workers = cpu_pool_workers(dev->pool);
	while (i < n && !err)
		err = run_segment(&s, cmds->data, n, &i);
	pthread_mutex_unlock(&dev->lock);
	return err;
}
