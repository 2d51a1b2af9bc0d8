/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR MIT) */
/*
 * accelsched: the kernel <-> user ABI of /dev/accelsched.
 *
 * This header is the whole contract between accelsched.ko and userspace. It
 * compiles as C99 userspace and inside the kernel; it uses only fixed-width
 * __u8..__u64 types, pads every struct explicitly to a multiple of 8 bytes,
 * and passes pointers as __u64.
 *
 * Rules every command follows:
 *
 * - Unknown flags and non-zero padding or reserved fields are rejected with
 *   -EINVAL before anything else is looked at, and nothing changes.
 * - Structs may grow at their end in later ABI minors. The ioctl number
 *   encodes the size userspace was built with: the module copies what both
 *   sides know and zero-fills the rest, so old binaries keep working and new
 *   binaries on old modules see zeroes in the fields the module did not know.
 * - Timeouts are absolute CLOCK_MONOTONIC nanoseconds.
 *
 * Every command exists as an ioctl on the device fd. The io_uring fast path
 * uses IORING_OP_URING_CMD SQEs on the same fd with sqe->cmd_op set to one of
 * the ACCEL_URING_CMD_* values below and the command's payload in the first
 * 16 bytes of sqe->cmd (normal 64-byte SQEs suffice); the CQE's res is the
 * command's result, 0 or a negative errno.
 */
#ifndef _UAPI_ACCELSCHED_H
#define _UAPI_ACCELSCHED_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/ioctl.h>
#else
#include <linux/types.h>
#include <sys/ioctl.h>
#endif

