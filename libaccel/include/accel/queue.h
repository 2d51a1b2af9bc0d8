/* SPDX-License-Identifier: MIT */
/**
 * DOC: accel/queue.h - queues and submissions
 *
 * A queue submits work to its device through the device's scheduler.
 * accel_queue_execute() submits a recorded command buffer with a binding
 * table, a list of points to wait for and a list of points to signal:
 *
 * - the submission runs once every wait point is reached (wait-before-signal
 *   is legal: the points may be signalled later, by the host or by other
 *   submissions), then signals every signal point;
 * - only points order submissions: a submission waiting on an unreached
 *   point never holds back a later independent one on the same queue;
 *   among submissions that are ready, submission order is kept;
 * - the binding table is captured: its buffers are retained until the
 *   submission's signals; the caller may change or free the table (and
 *   release the buffers and the command buffer) as soon as the call
 *   returns;
 * - one REUSABLE command buffer may be in several submissions at once,
 *   each with its own table;
 * - if a wait point's semaphore fails, the submission is not run and its
 *   signal semaphores fail with the same error; if a command fails while
 *   running, the rest is skipped and the signal semaphores fail with its
 *   error and a message "submission #N on <queue>: command K (<kind>)
 *   failed: ..." (accel_semaphore_failure_message());
 * - a submission that signals a point not above the semaphore's value when
 *   it completes fails that semaphore with -EINVAL (a timeline never moves
 *   back, and the error is not dropped).
 *
 * Thread-safety: a queue is thread-safe: any number of threads may submit
 * to it at once.
 */
#ifndef ACCEL_QUEUE_H
#define ACCEL_QUEUE_H

#include <stdint.h>

#include <accel/command_buffer.h>
#include <accel/semaphore.h>

#ifdef __cplusplus
extern "C" {
#endif

/** typedef accel_queue_t - a queue (opaque, reference counted). */
typedef struct accel_queue accel_queue_t;

/**
 * accel_queue_create() - a queue on @device.
 * @flags: must be 0.
 * @out:   receives it (one reference); NULL first and on failure. The
 *         queue holds a reference to @device, and each submission one to
 *         the queue until it completes.
 *
 * Return: 0, -EINVAL (NULL, flags), -ENOMEM, -EAGAIN (no thread).
 */
int accel_queue_create(accel_device_t *device, uint32_t flags,
		       accel_queue_t **out);

/** accel_queue_retain() - one more reference (NULL: no-op). */
void accel_queue_retain(accel_queue_t *queue);
/** accel_queue_release() - drop a reference (NULL: no-op). */
void accel_queue_release(accel_queue_t *queue);

/**
 * accel_queue_execute() - submit @cb with @table after @waits, then @signals.
 * @waits:   points to wait for; NULL means none.
 * @signals: points to signal; NULL means none. Each becomes *submitted* at
 *           once (ACCEL_SEMAPHORE_WAIT_SUBMITTED waiters wake).
 * @cb:      an ended command buffer of the queue's device; NULL makes this
 *           a barrier (accel_queue_barrier()).
 * @table:   the binding table; NULL means none. Validated against what @cb
 *           recorded, in O(slots).
 * @flags:   must be 0.
 *
 * Return: 0 when submitted (how it ends is told by the signal semaphores),
 * or, with nothing submitted and nothing retained:
 *
 * - -EINVAL: NULL arrays, unknown flags, more than ACCEL_SEMAPHORE_LIST_MAX
 *   entries, a table entry with a NULL buffer, or without a usage bit, or
 *   misaligned, for a slot @cb uses (the message names the slot);
 * - -ERANGE: the table has fewer entries than the highest slot used + 1, or
 *   a slot's range is outside its buffer or shorter than @cb needs;
 * - -EBADFD: @cb is not ended, or is ONE_SHOT and was submitted already;
 * - -EXDEV: @cb, a buffer or a semaphore belongs to another device or
 *   scheduler;
 * - -EOPNOTSUPP: a kernel-scheduler limitation (see the message);
 * - -ENOMEM.
 */
int accel_queue_execute(accel_queue_t *queue,
			const accel_semaphore_list_t *waits,
			const accel_semaphore_list_t *signals,
			accel_command_buffer_t *cb,
			const accel_binding_table_t *table, uint32_t flags);

/**
 * accel_queue_barrier() - signal @signals once @waits are reached, running
 * nothing: accel_queue_execute() with no command buffer.
 */
int accel_queue_barrier(accel_queue_t *queue,
			const accel_semaphore_list_t *waits,
			const accel_semaphore_list_t *signals, uint32_t flags);

#ifdef __cplusplus
}
#endif

#endif /* ACCEL_QUEUE_H */
