// SPDX-License-Identifier: MIT
//
// accel.glsl - the kernel ABI of libaccel's vulkan driver.
//
// A kernel is a GLSL compute shader that defines ACCEL_BINDINGS (its
// binding count) before including this file, and a function accel_main()
// instead of main():
//
//   #version 460
//   #define ACCEL_BINDINGS 2
//   #include "accel.glsl"
//   layout(local_size_x = 64) in;
//   ACCEL_BUFFER(floats, float);
//   void accel_main() {
//       floats x = floats(accel_binding(0));
//       ...accel_binding_length(1), accel_constant(0)...
//   }
//
// Two 64-bit push constants reach the kernel: the address of its
// parameter block, and the address of the submission's exec block. The
// parameter block is the one libaccel's binding plan built at record time
// (libaccel/src/plan.h): one 24-byte ref per binding, then the 32-bit
// constants. A ref is direct (slot == ~0u: address and length are final)
// or indirect (the address is an offset into a binding-table slot's
// range, whose base and length the exec block holds for this submission
// at index `slot`: the submission's used slots, densely, in slot order; a
// length of ~0 means "to the end of the slot's range"). The exec block
// starts with a status word: when a dispatch-indirect count failed its
// check, it holds the failing command's index, and every later shader of
// the submission returns at once (main() below).
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference2 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require

#ifndef ACCEL_BINDINGS
#error "define ACCEL_BINDINGS (the kernel's binding count) before including accel.glsl"
#endif

#define ACCEL_DIRECT 0xffffffffu
#define ACCEL_WHOLE 0xffffffffffffffffUL
#define ACCEL_STATUS_OK 0xffffffffu

struct accel_ref {
	uint64_t address;
	uint64_t bytes;
	uint slot;     // index into accel_exec.slots, or ACCEL_DIRECT
	uint reserved; // the binding-table slot (host only: plan.h table_slot)
};

struct accel_slot {
	uint64_t address;
	uint64_t bytes;
};

layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer accel_refs {
	accel_ref r[];
};

layout(buffer_reference, std430, buffer_reference_align = 4) readonly buffer accel_words {
	uint w[];
};

layout(buffer_reference, std430, buffer_reference_align = 16) buffer accel_exec {
	uint status;
	uint bad[3];
	accel_slot slots[];
};

layout(push_constant, std430) uniform accel_push_block {
	uint64_t params;
	uint64_t exec;
	uint64_t arg;
	uint word;
	uint scratch;
} accel_push;

// A pointer type to an array of T in a binding: ACCEL_BUFFER(name, T).
#define ACCEL_BUFFER(name, T) \
	layout(buffer_reference, std430, buffer_reference_align = 4) buffer name { T v[]; }

// Resolves ref @r (as accel_plan_ref_resolve() does on the host).
uint64_t accel_ref_address(accel_ref r)
{
	if (r.slot == ACCEL_DIRECT)
		return r.address;
	return accel_exec(accel_push.exec).slots[r.slot].address + r.address;
}

uint64_t accel_ref_length(accel_ref r)
{
	if (r.slot == ACCEL_DIRECT || r.bytes != ACCEL_WHOLE)
		return r.bytes;
	return accel_exec(accel_push.exec).slots[r.slot].bytes - r.address;
}

// The device address of binding @i, and its length in bytes.
uint64_t accel_binding(uint i)
{
	return accel_ref_address(accel_refs(accel_push.params).r[i]);
}

uint64_t accel_binding_length(uint i)
{
	return accel_ref_length(accel_refs(accel_push.params).r[i]);
}

// The dispatch's 32-bit constant @i.
uint accel_constant(uint i)
{
	return accel_words(accel_push.params + 24UL * ACCEL_BINDINGS).w[i];
}

bool accel_aborted()
{
	return accel_exec(accel_push.exec).status != ACCEL_STATUS_OK;
}

#ifndef ACCEL_NO_MAIN
void accel_main();

void main()
{
	if (!accel_aborted())
		accel_main();
}
#endif
