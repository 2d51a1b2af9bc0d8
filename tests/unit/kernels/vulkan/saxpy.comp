// SPDX-License-Identifier: MIT
//
// test-kernels saxpy: y = a * x + y (a: constant 0, float bits).
#version 460
#define ACCEL_BINDINGS 2
#include "accel.glsl"

layout(local_size_x = 64) in;

ACCEL_BUFFER(u32s, uint);
ACCEL_BUFFER(floats, float);

void accel_main()
{
	uint i = (gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x) * 64u +
		 gl_LocalInvocationID.x;
	floats x = floats(accel_binding(0)), y = floats(accel_binding(1));
	precise float r;

	if (uint64_t(i) >= accel_binding_length(1) / 4UL)
		return;
	r = uintBitsToFloat(accel_constant(0)) * x.v[i];
	y.v[i] = r + y.v[i];
}
