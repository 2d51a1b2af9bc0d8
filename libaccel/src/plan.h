/* SPDX-License-Identifier: MIT */
/*
 * Internal: the binding plan of a command buffer (Documentation/libaccel.rst).
 *
 * Recording turns every command into a struct accel_cmd plus a *parameter
 * block* of refs (struct accel_plan_ref) and, for dispatches, the
 * constants:
 *
 *   fill, update:       ref[0] = target
 *   copy:               ref[0] = source, ref[1] = target
 *   dispatch:           ref[0..n) = bindings, then n constants (u32)
 *   dispatch_indirect:  ref[0] = workgroup count, ref[1..n] = bindings,
 *                       then the constants
 *
 * All blocks live in one region built at record time and never written
 * again: a direct ref holds its resolved address and length; an indirect
 * ref holds its slot, its offset and its length (or ACCEL_WHOLE_BUFFER).
 * Recording also accumulates, per slot, what the commands need of the
 * table entry (usage bits, minimum length, alignment).
 *
 * Ending the recording lists the slots the commands use (used_slots,
 * ascending) and points every indirect ref at its slot's place in that
 * list. Submitting checks the binding table against those requirements and
 * captures one struct accel_plan_slot (base address, length) per used
 * slot, densely, in that order: O(slots used), whatever the number of
 * commands and of refs, and whatever the highest slot number (one slot
 * used at 65,535 costs what one at 0 does); nothing of the command buffer
 * is copied. A driver resolves an indirect
 * ref when the command runs (accel_plan_ref_resolve(): one add, plus one
 * subtraction for a whole-range ref), which costs the same as reading a
 * patched address would; for a GPU driver the captured slot array is the
 * one small upload a submission makes, and kernels read their bases from
 * it. Concurrent submissions of one command buffer each have their own
 * slot array and share everything else.
 */
#ifndef ACCEL_SRC_PLAN_H
#define ACCEL_SRC_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "accel/command_buffer.h"

/* A growable array of bytes; @size and @cap in bytes. */
struct accel_vec {
	void *data;
	size_t size;
	size_t cap;
};

/* Makes room for @extra more bytes; 0 or -ENOMEM (nothing changed). */
int accel_vec_reserve(struct accel_vec *v, size_t extra);
/*
 * Appends @len bytes (room must be reserved); returns where they went:
 * NULL for 0 bytes on an array never reserved, so callers pass neither
 * that pointer nor the array's data to mem*() without checking @len.
 */
void *accel_vec_push(struct accel_vec *v, size_t len);
void accel_vec_free(struct accel_vec *v);

#define ACCEL_VEC_AT(v, type, i) (((type *)(v)->data)[i])
#define ACCEL_VEC_COUNT(v, type) ((v)->size / sizeof(type))

enum accel_cmd_type {
	ACCEL_CMD_FILL,
	ACCEL_CMD_UPDATE,
	ACCEL_CMD_COPY,
	ACCEL_CMD_DISPATCH,
	ACCEL_CMD_DISPATCH_INDIRECT,
	ACCEL_CMD_BARRIER,
};

const char *accel_cmd_type_name(enum accel_cmd_type type);

/* The name of the lowest bit of @need missing from @have. */
const char *accel_usage_missing(uint32_t have, uint32_t need);

struct accel_export;

/* accel_plan_ref.slot of a direct ref. */
#define ACCEL_PLAN_DIRECT UINT32_MAX

/*
 * struct accel_plan_ref - one ref inside a parameter block.
 * @address:    direct: the resolved address; indirect: the ref's offset
 *              into the slot's range.
 * @length:     direct: the resolved length; indirect: the ref's length or
 *              ACCEL_WHOLE_BUFFER (up to the end of the slot's range).
 * @slot:       ACCEL_PLAN_DIRECT, or the index of the ref's entry in a
 *              submission's captured slots: from the end of the recording,
 *              the slot's place in plan.used_slots (accel_plan_finish()).
 * @table_slot: indirect: the binding table slot the ref names.
 */