#if defined(__cplusplus)
extern "C" {
#endif

/** ACCEL_DEVICE_NAME - the node's name under /dev. */
#define ACCEL_DEVICE_NAME "accelsched"

/*
 * ABI version. The major changes only for an incompatible change (userspace
 * built for another major must refuse to talk to the module); the minor grows
 * with every compatible addition (a command, a flag, a field at a struct's
 * end), which features bits also announce.
 */
#define ACCEL_ABI_MAJOR 1
#define ACCEL_ABI_MINOR 9

/* ioctl type letter; 0xAC is not assigned in ioctl-number.rst. */
#define ACCEL_IOCTL_BASE 0xAC

/* Feature bits reported by ACCEL_IOCTL_INFO. */
/** ACCEL_FEATURE_URING_CMD - IORING_OP_URING_CMD works on the device fd. */
#define ACCEL_FEATURE_URING_CMD (1ULL << 0)
/**
 * ACCEL_FEATURE_URING_CANCEL - pending uring_cmds are cancelable by ring
 * exit (kernels with io_uring_cmd_mark_cancelable(); 6.7 and later). Without
 * it the module bounds every pending command itself.
 */
#define ACCEL_FEATURE_URING_CANCEL (1ULL << 1)
/** ACCEL_FEATURE_SYNCOBJ - timeline sync objects (ABI 1.1). */
#define ACCEL_FEATURE_SYNCOBJ (1ULL << 2)
/** ACCEL_FEATURE_SCHED - engines, queues and jobs (ABI 1.2). */
#define ACCEL_FEATURE_SCHED (1ULL << 3)
/**
 * ACCEL_FEATURE_URING_SEQ - a SUBMIT's release CQE on an IORING_SETUP_CQE32
 * ring carries its place in the queue's release order (ABI 1.3; see
 * ACCEL_URING_SEQ_VALID).
 */
#define ACCEL_FEATURE_URING_SEQ (1ULL << 4)
/**
 * ACCEL_FEATURE_TENANTS - engines are shared by tenants (ABI 1.4): engine
 * time goes to tenants (cgroups) by their weights, then to a tenant's
 * queues by theirs; credit limits and tenant weights are the
 * administrator's (/sys/kernel/accelsched/); a HIGH queue needs
 * CAP_SYS_NICE. See Documentation/sched.rst, "Tenants".
 */
#define ACCEL_FEATURE_TENANTS (1ULL << 5)
/**
 * ACCEL_FEATURE_URING_INLINE_JOB - ACCEL_URING_CMD_JOB_SUBMIT_INLINE: a
 * whole job inside the SQE of an IORING_SETUP_SQE128 ring (ABI 1.5).
 */
#define ACCEL_FEATURE_URING_INLINE_JOB (1ULL << 6)
/*
 * ACCEL_FEATURE_JOB_PREDICTION - (ABI 1.6) a job may carry the engine time
 * its executor predicts for it (struct accel_job.predicted_us, or an inline
 * job's with ACCEL_URING_JOB_F_PREDICTED): its queue is charged that at
 * release instead of its running average, and corrected at COMPLETE by the
 * time reported. fdinfo's queue lines and the job_complete tracepoint show
 * predictions against measured times.
 */
#define ACCEL_FEATURE_JOB_PREDICTION (1ULL << 7)
/**
 * ACCEL_FEATURE_JOB_DEADLINE - (ABI 1.7) a job may carry a deadline (an
 * entry of its signals with ACCEL_POINT_F_DEADLINE), and
 * ACCEL_IOCTL_SYNCOBJ_SET_DEADLINE sets one on a point, which reaches the
 * job that promised it. See "Deadlines" below.
 */
#define ACCEL_FEATURE_JOB_DEADLINE (1ULL << 8)
/**
 * ACCEL_FEATURE_FENCE_DEADLINE - (ABI 1.7) the kernel has fence deadlines
 * (dma_fence_set_deadline()): a deadline set on a point's fence by any
 * consumer, such as SYNC_IOC_SET_DEADLINE on a sync_file exported with
 * ACCEL_IOCTL_SYNCOBJ_EXPORT_SYNC_FILE, reaches the job that promised the
 * point as ACCEL_IOCTL_SYNCOBJ_SET_DEADLINE does. Absent on kernels
 * without them (before 6.3).
 */
#define ACCEL_FEATURE_FENCE_DEADLINE (1ULL << 9)
/**
 * ACCEL_FEATURE_JOB_EVENTS - (ABI 1.8) a job may ask for every outcome as an
 * event (ACCEL_JOB_F_EVENTS, ACCEL_URING_JOB_F_EVENTS): its io_uring SUBMIT
 * is then answered at once, and a job that will never be released gets an
 * ACCEL_JOB_EVENT_FAILED event. ACCEL_IOCTL_JOB_COMPLETE_FETCH completes a
 * job and fetches events in one call.
 */
#define ACCEL_FEATURE_JOB_EVENTS (1ULL << 10)
/**
 * ACCEL_FEATURE_JOB_ANSWER - (ABI 1.9) a job that asks for events may also
 * ask that its SUBMIT answer its release (ACCEL_JOB_F_ANSWER,
 * ACCEL_URING_JOB_F_ANSWER), so that the submitter hands it on itself.
 */
#define ACCEL_FEATURE_JOB_ANSWER (1ULL << 11)

/**
 * struct accel_info - what the module is: ACCEL_IOCTL_INFO.
 * @abi_major:      ACCEL_ABI_MAJOR of the module.
 * @abi_minor:      ACCEL_ABI_MINOR of the module.
 * @features:       ACCEL_FEATURE_* bits.
 * @client_id:      this open file's id, unique while the module is loaded;
 *                  the same id names the file in fdinfo, debugfs and traces.
 * @version:        the module's version, NUL-terminated ("0.1.0").
 * @kernel_release: the release of the kernel it runs on, NUL-terminated.
 * @reserved:       zero.
 *
 * All fields are outputs; the module never reads the struct.
 */
struct accel_info {
	__u32 abi_major;
	__u32 abi_minor;
	__u64 features;
	__u64 client_id;
	char version[32];
	char kernel_release[64];
	__u64 reserved[4];
};

/**
 * struct accel_nop - a command that does nothing: ACCEL_IOCTL_NOP and
 * ACCEL_URING_CMD_NOP. It measures the cost of the path itself.
 * @flags:  ACCEL_NOP_F_* bits.
 * @result: with ACCEL_NOP_F_RESULT, the result to return (0 or a negative
 *          errno in [-4095, 0], not in [-530, -512]); must be zero
 *          otherwise.
 * @cookie: not looked at; lets a caller tag a request.
 */
struct accel_nop {
	__u32 flags;
	__s32 result;
	__u64 cookie;
};

/** ACCEL_NOP_F_RESULT - return @result instead of 0 (tests error paths). */
#define ACCEL_NOP_F_RESULT (1U << 0)
#define ACCEL_NOP_FLAGS_ALL (ACCEL_NOP_F_RESULT)

/*
 * Timeline sync objects
 * =====================
 *
 * A syncobj holds a 64-bit value that only grows; a point is a value on it,
 * *reached* once the value is at least the point. A point is *submitted*
 * once something has promised to reach it (a host signal, an imported fence,
 * a job). A syncobj can fail: it then stays failed, with the first error
 * (a negative errno) it was failed with, and every wait on it, present or
 * future, returns that error. Handles are per open file: a handle of one file
 * means nothing to another (share a syncobj through an fd instead).
 */

/*
 * The largest error a syncobj can be failed with, and the value range.
 * Every errno userspace passes (a failure, a job's status, a NOP's result)
 * must be in [-ACCEL_MAX_ERRNO, -1] and outside [-530, -512], the kernel's
 * internal codes (-ERESTARTSYS, -ENOIOCTLCMD, ...), which would make a
 * waiter's syscall restart or leak to userspace: -EINVAL.
 */
#define ACCEL_MAX_ERRNO 4095

/**
 * struct accel_syncobj_create - ACCEL_IOCTL_SYNCOBJ_CREATE.
 * @initial: the initial value.
 * @flags:   must be zero.
 * @handle:  out: the new syncobj's handle (never 0).
 */
struct accel_syncobj_create {
	__u64 initial;
	__u32 flags;
	__u32 handle;
};

/**
 * struct accel_syncobj_destroy - ACCEL_IOCTL_SYNCOBJ_DESTROY: drop a handle.
 * @handle: the handle.
 * @pad:    must be zero.
 *
 * Waits in progress keep what they wait on. When the last reference to the
 * syncobj goes (its handles, exported fds, promises), points still pending
 * can never be reached: their waiters fail with -ENOENT.
 */
struct accel_syncobj_destroy {
	__u32 handle;
	__u32 pad;
};

/**
 * struct accel_syncobj_query - ACCEL_IOCTL_SYNCOBJ_QUERY.
 * @handle:    the syncobj.
 * @flags:     must be zero.
 * @value:     out: the current value (the highest reached point).
 * @submitted: out: the highest submitted point (>= @value).
 * @error:     out: 0, or the negative errno the syncobj failed with.
 * @pad:       zero.
 */
struct accel_syncobj_query {
	__u32 handle;
	__u32 flags;
	__u64 value;
	__u64 submitted;
	__s32 error;
	__u32 pad;
};

/**
 * struct accel_syncobj_signal - ACCEL_IOCTL_SYNCOBJ_SIGNAL and
 * ACCEL_URING_CMD_SYNCOBJ_SIGNAL: signal a point from the host.
 * @handle: the syncobj.
 * @flags:  must be zero.
 * @value:  the new value; must be greater than the current one, else
 *          -EINVAL and nothing changes. Every waiter whose point is now
 *          reached wakes. On a failed syncobj: its error, nothing changes.
 */
struct accel_syncobj_signal {
	__u32 handle;
	__u32 flags;
	__u64 value;
};

/**
 * struct accel_syncobj_fail - ACCEL_IOCTL_SYNCOBJ_FAIL.
 * @handle: the syncobj.
 * @error:  a negative errno in [-ACCEL_MAX_ERRNO, -1]. The first failure
 *          wins; failing a failed syncobj changes nothing and returns 0.
 */
struct accel_syncobj_fail {
	__u32 handle;
	__s32 error;
};

/**
 * struct accel_syncobj_deadline - ACCEL_IOCTL_SYNCOBJ_SET_DEADLINE (ABI 1.7,
 * ACCEL_FEATURE_JOB_DEADLINE): someone needs @point reached by @deadline_ns.
 * @handle:      the syncobj.
 * @flags:       must be zero.
 * @point:       the point.
 * @deadline_ns: absolute CLOCK_MONOTONIC ns, at most S64_MAX (-EINVAL
 *               above, and for 0); one already passed is -ETIME.
 *
 * The job that made the syncobj's latest promise at or above @point, if it
 * is not yet released, takes the deadline (the earlier one, if it has one),
 * and passes it on to the jobs it waits on (see "Deadlines" below). A
 * deadline is a hint: a point already reached, promised by the host or an
 * imported fence, or not promised yet, takes it with 0 and nothing changes.
 * -ENOENT for an unknown handle.
 */
struct accel_syncobj_deadline {
	__u32 handle;
	__u32 flags;
	__u64 point;
	__u64 deadline_ns;
};

/** ACCEL_WAIT_ALL - wait for every entry (else for any one). */
#define ACCEL_WAIT_ALL (1U << 0)
/** ACCEL_WAIT_SUBMITTED - wait for the points to be submitted, not reached. */
#define ACCEL_WAIT_SUBMITTED (1U << 1)
#define ACCEL_WAIT_FLAGS_ALL (ACCEL_WAIT_ALL | ACCEL_WAIT_SUBMITTED)
/** ACCEL_WAIT_MAX_COUNT - the most entries one wait takes. */
#define ACCEL_WAIT_MAX_COUNT 1024

/**
 * struct accel_syncobj_wait - ACCEL_IOCTL_SYNCOBJ_WAIT.
 * @handles:  pointer to __u32[@count], 4-byte aligned.
 * @points:   pointer to __u64[@count], 8-byte aligned.
 * @deadline: absolute CLOCK_MONOTONIC ns; 0 polls. -ETIME once passed; a
 *            wait already satisfied succeeds even with a deadline passed.
 * @count:    entries, at most ACCEL_WAIT_MAX_COUNT; 0 succeeds at once.
 * @flags:    ACCEL_WAIT_ALL, ACCEL_WAIT_SUBMITTED.
 * @index:    out: without ACCEL_WAIT_ALL, the lowest index that is
 *            reached or failed decides: reached, the wait succeeds with it;
 *            failed, the wait returns the failure's errno with it (an
 *            entry reached at a lower index than a failed one wins, and the
 *            reverse). With ACCEL_WAIT_ALL, the index of a failed entry.
 * @pad:      must be zero.
 *
 * Waiting on a point nothing has signalled or promised yet is legal: it
 * simply waits. Every handle is looked up before anything waits (-ENOENT).
 * Interrupted by a signal, it returns -ERESTARTSYS and is restarted with the
 * same absolute deadline.
 */
struct accel_syncobj_wait {
	__u64 handles;
	__u64 points;
	__s64 deadline;
	__u32 count;
	__u32 flags;
	__u32 index;
	__u32 pad;
};

/**
 * struct accel_syncobj_handle_fd - ACCEL_IOCTL_SYNCOBJ_EXPORT (handle -> fd)
 * and ACCEL_IOCTL_SYNCOBJ_IMPORT (fd -> new handle).
 * @handle: the syncobj (export), out: the new handle (import).
 * @flags:  must be zero.
 * @fd:     out: an O_CLOEXEC fd holding the syncobj (export); the fd
 *          (import). Pass it to another process with SCM_RIGHTS: holding the
 *          fd is the permission.
 * @pad:    must be zero.
 */
struct accel_syncobj_handle_fd {
	__u32 handle;
	__u32 flags;
	__s32 fd;
	__u32 pad;
};

/**
 * struct accel_syncobj_sync_file - ACCEL_IOCTL_SYNCOBJ_EXPORT_SYNC_FILE and
 * ACCEL_IOCTL_SYNCOBJ_IMPORT_SYNC_FILE: interop with dma_fence.
 * @handle: the syncobj.
 * @flags:  must be zero.
 * @point:  the point.
 * @fd:     out: a sync_file fd whose fence signals when @point is reached,
 *          or with the failure's error (export); a sync_file fd from any
 *          driver (import): @point becomes submitted now and reached when
 *          that fence signals (failed if it signals with an error). An
 *          imported point must be above the current value (-EINVAL); an
 *          fd that is not open is -EBADF, one that is not a sync_file
 *          -EINVAL, as for ACCEL_IOCTL_SYNCOBJ_IMPORT.
 * @pad:    must be zero.
 */
struct accel_syncobj_sync_file {
	__u32 handle;
	__u32 flags;
	__u64 point;
	__s32 fd;
	__u32 pad;
};

/**
 * struct accel_syncobj_eventfd - ACCEL_IOCTL_SYNCOBJ_EVENTFD: write 1 to an
 * eventfd once a point is reached (or submitted, with ACCEL_WAIT_SUBMITTED),
 * or the syncobj fails (ACCEL_IOCTL_SYNCOBJ_QUERY then tells the error).
 * One-shot. Cancelled by ACCEL_IOCTL_SYNCOBJ_CANCEL or by closing the file
 * (the eventfd is then not written).
 * @handle: the syncobj.
 * @flags:  0 or ACCEL_WAIT_SUBMITTED.
 * @point:  the point.
 * @fd:     the eventfd.
 * @pad:    must be zero.
 */
struct accel_syncobj_eventfd {
	__u32 handle;
	__u32 flags;
	__u64 point;
	__s32 fd;
	__u32 pad;
};

/**
 * struct accel_syncobj_cancel - ACCEL_IOCTL_SYNCOBJ_CANCEL: cancel this
 * file's pending notifications (eventfds and io_uring WAITs) on one point,
 * registered through @handle while it named this syncobj (not through a
 * handle of the same number since destroyed). A cancelled io_uring WAIT
 * completes with -ECANCELED.
 * @handle:    the syncobj.
 * @flags:     must be zero.
 * @point:     the point.
 * @cancelled: out: how many were cancelled.
 * @pad:       must be zero.
 */
struct accel_syncobj_cancel {
	__u32 handle;
	__u32 flags;
	__u64 point;
	__u32 cancelled;
	__u32 pad;
};

/**
 * struct accel_uring_wait - the payload of ACCEL_URING_CMD_SYNCOBJ_WAIT: the
 * CQE arrives with res 0 once @point is reached (or submitted, with
 * ACCEL_WAIT_SUBMITTED), or with the syncobj's error once it fails, or with
 * -ECANCELED when cancelled (ACCEL_IOCTL_SYNCOBJ_CANCEL, ring exit, exit
 * of the submitting task). Fits a normal SQE's 16 command bytes.
 * @point:  the point.
 * @handle: the syncobj.
 * @flags:  0 or ACCEL_WAIT_SUBMITTED.
 */
struct accel_uring_wait {
	__u64 point;
	__u32 handle;
	__u32 flags;
};

/*
 * Jobs and the scheduler
 * ======================
 *
 * An *engine* is a named scheduling domain for one execution resource
 * ("cpu", "vulkan:0", "cuda:0"), shared by every process that names it, with
 * a credit limit: how many released jobs may be in flight on it at once. A
 * *queue* belongs to one open file, is bound to one engine, and has a
 * priority class and a weight. A *job* waits on points and promises points;
 * submitting it promises its signal points at once.
 *
 * A job becomes runnable when every wait is reached, without any thread or
 * polling; only points order jobs (a blocked job never holds back a later
 * independent job of its queue), and runnable jobs of one queue are released
 * in submission order. The policy releases, within the engine's credit
 * limit, from the highest non-empty priority class, and within a class from
 * the queue that has consumed the least engine time for its weight. A job
 * that waits on a point promised by a not yet released job of a lower class
 * raises that job (and, transitively, the unreleased jobs it waits on) to
 * its own class until it is released (priority inheritance; the queue of a
 * raised job releases its earlier runnable jobs first).
 *
 * Deadlines (ABI 1.7, ACCEL_FEATURE_JOB_DEADLINE). A job may carry a
 * deadline, absolute CLOCK_MONOTONIC: by then its signals should be reached.
 * Within its class, a runnable job is released ahead of fair-share order
 * when its latest start is near: its deadline less its predicted time
 * (@predicted_us, else its queue's running average) and less the
 * predictions of its queue's runnable jobs ahead of it, no later than the
 * predicted time of the job fair share would release instead plus the
 * module parameter deadline_slack_us. Earliest latest start first. The
 * queue is charged as always, so a deadline moves work earlier and never
 * gives more: a tenant's queue is released ahead only while the tenant's
 * engine time is at most deadline_lag_us (a module parameter) of its own
 * engine time ahead of its fair share in the class, which bounds what
 * deadlines can take from others over any interval. A pending job passes
 * its deadline, less its prediction, on to the jobs that promised its waits,
 * as priority inheritance does. The engine counts the deadlines its jobs
 * met and missed (a job completed after its deadline) in sysfs and fdinfo.
 *
 * A released job goes to its executor (the file that submitted it): as the
 * completion of its io_uring SUBMIT, or as an ACCEL_JOB_EVENT_RELEASED event
 * read with ACCEL_IOCTL_JOB_FETCH (the device fd polls readable while events
 * wait). The executor runs it and sends COMPLETE with a status and the
 * device time it took; the signal points are then reached, or failed with
 * the status. A job whose wait fails is not run: its signals fail with the
 * same error. A released job not completed within its timeout fails with
 * -ETIMEDOUT: its points fail, then its executor gets an
 * ACCEL_JOB_EVENT_TIMEDOUT event, and a late COMPLETE gets -ETIMEDOUT. A
 * COMPLETE (on time or late) drops its job's events not yet fetched, and a
 * late one also a TIMEDOUT still to come: the executor knows of the job
 * already. When a file is closed (its process died, say),
 * every job it submitted and did not complete is cancelled and its promised
 * points fail with -EOWNERDEAD.
 */

#define ACCEL_ENGINE_NAME_LEN 32

#define ACCEL_PRIORITY_HIGH 0
#define ACCEL_PRIORITY_NORMAL 1
#define ACCEL_PRIORITY_LOW 2
#define ACCEL_PRIORITY_COUNT 3

#define ACCEL_WEIGHT_MIN 1
#define ACCEL_WEIGHT_MAX 10000
#define ACCEL_CREDITS_MAX 65536

/**
 * struct accel_queue_create - ACCEL_IOCTL_QUEUE_CREATE.
 * @engine:   the engine's name, NUL-terminated, [a-z0-9:._-], not empty,
 *            not "." or "..".
 * @priority: ACCEL_PRIORITY_HIGH, _NORMAL or _LOW. HIGH needs CAP_SYS_NICE
 *            (-EACCES without it, since ABI 1.4).
 * @weight:   share among the queues of the caller's tenant in the class,
 *            ACCEL_WEIGHT_MIN..ACCEL_WEIGHT_MAX (tenants share an engine by
 *            the weights the administrator gives them first).
 * @credits:  0, or 1..ACCEL_CREDITS_MAX (more is -EINVAL): the credit limit
 *            of the engine, used only if this call creates the engine and
 *            the caller has CAP_SYS_ADMIN; otherwise ignored (since ABI 1.4;
 *            before, an existing engine's other limit was -EEXIST). Limits
 *            are set in /sys/kernel/accelsched/engines/<name>/credits.
 * @flags:    must be zero.
 * @handle:   out: the queue's handle in this file (never 0).
 * @pad:      must be zero.
 */
struct accel_queue_create {
	char engine[ACCEL_ENGINE_NAME_LEN];
	__u32 priority;
	__u32 weight;
	__u32 credits;
	__u32 flags;
	__u32 handle;
	__u32 pad;
};

/**
 * struct accel_queue_destroy - ACCEL_IOCTL_QUEUE_DESTROY: its jobs not yet
 * completed are cancelled (their points fail with -ECANCELED).
 * @handle: the queue.
 * @pad:    must be zero.
 */
struct accel_queue_destroy {
	__u32 handle;
	__u32 pad;
};

/**
 * struct accel_point - one point of a syncobj.
 * @handle: the syncobj.
 * @flags:  0, or in a job's signals ACCEL_POINT_F_DEADLINE.
 * @point:  the point.
 */
struct accel_point {
	__u32 handle;
	__u32 flags;
	__u64 point;
};

/*
 * ACCEL_POINT_F_DEADLINE - (ABI 1.7, ACCEL_FEATURE_JOB_DEADLINE) this entry
 * of a job's signals is not a point but the job's deadline: @point holds it,
 * absolute CLOCK_MONOTONIC ns, 1..S64_MAX (-EINVAL otherwise; -ETIME when
 * already passed at submission), and @handle is 0. At most one per job, never
 * among its waits (-EINVAL). It counts towards @nsignals (and an inline
 * job's ACCEL_URING_JOB_POINTS), so it needs no room of its own in any
 * submission's layout. See "Deadlines" above.
 */
#define ACCEL_POINT_F_DEADLINE (1U << 0)

/** ACCEL_JOB_MAX_POINTS - the most waits, and the most signals, of a job. */
#define ACCEL_JOB_MAX_POINTS 64
/** ACCEL_JOB_SUBMIT_MAX - the most jobs one batched submit takes. */
#define ACCEL_JOB_SUBMIT_MAX 256

/**
 * struct accel_job - one job.
 * @user_data:  the executor's own tag, returned with the job's events.
 * @waits:      pointer to struct accel_point[@nwaits].
 * @signals:    pointer to struct accel_point[@nsignals]; each point must be
 *              above its syncobj's value.
 * @timeout_ns: how long the job may run once released; 0 for the module's
 *              default (parameter job_timeout_ms); at most one hour
 *              (3600 s), -EINVAL above.
 * @nwaits:     at most ACCEL_JOB_MAX_POINTS.
 * @nsignals:   at most ACCEL_JOB_MAX_POINTS.
 * @queue:      the queue's handle.
 * @flags:      0, or ACCEL_JOB_F_EVENTS (ABI 1.8), with or without
 *              ACCEL_JOB_F_ANSWER (ABI 1.9).
 * @id:         out: the job's id in this file, for COMPLETE. Unlike the
 *              other outputs, not checked on input: it is written back
 *              into the caller's array, which a batch submitter reuses,
 *              so its input value is ignored. With ACCEL_JOB_F_ANSWER,
 *              ACCEL_JOB_ID_RELEASED and ACCEL_JOB_RES_PIPELINED may be
 *              set beside it (see there).
 * @predicted_us: (ABI 1.6; "pad", zero, before) the engine time the
 *              executor predicts for the job, in microseconds, charged to
 *              its queue at release (at most its timeout); 0 for none (the
 *              queue's running average is charged). At most
 *              ACCEL_JOB_PREDICTION_MAX_US (-EINVAL above).
 */
struct accel_job {
	__u64 user_data;
	__u64 waits;
	__u64 signals;
	__u64 timeout_ns;
	__u32 nwaits;
	__u32 nsignals;
	__u32 queue;
	__u32 flags;
	__u32 id;
	__u32 predicted_us;
};

/*
 * ACCEL_JOB_F_EVENTS - (ABI 1.8, ACCEL_FEATURE_JOB_EVENTS) every outcome of
 * the job reaches its executor as an event to fetch: its release as
 * ACCEL_JOB_EVENT_RELEASED, and, when it will never be released, an
 * ACCEL_JOB_EVENT_FAILED whose status says why (a wait's error, or
 * -ECANCELED, -EOWNERDEAD when it was cancelled). Its io_uring SUBMIT is
 * answered at once: res 0 once the job is taken (IOSQE_CQE_SKIP_SUCCESS
 * then posts nothing), or -errno if it is refused; no SUBMIT stays pending,
 * so the submitting task is never on the release's path and may exit. An
 * ioctl submission needs no watch of its waits to learn a failure. Events
 * of a file come in the order the module decided them, so a queue's
 * releases are fetched in release order.
 */
#define ACCEL_JOB_F_EVENTS (1U << 0)
/*
 * ACCEL_JOB_F_ANSWER - (ABI 1.9, ACCEL_FEATURE_JOB_ANSWER; only with
 * ACCEL_JOB_F_EVENTS, -EINVAL without) a release decided while the job's
 * SUBMIT runs is answered by the SUBMIT, not queued as an event, when no
 * event of the file is queued then (the queue's releases keep their
 * order: an executor that hands on what it fetched before it submits
 * again sees them in release order). The answer is the job's id with
 * ACCEL_JOB_RES_PIPELINED as for a release CQE: an io_uring SUBMIT's res
 * (so IOSQE_CQE_SKIP_SUCCESS would drop it: leave it off), or, for
 * ACCEL_IOCTL_JOB_SUBMIT, the id written back with ACCEL_JOB_ID_RELEASED
 * set. A SUBMIT without that answer (res 0, the bit clear) leaves the
 * release to an event as before. If the id cannot be written back after
 * the release (the caller unmapped its array during the call), the ioctl
 * fails with -EFAULT, @submitted counting that job: nobody learns of its
 * release, and it times out.
 */
#define ACCEL_JOB_F_ANSWER (1U << 1)
#define ACCEL_JOB_FLAGS_ALL (ACCEL_JOB_F_EVENTS | ACCEL_JOB_F_ANSWER)
/* ACCEL_JOB_ID_RELEASED - in an ioctl's written-back id: see ACCEL_JOB_F_ANSWER. */
#define ACCEL_JOB_ID_RELEASED (1U << 31)

/* ACCEL_JOB_PREDICTION_MAX_US - the largest prediction: one hour. */
#define ACCEL_JOB_PREDICTION_MAX_US 3600000000U

/**
 * struct accel_job_submit - ACCEL_IOCTL_JOB_SUBMIT: submit a batch of jobs.
 * @jobs:      pointer to struct accel_job[@count]; their @id is written back.
 * @count:     1..ACCEL_JOB_SUBMIT_MAX.
 * @flags:     must be zero.
 * @submitted: out: how many were submitted, in order; on an error, the jobs
 *             before the failed one stay submitted and the ioctl returns the
 *             error with @submitted saying where it stopped.
 * @pad:       must be zero.
 */
struct accel_job_submit {
	__u64 jobs;
	__u32 count;
	__u32 flags;
	__u32 submitted;
	__u32 pad;
};

/**
 * struct accel_uring_submit - payload of ACCEL_URING_CMD_JOB_SUBMIT. The
 * CQE completes when the job is released, with res = the job's id (bit
 * ACCEL_JOB_RES_PIPELINED set when it was released before its waits were
 * reached; see the docs), or with -errno if the submission is refused or the
 * job fails or is cancelled before release. A job with ACCEL_JOB_F_EVENTS
 * is answered at once instead (0, or the refusal).
 * @job:      pointer to one struct accel_job (read at submission).
 * @reserved: must be zero.
 */
struct accel_uring_submit {
	__u64 job;
	__u64 reserved;
};

/** ACCEL_URING_JOB_POINTS - the most waits and signals of an inline job. */
#define ACCEL_URING_JOB_POINTS 3

/**
 * struct accel_uring_job - payload of ACCEL_URING_CMD_JOB_SUBMIT_INLINE
 * (ABI 1.5, ACCEL_FEATURE_URING_INLINE_JOB): a whole job, its points
 * included, in the 80-byte sqe->cmd of a ring set up with
 * IORING_SETUP_SQE128, so that the module reads nothing from user memory.
 * It is answered as ACCEL_URING_CMD_JOB_SUBMIT is. On a ring of 64-byte
 * SQEs it is refused with -EINVAL. A job with more points than fit uses
 * ACCEL_URING_CMD_JOB_SUBMIT.
 * @user_data:  as in struct accel_job.
 * @timeout_ns: as in struct accel_job.
 * @queue:      as in struct accel_job.
 * @nwaits:     the waits: the first @nwaits entries of @points.
 * @nsignals:   the signals: the @nsignals entries after them;
 *              @nwaits + @nsignals <= ACCEL_URING_JOB_POINTS.
 * @flags:      0, or ACCEL_URING_JOB_F_PREDICTED (ABI 1.6), and
 *              ACCEL_URING_JOB_F_EVENTS (ABI 1.8), with or without
 *              ACCEL_URING_JOB_F_ANSWER (ABI 1.9).
 * @points:     the waits, then the signals, as in struct accel_job: a
 *              wait's flags must be zero, a signal's zero or
 *              ACCEL_POINT_F_DEADLINE (ABI 1.7: the job's deadline, which
 *              takes one of the three entries).
 * @predicted_us: (ABI 1.6) as in struct accel_job; read only with
 *              ACCEL_URING_JOB_F_PREDICTED (before ABI 1.6 the SQE's last
 *              8 bytes were not the job's, and may hold anything).
 * @pad:        not read.
 */
struct accel_uring_job {
	__u64 user_data;
	__u64 timeout_ns;
	__u32 queue;
	__u8 nwaits;
	__u8 nsignals;
	__u16 flags;
	struct accel_point points[ACCEL_URING_JOB_POINTS];
	__u32 predicted_us;
	__u32 pad;
};

/* ACCEL_URING_JOB_F_PREDICTED - struct accel_uring_job.predicted_us is set. */
#define ACCEL_URING_JOB_F_PREDICTED (1U << 0)
/* ACCEL_URING_JOB_F_EVENTS - ACCEL_JOB_F_EVENTS for an inline job (ABI 1.8). */
#define ACCEL_URING_JOB_F_EVENTS (1U << 1)
/* ACCEL_URING_JOB_F_ANSWER - ACCEL_JOB_F_ANSWER for an inline job (ABI 1.9). */
#define ACCEL_URING_JOB_F_ANSWER (1U << 2)
#define ACCEL_URING_JOB_FLAGS_ALL (ACCEL_URING_JOB_F_PREDICTED | ACCEL_URING_JOB_F_EVENTS | \
				   ACCEL_URING_JOB_F_ANSWER)

