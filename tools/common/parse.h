/* SPDX-License-Identifier: MIT */
/*
 * The tools' number parsing: whole strings only ("5abc", "3x", "", " 7"
 * and "-1" are refused), within a range, with a message that names the
 * tool, the option, the value and what is accepted.
 */
#ifndef ACCEL_TOOLS_PARSE_H
#define ACCEL_TOOLS_PARSE_H

#include <stdint.h>

/*
 * *out = @s as a decimal integer in [@min, @max]. On refusal prints
 * "<prog>: <what> '<s>' is not a whole number from <min> to <max>" on
 * stderr and returns -1; 0 on success (*out untouched on refusal).
 */
int parse_u64(const char *prog, const char *what, const char *s,
	      uint64_t min, uint64_t max, uint64_t *out);

#endif /* ACCEL_TOOLS_PARSE_H */
