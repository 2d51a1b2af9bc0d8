// SPDX-License-Identifier: MIT
/*
 * Replaying a command buffer on the cpu: one pass over the recorded
 * commands, each reading its parameter block (resolved addresses and
 * lengths, constants) from the static region or from this submission's
 * dynamic region (accel_cb_exec_params()). Addresses are host pointers.
 *
 * Commands run in order on the calling (executor) thread, so barriers need
 * no work here. A failing command stops the replay and reports its index.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "accel/cpu_executable.h"
#include "cpu.h"
#include "src/error.h"

static void *ptr(uint64_t address)
{
	return (void *)(uintptr_t)address;
}

static void run_fill(const struct accel_cmd *cmd, const struct accel_plan_ref *t)
{
	uint8_t *p = ptr(t->address);
	uint64_t n = t->length;

	switch (cmd->pattern_length) {
	case 1:
		memset(p, (int)(cmd->pattern & 0xff), n);
		break;
	case 2: {
		uint16_t v = (uint16_t)cmd->pattern;

		for (uint64_t i = 0; i < n; i += 2)
			memcpy(p + i, &v, 2);
		break;
	}
	default:
		for (uint64_t i = 0; i < n; i += 4)
			memcpy(p + i, &cmd->pattern, 4);
		break;
	}
}

/* Runs one dispatch: every workgroup of @count, on this thread. */
static void run_dispatch(const struct accel_cmd *cmd,
			 const struct accel_plan_ref *bindings,
			 const uint32_t count[3])
{
	const struct accel_cpu_entry *entry = cmd->dispatch.export->fn;
	uint32_t n = cmd->dispatch.binding_count;
	void *ptrs[ACCEL_DISPATCH_MAX_BINDINGS];
	uint64_t lens[ACCEL_DISPATCH_MAX_BINDINGS];
	struct accel_cpu_dispatch d = {
		.constant_count = cmd->dispatch.constant_count,
		.binding_count = n,
		.constants = (const uint32_t *)&bindings[n],
		.bindings = ptrs,
		.binding_lengths = lens,
	};

	for (uint32_t i = 0; i < n; i++) {
		ptrs[i] = ptr(bindings[i].address);
		lens[i] = bindings[i].length;
	}
	memcpy(d.workgroup_count, count, sizeof(d.workgroup_count));
	memcpy(d.workgroup_size, entry->workgroup_size, sizeof(d.workgroup_size));
	for (uint32_t z = 0; z < count[2]; z++)
		for (uint32_t y = 0; y < count[1]; y++)
			for (uint32_t x = 0; x < count[0]; x++) {
				d.workgroup_id[0] = x;
				d.workgroup_id[1] = y;
				d.workgroup_id[2] = z;
				entry->fn(&d);
			}
}

static int run_dispatch_indirect(struct accel_cb_exec *x,
				 const struct accel_cmd *cmd,
				 const struct accel_plan_ref *refs)
{
	uint32_t count[3];

	memcpy(count, ptr(refs[0].address), sizeof(count));
	for (int i = 0; i < 3; i++)
		if (count[i] > ACCEL_WORKGROUP_COUNT_MAX) {
			accel_strfmt(x->msg, x->msg_len,
				     "the workgroup count read from its buffer is (%u, %u, %u); each must be at most ACCEL_WORKGROUP_COUNT_MAX (%u)",
				     count[0], count[1], count[2], ACCEL_WORKGROUP_COUNT_MAX);
			return -ERANGE;
		}
	run_dispatch(cmd, refs + 1, count);
	return 0;
}

static int run_command(struct accel_cb_exec *x, const struct accel_cmd *cmd)
{
	const struct accel_plan_ref *refs =
		(const struct accel_plan_ref *)accel_cb_exec_params(x, cmd);

	switch (cmd->type) {
	case ACCEL_CMD_FILL:
		run_fill(cmd, &refs[0]);
		return 0;
	case ACCEL_CMD_UPDATE:
		memcpy(ptr(refs[0].address),
		       (const uint8_t *)x->cb->plan.data.data + cmd->data,
		       refs[0].length);
		return 0;
	case ACCEL_CMD_COPY:
		memmove(ptr(refs[1].address), ptr(refs[0].address), refs[0].length);
		return 0;
	case ACCEL_CMD_DISPATCH:
		run_dispatch(cmd, refs, cmd->dispatch.workgroup_count);
		return 0;
	case ACCEL_CMD_DISPATCH_INDIRECT:
		return run_dispatch_indirect(x, cmd, refs);
	case ACCEL_CMD_BARRIER:
		return 0;
	}
	accel_strfmt(x->msg, x->msg_len, "unknown command type %u", cmd->type);
	return -EINVAL;
}

int accel_cpu_execute(accel_device_t *d, struct accel_cb_exec *x)
{
	const struct accel_vec *cmds = &x->cb->plan.commands;
	size_t n = ACCEL_VEC_COUNT(cmds, struct accel_cmd);

	for (size_t i = 0; i < n; i++) {
		int err = run_command(x, &ACCEL_VEC_AT(cmds, struct accel_cmd, i));

		if (err) {
			x->failed_command = (uint32_t)i;
			return err;
		}
	}
	return 0;
}
