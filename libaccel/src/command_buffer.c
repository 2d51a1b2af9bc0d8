// SPDX-License-Identifier: MIT
/*
 * Command buffers: the state machine, record-time validation, and the
 * recording of commands into the binding plan (plan.h).
 *
 * Every recording call validates all its arguments first, then reserves
 * every byte it will need (the only fallible step left), then commits; so a
 * failed call leaves the command buffer exactly as it was.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "error.h"

/* A ref after validation. */
struct ref_res {
	bool indirect;
	uint32_t slot;
	uint64_t offset;
	uint64_t length;  /* resolved for direct refs; may be WHOLE if indirect */
	uint64_t address; /* direct only */
	accel_buffer_t *buffer;
	/* the slot requirement it adds (indirect only) */
	uint32_t usage;
	uint32_t align;
	uint32_t length_align;
	uint64_t min_length;
};

/* What a command needs of one ref. */
struct ref_rule {
	const char *what;
	uint32_t usage;
	uint32_t align;
	uint64_t min_length;
	bool whole_indirect_ok;
	/* a dispatch binding: the device's binding alignment (offset only) */
	uint32_t binding_align;
};

static int check_direct(const accel_command_buffer_t *cb, const char *fn,
			uint32_t index, const accel_buffer_ref_t *ref,
			const struct ref_rule *rule, struct ref_res *out)
{
	const accel_buffer_t *b = ref->buffer;
	uint64_t len;

	if (b->device != cb->device)
		return accel_fail(EXDEV,
			"%s: command %u: %s: the buffer belongs to device %s, but the command buffer to %s%s",
			fn, index, rule->what, b->device->uri, cb->device->uri,
			accel_device_twin(b->device, cb->device));
	if (accel_buffer_returned(b)) {
		char where[64];

		accel_strfmt(where, sizeof(where), "command %u: %s", index, rule->what);
		return accel_buffer_fail_returned(fn, where);
	}
	if ((b->usage & rule->usage) != rule->usage)
		return accel_fail(EINVAL,
			"%s: command %u: %s: the buffer lacks %s; allocate it with that usage bit",
			fn, index, rule->what, accel_usage_missing(b->usage, rule->usage));
	if (ref->offset > b->size)
		return accel_fail(ERANGE,
			"%s: command %u: %s: offset %" PRIu64 " is beyond the end of the buffer (%" PRIu64 " bytes)",
			fn, index, rule->what, ref->offset, b->size);
	len = ref->length;
	if (len == ACCEL_WHOLE_BUFFER)
		len = b->size - ref->offset;
	else if (len > b->size - ref->offset)
		return accel_fail(ERANGE,
			"%s: command %u: %s: offset %" PRIu64 " + length %" PRIu64 " is outside the buffer (%" PRIu64 " bytes)",
			fn, index, rule->what, ref->offset, len, b->size);
	if (len < rule->min_length)
		return accel_fail(ERANGE,
			"%s: command %u: %s: length %" PRIu64 " is shorter than the %" PRIu64 " bytes it needs",
			fn, index, rule->what, len, rule->min_length);
	if ((b->root_offset + ref->offset) % rule->align || len % rule->align)
		return accel_fail(EINVAL,
			"%s: command %u: %s: offset %" PRIu64 " and length %" PRIu64 " must be multiples of %u",
			fn, index, rule->what, b->root_offset + ref->offset, len,
			rule->align);
	if (rule->binding_align > 1 &&
	    (b->root_offset + ref->offset) % rule->binding_align)
		return accel_fail(EINVAL,
			"%s: command %u: %s: offset %" PRIu64 " is not a multiple of %u, the binding alignment of %s (ACCEL_DEVICE_QUERY_MIN_BINDING_ALIGNMENT)",
			fn, index, rule->what, b->root_offset + ref->offset,
			rule->binding_align, cb->device->uri);
	out->indirect = false;
	out->buffer = ref->buffer;
	out->offset = ref->offset;
	out->length = len;
	out->address = b->address + ref->offset;
	return 0;
}

