// SPDX-License-Identifier: MIT
/* accel-bench: helpers every benchmark uses. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "bench.h"
#include "json.h"

double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

FILE *notes;

void metric(const struct opts *o, const char *name, double v, int *first)
{
	if (o->json) {
		printf("%s", *first ? "" : ", ");
		json_fstring(stdout, name);
		fputs(": ", stdout);
		json_fnumber(stdout, 4, v);
		*first = 0;
	} else {
		printf("METRIC %s %.4f\n", name, v);
	}
}

const char *bench_tmpdir(void)
{
	const char *dir = getenv("TMPDIR");

	return dir && *dir ? dir : P_tmpdir;
}
