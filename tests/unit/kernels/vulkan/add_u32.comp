// SPDX-License-Identifier: MIT
//
// test-kernels add_u32: out = a + b.
#version 460
#define ACCEL_BINDINGS 3
#include "accel.glsl"

layout(local_size_x = 64) in;

ACCEL_BUFFER(u32s, uint);

void accel_main()
{
	uint i = (gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x) * 64u +
		 gl_LocalInvocationID.x;

	if (uint64_t(i) < accel_binding_length(2) / 4UL)
		u32s(accel_binding(2)).v[i] = u32s(accel_binding(0)).v[i] + u32s(accel_binding(1)).v[i];
}
