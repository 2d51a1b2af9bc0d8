// SPDX-License-Identifier: MIT
/*
 * Check suite "cost": the cost model (accel/cost.h).
 *
 * - device parameters: the defaults without a calibration, a calibration
 *   whose figures are in range and whose rates (bandwidths, operation
 *   rate) agree with a second one's within a factor of CALIB_AGREE (no
 *   speed is asserted), the cache that hands it
 *   to the next device of the same identity, and a damaged cache file;
 * - predictions: the formula for declared costs and byte counts, to the
 *   nanosecond's rounding; whole-range fills through the binding table;
 *   the moving average of measured runs for undeclared kernels;
 * - the time curves (white box, figures set by the test): a sweep's
 *   curve never decreasing, interpolation and extrapolation by hand,
 *   each item charged its kind's curve and launch; a calibration record
 *   of an older version, with a valid checksum, rejected;
 * - bad input: NULL, a command buffer not ended or of another device, a
 *   table that does not suit it, unknown flags, each with its errno and
 *   the output untouched;
 * - the embedded scheduler's charge (white box, fake jobs whose device
 *   time the test sets): with predictions, a queue of jobs 10x larger
 *   than its peer's gets its fair share of the releases from the first
 *   job on; with the running average it takes every credit first.
 *
 * Runs on ACCEL_TEST_DEVICE (cpu:// by default; vulkan://0 and cuda://0
 * in their suites). Each test points ACCEL_CACHE_DIR at a fresh directory.
 */
#include <dirent.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <sys/stat.h>

#include "src/core.h"
#include "src/sched.h"

#include "test-accel.h"

/*
 * Two calibrations of one idle device agree within this factor. The
 * device is not always idle: meson runs other suites beside this one, and
 * under a sanitizer on two CPUs one calibration's kernel bandwidth read
 * 8.5x another's. So a pair that disagrees is followed by up to
 * CALIB_RETRIES more calibrations, and the last two are compared: one that
 * measures nothing stable disagrees every time.
 */
#define CALIB_AGREE 8.0
#define CALIB_RETRIES 2

static char cache_dir[256];

static void cost_setup(void)
{
	test_make_tmpdir(cache_dir, sizeof(cache_dir));
	device_setup();
	setenv("ACCEL_CACHE_DIR", cache_dir, 1);
	unsetenv("ACCEL_CACHE_DISABLE");
}

/* Removes the files of the cache directory, then the directory. */
static void cache_clear(void)
{
	DIR *d = opendir(cache_dir);
	struct dirent *e;
	char path[600];

	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", cache_dir, e->d_name);
		unlink(path);
	}
	if (d)
		closedir(d);
}

static void cost_teardown(void)
{
	device_teardown();
	cache_clear();
	rmdir(cache_dir);
	unsetenv("ACCEL_CACHE_DIR");
}

static accel_device_t *device_open(void)
{
	accel_device_t *d = NULL;

	ASSERT_OK(accel_device_open(test_device_uri(), NULL, &d));
	return d;
}

/* Whether the file at @path holds a calibration record (its magic). */
static bool is_calibration(const char *path)
{
	char buf[4096];
	FILE *f = fopen(path, "rb");
	size_t n = f ? fread(buf, 1, sizeof(buf), f) : 0;

	if (f)
		fclose(f);
	return n >= 7 && memmem(buf, n, "ACCOST1", 7);
}

/* The one calibration file of the cache (vulkan stores pipelines there too). */
static void cache_file(char *path, size_t len)
{
	DIR *d = opendir(cache_dir);
	struct dirent *e;
	char p[600];
	int n = 0;

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "%s/%s", cache_dir, e->d_name);
		if (is_calibration(p) && n++ == 0)
			snprintf(path, len, "%s", p);
	}
	closedir(d);
	ck_assert_msg(n == 1, "the cache holds %d calibrations, not one", n);
}

static void check_ranges(const accel_cost_params_t *p)
{
	ck_assert_uint_ge(p->bandwidth, 1000000);
	ck_assert_uint_le(p->bandwidth, UINT64_C(100000000000000));
	ck_assert_uint_ge(p->kernel_bandwidth, 1000000);
	ck_assert_uint_le(p->kernel_bandwidth, UINT64_C(100000000000000));
	ck_assert_uint_ge(p->operation_rate, 1000000);
	ck_assert_uint_le(p->dispatch_ns, 1000000000);
	ck_assert_uint_le(p->submission_ns, 1000000000);
	ck_assert_uint_eq(p->reserved, 0);
}

static bool agree(uint64_t a, uint64_t b)
{
	double r = (double)a / (double)b;

	return r <= CALIB_AGREE && r >= 1 / CALIB_AGREE;
}

/* @a and @b hold the same figures (one calibration, seen twice). */
static void expect_same_figures(const accel_cost_params_t *a, const accel_cost_params_t *b)
{
	ck_assert_uint_eq(a->bandwidth, b->bandwidth);
	ck_assert_uint_eq(a->kernel_bandwidth, b->kernel_bandwidth);
	ck_assert_uint_eq(a->operation_rate, b->operation_rate);
	ck_assert_uint_eq(a->dispatch_ns, b->dispatch_ns);
	ck_assert_uint_eq(a->submission_ns, b->submission_ns);
}

static bool all_agree(const accel_cost_params_t *a, const accel_cost_params_t *b)
{
	return agree(a->bandwidth, b->bandwidth) &&
	       agree(a->kernel_bandwidth, b->kernel_bandwidth) &&
	       agree(a->operation_rate, b->operation_rate);
}

