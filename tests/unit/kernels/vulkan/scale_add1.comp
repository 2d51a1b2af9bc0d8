// SPDX-License-Identifier: MIT
//
// cpu-kernels scale_add1: out = a * k + 1 (k: constant 0).
#version 460
#define ACCEL_BINDINGS 2
#include "accel.glsl"

layout(local_size_x = 64) in;

ACCEL_BUFFER(u32s, uint);

void accel_main()
{
	uint i = gl_WorkGroupID.x * 64u + gl_LocalInvocationID.x;

	if (uint64_t(i) < accel_binding_length(1) / 4UL)
		u32s(accel_binding(1)).v[i] = u32s(accel_binding(0)).v[i] * accel_constant(0) + 1u;
}
