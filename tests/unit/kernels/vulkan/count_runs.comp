// SPDX-License-Identifier: MIT
//
// cpu-kernels count_runs: atomically adds 1 to out[linear workgroup id].
#version 460
#define ACCEL_BINDINGS 1
#include "accel.glsl"

layout(local_size_x = 1) in;

ACCEL_BUFFER(u32s, uint);

void accel_main()
{
	uvec3 id = gl_WorkGroupID, n = gl_NumWorkGroups;
	uint linear = id.x + id.y * n.x + id.z * n.x * n.y;

	if (uint64_t(linear) * 4UL < accel_binding_length(0))
		atomicAdd(u32s(accel_binding(0)).v[linear], 1u);
}
