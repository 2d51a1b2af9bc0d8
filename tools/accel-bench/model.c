// SPDX-License-Identifier: MIT
/*
 * accel-bench model: how well libaccel's cost model predicts device time.
 *
 * On cpu://, vulkan://0 (lavapipe here) and cuda://0 (where a GPU opens,
 * with the test kernels named by ACCEL_BENCH_CUDA_EXECUTABLES: its first
 * file, tests/unit/test-kernels.cuexe), each device is calibrated in
 * process (accel_device_calibrate(), with the cache off so that a user's
 * calibration is neither used nor replaced), then every workload below is
 * recorded once and run ROUNDS times; its error is
 * |predicted - measured| / measured with the median of its measured device
 * times (the time libaccel measures per run, which a scheduler charges).
 * The METRIC is the median error over the workloads:
 *
 *	model.median_abs_error.cpu, model.median_abs_error.vulkan,
 *	model.median_abs_error.cuda
 *
 * The workloads, at three sizes (256 KiB, 2 MiB and 16 MiB of data per
 * buffer): a fill and a copy (byte counts), and the kernels with declared
 * costs: on cpu the examples' (examples/kernels: saxpy, add_f32, scale_f32
 * and the image pipeline's blur3x3, gradient, threshold), on vulkan and
 * cuda the test kernels (tests/unit/kernels/{vulkan,cuda}: saxpy, add_u32,
 * fill_u32).
 *
 * accel-bench share: fair share under the embedded scheduler when jobs
 * differ in size. Two queues of weight 1:1 stay backlogged on one engine
 * of 16 credits (a deep device queue); queue A's jobs are 10x queue B's,
 * and every 100 of A's jobs A's size changes (10, 40, 5, 20 units of B's).
 * The device is simulated, so the figure measures the policy, not the
 * machine: the scheduler is the real one, its jobs are fake (their device
 * time is set when the benchmark completes them, one at a time in release
 * order, on a simulated clock). Each job carries a prediction with a
 * deterministic error of up to +-20% (the model's goal is 25%). From the
 * start and from each size change, A's share of the device time is taken
 * over a window of 20 of A's jobs (and as much time of B's); the figure is
 * the largest |share - 1/2| / (1/2) over those windows:
 *
 *	sched.share_error_mixed      charged by prediction
 *	sched.share_error_mixed_avg  the same load charged the running average
 *
 * The same with the embedded default of 4 credits is printed as a note.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <accel/accel.h>
#include <accel/cpu_executable.h>

#include "bench.h"
#include "src/sched.h"

/* The examples' cpu kernels, linked in (examples/kernels/example-kernels.c). */
extern const struct accel_cpu_executable accel_cpu_executable_v1;
#define SIZES 3
#define MAX_WORKLOADS 32
#define IMAGE_W 1024u
#define TILE_W 64u
#define TILE_H 4u
#define WG_1D_CPU 256u /* the examples' 1-D workgroup */
#define WG_1D_VK 64u   /* the test kernels' */

static const uint64_t sizes[SIZES] = { 256u << 10, 2u << 20, 16u << 20 };

struct model_dev {
	accel_device_t *dev;
	accel_queue_t *queue;
	accel_executable_t *exe;
	accel_buffer_t *buf[3];
	const char *scheme;
	double errors[MAX_WORKLOADS];
	int count;
	char why[4352]; /* why it could not be set up, when not libaccel's */
};

static accel_command_buffer_t *cb_begin(struct model_dev *m)
{
	accel_command_buffer_t *cb = NULL;

	if (accel_command_buffer_create(m->dev, ACCEL_COMMAND_BUFFER_REUSABLE, 0, &cb) ||
	    accel_command_buffer_begin(cb)) {
		accel_command_buffer_release(cb);
		return NULL;
	}
	return cb;
}

