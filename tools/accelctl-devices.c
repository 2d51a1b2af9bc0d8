// SPDX-License-Identifier: MIT
/*
 * accelctl devices: every driver of the registry, available or not (with
 * why not), and each available driver's devices: what
 * accel_driver_device_info() says of them, and the answers of
 * accel_device_query_i64() for every key, from opening each device once.
 *
 * Exit status: 0 listed (drivers that are not available are part of the
 * listing); 1 when a DRIVER named on the command line cannot list its
 * devices; 2 usage error.
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

/* One device as listed: its info, and its limits when it opened. */
struct dev_entry {
	accel_device_info_t info;
	bool opened;
	char open_error[256];
	int64_t limits[ACCEL_DEVICE_QUERY_COUNT];
};

/* One driver: the registry's entry and its devices, or why none. */
struct drv_entry {
	accel_driver_info_t info;
	int list_err;          /* accel_driver_device_count/_info */
	char list_error[512];
	uint32_t count;
	struct dev_entry *devs;
};

static void devices_usage(FILE *f)
{
	fprintf(f,
		"Usage: %s devices [-j|--json] [DRIVER]\n"
		"\n"
		"List every driver (cpu, vulkan, cuda, hip), available or not and why,\n"
		"and the devices of each available one: URI, name, vendor, kind, memory,\n"
		"hardware queues and the limits accel_device_query_i64() answers.\n"
		"With DRIVER, only that driver; exit status 1 when it cannot list.\n"
		"\n"
		"  -j, --json   print JSON instead of text\n"
		"  -h, --help   print this help\n",
		progname);
}

static void collect_device(accel_scheduler_t *s, struct dev_entry *d)
{
	accel_device_t *dev = NULL;
	int err;

	if (!s) {
		snprintf(d->open_error, sizeof(d->open_error), "no scheduler");
		return;
	}
	err = accel_device_open(d->info.uri, s, &dev);
	if (err) {
		snprintf(d->open_error, sizeof(d->open_error), "%s",
			 accel_error_message());
		return;
	}
	for (int k = 0; k < ACCEL_DEVICE_QUERY_COUNT; k++)
		accel_device_query_i64(dev, (accel_device_query_t)k, &d->limits[k]);
	d->opened = true;
	accel_device_release(dev);
}

static int collect_driver(accel_scheduler_t *s, struct drv_entry *e)
{
	int err = accel_driver_device_count(e->info.name, &e->count);

	if (!err && e->count) {
		e->devs = calloc(e->count, sizeof(*e->devs));
		if (!e->devs)
			return -ENOMEM;
	}
	for (uint32_t i = 0; !err && i < e->count; i++) {
		e->devs[i].info.size = sizeof(e->devs[i].info);
		err = accel_driver_device_info(e->info.name, i, &e->devs[i].info);
		if (!err)
			collect_device(s, &e->devs[i]);
	}
	if (err) {
		e->count = 0;
		snprintf(e->list_error, sizeof(e->list_error), "%s",
			 accel_error_message());
	}
	e->list_err = err;
	return 0;
}

static const char *const family_flags[] = { "compute", "transfer", "graphics" };

/* ---- text ------------------------------------------------------------------ */

static void text_bytes(uint64_t v)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double d = (double)v;
	int u = 0;

	while (d >= 1024 && u < 4) {
		d /= 1024;
		u++;
	}
	printf("%" PRIu64 " (%.1f %s)", v, d, units[u]);
}

static void print_text_device(const struct dev_entry *d)
{
	const accel_device_info_t *i = &d->info;

	printf("  %s\n", i->uri);
	printf("    name:                %s\n", i->name);
	printf("    vendor:              %s (0x%04" PRIx32 ")\n", i->vendor, i->vendor_id);
	printf("    device id:           0x%04" PRIx32 "\n", i->device_id);
	printf("    kind:                %s\n", accel_device_kind_name(i->kind));
	printf("    device-local memory: ");
	text_bytes(i->device_local_bytes);
	printf("\n    host-visible memory: ");
	text_bytes(i->host_visible_bytes);
	printf("\n");
	if (i->cpu_count)
		printf("    cpus:                %" PRIu32 "\n", i->cpu_count);
	for (uint32_t f = 0; f < i->queue_family_count; f++) {
		const char *sep = "";

		printf("    queue family %" PRIu32 ":      %" PRIu32 " x ", f,
		       i->queue_families[f].count);
		for (unsigned int b = 0; b < 3; b++)
			if (i->queue_families[f].flags & (1u << b)) {
				printf("%s%s", sep, family_flags[b]);
				sep = "+";
			}
		printf("\n");
	}
	if (!d->opened) {
		printf("    limits:              unknown: %s\n", d->open_error);
		return;
	}
	for (int k = 0; k < ACCEL_DEVICE_QUERY_COUNT; k++) {
		char key[64];

		snprintf(key, sizeof(key), "%s:",
			 accel_device_query_name((accel_device_query_t)k));
		printf("    %-30s %" PRId64 "\n", key, d->limits[k]);
	}
}

static void print_text(const struct drv_entry *e, uint32_t n)
{
	for (uint32_t k = 0; k < n; k++) {
		if (!e[k].info.available)
			printf("%s: not available: %s\n", e[k].info.name, e[k].info.reason);
		else if (e[k].list_err)
			printf("%s: cannot list its devices: %s\n", e[k].info.name,
			       e[k].list_error);
		else
			printf("%s: %" PRIu32 " device%s\n", e[k].info.name,
			       e[k].count, e[k].count == 1 ? "" : "s");
		for (uint32_t i = 0; i < e[k].count; i++)
			print_text_device(&e[k].devs[i]);
	}
}

