// SPDX-License-Identifier: MIT
//
// Built-in: the cost model's streaming kernel (libaccel/src/core.h,
// calibration_executable, entry 1). Bindings: x, y (float[]); each
// invocation reads x[i] and y[i] and writes y[i] (12 bytes), over a grid
// of (x + y * width) workgroups of 64.
#version 460
#define ACCEL_BINDINGS 2
#include "accel.glsl"

layout(local_size_x = 64) in;

ACCEL_BUFFER(floats, float);

void accel_main()
{
	uint i = (gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x) * 64u +
		 gl_LocalInvocationID.x;
	floats x = floats(accel_binding(0)), y = floats(accel_binding(1));

	if (uint64_t(i) >= accel_binding_length(1) / 4UL)
		return;
	y.v[i] = y.v[i] * 0.5 + x.v[i];
}