START_TEST(test_defaults)
{
	accel_cost_params_t p = { 0 };

	ASSERT_OK(accel_device_cost_params(dev, &p));
	ck_assert_uint_eq(p.source, ACCEL_COST_SOURCE_DEFAULT);
	ck_assert_uint_eq(p.bandwidth, ACCEL_COST_DEFAULT_BANDWIDTH);
	ck_assert_uint_eq(p.kernel_bandwidth, ACCEL_COST_DEFAULT_KERNEL_BANDWIDTH);
	ck_assert_uint_eq(p.operation_rate, ACCEL_COST_DEFAULT_OPERATION_RATE);
	ck_assert_uint_eq(p.dispatch_ns, ACCEL_COST_DEFAULT_DISPATCH_NS);
	ck_assert_uint_eq(p.submission_ns, ACCEL_COST_DEFAULT_SUBMISSION_NS);
	ASSERT_ERRNO(accel_device_cost_params(NULL, &p), EINVAL);
	ASSERT_MESSAGE_CONTAINS("accel_device_cost_params: device is NULL");
	ASSERT_ERRNO(accel_device_cost_params(dev, NULL), EINVAL);
}
END_TEST

/*
 * Two forced calibrations (the last two of up to 2 + CALIB_RETRIES): in
 * range, and within CALIB_AGREE of each other for the rates (the overheads
 * are microseconds: only their range is checked). The next device of the
 * same identity reads the last one from the cache; with the cache off it
 * gets the defaults.
 */
START_TEST(test_calibrate_stable)
{
	accel_cost_params_t a, b, c = { 0 };
	accel_device_t *d;

	ASSERT_OK(accel_device_calibrate(dev, ACCEL_CALIBRATE_FORCE, &a));
	ASSERT_OK(accel_device_calibrate(dev, ACCEL_CALIBRATE_FORCE, &b));
	for (int i = 0; i < CALIB_RETRIES && !all_agree(&a, &b); i++) {
		fprintf(stderr, "# calibrations disagree (bandwidth %" PRIu64 "/%" PRIu64
			", kernel %" PRIu64 "/%" PRIu64 ", ops %" PRIu64 "/%" PRIu64 "): once more\n",
			a.bandwidth, b.bandwidth, a.kernel_bandwidth, b.kernel_bandwidth,
			a.operation_rate, b.operation_rate);
		a = b;
		ASSERT_OK(accel_device_calibrate(dev, ACCEL_CALIBRATE_FORCE, &b));
	}
	ck_assert_uint_eq(a.source, ACCEL_COST_SOURCE_CALIBRATED);
	check_ranges(&a);
	check_ranges(&b);
	/* Every driver has calibration kernels: neither rate is the default. */
	ck_assert_msg(a.kernel_bandwidth != ACCEL_COST_DEFAULT_KERNEL_BANDWIDTH &&
		      a.operation_rate != ACCEL_COST_DEFAULT_OPERATION_RATE,
		      "%s kept the default kernel bandwidth or operation rate: its driver's calibration kernels did not run",
		      test_device_uri());
	ck_assert_msg(agree(a.bandwidth, b.bandwidth),
		      "bandwidths %" PRIu64 " and %" PRIu64 " B/s differ by more than %gx",
		      a.bandwidth, b.bandwidth, CALIB_AGREE);
	ck_assert_msg(agree(a.kernel_bandwidth, b.kernel_bandwidth),
		      "kernel bandwidths %" PRIu64 " and %" PRIu64 " B/s differ by more than %gx",
		      a.kernel_bandwidth, b.kernel_bandwidth, CALIB_AGREE);
	ck_assert_msg(agree(a.operation_rate, b.operation_rate),
		      "operation rates %" PRIu64 " and %" PRIu64 " op/s differ by more than %gx",
		      a.operation_rate, b.operation_rate, CALIB_AGREE);
	ASSERT_OK(accel_device_cost_params(dev, &c));
	ck_assert_uint_eq(c.bandwidth, b.bandwidth);

	d = device_open();
	ASSERT_OK(accel_device_cost_params(d, &c));
	accel_device_release(d);
	ck_assert_uint_eq(c.source, ACCEL_COST_SOURCE_CACHED);
	expect_same_figures(&c, &b);

	/* Without FORCE, a device with a calibration keeps it. */
	d = device_open();
	ASSERT_OK(accel_device_calibrate(d, 0, &c));
	ck_assert_uint_eq(c.source, ACCEL_COST_SOURCE_CACHED);
	accel_device_release(d);

	setenv("ACCEL_CACHE_DISABLE", "1", 1);
	d = device_open();
	ASSERT_OK(accel_device_cost_params(d, &c));
	accel_device_release(d);
	unsetenv("ACCEL_CACHE_DISABLE");
	ck_assert_uint_eq(c.source, ACCEL_COST_SOURCE_DEFAULT);
}
END_TEST

/*
 * Two threads calibrate one uncalibrated device at once, without FORCE:
 * one measures, the other waits and takes its result, so both get the
 * same figures. Before, both measured at once, each slowed by the other
 * (operation rates 17x apart in an outside test).
 */
static void *calibrate_main(void *arg)
{
	accel_cost_params_t *p = arg;

	p->reserved = (uint64_t)-accel_device_calibrate(dev, 0, p);
	return NULL;
}

START_TEST(test_calibrate_one_at_a_time)
{
	accel_cost_params_t a = { 0 }, b = { 0 };
	pthread_t ta, tb;

	ck_assert_int_eq(pthread_create(&ta, NULL, calibrate_main, &a), 0);
	ck_assert_int_eq(pthread_create(&tb, NULL, calibrate_main, &b), 0);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	ck_assert_uint_eq(a.reserved, 0);
	ck_assert_uint_eq(b.reserved, 0);
	ck_assert_uint_eq(a.source, ACCEL_COST_SOURCE_CALIBRATED);
	ck_assert_uint_eq(b.source, ACCEL_COST_SOURCE_CALIBRATED);
	expect_same_figures(&a, &b);
}
END_TEST

