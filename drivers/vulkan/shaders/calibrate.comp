// SPDX-License-Identifier: MIT
//
// Built-in: the cost model's calibration kernel (libaccel/src/core.h,
// calibration_executable). Binding 0: a float per workgroup, written;
// constant 0: the iteration count I. Each invocation runs four chains of
// I FMAs on registers (8 I operations) and the workgroup's invocation 0
// writes one result, so nothing is optimised away.
#version 460
#define ACCEL_BINDINGS 1
#include "accel.glsl"

layout(local_size_x = 64) in;

ACCEL_BUFFER(floats, float);

void accel_main()
{
	uint n = accel_constant(0);
	precise float x0 = float(gl_LocalInvocationID.x), x1 = x0 + 1.0,
		      x2 = x0 + 2.0, x3 = x0 + 3.0;
	const float m = 0.999, c = 0.001;

	for (uint i = 0u; i < n; i++) {
		x0 = fma(x0, m, c);
		x1 = fma(x1, m, c);
		x2 = fma(x2, m, c);
		x3 = fma(x3, m, c);
	}
	if (gl_LocalInvocationID.x == 0u &&
	    uint64_t(gl_WorkGroupID.x + 1u) * 4UL <= accel_binding_length(0))
		floats(accel_binding(0)).v[gl_WorkGroupID.x] = x0 + x1 + x2 + x3;
}