/* Runs @cb @rounds times; the median measured device time, or -1. */
static double measure(struct model_dev *m, accel_command_buffer_t *cb,
		      int rounds, double *predicted)
{
	double *v = calloc((size_t)rounds, sizeof(double)), med;
	accel_prediction_t p;

	if (!v)
		return -1;
	for (int r = -1; r < rounds; r++) { /* one warm-up run */
		if (accel_queue_execute(m->queue, NULL, NULL, cb, NULL, 0) ||
		    accel_queue_wait_idle(m->queue, accel_deadline_after(INT64_C(60000000000))) ||
		    accel_command_buffer_predict(m->dev, cb, NULL, &p)) {
			free(v);
			return -1;
		}
		if (r >= 0)
			v[r] = (double)p.measured_ns;
	}
	*predicted = (double)p.ns;
	med = median(v, rounds);
	free(v);
	return med;
}

/* Ends @cb, measures it, and records its error as workload @name. */
static int workload(struct model_dev *m, const struct opts *o,
		    accel_command_buffer_t *cb, const char *name, uint64_t size)
{
	double pred = 0, meas;

	if (!cb || accel_command_buffer_end(cb)) {
		accel_command_buffer_release(cb);
		return -1;
	}
	meas = measure(m, cb, o->rounds, &pred);
	accel_command_buffer_release(cb);
	if (meas <= 0)
		return -1;
	m->errors[m->count++] = fabs(pred - meas) / meas;
	fprintf(notes, "# model %s: %-10s %6" PRIu64 " KiB: predicted %9.1f us, measured %9.1f us (%+.0f%%)\n",
		m->scheme, name, size >> 10, pred / 1e3, meas / 1e3,
		100 * (pred - meas) / meas);
	return 0;
}

static int transfers(struct model_dev *m, const struct opts *o, uint64_t n)
{
	static const uint32_t pattern = 0x3f800000;
	accel_command_buffer_t *cb = cb_begin(m);

	if (cb && accel_command_buffer_fill(cb, accel_buffer_ref_direct(m->buf[0], 0, n),
					    &pattern, 4))
		return -1;
	if (workload(m, o, cb, "fill", n))
		return -1;
	cb = cb_begin(m);
	if (cb && accel_command_buffer_copy(cb, accel_buffer_ref_direct(m->buf[0], 0, n),
					    accel_buffer_ref_direct(m->buf[1], 0, n)))
		return -1;
	return workload(m, o, cb, "copy", n);
}

/* One dispatch of entry @name over @wg workgroups on buffers 0..@nb-1. */
static int kernel(struct model_dev *m, const struct opts *o, const char *name,
		  const uint32_t wg[3], const uint32_t *k, uint32_t nk,
		  uint32_t nb, uint64_t n)
{
	accel_buffer_ref_t refs[3];
	accel_command_buffer_t *cb;
	uint32_t ord;

	if (accel_executable_lookup(m->exe, name, &ord))
		return 0; /* not in this device's kernels */
	for (uint32_t i = 0; i < nb; i++)
		refs[i] = accel_buffer_ref_direct(m->buf[i], 0, n);
	cb = cb_begin(m);
	if (cb && accel_command_buffer_dispatch(cb, m->exe, ord, wg, k, nk, refs, nb))
		return -1;
	return workload(m, o, cb, name, n);
}

static int kernels_1d(struct model_dev *m, const struct opts *o, uint64_t n,
		      uint32_t wg1d)
{
	uint32_t count = (uint32_t)(n / 4 / wg1d);
	/* The vulkan kernels take a 2-D grid (x + y * width) past 65535. */
	const uint32_t wg[3] = { count > 32768 ? 32768 : count,
				 count > 32768 ? count / 32768 : 1, 1 };
	const uint32_t one = 0x3f800000; /* 1.0f: also the fill value */

	if (kernel(m, o, "saxpy", wg, &one, 1, 2, n) ||
	    kernel(m, o, "add_f32", wg, NULL, 0, 3, n) ||
	    kernel(m, o, "add_u32", wg, NULL, 0, 3, n) ||
	    kernel(m, o, "scale_f32", wg, &one, 1, 1, n) ||
	    kernel(m, o, "fill_u32", wg, &one, 1, 1, n))
		return -1;
	return 0;
}