/*
 * ACCEL_JOB_RES_PIPELINED - the job was released before its waits were
 * reached, because each is promised by a job of the same file already
 * released to the same engine: the executor must order it after those on
 * the device. Its points are still reached only after its waits are, and
 * fail if a wait fails.
 */
#define ACCEL_JOB_RES_PIPELINED (1 << 30)
#define ACCEL_JOB_RES_ID_MASK (ACCEL_JOB_RES_PIPELINED - 1)

/*
 * ACCEL_URING_SEQ_VALID, ACCEL_URING_SEQ_MASK - the order of releases.
 *
 * The module releases a queue's runnable jobs in submission order, but
 * io_uring posts the CQEs of SUBMITs answered later (from task work, in the
 * task that issued each) in no set order. On a ring set up with
 * IORING_SETUP_CQE32, a release's CQE says where it stands: big_cqe[0] is
 * ACCEL_URING_SEQ_VALID | n, where n (ACCEL_URING_SEQ_MASK, wrapping)
 * counts the queue's earlier releases answered through io_uring, from 0.
 * big_cqe[0] is 0 when the SUBMIT was answered at once; the module does
 * that only when every earlier release of the file has been posted to its
 * ring, so such a release takes the lowest number the ring has not shown
 * yet. An executor that keeps per queue the next number it expects, and
 * holds back a release numbered above it until the gap is filled, runs a
 * queue's jobs in release order. This holds for a queue whose SUBMITs all
 * go through one ring without IOSQE_ASYNC.
 */
