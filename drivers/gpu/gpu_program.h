/* SPDX-License-Identifier: MIT */
/*
 * The translation shared by the cuda and hip drivers: a recorded binding
 * plan (libaccel/src/plan.h) becomes a *program*, pure data that no driver
 * call has touched, so that the CPU unit tests check all of it
 * (tests/unit/test-gpu.c). drivers/gpu/gpu_command_buffer.c turns a
 * program into graphs; Documentation/gpu.rst has the whole picture.
 *
 * **The region.** Each in-flight copy of a command buffer (an *instance*)
 * owns one device allocation laid out as:
 *
 *   [0, data)             the parameter blocks, one per command that runs
 *   [data, slots)         the update payloads (plan.data), verbatim
 *   [slots, entries)      the submission's slot table: struct
 *                         accel_plan_slot per slot (the one upload)
 *   [entries, size)       the scatter entries (struct gpu_scatter_entry)
 *
 * Every part starts on a 16-byte boundary. The program's @image is the
 * host copy of the whole region with region-relative addresses; the
 * offsets listed in @relocs hold a u64 that gets the region's device
 * address added when an instance is made (gpu_program_relocate()).
 *
 * **Parameter blocks.** A kernel takes one argument: the device address of
 * its block. A block starts with one struct gpu_binding (address, length:
 * 16 bytes) per buffer ref, already resolved, then the 32-bit constants,
 * and is padded to 16 bytes:
 *
 *   dispatch, dispatch-indirect:  bindings[n], u32 constants[m]
 *   fill:                         target, { u32 pattern, u32 pattern_length }
 *   copy:                         source, target
 *   update:                       source (the payload), target
 *   scatter (built-in):           { u64 region, u64 slots, u64 entries,
 *                                   u32 count }
 *
 * A direct ref is resolved at end, once. An indirect ref's binding is
 * written at each submission by the scatter kernel (the first node of the
 * graph), from the slot table that the submission uploads.
 *
 * **The scatter plan.** One struct gpu_scatter_entry per indirect ref that
 * a kernel reads, grouped by slot (@slot_first is the CSR index: the
 * entries of slot s are [slot_first[s], slot_first[s + 1])), in command
 * order inside a slot: "which slot's resolved address goes to which
 * block offsets". Resolving entry e writes, at region offset e.target,
 *   address = slots[e.slot].address + e.offset
 *   length  = e.length == ACCEL_WHOLE_BUFFER ? slots[e.slot].length - e.offset
 *                                            : e.length
 * exactly what accel_plan_ref_resolve() computes on the host
 * (gpu_program_scatter_host() does it on the CPU, for the tests; the
 * built-in kernel accel_scatter in drivers/cuda/builtins.cu on the device).
 * The workgroup count of a dispatch-indirect is not scattered: the host
 * reads it (see steps).
 *
 * **Nodes and dependencies.** One node per command that does work (fill,
 * update and copy of zero bytes and dispatches with a zero workgroup count
 * are dropped at end), plus the scatter node and *join* nodes. Commands
 * between two barriers are independent; a barrier orders everything before
 * it before everything after. The frontier after a barrier is the last
 * segment that had nodes: its single node, or, when it had several, one
 * empty join node that depends on all of them (created when the first node
 * after the barrier is). So the number of edges stays linear in the number
 * of nodes, and there is no cap on concurrent nodes.
 *
 * **Parts and steps.** A program runs as a list of steps: launch the graph
 * of part p, or launch dispatch-indirect node n directly after reading its
 * workgroup count on the host (the host read-back path, which every driver
 * has; docs say what the CUDA tail-launch trampoline would replace). A
 * segment holding dispatch-indirects closes the current part; its
 * dispatch-indirects become launch steps; its other nodes open the next
 * part. A command buffer without dispatch-indirect is one part: one graph,
 * and a submission is one slot-table upload plus one graph launch.
 */
#ifndef ACCEL_DRIVERS_GPU_PROGRAM_H
#define ACCEL_DRIVERS_GPU_PROGRAM_H

#include <stdint.h>

#include "src/plan.h"

/* A resolved buffer ref, as kernels read it (drivers/cuda/accel.cuh). */
struct gpu_binding {
	uint64_t address;
	uint64_t length;
};

/* The block of the built-in fill: the target, then this. */
struct gpu_fill_args {
	uint32_t pattern;        /* replicated to 32 bits */
	uint32_t pattern_length; /* 1, 2 or 4 */
	uint64_t reserved;
};

/* The block of the built-in scatter. */
struct gpu_scatter_args {
	uint64_t region;  /* device address of the region (reloc) */
	uint64_t slots;   /* device address of the slot table (reloc) */
	uint64_t entries; /* device address of the entries (reloc) */
	uint32_t count;
	uint32_t reserved;
};

