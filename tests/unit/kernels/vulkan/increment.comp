// SPDX-License-Identifier: MIT
//
// test-kernels increment: counter[0] += 1.
#version 460
#define ACCEL_BINDINGS 1
#include "accel.glsl"

layout(local_size_x = 1) in;

ACCEL_BUFFER(u32s, uint);

void accel_main()
{
	u32s c = u32s(accel_binding(0));

	c.v[0] = c.v[0] + 1u;
}
