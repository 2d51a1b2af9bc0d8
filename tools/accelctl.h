/* SPDX-License-Identifier: MIT */
/*
 * What accelctl's commands share: the program's name in messages, the exit
 * status of a usage error, and the JSON string writer. Each command is one
 * cmd_<name>(argc, argv) taking its own options (argv[0] is the command's
 * name) and returning the exit status.
 */
#ifndef ACCELCTL_H
#define ACCELCTL_H

#include <stdbool.h>
#include <stddef.h>

#define EXIT_USAGE 2

extern const char *progname;

/* Print "accelctl: <message>" and the --help hint; return EXIT_USAGE. */
int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Every long option's val is OPT_LONG or above, even one that a short
 * letter also spells (-j, --json): getopt_long() then leaves in optopt a
 * letter only for a refused short option, and the val of a refused long
 * one, so that its error can name what the user typed (--json=1 is not
 * "-j"). A command numbers its long options from here.
 */
#define OPT_LONG 256

/* The name of an option in an error; room for any long option's. */
#define OPT_NAME_MAX 64

/*
 * The option getopt_long() just refused, as the user wrote it: "-x" of a
 * short one (even inside a bundle such as -jx), the element of a long
 * one up to any '=' (--json of --json=1, --frob of --frob=2).
 */
const char *bad_option(char **argv, char *buf, size_t len);

/*
 * The usage error of the option getopt_long() just refused with @c ('?'
 * or ':'), for command @cmd (NULL: accelctl's own options): "needs a
 * value", "takes no value" (--json=1), or "unknown option" and @valid
 * when not NULL. Returns EXIT_USAGE.
 */
int option_error(const char *cmd, int c, char **argv, const char *valid);

/*
 * Record in *@seen that the option @name, which takes a value, was given;
 * when it was given before (-o a -o b), a usage error (EXIT_USAGE): which
 * one was meant would be a guess, and the last winning hides a typo.
 * Returns 0 otherwise.
 */
int option_once(const char *cmd, const char *name, bool *seen);

/* @s as a JSON string, quotes and escapes included, on stdout. */
void json_string(const char *s);

int cmd_devices(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_cdi(int argc, char **argv);
int cmd_trace(int argc, char **argv);
int cmd_calibrate(int argc, char **argv);

#endif /* ACCELCTL_H */
