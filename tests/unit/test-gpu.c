// SPDX-License-Identifier: MIT
/*
 * Check suite "gpu": the translation that the cuda and hip drivers share
 * (drivers/gpu/gpu_program.h), on the CPU, without any driver: command
 * buffers are recorded on cpu:// (the plan is backend-neutral) and
 * translated with gpu_program_build(). It checks the graph (node kinds,
 * node count, dependency edges from barriers, joins, parts and steps
 * around dispatch-indirects), the parameter-block layout (offsets,
 * alignment, sizes, direct and indirect refs, constants, relocations), the
 * binding scatter plan (exact entries, grouped by slot) and, resolving a
 * captured binding table on the host through the plan, that every binding
 * equals what accel_plan_ref_resolve() gives; and the executable bundle
 * parser.
 */
#include <inttypes.h>

#include "../../drivers/gpu/gpu.h"
#include "src/core.h"
#include "test-accel.h"

static accel_executable_t *exe;
static uint32_t saxpy, add_u32;

static void setup(void)
{
	device_setup();
	exe = kernels();
	saxpy = entry(exe, "saxpy");
	add_u32 = entry(exe, "add_u32");
}

static void teardown(void)
{
	accel_executable_release(exe);
	device_teardown();
}

static struct gpu_program build(accel_command_buffer_t *cb)
{
	struct gpu_program p;

	ASSERT_OK(accel_command_buffer_end(cb));
	ASSERT_OK(gpu_program_build(&cb->plan, &p, "test"));
	return p;
}

static void dispatch2(accel_command_buffer_t *cb, accel_buffer_ref_t a,
		      accel_buffer_ref_t b, uint32_t constant, uint32_t groups)
{
	accel_buffer_ref_t refs[2] = { a, b };
	uint32_t wg[3] = { groups, 1, 1 };

	ASSERT_OK(accel_command_buffer_dispatch(cb, exe, saxpy, wg, &constant, 1, refs, 2));
}

static void fill(accel_command_buffer_t *cb, accel_buffer_ref_t ref)
{
	uint32_t pattern = 0xabcd1234;

	ASSERT_OK(accel_command_buffer_fill(cb, ref, &pattern, 4));
}

/* The dependencies of node @n, as a list "a,b,c". */
static const char *deps_of(const struct gpu_program *p, uint32_t n, char *buf,
			   size_t len)
{
	size_t used = 0;

	buf[0] = 0;
	for (uint32_t i = 0; i < p->nodes[n].dep_count && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%u", i ? "," : "",
					 p->deps[p->nodes[n].dep_first + i]);
	return buf;
}

#define ASSERT_DEPS(p, n, want) do {                                          \
	char buf_[256];                                                       \
	ck_assert_msg(strcmp(deps_of((p), (n), buf_, sizeof(buf_)), (want)) == 0, \
		      "node %u depends on {%s}, expected {%s}", (n), buf_, (want)); \
} while (0)

