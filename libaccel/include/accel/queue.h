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
 * accel_queue_create() - a queue on @device: priority NORMAL, the default
 * weight, any affinity (accel_queue_create_with_options() with NULL).
 * @flags: must be 0.
 * @out:   receives it (one reference); NULL first and on failure. The
 *         queue holds a reference to @device, and each submission one to
 *         the queue until it completes.
 *
 * Return: 0, -EINVAL (NULL, flags), -ENOMEM, -EAGAIN (no thread).
 */
int accel_queue_create(accel_device_t *device, uint32_t flags,
		       accel_queue_t **out);

/**
 * enum accel_queue_priority - a queue's priority class.
 * @ACCEL_QUEUE_PRIORITY_NORMAL: the default (0, so zeroed options take it).
 * @ACCEL_QUEUE_PRIORITY_HIGH:   released before any NORMAL or LOW job that is
 *                               runnable on the same engine. The kernel
 *                               scheduler may require CAP_SYS_NICE for it.
 * @ACCEL_QUEUE_PRIORITY_LOW:    released only when no HIGH or NORMAL job is
 *                               runnable on the same engine.
 *
 * Between classes the priority is strict; within a class, queues share the
 * engine by weight (see accel_queue_options_t).
 */
typedef enum accel_queue_priority {
	ACCEL_QUEUE_PRIORITY_NORMAL = 0,
	ACCEL_QUEUE_PRIORITY_HIGH = 1,
	ACCEL_QUEUE_PRIORITY_LOW = 2,
} accel_queue_priority_t;

/* The weights a queue may have; 0 in the options takes the default. */
#define ACCEL_QUEUE_WEIGHT_MIN 1
#define ACCEL_QUEUE_WEIGHT_MAX 10000
#define ACCEL_QUEUE_WEIGHT_DEFAULT 1

/* An affinity that lets the queue use any of the device's queues. */
#define ACCEL_QUEUE_AFFINITY_ANY UINT64_MAX

/**
 * struct accel_queue_options - how accel_queue_create_with_options() should
 * make a queue. Versioned by its size, so that it can grow: set @size to
 * sizeof(accel_queue_options_t) (ACCEL_QUEUE_OPTIONS_INIT does), zero what
 * you do not set; a later, larger struct is accepted by this library when
 * the fields it does not know are zero.
 * @size:     sizeof(accel_queue_options_t) as the caller compiled it; at
 *            least ACCEL_QUEUE_OPTIONS_SIZE_V1, at most ACCEL_OPTIONS_SIZE_MAX.
 * @flags:    must be 0 (none are defined yet).
 * @priority: an accel_queue_priority_t; 0 is NORMAL.
 * @weight:   the queue's share of its engine within its priority class,
 *            ACCEL_QUEUE_WEIGHT_MIN..ACCEL_QUEUE_WEIGHT_MAX; 0 takes
 *            ACCEL_QUEUE_WEIGHT_DEFAULT. A queue of weight 3 gets three
 *            times the device time of a queue of weight 1 while both have
 *            runnable work.
 * @affinity: which of the device's hardware queues (streams) the queue may
 *            use, one bit each (IREE's queue affinity); 0 or
 *            ACCEL_QUEUE_AFFINITY_ANY: any. Every backend exposes one
 *            hardware queue today (bit 0), so a mask must include bit 0.
 */
typedef struct accel_queue_options {
	uint32_t size;
	uint32_t flags;
	uint32_t priority;
	uint32_t weight;
	uint64_t affinity;
} accel_queue_options_t;

/* The size of the first version of accel_queue_options_t. */
#define ACCEL_QUEUE_OPTIONS_SIZE_V1 24

/*
 * The most any version of an options struct may be (accel_queue_options_t,
 * accel_submit_options_t): a larger @size is -E2BIG, as the kernel does
 * for its versioned structs. It bounds what the library reads past the
 * fields it knows, checking that they are zero.
 */
#define ACCEL_OPTIONS_SIZE_MAX 4096

/* Initializer with the defaults: NORMAL, the default weight, any affinity. */
#define ACCEL_QUEUE_OPTIONS_INIT                                             \
	{ sizeof(accel_queue_options_t), 0, ACCEL_QUEUE_PRIORITY_NORMAL, 0, \
	  ACCEL_QUEUE_AFFINITY_ANY }