static int check_indirect(const accel_command_buffer_t *cb, const char *fn,
			  uint32_t index, const accel_buffer_ref_t *ref,
			  const struct ref_rule *rule, struct ref_res *out)
{
	bool whole = ref->length == ACCEL_WHOLE_BUFFER;

	if (ref->slot >= cb->binding_capacity)
		return accel_fail(ERANGE,
			"%s: command %u: %s: slot %u is not below the command buffer's binding capacity %u; create it with a larger capacity",
			fn, index, rule->what, ref->slot, cb->binding_capacity);
	if (whole && !rule->whole_indirect_ok)
		return accel_fail(EINVAL,
			"%s: command %u: %s: an indirect ref needs an explicit length here, not ACCEL_WHOLE_BUFFER",
			fn, index, rule->what);
	if (!whole && ref->length > UINT64_MAX - ref->offset)
		return accel_fail(ERANGE,
			"%s: command %u: %s: offset %" PRIu64 " + length %" PRIu64 " overflows; no slot's range reaches that far, use a smaller offset",
			fn, index, rule->what, ref->offset, ref->length);
	/* The slot must hold offset + what the command reads: no wrap. */
	if (whole && rule->min_length > UINT64_MAX - ref->offset)
		return accel_fail(ERANGE,
			"%s: command %u: %s: offset %" PRIu64 " + the %" PRIu64 " bytes it needs overflows; no slot's range reaches that far, use a smaller offset",
			fn, index, rule->what, ref->offset, rule->min_length);
	if (!whole && ref->length < rule->min_length)
		return accel_fail(ERANGE,
			"%s: command %u: %s: length %" PRIu64 " is shorter than the %" PRIu64 " bytes it needs",
			fn, index, rule->what, ref->length, rule->min_length);
	if (ref->offset % rule->align || (!whole && ref->length % rule->align))
		return accel_fail(EINVAL,
			"%s: command %u: %s: offset %" PRIu64 " and length %" PRIu64 " must be multiples of %u",
			fn, index, rule->what, ref->offset, ref->length,
			rule->align);
	if (rule->binding_align > 1 && ref->offset % rule->binding_align)
		return accel_fail(EINVAL,
			"%s: command %u: %s: offset %" PRIu64 " is not a multiple of %u, the binding alignment of %s (ACCEL_DEVICE_QUERY_MIN_BINDING_ALIGNMENT)",
			fn, index, rule->what, ref->offset, rule->binding_align,
			cb->device->uri);
	out->indirect = true;
	out->slot = ref->slot;
	out->offset = ref->offset;
	out->length = ref->length;
	out->usage = rule->usage;
	/* the slot's own offset: checked at submit (accel_plan_validate) */
	out->align = rule->align > rule->binding_align ? rule->align :
		     rule->binding_align;
	out->length_align = whole && rule->align > 1 ? rule->align : 0;
	out->min_length = ref->offset + (whole ? rule->min_length : ref->length);
	return 0;
}

static int check_ref(const accel_command_buffer_t *cb, const char *fn,
		     uint32_t index, const accel_buffer_ref_t *ref,
		     const struct ref_rule *rule, struct ref_res *out)
{
	if (ref->buffer)
		return check_direct(cb, fn, index, ref, rule, out);
	return check_indirect(cb, fn, index, ref, rule, out);
}

static int check_recording(const accel_command_buffer_t *cb, const char *fn)
{
	if (!cb)
		return accel_fail(EINVAL, "%s: cb is NULL", fn);
	if (cb->state == ACCEL_CB_RECORDING)
		return 0;
	if (cb->state == ACCEL_CB_INITIAL)
		return accel_fail(EBADFD,
			"%s: the command buffer is not recording; call accel_command_buffer_begin() first",
			fn);
	return accel_fail(EBADFD,
		"%s: the command buffer was ended; nothing can be recorded after accel_command_buffer_end()",
		fn);
}

static uint32_t next_index(const accel_command_buffer_t *cb)
{
	return (uint32_t)ACCEL_VEC_COUNT(&cb->plan.commands, struct accel_cmd);
}

/* A command about to be committed: its refs, constants and payload. */
struct rec {
	struct accel_cmd cmd;
	uint32_t ref_count;
	struct ref_res *refs;
	const uint32_t *constants;
	uint32_t constant_count;
	const void *data;
	uint64_t data_len;
	accel_executable_t *executable;
};

