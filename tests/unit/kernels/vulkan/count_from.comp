// SPDX-License-Identifier: MIT
//
// cpu-kernels count_from: out = (sum[0] % 64, 1, 1), a workgroup count.
#version 460
#define ACCEL_BINDINGS 2
#include "accel.glsl"

layout(local_size_x = 1) in;

ACCEL_BUFFER(u32s, uint);

void accel_main()
{
	u32s out_count = u32s(accel_binding(1));

	out_count.v[0] = u32s(accel_binding(0)).v[0] % 64u;
	out_count.v[1] = 1u;
	out_count.v[2] = 1u;
}
