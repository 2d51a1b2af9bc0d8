// SPDX-License-Identifier: MIT
/*
 * The cost model's calibration (accel_device_calibrate()): a
 * microbenchmark run through the device's own queue, timed with the
 * device time the queue measures for each run (accel_cost_learn()), the
 * time a scheduler charges, so the model predicts what is charged.
 *
 * Each figure is the median of ROUNDS runs after a warm-up run, and the
 * overheads are taken out by differences:
 *
 *   t(1 tiny fill)    = submission + launch
 *   t(17 tiny fills)  = submission + 17 launches   -> launch, submission
 *   t(copy of N)      = t(1 tiny fill) + 2N / bandwidth
 *   t(stream of N)    = t(1 tiny fill) + 3N / kernel bandwidth
 *   t(W workgroups)   = t(1 tiny fill) + ops / operation rate
 *
 * The copy, the stream and the compute kernel grow until they take at
 * least MEASURE_NS (or the buffers end), so that the overheads stay a small
 * part of them on any device. The kernels are the driver's (device ops
 * calibration_executable); a driver without them keeps the default rate
 * and kernel bandwidth.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "accel/status.h"
#include "core.h"
#include "error.h"
#include "sched.h"

#define ROUNDS 7
#define LAUNCHES 17
#define MEASURE_NS 4000000.0          /* 4 ms */
#define COPY_MIN (UINT64_C(1) << 20)  /* 1 MiB */
#define COPY_MAX (UINT64_C(64) << 20) /* 64 MiB */
#define OPS_WORKGROUPS 64u
#define OPS_ITER_MIN 64u
#define OPS_ITER_MAX (1u << 20)
#define CALIBRATE_TIMEOUT_NS (INT64_C(30) * 1000000000)

struct calib {
	accel_device_t *dev;
	accel_queue_t *queue;
	accel_buffer_t *src, *dst;
	uint64_t size;
};

/*
 * Runs @cb once and waits for its signal (a failed run fails its
 * semaphore, so the error is not lost): 0 with *@ns its device time, or
 * -errno with the message set.
 */
