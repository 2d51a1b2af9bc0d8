// SPDX-License-Identifier: MIT
/*
 * accelctl calibrate: run the cost model's microbenchmark on devices
 * (accel_device_calibrate(), accel/cost.h) and print what it measured:
 * memory bandwidth of transfers and of kernels, operation rate, launch and
 * submission overheads. The
 * parameters are stored in libaccel's cache, where every later process
 * opening the same device (same driver build) finds them.
 *
 * Devices: each argument is a URI ("vulkan://1") or a driver name, which
 * means its device 0 ("cpu" is "cpu://"); without one, device 0 of every
 * available driver. With --show, nothing is measured: the parameters each
 * device has now (a cached calibration, or the defaults) are printed.
 *
 * Exit status: 0 every device calibrated (or shown); 1 one failed (the
 * others are still printed, the failure with its message); 2 usage error.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <accel/accel.h>

#include "accelctl.h"
#include "json.h"

#define MAX_DEVICES 16

struct cal_entry {
	char uri[128];
	int err;
	char error[512];
	accel_cost_params_t params;
};

static const char *const source_names[] = {
	[ACCEL_COST_SOURCE_DEFAULT] = "default",
	[ACCEL_COST_SOURCE_CACHED] = "cached",
	[ACCEL_COST_SOURCE_CALIBRATED] = "calibrated",
};

static void calibrate_usage(FILE *f)
{
	fprintf(f,
		"Usage: %s calibrate [-j|--json] [--show] [DRIVER[://N]]...\n"
		"\n"
		"Measure each device's parameters for libaccel's cost model (memory\n"
		"bandwidth, operation rate, launch and submission overheads), store\n"
		"them in libaccel's cache and print them. A DRIVER alone means its\n"
		"device 0; without one, device 0 of every available driver. Rerun it\n"
		"when the device or its driver changes: their calibration is keyed by\n"
		"both, so a changed one uses the defaults until then.\n"
		"\n"
		"  -j, --json   print JSON instead of text\n"
		"      --show   measure nothing: print the parameters each device has\n"
		"               now (a cached calibration, or the defaults)\n"
		"  -h, --help   print this help\n",
		progname);
}

/*
 * @arg as a URI: a driver name alone becomes "NAME://". False when it
 * does not fit @len: cut, it would name another device (or options).
 */
static bool to_uri(const char *arg, char *uri, size_t len)
{
	int n = snprintf(uri, len, strstr(arg, "://") ? "%s" : "%s://", arg);

	return n >= 0 && (size_t)n < len;
}

/* libaccel's rule (ACCEL_CACHE_DISABLE): set, and neither empty nor "0". */
static bool cache_disabled(void)
{
	const char *v = getenv("ACCEL_CACHE_DISABLE");

	return v && *v && strcmp(v, "0") != 0;
}

/* The cache directory libaccel uses, as its documentation names it. */
static void cache_dir(char *buf, size_t len)
{
	const char *v = getenv("ACCEL_CACHE_DIR");

	if (v && *v)
		snprintf(buf, len, "%s", v);
	else if ((v = getenv("XDG_CACHE_HOME")) && v[0] == '/')
		snprintf(buf, len, "%s/accelsched", v);
	else if ((v = getenv("HOME")) && *v)
		snprintf(buf, len, "%s/.cache/accelsched", v);
	else
		snprintf(buf, len, "(none: neither ACCEL_CACHE_DIR, XDG_CACHE_HOME nor HOME is set)");
}

/*
 * Whether the calibration @c measured was stored. accel_device_calibrate()
 * succeeds when the microbenchmark does, whether or not the cache could
 * keep the result (a cache directory that is a file, a loop of links, a
 * read-only place), and the public API says nothing of the store. A
 * device opened anew reads its parameters from the cache, as every later
 * process will: they must be the ones just measured, read from there.
 */
static bool stored(accel_scheduler_t *s, const struct cal_entry *c)
{
	const accel_cost_params_t *m = &c->params;
	accel_device_t *dev = NULL;
	accel_cost_params_t p;
	bool ok;

	if (cache_disabled())
		return true;	/* measured, not kept: as documented */
	if (accel_device_open(c->uri, s, &dev))
		return false;
	ok = !accel_device_cost_params(dev, &p) &&
	     p.source == ACCEL_COST_SOURCE_CACHED &&
	     p.bandwidth == m->bandwidth &&
	     p.kernel_bandwidth == m->kernel_bandwidth &&
	     p.operation_rate == m->operation_rate &&
	     p.dispatch_ns == m->dispatch_ns &&
	     p.submission_ns == m->submission_ns;
	accel_device_release(dev);
	return ok;
}

