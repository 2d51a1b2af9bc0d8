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
#include "pool.h"

/* One command buffer of a submission and its captured table. */
struct submission_part {
	accel_command_buffer_t *cb;
	struct accel_plan_slot *slots;    /* [cb->plan.used_count] */
};

/*
 * struct submission - one accel_queue_execute() or _batch(), in one
 * allocation: the struct, then @points, @parts, the parts' slots and
 * @buffers. A batch runs its parts in order on one job: @next is the part
 * the driver runs or will run next.
 */
struct submission {
	struct accel_sched_job job;
	struct accel_cb_exec exec;        /* the driver's view of the part */
	accel_queue_t *queue;
	struct submission_part *parts;    /* [part_count] */
	uint32_t part_count;
	uint32_t next;
	uint64_t device_ns;               /* of the parts that ended */
	int64_t part_start_ns;            /* when part @next was handed over */
	accel_buffer_t **buffers;         /* [sum of used_count] */
	uint32_t buffer_count;
	struct accel_sched_point *points; /* waits, then signals */
	struct accel_drain *drains[2];    /* the queue's and device's (drain.c) */
};

/*
 * A submission of up to this many points, parts and slots in all comes
 * from its queue's pool (pool.h): most do. 1.4 KiB a record, and at most
 * ACCEL_POOL_MAX of them kept free per queue.
 */
#define SUBMISSION_POOLED                                                   \
	(sizeof(struct submission) + 16 * sizeof(struct accel_sched_point) + \
	 2 * sizeof(struct submission_part) +                               \
	 32 * (sizeof(struct accel_plan_slot) + sizeof(accel_buffer_t *)))

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
	if (o->size > ACCEL_OPTIONS_SIZE_MAX)
		return accel_fail(E2BIG,
			"%s: options->size is %u; no version of accel_queue_options_t is above ACCEL_OPTIONS_SIZE_MAX (%u bytes): set it to sizeof(accel_queue_options_t), or use ACCEL_QUEUE_OPTIONS_INIT",
			fn, o->size, ACCEL_OPTIONS_SIZE_MAX);
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

	if (q)
		q->pool = accel_pool_new(SUBMISSION_POOLED);
	if (!q || !q->pool) {
		free(q);
		return accel_fail(ENOMEM, "%s: out of memory", params->caller);
	}
	err = s->ops->executor_create(s, device->uri, params, &q->executor);
	if (err) {
		accel_pool_put(q->pool);
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
	accel_pool_put(queue->pool);
	free(queue);
	accel_device_release(d);
}

/* Drops the tables' buffers, the command buffers and the queue, once. */
static void submission_release(struct accel_sched_job *job)
{
	struct submission *sub = (struct submission *)job;

	for (uint32_t i = 0; i < sub->buffer_count; i++)
		accel_buffer_release(sub->buffers[i]);
	sub->buffer_count = 0;
	for (uint32_t i = 0; i < sub->part_count; i++)
		accel_command_buffer_release(sub->parts[i].cb);
	sub->part_count = 0;
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
	accel_pool_free(sub);
}

/* @what: the failure of the driver's replay of part sub->next. */
static void submission_failed(struct submission *sub, int err, const char *what,
			      char *msg, size_t len)
{
	const accel_command_buffer_t *cb = sub->parts[sub->next].cb;
	uint32_t i = sub->exec.failed_command;
	const struct accel_cmd *cmd = &ACCEL_VEC_AT(&cb->plan.commands, struct accel_cmd, i);
	char part[48] = "";

	if (sub->part_count > 1)
		accel_strfmt(part, sizeof(part), "command buffer %u of %u, ",
			     sub->next, sub->part_count);
	accel_strfmt(msg, len, "%s: %scommand %u (%s) failed with %s: %s",
		     sub->job.label, part, i,
		     accel_cmd_type_name((enum accel_cmd_type)cmd->type),
		     accel_errno_name(-err), what);
}

static void submission_done(struct accel_cb_exec *x, int err, const char *what);

