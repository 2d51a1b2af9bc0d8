// SPDX-License-Identifier: MIT
/*
 * pipeline: the main job. An image-processing chain of three dependent
 * stages,
 *
 *	blur (3x3 box)  ->  gradient (|Sobel x| + |Sobel y|)  ->  threshold
 *
 * recorded ONCE as a REUSABLE command buffer whose buffers are all
 * binding-table slots (@0 input, @1 blurred, @2 gradient, @3 output), then
 * submitted for each of 64 input images with a new binding table each
 * time, on cpu:// through the default scheduler (the embedded one when the
 * module is not loaded). Each submission's scratch (the blurred and the
 * gradient images) is queue-ordered memory: accel_queue_alloca() before
 * it, accel_queue_dealloca() after it, from a transient pool of RING
 * images' worth, so that at most RING submissions' scratch exists at once
 * and an alloca reuses the memory of the submission RING before as soon
 * as it ended, without the host waiting. The allocas form a chain on one
 * timeline (alloca i waits for i - 1's point and signals i + 1), the
 * submissions signal another (i + 1). Every output is checked against a
 * plain C implementation of the same chain.
 *
 *	pipeline [KERNELS.so] [IMAGES]
 *
 * Prints the throughput, and the host cost of one submission (the
 * accel_queue_execute() call: validating the table and capturing its 4
 * slots, whatever the number of commands).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <accel/accel.h>

#ifndef EXAMPLE_KERNELS
#define EXAMPLE_KERNELS "example-kernels.so"
#endif

#define W 256
#define H 256
#define THRESHOLD 90
#define RING 4 /* images' scratch in the transient pool */
#define RING_BYTES "2M" /* RING * 2 images of W * H * 4 bytes */
#define SLOTS 4
#define TILE_W 64
#define TILE_H 4

struct pipeline {
	accel_device_t *dev;
	accel_queue_t *queue;
	accel_executable_t *exe;
	accel_command_buffer_t *cb;
	accel_semaphore_t *done, *mem;
	accel_buffer_t **in, **out;
	uint32_t images;
};

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int check(int err, const char *what)
{
	if (err)
		fprintf(stderr, "pipeline: %s: %s\n", what, accel_error_message());
	return err;
}

/* ---- the plain C reference ------------------------------------------------ */

static uint32_t px(const uint32_t *img, int x, int y)
{
	x = x < 0 ? 0 : x >= W ? W - 1 : x;
	y = y < 0 ? 0 : y >= H ? H - 1 : y;
	return img[y * W + x];
}

static void reference(const uint32_t *in, uint32_t *out)
{
	static uint32_t blur[W * H], grad[W * H];

	for (int y = 0; y < H; y++)
		for (int x = 0; x < W; x++) {
			uint32_t s = 0;

			for (int dy = -1; dy <= 1; dy++)
				for (int dx = -1; dx <= 1; dx++)
					s += px(in, x + dx, y + dy);
			blur[y * W + x] = s / 9;
		}
	for (int y = 0; y < H; y++)
		for (int x = 0; x < W; x++) {
			int64_t gx = (int64_t)px(blur, x + 1, y - 1) + 2 * (int64_t)px(blur, x + 1, y) +
				     px(blur, x + 1, y + 1) - px(blur, x - 1, y - 1) -
				     2 * (int64_t)px(blur, x - 1, y) - px(blur, x - 1, y + 1);
			int64_t gy = (int64_t)px(blur, x - 1, y + 1) + 2 * (int64_t)px(blur, x, y + 1) +
				     px(blur, x + 1, y + 1) - px(blur, x - 1, y - 1) -
				     2 * (int64_t)px(blur, x, y - 1) - px(blur, x + 1, y - 1);

			grad[y * W + x] = (uint32_t)((gx < 0 ? -gx : gx) + (gy < 0 ? -gy : gy));
		}
	for (int i = 0; i < W * H; i++)
		out[i] = grad[i] > THRESHOLD ? 255 : 0;
}

/* Image @k: a few discs of different brightness over a noisy ramp. */
static void make_image(uint32_t k, uint32_t *img)
{
	uint32_t seed = 2654435761u * (k + 1);

	for (int y = 0; y < H; y++)
		for (int x = 0; x < W; x++) {
			uint32_t v = (uint32_t)(x + y) / 4;

			seed = seed * 1664525u + 1013904223u;
			v += seed >> 29;
			for (uint32_t c = 0; c < 3; c++) {
				int cx = (int)((k * 37 + c * 91) % W), cy = (int)((k * 53 + c * 67) % H);
				int r = 20 + (int)((k + c) % 5) * 8;

				if ((x - cx) * (x - cx) + (y - cy) * (y - cy) < r * r)
					v += 60 + 40 * c;
			}
			img[y * W + x] = v;
		}
}

