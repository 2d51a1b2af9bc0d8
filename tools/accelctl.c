// SPDX-License-Identifier: MIT
/*
 * accelctl: inspect and control accelsched from the command line.
 *
 * Every command builds one data model and prints it as text (for people) or
 * as JSON with -j (for programs); the JSON holds everything the text does.
 * `top` (accelctl-top.c) prints a frame per interval, and with -J (or -j)
 * a JSON object per frame, one a line.
 *
 * Exit status: 0 on success, 1 when the operation failed, 2 on a usage error.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <accel/accel.h>

#include "accelctl.h"
#include "json.h"
#include "output.h"

const char *progname = "accelctl";

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: %s [-h|--help|help] [-V|--version] COMMAND [ARGS]\n"
		"\n"
		"Inspect the accelsched scheduler.\n"
		"\n"
		"Commands:\n"
		"  info [-j|--json]   which scheduler libaccel picks, why, and what it found\n"
		"  devices [-j|--json] [DRIVER]\n"
		"                     the drivers, their devices and each device's limits\n"
		"  top [-J|-j|--json] [--once] [-d SECONDS] [-n N]\n"
		"                     engines, tenants and queues of the module, live\n"
		"  cdi [-o FILE|--dynamic|--print] [--kind VENDOR/CLASS] [--device PATH]\n"
		"      [--sysfs DIR]\n"
		"                     a Container Device Interface spec for /dev/accelsched\n"
		"  trace [-o FILE] [-d SECONDS | -i TEXT | -- COMMAND...] [--fences]\n"
		"        [--buffer-kb KB] [--tracing DIR]\n"
		"                     record the module's tracepoints into a Perfetto trace\n"
		"  calibrate [-j|--json] [--show] [DRIVER[://N]]...\n"
		"                     measure devices' parameters for the cost model\n"
		"\n"
		"Environment:\n"
		"  " ACCEL_SCHEDULER_ENV "=auto|kernel|embedded   the scheduler to use (default: auto)\n"
		"  " ACCEL_DEVICE_ENV "=PATH                       the device node (default: " ACCEL_SCHEDULER_DEFAULT_DEVICE ")\n"
		"\n"
		"Each command's -h, --help prints its own options.\n"
		"Exit status: 0 success, 1 failure, 2 usage error.\n",
		progname);
}

int usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", progname);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry '%s --help' for more information.\n", progname);
	return EXIT_USAGE;
}

const char *bad_option(char **argv, char *buf, size_t len)
{
	const char *arg = argv[optind - 1], *eq = strchr(arg, '=');

	/*
	 * A refused short option leaves its letter in optopt, and optind
	 * on its element while letters of a bundle are left (--json -xj):
	 * only the letter names it. A refused long option leaves optind
	 * past its element, and optopt its val (OPT_LONG and above) or 0
	 * when no option has that name.
	 */
	if (optopt && optopt < OPT_LONG) {
		snprintf(buf, len, "-%c", optopt);
		return buf;
	}
	/* a known option's name (or prefix of it) fits; an unknown one is whole */
	if (!optopt || !eq)
		return arg;
	snprintf(buf, len, "%.*s", (int)(eq - arg), arg);
	return buf;
}

int option_error(const char *cmd, int c, char **argv, const char *valid)
{
	const char *sep = cmd ? ": " : "";
	char opt[OPT_NAME_MAX];
	const char *name = bad_option(argv, opt, sizeof(opt));

	cmd = cmd ?: "";
	if (c == ':')
		return usage_error("%s%soption '%s' needs a value", cmd, sep, name);
	/* refused with a val: a known long option given a value (--json=1) */
	if (optopt >= OPT_LONG)
		return usage_error("%s%soption '%s' takes no value", cmd, sep, name);
	return usage_error("%s%sunknown option '%s'%s%s", cmd, sep, name,
			   valid ? " " : "", valid ?: "");
}

int option_once(const char *cmd, const char *name, bool *seen)
{
	if (*seen)
		return usage_error("%s: %s given twice: give it once", cmd, name);
	*seen = true;
	return 0;
}

/* ---- JSON output -------------------------------------------------------- */

void json_string(const char *s)
{
	json_fstring(stdout, s);
}

static void json_features(uint64_t features)
{
	bool first = true;

	printf("\"features\": {\"mask\": \"0x%" PRIx64 "\", \"names\": [",
	       features);
	for (int bit = 0; bit < 64; bit++) {
		uint64_t f = UINT64_C(1) << bit;
		const char *name = accel_scheduler_feature_name(f);

		if (!(features & f))
			continue;
		printf("%s", first ? "" : ", ");
		first = false;
		if (name)
			json_string(name);
		else
			printf("\"bit%d\"", bit);
	}
	printf("]}");
}

static void json_module(const accel_scheduler_info_t *info)
{
	if (info->kind != ACCEL_SCHEDULER_KERNEL) {
		printf("null");
		return;
	}
	printf("{\n      \"version\": ");
	json_string(info->module_version);
	printf(",\n      \"abi\": {\"major\": %" PRIu32 ", \"minor\": %" PRIu32 "},\n",
	       info->abi_major, info->abi_minor);
	printf("      \"kernel_release\": ");
	json_string(info->kernel_release);
	printf(",\n      \"client_id\": %" PRIu64 ",\n      ", info->client_id);
	json_features(info->features);
	printf("\n    }");
}

