/* SPDX-License-Identifier: MIT */
/**
 * DOC: accel/scheduler.h - the scheduler every submission goes through
 *
 * An accel_scheduler_t is a process's connection to the scheduler that
 * orders its work: the **kernel** scheduler of the accelsched module, reached
 * through the character device ``/dev/accelsched`` (io_uring uring_cmds on
 * the device fd as the fast path, plain ioctls for everything as well), or
 * the **embedded** scheduler, an in-process implementation of the same
 * semantics for machines without the module.
 *
 * Which one accel_scheduler_open() picks:
 *
 * - ``options->kind`` (default ACCEL_SCHEDULER_AUTO) and
 *   ``options->device_path`` (default ``/dev/accelsched``) say what the
 *   program wants;
 * - the environment overrides both, so a user can choose without rebuilding:
 *   ``ACCEL_SCHEDULER=auto|kernel|embedded`` and ``ACCEL_DEVICE=<path>``.
 *   An empty variable counts as unset. The variables are ignored in
 *   set-user-ID and set-group-ID programs (secure_getenv()).
 * - AUTO tries the device and uses the kernel scheduler when it answers with
 *   the ABI major this library speaks; otherwise it falls back to the
 *   embedded scheduler. KERNEL fails instead of falling back. EMBEDDED never
 *   touches the device.
 *
 * Either way accel_scheduler_reason() says in one sentence why this kind was
 * chosen (and, for a fallback, what was wrong with the device), and
 * accel_scheduler_query() returns what was found.
 *
 * Thread-safety: an accel_scheduler_t is thread-safe. After
 * accel_scheduler_open() returns it is immutable; retain and release use an
 * atomic reference count, so any thread may use, retain or release it.
 */
#ifndef ACCEL_SCHEDULER_H
#define ACCEL_SCHEDULER_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** ACCEL_SCHEDULER_ENV - variable that overrides accel_scheduler_options.kind. */
#define ACCEL_SCHEDULER_ENV "ACCEL_SCHEDULER"
/**
 * ACCEL_URING_ENV - "0" keeps the kernel scheduler off io_uring: every
 * command then goes through ioctls (the reason says so).
 */
#define ACCEL_URING_ENV "ACCEL_URING"
/**
 * ACCEL_URING_SQPOLL_ENV - milliseconds (1..10000) that a kernel thread
 * keeps polling the kernel scheduler's ring after its last submission
 * (IORING_SETUP_SQPOLL): a submission is then a store to the ring, with no
 * system call, and the module takes it on that thread, within the CPU time
 * it polls for. Unset or "0": no polling. A submission's signal points are
 * then promised once the thread has taken it, shortly after
 * accel_queue_execute() returns; this process's own semaphore operations
 * (signal, fail, wait, export) wait for that first, so it sees no
 * difference. Documentation/libaccel.rst weighs it.
 */
#define ACCEL_URING_SQPOLL_ENV "ACCEL_URING_SQPOLL"
/**
 * ACCEL_KERNEL_EVENTS_ENV - "0" makes the kernel scheduler learn releases
 * as earlier modules told them (the SUBMIT's completion on io_uring, a
 * watch of each wait on ioctls), not as events fetched by the executor's
 * COMPLETE (module ABI 1.8). Slower; for comparison and tests.
 */
#define ACCEL_KERNEL_EVENTS_ENV "ACCEL_KERNEL_EVENTS"
/**
 * ACCEL_KERNEL_ANSWER_ENV - "1" makes the kernel scheduler (module ABI 1.9,
 * with events, without ACCEL_URING_SQPOLL) submit a job that is alone on
 * its queue by an ioctl that answers its release, and hand it to its
 * executor from the submitting thread, instead of leaving the release to
 * an event that the reaper thread fetches and hands on. A job submitted
 * and waited for then comes back sooner (one thread woken, not two); the
 * submitting thread pays that wake and a second system call. Off by
 * default: Documentation/libaccel.rst weighs it.
 */
#define ACCEL_KERNEL_ANSWER_ENV "ACCEL_KERNEL_ANSWER"
/** ACCEL_DEVICE_ENV - variable that overrides accel_scheduler_options.device_path. */
#define ACCEL_DEVICE_ENV "ACCEL_DEVICE"
/** ACCEL_SCHEDULER_DEFAULT_DEVICE - the device node the module creates. */
#define ACCEL_SCHEDULER_DEFAULT_DEVICE "/dev/accelsched"

/*
 * Feature bits of accel_scheduler_info.features, as the module reports them
 * (the values of the ABI's ACCEL_FEATURE_* bits).
 */
