// SPDX-License-Identifier: MIT
//
// The kernels of cpu-kernels.c (test-cpu.c's replay cases) for the cuda
// (and hip) drivers: same names, same order, same results.
#include "accel.cuh"

ACCEL_KERNEL(count_runs) // 1 binding, 1 thread
{
	unsigned int linear = blockIdx.x + blockIdx.y * gridDim.x +
			      blockIdx.z * gridDim.x * gridDim.y;

	if ((unsigned long long)linear * 4 < accel_binding_length(0))
		atomicAdd((unsigned int *)accel_binding(0) + linear, 1u);
}

ACCEL_KERNEL(scale_add1) // 2 bindings, 1 constant, 64 threads
{
	const unsigned int *in = (const unsigned int *)accel_binding(0);
	unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < accel_binding_length(1) / 4)
		((unsigned int *)accel_binding(1))[i] = in[i] * accel_constant(2, 0) + 1;
}

ACCEL_KERNEL(count_from) // 2 bindings, 1 thread
{
	unsigned int *out = (unsigned int *)accel_binding(1);

	out[0] = ((const unsigned int *)accel_binding(0))[0] % 64;
	out[1] = 1;
	out[2] = 1;
}
