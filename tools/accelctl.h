/* SPDX-License-Identifier: MIT */
/*
 * What accelctl's commands share: the program's name in messages, the exit
 * status of a usage error, and the JSON string writer. Each command is one
 * cmd_<name>(argc, argv) taking its own options (argv[0] is the command's
 * name) and returning the exit status.
 */
#ifndef ACCELCTL_H
#define ACCELCTL_H

#include <stddef.h>

#define EXIT_USAGE 2

extern const char *progname;

/* Print "accelctl: <message>" and the --help hint; return EXIT_USAGE. */
int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The option getopt_long() just refused, as the user wrote it. */
const char *bad_option(char **argv, char *buf, size_t len);

/* @s as a JSON string, quotes and escapes included, on stdout. */
void json_string(const char *s);

int cmd_devices(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_cdi(int argc, char **argv);
int cmd_trace(int argc, char **argv);
int cmd_calibrate(int argc, char **argv);

#endif /* ACCELCTL_H */