#define ACCEL_URING_SEQ_VALID (1ULL << 32)
#define ACCEL_URING_SEQ_MASK 0xffffffffULL

/**
 * struct accel_job_complete - ACCEL_IOCTL_JOB_COMPLETE and
 * ACCEL_URING_CMD_JOB_COMPLETE: the executor finished a released job.
 * @id:        the job.
 * @status:    0, or a negative errno in [-4095, -1] that fails its points
 *             (not in [-530, -512]: see ACCEL_MAX_ERRNO).
 * @device_ns: the engine time it took (fair share is charged by it); 0
 *             charges the time from release to COMPLETE. More than the
 *             job's timeout is charged as the timeout.
 *
 * Return: 0; -ENOENT for an id that names no job of this file (never
 * submitted, or completed or cancelled and gone: also while the cancel of
 * its queue or a COMPLETE on another thread is still taking it out);
 * -EINVAL for a bad @status, or a job
 * that is not released (not yet, or a pipelined job already completed and
 * waiting for its waits: a second COMPLETE of it); -ETIMEDOUT for a job
 * that timed out (its points failed with -ETIMEDOUT already).
 */
struct accel_job_complete {
	__u32 id;
	__s32 status;
	__u64 device_ns;
};

#define ACCEL_JOB_EVENT_RELEASED 1
#define ACCEL_JOB_EVENT_TIMEDOUT 2
#define ACCEL_JOB_EVENT_FAILED 3

