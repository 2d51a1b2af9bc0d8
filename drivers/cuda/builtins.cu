// SPDX-License-Identifier: MIT
//
// The built-in kernels of the cuda and hip drivers: the transfers (fill,
// update, copy), which run as kernels so that their refs may come from
// the binding table, the scatter that resolves a submission's table
// into the parameter blocks, and the cost model's calibration kernels. Their blocks are laid out by
// drivers/gpu/gpu_program.h (struct gpu_fill_args, struct
// gpu_scatter_args, struct gpu_scatter_entry): keep the two in step.
//
// nvcc compiles this file to PTX at build time (drivers/meson.build),
// hipcc, where the build finds one, to a code object. Not run here: the
// machine this was written on has no GPU; the unit tests check the
// scatter's semantics on the CPU (gpu_program_scatter_host()).
#include "accel.cuh"

#define WHOLE 0xffffffffffffffffull

struct fill_block {
	accel_binding target;
	unsigned int pattern;        // replicated to 32 bits
	unsigned int pattern_length;
	unsigned long long reserved;
};

struct copy_block {
	accel_binding source;
	accel_binding target;
};

struct scatter_block {
	unsigned long long region;
	unsigned long long slots;
	unsigned long long entries;
	unsigned int count;
	unsigned int reserved;
};

struct scatter_slot {
	unsigned long long address;
	unsigned long long length;
};

struct scatter_entry {
	unsigned long long offset;
	unsigned long long length;
	unsigned int slot;
	unsigned int target;
};

static __device__ unsigned long long thread_index()
{
	return (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
}

static __device__ unsigned long long thread_count()
{
	return (unsigned long long)gridDim.x * blockDim.x;
}

// The target starts on a multiple of the pattern length, so byte i of
// the range is byte (i mod 4) of the replicated pattern word.
extern "C" __global__ void accel_fill(const fill_block *b)
{
	unsigned char *dst = (unsigned char *)b->target.address;
	unsigned long long n = b->target.length, words = 0;
	unsigned int word = b->pattern;

	if (((unsigned long long)dst & 3) == 0) {
		words = n / 4;
		for (unsigned long long i = thread_index(); i < words; i += thread_count())
			((unsigned int *)dst)[i] = word;
	}
	for (unsigned long long i = words * 4 + thread_index(); i < n; i += thread_count())
		dst[i] = (unsigned char)(word >> (8 * (i & 3)));
}

// Overlapping ranges (possible only through indirect refs) are moved by
// block 0 alone, a block-wide chunk at a time, in the safe direction.
static __device__ void move(unsigned char *dst, const unsigned char *src,
			    unsigned long long n)
{
	long long chunk = blockDim.x;

	if (blockIdx.x != 0)
		return;
	if (dst < src) {
		for (long long base = 0; base < (long long)n; base += chunk) {
			long long i = base + threadIdx.x;
			unsigned char v = i < (long long)n ? src[i] : 0;

			__syncthreads();
			if (i < (long long)n)
				dst[i] = v;
			__syncthreads();
		}
		return;
	}
	for (long long end = (long long)n; end > 0; end -= chunk) {
		long long i = end - 1 - threadIdx.x;
		unsigned char v = i >= 0 ? src[i] : 0;

		__syncthreads();
		if (i >= 0)
			dst[i] = v;
		__syncthreads();
	}
}

extern "C" __global__ void accel_copy(const copy_block *b)
{
	const unsigned char *src = (const unsigned char *)b->source.address;
	unsigned char *dst = (unsigned char *)b->target.address;
	unsigned long long n = b->source.length, vecs = 0;

	if (src < dst + n && dst < src + n) {
		if (src != dst)
			move(dst, src, n);
		return;
	}
	if ((((unsigned long long)src | (unsigned long long)dst) & 15) == 0) {
		vecs = n / 16;
		for (unsigned long long i = thread_index(); i < vecs; i += thread_count())
			((uint4 *)dst)[i] = ((const uint4 *)src)[i];
	}
	for (unsigned long long i = vecs * 16 + thread_index(); i < n; i += thread_count())
		dst[i] = src[i];
}

// One thread per entry: what accel_plan_ref_resolve() does on the host.
extern "C" __global__ void accel_scatter(const scatter_block *b)
{
	unsigned long long i = thread_index();
	const scatter_entry *e;
	const scatter_slot *s;
	accel_binding *out;

	if (i >= b->count)
		return;
	e = (const scatter_entry *)b->entries + i;
	s = (const scatter_slot *)b->slots + e->slot;
	out = (accel_binding *)(b->region + e->target);
	out->address = s->address + e->offset;
	out->length = e->length == WHOLE ? s->length - e->offset : e->length;
}

// The cost model's calibration kernels (libaccel/src/core.h,
// calibration_executable), called as any executable's kernels are, with
// workgroups of ACCEL_COST_CALIBRATE_WG (64) threads.
//
// Entry 0: each thread runs four chains of I fused multiply-adds (8 I
// operations) on registers. Every thread adds its result to its
// workgroup's float, so no thread's chains can be dropped as unused.
ACCEL_KERNEL(accel_calibrate_ops) // 1 binding, 1 constant
{
	const float m = 0.999f, c = 0.001f;
	float *out = (float *)accel_binding(0);
	unsigned int iter = accel_constant(1, 0);
	float x0 = (float)threadIdx.x, x1 = x0 + 1, x2 = x0 + 2, x3 = x0 + 3;

	for (unsigned int it = 0; it < iter; it++) {
		x0 = fmaf(x0, m, c);
		x1 = fmaf(x1, m, c);
		x2 = fmaf(x2, m, c);
		x3 = fmaf(x3, m, c);
	}
	if ((unsigned long long)blockIdx.x * 4 + 4 <= accel_binding_length(0))
		atomicAdd(&out[blockIdx.x], x0 + x1 + x2 + x3);
}

// Entry 1: y[i] = y[i] * 0.5 + x[i], one element per thread of a
// (x + y * width) grid: 12 bytes of memory traffic each.
ACCEL_KERNEL(accel_calibrate_stream) // 2 bindings
{
	const float *x = (const float *)accel_binding(0);
	float *y = (float *)accel_binding(1);
	unsigned long long i = ((unsigned long long)blockIdx.y * gridDim.x + blockIdx.x) *
			       blockDim.x + threadIdx.x;

	if (i < accel_binding_length(1) / 4)
		y[i] = y[i] * 0.5f + x[i];
}