START_TEST(test_calibrate_bad_input)
{
	accel_cost_params_t before, after;

	ASSERT_OK(accel_device_cost_params(dev, &before));
	ASSERT_ERRNO(accel_device_calibrate(NULL, 0, NULL), EINVAL);
	ASSERT_MESSAGE_CONTAINS("accel_device_calibrate: device is NULL");
	ASSERT_ERRNO(accel_device_calibrate(dev, 0x10, NULL), EINVAL);
	ASSERT_MESSAGE_CONTAINS("unknown flags 0x10; the only flag is ACCEL_CALIBRATE_FORCE");
	ASSERT_OK(accel_device_cost_params(dev, &after));
	ck_assert_mem_eq(&before, &after, sizeof(before));
}
END_TEST

/*
 * Overwrites @len bytes of the cache file at @off from its end, or, with
 * @len 0, cuts @off bytes (negative) off it.
 */
static void damage(long off, const char *bytes, size_t len)
{
	char path[600];
	FILE *f;

	struct stat st;

	cache_file(path, sizeof(path));
	if (!len) {
		ck_assert_int_eq(stat(path, &st), 0);
		ck_assert_int_eq(truncate(path, st.st_size + off), 0);
		return;
	}
	f = fopen(path, "r+b");
	ck_assert_ptr_nonnull(f);
	fseek(f, off, SEEK_END);
	fwrite(bytes, 1, len, f);
	fclose(f);
}

/*
 * A damaged calibration is removed and the defaults used; never a crash.
 * One calibration writes the record; each round puts it back whole, then
 * damages it (a calibration is seconds on lavapipe, more under ASan). The
 * first round damages nothing: the record put back is read as it was.
 */
START_TEST(test_cache_damaged)
{
	accel_cost_params_t p;
	accel_device_t *d;
	struct stat st;
	char path[600], record[4096];
	size_t size;
	FILE *f;

	ASSERT_OK(accel_device_calibrate(dev, ACCEL_CALIBRATE_FORCE, NULL));
	cache_file(path, sizeof(path));
	f = fopen(path, "rb");
	ck_assert_ptr_nonnull(f);
	size = fread(record, 1, sizeof(record), f);
	ck_assert(feof(f) && size > 20);
	fclose(f);
	for (int round = -1; round < 3; round++) {
		f = fopen(path, "wb");
		ck_assert_ptr_nonnull(f);
		ck_assert_uint_eq(fwrite(record, 1, size, f), size);
		ck_assert_int_eq(fclose(f), 0);
		if (round == 0)
			damage(-8, "garbage!", 8); /* the record's last field */
		else if (round == 1)
			damage(-20, NULL, 0);      /* cut short */
		else if (round == 2)
			damage(0, "more", 4);      /* too long */
		d = device_open();
		ASSERT_OK(accel_device_cost_params(d, &p));
		accel_device_release(d);
		if (round < 0) {
			ck_assert_uint_eq(p.source, ACCEL_COST_SOURCE_CACHED);
			continue;
		}
		ck_assert_uint_eq(p.source, ACCEL_COST_SOURCE_DEFAULT);
		ck_assert_int_ne(stat(path, &st), 0); /* removed */
	}
}
END_TEST

/* ---- predictions -------------------------------------------------------- */

/* The formula: each item by its kind's curve (checked on its own below). */
static double transfer(const struct accel_cost_model *m, int kind, double bytes)
{
	return accel_cost_item_ns(m, kind, bytes);
}

static double dispatch(const struct accel_cost_model *m, double wg, double ops,
		       double bytes)
{
	double launch = (double)m->launch_ns[ACCEL_COST_KERNEL];
	double c = wg * ops * 1e9 / (double)m->pub.operation_rate;
	double b = accel_cost_item_ns(m, ACCEL_COST_KERNEL, wg * bytes) - launch;

	return (c > b ? c : b) + launch;
}

static void assert_near(uint64_t got, double want)
{
	ck_assert_msg(fabs((double)got - want) <= 2 + want * 1e-9,
		      "predicted %" PRIu64 " ns, the formula gives %.1f", got, want);
}

/*
 * A command buffer of declared dispatches (saxpy: 128 operations and 768
 * bytes per workgroup; fill_u32: 256 bytes), a fill, a copy, an update, a
 * barrier and a whole-range fill through slot 0: the formula, with the
 * device's parameters, before and after a calibration changes them.
 */
