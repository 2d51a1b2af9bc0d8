/* SPDX-License-Identifier: MIT */
/**
 * DOC: accel/semaphore.h - timeline semaphores
 *
 * A semaphore holds a 64-bit value that only grows; a *point* is a value
 * on it, *reached* once the value is at least the point. It lives in a
 * scheduler: the kernel one backs it with a kernel timeline syncobj, the
 * embedded one implements the same semantics in process (futex waits).
 *
 * - accel_semaphore_signal(v) from the host needs v greater than the
 *   current value, else -EINVAL and nothing changes; it wakes every waiter
 *   whose point is now reached.
 * - accel_semaphore_fail(error) puts it in a failed state for good; the
 *   first failure wins. Every wait on it, present and future, returns that
 *   error unchanged, and a submission that waits on it is not run: its own
 *   signal semaphores fail with the same error.
 * - accel_semaphore_list_wait() waits for ALL or ANY of a list of points,
 *   until an absolute CLOCK_MONOTONIC deadline in nanoseconds (0: poll;
 *   -ETIME once passed). Waiting on a point that nothing has signalled or
 *   promised yet is legal: it simply waits. An empty list succeeds at once;
 *   points already reached succeed even with a deadline in the past.
 *   ACCEL_SEMAPHORE_WAIT_SUBMITTED waits instead until each point is *submitted*:
 *   promised by a submission's signal list (or reached).
 *
 * When a semaphore fails, it keeps a message saying why (which submission,
 * which command); accel_semaphore_failure_message() returns it, and waits
 * that fail put it into the thread's accel_error_message().
 *
 * Thread-safety: thread-safe. Any thread may signal, fail, query or wait
 * on any semaphore at any time.
 */
#ifndef ACCEL_SEMAPHORE_H
#define ACCEL_SEMAPHORE_H

#include <stdint.h>

#include <accel/scheduler.h>