static size_t block_size(const struct rec *r)
{
	size_t c = (size_t)r->constant_count * sizeof(uint32_t);

	return r->ref_count * sizeof(struct accel_plan_ref) + ((c + 7) & ~(size_t)7);
}

/* Reserves everything commit() needs; the only fallible part. */
static int reserve(accel_command_buffer_t *cb, const struct rec *r,
		   const char *fn, uint32_t *slots_needed)
{
	struct accel_plan *p = &cb->plan;
	uint32_t direct = 0, max_slot = p->binding_count;
	size_t slots_have = ACCEL_VEC_COUNT(&p->slots, struct accel_slot_req);

	for (uint32_t i = 0; i < r->ref_count; i++) {
		if (!r->refs[i].indirect) {
			direct++;
			continue;
		}
		if (r->refs[i].slot + 1 > max_slot)
			max_slot = r->refs[i].slot + 1;
	}
	*slots_needed = max_slot;
	if (next_index(cb) == UINT32_MAX ||
	    p->params.size + block_size(r) > UINT32_MAX)
		return accel_fail(ENOMEM,
			"%s: the command buffer is full (%u commands, %zu bytes of parameters: the limits are 2^32-1 of each)",
			fn, next_index(cb), p->params.size);
	if (accel_vec_reserve(&p->commands, sizeof(struct accel_cmd)) ||
	    accel_vec_reserve(&p->params, block_size(r)) ||
	    accel_vec_reserve(&p->slots, (max_slot - slots_have) * sizeof(struct accel_slot_req)) ||
	    accel_vec_reserve(&p->data, r->data_len) ||
	    accel_vec_reserve(&cb->retained_buffers, direct * sizeof(void *)) ||
	    accel_vec_reserve(&cb->retained_executables, sizeof(void *)))
		return accel_fail(ENOMEM,
			"%s: out of memory recording command %u", fn, next_index(cb));
	return 0;
}

static void retain_buffer(accel_command_buffer_t *cb, accel_buffer_t *b)
{
	struct accel_vec *v = &cb->retained_buffers;
	size_t n = ACCEL_VEC_COUNT(v, accel_buffer_t *);

	if (n && ACCEL_VEC_AT(v, accel_buffer_t *, n - 1) == b)
		return; /* runs of one buffer hold one reference */
	accel_buffer_retain(b);
	*(accel_buffer_t **)accel_vec_push(v, sizeof(b)) = b;
}

static void merge_slot(struct accel_plan *p, const struct ref_res *ref,
		       uint32_t index)
{
	struct accel_slot_req *req = &ACCEL_VEC_AT(&p->slots, struct accel_slot_req, ref->slot);

	if (!req->used) {
		req->used = true;
		req->first_command = index;
		req->align = 1;
	}
	req->usage |= ref->usage;
	if (ref->align > req->align)
		req->align = ref->align; /* powers of two: the max is the lcm */
	if (ref->length_align > req->length_align)
		req->length_align = ref->length_align;
	if (ref->min_length > req->min_length)
		req->min_length = ref->min_length;
}