/**
 * struct accel_job_event - one event for an executor.
 * @user_data: the job's user_data.
 * @id:        the job's id.
 * @type:      ACCEL_JOB_EVENT_RELEASED (jobs submitted by ioctl, or with
 *             ACCEL_JOB_F_EVENTS), ACCEL_JOB_EVENT_TIMEDOUT (any job; stop
 *             running it) or ACCEL_JOB_EVENT_FAILED (ABI 1.8: a job with
 *             ACCEL_JOB_F_EVENTS that will never be released: queued once
 *             its points failed with @status and its id is gone).
 * @flags:     ACCEL_JOB_RES_PIPELINED for a pipelined release.
 * @status:    0, or the error the job failed with.
 */
struct accel_job_event {
	__u64 user_data;
	__u32 id;
	__u32 type;
	__u32 flags;
	__s32 status;
};

/**
 * struct accel_job_fetch - ACCEL_IOCTL_JOB_FETCH: take waiting events.
 * @events: pointer to struct accel_job_event[@max].
 * @max:    1..ACCEL_JOB_SUBMIT_MAX.
 * @count:  out: how many were written (0 if none wait; never blocks: poll
 *          the device fd for POLLIN).
 * @flags:  must be zero.
 * @pad:    must be zero.
 */
struct accel_job_fetch {
	__u64 events;
	__u32 max;
	__u32 count;
	__u32 flags;
	__u32 pad;
};

