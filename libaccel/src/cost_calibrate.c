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
 *   t(1 tiny fill)    = submission + fill launch
 *   t(17 tiny fills)  = submission + 17 fill launches -> launch, submission
 *   t(17 tiny copies) = submission + 17 copy launches (a kernel's likewise,
 *                       17 dispatches of one workgroup)
 *   t(W workgroups)   = t(1 tiny fill) + ops / operation rate, with W
 *                       grown while the device has idle units (a GPU)
 *
 * Then, per kind (fill, copy, the streaming kernel), a curve: one item
 * alone in a command buffer, at working sets from SWEEP_MIN up by 4x to
 * the buffers' size (or until a run of SWEEP_STOP_MIN or more takes
 * SWEEP_STOP_NS), each point the
 * item's time less the submission. The curve holds what one bandwidth
 * cannot: small items running from cache, large ones from memory, and a
 * driver's cost per item of a size (lavapipe's large transfers). The
 * compute kernel grows until it takes at least MEASURE_NS; its rate is
 * the median of OPS_BURSTS bursts timed apart. The kernels
 * are the driver's (device ops calibration_executable); a driver without
 * them keeps the default rate, no kernel curve, and a fill's launch.
 */
#include <errno.h>
#include <stdbool.h>
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
#define SWEEP_MIN (UINT64_C(64) << 10) /* 64 KiB */
#define SWEEP_STOP_NS 50000000.0       /* 50 ms */
#define SWEEP_STOP_MIN (UINT64_C(4) << 20) /* 4 MiB */
#define COPY_MAX (UINT64_C(64) << 20) /* 64 MiB */
#define OPS_WORKGROUPS 64u
#define OPS_WORKGROUPS_MAX 16384u
#define OPS_ITER_MIN 64u
#define OPS_BURSTS 3
#define OPS_ITER_MAX (1u << 20)
#define CALIBRATE_TIMEOUT_NS (INT64_C(30) * 1000000000)