START_TEST(test_predict_declared)
{
	accel_executable_t *e = kernels();
	accel_buffer_t *x = buffer_new(1 << 20), *y = buffer_new(1 << 20), *t = buffer_new(4096);
	accel_buffer_ref_t xy[2] = { accel_buffer_ref_direct(x, 0, 1 << 20),
				     accel_buffer_ref_direct(y, 0, 1 << 20) };
	accel_buffer_ref_t one[1] = { accel_buffer_ref_direct(y, 0, 1 << 20) };
	accel_binding_t b[1] = { { t, 1024, ACCEL_WHOLE_BUFFER } };
	accel_binding_table_t table = { 1, b };
	uint32_t wg[3] = { 100, 2, 1 }, wg1[3] = { 7, 1, 1 }, zero[3] = { 0, 1, 1 }, c = 0;
	accel_command_buffer_t *cb = cb_new(ACCEL_COMMAND_BUFFER_REUSABLE, 1);
	uint8_t data[64] = { 0 };
	accel_prediction_t pr;
	struct accel_cost_model p;

	ASSERT_OK(accel_command_buffer_dispatch(cb, e, entry(e, "saxpy"), wg, &c, 1, xy, 2));
	ASSERT_OK(accel_command_buffer_dispatch(cb, e, entry(e, "fill_u32"), wg1, &c, 1, one, 1));
	ASSERT_OK(accel_command_buffer_dispatch(cb, e, entry(e, "fill_u32"), zero, &c, 1, one, 1));
	ASSERT_OK(accel_command_buffer_barrier(cb));
	ASSERT_OK(accel_command_buffer_fill(cb, accel_buffer_ref_direct(x, 0, 4096), &c, 4));
	ASSERT_OK(accel_command_buffer_copy(cb, accel_buffer_ref_direct(x, 0, 8192),
					    accel_buffer_ref_direct(y, 8192, 8192)));
	ASSERT_OK(accel_command_buffer_update(cb, data, accel_buffer_ref_direct(y, 0, 64)));
	ASSERT_OK(accel_command_buffer_fill(cb, accel_buffer_ref_indirect(0, 256, ACCEL_WHOLE_BUFFER),
					    &c, 4));
	ASSERT_OK(accel_command_buffer_end(cb));

	for (int round = 0; round < 2; round++) {
		double want;

		if (round == 1) /* new parameters: the model is rebuilt */
			ASSERT_OK(accel_device_calibrate(dev, ACCEL_CALIBRATE_FORCE, NULL));
		accel_cost_model_get(dev, &p);
		want = (double)p.pub.submission_ns + dispatch(&p, 200, 128, 768) +
		       dispatch(&p, 7, 0, 256) + transfer(&p, ACCEL_COST_FILL, 4096) +
		       transfer(&p, ACCEL_COST_COPY, 2 * 8192) +
		       transfer(&p, ACCEL_COST_FILL, 64) +
		       transfer(&p, ACCEL_COST_FILL, 4096 - 1024 - 256);
		ASSERT_OK(accel_command_buffer_predict(dev, cb, &table, &pr));
		ck_assert_uint_eq(pr.source, ACCEL_PREDICTION_DECLARED);
		assert_near(pr.ns, want);
	}
	/* Another table: the whole-range fill follows its length. */
	b[0].offset = 0;
	ASSERT_OK(accel_command_buffer_predict(dev, cb, &table, &pr));
	assert_near(pr.ns, (double)p.pub.submission_ns + dispatch(&p, 200, 128, 768) +
			   dispatch(&p, 7, 0, 256) + transfer(&p, ACCEL_COST_FILL, 4096) +
			   transfer(&p, ACCEL_COST_COPY, 2 * 8192) +
			   transfer(&p, ACCEL_COST_FILL, 64) +
			   transfer(&p, ACCEL_COST_FILL, 4096 - 256));
	accel_command_buffer_release(cb);
	accel_executable_release(e);
	accel_buffer_release(x);
	accel_buffer_release(y);
	accel_buffer_release(t);
}
END_TEST

/*
 * "increment" declares no cost: no prediction until the command buffer
 * ran; then its moving average of measured runs, which converges to a
 * steady run time (fed directly, white box: no timing involved).
 */
START_TEST(test_predict_learned)
{
	accel_executable_t *e = kernels();
	accel_buffer_t *b = buffer_new(64);
	accel_buffer_ref_t r[1] = { accel_buffer_ref_direct(b, 0, 4) };
	uint32_t wg[3] = { 1, 1, 1 };
	accel_command_buffer_t *cb = cb_new(ACCEL_COMMAND_BUFFER_REUSABLE, 0);
	accel_queue_t *q = NULL;
	accel_prediction_t pr;

	ASSERT_OK(accel_command_buffer_dispatch(cb, e, entry(e, "increment"), wg, NULL, 0, r, 1));
	ASSERT_OK(accel_command_buffer_end(cb));
	ASSERT_OK(accel_command_buffer_predict(dev, cb, NULL, &pr));
	ck_assert_uint_eq(pr.source, ACCEL_PREDICTION_NONE);
	ck_assert_uint_eq(pr.runs, 0);
	ck_assert_uint_eq(pr.measured_ns, 0);
	ASSERT_OK(accel_queue_create(dev, 0, &q));
	for (int i = 0; i < 5; i++)
		ASSERT_OK(run_on(q, cb, NULL));
	ASSERT_OK(accel_command_buffer_predict(dev, cb, NULL, &pr));
	ck_assert_uint_eq(pr.source, ACCEL_PREDICTION_LEARNED);
	ck_assert_uint_eq(pr.runs, 5);
	ck_assert_uint_gt(pr.ns, 0);
	ck_assert_uint_gt(pr.measured_ns, 0);

	accel_cost_learn(cb, 10000000); /* one slow run ... */
	for (int i = 0; i < 40; i++)    /* ... then a steady 50 us */
		accel_cost_learn(cb, 50000);
	ASSERT_OK(accel_command_buffer_predict(dev, cb, NULL, &pr));
	ck_assert_msg(pr.ns >= 49000 && pr.ns <= 51000,
		      "after 40 runs of 50000 ns the prediction is %" PRIu64, pr.ns);
	ck_assert_uint_eq(pr.measured_ns, 50000);
	accel_queue_release(q);
	accel_command_buffer_release(cb);
	accel_executable_release(e);
	accel_buffer_release(b);
}
END_TEST

/*
 * A prediction past 2^64 ns saturates. With an operation rate of one per
 * second (set as a calibration would: a device this slow makes the sum
 * overflow with ordinary figures, on every driver), two dispatches of
 * saxpy (128 operations a workgroup) over 65535^2 workgroups are about
 * 1.1e21 ns, and the model read 0 before it saturated (a double at or
 * above 2^64 converted to uint64_t). One workgroup is still exact.
 */
