// SPDX-License-Identifier: MIT
//
// test-kernels write_count: out[0..3) = constants 0..3 (a workgroup count).
#version 460
#define ACCEL_BINDINGS 1
#include "accel.glsl"

layout(local_size_x = 1) in;

ACCEL_BUFFER(u32s, uint);

void accel_main()
{
	u32s out_count = u32s(accel_binding(0));

	out_count.v[0] = accel_constant(0);
	out_count.v[1] = accel_constant(1);
	out_count.v[2] = accel_constant(2);
}