#define ASSERT_KIND(p, n, k) \
	ck_assert_msg((p)->nodes[n].kind == (k), "node %u has kind %u, expected %s", \
		      (n), (p)->nodes[n].kind, #k)

/* Barriers: one join per multi-node segment, chains of single nodes. */
START_TEST(test_graph_barriers)
{
	accel_buffer_t *b = buffer_new(4096);
	accel_command_buffer_t *cb = cb_new(ACCEL_COMMAND_BUFFER_REUSABLE, 0);
	accel_buffer_ref_t r = accel_buffer_ref_direct(b, 0, 256);
	struct gpu_program p;

	dispatch2(cb, r, r, 1, 4);                       /* 0 */
	dispatch2(cb, r, r, 2, 4);                       /* 1 */
	dispatch2(cb, r, r, 3, 0);                       /* no work: no node */
	dispatch2(cb, r, r, 4, 4);                       /* 2 */
	ASSERT_OK(accel_command_buffer_barrier(cb));     /* join 3 <- 0,1,2 */
	fill(cb, r);                                     /* 4 */
	ASSERT_OK(accel_command_buffer_copy(cb, accel_buffer_ref_direct(b, 0, 64),
					    accel_buffer_ref_direct(b, 1024, 64))); /* 5 */
	fill(cb, accel_buffer_ref_direct(b, 0, 0));      /* no work */
	ASSERT_OK(accel_command_buffer_barrier(cb));
	ASSERT_OK(accel_command_buffer_barrier(cb));     /* join 6 <- 4,5 */
	dispatch2(cb, r, r, 5, 1);                       /* 7 */
	ASSERT_OK(accel_command_buffer_barrier(cb));
	fill(cb, r);                                     /* 8 <- 7 */
	ASSERT_OK(accel_command_buffer_barrier(cb));     /* trailing: nothing */
	p = build(cb);

	ck_assert_uint_eq(p.node_count, 9);
	ck_assert_uint_eq(p.dep_count, 3 + 2 + 2 + 1 + 1);
	ck_assert_uint_eq(p.part_count, 1);
	ck_assert_uint_eq(p.step_count, 1);
	ck_assert_uint_eq(p.steps[0].kind, GPU_STEP_GRAPH);
	ck_assert_uint_eq(p.steps[0].index, 0);
	ck_assert_uint_eq(p.scatter_node, UINT32_MAX);
	ck_assert_uint_eq(p.entry_count, 0);
	for (uint32_t n = 0; n < 3; n++) {
		ASSERT_KIND(&p, n, GPU_NODE_DISPATCH);
		ASSERT_DEPS(&p, n, "");
	}
	ck_assert_uint_eq(p.nodes[2].command, 3); /* command 2 was dropped */
	ASSERT_KIND(&p, 3, GPU_NODE_JOIN);
	ASSERT_DEPS(&p, 3, "0,1,2");
	ck_assert_uint_eq(p.nodes[3].command, GPU_NO_COMMAND);
	ASSERT_KIND(&p, 4, GPU_NODE_FILL);
	ASSERT_DEPS(&p, 4, "3");
	ASSERT_KIND(&p, 5, GPU_NODE_COPY);
	ASSERT_DEPS(&p, 5, "3");
	ASSERT_KIND(&p, 6, GPU_NODE_JOIN);
	ASSERT_DEPS(&p, 6, "4,5");
	ASSERT_KIND(&p, 7, GPU_NODE_DISPATCH);
	ASSERT_DEPS(&p, 7, "6");
	ASSERT_KIND(&p, 8, GPU_NODE_FILL);
	ASSERT_DEPS(&p, 8, "7");
	for (uint32_t n = 0; n < p.node_count; n++)
		ck_assert_uint_eq(p.nodes[n].part, 0);
	/* grids: dispatches as recorded, transfers by their length */
	ck_assert_uint_eq(p.nodes[0].grid[0], 4);
	ck_assert_uint_eq(p.nodes[7].grid[0], 1);
	ck_assert_uint_eq(p.nodes[4].grid[0], 1);
	ck_assert_uint_eq(p.nodes[4].block[0], GPU_BUILTIN_THREADS);
	ck_assert_uint_eq(p.nodes[0].block[0], exe->exports[saxpy].info.workgroup_size[0]);
	gpu_program_free(&p);
	accel_command_buffer_release(cb);
	accel_buffer_release(b);
}
END_TEST

/* Hundreds of commands without a barrier: independent nodes, no cap. */
START_TEST(test_graph_wide)
{
	accel_buffer_t *b = buffer_new(4096);
	accel_command_buffer_t *cb = cb_new(ACCEL_COMMAND_BUFFER_REUSABLE, 4);
	struct gpu_program p;

	for (uint32_t i = 0; i < 512; i++)
		fill(cb, i % 2 ? accel_buffer_ref_indirect(i % 4, 4 * i, 4) :
				 accel_buffer_ref_direct(b, 4 * i, 4));
	p = build(cb);
	/* the scatter node first, then one fill per command */
	ck_assert_uint_eq(p.node_count, 513);
	ck_assert_uint_eq(p.scatter_node, 0);
	ASSERT_KIND(&p, 0, GPU_NODE_SCATTER);
	ASSERT_DEPS(&p, 0, "");
	for (uint32_t n = 1; n < p.node_count; n++) {
		ASSERT_KIND(&p, n, GPU_NODE_FILL);
		ASSERT_DEPS(&p, n, "0");
		ck_assert_uint_eq(p.nodes[n].command, n - 1);
	}
	ck_assert_uint_eq(p.dep_count, 512);
	ck_assert_uint_eq(p.entry_count, 256);
	ck_assert_uint_eq(p.nodes[0].grid[0], 1); /* 256 entries, 256 threads */
	gpu_program_free(&p);
	accel_command_buffer_release(cb);
	accel_buffer_release(b);
}
END_TEST

/* Dispatch-indirects: launch steps between graphs (host read-back). */
START_TEST(test_graph_indirect_steps)
{
	accel_buffer_t *b = buffer_new(4096);
	accel_command_buffer_t *cb = cb_new(ACCEL_COMMAND_BUFFER_REUSABLE, 1);
	accel_buffer_ref_t r = accel_buffer_ref_direct(b, 0, 256);
	accel_buffer_ref_t refs[2] = { r, r };
	uint32_t c = 7;
	struct gpu_program p;

	fill(cb, r);                                                     /* 0 */
	ASSERT_OK(accel_command_buffer_barrier(cb));
	ASSERT_OK(accel_command_buffer_dispatch_indirect(cb, exe, saxpy,
		accel_buffer_ref_indirect(0, 16, 12), &c, 1, refs, 2));   /* 1 */
	dispatch2(cb, r, r, 1, 2);                                       /* 2 */
	ASSERT_OK(accel_command_buffer_barrier(cb));
	dispatch2(cb, r, r, 1, 2);                                       /* 3 */
	p = build(cb);

	ck_assert_uint_eq(p.node_count, 4);
	ck_assert_uint_eq(p.part_count, 2);
	ck_assert_uint_eq(p.step_count, 3);
	ck_assert_uint_eq(p.steps[0].kind, GPU_STEP_GRAPH);
	ck_assert_uint_eq(p.steps[0].index, 0);
	ck_assert_uint_eq(p.steps[1].kind, GPU_STEP_LAUNCH);
	ck_assert_uint_eq(p.steps[1].index, 1);
	ck_assert_uint_eq(p.steps[2].kind, GPU_STEP_GRAPH);
	ck_assert_uint_eq(p.steps[2].index, 1);
	ASSERT_KIND(&p, 0, GPU_NODE_FILL);
	ck_assert_uint_eq(p.nodes[0].part, 0);
	ASSERT_KIND(&p, 1, GPU_NODE_DISPATCH_INDIRECT);
	ck_assert_uint_eq(p.nodes[1].part, UINT32_MAX);
	ck_assert_uint_eq(p.nodes[1].dep_count, 0);
	ck_assert_uint_eq(p.nodes[1].count_ref,
			  ((const struct accel_cmd *)cb->plan.commands.data)[1].params);
	/* the rest of its segment opens part 1, with nothing to wait for */
	ASSERT_KIND(&p, 2, GPU_NODE_DISPATCH);
	ck_assert_uint_eq(p.nodes[2].part, 1);
	ASSERT_DEPS(&p, 2, "");
	ck_assert_uint_eq(p.nodes[3].part, 1);
	ASSERT_DEPS(&p, 3, "2");
	/* the count is read by the host: no scatter for it */
	ck_assert_uint_eq(p.entry_count, 0);
	gpu_program_free(&p);
	accel_command_buffer_release(cb);

	/* a dispatch-indirect first: no graph before it */
	cb = cb_new(ACCEL_COMMAND_BUFFER_REUSABLE, 0);
	ASSERT_OK(accel_command_buffer_dispatch_indirect(cb, exe, saxpy,
		accel_buffer_ref_direct(b, 0, 12), &c, 1, refs, 2));
	p = build(cb);
	ck_assert_uint_eq(p.part_count, 0);
	ck_assert_uint_eq(p.step_count, 1);
	ck_assert_uint_eq(p.steps[0].kind, GPU_STEP_LAUNCH);
	gpu_program_free(&p);
	accel_command_buffer_release(cb);
	accel_buffer_release(b);
}
END_TEST

static struct gpu_binding binding_at(const uint8_t *region, uint32_t at)
{
	struct gpu_binding v;

	memcpy(&v, region + at, sizeof(v));
	return v;
}

static uint64_t u64_at(const uint8_t *region, uint32_t at)
{
	uint64_t v;

	memcpy(&v, region + at, 8);
	return v;
}

/* Offsets, alignment and sizes of mixed blocks; direct refs resolved. */
START_TEST(test_param_layout)
{
	accel_buffer_t *b = buffer_new(4096);
	accel_command_buffer_t *cb = cb_new(ACCEL_COMMAND_BUFFER_REUSABLE, 3);
	accel_buffer_ref_t three[3] = {
		accel_buffer_ref_indirect(1, 64, 32),
		accel_buffer_ref_direct(b, 128, 16),
		accel_buffer_ref_indirect(2, 0, ACCEL_WHOLE_BUFFER),
	};
	uint8_t payload[24];
	uint16_t pattern = 0x5aa5;
	uint32_t wg[3] = { 2, 3, 1 }, one = 0x3f800000;
	const uint64_t base = 0x7f0000000000;
	struct gpu_program p;
	uint8_t *region;

	for (int i = 0; i < 24; i++)
		payload[i] = (uint8_t)(i + 1);
	dispatch2(cb, accel_buffer_ref_direct(b, 16, 64),
		  accel_buffer_ref_indirect(0, 8, ACCEL_WHOLE_BUFFER), one, 5);  /* 0 */
	ASSERT_OK(accel_command_buffer_dispatch(cb, exe, add_u32, wg, NULL, 0, three, 3)); /* 1 */
	ASSERT_OK(accel_command_buffer_fill(cb, accel_buffer_ref_direct(b, 256, 64), &pattern, 2)); /* 2 */
	ASSERT_OK(accel_command_buffer_update(cb, payload, accel_buffer_ref_indirect(0, 32, 24))); /* 3 */
	ASSERT_OK(accel_command_buffer_copy(cb, accel_buffer_ref_direct(b, 512, 40),
					    accel_buffer_ref_indirect(2, 8, 40))); /* 4 */
	p = build(cb);

	/* scatter block at 0, then the commands' blocks in order */
	ck_assert_uint_eq(p.node_count, 6);
	ck_assert_uint_eq(p.nodes[0].params, 0);
	ck_assert_uint_eq(p.nodes[1].params, 32);        /* saxpy: 2*16 + 4 -> 48 */
	ck_assert_uint_eq(p.nodes[2].params, 80);        /* add_u32: 3*16 -> 48 */
	ck_assert_uint_eq(p.nodes[3].params, 128);       /* fill: 32 */
	ck_assert_uint_eq(p.nodes[4].params, 160);       /* update: 32 */
	ck_assert_uint_eq(p.nodes[5].params, 192);       /* copy: 32 */
	for (uint32_t n = 0; n < p.node_count; n++)
		ck_assert_uint_eq(p.nodes[n].params % 16, 0);
	ck_assert_uint_eq(p.layout.data, 224);
	ck_assert_uint_eq(p.layout.slots, 256);          /* 224 + 24 payload bytes */
	ck_assert_uint_eq(p.layout.entries, 256 + 3 * 16);
	ck_assert_uint_eq(p.entry_count, 5);
	ck_assert_uint_eq(p.layout.size, 432);            /* 304 + 5 * 24, to 16 */
	ck_assert_uint_eq(p.layout.size % 16, 0);
	ck_assert_uint_eq(p.nodes[2].grid[0], 2);
	ck_assert_uint_eq(p.nodes[2].grid[1], 3);

	region = malloc(p.layout.size);
	gpu_program_relocate(&p, base, region);
	/* saxpy: direct binding resolved, indirect left for the scatter, constant */
	ck_assert_uint_eq(binding_at(region, 32).address, b->address + 16);
	ck_assert_uint_eq(binding_at(region, 32).length, 64);
	ck_assert_uint_eq(binding_at(region, 48).address, 0);
	ck_assert_uint_eq(*(uint32_t *)(region + 64), one);
	/* add_u32: direct in the middle */
	ck_assert_uint_eq(binding_at(region, 80 + 16).address, b->address + 128);
	ck_assert_uint_eq(binding_at(region, 80 + 16).length, 16);
	/* fill: target, then the pattern replicated and its length */
	ck_assert_uint_eq(binding_at(region, 128).address, b->address + 256);
	ck_assert_uint_eq(*(uint32_t *)(region + 144), 0x5aa55aa5);
	ck_assert_uint_eq(*(uint32_t *)(region + 148), 2);
	/* update: its source is the payload in the region, relocated */
	ck_assert_uint_eq(binding_at(region, 160).address, base + 224);
	ck_assert_uint_eq(binding_at(region, 160).length, 24);
	ck_assert_int_eq(memcmp(region + 224, payload, 24), 0);
	/* copy: direct source */
	ck_assert_uint_eq(binding_at(region, 192).address, b->address + 512);
	/* scatter args: region, slot table, entries (relocated), count */
	ck_assert_uint_eq(u64_at(region, 0), base);
	ck_assert_uint_eq(u64_at(region, 8), base + 256);
	ck_assert_uint_eq(u64_at(region, 16), base + 304);
	ck_assert_uint_eq(*(uint32_t *)(region + 24), 5);
	ck_assert_uint_eq(p.reloc_count, 4);
	/* the slot table is left zero: each submission uploads it */
	for (uint32_t i = p.layout.slots; i < p.layout.entries; i++)
		ck_assert_uint_eq(region[i], 0);
	free(region);
	gpu_program_free(&p);
	accel_command_buffer_release(cb);
	accel_buffer_release(b);
}
END_TEST

/*
 * A table feeding many dispatches: every entry exactly, grouped by slot
 * in command order; then a real table captured, scattered on the host and
 * compared, binding by binding, with accel_plan_ref_resolve().
 */
START_TEST(test_scatter_plan)
{
	enum { N = 100, SLOTS = 4 };
	accel_buffer_t *bufs[SLOTS], *d = buffer_new(1024);
	accel_command_buffer_t *cb = cb_new(ACCEL_COMMAND_BUFFER_REUSABLE, SLOTS);
	accel_binding_t bindings[SLOTS];
	accel_binding_table_t table = { SLOTS, bindings };
	struct accel_plan_slot slots[SLOTS];
	const struct accel_cmd *cmds;
	struct gpu_program p;
	uint32_t expect_first[SLOTS + 1] = { 0 };
	uint8_t *region;

	for (uint32_t s = 0; s < SLOTS; s++) {
		bufs[s] = buffer_new(8192 + 1024 * s);
		bindings[s] = (accel_binding_t){ bufs[s], 64 * s, ACCEL_WHOLE_BUFFER };
	}
	for (uint32_t i = 0; i < N; i++) /* slot i%3, then slot 3 whole or direct */
		dispatch2(cb, accel_buffer_ref_indirect(i % 3, 4 * i, 16),
			  i % 5 ? accel_buffer_ref_indirect(3, 8 * i, ACCEL_WHOLE_BUFFER) :
				  accel_buffer_ref_direct(d, 4 * i, 8), i, 1);
	p = build(cb);
	cmds = cb->plan.commands.data;

	/* count per slot: 100 refs over slots 0..2, 80 on slot 3 */
	expect_first[1] = 34;
	expect_first[2] = 34 + 33;
	expect_first[3] = 100;
	expect_first[4] = 180;
	ck_assert_uint_eq(p.entry_count, 180);
	for (uint32_t s = 0; s <= SLOTS; s++)
		ck_assert_msg(p.slot_first[s] == expect_first[s], "slot_first[%u] is %u, expected %u",
			      s, p.slot_first[s], expect_first[s]);
	for (uint32_t s = 0; s < SLOTS; s++) {
		uint32_t e = p.slot_first[s];

		for (uint32_t i = 0; i < N; i++) {
			const struct gpu_node *n = gpu_program_node_of(&p, i);
			bool uses = s < 3 ? i % 3 == s : i % 5 != 0;
			const struct gpu_scatter_entry *x = &p.entries[e];

			if (!uses)
				continue;
			ck_assert_ptr_nonnull(n);
			ck_assert_uint_eq(x->slot, s);
			ck_assert_msg(x->target == n->params + (s < 3 ? 0 : 16),
				      "entry %u targets %u, expected command %u's binding %u at %u",
				      e, x->target, i, s < 3 ? 0 : 1, n->params + (s < 3 ? 0 : 16));
			ck_assert_uint_eq(x->offset, s < 3 ? 4 * i : 8 * i);
			ck_assert_uint_eq(x->length, s < 3 ? 16 : ACCEL_WHOLE_BUFFER);
			e++;
		}
		ck_assert_uint_eq(e, p.slot_first[s + 1]);
	}

	/* resolve a captured table through the plan, as a submission would */
	ASSERT_OK(accel_plan_validate(&cb->plan, dev, &table, "test"));
	memset(slots, 0, sizeof(slots));
	accel_plan_capture(&cb->plan, &table, slots);
	region = malloc(p.layout.size);
	gpu_program_relocate(&p, 0x100000, region);
	gpu_program_scatter_host(&p, slots, region);
	for (uint32_t i = 0; i < N; i++) {
		const struct gpu_node *n = gpu_program_node_of(&p, i);
		const struct accel_plan_ref *refs = (const struct accel_plan_ref *)
			((const uint8_t *)cb->plan.params.data + cmds[i].params);

		for (uint32_t r = 0; r < 2; r++) {
			struct gpu_binding got = binding_at(region, n->params + 16 * r);
			uint64_t address, length;

			accel_plan_ref_resolve(&refs[r], slots, &address, &length);
			ck_assert_msg(got.address == address && got.length == length,
				      "command %u binding %u: block has (0x%" PRIx64 ", %" PRIu64 "), accel_plan_ref_resolve gives (0x%" PRIx64 ", %" PRIu64 ")",
				      i, r, got.address, got.length, address, length);
		}
		ck_assert_uint_eq(*(uint32_t *)(region + n->params + 32), i);
	}
	/* and a whole-range ref really took the slot's length into account */
	ck_assert_uint_eq(binding_at(region, gpu_program_node_of(&p, 1)->params + 16).length,
			  (8192 + 1024 * 3) - 64 * 3 - 8);
	free(region);
	gpu_program_free(&p);
	accel_command_buffer_release(cb);
	for (uint32_t s = 0; s < SLOTS; s++)
		accel_buffer_release(bufs[s]);
	accel_buffer_release(d);
}
END_TEST

/*
 * A submission captures one slot record per slot used, not per slot up to
 * the highest (Documentation/libaccel.rst: per-submit host cost
 * O(slots used)): slots 65,535 and 3 used make a 2-entry capture in
 * ascending slot order, the refs name those entries, and the gpu slot
 * table has 2 entries.
 */
START_TEST(test_sparse_slots)
{
	enum { CAP = 65536 };
	accel_buffer_t *a = buffer_new(256), *b = buffer_new(512);
	accel_command_buffer_t *cb = cb_new(ACCEL_COMMAND_BUFFER_REUSABLE, CAP);
	accel_binding_t *bindings = calloc(CAP, sizeof(*bindings));
	accel_binding_table_t table = { CAP, bindings };
	struct accel_plan_slot slots[3];
	const struct accel_plan_ref *refs;
	struct gpu_program p;
	uint64_t address, length;

	ck_assert_ptr_nonnull(bindings);
	dispatch2(cb, accel_buffer_ref_indirect(CAP - 1, 16, 64),
		  accel_buffer_ref_indirect(3, 8, ACCEL_WHOLE_BUFFER), 0, 1);
	p = build(cb);
	ck_assert_uint_eq(cb->plan.used_count, 2);
	ck_assert_uint_eq(cb->plan.used_slots[0], 3);
	ck_assert_uint_eq(cb->plan.used_slots[1], CAP - 1);
	refs = (const struct accel_plan_ref *)cb->plan.params.data;
	ck_assert_uint_eq(refs[0].slot, 1);
	ck_assert_uint_eq(refs[0].table_slot, CAP - 1);
	ck_assert_uint_eq(refs[1].slot, 0);
	ck_assert_uint_eq(refs[1].table_slot, 3);
	ck_assert_uint_eq(p.binding_count, 2);
	ck_assert_uint_eq(p.layout.entries - p.layout.slots, 2 * sizeof(struct accel_plan_slot));

	bindings[3] = (accel_binding_t){ b, 64, ACCEL_WHOLE_BUFFER };
	bindings[CAP - 1] = (accel_binding_t){ a, 0, 128 };
	ASSERT_OK(accel_plan_validate(&cb->plan, dev, &table, "test"));
	memset(slots, 0xee, sizeof(slots));
	accel_plan_capture(&cb->plan, &table, slots);
	ck_assert_uint_eq(slots[0].address, b->address + 64);
	ck_assert_uint_eq(slots[0].length, 448);
	ck_assert_uint_eq(slots[1].address, a->address);
	ck_assert_uint_eq(slots[1].length, 128);
	ck_assert_uint_eq(slots[2].address, UINT64_C(0xeeeeeeeeeeeeeeee)); /* untouched */
	accel_plan_ref_resolve(&refs[0], slots, &address, &length);
	ck_assert_uint_eq(address, a->address + 16);
	ck_assert_uint_eq(length, 64);
	accel_plan_ref_resolve(&refs[1], slots, &address, &length);
	ck_assert_uint_eq(address, b->address + 64 + 8);
	ck_assert_uint_eq(length, 440);
	gpu_program_free(&p);
	accel_command_buffer_release(cb);
	free(bindings);
	accel_buffer_release(a);
	accel_buffer_release(b);
}
END_TEST

/* An empty command buffer, and one of barriers only: nothing to run. */
START_TEST(test_empty)
{
	accel_command_buffer_t *cb = cb_new(ACCEL_COMMAND_BUFFER_REUSABLE, 0);
	struct gpu_program p;

	ASSERT_OK(accel_command_buffer_barrier(cb));
	ASSERT_OK(accel_command_buffer_barrier(cb));
	p = build(cb);
	ck_assert_uint_eq(p.node_count, 0);
	ck_assert_uint_eq(p.step_count, 0);
	ck_assert_uint_eq(p.part_count, 0);
	gpu_program_free(&p);
	accel_command_buffer_release(cb);
}
END_TEST

/* ---- the bundle ------------------------------------------------------- */

static size_t make_bundle(uint8_t *out, uint32_t format)
{
	static const char image[] = ".version 8.0\n.target sm_75\n";
	struct gpu_bundle_entry e[2] = {
		{ .name = "saxpy", .binding_count = 2, .constant_count = 1,
		  .workgroup_size = { 64, 1, 1 } },
		{ .name = "fill", .binding_count = 1, .constant_count = 1,
		  .workgroup_size = { 256, 1, 1 } },
	};
	uint32_t header[6] = { 2, 2, format, 32 + 2 * 112, sizeof(image) - 1, 0 };

	e[0].cost = (accel_export_cost_t){ 128, 768 };
	memcpy(out, "ACCELGPU", 8);
	memcpy(out + 8, header, sizeof(header));
	memcpy(out + 32, e, sizeof(e));
	memcpy(out + 32 + 2 * 112, image, sizeof(image) - 1);
	return 32 + 2 * 112 + sizeof(image) - 1;
}

static void parse_bad(const uint8_t *data, size_t size, uint32_t formats,
		      const char *needle)
{
	struct gpu_bundle b;

	ASSERT_ERRNO(gpu_bundle_parse(data, size, formats, "fn", "k.cuexe", &b), ENOEXEC);
	ASSERT_MESSAGE_CONTAINS(needle);
}

START_TEST(test_bundle)
{
	uint8_t good[512], bad[512];
	size_t size = make_bundle(good, GPU_IMAGE_PTX);
	uint32_t v, cuda = gpu_backend_cuda.formats, hip = gpu_backend_hip.formats;
	struct gpu_bundle b;

	ASSERT_OK(gpu_bundle_parse(good, size, cuda, "fn", "k.cuexe", &b));
	ck_assert_uint_eq(b.entry_count, 2);
	ck_assert_uint_eq(b.format, GPU_IMAGE_PTX);
	ck_assert_str_eq(b.entries[1].name, "fill");
	ck_assert_uint_eq(b.entries[0].workgroup_size[0], 64);
	ck_assert_uint_eq(b.entries[0].cost.operations, 128);
	ck_assert_uint_eq(b.entries[0].cost.bytes, 768);
	ck_assert_uint_eq(b.entries[1].cost.operations + b.entries[1].cost.bytes, 0);
	ck_assert_uint_eq(b.image_size, 27);
	ck_assert_int_eq(memcmp(b.image, ".version", 8), 0);
	free(b.entries);

	parse_bad(good, size, hip, "k.cuexe holds PTX (cuda), which this driver cannot load");
	parse_bad((const uint8_t *)"not a bundle at all, really, no.", 32, cuda,
		  "is not a cuda/hip executable");
	memcpy(bad, good, size);
	v = 3;
	memcpy(bad + 8, &v, 4);
	parse_bad(bad, size, cuda, "bundle version 3, but this libaccel reads versions 1 and 2");
	memcpy(bad, good, size);
	v = 1000;
	memcpy(bad + 12, &v, 4);
	parse_bad(bad, size, cuda, "1000 entries do not fit");
	memcpy(bad, good, size);
	v = (uint32_t)size;
	memcpy(bad + 24, &v, 4);
	parse_bad(bad, size, cuda, "its image (offset 256, 283 bytes) is empty or outside the file");
	memcpy(bad, good, size);
	memcpy(bad + 32 + 112, "saxpy", 6);
	parse_bad(bad, size, cuda, "two entries are named 'saxpy'");
	memcpy(bad, good, size);
	memset(bad + 32 + 64 + 8, 0, 4);
	parse_bad(bad, size, cuda, "entry 'saxpy' has a zero workgroup size");
	memcpy(bad, good, size);
	v = ACCEL_DISPATCH_MAX_BINDINGS + 1;
	memcpy(bad + 32 + 64, &v, 4);
	parse_bad(bad, size, cuda, "entry 'saxpy' has 257 bindings");
	memcpy(bad, good, size);
	memset(bad + 32 + 96, 0xff, 8); /* entry 0's operations per workgroup */
	ASSERT_ERRNO(gpu_bundle_parse(bad, size, cuda, "fn", "k.cuexe", &b), ERANGE);
	ASSERT_MESSAGE_CONTAINS("entry 'saxpy' declares 18446744073709551615 operations per workgroup");
	size = make_bundle(good, GPU_IMAGE_HSACO);
	ASSERT_OK(gpu_bundle_parse(good, size, hip, "fn", "k.hipexe", &b));
	free(b.entries);
	parse_bad(good, size, cuda, "holds an AMD GPU code object (hip)");
}
END_TEST

/* gpupack.py's bundle of the CUDA test kernels matches the cpu table. */
START_TEST(test_bundle_gpupack)
{
	const char *path = getenv("ACCEL_TEST_CUDA_KERNELS");
	accel_executable_t *cpu = kernels();
	static uint8_t data[1 << 20];
	struct gpu_bundle b;
	size_t size;
	FILE *f;

	if (!path || !*path)
		TEST_SKIP("built without nvcc: no CUDA test kernels");
	f = fopen(path, "rb");
	ck_assert_msg(f, "%s: %s", path, strerror(errno));
	size = fread(data, 1, sizeof(data), f);
	fclose(f);
	ASSERT_OK(gpu_bundle_parse(data, size, gpu_backend_cuda.formats, "fn", path, &b));
	ck_assert_uint_eq(b.format, GPU_IMAGE_PTX);
	ck_assert_uint_eq(b.entry_count, cpu->export_count);
	for (uint32_t i = 0; i < b.entry_count; i++) {
		const accel_export_info_t *x = &cpu->exports[i].info;

		ck_assert_str_eq(b.entries[i].name, x->name);
		ck_assert_uint_eq(b.entries[i].binding_count, x->binding_count);
		ck_assert_uint_eq(b.entries[i].constant_count, x->constant_count);
		ck_assert_uint_eq(b.entries[i].workgroup_size[0], x->workgroup_size[0]);
		ck_assert_uint_eq(b.entries[i].workgroup_size[1], 1);
	}
	ck_assert_uint_eq((uintptr_t)(b.image - data) % 16, 0);
	ck_assert(memmem(b.image, b.image_size, ".entry saxpy(", 13) != NULL);
	free(b.entries);
	accel_executable_release(cpu);
}
END_TEST

static Suite *gpu_suite(void)
{
	Suite *suite = suite_create("gpu");
	TCase *tc = tcase_create("translation");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_graph_barriers);
	tcase_add_test(tc, test_graph_wide);
	tcase_add_test(tc, test_graph_indirect_steps);
	tcase_add_test(tc, test_param_layout);
	tcase_add_test(tc, test_scatter_plan);
	tcase_add_test(tc, test_sparse_slots);
	tcase_add_test(tc, test_empty);
	suite_add_tcase(suite, tc);
	tc = tcase_create("bundle");
	tcase_add_checked_fixture(tc, device_setup, device_teardown);
	tcase_add_test(tc, test_bundle);
	tcase_add_test(tc, test_bundle_gpupack);
	suite_add_tcase(suite, tc);
	return suite;
}

int main(void)
{
	return test_run_suite(gpu_suite());
}
