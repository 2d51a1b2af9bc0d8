// SPDX-License-Identifier: MIT
/*
 * Queues and submissions.
 *
 * accel_queue_execute() validates everything (lists, command buffer state,
 * the binding table against the plan), captures the table (the base and
 * length of each used slot, plus a reference to each buffer it names), and
 * hands a job to the scheduler: O(points + used slots) host work and one
 * allocation, whatever the number of commands. The job's execute callback
 * replays the command buffer through the device's driver on the queue's
 * executor; its destroy drops every reference the submission held.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "error.h"

/*
 * struct submission - one accel_queue_execute(), in one allocation: the
 * struct, then @points, @slots and @buffers.
 */
struct submission {
	struct accel_sched_job job;
	struct accel_cb_exec exec;        /* the driver's view of it */
	accel_queue_t *queue;
	accel_command_buffer_t *cb;
	struct accel_plan_slot *slots;    /* [cb->plan.used_count] */
	accel_buffer_t **buffers;         /* [cb->plan.used_count] */
	uint32_t buffer_count;
	struct accel_sched_point *points; /* waits, then signals */
	struct accel_drain *drains[2];    /* the queue's and device's (drain.c) */
};

static const char *const priority_names[] = {
	[ACCEL_QUEUE_PRIORITY_NORMAL] = "NORMAL",
	[ACCEL_QUEUE_PRIORITY_HIGH] = "HIGH",
	[ACCEL_QUEUE_PRIORITY_LOW] = "LOW",
};

static const uint32_t priority_class[] = {
	[ACCEL_QUEUE_PRIORITY_NORMAL] = ACCEL_SCHED_PRIO_NORMAL,
	[ACCEL_QUEUE_PRIORITY_HIGH] = ACCEL_SCHED_PRIO_HIGH,
	[ACCEL_QUEUE_PRIORITY_LOW] = ACCEL_SCHED_PRIO_LOW,
};

/* Bytes of a larger (later) options struct that this library ignores. */
static int check_tail(const accel_queue_options_t *o, const char *fn)
{
	const uint8_t *p = (const uint8_t *)o;

	for (uint32_t i = sizeof(*o); i < o->size; i++)
		if (p[i])
			return accel_fail(EINVAL,
				"%s: options->size is %u and byte %u is not zero; this library knows the first %zu bytes of accel_queue_options_t, later fields must be zero",
				fn, o->size, i, sizeof(*o));
	return 0;
}

/* The hardware queues of a device: one (bit 0) on every backend today. */
#define DEVICE_QUEUE_MASK UINT64_C(1)

/* Validates @o into @params; -EINVAL naming the field otherwise. */
static int check_options(const accel_queue_options_t *o,
			 struct accel_sched_queue_params *params,
			 const char *fn)
{
	if (o->size < ACCEL_QUEUE_OPTIONS_SIZE_V1)
		return accel_fail(EINVAL,
			"%s: options->size is %u; it must be at least %u (set it to sizeof(accel_queue_options_t), or use ACCEL_QUEUE_OPTIONS_INIT)",
			fn, o->size, ACCEL_QUEUE_OPTIONS_SIZE_V1);
	if (o->size > sizeof(*o) && check_tail(o, fn))
		return -EINVAL;
	if (o->flags)
		return accel_fail(EINVAL, "%s: options->flags is 0x%x; no flags are defined, pass 0",
				  fn, o->flags);
	if (o->priority >= ACCEL_ARRAY_SIZE(priority_names))
		return accel_fail(EINVAL,
			"%s: options->priority is %u; it must be ACCEL_QUEUE_PRIORITY_NORMAL (0), _HIGH (1) or _LOW (2)",
			fn, o->priority);
	if (o->weight > ACCEL_QUEUE_WEIGHT_MAX)
		return accel_fail(EINVAL,
			"%s: options->weight is %u; it must be in %u..%u (0 takes the default, %u)",
			fn, o->weight, ACCEL_QUEUE_WEIGHT_MIN, ACCEL_QUEUE_WEIGHT_MAX,
			ACCEL_QUEUE_WEIGHT_DEFAULT);
	if (o->affinity && !(o->affinity & DEVICE_QUEUE_MASK))
		return accel_fail(EINVAL,
			"%s: options->affinity is 0x%" PRIx64 "; the device has 1 hardware queue, so the mask must include bit 0 (0x1), or be 0 or ACCEL_QUEUE_AFFINITY_ANY",
			fn, o->affinity);
	params->caller = fn;
	params->priority = priority_class[o->priority];
	params->weight = o->weight ? o->weight : ACCEL_QUEUE_WEIGHT_DEFAULT;
	params->affinity = o->affinity ? o->affinity & DEVICE_QUEUE_MASK : DEVICE_QUEUE_MASK;
	return 0;
}

