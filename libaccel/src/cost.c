// SPDX-License-Identifier: MIT
/*
 * The cost model (accel/cost.h, Documentation/libaccel.rst "Cost model").
 *
 * Device parameters. Each device holds its struct accel_cost_params under
 * its cost_lock: the defaults until the first use, which reads a cached
 * calibration if one is stored for the device's identity. A calibration
 * replaces them and bumps the device's cost_gen.
 *
 * Command buffer models. The first prediction of an ended command buffer
 * walks its commands once and sums, with the device's parameters, what is
 * known at record time (struct accel_cb_model): each dispatch's
 * max(compute, memory) + launch (memory by the kernel curve at its
 * declared bytes), each transfer by its kind's curve at the bytes it
 * touches (core.h: struct accel_cost_curve), the submission's overhead.
 * What only the binding table tells (a
 * fill through an indirect ref of ACCEL_WHOLE_BUFFER length) is kept per
 * used slot: a count and an offset sum, so a submission adds
 * count * length - offsets for each such slot, O(slots used). The model is
 * published with a compare-and-swap and never freed before the command
 * buffer (a reader may hold it); a model of older parameters is rebuilt
 * and chained to the new one.
 *
 * Learning. The queue reports the device time of each run of a command
 * buffer (accel_cost_learn()); a command buffer whose model is not fully
 * declared (a dispatch without a declared cost, a dispatch-indirect) is
 * predicted from the moving average of those runs.
 *
 * The cache. A calibration is a small record (struct calib_file) stored
 * through the executable cache (exec_cache.h) under the key of the driver
 * "cost" and the device's identity, so it is checked as any cache entry is
 * (length, SHA-256), and then field by field (magic, version, ranges); a
 * record that does not check out is rejected (the file removed) and the
 * defaults used.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "error.h"
#include "exec_cache.h"
#include "sched.h"

/*
 * struct accel_cb_model - a command buffer's prediction for one set of
 * device parameters.
 * @older:       the model it replaced (freed with the command buffer).
 * @gen:         the device's cost_gen it was built for.
 * @declared:    every dispatch declares its cost; none is indirect.
 * @fixed_ns:    the prediction of everything known at record time.
 * @params:      the figures it was built with (whole-range fills below
 *               are charged by the curve at the length the table gives).
 * @whole_count: per used slot (NULL when no such fill): the fills through
 *               an indirect ref of ACCEL_WHOLE_BUFFER length on it, and
 * @whole_off:   the sum of their offsets into the slot's range.
 */
struct accel_cb_model {
	struct accel_cb_model *older;
	unsigned int gen;
	bool declared;
	double fixed_ns;
	struct accel_cost_model params;
	uint32_t *whole_count;
	uint64_t *whole_off;
};

/* ---- device parameters ------------------------------------------------ */

#define CALIB_MAGIC "ACCOST1"
/*
 * 3: a time curve and a launch per kind of item (core.h). A
 * record of another version (or size) is rejected and the device uses
 * the defaults until it is calibrated again.
 */
#define CALIB_VERSION 3u
/* What a calibration may report; outside, the record is foreign or damaged. */
#define BANDWIDTH_MIN UINT64_C(1000000)            /* 1 MB/s */
#define BANDWIDTH_MAX UINT64_C(100000000000000)    /* 100 TB/s */
#define RATE_MIN UINT64_C(1000000)                 /* 1 Mop/s */
#define RATE_MAX UINT64_C(100000000000000000)      /* 1e17 op/s */
#define OVERHEAD_MAX UINT64_C(1000000000)          /* 1 s */

struct calib_file {
	char magic[8];
	uint32_t version;
	uint32_t size;
	uint64_t bandwidth;
	uint64_t operation_rate;
	uint64_t dispatch_ns;
	uint64_t submission_ns;
	uint64_t kernel_bandwidth;
	struct accel_cost_curve curve[ACCEL_COST_KINDS];
	uint64_t launch_ns[ACCEL_COST_KINDS];
};

