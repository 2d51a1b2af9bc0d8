// SPDX-License-Identifier: MIT
//
// Built-in: fill. params: the target ref; word: the pattern replicated to
// 4 bytes (the target's offset is a multiple of the pattern length, so
// byte j of every aligned word takes pattern byte j % length).
#version 460
#define ACCEL_BINDINGS 0
#include "accel.glsl"
#define ACCEL_TRANSFER_WG 64 /* TRANSFER_WG of vk_command_buffer.c */
#include "transfer.glsl"

/*
 * The target range, resolved once per workgroup: llvmpipe (lavapipe)
 * turns every buffer-device-address load into one scalar load per lane,
 * so resolving the ref in each invocation (about six loads) cost several
 * times the fill's own stores. Invocation 0 resolves it; the rest read it
 * from shared memory after the barrier (uniform control flow: main() runs
 * accel_main() for the whole dispatch or not at all).
 */
shared uint64_t fill_range[2];

void accel_main()
{
	if (gl_LocalInvocationIndex == 0u) {
		accel_ref r = accel_one_ref(accel_push.params).r;
		fill_range[0] = accel_ref_address(r);
		fill_range[1] = fill_range[0] + accel_ref_length(r);
	}
	barrier();
	uint64_t a = fill_range[0], end = fill_range[1];
	uint64_t first = a & ~3UL, words = (((end + 3UL) & ~3UL) - first) / 4UL;

	uint steps = steps_for(words);

	if (((a | end) & 3UL) == 0UL) { /* whole words: plain stores */
		for (uint k = 0u; k < steps; k++) {
			uint64_t i = invocation() + uint64_t(k) * invocations();

			if (i >= words)
				break;
			accel_u32s(first + 4UL * i).v[0] = accel_push.word;
		}
		return;
	}
	for (uint k = 0u; k < steps; k++) {
		uint64_t i = invocation() + uint64_t(k) * invocations();
		uint64_t w = first + 4UL * i;

		if (i >= words)
			break;
		uint mask = w >= a && w + 4UL <= end ? 0xffffffffu : byte_mask(w, a, end);

		store_masked(w, accel_push.word, mask);
	}
}
