// SPDX-License-Identifier: MIT
//
// The built-in kernels of the cuda and hip drivers: the transfers (fill,
// update, copy), which run as kernels so that their refs may come from
// the binding table, and the scatter that resolves a submission's table
// into the parameter blocks. Their blocks are laid out by
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
