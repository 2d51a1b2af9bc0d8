// SPDX-License-Identifier: MIT
/*
 * vulkan command buffers: the translation of a recorded plan into a
 * program buffer and VkCommandBuffers (at accel_command_buffer_end()),
 * and the execution of a submission (vk.h has the model).
 *
 * The program buffer, written once at end and never again:
 *
 *   [0, P)        the plan's parameter blocks, verbatim (plan.h)
 *   [P, P + D)    the update payloads (plan.data)
 *   then          one direct struct accel_plan_ref per update: its source
 *   then          the check lists: per dispatch-indirect, in command order,
 *                 { u64 params address, u32 command, u32 count offset }
 *
 * The exec block of an instance (host-visible, written per submission):
 *
 *   [0, 16)       u32 status (UINT32_MAX: fine; else the failed command),
 *                 u32 bad count[3]
 *   [16, 16 + 16 * used_count)   the used slots (struct accel_plan_slot)
 *   then          per dispatch-indirect, its checked count (u32[3], 16 B)
 *   then          scratch space, as long as the longest copy with an
 *                 indirect ref (such a copy may overlap; copy.comp)
 *
 * Thread-safety: the translation is immutable after end; the free list
 * of instances is guarded by the command buffer's lock, so any number of
 * executors may run submissions of it at once.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "src/error.h"
#include "vk.h"

#define TRANSFER_WG 64u
#define TRANSFER_MAX_GROUPS 1024u
#define TRANSFER_UNKNOWN_GROUPS 1024u
#define CHECK_ENTRY 16u

/*
 * One recorded VkCommandBuffer and its exec block. While a submission runs
 * it, @x and @c say whose it is, for the completion.
 */
struct vk_instance {
	struct vk_flight flight; /* flight.cmd: the VkCommandBuffer */
	struct vk_instance *next_free;
	struct vk_instance *next;
	struct vk_memory exec;
	struct vk_cb *c;
	struct accel_cb_exec *x;
};

/* Per command: where its driver block is. */
struct vk_aux {
	uint32_t index;        /* update: its source ref; indirect: count k */
	uint32_t check_offset; /* segment start: its check list */
	uint32_t check_count;
};

struct vk_cb {
	struct vk_memory program;
	uint64_t exec_size;
	uint32_t counts_offset;
	uint32_t scratch_offset;
	struct vk_aux *aux;
	pthread_mutex_t lock;
	struct vk_instance *free;
	struct vk_instance *all;
};

static const struct accel_cmd *cmds_of(const accel_command_buffer_t *cb,
				       size_t *n)
{
	*n = ACCEL_VEC_COUNT(&cb->plan.commands, struct accel_cmd);
	return cb->plan.commands.data;
}

static const struct accel_plan_ref *refs_of(const accel_command_buffer_t *cb,
					    const struct accel_cmd *cmd)
{
	return (const struct accel_plan_ref *)((const uint8_t *)cb->plan.params.data +
					       cmd->params);
}

static uint64_t align16(uint64_t v)
{
	return (v + 15) & ~(uint64_t)15;
}

/* ---- the program buffer ------------------------------------------------ */

struct layout {
	uint64_t data;     /* payloads */
	uint64_t refs;     /* update source refs */
	uint64_t checks;   /* check lists */
	uint64_t size;
	uint32_t updates;
	uint32_t indirects;
	uint64_t scratch;  /* the longest copy with an indirect ref */
};

static void plan_layout(const accel_command_buffer_t *cb, struct layout *l)
{
	size_t n;
	const struct accel_cmd *cmds = cmds_of(cb, &n);

	memset(l, 0, sizeof(*l));
	for (size_t i = 0; i < n; i++) {
		l->updates += cmds[i].type == ACCEL_CMD_UPDATE;
		l->indirects += cmds[i].type == ACCEL_CMD_DISPATCH_INDIRECT;
		if (cmds[i].type == ACCEL_CMD_COPY && cmds[i].indirect &&
		    refs_of(cb, &cmds[i])[0].length > l->scratch)
			l->scratch = refs_of(cb, &cmds[i])[0].length;
	}
	l->data = align16(cb->plan.params.size);
	l->refs = align16(l->data + cb->plan.data.size);
	l->checks = align16(l->refs + (uint64_t)l->updates * sizeof(struct accel_plan_ref));
	l->size = l->checks + (uint64_t)l->indirects * CHECK_ENTRY;
}

