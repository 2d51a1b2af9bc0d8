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
 *
 * Besides opening, a kind implements three groups of ops:
 *
 * - semaphores (Documentation/syncobj.rst): create/destroy/query/signal/
 *   fail and the host wait on a list of points. The embedded kind keeps
 *   the timeline in process and sleeps on a futex; the kernel kind backs
 *   each semaphore by a kernel timeline syncobj.
 * - executors: the thread that runs released jobs for one queue (the
 *   "executor" of Documentation/sched.rst). Both kinds run jobs on the
 *   in-process executor thread (executor.c); the embedded kind pushes a job
 *   there once its waits are reached, the kernel kind once the module
 *   released it (its reaper thread reads the releases from the ring or the
 *   device's events).
 * - jobs: job_submit() takes a job {waits, signals, execute callback,
 *   executor}, promises its signal points, and once every wait point is
 *   reached hands it to its executor, which runs the callback and completes
 *   it (accel_sched_job_run()): the signals are signalled, or failed with
 *   the job's status, in process (embedded) or by the module (kernel:
 *   ->job_complete). A job whose wait fails is not run; its signals fail
 *   with that error.
 */
#ifndef ACCEL_SRC_SCHED_H
#define ACCEL_SRC_SCHED_H

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "accel/queue.h"
#include "accel/scheduler.h"
#include "accel/semaphore.h"
#include "macros.h"
#include "object.h"

/* Size of a reason sentence, NUL included. */
#define ACCEL_REASON_MAX 1024
/* Size of a semaphore's failure message, NUL included. */
#define ACCEL_FAILURE_MAX 1024

/*
 * struct accel_semaphore - the part every kind's semaphore starts with.
 * @ref:       the public reference count.
 * @scheduler: the scheduler it lives in (a reference).
 * @failure:   why it failed, in full; written once, then immutable.
 * @hop:       while @cause is set: this semaphore's own sentence of a
 *             cascaded failure (malloc'ed; kept until fini, as a reader
 *             may hold it).
 * @cause:     a cascaded failure not resolved yet: the semaphore whose
 *             failure caused this one (a reference). The full message is
 *             composed when read, once the chain of causes reaches a
 *             semaphore with a full message (semaphore.c).
 * @drop_next: in this thread's list of semaphores to destroy (semaphore.c).
 *
 * The failure fields of every semaphore are protected by one lock in
 * semaphore.c: a cascade walks several semaphores, and failures are rare.
 * In the embedded scheduler, the message is set before the failed state
 * is visible to waiters; in the kernel one, the module fails points first.
 */
struct accel_semaphore {
	struct accel_ref ref;
	accel_scheduler_t *scheduler;
	char failure[ACCEL_FAILURE_MAX];
	char *hop;
	accel_semaphore_t *cause;
	accel_semaphore_t *drop_next;
};

/* Sets up the header (one reference, a reference on @s). */
void accel_semaphore_init(accel_semaphore_t *sem, accel_scheduler_t *s);
/* Tears down the header (drops the scheduler and the cause). */
void accel_semaphore_fini(accel_semaphore_t *sem);
/* Writes @message as the failure message if none is set yet. */
void accel_semaphore_set_failure(accel_semaphore_t *sem, const char *message);
/*
 * accel_semaphore_set_failure_cause() - if @sem has no failure message yet,
 * make it "<@hop>: <@cause's message>" (a hop's sentence, see
 * accel_sched_wait_failed_message()), however late @cause's message is
 * written: @sem keeps a reference to @cause until the message is composed.
 */
void accel_semaphore_set_failure_cause(accel_semaphore_t *sem, const char *hop,
				       accel_semaphore_t *cause);
/* True if @sem has a failure message, or a cause to compose one from. */
bool accel_semaphore_failure_known(accel_semaphore_t *sem);
/*
 * accel_failure_compose() - "<@hop>: <@cause>" into @msg, or, when that
 * does not fit in @len, "<@hop> (via N submissions): <the first failure>",
 * counting the hops in @cause instead of repeating them.
 */
