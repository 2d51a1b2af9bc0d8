// SPDX-License-Identifier: MIT
/*
 * accelctl cdi: being written (issue 18); until then it says so.
 */
#include <stdio.h>

#include "accelctl.h"

int cmd_cdi(int argc, char **argv)
{
	(void)argc;
	fprintf(stderr, "%s: %s: not available in this build yet\n", progname, argv[0]);
	return 1;
}