static int queue_create(accel_device_t *device,
			const struct accel_sched_queue_params *params,
			accel_queue_t **out)
{
	accel_scheduler_t *s = device->scheduler;
	accel_queue_t *q = calloc(1, sizeof(*q));
	int err;

	if (!q)
		return accel_fail(ENOMEM, "%s: out of memory", params->caller);
	err = s->ops->executor_create(s, device->uri, params, &q->executor);
	if (err) {
		free(q);
		return err;
	}
	accel_ref_init(&q->ref);
	accel_device_retain(device);
	q->device = device;
	atomic_init(&q->next_submission, 1);
	*out = q;
	return 0;
}

ACCEL_EXPORT int accel_queue_create(accel_device_t *device, uint32_t flags,
				    accel_queue_t **out)
{
	const accel_queue_options_t o = ACCEL_QUEUE_OPTIONS_INIT;
	struct accel_sched_queue_params params;
	const char *fn = "accel_queue_create";

	if (!out)
		return accel_fail(EINVAL, "%s: out is NULL", fn);
	*out = NULL;
	if (!device)
		return accel_fail(EINVAL, "%s: device is NULL", fn);
	if (flags)
		return accel_fail(EINVAL, "%s: flags 0x%x: no flags are defined; pass 0", fn, flags);
	check_options(&o, &params, fn);
	return queue_create(device, &params, out);
}

ACCEL_EXPORT int accel_queue_create_with_options(accel_device_t *device,
						 const accel_queue_options_t *options,
						 accel_queue_t **out)
{
	const accel_queue_options_t defaults = ACCEL_QUEUE_OPTIONS_INIT;
	struct accel_sched_queue_params params;
	const char *fn = "accel_queue_create_with_options";
	int err;

	if (!out)
		return accel_fail(EINVAL, "%s: out is NULL", fn);
	*out = NULL;
	if (!device)
		return accel_fail(EINVAL, "%s: device is NULL", fn);
	err = check_options(options ? options : &defaults, &params, fn);
	return err ? err : queue_create(device, &params, out);
}

ACCEL_EXPORT void accel_queue_retain(accel_queue_t *queue)
{
	if (queue)
		accel_ref_get(&queue->ref);
}

ACCEL_EXPORT void accel_queue_release(accel_queue_t *queue)
{
	accel_device_t *d;

	if (!queue || !accel_ref_put(&queue->ref))
		return;
	d = queue->device;
	d->scheduler->ops->executor_destroy(queue->executor);
	accel_drain_disown(&queue->drain);
	free(queue);
	accel_device_release(d);
}

/* Drops the table's buffers, the command buffer and the queue, once. */
static void submission_release(struct accel_sched_job *job)
{
	struct submission *sub = (struct submission *)job;

	for (uint32_t i = 0; i < sub->buffer_count; i++)
		accel_buffer_release(sub->buffers[i]);
	sub->buffer_count = 0;
	accel_command_buffer_release(sub->cb);
	sub->cb = NULL;
	accel_queue_release(sub->queue);
	sub->queue = NULL;
}

static void submission_destroy(struct accel_sched_job *job)
{
	struct submission *sub = (struct submission *)job;

	submission_release(job);
	for (uint32_t i = 0; i < job->wait_count + job->signal_count; i++)
		accel_semaphore_release(sub->points[i].sem);
	accel_drain_done(sub->drains);
	free(sub);
}

/* @msg: the failure of the driver's replay, naming the command. */
static void submission_failed(struct submission *sub, int err, const char *what,
			      char *msg, size_t len)
{
	uint32_t i = sub->exec.failed_command;
	const struct accel_cmd *cmd =
		&ACCEL_VEC_AT(&sub->cb->plan.commands, struct accel_cmd, i);

	accel_strfmt(msg, len, "%s: command %u (%s) failed with %s: %s",
		     sub->job.label, i, accel_cmd_type_name((enum accel_cmd_type)cmd->type),
		     accel_errno_name(-err), what);
}

