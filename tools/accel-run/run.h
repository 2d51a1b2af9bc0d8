/* SPDX-License-Identifier: MIT */
/*
 * accel-run: running a parsed script on a device, and reporting what it
 * did (submissions with their host cost and completion time, checks,
 * printed contents) as text or JSON.
 */
#ifndef ACCEL_RUN_RUN_H
#define ACCEL_RUN_RUN_H

#include <stdbool.h>
#include <stdio.h>

#include "script.h"

struct run_opts {
	const char *device;       /* NULL: the script's, else "cpu://" */
	bool json;
	const char *libdirs[16];  /* where executables' paths are looked up */
	int libdir_count;
	int64_t timeout_ms;       /* per drain of a submission */
};

/* Exit statuses (also accel-run's). */
enum {
	RUN_OK = 0,          /* every submission completed, every check passed */
	RUN_CHECK_FAILED = 1,/* a check failed or a submission failed */
	RUN_BAD_SCRIPT = 2,  /* usage or a malformed script */
	RUN_ERROR = 3,       /* a library call failed ("FILE:LINE: ..." in err) */
};

/*
 * script_run() - run @s and write the report to @out. Returns one of the
 * RUN_* statuses. What stopped the run is in @err ("" if nothing did) and
 * ends the report too: a failed library call (RUN_ERROR), or a submission
 * that did not complete within the timeout (RUN_CHECK_FAILED; its entry
 * in the report carries the error).
 */
int script_run(const struct script *s, const struct run_opts *o, FILE *out,
	       char *err, size_t err_len);

#endif
