// SPDX-License-Identifier: MIT
/*
 * cuda and hip command buffers: a program (gpu_program.h, built once at
 * accel_command_buffer_end()) made into graphs, and the execution of a
 * submission. This file is the thin layer: every decision was taken by
 * the translation; here each node becomes one driver call.
 *
 * An *instance* is what one in-flight submission uses: the region (device
 * memory: parameter blocks, payloads, slot table, scatter entries), a
 * pinned staging copy of the slot table, and one instantiated graph per
 * part, whose kernel nodes hold region addresses. The first instance is
 * made at end; another only when that many submissions of the command
 * buffer run at the same moment (from several queues), as on vulkan.
 *
 * A submission, on the device's stream:
 *   1. the slot table, copied into the staging memory, then one
 *      host-to-device copy into the region (when some kernel reads an
 *      indirect ref); the graph's first node, the scatter kernel, writes
 *      the resolved bindings into the parameter blocks;
 *   2. per step: cuGraphLaunch, or, for a dispatch-indirect, a stream
 *      synchronisation, the 12-byte count read back, checked, and the
 *      kernel launched directly (skipped for a zero count);
 *   3. its completion enqueued (gpu_flight.c): an event recorded after
 *      the work, a host function behind it on the completion stream that
 *      wakes the device's completion thread, which checks the event for an
 *      error of the work and completes the submission. The executor does
 *      not wait: it returns ACCEL_JOB_PENDING and goes on.
 * So a command buffer without dispatch-indirect costs a constant number
 * of driver calls per submission, whatever its command count.
 *
 * The translation it consumes is tested on the CPU (tests/unit/test-gpu.c);
 * the driver calls of this file run in the cuda-* suites, which need a GPU
 * (Documentation/gpu.rst lists the GPU runs).
 *
 * Thread-safety: after end, the command buffer is immutable but for its
 * instance list, guarded by its lock.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "src/error.h"
#include "gpu.h"

struct gpu_cb;

struct gpu_instance {
	struct gpu_instance *next_free;
	struct gpu_instance *next;
	struct gpu_flight flight;   /* while in flight: */
	struct accel_cb_exec *x;
	struct gpu_cb *c;
	uint64_t region;
	void *staging;
	void **graphs;
	void **execs;
};

struct gpu_cb {
	struct gpu_program prog;
	pthread_mutex_t lock;
	struct gpu_instance *free;
	struct gpu_instance *all;
};

static void *node_function(const struct gpu_device *dev,
			   const accel_command_buffer_t *cb,
			   const struct gpu_node *n)
{
	const struct accel_cmd *cmds = cb->plan.commands.data;
	const struct gpu_entry *e;

	switch (n->kind) {
	case GPU_NODE_FILL:
		return dev->builtin[GPU_BUILTIN_FILL];
	case GPU_NODE_COPY:
		return dev->builtin[GPU_BUILTIN_COPY];
	case GPU_NODE_SCATTER:
		return dev->builtin[GPU_BUILTIN_SCATTER];
	default:
		e = cmds[n->command].dispatch.export->fn;
		return e->function;
	}
}

/* The context is current. */
static void instance_free(struct gpu_device *dev, const struct gpu_cb *c,
			  struct gpu_instance *inst)
{
	const struct gpu_api *api = dev->api;

	for (uint32_t p = 0; p < c->prog.part_count; p++) {
		if (inst->execs && inst->execs[p])
			api->graph_exec_destroy(inst->execs[p]);
		if (inst->graphs && inst->graphs[p])
			api->graph_destroy(inst->graphs[p]);
	}
	if (inst->staging)
		api->host_free(inst->staging);
	if (inst->region)
		api->mem_free(inst->region);
	free(inst->graphs);
	free(inst->execs);
	free(inst);
}

/* Adds the nodes of part @part to @graph; @handles is per node. */
static int add_nodes(struct gpu_device *dev, const accel_command_buffer_t *cb,
		     const struct gpu_cb *c, const struct gpu_instance *inst,
		     uint32_t part, void *graph, void **handles)
{
	const struct gpu_program *p = &c->prog;
	void *deps[64], **dv = deps;
	int r = 0;

	for (uint32_t i = 0; !r && i < p->node_count; i++) {
		const struct gpu_node *n = &p->nodes[i];
		uint64_t params = inst->region + n->params;
		void *args[1] = { &params };

		if (n->part != part)
			continue;
		dv = n->dep_count <= 64 ? deps : malloc(n->dep_count * sizeof(void *));
		if (!dv)
			return accel_fail(ENOMEM, "accel_command_buffer_end: out of memory");
		for (uint32_t d = 0; d < n->dep_count; d++)
			dv[d] = handles[p->deps[n->dep_first + d]];
		if (n->kind == GPU_NODE_JOIN)
			r = dev->api->graph_add_empty_node(&handles[i], graph, dv, n->dep_count);
		else /* the driver copies the argument values now */
			r = dev->be->add_kernel_node(dev->api, &handles[i], graph, dv,
						     n->dep_count, node_function(dev, cb, n),
						     n->grid, n->block, args);
		if (dv != deps)
			free(dv);
	}
	return r ? gpu_fail(dev, r, "accel_command_buffer_end", "adding a graph node") : 0;
}