#ifdef __cplusplus
extern "C" {
#endif

/** typedef accel_semaphore_t - a timeline semaphore (opaque, refcounted). */
typedef struct accel_semaphore accel_semaphore_t;

/** ACCEL_SEMAPHORE_WAIT_ANY - wait for any one entry (the default, 0). */
#define ACCEL_SEMAPHORE_WAIT_ANY 0u
/** ACCEL_SEMAPHORE_WAIT_ALL - wait for every entry. */
#define ACCEL_SEMAPHORE_WAIT_ALL (1u << 0)
/** ACCEL_SEMAPHORE_WAIT_SUBMITTED - wait for the points to be submitted. */
#define ACCEL_SEMAPHORE_WAIT_SUBMITTED (1u << 1)

/** ACCEL_SEMAPHORE_LIST_MAX - the most entries of one list (as the kernel). */
#define ACCEL_SEMAPHORE_LIST_MAX 1024u
/** ACCEL_DEADLINE_INFINITE - a deadline that never passes. */
#define ACCEL_DEADLINE_INFINITE INT64_MAX
/** ACCEL_SEMAPHORE_MAX_ERROR - failures are errnos in [-4095, -1]. */
#define ACCEL_SEMAPHORE_MAX_ERROR 4095

/**
 * struct accel_semaphore_list - points on semaphores.
 * @count:      entries (0 .. ACCEL_SEMAPHORE_LIST_MAX).
 * @semaphores: @count semaphores (of one scheduler); may repeat.
 * @values:     @count points.
 */
typedef struct accel_semaphore_list {
	uint32_t count;
	accel_semaphore_t *const *semaphores;
	const uint64_t *values;
} accel_semaphore_list_t;

/**
 * accel_deadline_after() - the absolute deadline @ns nanoseconds from now
 * (CLOCK_MONOTONIC), saturating at ACCEL_DEADLINE_INFINITE.
 */
int64_t accel_deadline_after(uint64_t ns);

/**
 * accel_semaphore_create() - a new semaphore of @scheduler at @initial.
 * @scheduler: retained by the semaphore.
 * @out:       receives it (one reference); NULL first and on failure.
 *
 * Return: 0, -EINVAL (NULL argument), -ENOMEM, or for the kernel scheduler
 * the errno of ACCEL_IOCTL_SYNCOBJ_CREATE (-EMFILE past its limit).
 */
int accel_semaphore_create(accel_scheduler_t *scheduler, uint64_t initial,
			   accel_semaphore_t **out);

/** accel_semaphore_retain() - one more reference (NULL: no-op). */
void accel_semaphore_retain(accel_semaphore_t *semaphore);
/**
 * accel_semaphore_release() - drop a reference (NULL: no-op). Submissions
 * and waits in progress hold their own references.
 */
void accel_semaphore_release(accel_semaphore_t *semaphore);

/**
 * accel_semaphore_query() - the current value and failure state.
 * @value: receives the value (the highest point reached).
 * @error: receives 0, or the negative errno it failed with. Either output
 *         may be NULL.
 *
 * Return: 0, or -EINVAL for a NULL @semaphore.
 */
int accel_semaphore_query(accel_semaphore_t *semaphore, uint64_t *value,
			  int *error);

/**
 * accel_semaphore_failure_message() - why it failed: a string owned by the
 * semaphore, immutable once set, "" while it has not failed.
 */
const char *accel_semaphore_failure_message(accel_semaphore_t *semaphore);

/**
 * accel_semaphore_signal() - set the value to @value from the host.
 *
 * Return: 0; -EINVAL if @value is not greater than the current value
 * (nothing changes); the failure's error if the semaphore has failed
 * (nothing changes); -EINVAL for NULL.
 */
int accel_semaphore_signal(accel_semaphore_t *semaphore, uint64_t value);

/**
 * accel_semaphore_fail() - fail the semaphore with @error.
 * @error: a negative errno in [-ACCEL_SEMAPHORE_MAX_ERROR, -1].
 *
 * The first failure wins: failing a failed semaphore returns 0 and changes
 * nothing. Wakes every waiter with @error.
 *
 * Return: 0, or -EINVAL (NULL, @error out of range).
 */
int accel_semaphore_fail(accel_semaphore_t *semaphore, int error);

/**
 * accel_semaphore_wait() - wait until @value is reached (or submitted with
 * ACCEL_SEMAPHORE_WAIT_SUBMITTED in @flags); a list wait of one entry.
 */
int accel_semaphore_wait(accel_semaphore_t *semaphore, uint64_t value,
			 uint32_t flags, int64_t deadline_ns);

/**
 * accel_semaphore_list_wait() - wait for ALL or ANY points of @list.
 * @list:        the points; NULL or count 0 succeeds at once.
 * @flags:       ACCEL_SEMAPHORE_WAIT_ALL (else ANY), ACCEL_SEMAPHORE_WAIT_SUBMITTED.
 * @deadline_ns: absolute CLOCK_MONOTONIC ns; <= 0 polls;
 *               ACCEL_DEADLINE_INFINITE never expires.
 * @index:       may be NULL; with ANY receives the lowest index reached;
 *               on a failure, the index of the failed entry.
 *
 * Entries are looked at in index order: the first one whose semaphore has
 * failed, or (ANY) is reached, decides.
 *
 * Return: 0; -ETIME when the deadline passed first; the error of a failed
 * semaphore (the message includes its failure message); -EINVAL (unknown
 * flags, a NULL array or semaphore, more than ACCEL_SEMAPHORE_LIST_MAX
 * entries); -EXDEV (semaphores of different schedulers).
 */
int accel_semaphore_list_wait(const accel_semaphore_list_t *list,
			      uint32_t flags, int64_t deadline_ns,
			      uint32_t *index);

#ifdef __cplusplus
}
#endif

#endif /* ACCEL_SEMAPHORE_H */