static int commit(accel_command_buffer_t *cb, struct rec *r, const char *fn)
{
	struct accel_plan *p = &cb->plan;
	uint32_t slots_needed, index = next_index(cb);
	struct accel_plan_ref *refs;
	size_t size;
	int err;

	err = reserve(cb, r, fn, &slots_needed);
	if (err)
		return err;
	/* The point of no return: nothing below fails. */
	size = block_size(r);
	r->cmd.params = (uint32_t)p->params.size;
	refs = accel_vec_push(&p->params, size);
	if (size) /* a barrier has no block: refs may be NULL */
		memset(refs, 0, size);
	while (ACCEL_VEC_COUNT(&p->slots, struct accel_slot_req) < slots_needed)
		memset(accel_vec_push(&p->slots, sizeof(struct accel_slot_req)), 0,
		       sizeof(struct accel_slot_req));
	p->binding_count = slots_needed;
	for (uint32_t i = 0; i < r->ref_count; i++) {
		const struct ref_res *rr = &r->refs[i];

		if (!rr->indirect) {
			refs[i].address = rr->address;
			refs[i].length = rr->length;
			refs[i].slot = ACCEL_PLAN_DIRECT;
			retain_buffer(cb, rr->buffer);
			if (rr->buffer->transient)
				cb->transient_buffers = true;
			continue;
		}
		refs[i].address = rr->offset;
		refs[i].length = rr->length;
		refs[i].slot = rr->slot; /* until end: accel_plan_finish() */
		refs[i].table_slot = rr->slot;
		r->cmd.indirect = 1;
		merge_slot(p, rr, index);
	}
	if (r->constant_count)
		memcpy(&refs[r->ref_count], r->constants,
		       r->constant_count * sizeof(uint32_t));
	if (r->data_len) {
		r->cmd.data = p->data.size;
		memcpy(accel_vec_push(&p->data, r->data_len), r->data, r->data_len);
	}
	if (r->executable) {
		accel_executable_retain(r->executable);
		*(accel_executable_t **)accel_vec_push(&cb->retained_executables,
						       sizeof(void *)) = r->executable;
	}
	*(struct accel_cmd *)accel_vec_push(&p->commands, sizeof(r->cmd)) = r->cmd;
	return 0;
}

ACCEL_EXPORT int accel_command_buffer_create(accel_device_t *device,
					     uint32_t mode,
					     uint32_t binding_capacity,
					     accel_command_buffer_t **out)
{
	accel_command_buffer_t *cb;

	if (!out)
		return accel_fail(EINVAL, "accel_command_buffer_create: out is NULL");
	*out = NULL;
	if (!device)
		return accel_fail(EINVAL, "accel_command_buffer_create: device is NULL");
	if (mode & ~ACCEL_COMMAND_BUFFER_ONE_SHOT)
		return accel_fail(EINVAL,
			"accel_command_buffer_create: mode 0x%x has unknown bits; use ACCEL_COMMAND_BUFFER_ONE_SHOT or ACCEL_COMMAND_BUFFER_REUSABLE",
			mode);
	if (binding_capacity > ACCEL_BINDING_CAPACITY_MAX)
		return accel_fail(ERANGE,
			"accel_command_buffer_create: binding_capacity %u is above ACCEL_BINDING_CAPACITY_MAX (%u)",
			binding_capacity, ACCEL_BINDING_CAPACITY_MAX);
	cb = calloc(1, sizeof(*cb));
	if (!cb)
		return accel_fail(ENOMEM, "accel_command_buffer_create: out of memory");
	accel_ref_init(&cb->ref);
	accel_device_retain(device);
	cb->device = device;
	cb->mode = mode;
	cb->binding_capacity = binding_capacity;
	cb->state = ACCEL_CB_INITIAL;
	atomic_init(&cb->submitted, false);
	*out = cb;
	return 0;
}

ACCEL_EXPORT void accel_command_buffer_retain(accel_command_buffer_t *cb)
{
	if (cb)
		accel_ref_get(&cb->ref);
}

static void cb_destroy(accel_command_buffer_t *cb)
{
	struct accel_vec *v = &cb->retained_buffers;

	for (size_t i = 0; i < ACCEL_VEC_COUNT(v, accel_buffer_t *); i++)
		accel_buffer_release(ACCEL_VEC_AT(v, accel_buffer_t *, i));
	v = &cb->retained_executables;
	for (size_t i = 0; i < ACCEL_VEC_COUNT(v, accel_executable_t *); i++)
		accel_executable_release(ACCEL_VEC_AT(v, accel_executable_t *, i));
	if (cb->device->ops->command_buffer_destroy)
		cb->device->ops->command_buffer_destroy(cb->device, cb);
	accel_vec_free(&cb->retained_buffers);
	accel_vec_free(&cb->retained_executables);
	accel_plan_free(&cb->plan);
	accel_cost_cb_free(cb);
	accel_device_release(cb->device);
	free(cb);
}

ACCEL_EXPORT void accel_command_buffer_release(accel_command_buffer_t *cb)
{
	if (cb && accel_ref_put(&cb->ref))
		cb_destroy(cb);
}