static int kernels_image(struct model_dev *m, const struct opts *o, uint64_t n)
{
	uint32_t h = (uint32_t)(n / 4 / IMAGE_W);
	const uint32_t wg[3] = { IMAGE_W / TILE_W, h / TILE_H, 1 };
	const uint32_t k[3] = { IMAGE_W, h, 128 };

	if (kernel(m, o, "blur3x3", wg, k, 2, 2, n) ||
	    kernel(m, o, "gradient", wg, k, 2, 2, n) ||
	    kernel(m, o, "threshold", wg, k, 3, 2, n))
		return -1;
	return 0;
}

#ifdef ACCEL_BENCH_VULKAN
/* The vulkan test kernels, linked in, through a temporary file. */
static int load_vk_kernels(struct model_dev *m)
{
	char path[4096];
	int fd, err;

	snprintf(path, sizeof(path), "%s/accel-bench-model-XXXXXX", bench_tmpdir());
	fd = mkstemp(path);
	if (fd < 0 || close(fd) || bench_write_vk_kernels(path)) {
		err = -errno;
		snprintf(m->why, sizeof(m->why), "cannot write the kernels to %s: %s (set TMPDIR to a writable directory)",
			 path, strerror(-err));
		if (fd >= 0)
			unlink(path);
		return err;
	}
	err = accel_executable_load(m->dev, path, &m->exe);
	unlink(path);
	return err;
}
#endif

/* The first file ACCEL_BENCH_CUDA_EXECUTABLES names (colon-separated). */
static int load_cuda_kernels(struct model_dev *m)
{
	const char *env = getenv("ACCEL_BENCH_CUDA_EXECUTABLES");
	char path[4096];
	size_t n;

	if (!env || !*env) {
		snprintf(m->why, sizeof(m->why), "ACCEL_BENCH_CUDA_EXECUTABLES names no executable (set it to the test kernels, build/tests/unit/test-kernels.cuexe)");
		return -ENOENT;
	}
	n = strcspn(env, ":");
	snprintf(path, sizeof(path), "%.*s", (int)(n < sizeof(path) ? n : sizeof(path) - 1), env);
	return accel_executable_load(m->dev, path, &m->exe);
}

static int load_kernels(struct model_dev *m)
{
	if (!strcmp(m->scheme, "cpu"))
		return accel_cpu_executable_create(m->dev, &accel_cpu_executable_v1, &m->exe);
	if (!strcmp(m->scheme, "cuda"))
		return load_cuda_kernels(m);
#ifdef ACCEL_BENCH_VULKAN
	return load_vk_kernels(m);
#else
	return -ENOENT;
#endif
}

static int model_open(struct model_dev *m, const char *uri)
{
	const accel_buffer_params_t bp = {
		ACCEL_MEMORY_TYPE_DEVICE_LOCAL,
		ACCEL_BUFFER_USAGE_TRANSFER | ACCEL_BUFFER_USAGE_DISPATCH_STORAGE,
	};
	accel_cost_params_t p;
	int err = accel_device_open(uri, NULL, &m->dev);

	if (!err)
		err = accel_queue_create(m->dev, 0, &m->queue);
	for (int i = 0; !err && i < 3; i++)
		err = accel_allocator_allocate_buffer(accel_device_allocator(m->dev), &bp,
						      sizes[SIZES - 1], &m->buf[i]);
	if (!err)
		err = load_kernels(m);
	if (!err)
		err = accel_device_calibrate(m->dev, ACCEL_CALIBRATE_FORCE, &p);
	if (!err)
		fprintf(notes, "# model %s: calibrated: %.2f GB/s transfers, %.2f GB/s kernels, %.2f Gop/s, %.2f us per command, %.2f us per submission\n",
			m->scheme, p.bandwidth / 1e9, p.kernel_bandwidth / 1e9, p.operation_rate / 1e9,
			p.dispatch_ns / 1e3, p.submission_ns / 1e3);
	return err;
}

static void model_close(struct model_dev *m)
{
	if (m->queue)
		accel_queue_wait_idle(m->queue, accel_deadline_after(INT64_C(60000000000)));
	for (int i = 0; i < 3; i++)
		accel_buffer_release(m->buf[i]);
	accel_executable_release(m->exe);
	accel_queue_release(m->queue);
	accel_device_release(m->dev);
}