static int make_graphs(struct gpu_device *dev, const accel_command_buffer_t *cb,
		       const struct gpu_cb *c, struct gpu_instance *inst)
{
	const struct gpu_program *p = &c->prog;
	void **handles = calloc(p->node_count ? p->node_count : 1, sizeof(void *));
	int r, err = 0;

	if (!handles)
		return accel_fail(ENOMEM, "accel_command_buffer_end: out of memory");
	for (uint32_t part = 0; !err && part < p->part_count; part++) {
		r = dev->api->graph_create(&inst->graphs[part], 0);
		if (r) {
			inst->graphs[part] = NULL;
			err = gpu_fail(dev, r, "accel_command_buffer_end", "creating a graph");
			break;
		}
		err = add_nodes(dev, cb, c, inst, part, inst->graphs[part], handles);
		if (err)
			break;
		r = dev->api->graph_instantiate(&inst->execs[part], inst->graphs[part], 0);
		if (r) {
			inst->execs[part] = NULL;
			err = gpu_fail(dev, r, "accel_command_buffer_end", "instantiating a graph");
		}
	}
	free(handles);
	return err;
}

/* The region's contents, relocated to its address, uploaded once. */
static int upload_image(struct gpu_device *dev, const struct gpu_cb *c,
			struct gpu_instance *inst, const char *fn)
{
	const struct gpu_program *p = &c->prog;
	uint8_t *image = malloc(p->layout.size);
	int r;

	if (!image)
		return accel_fail(ENOMEM, "%s: out of memory", fn);
	gpu_program_relocate(p, inst->region, image);
	pthread_mutex_lock(&dev->submit_lock);
	r = dev->api->memcpy_htod_async(inst->region, image, p->layout.size, dev->stream);
	if (!r)
		r = dev->api->stream_synchronize(dev->stream);
	pthread_mutex_unlock(&dev->submit_lock);
	free(image);
	return r ? gpu_fail(dev, r, fn, "uploading the parameter blocks") : 0;
}

/* A new instance; the context is current. */
static int instance_new(struct gpu_device *dev, const accel_command_buffer_t *cb,
			struct gpu_cb *c, const char *fn, struct gpu_instance **out)
{
	const struct gpu_program *p = &c->prog;
	struct gpu_instance *inst = calloc(1, sizeof(*inst));
	size_t table = sizeof(struct accel_plan_slot) * (p->binding_count ? p->binding_count : 1);
	int r, err;

	if (inst) {
		inst->graphs = calloc(p->part_count + 1, sizeof(void *));
		inst->execs = calloc(p->part_count + 1, sizeof(void *));
	}
	if (!inst || !inst->graphs || !inst->execs) {
		if (inst)
			instance_free(dev, c, inst);
		return accel_fail(ENOMEM, "%s: out of memory", fn);
	}
	r = dev->api->mem_alloc(&inst->region, p->layout.size);
	if (!r && p->entry_count)
		r = dev->api->host_alloc(&inst->staging, table, GPU_HOST_ALLOC_PORTABLE);
	err = r ? gpu_fail(dev, r, fn, "allocating a command buffer's memory") :
		  upload_image(dev, c, inst, fn);
	if (!err)
		err = make_graphs(dev, cb, c, inst);
	if (err) {
		instance_free(dev, c, inst);
		return err;
	}
	pthread_mutex_lock(&c->lock);
	inst->next = c->all;
	c->all = inst;
	pthread_mutex_unlock(&c->lock);
	*out = inst;
	return 0;
}