START_TEST(test_predict_saturates)
{
	accel_executable_t *e = kernels();
	accel_buffer_t *x = buffer_new(4096), *y = buffer_new(4096);
	accel_buffer_ref_t xy[2] = { accel_buffer_ref_direct(x, 0, 4096),
				     accel_buffer_ref_direct(y, 0, 4096) };
	uint32_t big[3] = { 65535, 65535, 1 }, one[3] = { 1, 1, 1 }, c = 0;
	accel_command_buffer_t *cb;
	accel_prediction_t pr;
	struct accel_cost_model m;

	accel_cost_model_get(dev, &m);
	m.pub.operation_rate = 1;
	accel_cost_model_set(dev, &m);
	cb = cb_new(ACCEL_COMMAND_BUFFER_REUSABLE, 0);
	ASSERT_OK(accel_command_buffer_dispatch(cb, e, entry(e, "saxpy"), big, &c, 1, xy, 2));
	ASSERT_OK(accel_command_buffer_dispatch(cb, e, entry(e, "saxpy"), big, &c, 1, xy, 2));
	ASSERT_OK(accel_command_buffer_end(cb));
	ASSERT_OK(accel_command_buffer_predict(dev, cb, NULL, &pr));
	ck_assert_uint_eq(pr.source, ACCEL_PREDICTION_DECLARED);
	ck_assert_msg(pr.ns == UINT64_MAX,
		      "two dispatches of 65535^2 workgroups of 128 operations at 1 operation/s predicted at %" PRIu64 " ns, not UINT64_MAX",
		      pr.ns);
	accel_command_buffer_release(cb);

	cb = cb_new(ACCEL_COMMAND_BUFFER_REUSABLE, 0);
	ASSERT_OK(accel_command_buffer_dispatch(cb, e, entry(e, "saxpy"), one, &c, 1, xy, 2));
	ASSERT_OK(accel_command_buffer_end(cb));
	ASSERT_OK(accel_command_buffer_predict(dev, cb, NULL, &pr));
	assert_near(pr.ns, (double)m.pub.submission_ns + dispatch(&m, 1, 128, 768));
	ck_assert_uint_lt(pr.ns, UINT64_MAX);
	accel_command_buffer_release(cb);
	accel_executable_release(e);
	accel_buffer_release(x);
	accel_buffer_release(y);
}
END_TEST

START_TEST(test_predict_bad_input)
{
	accel_executable_t *e = kernels();
	accel_buffer_t *b = buffer_new(256);
	accel_command_buffer_t *cb = cb_new(ACCEL_COMMAND_BUFFER_REUSABLE, 2);
	accel_binding_t short_b[2] = { { b, 0, 16 }, { b, 0, 16 } };
	accel_binding_table_t short_t = { 2, short_b }, null_t = { 2, NULL };
	accel_prediction_t pr = { 12345, 99, 7, 3 };
	uint32_t c = 1;
	accel_device_t *other = device_open();
	accel_queue_t *q = NULL;

	ASSERT_OK(accel_command_buffer_fill(cb, accel_buffer_ref_indirect(1, 0, 64), &c, 4));
	ASSERT_ERRNO(accel_command_buffer_predict(dev, cb, NULL, &pr), EBADFD);
	ASSERT_MESSAGE_CONTAINS("was not ended");
	ASSERT_OK(accel_command_buffer_end(cb));
	ASSERT_ERRNO(accel_command_buffer_predict(NULL, cb, NULL, &pr), EINVAL);
	ASSERT_MESSAGE_CONTAINS("accel_command_buffer_predict: device is NULL");
	ASSERT_ERRNO(accel_command_buffer_predict(dev, NULL, NULL, &pr), EINVAL);
	ASSERT_ERRNO(accel_command_buffer_predict(dev, cb, NULL, NULL), EINVAL);
	ASSERT_ERRNO(accel_command_buffer_predict(other, cb, NULL, &pr), EXDEV);
	ASSERT_MESSAGE_CONTAINS("the command buffer is for device");
	ASSERT_ERRNO(accel_command_buffer_predict(dev, cb, &null_t, &pr), EINVAL);
	ASSERT_MESSAGE_CONTAINS("table->bindings is NULL");
	/* As accel_queue_execute(): a range too short, a table too short. */
	ASSERT_OK(accel_queue_create(dev, 0, &q));
	ASSERT_ERRNO(accel_command_buffer_predict(dev, cb, &short_t, &pr), ERANGE);
	ASSERT_MESSAGE_CONTAINS("slot 1");
	ASSERT_ERRNO(accel_queue_execute(q, NULL, NULL, cb, &short_t, 0), ERANGE);
	ASSERT_ERRNO(accel_command_buffer_predict(dev, cb, NULL, &pr), ERANGE);
	ASSERT_ERRNO(accel_queue_execute(q, NULL, NULL, cb, NULL, 0), ERANGE);
	/* A ONE_SHOT command buffer submitted already: no second run. */
	accel_command_buffer_t *once = cb_new(ACCEL_COMMAND_BUFFER_ONE_SHOT, 0);
	accel_semaphore_t *done = sem_new(0);
	POINT(sig, done, 1);

	ASSERT_OK(accel_command_buffer_fill(once, accel_buffer_ref_direct(b, 0, 64), &c, 4));
	ASSERT_OK(accel_command_buffer_end(once));
	ASSERT_OK(accel_queue_execute(q, NULL, &sig, once, NULL, 0));
	ASSERT_ERRNO(accel_queue_execute(q, NULL, NULL, once, NULL, 0), EBADFD);
	ASSERT_ERRNO(accel_command_buffer_predict(dev, once, NULL, &pr), EBADFD);
	ASSERT_MESSAGE_CONTAINS("accel_command_buffer_predict: the command buffer is ONE_SHOT and was submitted already");
	ASSERT_OK(accel_semaphore_wait(done, 1, 0, WAIT_LONG));
	accel_command_buffer_release(once);
	accel_semaphore_release(done);
	accel_queue_release(q);
	/* Nothing written on failure. */
	ck_assert_uint_eq(pr.ns, 12345);
	ck_assert_uint_eq(pr.source, 99);
	ck_assert_uint_eq(pr.runs, 7);
	ck_assert_uint_eq(pr.measured_ns, 3);
	accel_device_release(other);
	accel_command_buffer_release(cb);
	accel_executable_release(e);
	accel_buffer_release(b);
}
END_TEST

/* ---- the embedded scheduler's charge (white box) ------------------------ */

#define CREDITS 8
#define BIG_NS 10000000u  /* queue A's jobs */
#define SMALL_NS 1000000u /* queue B's: a tenth */
#define PER_QUEUE 40

struct fake_job {
	struct accel_sched_job job;
	char queue;
};

/* The jobs the executors started, in order; the lock orders the slots. */
static pthread_mutex_t started_lock = PTHREAD_MUTEX_INITIALIZER;
static struct fake_job *started[3 * PER_QUEUE];
static int started_count;
static atomic_int destroyed_count;