static int run_once(struct calib *c, accel_command_buffer_t *cb, double *ns)
{
	accel_semaphore_t *sem = NULL;
	uint64_t one = 1;
	accel_semaphore_list_t signal = { 1, &sem, &one };
	int err = accel_semaphore_create(c->dev->scheduler, 0, &sem);

	if (!err)
		err = accel_queue_execute(c->queue, NULL, &signal, cb, NULL, 0);
	if (!err)
		err = accel_semaphore_wait(sem, 1, 0, accel_deadline_after(CALIBRATE_TIMEOUT_NS));
	accel_semaphore_release(sem);
	*ns = (double)atomic_load(&cb->last_ns);
	return err;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The median of ROUNDS runs of @cb, after a warm-up run. */
static int run_median(struct calib *c, accel_command_buffer_t *cb, double *ns)
{
	double t[ROUNDS];
	int err = run_once(c, cb, &t[0]);

	for (int i = 0; !err && i < ROUNDS; i++)
		err = run_once(c, cb, &t[i]);
	if (err)
		return err;
	qsort(t, ROUNDS, sizeof(t[0]), cmp_double);
	*ns = t[ROUNDS / 2] > 1 ? t[ROUNDS / 2] : 1;
	return 0;
}

static int cb_begin(struct calib *c, accel_command_buffer_t **cb)
{
	int err = accel_command_buffer_create(c->dev, ACCEL_COMMAND_BUFFER_REUSABLE, 0, cb);

	return err ? err : accel_command_buffer_begin(*cb);
}

/* A command buffer of @n fills of 4 bytes; its median time. */
static int time_fills(struct calib *c, uint32_t n, double *ns)
{
	static const uint32_t zero;
	accel_command_buffer_t *cb = NULL;
	int err = cb_begin(c, &cb);

	for (uint32_t i = 0; !err && i < n; i++)
		err = accel_command_buffer_fill(cb, accel_buffer_ref_direct(c->dst, 4 * i, 4),
						&zero, 4);
	if (!err)
		err = accel_command_buffer_end(cb);
	if (!err)
		err = run_median(c, cb, ns);
	accel_command_buffer_release(cb);
	return err;
}

static int time_copy(struct calib *c, uint64_t len, double *ns)
{
	accel_command_buffer_t *cb = NULL;
	int err = cb_begin(c, &cb);

	if (!err)
		err = accel_command_buffer_copy(cb, accel_buffer_ref_direct(c->src, 0, len),
						accel_buffer_ref_direct(c->dst, 0, len));
	if (!err)
		err = accel_command_buffer_end(cb);
	if (!err)
		err = run_median(c, cb, ns);
	accel_command_buffer_release(cb);
	return err;
}

/* The streaming kernel over @len bytes of each buffer (a 2-D grid). */
static int time_stream(struct calib *c, accel_executable_t *e, uint64_t len,
		       double *ns)
{
	uint64_t groups = len / 4 / ACCEL_COST_CALIBRATE_WG;
	const uint32_t wg[3] = { groups > 1024 ? 1024 : (uint32_t)groups,
				 groups > 1024 ? (uint32_t)(groups / 1024) : 1, 1 };
	accel_buffer_ref_t xy[2] = { accel_buffer_ref_direct(c->src, 0, len),
				     accel_buffer_ref_direct(c->dst, 0, len) };
	accel_command_buffer_t *cb = NULL;
	int err = cb_begin(c, &cb);

	if (!err)
		err = accel_command_buffer_dispatch(cb, e, 1, wg, NULL, 0, xy, 2);
	if (!err)
		err = accel_command_buffer_end(cb);
	if (!err)
		err = run_median(c, cb, ns);
	accel_command_buffer_release(cb);
	return err;
}

static int time_ops(struct calib *c, accel_executable_t *e, uint32_t iter,
		    double *ns)
{
	const uint32_t wg[3] = { OPS_WORKGROUPS, 1, 1 };
	accel_buffer_ref_t out = accel_buffer_ref_direct(c->dst, 0, 4 * OPS_WORKGROUPS);
	accel_command_buffer_t *cb = NULL;
	int err = cb_begin(c, &cb);

	if (!err)
		err = accel_command_buffer_dispatch(cb, e, 0, wg, &iter, 1, &out, 1);
	if (!err)
		err = accel_command_buffer_end(cb);
	if (!err)
		err = run_median(c, cb, ns);
	accel_command_buffer_release(cb);
	return err;
}

/* Launch and submission overheads; *@base: one tiny fill's time. */
static int measure_overheads(struct calib *c, accel_cost_params_t *p,
			     double *base)
{
	double many;
	int err = time_fills(c, 1, base);

	if (!err)
		err = time_fills(c, LAUNCHES, &many);
	if (err)
		return err;
	p->dispatch_ns = many > *base ? (uint64_t)((many - *base) / (LAUNCHES - 1)) : 0;
	p->submission_ns = *base > (double)p->dispatch_ns ?
			   (uint64_t)(*base - (double)p->dispatch_ns) : 0;
	return 0;
}

static int measure_bandwidth(struct calib *c, accel_cost_params_t *p,
			     double base)
{
	uint64_t len = COPY_MIN;
	double t = 0;
	int err;

	for (;;) {
		err = time_copy(c, len, &t);
		if (err || t - base >= MEASURE_NS || len >= c->size)
			break;
		len *= 4;
		len = len < c->size ? len : c->size;
	}
	if (err)
		return err;
	p->bandwidth = (uint64_t)(2.0 * (double)len * 1e9 / (t - base > 1 ? t - base : 1));
	return 0;
}

/* Lengths: a multiple of 1024 workgroups' elements, up to the buffers'. */
static int measure_kernel_bandwidth(struct calib *c, accel_executable_t *e,
				    accel_cost_params_t *p, double base)
{
	uint64_t len = COPY_MIN, t_len;
	double t = 0;
	int err;

	for (;;) {
		t_len = len;
		err = time_stream(c, e, len, &t);
		if (err || t - base >= MEASURE_NS || len >= c->size)
			break;
		len *= 4;
		len = len < c->size ? len : c->size;
	}
	if (err)
		return err;
	p->kernel_bandwidth = (uint64_t)(3.0 * (double)t_len * 1e9 / (t - base > 1 ? t - base : 1));
	return 0;
}

static int measure_kernels(struct calib *c, accel_cost_params_t *p, double base)
{
	accel_executable_t *e = NULL;
	uint32_t iter = OPS_ITER_MIN;
	double t = 0, ops;
	int err;

	if (!c->dev->ops->calibration_executable)
		return 0; /* keeps the defaults; the docs say which drivers */
	err = c->dev->ops->calibration_executable(c->dev, &e);
	for (; !err; iter *= 4) {
		err = time_ops(c, e, iter, &t);
		if (err || t - base >= MEASURE_NS || iter >= OPS_ITER_MAX)
			break;
	}
	if (!err) {
		ops = (double)OPS_WORKGROUPS * ACCEL_COST_CALIBRATE_WG * 8.0 * iter;
		p->operation_rate = (uint64_t)(ops * 1e9 / (t - base > 1 ? t - base : 1));
		err = measure_kernel_bandwidth(c, e, p, base);
	}
	accel_executable_release(e);
	return err;
}

/*
 * Writes both buffers once: memory never written may all be one shared
 * zero page (cpu, lavapipe), which a copy reads from cache.
 */
static int calib_touch(struct calib *c)
{
	static const uint32_t pattern = 0x5a5a5a5a;
	accel_command_buffer_t *cb = NULL;
	double ns;
	int err = cb_begin(c, &cb);

	if (!err)
		err = accel_command_buffer_fill(cb, accel_buffer_ref_direct(c->src, 0, c->size),
						&pattern, 4);
	if (!err)
		err = accel_command_buffer_fill(cb, accel_buffer_ref_direct(c->dst, 0, c->size),
						&pattern, 4);
	if (!err)
		err = accel_command_buffer_end(cb);
	if (!err)
		err = run_once(c, cb, &ns);
	accel_command_buffer_release(cb);
	return err;
}

static int calib_open(struct calib *c, accel_device_t *d)
{
	const accel_buffer_params_t bp = {
		.memory_type = ACCEL_MEMORY_TYPE_DEVICE_LOCAL,
		.usage = ACCEL_BUFFER_USAGE_TRANSFER | ACCEL_BUFFER_USAGE_DISPATCH_STORAGE,
	};
	int err;

	c->dev = d;
	c->size = COPY_MAX;
	err = accel_queue_create(d, 0, &c->queue);
	while (!err) {
		err = accel_allocator_allocate_buffer(&d->allocator, &bp, c->size, &c->src);
		if (!err)
			err = accel_allocator_allocate_buffer(&d->allocator, &bp, c->size, &c->dst);
		if (err != -ENOMEM || c->size <= COPY_MIN)
			break;
		accel_buffer_release(c->src); /* a smaller device: try half */
		c->src = NULL;
		c->size /= 2;
		err = 0;
	}
	return err ? err : calib_touch(c);
}

static void calib_close(struct calib *c)
{
	if (c->queue)
		accel_queue_wait_idle(c->queue, accel_deadline_after(CALIBRATE_TIMEOUT_NS));
	accel_buffer_release(c->src);
	accel_buffer_release(c->dst);
	accel_queue_release(c->queue);
}

int accel_cost_measure(accel_device_t *d, accel_cost_params_t *p)
{
	struct calib c = { 0 };
	double base = 0;
	const char *step = "setting up";
	int err = calib_open(&c, d);

	accel_cost_params_get(d, p);
	if (!err) {
		step = "timing launches";
		err = measure_overheads(&c, p, &base);
	}
	if (!err) {
		step = "timing copies";
		err = measure_bandwidth(&c, p, base);
	}
	if (!err) {
		step = "timing the calibration kernels";
		err = measure_kernels(&c, p, base);
	}
	calib_close(&c);
	if (err) {
		char msg[ACCEL_ERROR_MAX];

		accel_strfmt(msg, sizeof(msg), "%s", accel_error_message());
		return accel_fail(-err, "accel_device_calibrate: %s: %s", step, msg);
	}
	p->source = ACCEL_COST_SOURCE_CALIBRATED;
	return 0;
}
