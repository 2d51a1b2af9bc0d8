// SPDX-License-Identifier: MIT
/*
 * The binding plan: growable arrays, the list of used slots, and the
 * submit-time work (validate the table, capture its used slots), both
 * O(used slots). See plan.h for the layout.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "error.h"
#include "plan.h"

int accel_vec_reserve(struct accel_vec *v, size_t extra)
{
	size_t want, cap;
	void *data;

	if (extra > SIZE_MAX - v->size)
		return -ENOMEM;
	want = v->size + extra;
	if (want <= v->cap)
		return 0;
	cap = v->cap ? v->cap : 64;
	while (cap < want)
		cap = cap > SIZE_MAX / 2 ? want : cap * 2;
	data = realloc(v->data, cap);
	if (!data)
		return -ENOMEM;
	v->data = data;
	v->cap = cap;
	return 0;
}

void *accel_vec_push(struct accel_vec *v, size_t len)
{
	void *at;

	if (!v->data)
		return NULL; /* len is 0: nothing was reserved */
	at = (uint8_t *)v->data + v->size;
	v->size += len;
	return at;
}

void accel_vec_free(struct accel_vec *v)
{
	free(v->data);
	v->data = NULL;
	v->size = v->cap = 0;
}

const char *accel_cmd_type_name(enum accel_cmd_type type)
{
	switch (type) {
	case ACCEL_CMD_FILL:
		return "fill";
	case ACCEL_CMD_UPDATE:
		return "update";
	case ACCEL_CMD_COPY:
		return "copy";
	case ACCEL_CMD_DISPATCH:
		return "dispatch";
	case ACCEL_CMD_DISPATCH_INDIRECT:
		return "dispatch_indirect";
	case ACCEL_CMD_BARRIER:
		return "barrier";
	}
	return "unknown";
}

void accel_plan_free(struct accel_plan *plan)
{
	accel_vec_free(&plan->commands);
	accel_vec_free(&plan->params);
	accel_vec_free(&plan->data);
	accel_vec_free(&plan->slots);
	free(plan->used_slots);
	plan->used_slots = NULL;
	plan->used_count = 0;
}

/* The number of refs in @cmd's parameter block. */
static uint32_t cmd_ref_count(const struct accel_cmd *cmd)
{
	switch (cmd->type) {
	case ACCEL_CMD_FILL:
	case ACCEL_CMD_UPDATE:
		return 1;
	case ACCEL_CMD_COPY:
		return 2;
	case ACCEL_CMD_DISPATCH:
		return cmd->dispatch.binding_count;
	case ACCEL_CMD_DISPATCH_INDIRECT:
		return 1 + cmd->dispatch.binding_count;
	}
	return 0;
}

/* Points the indirect refs of @cmd at their slots' places in used_slots. */
static void index_refs(struct accel_plan *plan, const struct accel_cmd *cmd)
{
	const struct accel_slot_req *reqs = plan->slots.data;
	struct accel_plan_ref *refs =
		(struct accel_plan_ref *)((uint8_t *)plan->params.data + cmd->params);

	for (uint32_t i = 0; i < cmd_ref_count(cmd); i++)
		if (refs[i].slot != ACCEL_PLAN_DIRECT)
			refs[i].slot = reqs[refs[i].table_slot].index;
}

int accel_plan_finish(struct accel_plan *plan)
{
	struct accel_slot_req *reqs = plan->slots.data;
	const struct accel_cmd *cmds = plan->commands.data;
	size_t ncmds = ACCEL_VEC_COUNT(&plan->commands, struct accel_cmd);
	uint32_t n = 0;

	plan->used_slots = malloc(((size_t)plan->binding_count + 1) * sizeof(uint32_t));
	if (!plan->used_slots)
		return -ENOMEM;
	for (uint32_t s = 0; s < plan->binding_count; s++) {
		if (!reqs[s].used)
			continue;
		reqs[s].index = n;
		plan->used_slots[n++] = s;
	}
	plan->used_count = n;
	for (size_t i = 0; i < ncmds; i++)
		if (cmds[i].indirect)
			index_refs(plan, &cmds[i]);
	return 0;
}

static const char *usage_bit_name(uint32_t bit)
{
	switch (bit) {
	case ACCEL_BUFFER_USAGE_TRANSFER_SOURCE:
		return "ACCEL_BUFFER_USAGE_TRANSFER_SOURCE";
	case ACCEL_BUFFER_USAGE_TRANSFER_TARGET:
		return "ACCEL_BUFFER_USAGE_TRANSFER_TARGET";
	case ACCEL_BUFFER_USAGE_DISPATCH_STORAGE:
		return "ACCEL_BUFFER_USAGE_DISPATCH_STORAGE";
	case ACCEL_BUFFER_USAGE_DISPATCH_INDIRECT_PARAMS:
		return "ACCEL_BUFFER_USAGE_DISPATCH_INDIRECT_PARAMS";
	case ACCEL_BUFFER_USAGE_MAPPING:
		return "ACCEL_BUFFER_USAGE_MAPPING";
	}
	return "an unknown usage bit";
}

