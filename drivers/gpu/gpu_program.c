// SPDX-License-Identifier: MIT
/*
 * The cuda/hip translation: plan -> program (gpu_program.h has the model).
 * Pure C: no driver call, no device; the unit tests run all of it.
 *
 * Two passes over the commands: the first sizes the parameter blocks and
 * finds the segments (commands between barriers) that hold a
 * dispatch-indirect; the second writes the blocks into the image, the
 * nodes with their dependencies, the steps and the scatter entries, which
 * are then grouped by slot (a counting sort, so stable: command order
 * inside a slot).
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "accel/command_buffer.h"
#include "src/core.h"
#include "src/error.h"
#include "gpu_program.h"

#define NONE UINT32_MAX

static uint64_t align16(uint64_t v)
{
	return (v + 15) & ~(uint64_t)15;
}

static const struct accel_plan_ref *refs_of(const struct accel_plan *plan,
					    const struct accel_cmd *cmd)
{
	return (const struct accel_plan_ref *)((const uint8_t *)plan->params.data +
					       cmd->params);
}

/* Whether @cmd does any work, i.e. gets a node. */
static bool command_runs(const struct accel_plan *plan,
			 const struct accel_cmd *cmd)
{
	const uint32_t *wg = cmd->dispatch.workgroup_count;

	switch (cmd->type) {
	case ACCEL_CMD_FILL:
	case ACCEL_CMD_UPDATE:
	case ACCEL_CMD_COPY:
		return refs_of(plan, cmd)[0].length != 0;
	case ACCEL_CMD_DISPATCH:
		return wg[0] && wg[1] && wg[2];
	case ACCEL_CMD_DISPATCH_INDIRECT:
		return true;
	}
	return false;
}

static uint32_t block_size(const struct accel_cmd *cmd)
{
	switch (cmd->type) {
	case ACCEL_CMD_DISPATCH:
	case ACCEL_CMD_DISPATCH_INDIRECT:
		return (uint32_t)align16(sizeof(struct gpu_binding) * cmd->dispatch.binding_count +
					 sizeof(uint32_t) * cmd->dispatch.constant_count);
	case ACCEL_CMD_FILL:
		return sizeof(struct gpu_binding) + sizeof(struct gpu_fill_args);
	default:
		return 2 * sizeof(struct gpu_binding);
	}
}

static uint32_t transfer_groups(uint64_t length)
{
	uint64_t per = (uint64_t)GPU_BUILTIN_THREADS * GPU_BUILTIN_BYTES_PER_THREAD;
	uint64_t groups;

	if (length == ACCEL_WHOLE_BUFFER)
		return GPU_BUILTIN_MAX_GROUPS;
	groups = (length + per - 1) / per;
	if (groups == 0)
		return 1;
	return groups > GPU_BUILTIN_MAX_GROUPS ? GPU_BUILTIN_MAX_GROUPS : (uint32_t)groups;
}

static uint32_t pattern_word(const struct accel_cmd *cmd)
{
	if (cmd->pattern_length == 1)
		return (cmd->pattern & 0xff) * 0x01010101u;
	if (cmd->pattern_length == 2)
		return (cmd->pattern & 0xffff) * 0x00010001u;
	return cmd->pattern;
}

/* ---- the builder -------------------------------------------------------- */

struct builder {
	const struct accel_plan *plan;
	struct gpu_program *p;
	const struct accel_cmd *cmds;
	uint32_t ncmds;
	bool *seg_indirect;       /* per command: its segment has a dispatch-indirect */
	uint32_t blocks_size;     /* the first pass's total */
	bool scatter;             /* some kernel reads an indirect ref */
	uint32_t next_block;
	struct accel_vec nodes;   /* struct gpu_node */
	struct accel_vec deps;    /* uint32_t */
	struct accel_vec steps;   /* struct gpu_step */
	struct accel_vec entries; /* struct gpu_scatter_entry, command order */
	struct accel_vec relocs;  /* uint32_t */
	struct accel_vec seg;     /* uint32_t: nodes of the open segment */
	struct accel_vec closed;  /* uint32_t: the last closed segment's nodes */
	uint32_t frontier;        /* what the next node depends on, or NONE */
	uint32_t part;
	uint32_t part_nodes;
};

#define PUSH(vec, type, value) \
	(accel_vec_reserve((vec), sizeof(type)) ? -ENOMEM : \
	 (*(type *)accel_vec_push((vec), sizeof(type)) = (value), 0))