/* The last part is on the device: its signals are promised there. */
static void submission_on_device(struct accel_cb_exec *x, uint64_t token)
{
	struct submission *sub = container_of(x, struct submission, exec);

	accel_sched_job_on_device(&sub->job, token);
}

/* Part sub->next ended well: its device time teaches the cost model. */
static void part_learn(struct submission *sub)
{
	uint64_t ns = sub->exec.device_ns;

	if (!ns)
		ns = (uint64_t)(accel_now_ns() - sub->part_start_ns);
	accel_cost_learn(sub->parts[sub->next].cb, ns);
}

/*
 * Runs the parts from sub->next on, in order: 0 once all ended, -errno
 * with @msg set at the first that failed, or ACCEL_JOB_PENDING when the
 * driver left one in flight (submission_done() goes on from there, on the
 * driver's thread).
 */
static int submission_run(struct submission *sub, char *msg, size_t len)
{
	accel_device_t *d = sub->queue->device;
	char what[ACCEL_FAILURE_MAX / 2];
	int err;

	for (; sub->next < sub->part_count; sub->next++) {
		what[0] = '\0';
		sub->exec = (struct accel_cb_exec){
			.cb = sub->parts[sub->next].cb,
			.slots = sub->parts[sub->next].slots,
			.done = submission_done,
			.msg = what,
			.msg_len = sizeof(what),
		};
		/* The device waits before the first part, and promises after the last. */
		if (sub->job.domain) {
			if (sub->next == 0)
				sub->exec.device_wait = atomic_load(&sub->job.device_wait);
			if (sub->next + 1 == sub->part_count)
				sub->exec.on_device = submission_on_device;
		}
		sub->part_start_ns = accel_now_ns();
		err = d->ops->execute(d, &sub->exec);
		if (err == ACCEL_JOB_PENDING)
			return err;
		if (err) {
			submission_failed(sub, err, what, msg, len);
			return err;
		}
		part_learn(sub);
	}
	return 0;
}

/* The driver finished a part it left in flight (ACCEL_JOB_PENDING). */
static void submission_done(struct accel_cb_exec *x, int err, const char *what)
{
	struct submission *sub = container_of(x, struct submission, exec);
	char msg[ACCEL_FAILURE_MAX] = "";

	sub->device_ns += x->device_ns;
	if (err) {
		submission_failed(sub, err, what, msg, sizeof(msg));
	} else {
		part_learn(sub);
		sub->next++;
		err = submission_run(sub, msg, sizeof(msg));
		if (err == ACCEL_JOB_PENDING)
			return;
	}
	sub->job.device_ns = sub->device_ns;
	accel_sched_job_finish(&sub->job, err, msg);
}

