// SPDX-License-Identifier: MIT
/*
 * accel-run: run a command script on a libaccel device and check its
 * results. See Documentation/man/accel-run.1.rst for the script language.
 *
 *	accel-run [-j] [-d URI] [-L DIR]... [-t MS] [--check] SCRIPT
 *
 * Exit status: 0 every submission completed and every check passed; 1 a
 * check or a submission failed; 2 bad usage or a malformed script (the
 * message names the line); 3 a library call failed (the message names
 * the line and carries libaccel's explanation).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run.h"
#include "script.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: accel-run [-j] [-d URI] [-L DIR]... [-t MS] [--check] SCRIPT|-\n"
		"  -d, --device URI   the device (default: the script's 'device', else cpu://)\n"
		"  -j, --json         the report as one JSON object\n"
		"  -L, --lib-dir DIR  look up executables' paths in DIR too (also ACCEL_RUN_PATH,\n"
		"                     a ':'-separated list)\n"
		"  -t, --timeout MS   how long to wait for a submission (default 10000)\n"
		"      --check        parse the script only; print nothing if it is well formed\n"
		"exit: 0 ok, 1 a check or submission failed, 2 usage or script error, 3 runtime error\n");
}

static void add_env_dirs(struct run_opts *o, char *env)
{
	char *save = NULL;

	for (char *d = strtok_r(env, ":", &save); d && o->libdir_count < 16;
	     d = strtok_r(NULL, ":", &save))
		o->libdirs[o->libdir_count++] = d;
}

int main(int argc, char **argv)
{
	enum { OPT_CHECK = 256 };
	static const struct option lopts[] = {
		{ "device", required_argument, NULL, 'd' },
		{ "json", no_argument, NULL, 'j' },
		{ "lib-dir", required_argument, NULL, 'L' },
		{ "timeout", required_argument, NULL, 't' },
		{ "check", no_argument, NULL, OPT_CHECK },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct run_opts o = { .timeout_ms = 10000 };
	char err[SCRIPT_ERROR_MAX], *env = getenv("ACCEL_RUN_PATH");
	struct script s;
	int c, check_only = 0, status;

	while ((c = getopt_long(argc, argv, "d:jL:t:h", lopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			o.device = optarg;
			break;
		case 'j':
			o.json = true;
			break;
		case 'L':
			if (o.libdir_count < 16)
				o.libdirs[o.libdir_count++] = optarg;
			break;
		case 't':
			o.timeout_ms = atoll(optarg);
			if (o.timeout_ms <= 0) {
				fprintf(stderr, "accel-run: --timeout %s: give a number of milliseconds >= 1\n", optarg);
				return RUN_BAD_SCRIPT;
			}
			break;
		case OPT_CHECK:
			check_only = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return RUN_BAD_SCRIPT;
		}
	}
	if (optind + 1 != argc) {
		usage(stderr);
		return RUN_BAD_SCRIPT;
	}
	if (env && *env)
		add_env_dirs(&o, env = strdup(env));
	if (script_load(argv[optind], &s, err, sizeof(err))) {
		if (o.json) {
			printf("{\"script\": \"%s\", \"result\": \"error\", \"error\": \"", argv[optind]);
			for (const char *p = err; *p; p++)
				printf(*p == '"' || *p == '\\' ? "\\%c" : "%c", *p);
			printf("\"}\n");
		}
		fprintf(stderr, "%s\n", err);
		free(env);
		return RUN_BAD_SCRIPT;
	}
	status = check_only ? RUN_OK : script_run(&s, &o, stdout, err, sizeof(err));
	if (status == RUN_ERROR)
		fprintf(stderr, "%s\n", err);
	script_free(&s);
	free(env);
	return status;
}
