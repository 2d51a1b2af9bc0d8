// SPDX-License-Identifier: MIT
//
// Built-in: copy (and update, whose source is the payload in the program
// buffer). params: the source ref; arg: the target ref; word: the mode.
// Lengths are equal (checked at record). Ranges are copied in parallel,
// one target word per step. Direct refs never overlap (checked at record);
// a copy with an indirect ref may (two slots on one buffer), which only
// the submission tells, so it runs as two dispatches with a barrier
// between: PASS1 copies to the target, or, when the ranges overlap, to
// the instance's scratch space (in its exec block); PASS2 then copies the
// scratch to the target when they overlapped. So the result is memmove's.
#version 460
#define ACCEL_BINDINGS 0
#include "accel.glsl"
#define ACCEL_TRANSFER_WG 64 /* TRANSFER_WG of vk_command_buffer.c */
#include "transfer.glsl"

#define COPY_DIRECT 0u
#define COPY_PASS1 1u
#define COPY_PASS2 2u

// Copies [src, src + n) to [dst, dst + n), in parallel: one target word
// per step (the ranges must not overlap).
void copy_parallel(uint64_t src, uint64_t dst, uint64_t n)
{
	uint64_t end = dst + n;
	uint64_t first = dst & ~3UL, words = (((end + 3UL) & ~3UL) - first) / 4UL;

	uint steps = steps_for(words);

	if (((src | dst | n) & 3UL) == 0UL) { /* whole words: plain copies */
		for (uint k = 0u; k < steps; k++) {
			uint64_t i = invocation() + uint64_t(k) * invocations();

			if (i >= words)
				break;
			accel_u32s(dst + 4UL * i).v[0] = accel_u32s(src + 4UL * i).v[0];
		}
		return;
	}
	for (uint k = 0u; k < steps; k++) {
		uint64_t i = invocation() + uint64_t(k) * invocations();
		uint64_t w = first + 4UL * i;

		if (i >= words)
			break;
		uint value = 0u, mask;

		if (w >= dst && w + 4UL <= end) {
			accel_u32s(w).v[0] = load_word(src + (w - dst));
			continue;
		}
		mask = byte_mask(w, dst, end);
		for (uint j = 0u; j < 4u; j++)
			if ((mask & (0xffu << (8u * j))) != 0u)
				value |= load_byte(src + (w + j - dst)) << (8u * j);
		store_masked(w, value, mask);
	}
}

shared uint64_t copy_refs[3]; /* see fill.comp */

void accel_main()
{
	if (gl_LocalInvocationIndex == 0u) {
		accel_ref rd = accel_one_ref(accel_push.arg).r;

		copy_refs[0] = accel_ref_address(accel_one_ref(accel_push.params).r);
		copy_refs[1] = accel_ref_address(rd);
		copy_refs[2] = accel_ref_length(rd);
	}
	barrier();
	uint64_t src = copy_refs[0], dst = copy_refs[1], n = copy_refs[2];
	uint64_t scratch = accel_push.exec + uint64_t(accel_push.scratch);
	bool overlap = src < dst + n && dst < src + n;

	if (n == 0UL || src == dst)
		return;
	if (accel_push.word == COPY_DIRECT || !overlap) {
		if (accel_push.word != COPY_PASS2)
			copy_parallel(src, dst, n);
	} else if (accel_push.word == COPY_PASS1) {
		copy_parallel(src, scratch, n);
	} else {
		copy_parallel(scratch, dst, n);
	}
}