void accel_cost_model_default(struct accel_cost_model *m)
{
	*m = (struct accel_cost_model){ .pub = {
		.bandwidth = ACCEL_COST_DEFAULT_BANDWIDTH,
		.operation_rate = ACCEL_COST_DEFAULT_OPERATION_RATE,
		.dispatch_ns = ACCEL_COST_DEFAULT_DISPATCH_NS,
		.submission_ns = ACCEL_COST_DEFAULT_SUBMISSION_NS,
		.source = ACCEL_COST_SOURCE_DEFAULT,
		.kernel_bandwidth = ACCEL_COST_DEFAULT_KERNEL_BANDWIDTH,
	} };
	for (int k = 0; k < ACCEL_COST_KINDS; k++)
		m->launch_ns[k] = ACCEL_COST_DEFAULT_DISPATCH_NS;
}

/* NULL when @c could be a calibrated curve; else what is wrong. */
static const char *curve_invalid(const struct accel_cost_curve *c)
{
	if (c->count > ACCEL_COST_POINTS || c->reserved)
		return "a curve's point count";
	for (uint32_t i = 0; i < c->count; i++) {
		if (!c->bytes[i] || c->ns[i] > OVERHEAD_MAX)
			return "a curve's point";
		if (i && (c->bytes[i] <= c->bytes[i - 1] || c->ns[i] < c->ns[i - 1]))
			return "a curve's order";
	}
	return NULL;
}

static const char *const kind_names[ACCEL_COST_KINDS] = { "fill", "copy", "kernel" };

/* NULL when @m could be a calibration; else which field is not. */
static const char *params_invalid(const struct accel_cost_model *m)
{
	const accel_cost_params_t *p = &m->pub;

	for (int k = 0; k < ACCEL_COST_KINDS; k++)
		if (m->launch_ns[k] > OVERHEAD_MAX || curve_invalid(&m->curve[k]))
			return kind_names[k];
	if (p->bandwidth < BANDWIDTH_MIN || p->bandwidth > BANDWIDTH_MAX)
		return "bandwidth";
	if (p->kernel_bandwidth < BANDWIDTH_MIN || p->kernel_bandwidth > BANDWIDTH_MAX)
		return "kernel bandwidth";
	if (p->operation_rate < RATE_MIN || p->operation_rate > RATE_MAX)
		return "operation rate";
	if (p->dispatch_ns > OVERHEAD_MAX)
		return "dispatch overhead";
	if (p->submission_ns > OVERHEAD_MAX)
		return "submission overhead";
	return NULL;
}

/* The cache of calibrations of @d's kind of device, and its key; NULL: off. */
static struct accel_exec_cache *calib_cache(const accel_device_t *d,
					    uint8_t key[ACCEL_SHA256_SIZE])
{
	static const char what[] = "calibration " CALIB_MAGIC;
	struct accel_exec_cache *c = NULL;
	char id[sizeof(d->identity) + 80];

	accel_strfmt(id, sizeof(id), "%s\n%s", d->driver->name,
		     d->identity[0] ? d->identity : d->uri);
	if (accel_exec_cache_create("cost", id, strlen(id),
				    ACCEL_CACHE_OPTION_UNSET, &c) || !c)
		return NULL;
	accel_exec_cache_key(c, what, sizeof(what) - 1, key);
	return c;
}

static void calib_from_file(struct accel_cost_model *m, const struct calib_file *f)
{
	m->pub = (accel_cost_params_t){ f->bandwidth, f->operation_rate,
					f->dispatch_ns, f->submission_ns,
					ACCEL_COST_SOURCE_CACHED, 0,
					f->kernel_bandwidth };
	memcpy(m->curve, f->curve, sizeof(m->curve));
	memcpy(m->launch_ns, f->launch_ns, sizeof(m->launch_ns));
}