static int fake_execute(struct accel_sched_job *job, char *msg, size_t len)
{
	(void)msg;
	(void)len;
	pthread_mutex_lock(&started_lock);
	started[started_count++] = (struct fake_job *)job;
	pthread_mutex_unlock(&started_lock);
	return ACCEL_JOB_PENDING; /* the test finishes it */
}

static int started_now(void)
{
	int n;

	pthread_mutex_lock(&started_lock);
	n = started_count;
	pthread_mutex_unlock(&started_lock);
	return n;
}

static void fake_destroy(struct accel_sched_job *job)
{
	free(job);
	atomic_fetch_add(&destroyed_count, 1);
}

static void fake_submit(accel_scheduler_t *s, struct accel_sched_executor *ex,
			char queue, uint64_t predicted)
{
	struct fake_job *f = calloc(1, sizeof(*f));

	ck_assert_ptr_nonnull(f);
	f->queue = queue;
	f->job.executor = ex;
	f->job.execute = fake_execute;
	f->job.destroy = fake_destroy;
	f->job.predicted_ns = predicted;
	snprintf(f->job.label, sizeof(f->job.label), "fake job of %c", queue);
	ASSERT_OK(s->ops->job_submit(s, &f->job));
}

/* Waits (without a time limit on the outcome) until @n jobs started. */
static void wait_started(int n)
{
	for (int64_t end = accel_now_ns() + INT64_C(30000000000);
	     started_now() < n;) {
		ck_assert_msg(accel_now_ns() < end, "only %d of %d jobs started in 30 s",
			      started_now(), n);
		sched_yield();
	}
}

/*
 * CREDITS blockers (queue C) hold the engine while A (jobs of BIG_NS) and
 * B (SMALL_NS), weights 1:1, queue PER_QUEUE jobs each; then the blockers
 * finish one by one, and each returned credit releases one job. Returns
 * how many of the first CREDITS releases were A's: no job of A or B has
 * completed yet, so the order is the charges' alone.
 */
static int first_releases_of_big(uint64_t big_pred, uint64_t small_pred)
{
	const struct accel_sched_queue_params qp = { "test", ACCEL_SCHED_PRIO_NORMAL, 100, 1 };
	struct accel_sched_executor *a, *b, *c;
	accel_scheduler_t *s = NULL;
	int big = 0;

	started_count = 0; /* no executor runs yet */
	atomic_store(&destroyed_count, 0);
	setenv("ACCEL_ENGINE_CREDITS", "8", 1);
	setenv(ACCEL_SCHEDULER_ENV, "embedded", 1);
	ASSERT_OK(accel_scheduler_open(NULL, &s));
	ASSERT_OK(s->ops->executor_create(s, "fake://0", &qp, &c));
	ASSERT_OK(s->ops->executor_create(s, "fake://0", &qp, &b));
	ASSERT_OK(s->ops->executor_create(s, "fake://0", &qp, &a)); /* first to pick on ties */
	for (int i = 0; i < CREDITS; i++)
		fake_submit(s, c, 'C', SMALL_NS);
	wait_started(CREDITS);
	for (int i = 0; i < PER_QUEUE; i++) {
		fake_submit(s, a, 'A', big_pred);
		fake_submit(s, b, 'B', small_pred);
	}
	for (int i = 0; i < CREDITS; i++) {
		started[i]->job.device_ns = SMALL_NS;
		accel_sched_job_finish(&started[i]->job, 0, "");
		wait_started(CREDITS + i + 1);
	}
	for (int i = CREDITS; i < 2 * CREDITS; i++)
		big += started[i]->queue == 'A';
	/* Drain: finish everything in release order, at its true size. */
	for (int i = CREDITS; i < CREDITS + 2 * PER_QUEUE; i++) {
		wait_started(i + 1);
		started[i]->job.device_ns = started[i]->queue == 'A' ? BIG_NS : SMALL_NS;
		accel_sched_job_finish(&started[i]->job, 0, "");
	}
	while (atomic_load(&destroyed_count) < CREDITS + 2 * PER_QUEUE)
		sched_yield();
	s->ops->executor_destroy(a);
	s->ops->executor_destroy(b);
	s->ops->executor_destroy(c);
	accel_scheduler_release(s);
	unsetenv("ACCEL_ENGINE_CREDITS");
	return big;
}

/*
 * Charged by prediction, A's first job costs it ten of B's: of the first
 * eight releases one is A's (10 units) and seven B's (7 units). Charged
 * the running average, which is 0 before a queue's first completion, A
 * takes all eight (80 units of device time against none).
 */
START_TEST(test_fair_share_from_first_job)
{
	int predicted = first_releases_of_big(BIG_NS, SMALL_NS);
	int averaged = first_releases_of_big(0, 0);

	ck_assert_msg(predicted == 1,
		      "charged by prediction, %d of the first %d releases went to the queue of 10x jobs; fair share gives it 1",
		      predicted, CREDITS);
	ck_assert_msg(averaged > predicted,
		      "charged by the running average, the 10x queue got %d of the first %d releases: no worse than by prediction, so this test cannot tell them apart",
		      averaged, CREDITS);
}
END_TEST

/*
 * A prediction of UINT64_MAX ns (what the model saturates at) charges the
 * most a release charges, an hour, not a wrapped-around credit: A's first
 * job still costs it more than B's eight, so it gets one of the first
 * eight releases. (A charge cast to int64_t read -1 ns: A took all eight.)
 */
START_TEST(test_fair_share_huge_prediction)
{
	int big = first_releases_of_big(UINT64_MAX, SMALL_NS);

	ck_assert_msg(big == 1,
		      "a queue whose jobs are predicted at UINT64_MAX ns got %d of the first %d releases; the others' 1",
		      big, CREDITS);
}
END_TEST

/*
 * A model with curves for fills and copies, none for kernels (1 GB/s),
 * and a launch per kind, all different.
 */
