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
 * Sharing (kernel scheduler only): accel_semaphore_export_fd() and
 * accel_semaphore_import_fd() carry a semaphore to another process (send
 * the fd with SCM_RIGHTS; holding it is the permission);
 * accel_semaphore_export_sync_file() and accel_semaphore_import_sync_file()
 * trade points with any driver that speaks sync_file (DRM, Vulkan);
 * accel_semaphore_notify_fd() gives an fd to poll()/epoll for a point. The
 * embedded scheduler keeps semaphores in process memory, so these answer
 * -EOPNOTSUPP there, with a message that names the module and why this
 * process runs without it (accel_scheduler_reason()).
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
 *
 * So a submission waiting on a point keeps the semaphore alive, and
 * releasing the application's last reference does not fail that wait:
 * if nothing left can signal the point (no reference, no submission that
 * signals it), the submission never runs, and it holds its queue, device
 * and buffers until the process exits. Fail the semaphore first
 * (accel_semaphore_fail()) to end such waits. The module's raw ABI
 * differs here: its jobs do not hold the syncobj they wait on, so its
 * pending points fail with -ENOENT when its last holder goes.
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

/**
 * accel_semaphore_set_deadline() - someone needs @value of @semaphore
 * reached by @deadline_ns.
 * @semaphore:   the semaphore.
 * @value:       the point.
 * @deadline_ns: absolute CLOCK_MONOTONIC ns, not yet passed.
 *
 * The submission that made the semaphore's latest promise at or above
 * @value, if it is not released to its device yet, takes the deadline (the
 * earlier one, if it has one; see accel_submit_options_t) and passes it on
 * to the submissions it waits on, at most 16 along a chain. A hint, as
 * dma_fence_set_deadline() is: for a point already reached, not promised,
 * or promised by the host, it does nothing and returns 0; so on a module
 * before ABI 1.7.
 *
 * Return: 0; -EINVAL for a NULL @semaphore or a @deadline_ns <= 0; -ETIME
 * when @deadline_ns has passed; -ENOENT when the module no longer knows
 * the semaphore.
 */
int accel_semaphore_set_deadline(accel_semaphore_t *semaphore, uint64_t value,
				 int64_t deadline_ns);

/**
 * accel_semaphore_export_fd() - an fd that holds @semaphore, to share it.
 * @semaphore: the semaphore (kernel scheduler).
 * @fd:        receives a new O_CLOEXEC fd, the caller's to close; -1 first
 *             and on failure.
 *
 * Send the fd to another process over a unix socket (SCM_RIGHTS) and
 * import it there with accel_semaphore_import_fd(). Holding the fd is the
 * permission: there are no global names. The fd keeps the timeline alive
 * without the semaphore object; when its last holder goes (semaphores,
 * fds, submissions), points still pending fail with -ENOENT.
 *
 * Return: 0; -EINVAL (NULL argument); -EOPNOTSUPP on the embedded
 * scheduler; -EMFILE at the process's fd limit.
 */
int accel_semaphore_export_fd(accel_semaphore_t *semaphore, int *fd);

/**
 * accel_semaphore_import_fd() - a new semaphore for the timeline @fd holds.
 * @scheduler: the scheduler the new semaphore lives in (kernel).
 * @fd:        from accel_semaphore_export_fd(), in this or another
 *             process; it stays the caller's (close it when done).
 * @out:       receives the semaphore (one reference); NULL first and on
 *             failure.
 *
 * The new object shares the value, the failed state and every point with
 * the exporter's: a signal or failure through either is seen by both.
 * Failure messages stay in the process that wrote them; a failure that
 * came from outside this process's submissions says so.
 *
 * Return: 0; -EINVAL (NULL argument, or @fd is not an exported semaphore);
 * -EBADF (@fd negative or not open); -EOPNOTSUPP on the embedded scheduler;
 * -EMFILE past the module's per-file syncobj limit.
 */
int accel_semaphore_import_fd(accel_scheduler_t *scheduler, int fd,
			      accel_semaphore_t **out);

/**
 * accel_semaphore_export_sync_file() - point @value as a sync_file.
 * @semaphore: the semaphore (kernel scheduler).
 * @value:     the point; it need not be submitted yet.
 * @fd:        receives a new O_CLOEXEC sync_file fd, the caller's to close;
 *             -1 first and on failure.
 *
 * The sync_file's fence signals when @value is reached, or with the
 * semaphore's error when it fails (or -ENOENT when the timeline goes away
 * first). DRM and Vulkan drivers take it as an in-fence, poll() reports
 * it readable once signalled, SYNC_IOC_FILE_INFO reads its status. It
 * outlives the semaphore.
 *
 * Return: 0; -EINVAL (NULL argument); -EOPNOTSUPP on the embedded
 * scheduler; -EMFILE at the process's fd limit.
 */
int accel_semaphore_export_sync_file(accel_semaphore_t *semaphore,
				     uint64_t value, int *fd);

/**
 * accel_semaphore_import_sync_file() - make a fence reach point @value.
 * @semaphore: the semaphore (kernel scheduler).
 * @value:     the point: greater than the current value.
 * @fd:        a sync_file from any driver (or from
 *             accel_semaphore_export_sync_file()); it stays the caller's.
 *
 * @value becomes submitted now (ACCEL_SEMAPHORE_WAIT_SUBMITTED waits
 * return) and is reached when the fence signals; if the fence signals
 * with an error, the semaphore fails with that error, which propagates to
 * every submission waiting on it as any failure does.
 *
 * Return: 0; -EINVAL (NULL @semaphore, @value not greater than the
 * current value, @fd not a sync_file); -EBADF (@fd negative or not open);
 * the semaphore's error if it has failed; -EOPNOTSUPP on the embedded
 * scheduler; -ENOSPC past the module's limit on imports in flight. On
 * error nothing changes.
 */
int accel_semaphore_import_sync_file(accel_semaphore_t *semaphore,
				     uint64_t value, int fd);

/**
 * accel_semaphore_notify_fd() - an fd to poll()/epoll for point @value.
 * @semaphore: the semaphore (kernel scheduler).
 * @value:     the point.
 * @fd:        receives a new O_CLOEXEC fd, the caller's to close; -1 first
 *             and on failure.
 *
 * The fd polls readable (POLLIN) once @value is reached or the semaphore
 * fails; then accel_semaphore_query() or a wait with a past deadline says
 * which. It stays readable (level-triggered) until closed.
 *
 * The fd is the point's sync_file, as accel_semaphore_export_sync_file()
 * gives, rather than an eventfd that the module writes
 * (ACCEL_IOCTL_SYNCOBJ_EVENTFD), because a sync_file needs nothing from
 * the module once made: closing it is the whole cleanup, whereas a
 * registered eventfd stays registered (and counts against the module's
 * max_pending_waits) until its point comes or it is cancelled, even after
 * the application closed it; a sync_file does not depend on this
 * scheduler's file staying open, stays readable instead of being reset by
 * a read(), and also carries the status (SYNC_IOC_FILE_INFO) and works as
 * an in-fence for other drivers.
 *
 * Return: as accel_semaphore_export_sync_file().
 */
int accel_semaphore_notify_fd(accel_semaphore_t *semaphore, uint64_t value,
			      int *fd);

#ifdef __cplusplus
}
#endif

#endif /* ACCEL_SEMAPHORE_H */