ACCEL_EXPORT int accel_command_buffer_begin(accel_command_buffer_t *cb)
{
	if (!cb)
		return accel_fail(EINVAL, "accel_command_buffer_begin: cb is NULL");
	if (cb->state == ACCEL_CB_RECORDING)
		return accel_fail(EBADFD,
			"accel_command_buffer_begin: the command buffer is already recording");
	if (cb->state == ACCEL_CB_EXECUTABLE)
		return accel_fail(EBADFD,
			"accel_command_buffer_begin: the command buffer was recorded already; command buffers are recorded once: create a new one");
	cb->state = ACCEL_CB_RECORDING;
	return 0;
}

ACCEL_EXPORT int accel_command_buffer_end(accel_command_buffer_t *cb)
{
	int err = check_recording(cb, "accel_command_buffer_end");

	if (err)
		return err;
	if (accel_plan_finish(&cb->plan))
		return accel_fail(ENOMEM, "accel_command_buffer_end: out of memory");
	if (cb->device->ops->command_buffer_end) {
		err = cb->device->ops->command_buffer_end(cb->device, cb);
		if (err) {
			free(cb->plan.used_slots); /* as it was: not ended */
			cb->plan.used_slots = NULL;
			cb->plan.used_count = 0;
			return err;
		}
	}
	cb->state = ACCEL_CB_EXECUTABLE;
	return 0;
}

ACCEL_EXPORT uint32_t
accel_command_buffer_command_count(const accel_command_buffer_t *cb)
{
	return cb ? next_index(cb) : 0;
}

ACCEL_EXPORT int accel_command_buffer_fill(accel_command_buffer_t *cb,
					   accel_buffer_ref_t target,
					   const void *pattern,
					   uint32_t pattern_length)
{
	static const char fn[] = "accel_command_buffer_fill";
	struct ref_rule rule = { "target", ACCEL_BUFFER_USAGE_TRANSFER_TARGET,
				 pattern_length, 0, true, 1 };
	struct ref_res ref;
	struct rec r = { .ref_count = 1, .refs = &ref };
	int err = check_recording(cb, fn);

	if (err)
		return err;
	if (!pattern)
		return accel_fail(EINVAL, "%s: command %u: pattern is NULL", fn, next_index(cb));
	if (pattern_length != 1 && pattern_length != 2 && pattern_length != 4)
		return accel_fail(EINVAL,
			"%s: command %u: pattern_length is %u; it must be 1, 2 or 4",
			fn, next_index(cb), pattern_length);
	err = check_ref(cb, fn, next_index(cb), &target, &rule, &ref);
	if (err)
		return err;
	r.cmd.type = ACCEL_CMD_FILL;
	r.cmd.pattern_length = (uint8_t)pattern_length;
	memcpy(&r.cmd.pattern, pattern, pattern_length);
	return commit(cb, &r, fn);
}

ACCEL_EXPORT int accel_command_buffer_update(accel_command_buffer_t *cb,
					     const void *source,
					     accel_buffer_ref_t target)
{
	static const char fn[] = "accel_command_buffer_update";
	struct ref_rule rule = { "target", ACCEL_BUFFER_USAGE_TRANSFER_TARGET,
				 1, 0, false, 1 };
	struct ref_res ref;
	struct rec r = { .ref_count = 1, .refs = &ref };
	int err = check_recording(cb, fn);

	if (err)
		return err;
	err = check_ref(cb, fn, next_index(cb), &target, &rule, &ref);
	if (err)
		return err;
	if (ref.length > ACCEL_UPDATE_MAX_SIZE)
		return accel_fail(ERANGE,
			"%s: command %u: length %" PRIu64 " is above ACCEL_UPDATE_MAX_SIZE (%" PRIu64 "); use a staging buffer and a copy",
			fn, next_index(cb), ref.length, ACCEL_UPDATE_MAX_SIZE);
	if (!source && ref.length)
		return accel_fail(EINVAL, "%s: command %u: source is NULL", fn, next_index(cb));
	r.cmd.type = ACCEL_CMD_UPDATE;
	r.data = source;
	r.data_len = ref.length;
	return commit(cb, &r, fn);
}