void accel_failure_compose(char *msg, size_t len, const char *hop,
			   const char *cause);

/*
 * accel_semaphore_check_list() - validate a public list for @fn: counts,
 * NULLs, and that every semaphore is of *@s (or of entry 0's scheduler,
 * which goes to *@s, when *@s is NULL). 0 or -errno with the message set.
 */
int accel_semaphore_check_list(const accel_semaphore_list_t *list,
			       const char *fn, const char *what,
			       accel_scheduler_t **s);

/* ->execute's answer when the work is still in flight (see below). */
#define ACCEL_JOB_PENDING 1

/* struct accel_sched_point - one point: a semaphore and a value. */
struct accel_sched_point {
	accel_semaphore_t *sem;
	uint64_t value;
};

struct accel_sched_executor;

/* Priority classes, in the module's numbering: lower goes first. */
#define ACCEL_SCHED_PRIO_HIGH 0
#define ACCEL_SCHED_PRIO_NORMAL 1
#define ACCEL_SCHED_PRIO_LOW 2
#define ACCEL_SCHED_PRIO_COUNT 3

/*
 * struct accel_sched_queue_params - a queue's place in its engine's
 * arbitration (accel_queue_create_with_options(), validated).
 * @caller:   the public function, for messages.
 * @priority: ACCEL_SCHED_PRIO_*.
 * @weight:   ACCEL_QUEUE_WEIGHT_MIN..ACCEL_QUEUE_WEIGHT_MAX.
 * @affinity: the device's hardware queues it may use (non-zero).
 */
struct accel_sched_queue_params {
	const char *caller;
	uint32_t priority;
	uint32_t weight;
	uint64_t affinity;
};

/*
 * struct accel_sched_job - one unit of work for a scheduler.
 *
 * The submitter fills the first group and keeps the semaphores referenced
 * until @destroy; the scheduler owns the second group.
 *
 * @executor:     the executor that runs it.
 * @waits:        @wait_count points to wait for.
 * @signals:      @signal_count points to signal when it completes.
 * @execute:      runs the work on the executor thread; returns 0 or a
 *                negative errno with @msg saying what failed. NULL: nothing
 *                to run (a barrier). Or ACCEL_JOB_PENDING: the work is in
 *                flight on the device and whoever sees it finish calls
 *                accel_sched_job_finish(); the executor goes on with its
 *                next job meanwhile.
 * @release:      optional: drops what the job holds besides its points,
 *                once it ran, before its signals are signalled (embedded)
 *                or right after COMPLETE (kernel: the module signals them,
 *                and a queue must outlive its released jobs). So whoever
 *                sees an in-process signal finds the submission's
 *                references dropped: a device it held last is destroyed
 *                before the wait returns, not on a library thread racing
 *                the application's exit().
 * @destroy:      called exactly once after the job completed (or after a
 *                successful job_submit() the scheduler could not run),
 *                from any thread; frees the job (and drops what @release
 *                would have, if it was not called).
 * @label:        "submission #3 on queue cpu://0" for messages.
 * @predicted_ns: set by the submitter: the device time the cost model
 *                predicts for the job (accel/cost.h), or 0 when it has
 *                no prediction (a command buffer with an undeclared
 *                dispatch that never ran, a barrier). The embedded kind
 *                charges it at release instead of the queue's running
 *                average; the kernel kind is to send it with the job.
 * @deadline_ns:  set by the submitter: 0, or when the job's signals should
 *                be reached (absolute CLOCK_MONOTONIC ns; a scheduling
 *                hint, accel_submit_options_t).
 * @pending:      waits not yet reached, plus one while submitting.
 * @wait_error:   0, or the error of the first wait that failed.
 * @wait_index:   its index in @waits.
 * @cancel_error: 0, or why the scheduler will not run it although no wait
 *                failed (kernel: the module refused or timed it out).
 * @start_ns:     when @execute was called.
 * @device_ns:    the device time reported: how long @execute ran, or, for
 *                a pending job, what the finisher set (0: the time from
 *                @start_ns to accel_sched_job_finish()).
 * @next:         link in the executor's ready list.
 * @priv:         the scheduler kind's state (embedded: its timepoints),
 *                from accel_pool_alloc() (pool.h): the executor frees it
 *                with accel_pool_free() before @destroy.
 * @domain:       set by the submitter: the device that can order this job
 *                after others of the same device on the device itself
 *                (device-side waits), or NULL (host waits only).
 * @device_wait:  set by the scheduler before the job runs: the device
 *                timeline value the driver must make the job wait for on
 *                the device (0: none). A wait point promised by a job
 *                already submitted to the same device counts as met for
 *                the release; the job's signals are signalled only once
 *                its waits are really reached (accel_sched_job_finish()).
 */
