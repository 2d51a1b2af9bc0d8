// SPDX-License-Identifier: MIT
/*
 * Scheduler selection: what accel_scheduler_open() is asked to open.
 *
 * The caller's options come first, then the environment overrides them, so a
 * user can switch a program to another scheduler or device without
 * rebuilding it:
 *
 *   ACCEL_SCHEDULER=auto|kernel|embedded   overrides options->kind
 *   ACCEL_DEVICE=<path>                    overrides options->device_path
 *
 * An empty variable counts as unset. Anything else that is not valid is
 * rejected with -EINVAL and a message naming the variable and the value;
 * bad options are rejected even when the environment would override them.
 * secure_getenv() keeps set-user-ID programs from obeying the variables.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "sched.h"

static const struct {
	const char *env_value;
	const char *macro;
	accel_scheduler_kind_t kind;
} kinds[] = {
	{ "auto", "ACCEL_SCHEDULER_AUTO", ACCEL_SCHEDULER_AUTO },
	{ "kernel", "ACCEL_SCHEDULER_KERNEL", ACCEL_SCHEDULER_KERNEL },
	{ "embedded", "ACCEL_SCHEDULER_EMBEDDED", ACCEL_SCHEDULER_EMBEDDED },
};

static int kind_index(accel_scheduler_kind_t kind)
{
	for (size_t i = 0; i < ACCEL_ARRAY_SIZE(kinds); i++)
		if (kinds[i].kind == kind)
			return (int)i;
	return -1;
}

static int config_set_path(struct accel_sched_config *cfg, const char *path,
			   const char *origin)
{
	size_t len = strlen(path);

	if (len == 0)
		return accel_fail(EINVAL,
			"accel_scheduler_open: %s is an empty string; give the path of the accelsched device node, or NULL for %s",
			origin, ACCEL_SCHEDULER_DEFAULT_DEVICE);
	if (len >= sizeof(cfg->device_path))
		return accel_fail(ENAMETOOLONG,
			"accel_scheduler_open: %s is %zu bytes long, but a path must be shorter than PATH_MAX (%zu bytes); give a shorter path",
			origin, len, sizeof(cfg->device_path));
	memcpy(cfg->device_path, path, len + 1);
	accel_strfmt(cfg->path_origin, sizeof(cfg->path_origin), "%s", origin);
	return 0;
}

static int config_from_options(const accel_scheduler_options_t *opts,
			       struct accel_sched_config *cfg)
{
	int i = kind_index(opts->kind);

	if (i < 0)
		return accel_fail(EINVAL,
			"accel_scheduler_open: options->kind is %d, which is not a scheduler kind; use ACCEL_SCHEDULER_AUTO (0), ACCEL_SCHEDULER_KERNEL (1) or ACCEL_SCHEDULER_EMBEDDED (2)",
			(int)opts->kind);
	cfg->kind = opts->kind;
	if (opts->kind != ACCEL_SCHEDULER_AUTO)
		accel_strfmt(cfg->kind_origin, sizeof(cfg->kind_origin),
			     "options->kind = %s", kinds[i].macro);
	if (!opts->device_path)
		return 0;
	return config_set_path(cfg, opts->device_path, "options->device_path");
}

static int config_kind_from_env(struct accel_sched_config *cfg)
{
	const char *value = secure_getenv(ACCEL_SCHEDULER_ENV);

	if (!value || !*value)
		return 0;
	for (size_t i = 0; i < ACCEL_ARRAY_SIZE(kinds); i++) {
		if (strcmp(value, kinds[i].env_value) == 0) {
			cfg->kind = kinds[i].kind;
			accel_strfmt(cfg->kind_origin, sizeof(cfg->kind_origin),
				     ACCEL_SCHEDULER_ENV "=%s", value);
			return 0;
		}
	}
	return accel_fail(EINVAL,
		"accel_scheduler_open: " ACCEL_SCHEDULER_ENV "=\"%.128s\" is not a scheduler kind; accepted values are auto, kernel and embedded (or unset " ACCEL_SCHEDULER_ENV ")",
		value);
}

static int config_path_from_env(struct accel_sched_config *cfg)
{
	const char *value = secure_getenv(ACCEL_DEVICE_ENV);

	if (!value || !*value)
		return 0;
	return config_set_path(cfg, value, ACCEL_DEVICE_ENV);
}

int accel_sched_config_resolve(const accel_scheduler_options_t *opts,
			       struct accel_sched_config *cfg)
{
	int err;

	memset(cfg, 0, sizeof(*cfg));
	cfg->kind = ACCEL_SCHEDULER_AUTO;
	accel_strfmt(cfg->kind_origin, sizeof(cfg->kind_origin), "default");
	accel_strfmt(cfg->device_path, sizeof(cfg->device_path), "%s",
		     ACCEL_SCHEDULER_DEFAULT_DEVICE);
	if (opts) {
		err = config_from_options(opts, cfg);
		if (err)
			return err;
	}
	err = config_kind_from_env(cfg);
	if (err)
		return err;
	return config_path_from_env(cfg);
}