ACCEL_EXPORT int accel_command_buffer_copy(accel_command_buffer_t *cb,
					   accel_buffer_ref_t source,
					   accel_buffer_ref_t target)
{
	static const char fn[] = "accel_command_buffer_copy";
	struct ref_rule src_rule = { "source", ACCEL_BUFFER_USAGE_TRANSFER_SOURCE, 1, 0, false, 1 };
	struct ref_rule dst_rule = { "target", ACCEL_BUFFER_USAGE_TRANSFER_TARGET, 1, 0, false, 1 };
	struct ref_res refs[2];
	struct rec r = { .ref_count = 2, .refs = refs };
	int err = check_recording(cb, fn);

	if (err)
		return err;
	err = check_ref(cb, fn, next_index(cb), &source, &src_rule, &refs[0]);
	if (!err)
		err = check_ref(cb, fn, next_index(cb), &target, &dst_rule, &refs[1]);
	if (err)
		return err;
	if (refs[0].length != refs[1].length)
		return accel_fail(EINVAL,
			"%s: command %u: source length %" PRIu64 " differs from target length %" PRIu64 "; a copy needs equal lengths",
			fn, next_index(cb), refs[0].length, refs[1].length);
	if (!refs[0].indirect && !refs[1].indirect && refs[0].length &&
	    refs[0].address < refs[1].address + refs[1].length &&
	    refs[1].address < refs[0].address + refs[0].length)
		return accel_fail(EINVAL,
			"%s: command %u: the source and target ranges overlap; copy through a temporary buffer",
			fn, next_index(cb));
	r.cmd.type = ACCEL_CMD_COPY;
	return commit(cb, &r, fn);
}

static int check_dispatch(accel_command_buffer_t *cb, const char *fn,
			  accel_executable_t *exe, uint32_t ordinal,
			  const uint32_t *constants, uint32_t constant_count,
			  const accel_buffer_ref_t *bindings,
			  uint32_t binding_count, struct ref_res *refs)
{
	uint32_t index = next_index(cb);
	const accel_export_info_t *info;
	char what[32];
	int err;

	if (!exe)
		return accel_fail(EINVAL, "%s: command %u: executable is NULL", fn, index);
	if (exe->device != cb->device)
		return accel_fail(EXDEV,
			"%s: command %u: the executable was loaded for device %s, but the command buffer is for %s%s",
			fn, index, exe->device->uri, cb->device->uri,
			accel_device_twin(exe->device, cb->device));
	if (ordinal >= exe->export_count)
		return accel_fail(ERANGE,
			"%s: command %u: ordinal %u is not below the executable's %u entry points",
			fn, index, ordinal, exe->export_count);
	info = &exe->exports[ordinal].info;
	if (constant_count != info->constant_count)
		return accel_fail(EINVAL,
			"%s: command %u: entry point '%s' takes %u constants, but %u were given",
			fn, index, info->name, info->constant_count, constant_count);
	if (constant_count && !constants)
		return accel_fail(EINVAL, "%s: command %u: constants is NULL", fn, index);
	if (binding_count != info->binding_count)
		return accel_fail(EINVAL,
			"%s: command %u: entry point '%s' takes %u bindings, but %u were given",
			fn, index, info->name, info->binding_count, binding_count);
	if (binding_count && !bindings)
		return accel_fail(EINVAL, "%s: command %u: bindings is NULL", fn, index);
	for (uint32_t i = 0; i < binding_count; i++) {
		struct ref_rule rule = { what, ACCEL_BUFFER_USAGE_DISPATCH_STORAGE, 1, 0, true,
					 cb->device->binding_alignment };

		accel_strfmt(what, sizeof(what), "bindings[%u]", i);
		err = check_ref(cb, fn, index, &bindings[i], &rule, &refs[i]);
		if (err)
			return err;
	}
	return 0;
}

