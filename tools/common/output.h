/* SPDX-License-Identifier: MIT */
/*
 * The tools' standard output: a write that failed (a full disk, a closed
 * or broken stdout) is an error the exit status says, never a silent
 * success. stdio reports it only at flush or close, so each tool closes
 * stdout itself before it exits.
 */
#ifndef ACCEL_TOOLS_OUTPUT_H
#define ACCEL_TOOLS_OUTPUT_H

#include <stdbool.h>

/*
 * Flushes stdout; false, with "<prog>: cannot write the output: <why>" on
 * stderr (once: a later failure says nothing more), if that or an earlier
 * write to it failed. For a tool that loops (a continuous display): stop
 * when this says false.
 */
bool output_flush(const char *prog);

/*
 * Registers an atexit() handler that closes stdout and, if a write to it
 * failed, says so on stderr as output_flush() does and ends the process
 * with status 1 instead of the status it was exiting with. Call it once,
 * first thing in main().
 */
void output_check_at_exit(const char *prog);

/*
 * What main() returns: @status once stdout is flushed, or 1 after saying
 * why it could not be (as output_flush() does). Flushing before exit()
 * keeps the reason: a C++ library a driver loaded flushes stdout in an
 * exit handler of its own, which runs before the one above, and by then
 * its errno is gone ("cannot write the output: Input/output error" for a
 * full disk).
 */
int output_end(const char *prog, int status);

#endif /* ACCEL_TOOLS_OUTPUT_H */