/* The first pass: block sizes, scatter need, segments with indirects. */
static int first_pass(struct builder *b)
{
	uint32_t seg_start = 0;
	bool indirect = false;
	uint64_t size = 0;

	b->seg_indirect = calloc(b->ncmds + 1, sizeof(bool));
	if (!b->seg_indirect)
		return -ENOMEM;
	for (uint32_t i = 0; i <= b->ncmds; i++) {
		const struct accel_cmd *cmd = i < b->ncmds ? &b->cmds[i] : NULL;

		if (!cmd || cmd->type == ACCEL_CMD_BARRIER) {
			for (uint32_t j = seg_start; j < i; j++)
				b->seg_indirect[j] = indirect;
			seg_start = i + 1;
			indirect = false;
			continue;
		}
		if (!command_runs(b->plan, cmd))
			continue;
		size += block_size(cmd);
		if (cmd->type == ACCEL_CMD_DISPATCH_INDIRECT) {
			indirect = true;
			/* ref 0 is the count, read by the host */
			for (uint32_t r = 1; r <= cmd->dispatch.binding_count; r++)
				b->scatter |= refs_of(b->plan, cmd)[r].slot != ACCEL_PLAN_DIRECT;
		} else {
			b->scatter |= cmd->indirect;
		}
	}
	if (b->scatter)
		size += sizeof(struct gpu_scatter_args);
	if (size > UINT32_MAX / 2)
		return -E2BIG;
	b->blocks_size = (uint32_t)size;
	return 0;
}

static int layout(struct builder *b)
{
	struct gpu_layout *l = &b->p->layout;
	uint64_t data, slots, entries, size;

	data = align16(b->blocks_size);
	slots = align16(data + b->plan->data.size);
	entries = align16(slots + sizeof(struct accel_plan_slot) * (uint64_t)b->plan->used_count);
	/* an upper bound: every ref of every command indirect */
	size = align16(entries + sizeof(struct gpu_scatter_entry) *
		       (b->plan->params.size / sizeof(struct accel_plan_ref)));
	if (size > UINT32_MAX)
		return -E2BIG;
	l->data = (uint32_t)data;
	l->slots = (uint32_t)slots;
	l->entries = (uint32_t)entries;
	l->size = (uint32_t)size; /* trimmed once the entries are known */
	b->p->image = calloc(1, size ? size : 1);
	return b->p->image ? 0 : -ENOMEM;
}

/* Closes the open segment at a barrier. */
static int barrier(struct builder *b)
{
	uint32_t n = (uint32_t)ACCEL_VEC_COUNT(&b->seg, uint32_t);
	struct accel_vec tmp;

	if (n == 1)
		b->frontier = ACCEL_VEC_AT(&b->seg, uint32_t, 0);
	if (n <= 1) {
		b->seg.size = 0;
		return 0;
	}
	/* several: a join node, made when something depends on it */
	tmp = b->closed;
	b->closed = b->seg;
	b->seg = tmp;
	b->seg.size = 0;
	return 0;
}

/* Appends a node of the current part, depending on the frontier. */
static int add_node(struct builder *b, struct gpu_node node, uint32_t *index)
{
	uint32_t nclosed = (uint32_t)ACCEL_VEC_COUNT(&b->closed, uint32_t);
	uint32_t self;
	int err;

	if (nclosed) {
		struct gpu_node join = {
			.kind = GPU_NODE_JOIN, .part = b->part, .command = GPU_NO_COMMAND,
			.count_ref = NONE,
			.dep_first = (uint32_t)ACCEL_VEC_COUNT(&b->deps, uint32_t),
			.dep_count = nclosed,
		};

		if (accel_vec_reserve(&b->deps, nclosed * sizeof(uint32_t)))
			return -ENOMEM;
		memcpy(accel_vec_push(&b->deps, nclosed * sizeof(uint32_t)),
		       b->closed.data, nclosed * sizeof(uint32_t));
		b->closed.size = 0;
		b->frontier = (uint32_t)ACCEL_VEC_COUNT(&b->nodes, struct gpu_node);
		err = PUSH(&b->nodes, struct gpu_node, join);
		if (err)
			return err;
		b->part_nodes++;
	}
	self = (uint32_t)ACCEL_VEC_COUNT(&b->nodes, struct gpu_node);
	node.part = b->part;
	node.dep_first = (uint32_t)ACCEL_VEC_COUNT(&b->deps, uint32_t);
	node.dep_count = 0;
	if (b->frontier != NONE) {
		err = PUSH(&b->deps, uint32_t, b->frontier);
		if (err)
			return err;
		node.dep_count = 1;
	}
	err = PUSH(&b->nodes, struct gpu_node, node);
	if (!err)
		err = PUSH(&b->seg, uint32_t, self);
	if (err)
		return err;
	b->part_nodes++;
	*index = self;
	return 0;
}