static int record_dispatch(accel_command_buffer_t *cb, const char *fn,
			   enum accel_cmd_type type, accel_executable_t *exe,
			   uint32_t ordinal, const uint32_t count[3],
			   const accel_buffer_ref_t *count_ref,
			   const uint32_t *constants, uint32_t constant_count,
			   const accel_buffer_ref_t *bindings,
			   uint32_t binding_count)
{
	struct ref_res refs[ACCEL_DISPATCH_MAX_BINDINGS + 1];
	uint32_t first = type == ACCEL_CMD_DISPATCH_INDIRECT ? 1 : 0;
	struct rec r = { .refs = refs };
	int err = check_recording(cb, fn);

	if (err)
		return err;
	if (binding_count > ACCEL_DISPATCH_MAX_BINDINGS ||
	    constant_count > ACCEL_DISPATCH_MAX_CONSTANTS)
		return accel_fail(EINVAL,
			"%s: command %u: %u bindings and %u constants; the most a dispatch takes is %u and %u",
			fn, next_index(cb), binding_count, constant_count,
			ACCEL_DISPATCH_MAX_BINDINGS, ACCEL_DISPATCH_MAX_CONSTANTS);
	err = check_dispatch(cb, fn, exe, ordinal, constants, constant_count,
			     bindings, binding_count, refs + first);
	if (err)
		return err;
	if (count_ref) {
		struct ref_rule rule = { "workgroup_count_ref",
					 ACCEL_BUFFER_USAGE_DISPATCH_INDIRECT_PARAMS,
					 4, ACCEL_DISPATCH_INDIRECT_PARAMS_SIZE, true, 1 };

		err = check_ref(cb, fn, next_index(cb), count_ref, &rule, &refs[0]);
		if (err)
			return err;
	} else {
		if (!count)
			return accel_fail(EINVAL, "%s: command %u: workgroup_count is NULL",
					  fn, next_index(cb));
		for (int d = 0; d < 3; d++)
			if (count[d] > ACCEL_WORKGROUP_COUNT_MAX)
				return accel_fail(ERANGE,
					"%s: command %u: workgroup_count[%d] is %u, above ACCEL_WORKGROUP_COUNT_MAX (%u)",
					fn, next_index(cb), d, count[d], ACCEL_WORKGROUP_COUNT_MAX);
		memcpy(r.cmd.dispatch.workgroup_count, count, sizeof(r.cmd.dispatch.workgroup_count));
	}
	r.cmd.type = (uint8_t)type;
	r.cmd.dispatch.export = &exe->exports[ordinal];
	r.cmd.dispatch.binding_count = (uint16_t)binding_count;
	r.cmd.dispatch.constant_count = (uint16_t)constant_count;
	r.ref_count = first + binding_count;
	r.constants = constants;
	r.constant_count = constant_count;
	r.executable = exe;
	return commit(cb, &r, fn);
}

ACCEL_EXPORT int accel_command_buffer_dispatch(accel_command_buffer_t *cb,
					       accel_executable_t *executable,
					       uint32_t ordinal,
					       const uint32_t workgroup_count[3],
					       const uint32_t *constants,
					       uint32_t constant_count,
					       const accel_buffer_ref_t *bindings,
					       uint32_t binding_count)
{
	return record_dispatch(cb, "accel_command_buffer_dispatch",
			       ACCEL_CMD_DISPATCH, executable, ordinal,
			       workgroup_count, NULL, constants, constant_count,
			       bindings, binding_count);
}

ACCEL_EXPORT int
accel_command_buffer_dispatch_indirect(accel_command_buffer_t *cb,
				       accel_executable_t *executable,
				       uint32_t ordinal,
				       accel_buffer_ref_t workgroup_count_ref,
				       const uint32_t *constants,
				       uint32_t constant_count,
				       const accel_buffer_ref_t *bindings,
				       uint32_t binding_count)
{
	return record_dispatch(cb, "accel_command_buffer_dispatch_indirect",
			       ACCEL_CMD_DISPATCH_INDIRECT, executable, ordinal,
			       NULL, &workgroup_count_ref, constants,
			       constant_count, bindings, binding_count);
}

ACCEL_EXPORT int accel_command_buffer_barrier(accel_command_buffer_t *cb)
{
	static const char fn[] = "accel_command_buffer_barrier";
	struct rec r = { .cmd.type = ACCEL_CMD_BARRIER };
	int err = check_recording(cb, fn);

	if (err)
		return err;
	return commit(cb, &r, fn);
}
