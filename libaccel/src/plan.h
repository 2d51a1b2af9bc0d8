/* SPDX-License-Identifier: MIT */
/*
 * Internal: the binding plan of a command buffer (DESIGN.md section 6).
 *
 * Recording turns every command into a struct accel_cmd plus a *parameter
 * block* of resolved refs (struct accel_plan_ref: address, length) and, for
 * dispatches, the constants:
 *
 *   fill, update:       ref[0] = target
 *   copy:               ref[0] = source, ref[1] = target
 *   dispatch:           ref[0..n) = bindings, then n constants (u32)
 *   dispatch_indirect:  ref[0] = workgroup count, ref[1..n] = bindings,
 *                       then the constants
 *
 * A block whose refs are all direct is complete at record time and lives in
 * the *static* region, shared by every submission. A block with at least
 * one indirect ref lives in the *dynamic* region: the plan keeps a template
 * of it (direct refs and constants filled in) and, per slot, the list of
 * *patch sites* (where in the region a ref of that slot sits, with its
 * offset and length).
 *
 * Submitting (accel_plan_resolve()) checks the binding table against the
 * per-slot requirements accumulated while recording (usage bits, minimum
 * length, alignment) in O(slots), copies the dynamic template and scatters
 * each used slot's address into its patch sites: O(slots + patch sites +
 * size of the dynamic region), independent of the number of commands with
 * only direct refs. A driver replays the commands reading each block from
 * the static region or from the submission's dynamic copy
 * (accel_cb_exec_params()); for a GPU driver the dynamic copy is what gets
 * uploaded.
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
/* Appends @len bytes (room must be reserved); returns where they went. */
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

/* A resolved ref inside a parameter block. */
struct accel_plan_ref {
	uint64_t address;
	uint64_t length;
};

/*
 * struct accel_cmd - one recorded command.
 * @type:    enum accel_cmd_type.
 * @dynamic: its block is in the dynamic region (it has an indirect ref).
 * @params:  byte offset of its block in its region.
 */
struct accel_cmd {
	uint8_t type;
	uint8_t dynamic;
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
 * struct accel_patch_site - one indirect ref.
 * @slot:   its slot.
 * @ref:    byte offset of its struct accel_plan_ref in the dynamic region.
 * @offset: the ref's offset (added to the table entry's).
 * @length: the ref's length, or ACCEL_WHOLE_BUFFER.
 */
struct accel_patch_site {
	uint32_t slot;
	uint32_t ref;
	uint64_t offset;
	uint64_t length;
};

/*
 * struct accel_slot_req - what the commands need of one slot's table entry.
 * @used:          some command uses the slot.
 * @first_command: the first command that uses it (for messages).
 * @usage:         usage bits, OR'd.
 * @align:         the entry's offset must be a multiple (power of two).
 * @length_align:  the entry's length must be a multiple (0: any).
 * @min_length:    the entry's range must be at least this long.
 */
struct accel_slot_req {
	bool used;
	uint32_t first_command;
	uint32_t usage;
	uint32_t align;
	uint32_t length_align;
	uint64_t min_length;
};

struct accel_plan {
	struct accel_vec commands;         /* struct accel_cmd */
	struct accel_vec static_params;    /* all-direct blocks */
	struct accel_vec dynamic_template; /* blocks with an indirect ref */
	struct accel_vec data;             /* update payloads */
	struct accel_vec sites;            /* struct accel_patch_site */
	struct accel_vec slots;            /* struct accel_slot_req */
	uint32_t *slot_first;              /* [binding_count + 1], at end */
	uint32_t binding_count;            /* highest slot used + 1 */
};

void accel_plan_free(struct accel_plan *plan);

/* Groups the patch sites by slot (counting sort); at end of recording. */
int accel_plan_finish(struct accel_plan *plan);

/*
 * accel_plan_validate() - check @table against the slot requirements,
 * O(binding_count). 0, or -errno with the message set (prefixed "@caller:").
 */
int accel_plan_validate(const struct accel_plan *plan,
			const accel_device_t *device,
			const accel_binding_table_t *table, const char *caller);

/*
 * accel_plan_resolve() - a new dynamic region for a validated @table:
 * the template with every patch site's address and length scattered in.
 * Returns it (malloc'ed; NULL with *@err = -ENOMEM when that fails; NULL
 * with *@err = 0 when the region is empty).
 */
uint8_t *accel_plan_resolve(const struct accel_plan *plan,
			    const accel_binding_table_t *table, int *err);

#endif /* ACCEL_SRC_PLAN_H */
