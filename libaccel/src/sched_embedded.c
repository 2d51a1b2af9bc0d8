// SPDX-License-Identifier: MIT
/*
 * The embedded scheduler: the accelsched semantics in process, for machines
 * without the module.
 *
 * At this stage it only exists: opening it cannot fail except for memory,
 * and it reports no module, no ABI and no io_uring. The syncobjs, queues and
 * jobs of DESIGN.md §3-4 will live here, futex-based, behind the same ops.
 */
#include <errno.h>
#include <stdlib.h>

#include "error.h"
#include "sched.h"

struct accel_sched_embedded {
	accel_scheduler_t base;
};

static void embedded_destroy(accel_scheduler_t *s)
{
	free((struct accel_sched_embedded *)s);
}

static void embedded_query(const accel_scheduler_t *s,
			   accel_scheduler_info_t *info)
{
	/* No module: every kernel field stays zero or "". */
}

static const struct accel_scheduler_ops embedded_ops = {
	.destroy = embedded_destroy,
	.query = embedded_query,
};

int accel_sched_embedded_open(accel_scheduler_t **out, char *why,
			      size_t why_len)
{
	struct accel_sched_embedded *e = calloc(1, sizeof(*e));

	if (!e) {
		accel_strfmt(why, why_len,
			     "out of memory allocating the embedded scheduler (%zu bytes)",
			     sizeof(*e));
		return -ENOMEM;
	}
	accel_scheduler_init(&e->base, ACCEL_SCHEDULER_EMBEDDED, &embedded_ops);
	*out = &e->base;
	return 0;
}
