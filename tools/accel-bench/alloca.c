// SPDX-License-Identifier: MIT
/*
 * accel-bench: queue-ordered memory against the allocator.
 *
 *	alloca  alloca.vs_allocate: host time of accel_queue_alloca() +
 *	        accel_queue_dealloca() of sizes 256 B, 512 B, ... 1 MiB in
 *	        turn (no semaphores: the pool's own cost, a lock and a
 *	        best-fit search), over accel_allocator_allocate_buffer() +
 *	        accel_buffer_release() of the same sizes, on cpu://
 *	        (aligned_alloc()). alloca.vs_allocate.signalled: the same
 *	        alloca signalling a point and the dealloca waiting for it
 *	        (one barrier job on the queue per alloca: the queue-ordered
 *	        path), over the same baseline. The .vulkan figures: the same
 *	        on vulkan://0 (vkAllocateMemory + vkCreateBuffer per buffer),
 *	        where a Vulkan device opens (the dynamic build); the .cuda
 *	        ones on cuda://0 (cuMemAlloc per buffer), where a GPU is.
 *
 * Rounds of the two interleave; each is OPS operations (-n / 10) and the
 * median round is kept.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <accel/accel.h>

#include "bench.h"

#define SIZES 13 /* 256 B << 0 .. 12: up to 1 MiB */

struct alloca_bench {
	accel_scheduler_t *sched;
	accel_device_t *dev;
	accel_queue_t *queue;
	accel_semaphore_t *sem;
	uint64_t value;
	long ops;
};

static const accel_buffer_params_t params = {
	ACCEL_MEMORY_TYPE_DEVICE_LOCAL, ACCEL_BUFFER_USAGE_ALL,
};

static int ab_open(struct alloca_bench *a, const char *uri)
{
	accel_scheduler_options_t so;
	int err;

	accel_scheduler_options_init(&so);
	so.kind = ACCEL_SCHEDULER_EMBEDDED;
	err = accel_scheduler_open(&so, &a->sched);
	if (!err)
		err = accel_device_open(uri, a->sched, &a->dev);
	if (!err)
		err = accel_queue_create(a->dev, 0, &a->queue);
	if (!err)
		err = accel_semaphore_create(a->sched, 0, &a->sem);
	return err;
}

static void ab_close(struct alloca_bench *a)
{
	accel_semaphore_release(a->sem);
	accel_queue_release(a->queue);
	accel_device_release(a->dev);
	accel_scheduler_release(a->sched);
}

static void fail(const char *what)
{
	fprintf(stderr, "accel-bench alloca: %s: %s\n", what, accel_error_message());
	exit(1);
}

static double allocate_round(struct alloca_bench *a)
{
	accel_allocator_t *al = accel_device_allocator(a->dev);
	double t0 = now_ns();

	for (long i = 0; i < a->ops; i++) {
		accel_buffer_t *b = NULL;

		if (accel_allocator_allocate_buffer(al, &params,
						    UINT64_C(256) << (i % SIZES), &b))
			fail("accel_allocator_allocate_buffer");
		accel_buffer_release(b);
	}
	return (now_ns() - t0) / (double)a->ops;
}

static double alloca_round(struct alloca_bench *a, int signalled)
{
	double t0 = now_ns(), dt;

	for (long i = 0; i < a->ops; i++) {
		accel_semaphore_t *s[1] = { a->sem };
		uint64_t v[1] = { a->value + 1 };
		accel_semaphore_list_t point = { 1, s, v };
		accel_buffer_t *b = NULL;

		if (accel_queue_alloca(a->queue, NULL, signalled ? &point : NULL,
				       &params, UINT64_C(256) << (i % SIZES), 0, &b))
			fail("accel_queue_alloca");
		if (accel_queue_dealloca(a->queue, signalled ? &point : NULL,
					 NULL, b, 0))
			fail("accel_queue_dealloca");
		accel_buffer_release(b);
		a->value += signalled;
	}
	dt = (now_ns() - t0) / (double)a->ops;
	/* Untimed: the barriers' signals, so that rounds do not overlap. */
	if (signalled &&
	    accel_semaphore_wait(a->sem, a->value, 0, ACCEL_DEADLINE_INFINITE))
		fail("waiting for the allocas");
	return dt;
}

/* Medians into @m: alloca + dealloca, allocate + release, signalled. */
static void measure(const struct opts *o, struct alloca_bench *a, double m[3])
{
	double *v = calloc(3 * (size_t)o->rounds, sizeof(double));

	if (!v)
		fail("out of memory");
	alloca_round(a, 0); /* warm: the pool's chunk, the executor */
	alloca_round(a, 1);
	allocate_round(a);
	for (int r = 0; r < o->rounds; r++) {
		v[0 * o->rounds + r] = alloca_round(a, 0);
		v[1 * o->rounds + r] = allocate_round(a);
		v[2 * o->rounds + r] = alloca_round(a, 1);
	}
	for (int i = 0; i < 3; i++)
		m[i] = median(v + i * o->rounds, o->rounds);
	free(v);
}

int bench_alloca(const struct opts *o)
{
	static const char *const uris[] = { "cpu://", "vulkan://0", "cuda://0" };
	static const char *const suffix[] = { "", ".vulkan", ".cuda" };
	static const char *const key[] = { "cpu", "vulkan", "cuda" };
	enum { N = sizeof(uris) / sizeof(uris[0]) };
	double m[N][3];
	int ran[N] = { 0 }, first = 1;
	char name[64];

	for (size_t i = 0; i < N; i++) {
		struct alloca_bench a = { .ops = o->ops / 10 < SIZES ? SIZES : o->ops / 10 };
		int err = ab_open(&a, uris[i]);

		if (err && i == 0)
			fail(uris[i]);
		if (err)
			fprintf(notes, "# alloca on %s: skipped: %s\n", uris[i],
				accel_error_message());
		else
			measure(o, &a, m[i]);
		ran[i] = !err;
		ab_close(&a);
		if (!ran[i] || o->json)
			continue;
		fprintf(notes, "# alloca on %s: alloca+dealloca %.0f ns, signalled %.0f ns; allocate+release %.0f ns (sizes 256 B .. 1 MiB)\n",
			uris[i], m[i][0], m[i][2], m[i][1]);
	}
	if (o->json) {
		printf("{\"bench\": \"alloca\"");
		for (size_t i = 0; i < N; i++)
			if (ran[i])
				printf(", \"%s\": {\"alloca_dealloca_ns\": %.0f, "
				       "\"allocate_release_ns\": %.0f, "
				       "\"alloca_dealloca_signalled_ns\": %.0f}",
				       key[i], m[i][0], m[i][1], m[i][2]);
		printf(", \"metrics\": {");
	}
	for (size_t i = 0; i < N; i++) {
		if (!ran[i])
			continue;
		snprintf(name, sizeof(name), "alloca.vs_allocate%s", suffix[i]);
		metric(o, name, m[i][0] / m[i][1], &first);
		snprintf(name, sizeof(name), "alloca.vs_allocate.signalled%s", suffix[i]);
		metric(o, name, m[i][2] / m[i][1], &first);
	}
	if (o->json)
		printf("}}\n");
	return 0;
}