/*
 * struct gpu_scatter_entry - one indirect ref a kernel reads.
 * @offset: the ref's offset into the slot's range.
 * @length: the ref's length, or ACCEL_WHOLE_BUFFER.
 * @slot:   the binding-table slot.
 * @target: region offset of the struct gpu_binding to write.
 */
struct gpu_scatter_entry {
	uint64_t offset;
	uint64_t length;
	uint32_t slot;
	uint32_t target;
};

enum gpu_node_kind {
	GPU_NODE_DISPATCH,          /* an executable's kernel */
	GPU_NODE_DISPATCH_INDIRECT, /* the same; its count read at submit */
	GPU_NODE_FILL,              /* built-in accel_fill */
	GPU_NODE_COPY,              /* built-in accel_copy (copy, update) */
	GPU_NODE_SCATTER,           /* built-in accel_scatter */
	GPU_NODE_JOIN,              /* empty: joins a barrier's predecessors */
};

/* The built-ins' workgroup size and grid limits. */
#define GPU_BUILTIN_THREADS 256u
#define GPU_BUILTIN_MAX_GROUPS 1024u
/* Bytes one thread of a transfer handles per grid-stride step. */
#define GPU_BUILTIN_BYTES_PER_THREAD 16u

/* gpu_node.command of the nodes no command made. */
#define GPU_NO_COMMAND UINT32_MAX

/*
 * struct gpu_node - one node.
 * @kind:      enum gpu_node_kind.
 * @part:      the part (graph) it belongs to; dispatch-indirect, which is
 *             in no graph: UINT32_MAX.
 * @command:   the command it runs, or GPU_NO_COMMAND.
 * @params:    region offset of its parameter block (join: 0).
 * @grid:      workgroups per dimension (dispatch-indirect: read at submit).
 * @block:     threads per workgroup.
 * @count_ref: dispatch-indirect: plan.params offset of its count ref.
 * @dep_first: its dependencies are deps[dep_first, dep_first + dep_count),
 *             node indices of the same part.
 */
struct gpu_node {
	uint8_t kind;
	uint32_t part;
	uint32_t command;
	uint32_t params;
	uint32_t grid[3];
	uint32_t block[3];
	uint32_t count_ref;
	uint32_t dep_first;
	uint32_t dep_count;
};

enum gpu_step_kind {
	GPU_STEP_GRAPH,  /* launch the graph of part @index */
	GPU_STEP_LAUNCH, /* read the count of node @index, then launch it */
};

struct gpu_step {
	uint32_t kind;
	uint32_t index;
};

/* The program's layout of the region (byte offsets, 16-aligned). */
struct gpu_layout {
	uint32_t data;
	uint32_t slots;
	uint32_t entries;
	uint32_t size;
};

/*
 * struct gpu_program - what the translation produced (all owned arrays).
 * @slot_first: binding_count + 1 entries (NULL when binding_count is 0).
 * @binding_count: the entries of the slot table: the plan's used slots
 *                 (plan.used_count), not its highest slot + 1.
 * @part_count: the number of graphs.
 */
struct gpu_program {
	struct gpu_layout layout;
	uint8_t *image;
	uint32_t *relocs;
	uint32_t reloc_count;
	struct gpu_node *nodes;
	uint32_t node_count;
	uint32_t *deps;
	uint32_t dep_count;
	struct gpu_step *steps;
	uint32_t step_count;
	uint32_t part_count;
	struct gpu_scatter_entry *entries;
	uint32_t entry_count;
	uint32_t *slot_first;
	uint32_t binding_count;
	uint32_t scatter_node;   /* UINT32_MAX when there is none */
};

/*
 * gpu_program_build() - translate an ended plan.
 *
 * Return: 0, or -ENOMEM, or -E2BIG when the region would pass 4 GiB;
 * with the message set (prefixed "@fn: ").
 */
int gpu_program_build(const struct accel_plan *plan, struct gpu_program *out,
		      const char *fn);
void gpu_program_free(struct gpu_program *p);

/* Copies the image to @dst and adds @base to every reloc. */
void gpu_program_relocate(const struct gpu_program *p, uint64_t base,
			  uint8_t *dst);

/*
 * gpu_program_scatter_host() - what the scatter kernel does, on the CPU:
 * resolves every entry against @slots into @region (a copy of the image).
 */
void gpu_program_scatter_host(const struct gpu_program *p,
			      const struct accel_plan_slot *slots,
			      uint8_t *region);

/* The node of @command, or NULL if it has none (a linear search). */
const struct gpu_node *gpu_program_node_of(const struct gpu_program *p,
					   uint32_t command);

#endif /* ACCEL_DRIVERS_GPU_PROGRAM_H */