/* ---- JSON ------------------------------------------------------------------ */

static void print_json_device(const struct dev_entry *d, bool last)
{
	const accel_device_info_t *i = &d->info;

	printf("        {\n          \"uri\": ");
	json_string(i->uri);
	printf(",\n          \"name\": ");
	json_string(i->name);
	printf(",\n          \"vendor\": ");
	json_string(i->vendor);
	printf(",\n          \"vendor_id\": %" PRIu32 ",\n          \"device_id\": %" PRIu32
	       ",\n          \"kind\": ", i->vendor_id, i->device_id);
	json_string(accel_device_kind_name(i->kind));
	printf(",\n          \"device_local_bytes\": %" PRIu64
	       ",\n          \"host_visible_bytes\": %" PRIu64
	       ",\n          \"cpu_count\": %" PRIu32 ",\n          \"queue_families\": [",
	       i->device_local_bytes, i->host_visible_bytes, i->cpu_count);
	for (uint32_t f = 0; f < i->queue_family_count; f++) {
		const char *sep = "";

		printf("%s{\"count\": %" PRIu32 ", \"flags\": [", f ? ", " : "",
		       i->queue_families[f].count);
		for (unsigned int b = 0; b < 3; b++)
			if (i->queue_families[f].flags & (1u << b)) {
				printf("%s\"%s\"", sep, family_flags[b]);
				sep = ", ";
			}
		printf("]}");
	}
	printf("],\n          \"limits\": ");
	if (!d->opened) {
		printf("null,\n          \"open_error\": ");
		json_string(d->open_error);
	} else {
		printf("{");
		for (int k = 0; k < ACCEL_DEVICE_QUERY_COUNT; k++) {
			printf("%s\n            ", k ? "," : "");
			json_string(accel_device_query_name((accel_device_query_t)k));
			printf(": %" PRId64, d->limits[k]);
		}
		printf("\n          },\n          \"open_error\": null");
	}
	printf("\n        }%s\n", last ? "" : ",");
}

static void print_json(const struct drv_entry *e, uint32_t n)
{
	printf("{\n  \"drivers\": [");
	for (uint32_t k = 0; k < n; k++) {
		printf("%s\n    {\n      \"name\": ", k ? "," : "");
		json_string(e[k].info.name);
		printf(",\n      \"available\": %s,\n      \"reason\": ",
		       e[k].info.available ? "true" : "false");
		json_string(e[k].info.reason);
		printf(",\n      \"error\": ");
		json_string(e[k].list_err ? e[k].list_error : NULL);
		printf(",\n      \"devices\": [%s", e[k].count ? "\n" : "");
		for (uint32_t i = 0; i < e[k].count; i++)
			print_json_device(&e[k].devs[i], i + 1 == e[k].count);
		printf("%s]\n    }", e[k].count ? "      " : "");
	}
	printf("\n  ]\n}\n");
}

int cmd_devices(int argc, char **argv)
{
	enum { OPT_JSON = OPT_LONG, OPT_HELP };
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, OPT_JSON },
		{ "help", no_argument, NULL, OPT_HELP },
		{ NULL, 0, NULL, 0 },
	};
	uint32_t n = accel_driver_count(), used = 0;
	accel_scheduler_t *s = NULL;
	const char *only = NULL;
	struct drv_entry *e;
	bool json = false;
	int c, status = EXIT_SUCCESS;

	optind = 0;
	while ((c = getopt_long(argc, argv, ":jh", longopts, NULL)) != -1) {
		switch (c) {
		case 'j':
		case OPT_JSON:
			json = true;
			break;
		case 'h':
		case OPT_HELP:
			devices_usage(stdout);
			return EXIT_SUCCESS;
		default:
			return option_error("devices", c, argv, NULL);
		}
	}
	if (optind < argc)
		only = argv[optind++];
	if (optind < argc)
		return usage_error("devices: unexpected argument '%s'", argv[optind]);

	e = calloc(n, sizeof(*e));
	if (!e) {
		fprintf(stderr, "%s: devices: out of memory\n", progname);
		return EXIT_FAILURE;
	}
	for (uint32_t k = 0; k < n; k++) {
		accel_driver_info(k, &e[used].info);
		if (!only || strcmp(only, e[used].info.name) == 0)
			used++;
	}
	if (only && !used) {
		free(e);
		return usage_error("devices: no driver named '%s'; the drivers are cpu, vulkan, cuda and hip",
				   only);
	}
	/* one scheduler for every device opened (for its limits) */
	if (accel_scheduler_open(NULL, &s))
		s = NULL;
	for (uint32_t k = 0; k < used; k++) {
		if (!e[k].info.available) {
			e[k].list_err = -ENODEV;
			snprintf(e[k].list_error, sizeof(e[k].list_error),
				 "driver not available: %s", e[k].info.reason);
			continue;
		}
		if (collect_driver(s, &e[k])) {
			fprintf(stderr, "%s: devices: out of memory\n", progname);
			status = EXIT_FAILURE;
			goto out;
		}
	}
	if (json)
		print_json(e, used);
	else
		print_text(e, used);
	if (only && e[0].list_err) {
		fprintf(stderr, "%s: devices: %s: %s\n", progname, only,
			e[0].list_error);
		status = EXIT_FAILURE;
	}
out:
	for (uint32_t k = 0; k < used; k++)
		free(e[k].devs);
	free(e);
	accel_scheduler_release(s);
	return status;
}
