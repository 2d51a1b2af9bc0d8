// SPDX-License-Identifier: MIT
/* The tools' standard output: see output.h. */
#include <errno.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "output.h"

static const char *exit_prog = "accelsched";
/* output_flush() said why already: later failures only set the status. */
static bool said;

static void say(const char *prog, int err)
{
	fprintf(stderr, "%s: cannot write the output: %s\n", prog,
		err ? strerror(err) : "a write failed");
}

bool output_flush(const char *prog)
{
	int err = 0;

	errno = 0;
	if (fflush(stdout) != 0)
		err = errno;
	if (!err && !ferror(stdout))
		return true;
	if (!said)
		say(prog, err);
	said = true;
	return false;
}

static void close_stdout(void)
{
	bool bad = ferror(stdout), pending = __fpending(stdout) > 0;
	int err = 0;

	errno = 0;
	if (fclose(stdout) != 0) {
		/* A closed stdout (>&-) is an error only with output for it. */
		if (errno != EBADF || bad || pending)
			err = errno ? errno : EIO;
	} else if (bad) {
		err = EIO;
	}
	if (err) {
		if (!said)
			say(exit_prog, err);
		_exit(1);
	}
}

int output_end(const char *prog, int status)
{
	return output_flush(prog) ? status : 1;
}

void output_check_at_exit(const char *prog)
{
	exit_prog = prog;
	atexit(close_stdout);
}