/**
 * accel_queue_create_with_options() - a queue on @device with a priority
 * class, a weight and an affinity.
 * @options: what the queue should be; NULL means ACCEL_QUEUE_OPTIONS_INIT.
 *           Only read during the call.
 * @out:     receives it (one reference); NULL first and on failure.
 *
 * Both schedulers arbitrate each engine (a device) the same way: strict
 * priority between classes, weighted fair share of the device time within
 * a class, only sync points ordering jobs (see Documentation/libaccel.rst).
 *
 * Return: 0, or with nothing created:
 *
 * - -EINVAL: NULL @device or @out, or an invalid option; the message names
 *   the field, its value and the range it must be in;
 * - -E2BIG: @options->size above ACCEL_OPTIONS_SIZE_MAX;
 * - -EACCES: the kernel scheduler refused ACCEL_QUEUE_PRIORITY_HIGH to this
 *   process (it lacks CAP_SYS_NICE; the message says so; NORMAL works);
 * - -ENOMEM, -EAGAIN (no thread), or the module's errors (-EMFILE: its
 *   per-file queue limit).
 */
int accel_queue_create_with_options(accel_device_t *device,
				    const accel_queue_options_t *options,
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
 * - -E2BIG: on the kernel scheduler, more than ACCEL_JOB_MAX_POINTS
 *   waits, or signals (a deadline counted), than one job takes;
 * - -ENOSPC: on the kernel scheduler's ioctl path, the module's job limit
 *   (max_jobs); on its io_uring path the same refusal comes after the call
 *   returns 0, as the failure of the submission's signals;
 * - -EOPNOTSUPP: a kernel-scheduler limitation (see the message);
 * - -ENOMEM.
 */
int accel_queue_execute(accel_queue_t *queue,
			const accel_semaphore_list_t *waits,
			const accel_semaphore_list_t *signals,
			accel_command_buffer_t *cb,
			const accel_binding_table_t *table, uint32_t flags);

/** ACCEL_QUEUE_BATCH_MAX - the most command buffers one batch carries. */
#define ACCEL_QUEUE_BATCH_MAX 4096u

/**
 * accel_queue_execute_batch() - submit @count command buffers, each with
 * its own binding table, between one wait list and one signal list.
 * @waits:   as accel_queue_execute(): before the first command buffer.
 * @signals: as accel_queue_execute(): after the last one ended.
 * @count:   0 .. ACCEL_QUEUE_BATCH_MAX; 0 makes this a barrier.
 * @cbs:     @count ended command buffers of the queue's device. One may
 *           appear more than once if it is REUSABLE.
 * @tables:  NULL (no command buffer takes a table), or @count tables:
 *           @tables[i] for @cbs[i], validated against what it recorded.
 *           Only read during the call.
 * @flags:   must be 0.
 *
 * One submission, one job in the scheduler (not @count): one wait for
 * @waits, one arbitration, one signal. The command buffers run in order,
 * each after the one before it ended, as if a full barrier separated them.
 * The first that fails ends the batch: the later ones do not run, and the
 * signals carry the error, with a message naming the command buffer
 * (its index in @cbs) and the command. Host cost: O(points + slots used by
 * all the tables), one allocation, whatever the commands.
 *
 * IREE's counterpart: iree_hal_device_queue_execute() with several
 * command buffers and binding tables.
 *
 * Return: 0 when submitted, or, with nothing submitted and nothing
 * retained, accel_queue_execute()'s errors, the message naming the
 * command buffer (``cbs[i]``) or table at fault; and -EINVAL for a NULL
 * @cbs with a non-zero @count, or a NULL entry; -E2BIG for @count over
 * ACCEL_QUEUE_BATCH_MAX; -EBADFD for a ONE_SHOT command buffer given twice.
 *
 * Thread-safety: thread-safe, as every submission (see the DOC above).
 */
int accel_queue_execute_batch(accel_queue_t *queue,
			      const accel_semaphore_list_t *waits,
			      const accel_semaphore_list_t *signals,
			      uint32_t count, accel_command_buffer_t *const *cbs,
			      const accel_binding_table_t *tables, uint32_t flags);

/**
 * struct accel_submit_options - how one submission is to be scheduled
 * (accel_queue_execute_with_options()). Set @size to
 * sizeof(accel_submit_options_t) (ACCEL_SUBMIT_OPTIONS_INIT does) and zero
 * what you do not set; a later, larger struct is accepted when the fields
 * this library does not know are zero.
 * @size:        sizeof(accel_submit_options_t) as the caller compiled it;
 *               at least ACCEL_SUBMIT_OPTIONS_SIZE_V1, at most
 *               ACCEL_OPTIONS_SIZE_MAX.
 * @flags:       must be 0.
 * @deadline_ns: 0, or when the submission's signals should be reached:
 *               an absolute CLOCK_MONOTONIC time in ns
 *               (accel_deadline_after()), not yet passed.
 *
 * A deadline is a scheduling hint, never a limit: nothing fails for
 * missing it. Within its priority class, a submission whose deadline is
 * near (its deadline less the predicted device time of it and of its
 * queue's runnable submissions ahead of it) is released ahead of fair
 * share; a queue goes ahead so only while it is at most a bounded amount
 * of device time (20 ms) past its fair share, so deadlines move work
 * earlier and never take more than that from the other queues. A
 * submission waiting on a point passes its deadline on to the submission
 * that promised the point. Both schedulers do this (the kernel one on a
 * module of ABI 1.7, ACCEL_SCHEDULER_FEATURE_JOB_DEADLINE; an older module
 * gets the submission without it). See Documentation/libaccel.rst.
 */
typedef struct accel_submit_options {
	uint32_t size;
	uint32_t flags;
	int64_t deadline_ns;
} accel_submit_options_t;

/* The size of the first version of accel_submit_options_t. */
#define ACCEL_SUBMIT_OPTIONS_SIZE_V1 16

/* Initializer: no deadline. */
#define ACCEL_SUBMIT_OPTIONS_INIT { sizeof(accel_submit_options_t), 0, 0 }

/**
 * accel_queue_execute_with_options() - accel_queue_execute(), scheduled as
 * @options says.
 * @options: NULL (as accel_queue_execute()), or the options; only read
 *           during the call.
 *
 * Return: accel_queue_execute()'s, and, with nothing submitted and nothing
 * retained: -EINVAL for a bad @options (its size, flags, or a negative
 * deadline; the message names the field); -E2BIG for an @options->size
 * above ACCEL_OPTIONS_SIZE_MAX; -ETIME for a deadline already passed.
 */
int accel_queue_execute_with_options(accel_queue_t *queue,
				     const accel_semaphore_list_t *waits,
				     const accel_semaphore_list_t *signals,
				     accel_command_buffer_t *cb,
				     const accel_binding_table_t *table,
				     const accel_submit_options_t *options);

/**
 * accel_queue_execute_batch_with_options() - accel_queue_execute_batch(),
 * scheduled as @options says (accel_queue_execute_with_options()): the
 * deadline is the whole batch's, one job.
 */
int accel_queue_execute_batch_with_options(accel_queue_t *queue,
					   const accel_semaphore_list_t *waits,
					   const accel_semaphore_list_t *signals,
					   uint32_t count,
					   accel_command_buffer_t *const *cbs,
					   const accel_binding_table_t *tables,
					   const accel_submit_options_t *options);

/**
 * accel_queue_barrier() - signal @signals once @waits are reached, running
 * nothing: accel_queue_execute() with no command buffer.
 */
int accel_queue_barrier(accel_queue_t *queue,
			const accel_semaphore_list_t *waits,
			const accel_semaphore_list_t *signals, uint32_t flags);

/**
 * accel_queue_wait_idle() - wait until every submission made on @queue
 * before the call has ended.
 * @deadline_ns: absolute CLOCK_MONOTONIC ns (accel_deadline_after());
 *               <= 0 polls; ACCEL_DEADLINE_INFINITE waits for good.
 *
 * A submission has ended once it ran and its signals were signalled, or it
 * failed (a wait failed, its work failed, the module refused or timed it
 * out: its signals then carry the error). So after 0, the semaphores say
 * how each ended. One whose wait is never reached never ends: the wait
 * runs to the deadline. Submissions made during the wait may or may not be
 * waited for. IREE: iree_hal_device_queue_flush() then a wait on the
 * queue's last signal, or iree_hal_device_wait_idle() for one queue.
 *
 * Do not call it from the queue's own work (a cpu kernel running on it):
 * the work waits for itself until the deadline.
 *
 * Return: 0 when idle; -ETIME when the deadline passed first (nothing
 * changes: the work goes on); -EINVAL: @queue is NULL.
 * Thread-safety: thread-safe.
 */
int accel_queue_wait_idle(accel_queue_t *queue, int64_t deadline_ns);

/**
 * accel_queue_alloca() - a buffer whose memory comes from the device's
 * transient pool, usable once @signals are reached: queue-ordered
 * (stream-ordered) allocation.
 * @waits:   points after which the memory is needed; NULL means none.
 * @signals: signalled once @waits are reached and the memory is free for
 *           the buffer (see below); NULL means none. Work that uses the
 *           buffer waits for them.
 * @params:  memory type and usage, as accel_allocator_allocate_buffer().
 * @size:    bytes, 0 .. the pool's capacity.
 * @flags:   must be 0.
 * @out:     receives the buffer (one reference, the caller's); NULL first
 *           and on failure.
 *
 * The buffer is returned at once, with its address: it may be recorded in
 * command buffers and put in binding tables right away; its contents are
 * undefined. Its memory is a range of a block the pool holds (one
 * allocation of the driver's, suballocated), so no driver call is made
 * once the pool is warm.
 *
 * The memory comes back with accel_queue_dealloca(), in queue order: a
 * range whose dealloca's waits are not reached yet may be handed to a
 * later alloca, which then also waits for them before its @signals (so the
 * memory is reused once the work of the buffer before it ended, without
 * the host waiting; if those waits fail, this alloca's signals fail with
 * them). The pool never holds more than its capacity: the environment
 * variable ACCEL_TRANSIENT_POOL_BYTES, read at the device's first alloca
 * (bytes, with an optional K, M or G suffix; default 256M), rounded up to
 * a multiple of 256 bytes, the pool's alignment (so every size up to the
 * value given fits an empty pool).
 *
 * An alloca without @signals is handed only memory free now: it has
 * nothing to order its use after a previous owner's work (-EAGAIN).
 *
 * Releasing the buffer's last reference without a dealloca returns its
 * memory too (nothing of its own can be using it then: submissions hold
 * references); a range its alloca took before the work of the buffer
 * before ended stays reserved until that work ended, dealloca'd or not.
 *
 * IREE's counterpart: iree_hal_device_queue_alloca() on a transient pool
 * (CUDA: cuMemAllocAsync() on a memory pool).
 *
 * Return: 0, or with nothing allocated, signalled or submitted:
 *
 * - -EINVAL: NULL @queue, @params or @out, flags, bad @params (as
 *   accel_allocator_allocate_buffer()), a bad list, or a bad
 *   ACCEL_TRANSIENT_POOL_BYTES (the message says which);
 * - -ENOSPC: @size is above the pool's capacity: it could never fit (the
 *   message gives both; raise ACCEL_TRANSIENT_POOL_BYTES or allocate it);
 * - -EAGAIN: the pool has no free range that large now: its memory is in
 *   buffers not deallocated yet (or split in smaller free ranges), or,
 *   without @signals, in ranges deallocated on waits not reached yet. The
 *   call does not block: dealloca some, then try again;
 * - -EXDEV: a semaphore of another scheduler; -ENOMEM; the driver's
 *   errors when the pool grows.
 *
 * Thread-safety: thread-safe; the pool is shared by the device's queues.
 */
int accel_queue_alloca(accel_queue_t *queue,
		       const accel_semaphore_list_t *waits,
		       const accel_semaphore_list_t *signals,
		       const accel_buffer_params_t *params, uint64_t size,
		       uint32_t flags, accel_buffer_t **out);

/**
 * accel_queue_dealloca() - return the memory of @buffer, a buffer of
 * accel_queue_alloca(), to the device's pool once @waits are reached.
 * @waits:   the points after which nothing uses the memory any more (the
 *           signals of the last work that uses it); NULL means none: the
 *           memory is free now.
 * @signals: signalled once @waits are reached; NULL means none.
 * @buffer:  an accel_queue_alloca() buffer of the queue's device.
 * @flags:   must be 0.
 *
 * The host is never blocked: the range goes back to the pool at once,
 * marked with @waits, and the next alloca that takes it waits for them
 * (accel_queue_alloca()). From this call on, the buffer is dead: recording
 * it (or a subspan of it), submitting a binding table or a command buffer
 * that names it, mapping it, taking a subspan, a transfer from or into
 * it and a second dealloca are refused with -EBADFD and a message saying
 * it "was returned by
 * accel_queue_dealloca()". The object lives until its last reference is
 * released; work submitted before the call still runs (it holds its own
 * references, and @waits order the reuse after it).
 *
 * IREE's counterpart: iree_hal_device_queue_dealloca().
 *
 * Return: 0, or with nothing changed: -EINVAL (NULL @queue or @buffer,
 * flags, a bad list, a buffer not from accel_queue_alloca(), a subspan of
 * one); -EXDEV (the buffer is of another device, a semaphore of another
 * scheduler); -EBADFD (deallocated already); -ENOMEM.
 *
 * Thread-safety: thread-safe; of two racing deallocas of one buffer, one
 * gets 0, the other -EBADFD.
 */
int accel_queue_dealloca(accel_queue_t *queue,
			 const accel_semaphore_list_t *waits,
			 const accel_semaphore_list_t *signals,
			 accel_buffer_t *buffer, uint32_t flags);

/**
 * struct accel_transient_pool_stats - what a device's transient pool holds.
 * @capacity:       the most device memory the pool may hold.
 * @committed:      device memory it holds now (its blocks).
 * @committed_peak: the most it ever held; never above @capacity.
 * @reserved:       bytes of ranges handed out and not back yet (buffers
 *                  not deallocated, or whose dealloca's waits are not
 *                  known to be reached), alignment included.
 * @reserved_peak:  the most @reserved ever was.
 */
typedef struct accel_transient_pool_stats {
	uint64_t capacity;
	uint64_t committed;
	uint64_t committed_peak;
	uint64_t reserved;
	uint64_t reserved_peak;
} accel_transient_pool_stats_t;

/**
 * accel_device_transient_pool_stats() - @device's transient pool, now.
 * @out: receives it; all 0 but @capacity before the first alloca.
 *
 * Return: 0, -EINVAL (NULL argument, a bad ACCEL_TRANSIENT_POOL_BYTES).
 * Thread-safety: thread-safe.
 */
int accel_device_transient_pool_stats(accel_device_t *device,
				      accel_transient_pool_stats_t *out);

/** typedef accel_uploader_t - a ring of parameter memory (opaque). */
typedef struct accel_uploader accel_uploader_t;

/* The alignment of every accel_uploader_write() (any binding's offset). */
#define ACCEL_UPLOADER_ALIGN 256u

/**
 * accel_uploader_create() - a ring buffer of @ring_size bytes of
 * host-visible memory on @queue's device, for the small data each
 * submission reads (parameters, constants, indirect counts): written by
 * the host, recycled once the submissions that read it ended.
 * @ring_size: bytes, 1 .. the transient pool's capacity (rounded up to
 *             ACCEL_UPLOADER_ALIGN).
 * @flags:     must be 0.
 * @out:       receives it; NULL first and on failure.
 *
 * The ring is one buffer of accel_queue_alloca() (usage: dispatch
 * storage, transfer source, indirect params, mapping): if the pool hands
 * it memory still in use, create waits for that work to end. A write
 * takes the next @size bytes (a bip buffer: a write that does not fit
 * before the end starts again at 0, skipping the tail); accel_uploader_fence()
 * says which point ends the use of the writes since the previous fence,
 * and a write reclaims the space of the fences reached.
 *
 * IREE's counterpart: the per-queue staging buffers its drivers keep for
 * parameter uploads (iree_hal_metal_staging_buffer_t, a ring of one
 * buffer, reserved per command buffer and recycled as they complete).
 *
 * Return: 0, or with nothing made: -EINVAL (NULL, flags, @ring_size 0),
 * accel_queue_alloca()'s errors (-ENOSPC: larger than the pool), -ENOMEM.
 *
 * Thread-safety: an uploader is not thread-safe: use one per thread (or
 * lock around it); several may share a queue.
 */
int accel_uploader_create(accel_queue_t *queue, uint64_t ring_size,
			  uint32_t flags, accel_uploader_t **out);

/**
 * accel_uploader_write() - copy @size bytes of @data into the ring.
 * @size:   1 .. the ring's size.
 * @buffer: receives the ring's buffer (borrowed: valid while the uploader
 *          lives; bind it, submissions hold their own references).
 * @offset: receives where the bytes are, a multiple of
 *          ACCEL_UPLOADER_ALIGN.
 *
 * Return: 0, or with nothing written: -EINVAL (NULL argument, @size 0),
 * -ENOSPC (@size is above the ring's size: it could never fit), -EAGAIN
 * (the ring is full of writes whose fences are not reached: the message
 * names the oldest point; wait for it and write again). Never blocks.
 */
int accel_uploader_write(accel_uploader_t *uploader, const void *data,
			 uint64_t size, accel_buffer_t **buffer,
			 uint64_t *offset);

/**
 * accel_uploader_fence() - the writes since the previous fence are read
 * until @semaphore reaches @value (the signal of the submission that reads
 * them); a point that fails counts as reached (that work will not run).
 *
 * Return: 0, -EINVAL (NULL), -EXDEV (a semaphore of another scheduler),
 * -ENOMEM (nothing recorded).
 */
int accel_uploader_fence(accel_uploader_t *uploader,
			 accel_semaphore_t *semaphore, uint64_t value);

/**
 * accel_uploader_release() - free @uploader (NULL: no-op); its ring goes
 * back to the transient pool once every fence is reached
 * (accel_queue_dealloca() waiting for them). Writes after the last fence
 * are taken as unused.
 */
void accel_uploader_release(accel_uploader_t *uploader);

#ifdef __cplusplus
}
#endif

#endif /* ACCEL_QUEUE_H */