/* Ends the current part: its graph becomes a step; the next starts bare. */
static int close_part(struct builder *b)
{
	struct gpu_step step = { GPU_STEP_GRAPH, b->part };
	int err;

	if (!b->part_nodes)
		return 0;
	err = PUSH(&b->steps, struct gpu_step, step);
	if (err)
		return err;
	b->part++;
	b->part_nodes = 0;
	b->frontier = NONE;
	b->seg.size = 0;
	b->closed.size = 0;
	return 0;
}

/* Writes ref @ref's binding at region offset @at, or a scatter entry. */
static int put_ref(struct builder *b, const struct accel_plan_ref *ref,
		   uint32_t at)
{
	struct gpu_binding direct = { ref->address, ref->length };
	struct gpu_scatter_entry e = {
		.offset = ref->address, .length = ref->length,
		.slot = ref->slot, .target = at,
	};

	if (ref->slot == ACCEL_PLAN_DIRECT) {
		memcpy(b->p->image + at, &direct, sizeof(direct));
		return 0;
	}
	return PUSH(&b->entries, struct gpu_scatter_entry, e);
}

/* A u64 at region offset @at that holds a region offset: relocated. */
static int put_reloc(struct builder *b, uint32_t at, uint64_t value)
{
	memcpy(b->p->image + at, &value, sizeof(value));
	return PUSH(&b->relocs, uint32_t, at);
}

static int write_block(struct builder *b, const struct accel_cmd *cmd,
		       uint32_t at)
{
	const struct accel_plan_ref *refs = refs_of(b->plan, cmd);
	struct gpu_fill_args fill = { pattern_word(cmd), cmd->pattern_length, 0 };
	uint32_t first = cmd->type == ACCEL_CMD_DISPATCH_INDIRECT ? 1 : 0;
	uint32_t n = cmd->dispatch.binding_count;
	int err = 0;

	switch (cmd->type) {
	case ACCEL_CMD_FILL:
		memcpy(b->p->image + at + sizeof(struct gpu_binding), &fill, sizeof(fill));
		return put_ref(b, &refs[0], at);
	case ACCEL_CMD_UPDATE:
		err = put_reloc(b, at, b->p->layout.data + cmd->data);
		memcpy(b->p->image + at + 8, &refs[0].length, 8);
		return err ? err : put_ref(b, &refs[0], at + sizeof(struct gpu_binding));
	case ACCEL_CMD_COPY:
		err = put_ref(b, &refs[0], at);
		return err ? err : put_ref(b, &refs[1], at + sizeof(struct gpu_binding));
	default:
		for (uint32_t r = 0; !err && r < n; r++)
			err = put_ref(b, &refs[first + r], at + r * (uint32_t)sizeof(struct gpu_binding));
		if (!err && cmd->dispatch.constant_count)
			memcpy(b->p->image + at + n * sizeof(struct gpu_binding), &refs[first + n],
			       cmd->dispatch.constant_count * sizeof(uint32_t));
		return err;
	}
}

static struct gpu_node node_for(const struct accel_plan *plan, uint32_t i,
				const struct accel_cmd *cmd, uint32_t at)
{
	const struct accel_plan_ref *refs = refs_of(plan, cmd);
	struct gpu_node n = {
		.command = i, .params = at, .count_ref = NONE,
		.grid = { 1, 1, 1 }, .block = { GPU_BUILTIN_THREADS, 1, 1 },
	};

	switch (cmd->type) {
	case ACCEL_CMD_FILL:
		n.kind = GPU_NODE_FILL;
		n.grid[0] = transfer_groups(refs[0].length);
		break;
	case ACCEL_CMD_UPDATE:
	case ACCEL_CMD_COPY:
		n.kind = GPU_NODE_COPY;
		n.grid[0] = transfer_groups(refs[0].length);
		break;
	case ACCEL_CMD_DISPATCH_INDIRECT:
		n.kind = GPU_NODE_DISPATCH_INDIRECT;
		n.count_ref = cmd->params;
		memset(n.grid, 0, sizeof(n.grid));
		memcpy(n.block, cmd->dispatch.export->info.workgroup_size, sizeof(n.block));
		break;
	default:
		n.kind = GPU_NODE_DISPATCH;
		memcpy(n.grid, cmd->dispatch.workgroup_count, sizeof(n.grid));
		memcpy(n.block, cmd->dispatch.export->info.workgroup_size, sizeof(n.block));
		break;
	}
	return n;
}