/* The median error on @uri into *@err; 1 when skipped, -1 on failure. */
static int model_run(const struct opts *o, const char *scheme, const char *uri,
		     double *err)
{
	struct model_dev m = { .scheme = scheme };
	int rc = model_open(&m, uri) ? 1 : 0;

	if (rc)
		fprintf(notes, "# model %s: skipped: %s\n", scheme,
			m.why[0] ? m.why : accel_error_message());
	for (int s = 0; !rc && s < SIZES; s++)
		if (transfers(&m, o, sizes[s]) ||
		    kernels_1d(&m, o, sizes[s], strcmp(scheme, "cpu") ? WG_1D_VK : WG_1D_CPU) ||
		    kernels_image(&m, o, sizes[s]))
			rc = -1;
	if (rc < 0)
		fprintf(stderr, "accel-bench: model %s: %s\n", scheme, accel_error_message());
	if (!rc)
		*err = median(m.errors, m.count);
	model_close(&m);
	return rc;
}

int bench_model(const struct opts *o)
{
	static const char *const devs[][2] = {
		{ "cpu", "cpu://" }, { "vulkan", "vulkan://0" }, { "cuda", "cuda://0" },
	};
	const char *saved = getenv("ACCEL_CACHE_DISABLE");
	char *keep = saved ? strdup(saved) : NULL;
	int first = 1, rc = 0;

	setenv("ACCEL_CACHE_DISABLE", "1", 1); /* the user's calibration stays */
	if (o->json)
		printf("{\"bench\": \"model\", \"metrics\": {");
	for (size_t d = 0; d < sizeof(devs) / sizeof(devs[0]); d++) {
		char name[64];
		double e = 0;
		int r = model_run(o, devs[d][0], devs[d][1], &e);

		if (r < 0)
			rc = 1;
		if (r)
			continue;
		snprintf(name, sizeof(name), "model.median_abs_error.%s", devs[d][0]);
		metric(o, name, e, &first);
	}
	if (o->json)
		printf("}}\n");
	if (keep)
		setenv("ACCEL_CACHE_DISABLE", keep, 1);
	else
		unsetenv("ACCEL_CACHE_DISABLE");
	free(keep);
	return rc;
}

/* ---- share: the embedded scheduler's charge, on a simulated device ----- */

#define UNIT_NS 100000u     /* B's job: 100 us of simulated device time */
#define BACKLOG 8           /* runnable jobs each queue keeps */
#define PHASE_JOBS 100      /* A's jobs between size changes */
#define PHASES 8
#define WINDOW_JOBS 20 /* A's jobs in a window, and as much of B's time */
/*
 * Jobs in flight: a deep device queue (the module's pipelining, a GPU's
 * queue), where a charge that is wrong at release stays wrong for many
 * decisions. With the embedded default of 4, completions correct the
 * average nearly as fast as it errs (printed as a note).
 */
#define CREDITS 16


static const uint32_t a_units[4] = { 10, 40, 5, 20 };

struct sim_job {
	struct accel_sched_job job;
	int queue;      /* 0: A, 1: B, 2: a blocker */
	uint64_t size;  /* its true device time */
	uint64_t n;     /* its number in its queue */
	struct sim_job *next;
};

/* Jobs the scheduler released, in release order (the simulated device). */
static struct {
	pthread_mutex_t lock;
	struct sim_job *head, *tail;
	int released;
} dev = { .lock = PTHREAD_MUTEX_INITIALIZER };

static int sim_execute(struct accel_sched_job *job, char *msg, size_t len)
{
	struct sim_job *j = (struct sim_job *)job;

	(void)msg;
	(void)len;
	pthread_mutex_lock(&dev.lock);
	j->next = NULL;
	if (dev.tail)
		dev.tail->next = j;
	else
		dev.head = j;
	dev.tail = j;
	dev.released++;
	pthread_mutex_unlock(&dev.lock);
	return ACCEL_JOB_PENDING;
}

static void sim_destroy(struct accel_sched_job *job)
{
	free(job);
}