static void curve_model(struct accel_cost_model *m)
{
	static const double fb[2] = { 65536, 262144 }, fns[2] = { 2000, 20000 };
	static const double cb[2] = { 131072, 524288 }, cns[2] = { 30000, 60000 };

	accel_cost_model_default(m);
	m->pub.submission_ns = 7000;
	m->pub.kernel_bandwidth = 1000000000;
	for (int k = 0; k < ACCEL_COST_KINDS; k++)
		m->launch_ns[k] = 1000 + 10000 * (uint64_t)k;
	accel_cost_curve_set(m, ACCEL_COST_FILL, fb, fns, 2);
	accel_cost_curve_set(m, ACCEL_COST_COPY, cb, cns, 2);
}

/*
 * A calibration sweep's curve (fed directly: no timing): a point above the
 * one after it (a run slowed by another process) is lowered to it and none
 * is below the launch, so a larger item is never charged less than a
 * smaller one. Breaks when the sweep's noise reaches the curve.
 */
START_TEST(test_curve_from_sweep)
{
	static const double bytes[5] = { 65536, 262144, 1048576, 4194304, 16777216 };
	static const double ns[5] = { 500, 9000, 8000, 40000, 300000 };
	struct accel_cost_model m;
	const struct accel_cost_curve *c = &m.curve[ACCEL_COST_COPY];
	double prev = 0;

	accel_cost_model_default(&m);
	m.launch_ns[ACCEL_COST_COPY] = 1000;
	accel_cost_curve_set(&m, ACCEL_COST_COPY, bytes, ns, 5);
	ck_assert_uint_eq(c->count, 5);
	ck_assert_uint_eq(c->ns[0], 1000);  /* not below the launch */
	ck_assert_uint_eq(c->ns[1], 8000);  /* not above the point after */
	ck_assert_uint_eq(c->ns[2], 8000);
	ck_assert_uint_eq(c->ns[4], 300000);
	ck_assert_uint_eq(c->bytes[3], 4194304);
	ck_assert_uint_eq(m.curve[ACCEL_COST_FILL].count, 0); /* others untouched */
	for (double b = 0; b <= 64e6; b += 65536) {
		double t = accel_cost_item_ns(&m, ACCEL_COST_COPY, b);

		ck_assert_msg(t >= prev, "%.0f bytes: %.1f ns, below %.1f", b, t, prev);
		prev = t;
	}
}
END_TEST

/*
 * One item's time by its kind's curve: the launch at 0 bytes, the points
 * themselves, linear between them, the last point's bandwidth past it;
 * without a curve, the public figures' linear model. Each kind has its own
 * launch. Breaks when interpolation, extrapolation or the launch used for
 * small items goes wrong.
 */
START_TEST(test_curve_item)
{
	struct accel_cost_model m;

	curve_model(&m);
	assert_near((uint64_t)accel_cost_item_ns(&m, ACCEL_COST_FILL, 0), 1000);
	assert_near((uint64_t)accel_cost_item_ns(&m, ACCEL_COST_FILL, 32768), 1500);
	assert_near((uint64_t)accel_cost_item_ns(&m, ACCEL_COST_FILL, 65536), 2000);
	assert_near((uint64_t)accel_cost_item_ns(&m, ACCEL_COST_FILL, 163840), 11000);
	assert_near((uint64_t)accel_cost_item_ns(&m, ACCEL_COST_FILL, 262144), 20000);
	assert_near((uint64_t)accel_cost_item_ns(&m, ACCEL_COST_FILL, 1048576), 80000);
	assert_near((uint64_t)accel_cost_item_ns(&m, ACCEL_COST_COPY, 0), 11000);
	assert_near((uint64_t)accel_cost_item_ns(&m, ACCEL_COST_KERNEL, 0), 21000);
	assert_near((uint64_t)accel_cost_item_ns(&m, ACCEL_COST_KERNEL, 1000), 22000);
}
END_TEST

/*
 * Each item is charged its kind's curve at the bytes it touches (a copy
 * what it reads and writes; a whole-range fill the length the table
 * gives) plus the submission: hand-computed figures. Breaks when a copy
 * is charged by its length alone, a whole-range fill ignores the table,
 * or one launch is charged for every kind.
 */
START_TEST(test_predict_curve)
{
	accel_executable_t *e = kernels();
	accel_buffer_t *x = buffer_new(1 << 20), *y = buffer_new(1 << 20);
	accel_binding_t b[1] = { { x, 0, 32768 } };
	accel_binding_table_t table = { 1, b };
	static const uint64_t lens[4] = { 4, 65536, 131072, 524288 };
	static const double fill_want[4] = { 1000 + 1000 * 4 / 65536.0, 2000, 8000, 40000 };
	static const double copy_want[4] = { 11000 + 19000 * 8 / 131072.0, 30000, 40000,
					     120000 };
	struct accel_cost_model m;
	accel_prediction_t pr;
	uint32_t c = 0;

	curve_model(&m);
	accel_cost_model_set(dev, &m); /* as a calibration would */
	for (int i = 0; i < 4; i++) {
		accel_command_buffer_t *fill = cb_new(ACCEL_COMMAND_BUFFER_REUSABLE, 0);
		accel_command_buffer_t *copy = cb_new(ACCEL_COMMAND_BUFFER_REUSABLE, 0);

		ASSERT_OK(accel_command_buffer_fill(fill, accel_buffer_ref_direct(x, 0, lens[i]),
						    &c, 4));
		ASSERT_OK(accel_command_buffer_copy(copy, accel_buffer_ref_direct(x, 0, lens[i]),
						    accel_buffer_ref_direct(y, 0, lens[i])));
		ASSERT_OK(accel_command_buffer_end(fill));
		ASSERT_OK(accel_command_buffer_end(copy));
		ASSERT_OK(accel_command_buffer_predict(dev, fill, NULL, &pr));
		assert_near(pr.ns, 7000 + fill_want[i]);
		ASSERT_OK(accel_command_buffer_predict(dev, copy, NULL, &pr));
		assert_near(pr.ns, 7000 + copy_want[i]);
		accel_command_buffer_release(fill);
		accel_command_buffer_release(copy);
	}

	/* A whole-range fill: charged at the table's length. */
	{
		accel_command_buffer_t *cb = cb_new(ACCEL_COMMAND_BUFFER_REUSABLE, 1);

		ASSERT_OK(accel_command_buffer_fill(cb, accel_buffer_ref_indirect(0, 0,
						    ACCEL_WHOLE_BUFFER), &c, 4));
		ASSERT_OK(accel_command_buffer_end(cb));
		ASSERT_OK(accel_command_buffer_predict(dev, cb, &table, &pr));
		assert_near(pr.ns, 7000 + 1500);
		b[0].length = 131072;
		ASSERT_OK(accel_command_buffer_predict(dev, cb, &table, &pr));
		assert_near(pr.ns, 7000 + 8000);
		accel_command_buffer_release(cb);
	}

	/* A dispatch: no kernel curve, so its bytes at 1 GB/s, its launch. */
	{
		accel_command_buffer_t *cb = cb_new(ACCEL_COMMAND_BUFFER_REUSABLE, 0);
		accel_buffer_ref_t one[1] = { accel_buffer_ref_direct(y, 0, 1 << 20) };
		uint32_t wg[3] = { 1, 1, 1 };

		ASSERT_OK(accel_command_buffer_dispatch(cb, e, entry(e, "fill_u32"), wg, &c, 1,
							one, 1));
		ASSERT_OK(accel_command_buffer_end(cb));
		ASSERT_OK(accel_command_buffer_predict(dev, cb, NULL, &pr));
		assert_near(pr.ns, 7000 + 21000 + 256);
		accel_command_buffer_release(cb);
	}
	accel_executable_release(e);
	accel_buffer_release(x);
	accel_buffer_release(y);
}
END_TEST