/* The driver finished a replay it left in flight (ACCEL_JOB_PENDING). */
static void submission_done(struct accel_cb_exec *x, int err, const char *what)
{
	struct submission *sub = container_of(x, struct submission, exec);
	char msg[ACCEL_FAILURE_MAX] = "";

	if (err)
		submission_failed(sub, err, what, msg, sizeof(msg));
	sub->job.device_ns = x->device_ns;
	accel_sched_job_finish(&sub->job, err, msg);
}

static int submission_execute(struct accel_sched_job *job, char *msg,
			      size_t len)
{
	struct submission *sub = (struct submission *)job;
	accel_device_t *d = sub->queue->device;
	char what[ACCEL_FAILURE_MAX / 2] = "";
	int err;

	sub->exec = (struct accel_cb_exec){
		.cb = sub->cb,
		.slots = sub->slots,
		.done = submission_done,
		.msg = what,
		.msg_len = sizeof(what),
	};
	err = d->ops->execute(d, &sub->exec);
	if (err && err != ACCEL_JOB_PENDING)
		submission_failed(sub, err, what, msg, len);
	return err;
}

static void capture_points(struct submission *sub,
			   const accel_semaphore_list_t *waits,
			   const accel_semaphore_list_t *signals)
{
	uint32_t nw = waits ? waits->count : 0, ns = signals ? signals->count : 0;

	for (uint32_t i = 0; i < nw + ns; i++) {
		const accel_semaphore_list_t *l = i < nw ? waits : signals;
		uint32_t j = i < nw ? i : i - nw;

		sub->points[i].sem = l->semaphores[j];
		sub->points[i].value = l->values[j];
		accel_semaphore_retain(sub->points[i].sem);
	}
	sub->job.waits = sub->points;
	sub->job.wait_count = nw;
	sub->job.signals = sub->points + nw;
	sub->job.signal_count = ns;
}

/* The used slots' bases and lengths, and a reference to each buffer. */
static void capture_table(struct submission *sub, const accel_binding_table_t *table)
{
	const struct accel_plan *plan = &sub->cb->plan;

	accel_plan_capture(plan, table, sub->slots);
	for (uint32_t i = 0; i < plan->used_count; i++) {
		accel_buffer_t *b = table->bindings[plan->used_slots[i]].buffer;

		accel_buffer_retain(b);
		sub->buffers[sub->buffer_count++] = b;
	}
}

/* The submission and its arrays in one zeroed allocation; NULL: ENOMEM. */
static struct submission *submission_alloc(uint32_t points,
					   const accel_command_buffer_t *cb)
{
	uint32_t nslots = cb ? cb->plan.used_count : 0; /* not the highest slot */
	uint32_t nbufs = nslots;
	size_t size = sizeof(struct submission) +
		      (size_t)points * sizeof(struct accel_sched_point) +
		      (size_t)nslots * sizeof(struct accel_plan_slot) +
		      (size_t)nbufs * sizeof(accel_buffer_t *);
	struct submission *sub = calloc(1, size);
	uint8_t *p;

	if (!sub)
		return NULL;
	p = (uint8_t *)(sub + 1);
	sub->points = (struct accel_sched_point *)p;
	p += (size_t)points * sizeof(struct accel_sched_point);
	sub->slots = nslots ? (struct accel_plan_slot *)p : NULL;
	p += (size_t)nslots * sizeof(struct accel_plan_slot);
	sub->buffers = (accel_buffer_t **)p;
	return sub;
}

static int check_cb(accel_queue_t *q, accel_command_buffer_t *cb,
		    const accel_binding_table_t *table, const char *fn)
{
	if (cb->device != q->device)
		return accel_fail(EXDEV,
			"%s: the command buffer is for device %s, but the queue for %s",
			fn, cb->device->uri, q->device->uri);
	if (cb->state != ACCEL_CB_EXECUTABLE)
		return accel_fail(EBADFD,
			"%s: the command buffer was not ended; call accel_command_buffer_end() before submitting it",
			fn);
	if ((cb->mode & ACCEL_COMMAND_BUFFER_ONE_SHOT) && atomic_load(&cb->submitted))
		return accel_fail(EBADFD,
			"%s: the command buffer is ONE_SHOT and was submitted already; create it ACCEL_COMMAND_BUFFER_REUSABLE to submit it again",
			fn);
	if (table && table->count && !table->bindings)
		return accel_fail(EINVAL, "%s: table->bindings is NULL but table->count is %u",
				  fn, table->count);
	return accel_plan_validate(&cb->plan, q->device, table, fn);
}

