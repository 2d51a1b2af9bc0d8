/* SPDX-License-Identifier: MIT */
/*
 * Internal: the scheduler object and the interface its kinds implement.
 *
 * struct accel_scheduler is the header every kind embeds first: the
 * reference count, the kind, the ops vtable, and the reason it was chosen.
 * The public functions in scheduler.c work on the header and call the ops;
 * sched_kernel.c and sched_embedded.c each provide one implementation.
 *
 * Opening is the only step that differs in shape between kinds (the kernel
 * kind can fail and explain why; the selection in scheduler.c decides what a
 * failure means), so each kind has its own constructor rather than an op.
 */
#ifndef ACCEL_SRC_SCHED_H
#define ACCEL_SRC_SCHED_H

#include <limits.h>
#include <stdatomic.h>
#include <stddef.h>

#include "accel/scheduler.h"
#include "macros.h"

/* Size of a reason sentence, NUL included. */
#define ACCEL_REASON_MAX 1024

struct accel_scheduler_ops {
	/* Frees everything the kind owns, then the object itself. */
	void (*destroy)(accel_scheduler_t *s);
	/* Fills the kind-specific fields; @info arrives zeroed with ->kind set. */
	void (*query)(const accel_scheduler_t *s, accel_scheduler_info_t *info);
};

struct accel_scheduler {
	atomic_uint refcount;
	accel_scheduler_kind_t kind;
	const struct accel_scheduler_ops *ops;
	char reason[ACCEL_REASON_MAX];
};

/* Sets up the header with one reference and an empty reason. */
void accel_scheduler_init(accel_scheduler_t *s, accel_scheduler_kind_t kind,
			  const struct accel_scheduler_ops *ops);

/*
 * struct accel_sched_config - what accel_scheduler_open() was asked for,
 * after the options and the environment were resolved and validated.
 * @kind:        what to open (AUTO, KERNEL or EMBEDDED).
 * @kind_origin: who chose @kind, for reasons and messages:
 *               "ACCEL_SCHEDULER=kernel", "options->kind =
 *               ACCEL_SCHEDULER_KERNEL", or "default".
 * @device_path: the node to try.
 * @path_origin: who chose @device_path: "ACCEL_DEVICE",
 *               "options->device_path", or "" for the default.
 */
struct accel_sched_config {
	accel_scheduler_kind_t kind;
	char kind_origin[64];
	char device_path[PATH_MAX];
	char path_origin[32];
};

/*
 * accel_sched_config_resolve() - options, then environment, into @cfg.
 * @opts: the caller's options, or NULL for the defaults.
 *
 * Returns 0, or -EINVAL / -ENAMETOOLONG with the thread's message set.
 */
int accel_sched_config_resolve(const accel_scheduler_options_t *opts,
			       struct accel_sched_config *cfg);

/*
 * accel_sched_kernel_open() - open the device named by @cfg.
 * @why: on success, what the device answered ("/dev/accelsched answered:
 *       module 0.1.0, ABI 1.0, io_uring ok"); on failure, what went wrong and
 *       what would fix it. The caller turns it into a reason or a message;
 *       the thread's message is not touched.
 *
 * Returns 0 with *@out set, or a negative errno with *@out untouched and
 * nothing leaked.
 */
int accel_sched_kernel_open(const struct accel_sched_config *cfg,
			    accel_scheduler_t **out, char *why, size_t why_len);

/* accel_sched_embedded_open() - 0, or -ENOMEM with @why set. */
int accel_sched_embedded_open(accel_scheduler_t **out, char *why,
			      size_t why_len);

#endif /* ACCEL_SRC_SCHED_H */