/**
 * struct accel_job_complete_fetch - ACCEL_IOCTL_JOB_COMPLETE_FETCH (ABI 1.8):
 * ACCEL_IOCTL_JOB_COMPLETE, then ACCEL_IOCTL_JOB_FETCH, in one call. The
 * releases the COMPLETE causes for this file (the credit it frees, the
 * waits it reaches) are among the events fetched, and wake no poller of the
 * fd unless they are left for a later fetch.
 * @id, @status, @device_ns: as in struct accel_job_complete.
 * @events:    as in struct accel_job_fetch.
 * @max:       as in struct accel_job_fetch.
 * @count:     out: as in struct accel_job_fetch; must be zero.
 * @result:    out: what ACCEL_IOCTL_JOB_COMPLETE would return (0, -ENOENT,
 *             -EINVAL, -ETIMEDOUT); the events are fetched either way. Must
 *             be zero.
 * @flags:     must be zero.
 * @passed:    out: the job's signals that its COMPLETE found passed already
 *             (a host signal, or another job, took the syncobj to the point
 *             or beyond first), which it left as they were: bit i for the
 *             i-th signal that is a point (a deadline entry not counted).
 *             0 unless this call reached the points: @result 0, @status 0,
 *             and not a pipelined job completed before its waits were
 *             reached (its points are reached when they are, later). Must
 *             be zero.
 *
 * Return: 0; -EINVAL for bad arguments (nothing is completed or fetched);
 * -EFAULT if no event could be written (@result still says how the
 * COMPLETE went, and the events stay queued).
 */
