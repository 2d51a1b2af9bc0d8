// SPDX-License-Identifier: MIT
//
// test-kernels workgroup_ids: out[linear workgroup id] = id + 1.
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
		u32s(accel_binding(0)).v[linear] = linear + 1u;
}
