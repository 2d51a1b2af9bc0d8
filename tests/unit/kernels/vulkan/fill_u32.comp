// SPDX-License-Identifier: MIT
//
// test-kernels fill_u32 (as test-kernels.c): out[i] = constant 0.
#version 460
#define ACCEL_BINDINGS 1
#include "accel.glsl"

layout(local_size_x = 64) in;

ACCEL_BUFFER(u32s, uint);

void accel_main()
{
	uint i = (gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x) * 64u +
		 gl_LocalInvocationID.x;

	if (uint64_t(i) < accel_binding_length(0) / 4UL)
		u32s(accel_binding(0)).v[i] = accel_constant(0);
}