struct accel_job_complete_fetch {
	__u32 id;
	__s32 status;
	__u64 device_ns;
	__u64 events;
	__u32 max;
	__u32 count;
	__s32 result;
	__u32 flags;
	__u64 passed;
};

#define ACCEL_IOCTL_INFO _IOR(ACCEL_IOCTL_BASE, 0x00, struct accel_info)
#define ACCEL_IOCTL_NOP _IOW(ACCEL_IOCTL_BASE, 0x01, struct accel_nop)
#define ACCEL_IOCTL_SYNCOBJ_CREATE _IOWR(ACCEL_IOCTL_BASE, 0x10, struct accel_syncobj_create)
#define ACCEL_IOCTL_SYNCOBJ_DESTROY _IOW(ACCEL_IOCTL_BASE, 0x11, struct accel_syncobj_destroy)
#define ACCEL_IOCTL_SYNCOBJ_QUERY _IOWR(ACCEL_IOCTL_BASE, 0x12, struct accel_syncobj_query)
#define ACCEL_IOCTL_SYNCOBJ_SIGNAL _IOW(ACCEL_IOCTL_BASE, 0x13, struct accel_syncobj_signal)
#define ACCEL_IOCTL_SYNCOBJ_FAIL _IOW(ACCEL_IOCTL_BASE, 0x14, struct accel_syncobj_fail)
#define ACCEL_IOCTL_SYNCOBJ_WAIT _IOWR(ACCEL_IOCTL_BASE, 0x15, struct accel_syncobj_wait)
#define ACCEL_IOCTL_SYNCOBJ_EXPORT _IOWR(ACCEL_IOCTL_BASE, 0x16, struct accel_syncobj_handle_fd)
#define ACCEL_IOCTL_SYNCOBJ_IMPORT _IOWR(ACCEL_IOCTL_BASE, 0x17, struct accel_syncobj_handle_fd)
#define ACCEL_IOCTL_SYNCOBJ_EXPORT_SYNC_FILE _IOWR(ACCEL_IOCTL_BASE, 0x18, struct accel_syncobj_sync_file)
#define ACCEL_IOCTL_SYNCOBJ_IMPORT_SYNC_FILE _IOW(ACCEL_IOCTL_BASE, 0x19, struct accel_syncobj_sync_file)
#define ACCEL_IOCTL_SYNCOBJ_EVENTFD _IOW(ACCEL_IOCTL_BASE, 0x1a, struct accel_syncobj_eventfd)
#define ACCEL_IOCTL_SYNCOBJ_CANCEL _IOWR(ACCEL_IOCTL_BASE, 0x1b, struct accel_syncobj_cancel)
#define ACCEL_IOCTL_SYNCOBJ_SET_DEADLINE _IOW(ACCEL_IOCTL_BASE, 0x1c, struct accel_syncobj_deadline)
#define ACCEL_IOCTL_QUEUE_CREATE _IOWR(ACCEL_IOCTL_BASE, 0x20, struct accel_queue_create)
#define ACCEL_IOCTL_QUEUE_DESTROY _IOW(ACCEL_IOCTL_BASE, 0x21, struct accel_queue_destroy)
#define ACCEL_IOCTL_JOB_SUBMIT _IOWR(ACCEL_IOCTL_BASE, 0x22, struct accel_job_submit)
#define ACCEL_IOCTL_JOB_COMPLETE _IOW(ACCEL_IOCTL_BASE, 0x23, struct accel_job_complete)
#define ACCEL_IOCTL_JOB_FETCH _IOWR(ACCEL_IOCTL_BASE, 0x24, struct accel_job_fetch)
#define ACCEL_IOCTL_JOB_COMPLETE_FETCH _IOWR(ACCEL_IOCTL_BASE, 0x25, struct accel_job_complete_fetch)