/* A deterministic error in [-0.2, 0.2] for job @n of a queue. */
static double pred_error(uint64_t n)
{
	uint64_t x = n * 0x9e3779b97f4a7c15ull;

	x ^= x >> 29;
	return ((double)(x % 4001) / 2000.0 - 1.0) * 0.2;
}

static int sim_submit(accel_scheduler_t *s, struct accel_sched_executor *ex,
		      int queue, uint64_t size, uint64_t n, bool predicted)
{
	struct sim_job *j = calloc(1, sizeof(*j));

	if (!j)
		return -ENOMEM;
	j->queue = queue;
	j->size = size;
	j->n = n;
	j->job.executor = ex;
	j->job.execute = sim_execute;
	j->job.destroy = sim_destroy;
	j->job.predicted_ns = predicted ? (uint64_t)((double)size * (1 + pred_error(n))) : 0;
	snprintf(j->job.label, sizeof(j->job.label), "simulated job %d", queue);
	if (s->ops->job_submit(s, &j->job)) {
		free(j);
		return -EINVAL;
	}
	return 0;
}

/*
 * The oldest released job not finished, once @released jobs were released
 * in all (waits for the scheduler's executor threads); with @released 0,
 * whenever there is one.
 */
static struct sim_job *sim_pop(int released)
{
	struct sim_job *j;

	for (;;) {
		pthread_mutex_lock(&dev.lock);
		if (dev.released >= released && dev.head) {
			j = dev.head;
			dev.head = j->next;
			if (!dev.head)
				dev.tail = NULL;
			pthread_mutex_unlock(&dev.lock);
			return j;
		}
		pthread_mutex_unlock(&dev.lock);
		sched_yield();
	}
}

/* The queue of the job released last, once @released were; -1: none. */
static int sim_last_released(int released)
{
	int q;

	for (;;) {
		pthread_mutex_lock(&dev.lock);
		if (dev.released >= released) {
			q = dev.tail ? dev.tail->queue : -1;
			pthread_mutex_unlock(&dev.lock);
			return q;
		}
		pthread_mutex_unlock(&dev.lock);
		sched_yield();
	}
}

struct sim {
	accel_scheduler_t *s;
	struct accel_sched_executor *ex[3];
	uint64_t submitted[3];
	/*
	 * Per phase p (A's size): the window that opens when the first job of
	 * the phase starts on the device and lasts WINDOW_JOBS of its jobs'
	 * time; A's device time in it, and everyone's.
	 */
	double start[PHASES], span[PHASES], a[PHASES], all[PHASES];
	int phase; /* the latest phase started, -1 before */
	int credits;
	bool predicted;
};

static uint64_t a_size(uint64_t n)
{
	return (uint64_t)a_units[(n / PHASE_JOBS) % 4] * UNIT_NS;
}

static int sim_refill(struct sim *m, int q)
{
	uint64_t n = m->submitted[q]++;

	return sim_submit(m->s, m->ex[q], q, q ? UNIT_NS : a_size(n), n, m->predicted);
}

/* Job @j runs on the device over [@t0, @t0 + size): its share of a window. */
static void account(struct sim *m, const struct sim_job *j, double t0)
{
	double t1 = t0 + (double)j->size, w0, w1;
	int p;

	if (j->queue == 0 && j->n % PHASE_JOBS == 0 && j->n / PHASE_JOBS < PHASES) {
		p = m->phase = (int)(j->n / PHASE_JOBS);
		m->start[p] = t0;
		m->span[p] = (double)WINDOW_JOBS * (double)j->size * 2; /* A's and B's */
	}
	if (m->phase < 0)
		return;
	p = m->phase;
	w0 = t0 > m->start[p] ? t0 : m->start[p];
	w1 = t1 < m->start[p] + m->span[p] ? t1 : m->start[p] + m->span[p];
	if (w1 <= w0)
		return;
	if (j->queue == 0)
		m->a[p] += w1 - w0;
	m->all[p] += w1 - w0;
}

