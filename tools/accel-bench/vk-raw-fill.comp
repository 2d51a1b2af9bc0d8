// SPDX-License-Identifier: MIT
//
// accel-bench vulkan: the raw Vulkan baseline's kernel. Fills 4 bytes per
// invocation of the buffer whose address the host wrote into the table
// (its "binding table": one address, rewritten before each submission).
#version 460
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require

layout(local_size_x = 64) in;

layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer table_t {
	uint64_t target;
};

layout(buffer_reference, std430, buffer_reference_align = 4) buffer u32s {
	uint v[];
};

layout(push_constant, std430) uniform push_t {
	uint64_t table;
	uint value;
} pc;

void main()
{
	u32s(table_t(pc.table).target).v[gl_GlobalInvocationID.x] = pc.value;
}