static void calibrate_one(accel_scheduler_t *s, bool show, struct cal_entry *c)
{
	accel_device_t *dev = NULL;
	char dir[256];

	c->err = accel_device_open(c->uri, s, &dev);
	if (!c->err)
		c->err = show ? accel_device_cost_params(dev, &c->params) :
				accel_device_calibrate(dev, ACCEL_CALIBRATE_FORCE, &c->params);
	if (c->err)
		snprintf(c->error, sizeof(c->error), "%s", accel_error_message());
	else
		snprintf(c->uri, sizeof(c->uri), "%s", accel_device_uri(dev));
	accel_device_release(dev);
	if (c->err || show || stored(s, c))
		return;
	cache_dir(dir, sizeof(dir));
	c->err = -EIO;
	snprintf(c->error, sizeof(c->error),
		 "measured, but the calibration could not be stored in the cache directory %s (is it a folder this user may write? see ACCEL_CACHE_DIR): later processes use the defaults",
		 dir);
}

/* Device 0 of every available driver. */
static uint32_t default_devices(struct cal_entry *c)
{
	uint32_t n = 0;

	for (uint32_t k = 0; k < accel_driver_count() && n < MAX_DEVICES; k++) {
		accel_driver_info_t info;

		if (accel_driver_info(k, &info) || !info.available)
			continue;
		to_uri(info.name, c[n++].uri, sizeof(c[0].uri));
	}
	return n;
}

static void print_text(const struct cal_entry *c, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		const accel_cost_params_t *p = &c[i].params;

		if (c[i].err) {
			printf("%s: failed: %s\n", c[i].uri, c[i].error);
			continue;
		}
		printf("%s (%s)\n", c[i].uri, source_names[p->source]);
		printf("  bandwidth       %10.2f GB/s (transfers)\n", (double)p->bandwidth / 1e9);
		printf("  kernel bandwidth%10.2f GB/s (dispatches)\n", (double)p->kernel_bandwidth / 1e9);
		printf("  operation rate  %10.2f Gop/s\n", (double)p->operation_rate / 1e9);
		printf("  dispatch        %10.2f us per command\n", (double)p->dispatch_ns / 1e3);
		printf("  submission      %10.2f us per submission\n", (double)p->submission_ns / 1e3);
	}
}

static void print_json(const struct cal_entry *c, uint32_t n)
{
	printf("{\n  \"devices\": [");
	for (uint32_t i = 0; i < n; i++) {
		const accel_cost_params_t *p = &c[i].params;

		printf("%s\n    {\n      \"uri\": ", i ? "," : "");
		json_string(c[i].uri);
		printf(",\n      \"error\": ");
		json_string(c[i].err ? c[i].error : NULL);
		if (!c[i].err) {
			printf(",\n      \"source\": ");
			json_string(source_names[p->source]);
			printf(",\n      \"bandwidth_bytes_per_s\": %" PRIu64
			       ",\n      \"kernel_bandwidth_bytes_per_s\": %" PRIu64
			       ",\n      \"operation_rate_per_s\": %" PRIu64
			       ",\n      \"dispatch_ns\": %" PRIu64
			       ",\n      \"submission_ns\": %" PRIu64,
			       p->bandwidth, p->kernel_bandwidth, p->operation_rate, p->dispatch_ns,
			       p->submission_ns);
		}
		printf("\n    }");
	}
	printf("\n  ]\n}\n");
}

int cmd_calibrate(int argc, char **argv)
{
	enum { OPT_JSON = OPT_LONG, OPT_SHOW, OPT_HELP };
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, OPT_JSON },
		{ "show", no_argument, NULL, OPT_SHOW },
		{ "help", no_argument, NULL, OPT_HELP },
		{ NULL, 0, NULL, 0 },
	};
	struct cal_entry c[MAX_DEVICES] = { 0 };
	accel_scheduler_t *s = NULL;
	bool json = false, show = false;
	int ch, status = EXIT_SUCCESS;
	uint32_t n = 0;

	optind = 0;
	while ((ch = getopt_long(argc, argv, ":jh", longopts, NULL)) != -1) {
		switch (ch) {
		case 'j':
		case OPT_JSON:
			json = true;
			break;
		case OPT_SHOW:
			show = true;
			break;
		case 'h':
		case OPT_HELP:
			calibrate_usage(stdout);
			return EXIT_SUCCESS;
		default:
			return option_error("calibrate", ch, argv, NULL);
		}
	}
	if (argc - optind > MAX_DEVICES)
		return usage_error("calibrate: at most %d devices at once", MAX_DEVICES);
	for (; optind < argc; optind++)
		if (!to_uri(argv[optind], c[n++].uri, sizeof(c[0].uri)))
			return usage_error("calibrate: device '%.40s...' is too long: a device URI here is at most %zu bytes",
					   argv[optind], sizeof(c[0].uri) - 1);
	if (!n)
		n = default_devices(c);
	if (accel_scheduler_open(NULL, &s))
		s = NULL; /* each device then opens its own, and says why not */
	for (uint32_t i = 0; i < n; i++) {
		calibrate_one(s, show, &c[i]);
		if (c[i].err)
			status = EXIT_FAILURE;
	}
	accel_scheduler_release(s);
	if (json)
		print_json(c, n);
	else
		print_text(c, n);
	return status;
}