/* Fills the driver blocks of the program and the per-command aux. */
static void write_program(const accel_command_buffer_t *cb, struct vk_cb *c,
			  const struct layout *l)
{
	uint8_t *p = c->program.host;
	uint64_t base = c->program.address;
	uint32_t u = 0, k = 0, seg = 0;
	size_t n;
	const struct accel_cmd *cmds = cmds_of(cb, &n);

	if (cb->plan.params.size) /* barriers only: no blocks, data NULL */
		memcpy(p, cb->plan.params.data, cb->plan.params.size);
	if (cb->plan.data.size)
		memcpy(p + l->data, cb->plan.data.data, cb->plan.data.size);
	for (size_t i = 0; i < n; i++) {
		const struct accel_cmd *cmd = &cmds[i];

		if (i == 0 || cmds[i - 1].type == ACCEL_CMD_BARRIER) {
			seg = (uint32_t)i;
			c->aux[seg].check_offset = (uint32_t)(l->checks + (uint64_t)k * CHECK_ENTRY);
		}
		if (cmd->type == ACCEL_CMD_UPDATE) {
			struct accel_plan_ref src = {
				.address = base + l->data + cmd->data,
				.length = refs_of(cb, cmd)[0].length,
				.slot = ACCEL_PLAN_DIRECT,
			};

			c->aux[i].index = (uint32_t)(l->refs + (uint64_t)u * sizeof(src));
			memcpy(p + c->aux[i].index, &src, sizeof(src));
			u++;
		} else if (cmd->type == ACCEL_CMD_DISPATCH_INDIRECT) {
			uint8_t *e = p + l->checks + (uint64_t)k * CHECK_ENTRY;
			uint64_t params = base + cmd->params;
			uint32_t command = (uint32_t)i;
			uint32_t offset = c->counts_offset + 16 * k;

			memcpy(e, &params, 8);
			memcpy(e + 8, &command, 4);
			memcpy(e + 12, &offset, 4);
			c->aux[i].index = k++;
			c->aux[seg].check_count++;
		}
	}
}

/* ---- recording ----------------------------------------------------------- */

struct recorder {
	struct vk_device *dev;
	const accel_command_buffer_t *cb;
	const struct vk_cb *c;
	struct vk_instance *inst;
	VkPipeline bound;
};

static void barrier(struct recorder *r, VkPipelineStageFlags dst_stage,
		    VkAccessFlags dst_access)
{
	VkMemoryBarrier mb = {
		.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
		.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT,
		.dstAccessMask = dst_access,
	};

	r->dev->f.vkCmdPipelineBarrier(r->inst->flight.cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
				       dst_stage, 0, 1, &mb, 0, NULL, 0, NULL);
}

static void compute_barrier(struct recorder *r)
{
	barrier(r, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_DRAW_INDIRECT_BIT,
		VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
		VK_ACCESS_INDIRECT_COMMAND_READ_BIT);
}