struct accel_plan_ref {
	uint64_t address;
	uint64_t length;
	uint32_t slot;
	uint32_t table_slot;
};

/*
 * struct accel_plan_slot - one used slot of a submission's binding table,
 * as captured at submit: the device address of the entry's first byte and
 * the length of its range. A submission has plan.used_count of them, in
 * the order of plan.used_slots.
 */
struct accel_plan_slot {
	uint64_t address;
	uint64_t length;
};

/* Resolves @ref against the submission's @slots into *@address, *@length. */
static inline void accel_plan_ref_resolve(const struct accel_plan_ref *ref,
					  const struct accel_plan_slot *slots,
					  uint64_t *address, uint64_t *length)
{
	const struct accel_plan_slot *s;

	if (ref->slot == ACCEL_PLAN_DIRECT) {
		*address = ref->address;
		*length = ref->length;
		return;
	}
	s = &slots[ref->slot];
	*address = s->address + ref->address;
	*length = ref->length == ACCEL_WHOLE_BUFFER ? s->length - ref->address :
						       ref->length;
}

/*
 * struct accel_cmd - one recorded command.
 * @type:     enum accel_cmd_type.
 * @indirect: some ref of its block is indirect.
 * @params:   byte offset of its block in plan.params.
 */
struct accel_cmd {
	uint8_t type;
	uint8_t indirect;
	uint8_t pattern_length;
	uint8_t reserved;
	uint32_t params;
	union {
		uint32_t pattern;       /* fill */
		uint64_t data;          /* update: offset of the bytes in plan.data */
		struct {
			const struct accel_export *export;
			uint32_t workgroup_count[3];
			uint16_t binding_count;
			uint16_t constant_count;
		} dispatch;
	};
};

/*
 * struct accel_slot_req - what the commands need of one slot's table entry.
 * @used:          some command uses the slot.
 * @first_command: the first command that uses it (for messages).
 * @usage:         usage bits, OR'd.
 * @align:         the entry's offset must be a multiple (power of two).
 * @length_align:  the entry's length must be a multiple (0: any).
 * @min_length:    the entry's range must be at least this long.
 * @index:         its place in plan.used_slots (at end).
 */
struct accel_slot_req {
	bool used;
	uint32_t index;
	uint32_t first_command;
	uint32_t usage;
	uint32_t align;
	uint32_t length_align;
	uint64_t min_length;
};

/*
 * struct accel_plan - what recording built.
 * @used_slots: the slots some command uses, ascending (at end).
 * @used_count: their number.
 */
struct accel_plan {
	struct accel_vec commands;         /* struct accel_cmd */
	struct accel_vec params;           /* the parameter blocks */
	struct accel_vec data;             /* update payloads */
	struct accel_vec slots;            /* struct accel_slot_req */
	uint32_t binding_count;            /* highest slot used + 1 */
	uint32_t used_count;
	uint32_t *used_slots;
};

void accel_plan_free(struct accel_plan *plan);

/*
 * accel_plan_finish() - at the end of the recording: list the used slots
 * and point each indirect ref at its slot's place in the list (@slot from
 * @table_slot, so calling it again after a failed end is harmless).
 * O(commands + highest slot), once. 0 or -ENOMEM (nothing changed).
 */
int accel_plan_finish(struct accel_plan *plan);

/*
 * accel_plan_validate() - check @table against the slot requirements,
 * O(used slots). 0, or -errno with the message set (prefixed "@caller:").
 */
int accel_plan_validate(const struct accel_plan *plan,
			const accel_device_t *device,
			const accel_binding_table_t *table, const char *caller);

/*
 * accel_plan_capture() - fill @slots (used_count entries) from a validated
 * @table: O(used slots). Cannot fail.
 */
void accel_plan_capture(const struct accel_plan *plan,
			const accel_binding_table_t *table,
			struct accel_plan_slot *slots);

#endif /* ACCEL_SRC_PLAN_H */