/*
 * struct calib_file of version 2 (before the regimes): what an older
 * libaccel left in the cache.
 */
struct calib_file_v2 {
	char magic[8];
	uint32_t version;
	uint32_t size;
	uint64_t bandwidth, operation_rate, dispatch_ns, submission_ns,
		 kernel_bandwidth;
};

/*
 * A calibration of an older format, stored with a valid checksum, is not
 * read as this one (the defaults are used and the record removed, so the
 * next calibration replaces it); nor is one of this size with an older
 * version. A current record is read back whole: the regimes and launches
 * too. Breaks when the format changes without its version.
 */
START_TEST(test_cache_version)
{
	struct calib_file_v2 old = { .magic = "ACCOST1", .version = 2,
				     .size = sizeof(old), .bandwidth = 1 << 30,
				     .operation_rate = 1 << 30, .dispatch_ns = 100,
				     .submission_ns = 100, .kernel_bandwidth = 1 << 30 };
	struct accel_cost_model a, b;
	uint8_t rec[512] = { 0 };
	size_t len = 0;
	accel_cost_params_t p;
	accel_device_t *d;
	char path[600];
	struct stat st;

	accel_cost_calib_store_raw(dev, &old, sizeof(old));
	cache_file(path, sizeof(path));
	d = device_open();
	ASSERT_OK(accel_device_cost_params(d, &p));
	accel_device_release(d);
	ck_assert_uint_eq(p.source, ACCEL_COST_SOURCE_DEFAULT);
	ck_assert_int_ne(stat(path, &st), 0);

	/* This libaccel's record, its version field set back to 2. */
	ASSERT_OK(accel_device_calibrate(dev, ACCEL_CALIBRATE_FORCE, NULL));
	accel_cost_model_get(dev, &a);
	d = device_open();
	accel_cost_model_get(d, &b);
	accel_device_release(d);
	ck_assert_uint_eq(b.pub.source, ACCEL_COST_SOURCE_CACHED);
	b.pub.source = a.pub.source;
	ck_assert_mem_eq(&a, &b, sizeof(a));

	cache_file(path, sizeof(path));
	{
		FILE *f = fopen(path, "rb");
		uint8_t all[4096];
		size_t n = f ? fread(all, 1, sizeof(all), f) : 0;
		uint8_t *at = memmem(all, n, "ACCOST1", 7);

		if (f)
			fclose(f);
		ck_assert_ptr_nonnull(at);
		len = n - (size_t)(at - all);
		ck_assert_uint_le(len, sizeof(rec));
		memcpy(rec, at, len);
	}
	ck_assert_uint_eq(rec[8], 3); /* version, little-endian */
	rec[8] = 2;
	accel_cost_calib_store_raw(dev, rec, len);
	d = device_open();
	ASSERT_OK(accel_device_cost_params(d, &p));
	accel_device_release(d);
	ck_assert_uint_eq(p.source, ACCEL_COST_SOURCE_DEFAULT);
}
END_TEST

static Suite *cost_suite(void)
{
	Suite *s = suite_create("cost");
	TCase *tc = tcase_create("params");

	tcase_add_checked_fixture(tc, cost_setup, cost_teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_defaults);
	tcase_add_test(tc, test_calibrate_stable);
	tcase_add_test(tc, test_calibrate_one_at_a_time);
	tcase_add_test(tc, test_calibrate_bad_input);
	tcase_add_test(tc, test_cache_damaged);
	tcase_add_test(tc, test_cache_version);
	tcase_add_test(tc, test_curve_from_sweep);
	tcase_add_test(tc, test_curve_item);
	suite_add_tcase(s, tc);

	tc = tcase_create("predict");
	tcase_add_checked_fixture(tc, cost_setup, cost_teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_predict_declared);
	tcase_add_test(tc, test_predict_learned);
	tcase_add_test(tc, test_predict_curve);
	tcase_add_test(tc, test_predict_saturates);
	tcase_add_test(tc, test_predict_bad_input);
	suite_add_tcase(s, tc);

	tc = tcase_create("charge");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_fair_share_from_first_job);
	tcase_add_test(tc, test_fair_share_huge_prediction);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	test_require_device();
	return test_run_suite(cost_suite());
}