static void bind_push(struct recorder *r, VkPipeline pipeline,
		      const struct vk_push *push)
{
	const struct vk_funcs *f = &r->dev->f;

	if (r->bound != pipeline) {
		f->vkCmdBindPipeline(r->inst->flight.cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
		r->bound = pipeline;
	}
	f->vkCmdPushConstants(r->inst->flight.cmd, r->dev->layout, VK_SHADER_STAGE_COMPUTE_BIT,
			      0, sizeof(*push), push);
}

/* Workgroups of a transfer of @length bytes (UINT64_MAX: unknown). */
static uint32_t transfer_groups(uint64_t length)
{
	uint64_t words, groups;

	if (length == ACCEL_WHOLE_BUFFER)
		return TRANSFER_UNKNOWN_GROUPS;
	words = length / 4 + 2;
	groups = (words + TRANSFER_WG - 1) / TRANSFER_WG;
	return groups > TRANSFER_MAX_GROUPS ? TRANSFER_MAX_GROUPS : (uint32_t)groups;
}

static uint32_t pattern_word(const struct accel_cmd *cmd)
{
	if (cmd->pattern_length == 1)
		return (cmd->pattern & 0xff) * 0x01010101u;
	if (cmd->pattern_length == 2)
		return (cmd->pattern & 0xffff) * 0x00010001u;
	return cmd->pattern;
}

static void record_command(struct recorder *r, size_t i,
			   const struct accel_cmd *cmd)
{
	const struct vk_funcs *f = &r->dev->f;
	const struct accel_plan_ref *refs = refs_of(r->cb, cmd);
	uint64_t base = r->c->program.address, params = base + cmd->params;
	struct vk_push push = { .exec = r->inst->exec.address };
	const struct vk_entry *entry;
	const uint32_t *wg;

	switch (cmd->type) {
	case ACCEL_CMD_FILL:
		if (refs[0].length == 0)
			return;
		push.params = params;
		push.word = pattern_word(cmd);
		bind_push(r, r->dev->builtin[VK_BUILTIN_FILL], &push);
		f->vkCmdDispatch(r->inst->flight.cmd, transfer_groups(refs[0].length), 1, 1);
		return;
	case ACCEL_CMD_UPDATE:
		if (refs[0].length == 0)
			return;
		push.params = base + r->c->aux[i].index;
		push.arg = params;
		push.word = VK_COPY_DIRECT;
		bind_push(r, r->dev->builtin[VK_BUILTIN_COPY], &push);
		f->vkCmdDispatch(r->inst->flight.cmd, transfer_groups(refs[0].length), 1, 1);
		return;
	case ACCEL_CMD_COPY:
		if (refs[0].length == 0)
			return;
		push.params = params;
		push.arg = params + sizeof(*refs);
		push.word = cmd->indirect ? VK_COPY_PASS1 : VK_COPY_DIRECT;
		push.scratch = r->c->scratch_offset;
		bind_push(r, r->dev->builtin[VK_BUILTIN_COPY], &push);
		f->vkCmdDispatch(r->inst->flight.cmd, transfer_groups(refs[0].length), 1, 1);
		if (!cmd->indirect)
			return;
		compute_barrier(r);
		push.word = VK_COPY_PASS2;
		bind_push(r, r->dev->builtin[VK_BUILTIN_COPY], &push);
		f->vkCmdDispatch(r->inst->flight.cmd, transfer_groups(refs[0].length), 1, 1);
		return;
	case ACCEL_CMD_DISPATCH:
		wg = cmd->dispatch.workgroup_count;
		if (!wg[0] || !wg[1] || !wg[2])
			return;
		entry = cmd->dispatch.export->fn;
		push.params = params;
		bind_push(r, entry->pipeline, &push);
		f->vkCmdDispatch(r->inst->flight.cmd, wg[0], wg[1], wg[2]);
		return;
	case ACCEL_CMD_DISPATCH_INDIRECT:
		entry = cmd->dispatch.export->fn;
		push.params = params + sizeof(*refs); /* ref 0 is the count */
		bind_push(r, entry->pipeline, &push);
		f->vkCmdDispatchIndirect(r->inst->flight.cmd, r->inst->exec.buffer,
					 r->c->counts_offset + 16 * r->c->aux[i].index);
		return;
	case ACCEL_CMD_BARRIER:
		compute_barrier(r);
		return;
	}
}

/* The check dispatch at the start of the segment at command @i, if any. */
static void record_checks(struct recorder *r, size_t i)
{
	const struct vk_aux *a = &r->c->aux[i];
	struct vk_push push = {
		.exec = r->inst->exec.address,
		.arg = r->c->program.address + a->check_offset,
		.word = a->check_count,
	};

	if (!a->check_count)
		return;
	bind_push(r, r->dev->builtin[VK_BUILTIN_CHECK_COUNTS], &push);
	r->dev->f.vkCmdDispatch(r->inst->flight.cmd, 1, 1, 1);
	compute_barrier(r);
}

/* Records @inst->flight.cmd; the device's pool lock is held. */
static VkResult record(struct vk_device *dev, const accel_command_buffer_t *cb,
		       const struct vk_cb *c, struct vk_instance *inst)
{
	VkCommandBufferBeginInfo bi = {
		.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
	};
	struct recorder r = { dev, cb, c, inst, VK_NULL_HANDLE };
	size_t n;
	const struct accel_cmd *cmds = cmds_of(cb, &n);
	VkResult res = dev->f.vkBeginCommandBuffer(inst->flight.cmd, &bi);

	if (res != VK_SUCCESS)
		return res;
	for (size_t i = 0; i < n; i++) {
		if (i == 0 || cmds[i - 1].type == ACCEL_CMD_BARRIER)
			record_checks(&r, i);
		record_command(&r, i, &cmds[i]);
	}
	barrier(&r, VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
	return dev->f.vkEndCommandBuffer(inst->flight.cmd);
}

static void instance_free(struct vk_device *dev, struct vk_instance *inst)
{
	if (inst->flight.cmd) {
		pthread_mutex_lock(&dev->pool_lock);
		dev->f.vkFreeCommandBuffers(dev->device, dev->pool, 1, &inst->flight.cmd);
		pthread_mutex_unlock(&dev->pool_lock);
	}
	vk_memory_free(dev, &inst->exec);
	free(inst);
}

/* A new instance: its exec block and its recorded VkCommandBuffer. */
static int instance_new(struct vk_device *dev, const accel_command_buffer_t *cb,
			struct vk_cb *c, const char *fn, struct vk_instance **out)
{
	VkCommandBufferAllocateInfo ai = {
		.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
		.commandPool = dev->pool,
		.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
		.commandBufferCount = 1,
	};
	struct vk_instance *inst = calloc(1, sizeof(*inst));
	VkResult r;
	int err;

	if (!inst)
		return accel_fail(ENOMEM, "%s: out of memory", fn);
	err = vk_memory_alloc(dev, c->exec_size,
			      VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
			      VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, &inst->exec, fn);
	if (err) {
		free(inst);
		return err;
	}
	pthread_mutex_lock(&dev->pool_lock);
	r = dev->f.vkAllocateCommandBuffers(dev->device, &ai, &inst->flight.cmd);
	if (r == VK_SUCCESS)
		r = record(dev, cb, c, inst);
	else
		inst->flight.cmd = VK_NULL_HANDLE;
	pthread_mutex_unlock(&dev->pool_lock);
	if (r != VK_SUCCESS) {
		instance_free(dev, inst);
		return vk_fail(r, fn, "recording the VkCommandBuffer");
	}
	pthread_mutex_lock(&c->lock);
	inst->next = c->all;
	c->all = inst;
	pthread_mutex_unlock(&c->lock);
	*out = inst;
	return 0;
}

static void vk_cb_free(struct vk_device *dev, struct vk_cb *c)
{
	while (c->all) {
		struct vk_instance *inst = c->all;

		c->all = inst->next;
		instance_free(dev, inst);
	}
	vk_memory_free(dev, &c->program);
	pthread_mutex_destroy(&c->lock);
	free(c->aux);
	free(c);
}

int vk_command_buffer_end(accel_device_t *d, accel_command_buffer_t *cb)
{
	static const char fn[] = "accel_command_buffer_end";
	struct vk_device *dev = (struct vk_device *)d;
	struct vk_instance *inst;
	struct layout l;
	struct vk_cb *c;
	size_t n;
	int err;

	cmds_of(cb, &n);
	if (n == 0)
		return 0; /* nothing to run: no translation */
	plan_layout(cb, &l);
	c = calloc(1, sizeof(*c));
	if (c)
		c->aux = calloc(n, sizeof(*c->aux));
	if (!c || !c->aux) {
		free(c);
		return accel_fail(ENOMEM, "%s: out of memory", fn);
	}
	pthread_mutex_init(&c->lock, NULL);
	c->counts_offset = VK_EXEC_HEADER + 16 * cb->plan.used_count;
	c->scratch_offset = c->counts_offset + 16 * l.indirects;
	c->exec_size = c->scratch_offset + l.scratch;
	err = vk_memory_alloc(dev, l.size,
			      VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
			      VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, &c->program, fn);
	if (!err) {
		write_program(cb, c, &l);
		err = instance_new(dev, cb, c, fn, &inst);
	}
	if (err) {
		vk_cb_free(dev, c);
		return err;
	}
	c->free = inst;
	cb->driver = c;
	return 0;
}

void vk_command_buffer_destroy(accel_device_t *d, accel_command_buffer_t *cb)
{
	if (cb->driver)
		vk_cb_free((struct vk_device *)d, cb->driver);
	cb->driver = NULL;
}

/* ---- execution ------------------------------------------------------------ */

static int instance_get(struct vk_device *dev, const accel_command_buffer_t *cb,
			struct vk_cb *c, struct vk_instance **out)
{
	pthread_mutex_lock(&c->lock);
	*out = c->free;
	if (*out)
		c->free = (*out)->next_free;
	pthread_mutex_unlock(&c->lock);
	if (*out)
		return 0;
	/* Another submission of this command buffer is running: one more. */
	return instance_new(dev, cb, c, "executing the command buffer", out);
}

static void instance_put(struct vk_cb *c, struct vk_instance *inst)
{
	pthread_mutex_lock(&c->lock);
	inst->next_free = c->free;
	c->free = inst;
	pthread_mutex_unlock(&c->lock);
}

/* The status the shaders left: 0, or -ERANGE naming the command. */
static int read_status(const accel_command_buffer_t *cb,
		       const struct vk_instance *inst, struct accel_cb_exec *x)
{
	const volatile uint32_t *st = inst->exec.host;
	size_t n;

	cmds_of(cb, &n);
	if (st[0] == VK_STATUS_OK)
		return 0;
	if (st[0] >= n) {
		accel_strfmt(x->msg, x->msg_len, "the device left an invalid status word 0x%x",
			     st[0]);
		return -EIO;
	}
	x->failed_command = st[0];
	accel_strfmt(x->msg, x->msg_len,
		     "the workgroup count read from its buffer is (%u, %u, %u); each must be at most ACCEL_WORKGROUP_COUNT_MAX (%u)",
		     st[1], st[2], st[3], ACCEL_WORKGROUP_COUNT_MAX);
	return -ERANGE;
}

/* The device finished @f: the status it left, then the submission's done. */
static void instance_complete(struct vk_flight *f, int status, const char *msg)
{
	struct vk_instance *inst = container_of(f, struct vk_instance, flight);
	struct accel_cb_exec *x = inst->x;
	struct vk_cb *c = inst->c;
	char what[ACCEL_FAILURE_MAX / 2] = "";

	if (!status) {
		x->msg = what; /* ->execute's buffer is gone */
		x->msg_len = sizeof(what);
		status = read_status(x->cb, inst, x);
		msg = what;
	}
	x->device_ns = f->device_ns;
	inst->x = NULL;
	instance_put(c, inst); /* before done: it may free the command buffer */
	x->done(x, status, msg);
}

/* On the device: the submission's signals are promised there. */
static void instance_submitted(struct vk_flight *f)
{
	struct vk_instance *inst = container_of(f, struct vk_instance, flight);

	inst->x->on_device(inst->x, f->value);
}

int vk_execute(accel_device_t *d, struct accel_cb_exec *x)
{
	struct vk_device *dev = (struct vk_device *)d;
	const accel_command_buffer_t *cb = x->cb;
	struct vk_cb *c = cb->driver;
	struct vk_instance *inst;
	uint32_t *exec;
	int err;

	if (!c)
		return 0;
	err = instance_get(dev, cb, c, &inst);
	if (err) {
		accel_strfmt(x->msg, x->msg_len, "%s", accel_error_message());
		return err;
	}
	/* The one upload of a submission: the status word and the slots. */
	exec = inst->exec.host;
	exec[0] = VK_STATUS_OK;
	if (cb->plan.used_count)
		memcpy(exec + VK_EXEC_HEADER / 4, x->slots,
		       cb->plan.used_count * sizeof(struct accel_plan_slot));
	inst->c = c;
	inst->x = x;
	inst->flight.complete = instance_complete;
	inst->flight.wait_value = x->device_wait;
	inst->flight.submitted = x->on_device ? instance_submitted : NULL;
	err = vk_flight_submit(dev, &inst->flight, x->msg, x->msg_len);
	if (err) {
		inst->x = NULL;
		instance_put(c, inst);
		return err;
	}
	return ACCEL_JOB_PENDING; /* instance_complete() finishes it */
}