static int submission_execute(struct accel_sched_job *job, char *msg,
			      size_t len)
{
	return submission_run((struct submission *)job, msg, len);
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

/* Part @i's command buffer, its table's used slots and their buffers. */
static void capture_part(struct submission *sub, uint32_t i,
			 accel_command_buffer_t *cb,
			 const accel_binding_table_t *table)
{
	const struct accel_plan *plan = &cb->plan;

	accel_command_buffer_retain(cb);
	sub->parts[i].cb = cb;
	sub->part_count = i + 1;
	accel_plan_capture(plan, table, sub->parts[i].slots);
	for (uint32_t j = 0; j < plan->used_count; j++) {
		accel_buffer_t *b = table->bindings[plan->used_slots[j]].buffer;

		accel_buffer_retain(b);
		sub->buffers[sub->buffer_count++] = b;
	}
}

/*
 * The cost model's prediction of @sub's device time (struct
 * accel_sched_job.predicted_ns): its parts' predictions, with one
 * submission overhead; 0 when a part has none.
 */
static uint64_t submission_predict(struct submission *sub)
{
	accel_prediction_t p;
	uint64_t ns = 0, overhead;

	if (!sub->part_count)
		return 0;
	for (uint32_t i = 0; i < sub->part_count; i++) {
		accel_cost_predict(sub->parts[i].cb, sub->parts[i].slots, &p);
		if (p.source == ACCEL_PREDICTION_NONE)
			return 0;
		ns = p.ns > UINT64_MAX - ns ? UINT64_MAX : ns + p.ns;
	}
	if (sub->part_count > 1) {
		accel_cost_params_t params;

		accel_cost_params_get(sub->queue->device, &params);
		overhead = params.submission_ns * (sub->part_count - 1);
	} else {
		overhead = 0;
	}
	return ns > overhead ? ns - overhead : ns;
}

/*
 * The submission and its arrays in one zeroed allocation from @q's pool,
 * the parts' slot arrays carved out of it; NULL: ENOMEM.
 */
static struct submission *submission_alloc(accel_queue_t *q, uint32_t points,
					   uint32_t count,
					   accel_command_buffer_t *const *cbs)
{
	size_t nslots = 0, size;
	struct submission *sub;
	uint8_t *p;

	for (uint32_t i = 0; i < count; i++)
		nslots += cbs[i]->plan.used_count; /* not the highest slot */
	size = sizeof(struct submission) +
	       (size_t)points * sizeof(struct accel_sched_point) +
	       (size_t)count * sizeof(struct submission_part) +
	       nslots * (sizeof(struct accel_plan_slot) + sizeof(accel_buffer_t *));
	sub = accel_pool_alloc(q->pool, size);
	if (!sub)
		return NULL;
	memset(sub, 0, size);
	p = (uint8_t *)(sub + 1);
	sub->points = (struct accel_sched_point *)p;
	p += (size_t)points * sizeof(struct accel_sched_point);
	sub->parts = (struct submission_part *)p;
	p += (size_t)count * sizeof(struct submission_part);
	for (uint32_t i = 0; i < count; i++) {
		sub->parts[i].slots = cbs[i]->plan.used_count ? (struct accel_plan_slot *)p : NULL;
		p += (size_t)cbs[i]->plan.used_count * sizeof(struct accel_plan_slot);
	}
	sub->buffers = (accel_buffer_t **)p;
	return sub;
}

/* A direct buffer of @cb that accel_queue_dealloca() took since it was recorded. */
static int check_returned(const accel_command_buffer_t *cb, const char *fn)
{
	const struct accel_vec *v = &cb->retained_buffers;

	for (size_t i = 0; i < ACCEL_VEC_COUNT(v, accel_buffer_t *); i++)
		if (accel_buffer_returned(ACCEL_VEC_AT(v, accel_buffer_t *, i)))
			return accel_buffer_fail_returned(fn,
				"a buffer the command buffer recorded");
	return 0;
}

static int check_cb(accel_queue_t *q, accel_command_buffer_t *cb,
		    const accel_binding_table_t *table, const char *fn)
{
	if (cb->device != q->device)
		return accel_fail(EXDEV,
			"%s: the command buffer is for device %s, but the queue for %s%s",
			fn, cb->device->uri, q->device->uri,
			accel_device_twin(cb->device, q->device));
	return accel_cb_check_runnable(cb, q->device, table, fn);
}

int accel_cb_check_runnable(accel_command_buffer_t *cb, accel_device_t *device,
			    const accel_binding_table_t *table, const char *fn)
{
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
	if (cb->transient_buffers && check_returned(cb, fn))
		return -EBADFD;
	return accel_plan_validate(&cb->plan, device, table, fn);
}

/* A ONE_SHOT command buffer at @i that appeared before it in @cbs. */
static bool one_shot_repeated(accel_command_buffer_t *const *cbs, uint32_t i)
{
	if (!(cbs[i]->mode & ACCEL_COMMAND_BUFFER_ONE_SHOT))
		return false;
	for (uint32_t j = 0; j < i; j++)
		if (cbs[j] == cbs[i])
			return true;
	return false;
}

/* @n's decimal digits, most significant first, at the end of @buf[20]: their count. */
static size_t decimal(uint64_t n, char buf[20])
{
	size_t k = 20;

	do
		buf[--k] = (char)('0' + n % 10);
	while ((n /= 10) != 0);
	return 20 - k;
}

void accel_submission_label(char *label, size_t len, uint64_t n, const char *uri)
{
	static const char head[] = "submission #", mid[] = " on a queue of ";
	const size_t hl = sizeof(head) - 1, ml = sizeof(mid) - 1;
	size_t dl, ul = strlen(uri);
	char digits[20];
	const char *d;

	dl = decimal(n, digits);
	d = digits + 20 - dl;
	if (hl + dl + ml + ul >= len) { /* a label cut short: rare, and snprintf()'s cut */
		accel_strfmt(label, len, "%s%" PRIu64 "%s%s", head, n, mid, uri);
		return;
	}
	memcpy(label, head, hl);
	memcpy(label + hl, d, dl);
	memcpy(label + hl + dl, mid, ml);
	memcpy(label + hl + dl + ml, uri, ul + 1);
}

/* Checks command buffer @i of a batch; the message names it. */
static int check_part(accel_queue_t *q, accel_command_buffer_t *const *cbs,
		      const accel_binding_table_t *tables, uint32_t i,
		      const char *fn)
{
	char where[64];
	int err;

	if (!cbs[i])
		return accel_fail(EINVAL, "%s: cbs[%u] is NULL", fn, i);
	if (one_shot_repeated(cbs, i))
		return accel_fail(EBADFD,
			"%s: cbs[%u] is ONE_SHOT and appears earlier in the batch; a ONE_SHOT command buffer runs once (create it ACCEL_COMMAND_BUFFER_REUSABLE)",
			fn, i);
	err = check_cb(q, cbs[i], tables ? &tables[i] : NULL, fn);
	if (err) {
		accel_strfmt(where, sizeof(where), "cbs[%u]", i);
		accel_fail_at(-err, fn, where);
	}
	return err;
}

static int check_args(accel_queue_t *q, const accel_semaphore_list_t *waits,
		      const accel_semaphore_list_t *signals, uint32_t count,
		      accel_command_buffer_t *const *cbs,
		      const accel_binding_table_t *tables, uint32_t flags,
		      bool batch, const char *fn)
{
	accel_scheduler_t *s;
	int err;

	if (!q)
		return accel_fail(EINVAL, "%s: queue is NULL", fn);
	if (flags)
		return accel_fail(EINVAL, "%s: flags 0x%x: no flags are defined; pass 0", fn, flags);
	if (count > ACCEL_QUEUE_BATCH_MAX)
		return accel_fail(E2BIG,
			"%s: count is %u; a batch carries at most ACCEL_QUEUE_BATCH_MAX (%u) command buffers (submit the rest as another batch)",
			fn, count, ACCEL_QUEUE_BATCH_MAX);
	if (count && !cbs)
		return accel_fail(EINVAL, "%s: cbs is NULL but count is %u", fn, count);
	s = q->device->scheduler;
	err = waits ? accel_semaphore_check_list(waits, fn, "waits", &s) : 0;
	if (!err && signals)
		err = accel_semaphore_check_list(signals, fn, "signals", &s);
	if (err)
		return err;
	if (!batch)
		return count ? check_cb(q, cbs[0], tables, fn) : 0;
	for (uint32_t i = 0; i < count && !err; i++)
		err = check_part(q, cbs, tables, i, fn);
	return err;
}

/* Marks the ONE_SHOT command buffers submitted; false if one already was. */
static bool claim_one_shots(struct submission *sub, const char *fn)
{
	for (uint32_t i = 0; i < sub->part_count; i++) {
		accel_command_buffer_t *cb = sub->parts[i].cb;

		if (!(cb->mode & ACCEL_COMMAND_BUFFER_ONE_SHOT) ||
		    !atomic_exchange(&cb->submitted, true))
			continue;
		/* Lost a race with another submission of it: undo ours. */
		while (i--)
			if (sub->parts[i].cb->mode & ACCEL_COMMAND_BUFFER_ONE_SHOT)
				atomic_store(&sub->parts[i].cb->submitted, false);
		accel_fail(EBADFD,
			"%s: the command buffer is ONE_SHOT and was submitted already; create it ACCEL_COMMAND_BUFFER_REUSABLE to submit it again",
			fn);
		return false;
	}
	return true;
}

static void unclaim_one_shots(struct submission *sub)
{
	for (uint32_t i = 0; i < sub->part_count; i++)
		if (sub->parts[i].cb->mode & ACCEL_COMMAND_BUFFER_ONE_SHOT)
			atomic_store(&sub->parts[i].cb->submitted, false);
}

static int submit(accel_queue_t *q, const accel_semaphore_list_t *waits,
		  const accel_semaphore_list_t *signals, uint32_t count,
		  accel_command_buffer_t *const *cbs,
		  const accel_binding_table_t *tables, int64_t deadline_ns,
		  const char *fn)
{
	accel_scheduler_t *s = q->device->scheduler;
	struct submission *sub;
	int err;

	sub = submission_alloc(q, (waits ? waits->count : 0) +
			       (signals ? signals->count : 0), count, cbs);
	if (!sub)
		return accel_fail(ENOMEM, "%s: out of memory capturing the submission", fn);
	accel_queue_retain(q);
	sub->queue = q;
	if (count) {
		sub->job.execute = submission_execute;
		/* A barrier (no part) completes on the host: host waits. */
		if (q->device->device_waits)
			sub->job.domain = q->device;
	}
	sub->job.executor = q->executor;
	sub->job.release = submission_release;
	sub->job.destroy = submission_destroy;
	accel_submission_label(sub->job.label, sizeof(sub->job.label),
			       (uint64_t)atomic_fetch_add(&q->next_submission, 1),
			       q->device->uri);
	capture_points(sub, waits, signals);
	for (uint32_t i = 0; i < count; i++)
		capture_part(sub, i, cbs[i], tables ? &tables[i] : NULL);
	sub->job.predicted_ns = submission_predict(sub);
	sub->job.deadline_ns = deadline_ns;
	if (!claim_one_shots(sub, fn)) {
		submission_destroy(&sub->job);
		return -EBADFD;
	}
	if (accel_drain_submit(q, sub->drains)) {
		unclaim_one_shots(sub);
		submission_destroy(&sub->job);
		return accel_fail(ENOMEM, "%s: out of memory", fn);
	}
	err = s->ops->job_submit(s, &sub->job);
	if (err) {
		unclaim_one_shots(sub);
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
	const char *fn = "accel_queue_execute";
	int err = check_args(queue, waits, signals, cb ? 1 : 0, &cb, table, flags,
			     false, fn);

	return err ? err : submit(queue, waits, signals, cb ? 1 : 0, &cb, table, 0, fn);
}

ACCEL_EXPORT int accel_queue_execute_batch(accel_queue_t *queue,
					   const accel_semaphore_list_t *waits,
					   const accel_semaphore_list_t *signals,
					   uint32_t count,
					   accel_command_buffer_t *const *cbs,
					   const accel_binding_table_t *tables,
					   uint32_t flags)
{
	const char *fn = "accel_queue_execute_batch";
	int err = check_args(queue, waits, signals, count, cbs, tables, flags,
			     true, fn);

	return err ? err : submit(queue, waits, signals, count, cbs, tables, 0, fn);
}

/*
 * Validates @o (NULL: no options) into *@deadline_ns; -EINVAL naming the
 * field, or -ETIME for a deadline already passed.
 */
static int check_submit_options(const accel_submit_options_t *o,
				int64_t *deadline_ns, const char *fn)
{
	const uint8_t *p = (const uint8_t *)o;

	*deadline_ns = 0;
	if (!o)
		return 0;
	if (o->size < ACCEL_SUBMIT_OPTIONS_SIZE_V1)
		return accel_fail(EINVAL,
			"%s: options->size is %u; it must be at least %u (set it to sizeof(accel_submit_options_t), or use ACCEL_SUBMIT_OPTIONS_INIT)",
			fn, o->size, ACCEL_SUBMIT_OPTIONS_SIZE_V1);
	if (o->size > ACCEL_OPTIONS_SIZE_MAX)
		return accel_fail(E2BIG,
			"%s: options->size is %u; no version of accel_submit_options_t is above ACCEL_OPTIONS_SIZE_MAX (%u bytes): set it to sizeof(accel_submit_options_t), or use ACCEL_SUBMIT_OPTIONS_INIT",
			fn, o->size, ACCEL_OPTIONS_SIZE_MAX);
	for (uint32_t i = sizeof(*o); i < o->size; i++)
		if (p[i])
			return accel_fail(EINVAL,
				"%s: options->size is %u and byte %u is not zero; this library knows the first %zu bytes of accel_submit_options_t, later fields must be zero",
				fn, o->size, i, sizeof(*o));
	if (o->flags)
		return accel_fail(EINVAL, "%s: options->flags is 0x%x; no flags are defined, pass 0",
				  fn, o->flags);
	if (o->deadline_ns < 0)
		return accel_fail(EINVAL,
			"%s: options->deadline_ns is %" PRId64 "; it must be 0 (none) or an absolute CLOCK_MONOTONIC time in ns (accel_deadline_after())",
			fn, o->deadline_ns);
	if (o->deadline_ns && o->deadline_ns <= accel_now_ns())
		return accel_fail(ETIME,
			"%s: options->deadline_ns %" PRId64 " has passed (CLOCK_MONOTONIC is %" PRId64 " now); give a time still to come, or 0 for none",
			fn, o->deadline_ns, accel_now_ns());
	*deadline_ns = o->deadline_ns;
	return 0;
}

/* The *_with_options() calls: check, then submit with the deadline. */
static int submit_with_options(accel_queue_t *q, const accel_semaphore_list_t *waits,
			       const accel_semaphore_list_t *signals, uint32_t count,
			       accel_command_buffer_t *const *cbs,
			       const accel_binding_table_t *tables, bool batch,
			       const accel_submit_options_t *options, const char *fn)
{
	int64_t deadline_ns;
	int err = check_args(q, waits, signals, count, cbs, tables, 0, batch, fn);

	if (!err)
		err = check_submit_options(options, &deadline_ns, fn);
	return err ? err : submit(q, waits, signals, count, cbs, tables,
				  deadline_ns, fn);
}

ACCEL_EXPORT int accel_queue_execute_with_options(accel_queue_t *queue,
						  const accel_semaphore_list_t *waits,
						  const accel_semaphore_list_t *signals,
						  accel_command_buffer_t *cb,
						  const accel_binding_table_t *table,
						  const accel_submit_options_t *options)
{
	return submit_with_options(queue, waits, signals, cb ? 1 : 0, &cb, table,
				   false, options, "accel_queue_execute_with_options");
}

ACCEL_EXPORT int accel_queue_execute_batch_with_options(accel_queue_t *queue,
							const accel_semaphore_list_t *waits,
							const accel_semaphore_list_t *signals,
							uint32_t count,
							accel_command_buffer_t *const *cbs,
							const accel_binding_table_t *tables,
							const accel_submit_options_t *options)
{
	return submit_with_options(queue, waits, signals, count, cbs, tables,
				   true, options, "accel_queue_execute_batch_with_options");
}

ACCEL_EXPORT int accel_queue_barrier(accel_queue_t *queue,
				     const accel_semaphore_list_t *waits,
				     const accel_semaphore_list_t *signals,
				     uint32_t flags)
{
	const char *fn = "accel_queue_barrier";
	int err = check_args(queue, waits, signals, 0, NULL, NULL, flags,
			     false, fn);

	return err ? err : submit(queue, waits, signals, 0, NULL, NULL, 0, fn);
}

/* For transient.c: a barrier of validated lists, as @fn. */
int accel_queue_submit_barrier(accel_queue_t *q,
			       const accel_semaphore_list_t *waits,
			       const accel_semaphore_list_t *signals,
			       const char *fn)
{
	return submit(q, waits, signals, 0, NULL, NULL, 0, fn);
}