/* A calibration stored for @d, checked: true with *@p set. */
static bool calib_load(const accel_device_t *d, struct accel_cost_model *p)
{
	uint8_t key[ACCEL_SHA256_SIZE], *data = NULL;
	struct accel_exec_cache *c = calib_cache(d, key);
	struct calib_file f;
	const char *bad = NULL;
	size_t len = 0;

	if (!c)
		return false;
	if (!accel_exec_cache_lookup(c, key, &data, &len)) {
		accel_exec_cache_destroy(c);
		return false;
	}
	if (len != sizeof(f)) {
		bad = "a calibration record of another size";
	} else {
		memcpy(&f, data, sizeof(f));
		calib_from_file(p, &f);
		if (memcmp(f.magic, CALIB_MAGIC, 8) || f.version != CALIB_VERSION ||
		    f.size != sizeof(f))
			bad = "not a calibration record of this libaccel";
		else if (params_invalid(p))
			bad = "a calibration record with a value out of range";
	}
	if (bad)
		accel_exec_cache_reject(c, key, bad);
	free(data);
	accel_exec_cache_destroy(c);
	return !bad;
}

void accel_cost_calib_store_raw(const accel_device_t *d, const void *rec,
				size_t len)
{
	uint8_t key[ACCEL_SHA256_SIZE];
	struct accel_exec_cache *c = calib_cache(d, key);

	if (!c)
		return;
	accel_exec_cache_store(c, key, rec, len);
	accel_exec_cache_destroy(c);
}

static void calib_store(const accel_device_t *d, const struct accel_cost_model *m)
{
	const accel_cost_params_t *p = &m->pub;
	struct calib_file f = {
		.magic = CALIB_MAGIC,
		.version = CALIB_VERSION,
		.size = sizeof(f),
		.bandwidth = p->bandwidth,
		.operation_rate = p->operation_rate,
		.dispatch_ns = p->dispatch_ns,
		.submission_ns = p->submission_ns,
		.kernel_bandwidth = p->kernel_bandwidth,
	};

	memcpy(f.curve, m->curve, sizeof(f.curve));
	memcpy(f.launch_ns, m->launch_ns, sizeof(f.launch_ns));
	accel_cost_calib_store_raw(d, &f, sizeof(f));
}

void accel_cost_model_get(accel_device_t *d, struct accel_cost_model *out)
{
	pthread_mutex_lock(&d->cost_lock);
	if (!d->cost_loaded) {
		if (!calib_load(d, &d->cost))
			accel_cost_model_default(&d->cost);
		d->cost_loaded = true;
	}
	*out = d->cost;
	pthread_mutex_unlock(&d->cost_lock);
}

void accel_cost_params_get(accel_device_t *d, accel_cost_params_t *out)
{
	struct accel_cost_model m;

	accel_cost_model_get(d, &m);
	*out = m.pub;
}

void accel_cost_model_set(accel_device_t *d, const struct accel_cost_model *m)
{
	pthread_mutex_lock(&d->cost_lock);
	d->cost = *m;
	d->cost_loaded = true;
	atomic_fetch_add(&d->cost_gen, 1);
	pthread_mutex_unlock(&d->cost_lock);
}