static int add_command(struct builder *b, uint32_t i)
{
	const struct accel_cmd *cmd = &b->cmds[i];
	uint32_t at = b->next_block, index;
	struct gpu_node node;
	int err;

	if (cmd->type == ACCEL_CMD_BARRIER)
		return barrier(b);
	if (b->seg_indirect[i] && (i == 0 || b->cmds[i - 1].type == ACCEL_CMD_BARRIER)) {
		err = close_part(b); /* its counts are read after what came before */
		if (err)
			return err;
	}
	if (!command_runs(b->plan, cmd))
		return 0;
	b->next_block += block_size(cmd);
	err = write_block(b, cmd, at);
	if (err)
		return err;
	node = node_for(b->plan, i, cmd, at);
	if (node.kind != GPU_NODE_DISPATCH_INDIRECT)
		return add_node(b, node, &index);
	node.part = NONE;
	node.dep_first = (uint32_t)ACCEL_VEC_COUNT(&b->deps, uint32_t);
	index = (uint32_t)ACCEL_VEC_COUNT(&b->nodes, struct gpu_node);
	err = PUSH(&b->nodes, struct gpu_node, node);
	if (!err)
		err = PUSH(&b->steps, struct gpu_step,
			   ((struct gpu_step){ GPU_STEP_LAUNCH, index }));
	return err;
}

/* The scatter node (block at offset 0), first of part 0. */
static int add_scatter(struct builder *b)
{
	struct gpu_node node = {
		.kind = GPU_NODE_SCATTER, .command = GPU_NO_COMMAND,
		.params = 0, .count_ref = NONE,
		.grid = { 1, 1, 1 }, .block = { GPU_BUILTIN_THREADS, 1, 1 },
	};
	int err;

	b->next_block = sizeof(struct gpu_scatter_args);
	err = add_node(b, node, &b->p->scatter_node);
	if (!err)
		err = barrier(b);
	return err;
}

/* Groups the entries by slot; fills the scatter block; trims the size. */
static int finish_entries(struct builder *b)
{
	struct gpu_program *p = b->p;
	uint32_t n = (uint32_t)ACCEL_VEC_COUNT(&b->entries, struct gpu_scatter_entry);
	const struct gpu_scatter_entry *in = b->entries.data;
	struct gpu_scatter_args args = { .count = n };
	uint32_t *next;
	int err;

	p->binding_count = b->plan->used_count; /* entries of the slot table */
	p->entry_count = n;
	p->slot_first = calloc(p->binding_count + 1, sizeof(uint32_t));
	p->entries = calloc(n ? n : 1, sizeof(*p->entries));
	next = calloc(p->binding_count + 1, sizeof(uint32_t));
	if (!p->slot_first || !p->entries || !next) {
		free(next);
		return -ENOMEM;
	}
	for (uint32_t e = 0; e < n; e++)
		p->slot_first[in[e].slot + 1]++;
	for (uint32_t s = 0; s < p->binding_count; s++)
		p->slot_first[s + 1] += p->slot_first[s];
	memcpy(next, p->slot_first, (p->binding_count + 1) * sizeof(uint32_t));
	for (uint32_t e = 0; e < n; e++)
		p->entries[next[in[e].slot]++] = in[e];
	free(next);
	memcpy(p->image + p->layout.entries, p->entries, n * sizeof(*p->entries));
	p->layout.size = (uint32_t)align16(p->layout.entries + n * sizeof(*p->entries));
	if (!b->scatter)
		return 0;
	err = put_reloc(b, offsetof(struct gpu_scatter_args, region), 0);
	if (!err)
		err = put_reloc(b, offsetof(struct gpu_scatter_args, slots), p->layout.slots);
	if (!err)
		err = put_reloc(b, offsetof(struct gpu_scatter_args, entries), p->layout.entries);
	memcpy(p->image + offsetof(struct gpu_scatter_args, count), &args.count, 4);
	p->nodes[p->scatter_node].grid[0] = (n + GPU_BUILTIN_THREADS - 1) / GPU_BUILTIN_THREADS;
	return err;
}

