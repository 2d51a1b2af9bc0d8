// SPDX-License-Identifier: MIT
//
// The test kernels of test-kernels.c for the cuda (and hip) drivers: same
// entry points, same names, same order, same results; packed by
// drivers/gpu/gpupack.py (tests/unit/meson.build).
#include "accel.cuh"

static __device__ unsigned int global_x()
{
	return (blockIdx.x + blockIdx.y * gridDim.x) * blockDim.x + threadIdx.x;
}

static __device__ unsigned int linear_group()
{
	return blockIdx.x + blockIdx.y * gridDim.x + blockIdx.z * gridDim.x * gridDim.y;
}

ACCEL_KERNEL(fill_u32) // 1 binding, 1 constant, 64 threads
{
	unsigned int i = global_x();

	if (i < accel_binding_length(0) / 4)
		((unsigned int *)accel_binding(0))[i] = accel_constant(1, 0);
}

ACCEL_KERNEL(saxpy) // 2 bindings, 1 constant, 64 threads
{
	const float *x = (const float *)accel_binding(0);
	float *y = (float *)accel_binding(1);
	unsigned int i = global_x();

	if (i >= accel_binding_length(1) / 4)
		return;
	// no fused multiply-add: the same rounding as the cpu kernel
	y[i] = __fadd_rn(__fmul_rn(__uint_as_float(accel_constant(2, 0)), x[i]), y[i]);
}

ACCEL_KERNEL(add_u32) // 3 bindings, 64 threads
{
	const unsigned int *a = (const unsigned int *)accel_binding(0);
	const unsigned int *b = (const unsigned int *)accel_binding(1);
	unsigned int i = global_x();

	if (i < accel_binding_length(2) / 4)
		((unsigned int *)accel_binding(2))[i] = a[i] + b[i];
}

ACCEL_KERNEL(write_count) // 1 binding, 3 constants, 1 thread
{
	unsigned int *out = (unsigned int *)accel_binding(0);

	out[0] = accel_constant(1, 0);
	out[1] = accel_constant(1, 1);
	out[2] = accel_constant(1, 2);
}

ACCEL_KERNEL(workgroup_ids) // 1 binding, 1 thread
{
	unsigned int linear = linear_group();

	if ((unsigned long long)linear * 4 < accel_binding_length(0))
		((unsigned int *)accel_binding(0))[linear] = linear + 1;
}

ACCEL_KERNEL(increment) // 1 binding, 1 thread
{
	((unsigned int *)accel_binding(0))[0] += 1;
}
