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
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <stdbool.h>
#include <unistd.h>

#include <accel/accel.h>

#include "json.h"
#include "output.h"
#include "parse.h"
#include "run.h"
#include "script.h"

#define LIBDIRS_MAX 16
#define TIMEOUT_MS_MAX 86400000ull /* a day */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: accel-run [-j] [-d URI] [-L DIR]... [-t MS] [--check] SCRIPT|-\n"
		"       accel-run -h|--help|help, accel-run -V|--version\n"
		"  -d, --device URI   the device (default: the script's 'device', else cpu://)\n"
		"  -j, --json         the report as one JSON object\n"
		"  -L, --lib-dir DIR  look up executables' paths in DIR too (also ACCEL_RUN_PATH,\n"
		"                     a ':'-separated list)\n"
		"  -t, --timeout MS   how long to wait for a submission, 1 to 86400000\n"
		"                     (default 10000)\n"
		"      --check        parse the script only; print nothing if it is well formed\n"
		"  -V, --version      print the version and exit\n"
		"exit: 0 ok, 1 a check or submission failed, 2 usage or script error, 3 runtime error\n");
}

/* ACCEL_RUN_PATH's folders after the -L ones; false past LIBDIRS_MAX. */
static bool add_env_dirs(struct run_opts *o, char *env)
{
	char *save = NULL;

	for (char *d = strtok_r(env, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
		if (o->libdir_count == LIBDIRS_MAX)
			return false;
		o->libdirs[o->libdir_count++] = d;
	}
	return true;
}

/*
 * A standard stream the caller closed (accel-run ... >&-) is the number
 * the next open() gets: the script, a device node, a scheduler's eventfd,
 * and the report would be written there. Each closed one is held by
 * /dev/null opened the other way round, so that reading stdin or writing
 * stdout still fails (EBADF), as the caller meant, and the exit says so.
 */
static void hold_closed_std_fds(void)
{
	for (int fd = 0; fd <= 2; fd++) {
		int o;

		if (fcntl(fd, F_GETFD) != -1 || errno != EBADF)
			continue;
		o = open("/dev/null", fd == 0 ? O_WRONLY : O_RDONLY);
		if (o >= 0 && o != fd) {
			dup2(o, fd);
			close(o);
		}
	}
}

/* A script error before anything ran: the message, and with -j the report. */
static int refuse(const struct run_opts *o, const char *script, const char *err)
{
	if (o->json) {
		fputs("{\"script\": ", stdout);
		json_fstring(stdout, script);
		fputs(", \"result\": \"error\", \"error\": ", stdout);
		json_fstring(stdout, err);
		fputs("}\n", stdout);
	}
	fprintf(stderr, "%s\n", err);
	return RUN_BAD_SCRIPT;
}

static int tool_main(int argc, char **argv)
{
	enum { OPT_CHECK = 256 };
	static const struct option lopts[] = {
		{ "device", required_argument, NULL, 'd' },
		{ "json", no_argument, NULL, 'j' },
		{ "lib-dir", required_argument, NULL, 'L' },
		{ "timeout", required_argument, NULL, 't' },
		{ "check", no_argument, NULL, OPT_CHECK },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 },
	};
	struct run_opts o = { .timeout_ms = 10000 };
	const char *env = getenv("ACCEL_RUN_PATH");
	char err[SCRIPT_ERROR_MAX], *env_dirs = NULL;
	struct script s;
	struct stat st;
	uint64_t ms;
	int c, check_only = 0, status;

	/* A report that could not be written is not a success (status 1). */
	output_check_at_exit("accel-run");
	hold_closed_std_fds();
	while ((c = getopt_long(argc, argv, "d:jL:t:hV", lopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			o.device = optarg;
			break;
		case 'j':
			o.json = true;
			break;
		case 'L':
			if (o.libdir_count == LIBDIRS_MAX) {
				fprintf(stderr, "accel-run: more than %d -L folders; put the executables in fewer\n",
					LIBDIRS_MAX);
				return RUN_BAD_SCRIPT;
			}
			o.libdirs[o.libdir_count++] = optarg;
			break;
		case 't':
			if (parse_u64("accel-run", "--timeout (milliseconds)", optarg,
				      1, TIMEOUT_MS_MAX, &ms))
				return RUN_BAD_SCRIPT;
			o.timeout_ms = (int64_t)ms;
			break;
		case 'V':
			printf("accel-run (libaccel) %s\n", accel_version());
			return 0;
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
		if (optind == argc)
			fprintf(stderr, "accel-run: no script given: name one, or - for standard input\n");
		else
			fprintf(stderr, "accel-run: one script at a time, but got '%s' after '%s'\n",
				argv[optind + 1], argv[optind]);
		usage(stderr);
		return RUN_BAD_SCRIPT;
	}
	/* `accel-run help`, unless a script is really called that. */
	if (!strcmp(argv[optind], "help") && stat("help", &st) != 0) {
		usage(stdout);
		return 0;
	}
	if (strcmp(argv[optind], "-") && stat(argv[optind], &st) == 0 &&
	    S_ISDIR(st.st_mode)) {
		snprintf(err, sizeof(err),
			 "accel-run: %s is a folder; give one script file (the examples: %s/*.acc)",
			 argv[optind], argv[optind]);
		return refuse(&o, argv[optind], err);
	}
	/*
	 * ACCEL_RUN_PATH's folders point into a copy that strtok_r() cuts up; an
	 * empty ACCEL_RUN_PATH is no folder, and getenv()'s string is never
	 * ours to free.
	 */
	if (env && *env) {
		env_dirs = strdup(env);
		if (!env_dirs) {
			fprintf(stderr, "accel-run: out of memory\n");
			return RUN_ERROR;
		}
		if (!add_env_dirs(&o, env_dirs)) {
			/* Not dropped silently: a path looked up in vain is worse. */
			fprintf(stderr, "accel-run: -L and ACCEL_RUN_PATH name more than %d folders in all; put the executables in fewer\n",
				LIBDIRS_MAX);
			free(env_dirs);
			return RUN_BAD_SCRIPT;
		}
	}
	if (script_load(argv[optind], &s, err, sizeof(err))) {
		free(env_dirs);
		return refuse(&o, argv[optind], err);
	}
	status = check_only ? RUN_OK : script_run(&s, &o, stdout, err, sizeof(err));
	if (!check_only && err[0])
		fprintf(stderr, "%s\n", err);
	script_free(&s);
	free(env_dirs);
	return status;
}

int main(int argc, char **argv)
{
	return output_end("accel-run", tool_main(argc, argv));
}