struct accel_sched_job {
	struct accel_sched_executor *executor;
	uint32_t wait_count;
	uint32_t signal_count;
	const struct accel_sched_point *waits;
	const struct accel_sched_point *signals;
	int (*execute)(struct accel_sched_job *job, char *msg, size_t msg_len);
	void (*release)(struct accel_sched_job *job);
	void (*destroy)(struct accel_sched_job *job);
	char label[96];
	uint64_t predicted_ns;
	int64_t deadline_ns;

	atomic_uint pending;
	atomic_int wait_error;
	atomic_uint wait_index;
	atomic_int cancel_error;
	/*
	 * Released before its waits were reached (the kernel's pipelining):
	 * the executor waits for them before running it.
	 */
	atomic_bool pipelined;
	int64_t start_ns;
	uint64_t device_ns;
	struct accel_sched_job *next;
	void *priv;
	const void *domain;
	atomic_uint_fast64_t device_wait;
};

/*
 * accel_sched_job_on_device() - the driver submitted @job's last work to
 * its device: the job ends when the device's timeline reaches @token.
 * Jobs of the same device waiting on its signal points may now be released
 * and ordered after it on the device. Called at most once per job, before
 * the driver can call its done(). Thread-safe.
 */
void accel_sched_job_on_device(struct accel_sched_job *job, uint64_t token);

/*
 * struct accel_sched_device_stats - how dependencies were ordered
 * (process-wide, for tests and benchmarks).
 * @device_ordered: jobs that ran with a device-side wait.
 * @host_waits:     times an executor thread blocked on the host for a
 *                  pipelined job's waits.
 */
struct accel_sched_device_stats {
	uint64_t device_ordered;
	uint64_t host_waits;
};
void accel_sched_device_stats(struct accel_sched_device_stats *out);

struct accel_scheduler_ops {
	/* Frees everything the kind owns, then the object itself. */
	void (*destroy)(accel_scheduler_t *s);
	/* Fills the kind-specific fields; @info arrives zeroed with ->kind set. */
	void (*query)(const accel_scheduler_t *s, accel_scheduler_info_t *info);

	/*
	 * Semaphores. sem_create() allocates the kind's object (header
	 * initialised by accel_semaphore_init()); sem_destroy() frees it.
	 * sem_signal() and sem_fail() return 0 or -errno with the thread's
	 * message set (prefixed by @caller); sem_fail() keeps @message as the
	 * failure message when it is the first failure. sem_wait() gets a
	 * validated list (count >= 1, all of this scheduler) whose
	 * semaphores the caller holds references to until it returns: a
	 * host wait retains them itself (semaphore.c), a job's waits are
	 * its submission's.
	 */
	int (*sem_create)(accel_scheduler_t *s, uint64_t initial,
			  accel_semaphore_t **out);
	void (*sem_destroy)(accel_semaphore_t *sem);
	void (*sem_query)(accel_semaphore_t *sem, uint64_t *value, int *error);
	int (*sem_signal)(accel_semaphore_t *sem, uint64_t value,
			  const char *caller);
	int (*sem_fail)(accel_semaphore_t *sem, int error, const char *message);
	int (*sem_wait)(accel_scheduler_t *s, uint32_t count,
			const struct accel_sched_point *points, uint32_t flags,
			int64_t deadline, uint32_t *index);

