// SPDX-License-Identifier: MIT
/*
 * The cpu executable of the examples (accel/cpu_executable.h): the kernels
 * of the scripts in examples/scripts/ and of the image pipeline
 * (examples/pipeline.c).
 *
 * 1-D kernels take workgroups of 256 elements along x; the image kernels
 * take tiles of 64 x 4 pixels, with the image's width and height as their
 * first two constants, and clamp reads at the borders.
 */
#include <stdint.h>
#include <string.h>

#include <accel/cpu_executable.h>

#define WG 256
#define TILE_W 64
#define TILE_H 4

/* The elements [*b, *e) of this workgroup among @n. */
static void span(const struct accel_cpu_dispatch *d, uint64_t n, uint64_t *b,
		 uint64_t *e)
{
	*b = (uint64_t)d->workgroup_id[0] * WG;
	*e = *b + WG < n ? *b + WG : n;
}

/* bindings: x, y (f32[]); constants: a (f32). y = a * x + y. */
static void saxpy(const struct accel_cpu_dispatch *d)
{
	const float *x = d->bindings[0];
	float *y = d->bindings[1], a;
	uint64_t b, e;

	memcpy(&a, &d->constants[0], sizeof(a));
	span(d, d->binding_lengths[1] / 4, &b, &e);
	for (uint64_t i = b; i < e; i++)
		y[i] = a * x[i] + y[i];
}

/* bindings: a, b, out (f32[]). out = a + b. */
static void add_f32(const struct accel_cpu_dispatch *d)
{
	const float *a = d->bindings[0], *bb = d->bindings[1];
	float *out = d->bindings[2];
	uint64_t b, e;

	span(d, d->binding_lengths[2] / 4, &b, &e);
	for (uint64_t i = b; i < e; i++)
		out[i] = a[i] + bb[i];
}

/*
 * bindings: n (u32[1]), count (u32[3]). Writes the workgroup count that
 * covers n elements: (ceil(n / 256), 1, 1); the dispatch-indirect after
 * the next barrier reads it.
 */
static void groups_for(const struct accel_cpu_dispatch *d)
{
	const uint32_t *n = d->bindings[0];
	uint32_t *count = d->bindings[1];

	count[0] = (n[0] + WG - 1) / WG;
	count[1] = 1;
	count[2] = 1;
}

/* bindings: x (f32[]); constants: s (f32). x = x * s. */
static void scale_f32(const struct accel_cpu_dispatch *d)
{
	float *x = d->bindings[0], s;
	uint64_t b, e;

	memcpy(&s, &d->constants[0], sizeof(s));
	span(d, d->binding_lengths[0] / 4, &b, &e);
	for (uint64_t i = b; i < e; i++)
		x[i] *= s;
}

/* ---- the image pipeline: u32 pixels, tiles of 64 x 4 ------------------- */

static uint32_t at(const uint32_t *img, int32_t w, int32_t h, int32_t x, int32_t y)
{
	x = x < 0 ? 0 : x >= w ? w - 1 : x;
	y = y < 0 ? 0 : y >= h ? h - 1 : y;
	return img[(int64_t)y * w + x];
}