/* ---- libaccel ----------------------------------------------------------- */

static int buffer(struct pipeline *p, accel_buffer_t **out)
{
	accel_buffer_params_t params = {
		ACCEL_MEMORY_TYPE_HOST_LOCAL | ACCEL_MEMORY_TYPE_HOST_VISIBLE |
		ACCEL_MEMORY_TYPE_HOST_COHERENT,
		ACCEL_BUFFER_USAGE_DISPATCH_STORAGE | ACCEL_BUFFER_USAGE_MAPPING,
	};

	return accel_allocator_allocate_buffer(accel_device_allocator(p->dev), &params,
					       W * H * 4, out);
}

/* Records the chain once, every buffer a slot. */
static int record(struct pipeline *p)
{
	static const char *const stages[3] = { "blur3x3", "gradient", "threshold" };
	uint32_t wg[3] = { W / TILE_W, H / TILE_H, 1 };
	uint32_t consts[3] = { W, H, THRESHOLD };
	int err = accel_command_buffer_create(p->dev, ACCEL_COMMAND_BUFFER_REUSABLE,
					      SLOTS, &p->cb);

	err = err ? err : accel_command_buffer_begin(p->cb);
	for (uint32_t s = 0; s < 3 && !err; s++) {
		accel_buffer_ref_t io[2] = {
			accel_buffer_ref_indirect(s, 0, ACCEL_WHOLE_BUFFER),
			accel_buffer_ref_indirect(s + 1, 0, ACCEL_WHOLE_BUFFER),
		};
		uint32_t ordinal;

		err = accel_executable_lookup(p->exe, stages[s], &ordinal);
		if (!err && s)
			err = accel_command_buffer_barrier(p->cb);
		if (!err)
			err = accel_command_buffer_dispatch(p->cb, p->exe, ordinal, wg, consts,
							    s == 2 ? 3 : 2, io, 2);
	}
	return err ? err : accel_command_buffer_end(p->cb);
}

static int setup(struct pipeline *p, const char *kernels)
{
	int err = check(accel_device_open("cpu://", NULL, &p->dev), "opening cpu://");

	if (!err)
		err = check(accel_queue_create(p->dev, 0, &p->queue), "creating the queue");
	if (!err)
		err = check(accel_executable_load(p->dev, kernels, &p->exe), "loading the kernels");
	if (!err)
		err = check(accel_semaphore_create(accel_device_scheduler(p->dev), 0, &p->done),
			    "creating the semaphore");
	if (!err)
		err = check(accel_semaphore_create(accel_device_scheduler(p->dev), 0, &p->mem),
			    "creating the semaphore");
	p->in = calloc(p->images, sizeof(*p->in));
	p->out = calloc(p->images, sizeof(*p->out));
	if (!err && (!p->in || !p->out))
		err = check(-1, "out of memory");
	for (uint32_t i = 0; i < p->images && !err; i++) {
		void *ptr;

		err = check(buffer(p, &p->in[i]), "allocating an input");
		err = err ? err : check(buffer(p, &p->out[i]), "allocating an output");
		err = err ? err : check(accel_buffer_map(p->in[i], ACCEL_MAP_WRITE, 0,
							 ACCEL_WHOLE_BUFFER, &ptr), "mapping");
		if (!err) {
			make_image(i, ptr);
			accel_buffer_unmap(p->in[i]);
		}
	}
	return err ? err : check(record(p), "recording the command buffer");
}

static void teardown(struct pipeline *p)
{
	for (uint32_t i = 0; i < p->images; i++) {
		accel_buffer_release(p->in ? p->in[i] : NULL);
		accel_buffer_release(p->out ? p->out[i] : NULL);
	}
	free(p->in);
	free(p->out);
	accel_command_buffer_release(p->cb);
	accel_semaphore_release(p->done);
	accel_semaphore_release(p->mem);
	accel_executable_release(p->exe);
	accel_queue_release(p->queue);
	accel_device_release(p->dev);
}

/*
 * Submits image @i with its own table, its scratch (two images, one
 * buffer) from the transient pool; the submit's host time goes to *@ns.
 */
