// SPDX-License-Identifier: MIT
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "parse.h"

int parse_u64(const char *prog, const char *what, const char *s,
	      uint64_t min, uint64_t max, uint64_t *out)
{
	unsigned long long v = 0;
	char *end = NULL;

	errno = 0;
	/* strtoull() takes leading blanks and a '-' (negating): neither here. */
	if (s && *s >= '0' && *s <= '9')
		v = strtoull(s, &end, 10);
	if (!s || !end || *end || errno || v < min || v > max) {
		fprintf(stderr, "%s: %s '%s' is not a whole number from %" PRIu64
			" to %" PRIu64 "\n", prog, what, s ? s : "", min, max);
		return -1;
	}
	*out = v;
	return 0;
}