/* Calls @px for every pixel of this workgroup's tile inside the image. */
#define FOR_TILE(d, w, h, x, y)                                              \
	for (int32_t y = (int32_t)(d)->workgroup_id[1] * TILE_H,             \
		     y##_end = y + TILE_H; y < y##_end && y < (h); y++)      \
		for (int32_t x = (int32_t)(d)->workgroup_id[0] * TILE_W,     \
			     x##_end = x + TILE_W; x < x##_end && x < (w); x++)

/* bindings: in, out (u32[w*h]); constants: w, h. 3x3 box blur. */
static void blur3x3(const struct accel_cpu_dispatch *d)
{
	const uint32_t *in = d->bindings[0];
	uint32_t *out = d->bindings[1];
	int32_t w = (int32_t)d->constants[0], h = (int32_t)d->constants[1];

	FOR_TILE(d, w, h, x, y) {
		const uint32_t *c = &in[(int64_t)y * w + x];
		uint32_t s = 0;

		if (x > 0 && y > 0 && x < w - 1 && y < h - 1) { /* no clamping */
			s = c[-w - 1] + c[-w] + c[-w + 1] + c[-1] + c[0] + c[1] +
			    c[w - 1] + c[w] + c[w + 1];
		} else {
			for (int32_t dy = -1; dy <= 1; dy++)
				for (int32_t dx = -1; dx <= 1; dx++)
					s += at(in, w, h, x + dx, y + dy);
		}
		out[(int64_t)y * w + x] = s / 9;
	}
}

/* bindings: in, out (u32[w*h]); constants: w, h. |Sobel x| + |Sobel y|. */
static void gradient(const struct accel_cpu_dispatch *d)
{
	const uint32_t *in = d->bindings[0];
	uint32_t *out = d->bindings[1];
	int32_t w = (int32_t)d->constants[0], h = (int32_t)d->constants[1];

	FOR_TILE(d, w, h, x, y) {
		const uint32_t *c = &in[(int64_t)y * w + x];

		if (x > 0 && y > 0 && x < w - 1 && y < h - 1) { /* no clamping */
			int64_t gx = (int64_t)c[-w + 1] + 2 * (int64_t)c[1] + c[w + 1] -
				     c[-w - 1] - 2 * (int64_t)c[-1] - c[w - 1];
			int64_t gy = (int64_t)c[w - 1] + 2 * (int64_t)c[w] + c[w + 1] -
				     c[-w - 1] - 2 * (int64_t)c[-w] - c[-w + 1];

			out[(int64_t)y * w + x] = (uint32_t)((gx < 0 ? -gx : gx) + (gy < 0 ? -gy : gy));
			continue;
		}
		int64_t gx = (int64_t)at(in, w, h, x + 1, y - 1) + 2 * (int64_t)at(in, w, h, x + 1, y) +
			     at(in, w, h, x + 1, y + 1) - at(in, w, h, x - 1, y - 1) -
			     2 * (int64_t)at(in, w, h, x - 1, y) - at(in, w, h, x - 1, y + 1);
		int64_t gy = (int64_t)at(in, w, h, x - 1, y + 1) + 2 * (int64_t)at(in, w, h, x, y + 1) +
			     at(in, w, h, x + 1, y + 1) - at(in, w, h, x - 1, y - 1) -
			     2 * (int64_t)at(in, w, h, x, y - 1) - at(in, w, h, x + 1, y - 1);

		out[(int64_t)y * w + x] = (uint32_t)((gx < 0 ? -gx : gx) + (gy < 0 ? -gy : gy));
	}
}

/* bindings: in, out (u32[w*h]); constants: w, h, t. out = in > t ? 255 : 0. */
static void threshold(const struct accel_cpu_dispatch *d)
{
	const uint32_t *in = d->bindings[0];
	uint32_t *out = d->bindings[1];
	int32_t w = (int32_t)d->constants[0], h = (int32_t)d->constants[1];
	uint32_t t = d->constants[2];

	FOR_TILE(d, w, h, x, y)
		out[(int64_t)y * w + x] = in[(int64_t)y * w + x] > t ? 255 : 0;
}

static const struct accel_cpu_entry entries[] = {
	{ "saxpy", 2, 1, { WG, 1, 1 }, saxpy },
	{ "add_f32", 3, 0, { WG, 1, 1 }, add_f32 },
	{ "groups_for", 2, 0, { 1, 1, 1 }, groups_for },
	{ "scale_f32", 1, 1, { WG, 1, 1 }, scale_f32 },
	{ "blur3x3", 2, 2, { TILE_W, TILE_H, 1 }, blur3x3 },
	{ "gradient", 2, 2, { TILE_W, TILE_H, 1 }, gradient },
	{ "threshold", 2, 3, { TILE_W, TILE_H, 1 }, threshold },
};

/*
 * What one workgroup costs (accel/executable.h, "Declared costs"), in the
 * order of @entries: operations, then bytes read + written. A tile is
 * TILE_W * TILE_H pixels; a 3x3 stencil reads each input pixel about once
 * (its neighbours are the neighbouring pixels' centres, in cache).
 * groups_for declares nothing: it is too small for the model to matter.
 */
#define PIXELS (TILE_W * TILE_H)
static const accel_export_cost_t costs[] = {
	{ 2 * WG, 3 * 4 * WG },    /* saxpy: an FMA; read x, y, write y */
	{ WG, 3 * 4 * WG },        /* add_f32: read a, b, write out */
	{ 0, 0 },                  /* groups_for */
	{ WG, 2 * 4 * WG },        /* scale_f32: read and write x */
	{ 10 * PIXELS, 2 * 4 * PIXELS }, /* blur3x3: 9 adds and a divide */
	{ 20 * PIXELS, 2 * 4 * PIXELS }, /* gradient: two 6-term sums, abs */
	{ PIXELS, 2 * 4 * PIXELS },      /* threshold: a compare */
};

__attribute__((visibility("default")))
const struct accel_cpu_executable accel_cpu_executable_v1 = {
	ACCEL_CPU_EXECUTABLE_ABI_VERSION, sizeof(entries) / sizeof(entries[0]), entries,
	costs,
};