const char *accel_usage_missing(uint32_t have, uint32_t need)
{
	uint32_t missing = need & ~have;

	return usage_bit_name(missing & -missing);
}

/* The range of table entry @b: 0 with *len set, or -ERANGE. */
static int binding_length(const accel_binding_t *b, uint64_t *len)
{
	uint64_t size = b->buffer->size;

	if (b->offset > size)
		return -ERANGE;
	if (b->length == ACCEL_WHOLE_BUFFER) {
		*len = size - b->offset;
		return 0;
	}
	if (b->length > size - b->offset)
		return -ERANGE;
	*len = b->length;
	return 0;
}

static int validate_slot(const struct accel_slot_req *req, uint32_t slot,
			 const accel_binding_t *b, const accel_device_t *device,
			 const char *caller)
{
	uint64_t len;

	if (!b->buffer)
		return accel_fail(EINVAL,
			"%s: binding table slot %u has a NULL buffer, but command %u of the command buffer uses that slot; put a buffer there",
			caller, slot, req->first_command);
	if (b->buffer->device != device)
		return accel_fail(EXDEV,
			"%s: binding table slot %u holds a buffer of device %s, but the command buffer is for device %s%s",
			caller, slot, b->buffer->device->uri, device->uri,
			accel_device_twin(b->buffer->device, device));
	if (accel_buffer_returned(b->buffer)) {
		char where[48];

		accel_strfmt(where, sizeof(where), "binding table slot %u", slot);
		return accel_buffer_fail_returned(caller, where);
	}
	if (binding_length(b, &len))
		return accel_fail(ERANGE,
			"%s: binding table slot %u: offset %" PRIu64 " + length %" PRIu64 " is outside its buffer of %" PRIu64 " bytes",
			caller, slot, b->offset, b->length, b->buffer->size);
	if ((b->buffer->usage & req->usage) != req->usage)
		return accel_fail(EINVAL,
			"%s: binding table slot %u: the buffer lacks %s, which command %u (or a later one) of the command buffer needs; allocate it with that usage bit",
			caller, slot, accel_usage_missing(b->buffer->usage, req->usage),
			req->first_command);
	if (len < req->min_length)
		return accel_fail(ERANGE,
			"%s: binding table slot %u: its range is %" PRIu64 " bytes, but the command buffer uses up to byte %" PRIu64 " of it",
			caller, slot, len, req->min_length);
	if ((b->buffer->root_offset + b->offset) % req->align)
		return accel_fail(EINVAL,
			"%s: binding table slot %u: offset %" PRIu64 " is not a multiple of %u, the alignment the command buffer needs (fill pattern, indirect count or the device's binding alignment, ACCEL_DEVICE_QUERY_MIN_BINDING_ALIGNMENT)",
			caller, slot, b->buffer->root_offset + b->offset, req->align);
	if (req->length_align && len % req->length_align)
		return accel_fail(EINVAL,
			"%s: binding table slot %u: length %" PRIu64 " is not a multiple of %u, as a whole-buffer fill through this slot needs",
			caller, slot, len, req->length_align);
	return 0;
}

int accel_plan_validate(const struct accel_plan *plan,
			const accel_device_t *device,
			const accel_binding_table_t *table, const char *caller)
{
	const struct accel_slot_req *reqs = plan->slots.data;
	uint32_t count = table ? table->count : 0;
	int err;

	if (plan->binding_count == 0)
		return 0;
	if (count < plan->binding_count)
		return accel_fail(ERANGE,
			"%s: the binding table has %u entries, but the command buffer uses slots up to %u; pass a table of at least %u entries",
			caller, count, plan->binding_count - 1, plan->binding_count);
	if (!table->bindings)
		return accel_fail(EINVAL,
			"%s: table->bindings is NULL but table->count is %u",
			caller, count);
	for (uint32_t i = 0; i < plan->used_count; i++) {
		uint32_t s = plan->used_slots[i];

		err = validate_slot(&reqs[s], s, &table->bindings[s], device,
				    caller);
		if (err)
			return err;
	}
	return 0;
}

void accel_plan_capture(const struct accel_plan *plan,
			const accel_binding_table_t *table,
			struct accel_plan_slot *slots)
{
	for (uint32_t i = 0; i < plan->used_count; i++) {
		uint32_t s = plan->used_slots[i];
		const accel_binding_t *b = &table->bindings[s];
		uint64_t len = 0;

		binding_length(b, &len); /* validated: cannot fail */
		slots[i].address = b->buffer->address + b->offset;
		slots[i].length = len;
	}
}