/** ACCEL_SCHEDULER_FEATURE_URING_CMD - io_uring uring_cmds work on the device. */
#define ACCEL_SCHEDULER_FEATURE_URING_CMD (UINT64_C(1) << 0)
/** ACCEL_SCHEDULER_FEATURE_URING_CANCEL - pending uring_cmds are cancelable. */
#define ACCEL_SCHEDULER_FEATURE_URING_CANCEL (UINT64_C(1) << 1)
/**
 * ACCEL_SCHEDULER_FEATURE_JOB_DEADLINE - the module takes submissions'
 * deadlines (ABI 1.7; accel_submit_options_t); without it the kernel
 * scheduler submits without them. The embedded scheduler always honours
 * them.
 */
#define ACCEL_SCHEDULER_FEATURE_JOB_DEADLINE (UINT64_C(1) << 8)

/** typedef accel_scheduler_t - an open scheduler (opaque, reference counted). */
typedef struct accel_scheduler accel_scheduler_t;

/**
 * enum accel_scheduler_kind - which scheduler.
 * @ACCEL_SCHEDULER_AUTO:     (options only) the kernel one if the device
 *                            answers, else the embedded one. The default.
 * @ACCEL_SCHEDULER_KERNEL:   the accelsched module, through its device.
 * @ACCEL_SCHEDULER_EMBEDDED: the in-process scheduler.
 */
typedef enum accel_scheduler_kind {
	ACCEL_SCHEDULER_AUTO = 0,
	ACCEL_SCHEDULER_KERNEL = 1,
	ACCEL_SCHEDULER_EMBEDDED = 2,
} accel_scheduler_kind_t;

/**
 * struct accel_scheduler_options - what accel_scheduler_open() should do.
 * @kind:        which scheduler; ACCEL_SCHEDULER_AUTO by default. Overridden
 *               by the ACCEL_SCHEDULER environment variable.
 * @device_path: the device node to try; NULL means
 *               ACCEL_SCHEDULER_DEFAULT_DEVICE. Overridden by ACCEL_DEVICE.
 *               Only read during accel_scheduler_open().
 *
 * Fill it with accel_scheduler_options_init() (or zero it, which means the
 * same), then set what you need.
 */
typedef struct accel_scheduler_options {
	accel_scheduler_kind_t kind;
	const char *device_path;
} accel_scheduler_options_t;

/**
 * struct accel_scheduler_info - what accel_scheduler_query() found.
 * @kind:           ACCEL_SCHEDULER_KERNEL or ACCEL_SCHEDULER_EMBEDDED.
 * @abi_major:      the module's ABI major; 0 for the embedded scheduler.
 * @abi_minor:      the module's ABI minor; 0 for the embedded scheduler.
 * @features:       ACCEL_SCHEDULER_FEATURE_* bits the module announced
 *                  (unknown bits are passed through); 0 for embedded.
 * @client_id:      the module's id for this open file, the one that fdinfo,
 *                  debugfs and traces show; 0 for embedded.
 * @uring:          true when the io_uring fast path works: the ring was set
 *                  up and a uring_cmd NOP made the round trip. False for
 *                  embedded, and for kernel when it did not (the reason says
 *                  why); everything then goes through ioctls.
 * @module_version: the module's version ("0.1.0"); "" for embedded.
 * @kernel_release: the release of the kernel the module runs on; "" for
 *                  embedded.
 */
typedef struct accel_scheduler_info {
	accel_scheduler_kind_t kind;
	uint32_t abi_major;
	uint32_t abi_minor;
	uint64_t features;
	uint64_t client_id;
	bool uring;
	char module_version[32];
	char kernel_release[64];
} accel_scheduler_info_t;

/**
 * accel_scheduler_options_init() - fill @opts with the defaults.
 * @opts: the options to fill; nothing happens if NULL.
 *
 * Sets kind to ACCEL_SCHEDULER_AUTO and device_path to NULL (the default
 * device).
 *
 * Thread-safety: thread-safe (touches only @opts).
 */
void accel_scheduler_options_init(accel_scheduler_options_t *opts);