static int sim_open(struct sim *m)
{
	const struct accel_sched_queue_params qp = { "accel-bench share", 1, 100, 1 };
	char credits[16];
	int err;

	snprintf(credits, sizeof(credits), "%d", m->credits);
	setenv("ACCEL_ENGINE_CREDITS", credits, 1);
	setenv("ACCEL_SCHEDULER", "embedded", 1);
	err = accel_scheduler_open(NULL, &m->s);
	dev.head = dev.tail = NULL;
	dev.released = 0;
	/* The engine reads ACCEL_ENGINE_CREDITS when its first queue is made. */
	for (int q = 2; !err && q >= 0; q--) /* A first in the engine's list */
		err = m->s->ops->executor_create(m->s, "sim://0", &qp, &m->ex[q]);
	unsetenv("ACCEL_ENGINE_CREDITS");
	return err;
}

/* Finishes every job left (no refill), then tears the scheduler down. */
static void sim_close(struct sim *m)
{
	uint64_t left = m->submitted[0] + m->submitted[1] + m->submitted[2];

	for (uint64_t done = 0; m->s && done < left; done++) {
		struct sim_job *j = sim_pop(0);

		j->job.device_ns = j->size;
		accel_sched_job_finish(&j->job, 0, "");
	}
	for (int q = 0; q < 3; q++)
		if (m->ex[q])
			m->s->ops->executor_destroy(m->ex[q]);
	accel_scheduler_release(m->s);
}

/*
 * Runs the load: blockers hold the credits until both queues are
 * backlogged; then, one job at a time in release order, the simulated
 * device runs the oldest released job and finishes it, which releases
 * one more, whose queue is refilled. Returns the largest relative share
 * error over the windows, or -1.
 */
static double sim_run(int credits, bool predicted)
{
	struct sim m = { .predicted = predicted, .phase = -1, .credits = credits };
	double clock = 0, worst = 0;
	uint64_t finished = 0;
	int released = credits, err = sim_open(&m);

	for (int i = 0; !err && i < credits; i++)
		err = sim_refill(&m, 2); /* the blockers */
	for (int i = 0; !err && i < BACKLOG; i++)
		err = sim_refill(&m, 0) | sim_refill(&m, 1);
	while (!err && m.submitted[0] <= (uint64_t)PHASES * PHASE_JOBS) {
		struct sim_job *j = sim_pop(released);
		int q;

		if (j->queue < 2) {
			account(&m, j, clock);
			clock += (double)j->size;
		}
		j->job.device_ns = j->size;
		accel_sched_job_finish(&j->job, 0, "");
		finished++;
		q = sim_last_released(++released);
		if (q >= 0 && q < 2)
			err = sim_refill(&m, q);
	}
	m.submitted[0] += m.submitted[1] + m.submitted[2] - finished;
	m.submitted[1] = m.submitted[2] = 0;
	for (int p = 0; !err && p < PHASES; p++) {
		double e = fabs(m.a[p] / m.all[p] - 0.5) / 0.5;

		worst = e > worst ? e : worst;
	}
	sim_close(&m);
	return err ? -1 : worst;
}

int bench_share(const struct opts *o)
{
	double pred = sim_run(CREDITS, true), avg = sim_run(CREDITS, false);
	double pred4 = sim_run(4, true), avg4 = sim_run(4, false);
	int first = 1;

	if (pred < 0 || avg < 0 || pred4 < 0 || avg4 < 0) {
		fprintf(stderr, "accel-bench: share: %s\n", accel_error_message());
		return 1;
	}
	if (o->json)
		printf("{\"bench\": \"share\", \"credits\": %d, \"error_4_credits\": %.4f, "
		       "\"error_4_credits_avg\": %.4f, \"metrics\": {", CREDITS, pred4, avg4);
	else
		fprintf(notes, "# share: weights 1:1, A's jobs %u/%u/%u/%u x B's (changing every %d of A's jobs), %d credits; from each change, a window of %d of A's jobs and as much of B's: largest |share - 1/2| / (1/2); with 4 credits: %.4f by prediction, %.4f by the average\n",
			a_units[0], a_units[1], a_units[2], a_units[3], PHASE_JOBS,
			CREDITS, WINDOW_JOBS, pred4, avg4);
	metric(o, "sched.share_error_mixed", pred, &first);
	metric(o, "sched.share_error_mixed_avg", avg, &first);
	if (o->json)
		printf("}}\n");
	return 0;
}