/*
 * uring_cmd opcodes (sqe->cmd_op). They are encoded like ioctl numbers (as
 * ublk does), with the payload's size, and the payload sits in sqe->cmd.
 */
#define ACCEL_URING_CMD_NOP _IOW(ACCEL_IOCTL_BASE, 0x80, struct accel_nop)
#define ACCEL_URING_CMD_SYNCOBJ_SIGNAL _IOW(ACCEL_IOCTL_BASE, 0x81, struct accel_syncobj_signal)
#define ACCEL_URING_CMD_SYNCOBJ_WAIT _IOW(ACCEL_IOCTL_BASE, 0x82, struct accel_uring_wait)
#define ACCEL_URING_CMD_JOB_SUBMIT _IOW(ACCEL_IOCTL_BASE, 0x83, struct accel_uring_submit)
#define ACCEL_URING_CMD_JOB_COMPLETE _IOW(ACCEL_IOCTL_BASE, 0x84, struct accel_job_complete)
/*
 * The inline SUBMIT's number keeps the size struct accel_uring_job had when
 * it came (ABI 1.5, 72 bytes); the struct grew into the rest of the SQE's
 * 80 command bytes since.
 */
#define ACCEL_URING_JOB_SIZE_VER0 72
#define ACCEL_URING_CMD_JOB_SUBMIT_INLINE _IOC(_IOC_WRITE, ACCEL_IOCTL_BASE, 0x85, ACCEL_URING_JOB_SIZE_VER0)

#if defined(__cplusplus)
}
#endif

#endif /* _UAPI_ACCELSCHED_H */