static uint64_t clamp_u64(uint64_t v, uint64_t lo, uint64_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

ACCEL_EXPORT int accel_device_cost_params(accel_device_t *device,
					  accel_cost_params_t *out)
{
	if (!device || !out)
		return accel_fail(EINVAL, "accel_device_cost_params: %s is NULL",
				  device ? "out" : "device");
	accel_cost_params_get(device, out);
	return 0;
}

/* Keeps a measured @m inside what the cache accepts (timer noise). */
static void model_clamp(struct accel_cost_model *m)
{
	accel_cost_params_t *p = &m->pub;

	p->bandwidth = clamp_u64(p->bandwidth, BANDWIDTH_MIN, BANDWIDTH_MAX);
	p->kernel_bandwidth = clamp_u64(p->kernel_bandwidth, BANDWIDTH_MIN, BANDWIDTH_MAX);
	p->operation_rate = clamp_u64(p->operation_rate, RATE_MIN, RATE_MAX);
	p->dispatch_ns = clamp_u64(p->dispatch_ns, 0, OVERHEAD_MAX);
	p->submission_ns = clamp_u64(p->submission_ns, 0, OVERHEAD_MAX);
	for (int k = 0; k < ACCEL_COST_KINDS; k++) {
		m->launch_ns[k] = clamp_u64(m->launch_ns[k], 0, OVERHEAD_MAX);
		for (uint32_t i = 0; i < m->curve[k].count; i++)
			m->curve[k].ns[i] = clamp_u64(m->curve[k].ns[i], 0, OVERHEAD_MAX);
	}
}

ACCEL_EXPORT int accel_device_calibrate(accel_device_t *device, uint32_t flags,
					accel_cost_params_t *out)
{
	struct accel_cost_model p;
	int err;

	if (!device)
		return accel_fail(EINVAL, "accel_device_calibrate: device is NULL");
	if (flags & ~ACCEL_CALIBRATE_FORCE)
		return accel_fail(EINVAL,
			"accel_device_calibrate: unknown flags 0x%x; the only flag is ACCEL_CALIBRATE_FORCE",
			flags & ~ACCEL_CALIBRATE_FORCE);
	/*
	 * One at a time: two calibrations at once measured each other's
	 * work (operation rates 17x apart in an outside test). A caller
	 * that waited for another's, without FORCE, takes its result.
	 */
	pthread_mutex_lock(&device->calib_lock);
	accel_cost_model_get(device, &p);
	if (!(flags & ACCEL_CALIBRATE_FORCE) && p.pub.source != ACCEL_COST_SOURCE_DEFAULT) {
		pthread_mutex_unlock(&device->calib_lock);
		if (out)
			*out = p.pub;
		return 0;
	}
	err = accel_cost_measure(device, &p);
	if (!err) {
		/* A timer's noise on a tiny run must not make a record the cache refuses. */
		model_clamp(&p);
		accel_cost_model_set(device, &p);
		calib_store(device, &p);
	}
	pthread_mutex_unlock(&device->calib_lock);
	if (!err && out)
		*out = p.pub;
	return err;
}

/* ---- command buffer models -------------------------------------------- */

/* Without a curve: the public figures' linear model. */
static double linear_ns(const struct accel_cost_model *m,
			enum accel_cost_kind kind, double bytes)
{
	double bw = (double)(kind == ACCEL_COST_KERNEL ? m->pub.kernel_bandwidth :
			     m->pub.bandwidth);

	return bytes * 1e9 / bw + (double)m->launch_ns[kind];
}

double accel_cost_item_ns(const struct accel_cost_model *m,
			  enum accel_cost_kind kind, double bytes)
{
	const struct accel_cost_curve *c = &m->curve[kind];
	double launch = (double)m->launch_ns[kind], x0, y0, x1, y1;
	uint32_t i = 0, last = c->count - 1;

	if (!c->count)
		return linear_ns(m, kind, bytes);
	if (bytes >= (double)c->bytes[last]) /* the last point's bandwidth */
		return (double)c->ns[last] * bytes / (double)c->bytes[last];
	while (i < c->count && (double)c->bytes[i] < bytes)
		i++;
	x0 = i ? (double)c->bytes[i - 1] : 0;
	y0 = i ? (double)c->ns[i - 1] : launch;
	x1 = (double)c->bytes[i];
	y1 = (double)c->ns[i];
	return y0 + (y1 - y0) * (bytes - x0) / (x1 - x0);
}

static double dispatch_ns(const struct accel_cost_model *m,
			  const struct accel_cmd *cmd)
{
	const accel_export_cost_t *c = &cmd->dispatch.export->cost;
	double wg = (double)cmd->dispatch.workgroup_count[0] *
		    cmd->dispatch.workgroup_count[1] * cmd->dispatch.workgroup_count[2];
	double compute = wg * (double)c->operations * 1e9 / (double)m->pub.operation_rate;
	double launch = (double)m->launch_ns[ACCEL_COST_KERNEL];
	double memory = accel_cost_item_ns(m, ACCEL_COST_KERNEL, wg * (double)c->bytes) - launch;

	if (wg == 0)
		return 0; /* records nothing on the device */
	return (compute > memory ? compute : memory) + launch;
}

/* A fill through an indirect whole-range ref: counted on its slot. */
static int whole_fill(struct accel_cb_model *m, const struct accel_plan *plan,
		      const struct accel_plan_ref *ref)
{
	if (!m->whole_count) {
		m->whole_count = calloc(plan->used_count, sizeof(*m->whole_count));
		m->whole_off = calloc(plan->used_count, sizeof(*m->whole_off));
		if (!m->whole_count || !m->whole_off)
			return -ENOMEM;
	}
	m->whole_count[ref->slot]++;
	m->whole_off[ref->slot] += ref->address;
	return 0;
}

/* One command's share of the model; -ENOMEM. */
static int model_add(struct accel_cb_model *m, const struct accel_cost_model *p,
		     const struct accel_plan *plan, const struct accel_cmd *cmd)
{
	const struct accel_plan_ref *ref = (const struct accel_plan_ref *)
		((const uint8_t *)plan->params.data + cmd->params);

	switch ((enum accel_cmd_type)cmd->type) {
	case ACCEL_CMD_FILL:
		if (ref->slot != ACCEL_PLAN_DIRECT && ref->length == ACCEL_WHOLE_BUFFER) {
			m->fixed_ns += (double)p->launch_ns[ACCEL_COST_FILL];
			return whole_fill(m, plan, ref);
		}
		m->fixed_ns += accel_cost_item_ns(p, ACCEL_COST_FILL, (double)ref->length);
		return 0;
	case ACCEL_CMD_UPDATE:
		m->fixed_ns += accel_cost_item_ns(p, ACCEL_COST_FILL, (double)ref->length);
		return 0;
	case ACCEL_CMD_COPY:
		m->fixed_ns += accel_cost_item_ns(p, ACCEL_COST_COPY, 2.0 * (double)ref->length);
		return 0;
	case ACCEL_CMD_DISPATCH:
		if (!cmd->dispatch.export->cost.operations &&
		    !cmd->dispatch.export->cost.bytes) {
			m->declared = false;
			m->fixed_ns += (double)p->launch_ns[ACCEL_COST_KERNEL];
		} else {
			m->fixed_ns += dispatch_ns(p, cmd);
		}
		return 0;
	case ACCEL_CMD_DISPATCH_INDIRECT:
		m->declared = false;
		m->fixed_ns += (double)p->launch_ns[ACCEL_COST_KERNEL];
		return 0;
	case ACCEL_CMD_BARRIER:
		return 0;
	}
	return 0;
}

static void model_free(struct accel_cb_model *m)
{
	while (m) {
		struct accel_cb_model *older = m->older;

		free(m->whole_count);
		free(m->whole_off);
		free(m);
		m = older;
	}
}

/* Builds @cb's model for generation @gen; NULL: out of memory. */
static struct accel_cb_model *model_build(accel_command_buffer_t *cb,
					  unsigned int gen)
{
	const struct accel_plan *plan = &cb->plan;
	struct accel_cb_model *m = calloc(1, sizeof(*m));
	size_t n = ACCEL_VEC_COUNT(&plan->commands, struct accel_cmd);

	if (!m)
		return NULL;
	accel_cost_model_get(cb->device, &m->params);
	m->gen = gen;
	m->declared = true;
	m->fixed_ns = (double)m->params.pub.submission_ns;
	for (size_t i = 0; i < n; i++) {
		if (model_add(m, &m->params, plan, &ACCEL_VEC_AT(&plan->commands, struct accel_cmd, i))) {
			model_free(m);
			return NULL;
		}
	}
	return m;
}

/* @cb's model for the device's current parameters; NULL: out of memory. */
static struct accel_cb_model *model_get(accel_command_buffer_t *cb)
{
	unsigned int gen = atomic_load(&cb->device->cost_gen);
	struct accel_cb_model *cur = atomic_load(&cb->model), *m;

	while (!cur || cur->gen != gen) {
		m = model_build(cb, gen);
		if (!m)
			return NULL;
		m->older = cur;
		if (atomic_compare_exchange_strong(&cb->model, &cur, m))
			return m;
		m->older = NULL; /* another thread published one: use it */
		model_free(m);
	}
	return cur;
}

/*
 * @ns as a count of nanoseconds, saturated: a double at or above 2^64
 * converts to nothing defined (x86 gives 0, or 2^63).
 */
static uint64_t ns_u64(double ns)
{
	if (!(ns > 0))
		return 0;
	return ns >= 0x1p64 ? UINT64_MAX : (uint64_t)ns;
}

void accel_cost_predict(accel_command_buffer_t *cb,
			const struct accel_plan_slot *slots,
			accel_prediction_t *out)
{
	struct accel_cb_model *m = model_get(cb);
	uint64_t learned = atomic_load(&cb->learned_ns);
	double ns;

	out->runs = atomic_load(&cb->runs);
	out->measured_ns = atomic_load(&cb->last_ns);
	if (!m || !m->declared) {
		out->source = learned ? ACCEL_PREDICTION_LEARNED : ACCEL_PREDICTION_NONE;
		out->ns = learned ? learned : m ? ns_u64(m->fixed_ns) : 0;
		return;
	}
	ns = m->fixed_ns;
	for (uint32_t i = 0; m->whole_count && i < cb->plan.used_count; i++)
		if (m->whole_count[i]) {
			/* Their launches are in fixed_ns; each is charged its length. */
			double n = (double)m->whole_count[i];
			double each = ((double)slots[i].length * n - (double)m->whole_off[i]) / n;

			ns += n * (accel_cost_item_ns(&m->params, ACCEL_COST_FILL, each) -
				   (double)m->params.launch_ns[ACCEL_COST_FILL]);
		}
	out->source = ACCEL_PREDICTION_DECLARED;
	out->ns = ns_u64(ns);
}

void accel_cost_learn(accel_command_buffer_t *cb, uint64_t ns)
{
	uint_fast64_t old = atomic_load(&cb->learned_ns), next;

	atomic_store(&cb->last_ns, ns);
	do
		next = old ? old - old / 4 + ns / 4 : ns;
	while (!atomic_compare_exchange_weak(&cb->learned_ns, &old, next ? next : 1));
	atomic_fetch_add(&cb->runs, 1);
}

void accel_cost_cb_free(accel_command_buffer_t *cb)
{
	model_free(atomic_load(&cb->model));
}

ACCEL_EXPORT int accel_command_buffer_predict(accel_device_t *device,
					      accel_command_buffer_t *cb,
					      const accel_binding_table_t *table,
					      accel_prediction_t *out)
{
	static const char fn[] = "accel_command_buffer_predict";
	struct accel_plan_slot *slots = NULL;
	int err;

	if (!device || !cb || !out)
		return accel_fail(EINVAL, "%s: %s is NULL", fn,
				  !device ? "device" : !cb ? "cb" : "out");
	if (cb->device != device)
		return accel_fail(EXDEV, "%s: the command buffer is for device %s, not %s%s",
				  fn, cb->device->uri, device->uri,
				  accel_device_twin(cb->device, device));
	err = accel_cb_check_runnable(cb, device, table, fn);
	if (err)
		return err;
	if (cb->plan.used_count) {
		slots = malloc(cb->plan.used_count * sizeof(*slots));
		if (!slots)
			return accel_fail(ENOMEM, "%s: out of memory", fn);
		accel_plan_capture(&cb->plan, table, slots);
	}
	accel_cost_predict(cb, slots, out);
	free(slots);
	return 0;
}
