// SPDX-License-Identifier: MIT
//
// Helpers of the built-in transfer shaders: byte-granular access to
// buffers through 32-bit words. A word only partly inside the target
// range is written with atomicAnd/atomicOr on its bytes, so that commands
// of one segment that write neighbouring bytes of one word do not race.
// Buffers are allocated in multiples of 16 bytes, so reading the whole
// word around any byte of a buffer stays inside its allocation.
ACCEL_BUFFER(accel_u32s, uint);

layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer accel_one_ref {
	accel_ref r;
};

void store_masked(uint64_t word, uint value, uint mask)
{
	accel_u32s p = accel_u32s(word);

	if (mask == 0xffffffffu) {
		p.v[0] = value;
		return;
	}
	atomicAnd(p.v[0], ~mask);
	atomicOr(p.v[0], value & mask);
}

uint load_byte(uint64_t a)
{
	return (accel_u32s(a & ~3UL).v[0] >> (8u * uint(a & 3UL))) & 0xffu;
}

void store_byte(uint64_t a, uint b)
{
	uint shift = 8u * uint(a & 3UL);

	store_masked(a & ~3UL, b << shift, 0xffu << shift);
}

// The 4 bytes at @a, which need not be aligned.
uint load_word(uint64_t a)
{
	uint s = 8u * uint(a & 3UL);
	accel_u32s p = accel_u32s(a & ~3UL);

	if (s == 0u)
		return p.v[0];
	return (p.v[0] >> s) | (p.v[1] << (32u - s));
}

// Mask of the bytes of word @w inside [@a, @end).
uint byte_mask(uint64_t w, uint64_t a, uint64_t end)
{
	uint mask = 0u;

	for (uint j = 0u; j < 4u; j++)
		if (w + j >= a && w + j < end)
			mask |= 0xffu << (8u * j);
	return mask;
}

#ifdef ACCEL_TRANSFER_WG
// The grid-stride shaders (fill, copy) declare their workgroup size here,
// before anything reads it: GLSL gives gl_WorkGroupSize (1, 1, 1) to code
// that precedes the local_size declaration, which once made the stride 64
// times too short and every word written 64 times.
layout(local_size_x = ACCEL_TRANSFER_WG) in;

uint64_t invocation()
{
	return uint64_t(gl_GlobalInvocationID.x);
}

uint64_t invocations()
{
	return uint64_t(gl_NumWorkGroups.x) * uint64_t(ACCEL_TRANSFER_WG);
}

// Grid-stride steps for @words words: a 32-bit count, computed once (a
// 64-bit induction variable costs llvmpipe dearly), with a 32-bit
// division whenever the count allows (llvmpipe lowers a 64-bit one to a
// bit-serial loop).
uint steps_for(uint64_t words)
{
	uint n = gl_NumWorkGroups.x * uint(ACCEL_TRANSFER_WG);

	if (words <= uint64_t(0xffffffffu - n))
		return (uint(words) + n - 1u) / n;
	return uint((words + uint64_t(n) - 1UL) / uint64_t(n));
}
#endif