static void info_print_json(const accel_scheduler_t *s,
			    const accel_scheduler_info_t *info)
{
	printf("{\n  \"libaccel\": {\"version\": ");
	json_string(accel_version());
	printf("},\n  \"scheduler\": {\n    \"kind\": ");
	json_string(accel_scheduler_kind_name(info->kind));
	printf(",\n    \"reason\": ");
	json_string(accel_scheduler_reason(s));
	printf(",\n    \"io_uring\": %s,\n    \"module\": ",
	       info->uring ? "true" : "false");
	json_module(info);
	printf("\n  }\n}\n");
}

/* ---- text output -------------------------------------------------------- */

static void text_features(uint64_t features)
{
	printf("features:        0x%" PRIx64, features);
	for (int bit = 0; bit < 64; bit++) {
		uint64_t f = UINT64_C(1) << bit;
		const char *name = accel_scheduler_feature_name(f);

		if (!(features & f))
			continue;
		if (name)
			printf(" %s", name);
		else
			printf(" bit%d", bit);
	}
	printf("\n");
}

static void info_print_text(const accel_scheduler_t *s,
			    const accel_scheduler_info_t *info)
{
	printf("libaccel:        %s\n", accel_version());
	printf("scheduler:       %s\n", accel_scheduler_kind_name(info->kind));
	printf("reason:          %s\n", accel_scheduler_reason(s));
	printf("io_uring:        %s\n", info->uring ? "yes" : "no");
	if (info->kind != ACCEL_SCHEDULER_KERNEL) {
		/*
		 * The release and the client id are the module's answer:
		 * say they are missing rather than leave the reader to
		 * wonder whether info forgot them.
		 */
		printf("module:          none\n");
		printf("kernel release:  unavailable (no module)\n");
		printf("client id:       unavailable (no module)\n");
		return;
	}
	printf("module:          %s\n", info->module_version);
	printf("abi:             %" PRIu32 ".%" PRIu32 "\n", info->abi_major,
	       info->abi_minor);
	printf("kernel release:  %s\n", info->kernel_release);
	printf("client id:       %" PRIu64 "\n", info->client_id);
	text_features(info->features);
}

/* ---- commands ----------------------------------------------------------- */

static void info_usage(FILE *f)
{
	fprintf(f,
		"Usage: %s info [-j|--json]\n"
		"\n"
		"Open the scheduler the way every libaccel program does and print which\n"
		"kind was chosen, why, and what the module reported.\n"
		"\n"
		"  -j, --json   print JSON instead of text\n"
		"  -h, --help   print this help\n",
		progname);
}

static int cmd_info(int argc, char **argv)
{
	enum { OPT_JSON = OPT_LONG, OPT_HELP };
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, OPT_JSON },
		{ "help", no_argument, NULL, OPT_HELP },
		{ NULL, 0, NULL, 0 },
	};
	accel_scheduler_t *s;
	accel_scheduler_info_t info;
	bool json = false;
	int c, err;

	optind = 0;
	while ((c = getopt_long(argc, argv, ":jh", longopts, NULL)) != -1) {
		switch (c) {
		case 'j':
		case OPT_JSON:
			json = true;
			break;
		case 'h':
		case OPT_HELP:
			info_usage(stdout);
			return EXIT_SUCCESS;
		default:
			return option_error("info", c, argv, NULL);
		}
	}
	if (optind < argc)
		return usage_error("info: unexpected argument '%s'",
				   argv[optind]);

	err = accel_scheduler_open(NULL, &s);
	if (err) {
		fprintf(stderr, "%s: info: %s (%s)\n", progname,
			accel_error_message(), strerror(-err));
		return EXIT_FAILURE;
	}
	accel_scheduler_query(s, &info);
	if (json)
		info_print_json(s, &info);
	else
		info_print_text(s, &info);
	accel_scheduler_release(s);
	return EXIT_SUCCESS;
}

static int tool_main(int argc, char **argv)
{
	enum { OPT_HELP = OPT_LONG, OPT_VERSION };
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, OPT_HELP },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	/*
	 * stdio says a write failed only when stdout is flushed: closing it
	 * at exit turns a full disk or a closed stdout into status 1 for
	 * every command, rather than output silently lost.
	 */
	output_check_at_exit(progname);
	while ((c = getopt_long(argc, argv, "+:hV", longopts, NULL)) != -1) {
		switch (c) {
		case 'h':
		case OPT_HELP:
			usage(stdout);
			return EXIT_SUCCESS;
		case 'V':
		case OPT_VERSION:
			printf("accelctl (libaccel) %s\n", accel_version());
			return EXIT_SUCCESS;
		default:
			return option_error(NULL, c, argv, NULL);
		}
	}
	if (optind >= argc)
		return usage_error("missing command");
	if (strcmp(argv[optind], "help") == 0) {
		usage(stdout);
		return EXIT_SUCCESS;
	}
	if (strcmp(argv[optind], "info") == 0)
		return cmd_info(argc - optind, argv + optind);
	if (strcmp(argv[optind], "devices") == 0)
		return cmd_devices(argc - optind, argv + optind);
	if (strcmp(argv[optind], "top") == 0)
		return cmd_top(argc - optind, argv + optind);
	if (strcmp(argv[optind], "cdi") == 0)
		return cmd_cdi(argc - optind, argv + optind);
	if (strcmp(argv[optind], "trace") == 0)
		return cmd_trace(argc - optind, argv + optind);
	if (strcmp(argv[optind], "calibrate") == 0)
		return cmd_calibrate(argc - optind, argv + optind);
	return usage_error("unknown command '%s'", argv[optind]);
}

int main(int argc, char **argv)
{
	return output_end(progname, tool_main(argc, argv));
}