static int build(struct builder *b)
{
	struct gpu_program *p = b->p;
	int err = first_pass(b);

	if (!err)
		err = layout(b);
	if (!err && b->plan->data.size)
		memcpy(p->image + p->layout.data, b->plan->data.data, b->plan->data.size);
	if (!err && b->scatter)
		err = add_scatter(b);
	for (uint32_t i = 0; !err && i < b->ncmds; i++)
		err = add_command(b, i);
	if (!err)
		err = close_part(b);
	if (err)
		return err;
	p->nodes = b->nodes.data;
	p->node_count = (uint32_t)ACCEL_VEC_COUNT(&b->nodes, struct gpu_node);
	b->nodes.data = NULL;
	err = finish_entries(b);
	p->deps = b->deps.data;
	p->dep_count = (uint32_t)ACCEL_VEC_COUNT(&b->deps, uint32_t);
	b->deps.data = NULL;
	p->steps = b->steps.data;
	p->step_count = (uint32_t)ACCEL_VEC_COUNT(&b->steps, struct gpu_step);
	b->steps.data = NULL;
	p->relocs = b->relocs.data;
	p->reloc_count = (uint32_t)ACCEL_VEC_COUNT(&b->relocs, uint32_t);
	b->relocs.data = NULL;
	p->part_count = b->part;
	return err;
}

int gpu_program_build(const struct accel_plan *plan, struct gpu_program *out,
		      const char *fn)
{
	struct builder b = {
		.plan = plan, .p = out, .cmds = plan->commands.data,
		.ncmds = (uint32_t)ACCEL_VEC_COUNT(&plan->commands, struct accel_cmd),
		.frontier = NONE,
	};
	int err;

	memset(out, 0, sizeof(*out));
	out->scatter_node = NONE;
	err = build(&b);
	free(b.seg_indirect);
	accel_vec_free(&b.nodes);
	accel_vec_free(&b.deps);
	accel_vec_free(&b.steps);
	accel_vec_free(&b.entries);
	accel_vec_free(&b.relocs);
	accel_vec_free(&b.seg);
	accel_vec_free(&b.closed);
	if (!err)
		return 0;
	gpu_program_free(out);
	if (err == -E2BIG)
		return accel_fail(E2BIG,
			"%s: the command buffer's parameter blocks and payloads pass 4 GiB; split it",
			fn);
	return accel_fail(ENOMEM, "%s: out of memory translating the command buffer", fn);
}

void gpu_program_free(struct gpu_program *p)
{
	free(p->image);
	free(p->relocs);
	free(p->nodes);
	free(p->deps);
	free(p->steps);
	free(p->entries);
	free(p->slot_first);
	memset(p, 0, sizeof(*p));
	p->scatter_node = NONE;
}

void gpu_program_relocate(const struct gpu_program *p, uint64_t base,
			  uint8_t *dst)
{
	memcpy(dst, p->image, p->layout.size);
	for (uint32_t i = 0; i < p->reloc_count; i++) {
		uint64_t v;

		memcpy(&v, dst + p->relocs[i], 8);
		v += base;
		memcpy(dst + p->relocs[i], &v, 8);
	}
}

void gpu_program_scatter_host(const struct gpu_program *p,
			      const struct accel_plan_slot *slots,
			      uint8_t *region)
{
	for (uint32_t i = 0; i < p->entry_count; i++) {
		const struct gpu_scatter_entry *e = &p->entries[i];
		struct accel_plan_ref ref = {
			.address = e->offset, .length = e->length, .slot = e->slot,
		};
		struct gpu_binding out;

		accel_plan_ref_resolve(&ref, slots, &out.address, &out.length);
		memcpy(region + e->target, &out, sizeof(out));
	}
}

const struct gpu_node *gpu_program_node_of(const struct gpu_program *p,
					   uint32_t command)
{
	for (uint32_t i = 0; i < p->node_count; i++)
		if (p->nodes[i].command == command)
			return &p->nodes[i];
	return NULL;
}