/**
 * accel_scheduler_open() - connect to a scheduler.
 * @opts: what to open, or NULL for the defaults. Only read during the call.
 * @out:  receives the scheduler, with one reference owned by the caller;
 *        set to NULL first, and left NULL on failure.
 *
 * Resolves the kind and the device path from @opts and the environment (see
 * the DOC section above), then opens:
 *
 * - kernel: opens the device read-write, asks ACCEL_IOCTL_INFO what it is,
 *   refuses a module of another ABI major, then sets up an 8-entry io_uring
 *   and sends one uring_cmd NOP through it. If io_uring is unusable (not
 *   built in, disabled by sysctl or seccomp, the RLIMIT_MEMLOCK limit, a
 *   module without uring_cmd) the kernel scheduler is still used, with
 *   accel_scheduler_info.uring false and the cause in the reason.
 * - auto: the same, but any failure of the device falls back to the
 *   embedded scheduler, and the reason says what failed.
 * - embedded: nothing to probe.
 *
 * Release the scheduler with accel_scheduler_release().
 *
 * Thread-safety: thread-safe.
 *
 * Return: 0 on success, or a negative errno with a message for
 * accel_error_message():
 *
 * - -EINVAL: @out is NULL; @opts->kind is not a kind; @opts->device_path is
 *   ""; ACCEL_SCHEDULER holds a value other than auto, kernel or embedded.
 * - -ENAMETOOLONG: the device path is PATH_MAX bytes or longer.
 * - -ENOMEM: out of memory.
 *
 * and, when the kernel scheduler was asked for explicitly and the device
 * cannot be used, the errno of what failed: -ENOENT (no such node: module not
 * loaded), -EACCES (no permission: the udev rule / 'render' group), -ENXIO or
 * -ENODEV (a node with no driver behind it), -EISDIR (a directory),
 * -ENOTTY (not a character device, or a device that is not accelsched),
 * -EPROTO (a module of another ABI major), or any other errno of open(2) or
 * ioctl(2).
 */
int accel_scheduler_open(const accel_scheduler_options_t *opts,
			 accel_scheduler_t **out);

/**
 * accel_scheduler_retain() - take one more reference to @s.
 * @s: the scheduler; nothing happens if NULL.
 *
 * Each retain must be matched by one accel_scheduler_release().
 *
 * Thread-safety: thread-safe (atomic).
 */
void accel_scheduler_retain(accel_scheduler_t *s);

/**
 * accel_scheduler_release() - drop one reference to @s.
 * @s: the scheduler; nothing happens if NULL.
 *
 * Dropping the last reference closes the device (and its io_uring) and frees
 * @s; the caller must not use @s afterwards.
 *
 * Thread-safety: thread-safe (atomic); the last release must not race with
 * other uses of @s, as with any reference count.
 */
void accel_scheduler_release(accel_scheduler_t *s);

/**
 * accel_scheduler_kind() - which scheduler @s is.
 * @s: the scheduler.
 *
 * Return: ACCEL_SCHEDULER_KERNEL or ACCEL_SCHEDULER_EMBEDDED; never
 * ACCEL_SCHEDULER_AUTO, except for a NULL @s (which also sets the message).
 *
 * Thread-safety: thread-safe.
 */
accel_scheduler_kind_t accel_scheduler_kind(const accel_scheduler_t *s);

/**
 * accel_scheduler_kind_name() - the name of a kind.
 * @kind: any value.
 *
 * Return: a static string: "auto", "kernel", "embedded" (the values
 * ACCEL_SCHEDULER accepts), or "unknown" for anything else. Never NULL.
 *
 * Thread-safety: thread-safe.
 */
const char *accel_scheduler_kind_name(accel_scheduler_kind_t kind);

/**
 * accel_scheduler_reason() - why @s is the kind it is, in one sentence.
 * @s: the scheduler.
 *
 * For example "/dev/accelsched answered: module 0.1.0, ABI 1.0, io_uring ok",
 * "/dev/accelsched does not exist (...): using the embedded scheduler" or
 * "chosen by ACCEL_SCHEDULER=embedded".
 *
 * Return: a NUL-terminated string owned by @s, valid while @s is; "" for a
 * NULL @s (which also sets the message).
 *
 * Thread-safety: thread-safe.
 */
const char *accel_scheduler_reason(const accel_scheduler_t *s);

/**
 * accel_scheduler_query() - describe @s.
 * @s:    the scheduler.
 * @info: filled with what @s is (see struct accel_scheduler_info); fields
 *        that do not apply to the kind are zero or "".
 *
 * The data comes from accel_scheduler_open(): no system call is made.
 *
 * Thread-safety: thread-safe.
 *
 * Return: 0, or -EINVAL if @s or @info is NULL (@info is then untouched).
 */
int accel_scheduler_query(const accel_scheduler_t *s,
			  accel_scheduler_info_t *info);

/**
 * accel_scheduler_feature_name() - the name of one feature bit.
 * @feature: exactly one ACCEL_SCHEDULER_FEATURE_* bit.
 *
 * Return: a static string ("uring_cmd", "uring_cancel"), or NULL if
 * @feature is not exactly one known bit.
 *
 * Thread-safety: thread-safe.
 */
const char *accel_scheduler_feature_name(uint64_t feature);

#ifdef __cplusplus
}
#endif

#endif /* ACCEL_SCHEDULER_H */