struct calib {
	accel_device_t *dev;
	accel_queue_t *queue;
	accel_buffer_t *src, *dst;
	uint64_t size;
	uint32_t ops_wg; /* the compute kernel's workgroups */
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

/*
 * One item of @kind over @len bytes of each buffer from @off (a kernel:
 * the streaming kernel @e over a 2-D grid).
 */
static int record_item(struct calib *c, accel_command_buffer_t *cb,
		       enum accel_cost_kind kind, accel_executable_t *e,
		       uint64_t len, uint64_t off)
{
	/*
	 * 1.0f: not one byte repeated, which the cpu driver turns into a
	 * memset() far faster than the fill of an arbitrary pattern.
	 */
	static const uint32_t pattern = 0x3f800000;
	uint64_t groups = len / 4 / ACCEL_COST_CALIBRATE_WG;
	const uint32_t wg[3] = { groups > 1024 ? 1024 : groups ? (uint32_t)groups : 1,
				 groups > 1024 ? (uint32_t)(groups / 1024) : 1, 1 };
	accel_buffer_ref_t xy[2] = { accel_buffer_ref_direct(c->src, off, len),
				     accel_buffer_ref_direct(c->dst, off, len) };

	switch (kind) {
	case ACCEL_COST_FILL:
		return accel_command_buffer_fill(cb, xy[1], &pattern, 4);
	case ACCEL_COST_COPY:
		return accel_command_buffer_copy(cb, xy[0], xy[1]);
	default:
		return accel_command_buffer_dispatch(cb, e, 1, wg, NULL, 0, xy, 2);
	}
}

/*
 * The median time of a command buffer of @reps items of @kind over @len.
 * Each item has its own range: items with no barrier between them may run
 * at once (the cpu driver's workers do), and must not write the same bytes.
 */
static int time_items(struct calib *c, enum accel_cost_kind kind,
		      accel_executable_t *e, uint64_t len, uint32_t reps,
		      double *ns)
{
	uint64_t stride = (len + 255) & ~(uint64_t)255;
	accel_command_buffer_t *cb = NULL;
	int err = cb_begin(c, &cb);

	if (reps > 1 && stride * reps > c->size)
		reps = (uint32_t)(c->size / stride); /* never: reps are of tiny items */
	for (uint32_t i = 0; !err && i < reps; i++)
		err = record_item(c, cb, kind, e, len, i * stride);
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
	const uint32_t wg[3] = { c->ops_wg, 1, 1 };
	accel_buffer_ref_t out = accel_buffer_ref_direct(c->dst, 0, 4 * (uint64_t)c->ops_wg);
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

/*
 * @kind's launch: LAUNCHES tiny items less the submission, each (a fill
 * is 4 bytes, a copy 4, a kernel one workgroup).
 */
static int measure_launch(struct calib *c, enum accel_cost_kind kind,
			  accel_executable_t *e, struct accel_cost_model *m)
{
	uint64_t len = kind == ACCEL_COST_KERNEL ? 4 * ACCEL_COST_CALIBRATE_WG : 4;
	double t, sub = (double)m->pub.submission_ns;
	int err = time_items(c, kind, e, len, LAUNCHES, &t);

	if (!err)
		m->launch_ns[kind] = t > sub ? (uint64_t)((t - sub) / LAUNCHES) : 0;
	return err;
}

/* Launch and submission overheads; *@base: one tiny fill's time. */
static int measure_overheads(struct calib *c, struct accel_cost_model *m,
			     double *base)
{
	accel_cost_params_t *p = &m->pub;
	double many;
	int err = time_items(c, ACCEL_COST_FILL, NULL, 4, 1, base);

	if (!err)
		err = time_items(c, ACCEL_COST_FILL, NULL, 4, LAUNCHES, &many);
	if (err)
		return err;
	p->dispatch_ns = many > *base ? (uint64_t)((many - *base) / (LAUNCHES - 1)) : 0;
	p->submission_ns = *base > (double)p->dispatch_ns ?
			   (uint64_t)(*base - (double)p->dispatch_ns) : 0;
	m->launch_ns[ACCEL_COST_FILL] = p->dispatch_ns;
	m->launch_ns[ACCEL_COST_KERNEL] = p->dispatch_ns; /* without a kernel */
	return measure_launch(c, ACCEL_COST_COPY, NULL, m);
}

/* Bytes an item of @kind over @len bytes of each buffer reads plus writes. */
static double touched(enum accel_cost_kind kind, uint64_t len)
{
	return (double)len * (kind == ACCEL_COST_FILL ? 1 : kind == ACCEL_COST_COPY ? 2 : 3);
}

/*
 * One item of @kind at working sets of SWEEP_MIN, 4x, ... up to the
 * buffers' size (or until a run of SWEEP_STOP_MIN or more takes
 * SWEEP_STOP_NS), each alone in its command buffer as applications record
 * them, so that what a driver spends per item of that size (lavapipe's
 * setup of a large transfer) shows. Fills @bytes and @ns (less the submission); returns the number
 * of points, or -errno.
 */
static int sweep(struct calib *c, enum accel_cost_kind kind, accel_executable_t *e,
		 const struct accel_cost_model *m, double bytes[ACCEL_COST_POINTS],
		 double ns[ACCEL_COST_POINTS])
{
	double t, sub = (double)m->pub.submission_ns;
	int n = 0, err;

	for (uint64_t len = SWEEP_MIN; n < ACCEL_COST_POINTS && len <= c->size; len *= 4) {
		err = time_items(c, kind, e, len, 1, &t);
		if (err)
			return err;
		bytes[n] = touched(kind, len);
		ns[n++] = t > sub ? t - sub : 1;
		if (t >= SWEEP_STOP_NS && len >= SWEEP_STOP_MIN)
			break; /* not on a small item: a busy machine slows one */
	}
	return n;
}

void accel_cost_curve_set(struct accel_cost_model *m, enum accel_cost_kind kind,
			  const double *bytes, const double *ns, int n)
{
	struct accel_cost_curve *c = &m->curve[kind];
	double launch = (double)m->launch_ns[kind], low = 0;

	*c = (struct accel_cost_curve){ .count = (uint32_t)n };
	for (int i = n - 1; i >= 0; i--) {
		low = i == n - 1 || ns[i] < low ? ns[i] : low;
		c->bytes[i] = (uint64_t)bytes[i];
		c->ns[i] = (uint64_t)(low > launch ? low : launch);
	}
}

/* @kind's curve; *@bw: its bandwidth at the largest working set. */
static int measure_curve(struct calib *c, enum accel_cost_kind kind,
			 accel_executable_t *e, struct accel_cost_model *m,
			 uint64_t *bw)
{
	double bytes[ACCEL_COST_POINTS], ns[ACCEL_COST_POINTS];
	int n = sweep(c, kind, e, m, bytes, ns);

	if (n <= 0)
		return n;
	accel_cost_curve_set(m, kind, bytes, ns, n);
	*bw = (uint64_t)(bytes[n - 1] * 1e9 / (double)m->curve[kind].ns[n - 1]);
	return 0;
}

/*
 * The compute kernel's operation rate into *@rate: with *@iter 0, its
 * iterations grow until a run takes MEASURE_NS (and *@iter keeps them).
 */
static int time_op_rate(struct calib *c, accel_executable_t *e, uint32_t *iter,
			double base, double *rate)
{
	bool grow = !*iter;
	double t = 0, ops;
	int err;

	for (*iter = grow ? OPS_ITER_MIN : *iter;; *iter *= 4) {
		err = time_ops(c, e, *iter, &t);
		if (err || !grow || t - base >= MEASURE_NS || *iter >= OPS_ITER_MAX)
			break;
	}
	ops = (double)c->ops_wg * ACCEL_COST_CALIBRATE_WG * 8.0 * *iter;
	*rate = ops * 1e9 / (t - base > 1 ? t - base : 1);
	return err;
}

/*
 * OPS_WORKGROUPS keep a CPU's workers busy, but run on a few of a GPU's
 * compute units (an H100 holds over 4000 such workgroups at once). The
 * grid grows 4x at a time, up to OPS_WORKGROUPS_MAX, while that raises
 * the rate *@rate by half or more; each wider run has a quarter of the
 * iterations, the same work, so a device already full (a CPU) stops after
 * one run as long as the first. Once widened, the iterations grow again
 * (*@iter) to a run of MEASURE_NS, and *@rate is that run's.
 */
static int widen_ops(struct calib *c, accel_executable_t *e, uint32_t *iter,
		     double base, double *rate)
{
	uint32_t it = *iter;
	bool widened = false;
	int err;

	while (c->ops_wg * 4 <= OPS_WORKGROUPS_MAX &&
	       16 * (uint64_t)c->ops_wg <= c->size) {
		uint32_t keep = c->ops_wg;
		double wider;

		c->ops_wg *= 4;
		it = it / 4 > OPS_ITER_MIN ? it / 4 : OPS_ITER_MIN;
		err = time_op_rate(c, e, &it, base, &wider);
		if (err)
			return err;
		if (wider < 1.5 * *rate) {
			c->ops_wg = keep;
			break;
		}
		*rate = wider;
		widened = true;
	}
	if (!widened)
		return 0;
	*iter = 0;
	return time_op_rate(c, e, iter, base, rate);
}

/*
 * The operation rate is timed in OPS_BURSTS bursts apart (before the
 * kernel's launch, before its curve, after it) and the median taken: a
 * burst is tens of milliseconds, and another process's burst on a shared
 * machine can halve one of them, not all.
 */
static int measure_kernels(struct calib *c, struct accel_cost_model *m, double base)
{
	accel_executable_t *e = NULL;
	double rate[OPS_BURSTS];
	uint32_t iter = 0;
	int err;

	if (!c->dev->ops->calibration_executable)
		return 0; /* keeps the defaults; the docs say which drivers */
	err = c->dev->ops->calibration_executable(c->dev, &e);
	if (!err)
		err = time_op_rate(c, e, &iter, base, &rate[0]);
	if (!err)
		err = widen_ops(c, e, &iter, base, &rate[0]);
	if (!err)
		err = measure_launch(c, ACCEL_COST_KERNEL, e, m);
	if (!err)
		err = time_op_rate(c, e, &iter, base, &rate[1]);
	if (!err)
		err = measure_curve(c, ACCEL_COST_KERNEL, e, m, &m->pub.kernel_bandwidth);
	if (!err)
		err = time_op_rate(c, e, &iter, base, &rate[2]);
	if (!err) {
		qsort(rate, OPS_BURSTS, sizeof(rate[0]), cmp_double);
		m->pub.operation_rate = (uint64_t)rate[OPS_BURSTS / 2];
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
	c->ops_wg = OPS_WORKGROUPS;
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

int accel_cost_measure(accel_device_t *d, struct accel_cost_model *m)
{
	struct calib c = { 0 };
	uint64_t fill_bw = 0;
	double base = 0;
	const char *step = "setting up";
	int err = calib_open(&c, d);

	accel_cost_model_get(d, m);
	if (!err) {
		step = "timing launches";
		err = measure_overheads(&c, m, &base);
	}
	if (!err) {
		step = "timing fills";
		err = measure_curve(&c, ACCEL_COST_FILL, NULL, m, &fill_bw);
	}
	if (!err) {
		step = "timing copies";
		err = measure_curve(&c, ACCEL_COST_COPY, NULL, m, &m->pub.bandwidth);
	}
	if (!err) {
		step = "timing the calibration kernels";
		err = measure_kernels(&c, m, base);
	}
	calib_close(&c);
	if (err) {
		char msg[ACCEL_ERROR_MAX];

		accel_strfmt(msg, sizeof(msg), "%s", accel_error_message());
		return accel_fail(-err, "accel_device_calibrate: %s: %s", step, msg);
	}
	m->pub.source = ACCEL_COST_SOURCE_CALIBRATED;
	return 0;
}