static int check_args(accel_queue_t *q, const accel_semaphore_list_t *waits,
		      const accel_semaphore_list_t *signals,
		      accel_command_buffer_t *cb,
		      const accel_binding_table_t *table, uint32_t flags,
		      const char *fn)
{
	accel_scheduler_t *s;
	int err;

	if (!q)
		return accel_fail(EINVAL, "%s: queue is NULL", fn);
	if (flags)
		return accel_fail(EINVAL, "%s: flags 0x%x: no flags are defined; pass 0", fn, flags);
	s = q->device->scheduler;
	err = waits ? accel_semaphore_check_list(waits, fn, "waits", &s) : 0;
	if (!err && signals)
		err = accel_semaphore_check_list(signals, fn, "signals", &s);
	if (!err && cb)
		err = check_cb(q, cb, table, fn);
	return err;
}

static int submit(accel_queue_t *q, const accel_semaphore_list_t *waits,
		  const accel_semaphore_list_t *signals,
		  accel_command_buffer_t *cb,
		  const accel_binding_table_t *table, uint32_t flags,
		  const char *fn)
{
	accel_scheduler_t *s;
	struct submission *sub;
	int err = check_args(q, waits, signals, cb, table, flags, fn);

	if (err)
		return err;
	s = q->device->scheduler;
	sub = submission_alloc((waits ? waits->count : 0) +
			       (signals ? signals->count : 0), cb);
	if (!sub)
		return accel_fail(ENOMEM, "%s: out of memory capturing the submission", fn);
	accel_queue_retain(q);
	sub->queue = q;
	if (cb) {
		accel_command_buffer_retain(cb);
		sub->cb = cb;
		sub->job.execute = submission_execute;
	}
	sub->job.executor = q->executor;
	sub->job.release = submission_release;
	sub->job.destroy = submission_destroy;
	accel_strfmt(sub->job.label, sizeof(sub->job.label),
		     "submission #%" PRIu64 " on a queue of %s",
		     (uint64_t)atomic_fetch_add(&q->next_submission, 1), q->device->uri);
	capture_points(sub, waits, signals);
	if (cb)
		capture_table(sub, table);
	if (cb && (cb->mode & ACCEL_COMMAND_BUFFER_ONE_SHOT) &&
	    atomic_exchange(&cb->submitted, true)) {
		submission_destroy(&sub->job);
		return accel_fail(EBADFD,
			"%s: the command buffer is ONE_SHOT and was submitted already; create it ACCEL_COMMAND_BUFFER_REUSABLE to submit it again",
			fn);
	}
	if (accel_drain_submit(q, sub->drains)) {
		submission_destroy(&sub->job);
		return accel_fail(ENOMEM, "%s: out of memory", fn);
	}
	err = s->ops->job_submit(s, &sub->job);
	if (err) {
		if (cb && (cb->mode & ACCEL_COMMAND_BUFFER_ONE_SHOT))
			atomic_store(&cb->submitted, false);
		submission_destroy(&sub->job);
	}
	return err;
}

ACCEL_EXPORT int accel_queue_execute(accel_queue_t *queue,
				     const accel_semaphore_list_t *waits,
				     const accel_semaphore_list_t *signals,
				     accel_command_buffer_t *cb,
				     const accel_binding_table_t *table,
				     uint32_t flags)
{
	return submit(queue, waits, signals, cb, table, flags,
		      "accel_queue_execute");
}

ACCEL_EXPORT int accel_queue_barrier(accel_queue_t *queue,
				     const accel_semaphore_list_t *waits,
				     const accel_semaphore_list_t *signals,
				     uint32_t flags)
{
	return submit(queue, waits, signals, NULL, NULL, flags,
		      "accel_queue_barrier");
}