	/*
	 * Sharing (semaphore.h): the arguments are validated (non-NULL, @fd
	 * open); each returns 0 or -errno with the message set and nothing
	 * changed. Only the kernel kind shares; the embedded one answers
	 * -EOPNOTSUPP. sem_export_sync_file() also serves
	 * accel_semaphore_notify_fd(), hence @caller.
	 */
	int (*sem_export_fd)(accel_semaphore_t *sem, int *fd);
	int (*sem_import_fd)(accel_scheduler_t *s, int fd,
			     accel_semaphore_t **out);
	int (*sem_export_sync_file)(accel_semaphore_t *sem, uint64_t value,
				    int *fd, const char *caller);
	int (*sem_import_sync_file)(accel_semaphore_t *sem, uint64_t value,
				    int fd);
	/*
	 * sem_set_deadline() - accel_semaphore_set_deadline(), validated
	 * (@deadline > 0, not passed): 0, or -errno with the message set.
	 */
	int (*sem_set_deadline)(accel_semaphore_t *sem, uint64_t value,
				int64_t deadline);

	/*
	 * Executors: one per queue; @name (the device's URI) is for messages
	 * and names the engine; @params are validated already.
	 */
	int (*executor_create)(accel_scheduler_t *s, const char *name,
			       const struct accel_sched_queue_params *params,
			       struct accel_sched_executor **out);
	void (*executor_destroy)(struct accel_sched_executor *ex);

	/*
	 * job_submit() - validate and take @job. On failure (message set)
	 * nothing happened and the caller still owns @job. On success the
	 * signal points are promised and the job belongs to the scheduler,
	 * which calls ->destroy once it completed.
	 */
	int (*job_submit)(accel_scheduler_t *s, struct accel_sched_job *job);

	/*
	 * job_done() - optional: @job's work ended (it ran, or was not run),
	 * before anything of it is released or signalled. The embedded kind
	 * returns the job's engine credit and charges its device time.
	 */
	void (*job_done)(accel_scheduler_t *s, struct accel_sched_job *job);

	/*
	 * job_settled() - optional: @job's signals are signalled or failed
	 * (job_done() and job_complete() ran); it is not freed yet, but its
	 * queue may be gone (a waiter may have released it). The embedded
	 * kind gives the engine credit back here, so that the jobs that the
	 * signals made runnable compete for it, as the module gives a
	 * COMPLETE's credit once its points are reached: a HIGH consumer
	 * goes right after its LOW producer, not after one more job of a
	 * LOW flood.
	 */
	void (*job_settled)(accel_scheduler_t *s, struct accel_sched_job *job);

	/*
	 * job_complete() - optional: finish @job on the executor thread once
	 * it ran (or was not run: @status and @msg then say why). NULL: the
	 * executor signals the signals, or fails them with @status and @msg,
	 * itself. The kernel kind sends COMPLETE to the module instead.
	 */
	void (*job_complete)(accel_scheduler_t *s, struct accel_sched_job *job,
			     int status, const char *msg);

	/*
	 * sem_device_promise() - optional: a job submitted to device @domain
	 * will bring @sem to @value when @domain's timeline reaches @token.
	 * The embedded kind releases the jobs of @domain waiting on it. A
	 * kind without it orders every dependency on the host.
	 */
	void (*sem_device_promise)(accel_semaphore_t *sem, const void *domain,
				   uint64_t value, uint64_t token);