static void cb_free(struct gpu_device *dev, struct gpu_cb *c)
{
	while (c->all) {
		struct gpu_instance *inst = c->all;

		c->all = inst->next;
		instance_free(dev, c, inst);
	}
	gpu_program_free(&c->prog);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

int gpu_command_buffer_end(accel_device_t *d, accel_command_buffer_t *cb)
{
	static const char fn[] = "accel_command_buffer_end";
	struct gpu_device *dev = (struct gpu_device *)d;
	struct gpu_instance *inst;
	struct gpu_cb *c = calloc(1, sizeof(*c));
	int err;

	if (!c)
		return accel_fail(ENOMEM, "%s: out of memory", fn);
	pthread_mutex_init(&c->lock, NULL);
	err = gpu_program_build(&cb->plan, &c->prog, fn);
	if (err) {
		pthread_mutex_destroy(&c->lock);
		free(c);
		return err;
	}
	if (!c->prog.node_count) { /* nothing to run: no translation */
		gpu_program_free(&c->prog);
		pthread_mutex_destroy(&c->lock);
		free(c);
		return 0;
	}
	err = gpu_enter(dev, fn);
	if (!err) {
		err = instance_new(dev, cb, c, fn, &inst);
		if (err)
			cb_free(dev, c);
		gpu_leave(dev);
	} else {
		gpu_program_free(&c->prog);
		pthread_mutex_destroy(&c->lock);
		free(c);
	}
	if (err)
		return err;
	c->free = inst;
	cb->driver = c;
	return 0;
}

void gpu_command_buffer_destroy(accel_device_t *d, accel_command_buffer_t *cb)
{
	struct gpu_device *dev = (struct gpu_device *)d;

	if (!cb->driver)
		return;
	if (!gpu_enter(dev, "accel_command_buffer_release")) {
		cb_free(dev, cb->driver);
		gpu_leave(dev);
	}
	cb->driver = NULL;
}

/* ---- execution ----------------------------------------------------------- */

int gpu_event_get(struct gpu_device *dev, void **ev)
{
	struct gpu_event_pool *pool = &dev->events;
	int r;

	pthread_mutex_lock(&pool->lock);
	*ev = pool->count ? pool->free[--pool->count] : NULL;
	pthread_mutex_unlock(&pool->lock);
	if (*ev)
		return 0;
	/* Timing on: a flight's two events give its device time. */
	r = dev->api->event_create(ev, 0);
	if (r)
		*ev = NULL;
	return r;
}

void gpu_event_put(struct gpu_device *dev, void *ev)
{
	struct gpu_event_pool *pool = &dev->events;
	void **grown;

	pthread_mutex_lock(&pool->lock);
	if (pool->count == pool->cap) {
		grown = realloc(pool->free, (pool->cap * 2 + 4) * sizeof(void *));
		if (!grown) {
			pthread_mutex_unlock(&pool->lock);
			dev->api->event_destroy(ev);
			return;
		}
		pool->free = grown;
		pool->cap = pool->cap * 2 + 4;
	}
	pool->free[pool->count++] = ev;
	pthread_mutex_unlock(&pool->lock);
}

static int instance_get(struct gpu_device *dev, const accel_command_buffer_t *cb,
			struct gpu_cb *c, struct gpu_instance **out)
{
	pthread_mutex_lock(&c->lock);
	*out = c->free;
	if (*out)
		c->free = (*out)->next_free;
	pthread_mutex_unlock(&c->lock);
	if (*out)
		return 0;
	/* another submission of this command buffer is running: one more */
	return instance_new(dev, cb, c, "executing the command buffer", out);
}

static void instance_put(struct gpu_cb *c, struct gpu_instance *inst)
{
	pthread_mutex_lock(&c->lock);
	inst->next_free = c->free;
	c->free = inst;
	pthread_mutex_unlock(&c->lock);
}

/* The host read-back of a dispatch-indirect: its count, then its launch. */
static int launch_indirect(struct gpu_device *dev, const struct gpu_cb *c,
			   const struct gpu_instance *inst,
			   struct accel_cb_exec *x, const struct gpu_node *n)
{
	const accel_command_buffer_t *cb = x->cb;
	const struct accel_plan_ref *ref = (const struct accel_plan_ref *)
		((const uint8_t *)cb->plan.params.data + n->count_ref);
	uint64_t params = inst->region + n->params, address, length;
	void *args[1] = { &params };
	uint32_t count[3];
	int r;

	accel_plan_ref_resolve(ref, x->slots, &address, &length);
	r = dev->api->stream_synchronize(dev->stream);
	if (!r)
		r = dev->api->memcpy_dtoh(count, address, sizeof(count));
	if (r)
		return gpu_fail(dev, r, "accel_queue_execute", "reading a workgroup count");
	if (count[0] > ACCEL_WORKGROUP_COUNT_MAX || count[1] > ACCEL_WORKGROUP_COUNT_MAX ||
	    count[2] > ACCEL_WORKGROUP_COUNT_MAX) {
		x->failed_command = n->command;
		return accel_fail(ERANGE,
			"the workgroup count read from its buffer is (%u, %u, %u); each must be at most ACCEL_WORKGROUP_COUNT_MAX (%u)",
			count[0], count[1], count[2], ACCEL_WORKGROUP_COUNT_MAX);
	}
	if (!count[0] || !count[1] || !count[2])
		return 0;
	r = dev->api->launch_kernel(node_function(dev, cb, n), count[0], count[1], count[2],
				    n->block[0], n->block[1], n->block[2], 0,
				    dev->stream, args, NULL);
	return r ? gpu_fail(dev, r, "accel_queue_execute", "launching a dispatch-indirect") : 0;
}

/* Enqueues the submission's work; the submit lock is held. */
static int enqueue(struct gpu_device *dev, const struct gpu_cb *c,
		   struct gpu_instance *inst, struct accel_cb_exec *x)
{
	const struct gpu_program *p = &c->prog;
	size_t table = sizeof(struct accel_plan_slot) * p->binding_count;
	int r = 0, err = 0;

	if (p->entry_count) {
		memcpy(inst->staging, x->slots, table);
		r = dev->api->memcpy_htod_async(inst->region + p->layout.slots,
						inst->staging, table, dev->stream);
	}
	for (uint32_t i = 0; !r && !err && i < p->step_count; i++) {
		const struct gpu_step *s = &p->steps[i];

		if (s->kind == GPU_STEP_GRAPH)
			r = dev->api->graph_launch(inst->execs[s->index], dev->stream);
		else
			err = launch_indirect(dev, c, inst, x, &p->nodes[s->index]);
	}
	if (r)
		err = gpu_fail(dev, r, "accel_queue_execute", "launching the command buffer");
	return err;
}

/* The device finished the submission: the instance back, then done. */
static void instance_complete(struct gpu_flight *f, int status, const char *msg)
{
	struct gpu_instance *inst = container_of(f, struct gpu_instance, flight);
	struct accel_cb_exec *x = inst->x;
	struct gpu_cb *c = inst->c;

	inst->x = NULL;
	x->device_ns = f->device_ns;
	instance_put(c, inst); /* before done: it may free the command buffer */
	x->done(x, status, msg);
}

/* On the stream: the submission's signals are promised there. */
static void instance_submitted(struct gpu_flight *f, uint64_t token)
{
	struct gpu_instance *inst = container_of(f, struct gpu_instance, flight);

	inst->x->on_device(inst->x, token);
}

/*
 * The flight's start event, recorded on the stream before its work, so
 * that its device time is the stream's, from when the work could begin
 * to its end, not the host's wake-ups around it. Without one (no event
 * to be had) the time is the host's, as the executor measures it.
 */
static void flight_start(struct gpu_device *dev, struct gpu_flight *f)
{
	f->device_ns = 0;
	if (gpu_event_get(dev, &f->start)) {
		f->start = NULL;
		return;
	}
	if (dev->api->event_record(f->start, dev->stream)) {
		gpu_event_put(dev, f->start);
		f->start = NULL;
	}
}

int gpu_execute(accel_device_t *d, struct accel_cb_exec *x)
{
	struct gpu_device *dev = (struct gpu_device *)d;
	struct gpu_cb *c = x->cb->driver;
	struct gpu_instance *inst;
	int err;

	if (!c)
		return 0;
	err = gpu_enter(dev, "accel_queue_execute");
	if (err)
		goto out;
	err = instance_get(dev, x->cb, c, &inst);
	if (!err) {
		inst->x = x;
		inst->c = c;
		inst->flight.complete = instance_complete;
		inst->flight.submitted = x->on_device ? instance_submitted : NULL;
		pthread_mutex_lock(&dev->submit_lock);
		flight_start(dev, &inst->flight);
		err = enqueue(dev, c, inst, x);
		if (!err)
			err = gpu_flight_enqueue(dev, &inst->flight);
		if (err)
			dev->api->stream_synchronize(dev->stream);
		pthread_mutex_unlock(&dev->submit_lock);
		if (err) {
			if (inst->flight.start)
				gpu_event_put(dev, inst->flight.start);
			inst->flight.start = NULL;
			inst->x = NULL;
			instance_put(c, inst);
		}
	}
	gpu_leave(dev);
	if (!err)
		return ACCEL_JOB_PENDING; /* instance_complete() finishes it */
out:
	accel_strfmt(x->msg, x->msg_len, "%s", accel_error_message());
	return err;
}