static int submit(struct pipeline *p, uint32_t i, double *ns)
{
	const accel_buffer_params_t params = {
		ACCEL_MEMORY_TYPE_DEVICE_LOCAL, ACCEL_BUFFER_USAGE_DISPATCH_STORAGE,
	};
	uint64_t prev = i, got = i + 1, done = i + 1;
	accel_semaphore_list_t after_prev = { i > 0, &p->mem, &prev };
	accel_semaphore_list_t mem = { 1, &p->mem, &got };
	accel_semaphore_list_t signals = { 1, &p->done, &done };
	accel_binding_table_t table = { SLOTS, NULL };
	accel_binding_t b[SLOTS];
	accel_buffer_t *s = NULL;
	double t0;
	int err;

	err = accel_queue_alloca(p->queue, &after_prev, &mem, &params, 2 * W * H * 4, 0, &s);
	if (check(err, "allocating scratch"))
		return err;
	b[0] = (accel_binding_t){ p->in[i], 0, ACCEL_WHOLE_BUFFER };
	b[1] = (accel_binding_t){ s, 0, W * H * 4 };
	b[2] = (accel_binding_t){ s, W * H * 4, W * H * 4 };
	b[3] = (accel_binding_t){ p->out[i], 0, ACCEL_WHOLE_BUFFER };
	table.bindings = b;
	t0 = now_ns();
	err = accel_queue_execute(p->queue, &mem, &signals, p->cb, &table, 0);
	*ns = now_ns() - t0;
	/* Back to the pool once this image's submission ended. */
	if (!err)
		err = accel_queue_dealloca(p->queue, &signals, NULL, s, 0);
	accel_buffer_release(s);
	return check(err, "submitting");
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Checks every output against the reference; returns the mismatches. */
static uint32_t verify(struct pipeline *p, double *ref_ns)
{
	static uint32_t in[W * H], want[W * H];
	uint32_t bad = 0;
	double t = 0;

	for (uint32_t i = 0; i < p->images; i++) {
		void *got;
		double t0;

		make_image(i, in);
		t0 = now_ns();
		reference(in, want);
		t += now_ns() - t0;
		if (accel_buffer_map(p->out[i], ACCEL_MAP_READ, 0, ACCEL_WHOLE_BUFFER, &got)) {
			bad++;
			continue;
		}
		if (memcmp(got, want, sizeof(want))) {
			const uint32_t *g = got;
			int k = 0;

			while (g[k] == want[k])
				k++;
			fprintf(stderr, "pipeline: image %u differs from the reference at pixel (%d, %d): %u, expected %u\n",
				i, k % W, k / W, g[k], want[k]);
			bad++;
		}
		accel_buffer_unmap(p->out[i]);
	}
	*ref_ns = t;
	return bad;
}

int main(int argc, char **argv)
{
	struct pipeline p = { .images = argc > 2 ? (uint32_t)atoi(argv[2]) : 64 };
	const char *kernels = argc > 1 ? argv[1] : EXAMPLE_KERNELS;
	double *host, t0, elapsed, ref_ns;
	uint32_t bad;
	int err;

	if (p.images < 1 || p.images > 4096) {
		fprintf(stderr, "usage: pipeline [KERNELS.so] [IMAGES (1..4096)]\n");
		return 2;
	}
	host = calloc(p.images, sizeof(*host));
	/* The scratch of RING images in flight at most (unless set). */
	setenv("ACCEL_TRANSIENT_POOL_BYTES", RING_BYTES, 0);
	err = !host || setup(&p, kernels);
	printf("pipeline: blur -> gradient -> threshold, %u images of %dx%d u32 pixels, on %s (%s scheduler)\n",
	       p.images, W, H, p.dev ? accel_device_uri(p.dev) : "?",
	       p.dev ? accel_scheduler_kind_name(accel_scheduler_kind(accel_device_scheduler(p.dev))) : "?");
	if (err) {
		teardown(&p);
		return 1;
	}
	printf("recorded once: %u commands (3 dispatches, 2 barriers) over %d binding-table slots, REUSABLE\n",
	       accel_command_buffer_command_count(p.cb), SLOTS);
	t0 = now_ns();
	for (uint32_t i = 0; i < p.images && !err; i++)
		err = submit(&p, i, &host[i]);
	if (!err)
		err = check(accel_semaphore_wait(p.done, p.images, 0, accel_deadline_after(60000000000ull)),
			    "waiting for the last image");
	elapsed = now_ns() - t0;
	if (err) {
		teardown(&p);
		return 1;
	}
	bad = verify(&p, &ref_ns);
	qsort(host, p.images, sizeof(*host), cmp_double);
	printf("%u submissions, each with a new binding table: %u of %u outputs match the C reference\n",
	       p.images, p.images - bad, p.images);
	printf("throughput: %.0f images/s, %.1f Mpixel/s (%.2f ms in all; the C reference on one thread: %.0f images/s)\n",
	       p.images / (elapsed / 1e9), (double)p.images * W * H / (elapsed / 1e3),
	       elapsed / 1e6, p.images / (ref_ns / 1e9));
	printf("host cost per submit: median %.2f us, max %.2f us (accel_queue_execute: table checked and captured, O(slots))\n",
	       host[p.images / 2] / 1e3, host[p.images - 1] / 1e3);
	printf("pipeline: %s\n", bad ? "FAILED" : "ok");
	teardown(&p);
	free(host);
	return bad ? 1 : 0;
}
