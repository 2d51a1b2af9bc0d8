// SPDX-License-Identifier: MIT
/*
 * The scheduler object: accel_scheduler_open() and what every kind shares.
 *
 * Opening resolves the configuration (sched_config.c), then opens the kind
 * it names. AUTO tries the kernel kind and, when the device cannot be used,
 * falls back to the embedded kind with the failure as the reason; KERNEL
 * turns that failure into the call's error instead. Once open, the object is
 * immutable apart from its atomic reference count, hence thread-safe.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "accel/status.h"
#include "error.h"
#include "sched.h"

void accel_scheduler_init(accel_scheduler_t *s, accel_scheduler_kind_t kind,
			  const struct accel_scheduler_ops *ops)
{
	atomic_init(&s->refcount, 1);
	s->kind = kind;
	s->ops = ops;
	s->reason[0] = '\0';
}

static void set_reason(accel_scheduler_t *s, const char *fmt, ...)
	ACCEL_PRINTF(2, 3);

static void set_reason(accel_scheduler_t *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->reason, sizeof(s->reason), fmt, ap);
	va_end(ap);
}

static int open_embedded(const struct accel_sched_config *cfg,
			 accel_scheduler_t **out)
{
	char why[ACCEL_REASON_MAX];
	int err = accel_sched_embedded_open(out, why, sizeof(why));

	if (err)
		return accel_fail(-err, "accel_scheduler_open: %s", why);
	set_reason(*out, "chosen by %s", cfg->kind_origin);
	return 0;
}

static int open_kernel(const struct accel_sched_config *cfg,
		       accel_scheduler_t **out)
{
	char why[ACCEL_REASON_MAX];
	int err = accel_sched_kernel_open(cfg, out, why, sizeof(why));

	if (err)
		return accel_fail(-err,
			"accel_scheduler_open: the kernel scheduler was requested by %s, but %s",
			cfg->kind_origin, why);
	set_reason(*out, "chosen by %s; %s", cfg->kind_origin, why);
	return 0;
}

static int open_auto(const struct accel_sched_config *cfg,
		     accel_scheduler_t **out)
{
	char why[ACCEL_REASON_MAX], embedded_why[256];
	int err = accel_sched_kernel_open(cfg, out, why, sizeof(why));

	if (!err) {
		set_reason(*out, "%s", why);
		return 0;
	}
	err = accel_sched_embedded_open(out, embedded_why,
					sizeof(embedded_why));
	if (err)
		return accel_fail(-err,
			"accel_scheduler_open: %s, and the embedded scheduler failed too: %s",
			why, embedded_why);
	set_reason(*out, "%s: using the embedded scheduler", why);
	return 0;
}

ACCEL_EXPORT int accel_scheduler_open(const accel_scheduler_options_t *opts,
				      accel_scheduler_t **out)
{
	struct accel_sched_config cfg;
	int err;

	if (!out)
		return accel_fail(EINVAL,
			"accel_scheduler_open: out is NULL; pass the address of an accel_scheduler_t * to receive the scheduler");
	*out = NULL;
	err = accel_sched_config_resolve(opts, &cfg);
	if (err)
		return err;
	switch (cfg.kind) {
	case ACCEL_SCHEDULER_KERNEL:
		return open_kernel(&cfg, out);
	case ACCEL_SCHEDULER_EMBEDDED:
		return open_embedded(&cfg, out);
	default:
		return open_auto(&cfg, out);
	}
}

ACCEL_EXPORT void accel_scheduler_options_init(accel_scheduler_options_t *opts)
{
	if (!opts)
		return;
	memset(opts, 0, sizeof(*opts));
	opts->kind = ACCEL_SCHEDULER_AUTO;
	opts->device_path = NULL;
}

ACCEL_EXPORT void accel_scheduler_retain(accel_scheduler_t *s)
{
	if (s)
		atomic_fetch_add_explicit(&s->refcount, 1, memory_order_relaxed);
}

ACCEL_EXPORT void accel_scheduler_release(accel_scheduler_t *s)
{
	if (!s)
		return;
	if (atomic_fetch_sub_explicit(&s->refcount, 1,
				      memory_order_acq_rel) == 1)
		s->ops->destroy(s);
}

ACCEL_EXPORT accel_scheduler_kind_t
accel_scheduler_kind(const accel_scheduler_t *s)
{
	if (!s) {
		accel_fail(EINVAL, "accel_scheduler_kind: s is NULL; pass a scheduler from accel_scheduler_open()");
		return ACCEL_SCHEDULER_AUTO;
	}
	return s->kind;
}

ACCEL_EXPORT const char *accel_scheduler_kind_name(accel_scheduler_kind_t kind)
{
	switch (kind) {
	case ACCEL_SCHEDULER_AUTO:
		return "auto";
	case ACCEL_SCHEDULER_KERNEL:
		return "kernel";
	case ACCEL_SCHEDULER_EMBEDDED:
		return "embedded";
	}
	return "unknown";
}

ACCEL_EXPORT const char *accel_scheduler_reason(const accel_scheduler_t *s)
{
	if (!s) {
		accel_fail(EINVAL, "accel_scheduler_reason: s is NULL; pass a scheduler from accel_scheduler_open()");
		return "";
	}
	return s->reason;
}

ACCEL_EXPORT int accel_scheduler_query(const accel_scheduler_t *s,
				       accel_scheduler_info_t *info)
{
	if (!s)
		return accel_fail(EINVAL, "accel_scheduler_query: s is NULL; pass a scheduler from accel_scheduler_open()");
	if (!info)
		return accel_fail(EINVAL, "accel_scheduler_query: info is NULL; pass an accel_scheduler_info_t to fill");
	memset(info, 0, sizeof(*info));
	info->kind = s->kind;
	s->ops->query(s, info);
	return 0;
}

ACCEL_EXPORT const char *accel_scheduler_feature_name(uint64_t feature)
{
	if (feature == ACCEL_SCHEDULER_FEATURE_URING_CMD)
		return "uring_cmd";
	if (feature == ACCEL_SCHEDULER_FEATURE_URING_CANCEL)
		return "uring_cancel";
	if (feature == ACCEL_SCHEDULER_FEATURE_JOB_DEADLINE)
		return "job_deadline";
	return NULL;
}