	/*
	 * job_device_wait() - optional: how a pipelined @job (released before
	 * its waits were reached) is ordered after its predecessors, called
	 * on its executor thread before it runs. Returns 1 with *@token set
	 * when each wait not reached is promised on @job's device
	 * (sem_device_promise): the device waits for *@token; 0 when every
	 * wait is reached already (nothing to order); -1 when the host must
	 * wait (a wait failed, or was promised elsewhere). The kernel kind's
	 * pipelined jobs; the embedded kind sets ->device_wait at release.
	 */
	int (*job_device_wait)(accel_scheduler_t *s, struct accel_sched_job *job,
			       uint64_t *token);
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

/*
 * The in-process executor (executor.c): a thread that runs the jobs pushed
 * to it in order, each through accel_sched_job_run().
 */
int accel_executor_thread_create(accel_scheduler_t *s, const char *name,
				 struct accel_sched_executor **out);
void accel_executor_thread_destroy(struct accel_sched_executor *ex);
/* Queues a job whose waits are all reached (or one failed). Never fails. */
void accel_executor_push(struct accel_sched_executor *ex,
			 struct accel_sched_job *job);
/* The scheduler kind's own data for the executor (kernel: its queue). */
void accel_executor_set_data(struct accel_sched_executor *ex, void *data);
void *accel_executor_data(const struct accel_sched_executor *ex);
/* The scheduler the executor runs jobs for. */
accel_scheduler_t *accel_executor_scheduler(const struct accel_sched_executor *ex);

/*
 * accel_sched_job_run() - run @job (unless a wait failed or it was
 * cancelled) and complete it: ->job_complete, or signal its signals / fail
 * them with its status; then ->destroy it. Called on the executor thread.
 */
void accel_sched_job_run(accel_scheduler_t *s, struct accel_sched_job *job);

/*
 * accel_submission_label() - "submission #<n> on a queue of <uri>" into
 * @label (struct accel_sched_job's), cut to fit as snprintf() would.
 * Every submission writes one (messages name the job): through
 * vsnprintf() it was about 1,000 instructions, more than a quarter of an
 * accel_queue_execute() (scripts/insn-vm.sh --profile, with the user
 * addresses named from the static accel-bench's symbols).
 */
void accel_submission_label(char *label, size_t len, uint64_t n, const char *uri);

/*
 * accel_sched_job_finish() - complete @job, whose ->execute returned
 * ACCEL_JOB_PENDING, with @status (0 or -errno) and @msg (what failed):
 * as accel_sched_job_run() would have. From any thread, exactly once;
 * @job is gone when it returns.
 */
void accel_sched_job_finish(struct accel_sched_job *job, int status,
			    const char *msg);

/*
 * accel_sched_wait_failed_message() - why @job was not run: its wait @i
 * failed with @err. "<label> was not run: its wait <i> (value <v>) failed
 * with <E>: <the semaphore's failure message>". In a chain of submissions,
 * each not run because the one before failed, that nests; when it no
 * longer fits in @len the hops are counted instead of repeated, so the
 * first failure is never cut off: "... failed with ERANGE (via 12
 * submissions): <the first failure>".
 */
void accel_sched_wait_failed_message(const struct accel_sched_job *job,
				     uint32_t i, int err, char *msg, size_t len);
/*
 * accel_sched_wait_failed_hop() - the same sentence up to the errno name,
 * without the cause: what accel_semaphore_set_failure_cause() takes.
 */
void accel_sched_wait_failed_hop(const struct accel_sched_job *job,
				 uint32_t i, int err, char *msg, size_t len);

/* Monotonic clock in ns, and the futex helpers of the waits. */
int64_t accel_now_ns(void);
/* Sleeps while *@word == @val, until @deadline (absolute monotonic ns). */
void accel_futex_wait(atomic_uint *word, unsigned int val, int64_t deadline);
void accel_futex_wake_all(atomic_uint *word);
void accel_futex_wake_one(atomic_uint *word);

#endif /* ACCEL_SRC_SCHED_H */
