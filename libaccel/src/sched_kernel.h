/* SPDX-License-Identifier: MIT */
/*
 * Internal: what the kernel scheduler's files share, and nothing else
 * includes: sched_kernel.c (opening the device, the ops table),
 * sched_kernel_sem.c (semaphores), sched_kernel_job.c (jobs and queues)
 * and sched_kernel_reaper.c (the reaper thread). See sched_kernel.c.
 *
 * Locking: jobs_lock, then sq_lock; the reaper alone reads the CQ (see
 * "Jobs" in sched_kernel_job.c).
 */
#ifndef ACCEL_SRC_SCHED_KERNEL_H
#define ACCEL_SRC_SCHED_KERNEL_H

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/types.h>

#include <accelsched.h>

#include "sched.h"
#include "uring.h"

/* A link in the list of jobs in flight (the first member of a job). */
struct job_link {
	struct job_link *prev, *next;
};

/*
 * struct accel_sched_kernel - the kernel scheduler: one open device file.
 * The job fields are described with the jobs (sched_kernel_job.c).
 */
struct accel_sched_kernel {
	accel_scheduler_t base;
	int fd;
	struct accel_info info;
	bool uring;
	struct io_uring ring;
	/* IORING_SETUP_SQPOLL's idle time (ms), or 0: kernel_sq_drain(). */
	unsigned int sqpoll_ms;
	/*
	 * @fd is the ring's registered file 0, and SUBMITs name it so
	 * (IOSQE_FIXED_FILE): io_uring then takes no reference on the file
	 * for each of them. Unregistered before the ring goes, so that
	 * closing @fd still releases the file at once. Not on a polled ring:
	 * its SQ thread keeps the table's file until it exits, after the
	 * ring is gone (seen on 6.12), and submitting there is no system
	 * call anyway.
	 */
	bool fixed_fd;

	/*
	 * Jobs ask for their outcomes as events (ACCEL_JOB_F_EVENTS, ABI
	 * 1.8): releases and failures are fetched, by the reaper or by an
	 * executor's COMPLETE (ACCEL_IOCTL_JOB_COMPLETE_FETCH), each under
	 * fetch_lock from the fetch until the jobs are handed on, so that a
	 * queue's releases reach its executor in the order fetched.
	 */
	bool events;
	pthread_mutex_t fetch_lock;
	/*
	 * With events, a job alone on its queue, submitted by a thread that
	 * takes fetch_lock, asks the module to answer a release decided
	 * during the call (ACCEL_JOB_F_ANSWER, ABI 1.9), and is handed on by
	 * that thread under the lock; the module answers only while no event
	 * is queued, so the queue's releases still reach its executor in
	 * order (see kernel_job_submit()).
	 */
	bool answer;

	pthread_mutex_t jobs_lock;
	struct job_link jobs;
	pthread_mutex_t sq_lock;
	bool reaping;
	pthread_t reaper;
	int efd; /* the reaper's: the ring's CQEs, or ioctl jobs' waits */
	atomic_bool stop;
	/*
	 * Device-side waits of pipelined jobs (kernel_job_device_wait()):
	 * the semaphores' device promises, and a broadcast when one is made
	 * or a job completes. dev_lock is a leaf.
	 */
	pthread_mutex_t dev_lock;
	pthread_cond_t dev_cond;
	uint64_t dev_gen;
	atomic_uint dev_waiters;
};

/*
 * @shared: exported, imported, or given a foreign fence: something outside
 * this process's submissions may fail it, and its message then says so.
 */
struct kernel_sem {
	accel_semaphore_t base;
	int fd;          /* the scheduler's device fd (the semaphore holds it) */
	uint32_t handle;
	atomic_bool shared;
	/* The latest promise by a job on a device (dev_lock). */
	const void *dev_domain;
	uint64_t dev_value, dev_token;
	atomic_uint_fast64_t hb; /* ksem_hb_release() / ksem_hb_acquire() */
};

static inline struct kernel_sem *to_ksem(accel_semaphore_t *sem)
{
	return (struct kernel_sem *)sem;
}

/*
 * Race-detector edges for what the module orders: what a thread did before
 * a semaphore is signalled or failed (a job's COMPLETE, a host signal)
 * happens before what a thread does once its wait for it returned, or its
 * query saw it. The kernel makes it so, but a race detector cannot see
 * through the ioctls; so every signal releases the semaphore's hb and every
 * wait and query acquires it. One atomic operation per point, next to an
 * ioctl.
 */
static inline void ksem_hb_release(accel_semaphore_t *sem)
{
	atomic_fetch_add_explicit(&to_ksem(sem)->hb, 1, memory_order_release);
}

static inline void ksem_hb_acquire(accel_semaphore_t *sem)
{
	(void)atomic_load_explicit(&to_ksem(sem)->hb, memory_order_acquire);
}

static inline int kioctl(int fd, unsigned long req, void *arg)
{
	int ret;

	do
		ret = ioctl(fd, req, arg);
	while (ret < 0 && errno == EINTR);
	return ret < 0 ? -errno : 0;
}

/*
 * struct kernel_job - a job in the module (struct accel_sched_job.priv).
 * @link:       in the scheduler's jobs in flight (jobs_lock).
 * @next:        in a local list (the ioctl reaper's failed jobs), or in
 *               its queue's held releases (the io_uring reaper).
 * @id:          the module's id, once released.
 * @seq:         its place in its queue's release order (the io_uring reaper).
 * @res:         its SUBMIT's CQE res, while held.
 * @submitted:   an ioctl submission the module took (jobs_lock).
 * @released:    the module released it (jobs_lock).
 * @timedout:    the module timed it out (jobs_lock).
 * @settled:     the ioctl reaper found a failed wait (jobs_lock).
 * @retried:     submitted again without signals already passed.
 * @published:   set (release) before its SQE goes in, read (acquire) by
 *               the reaper before it touches the record: the kernel orders
 *               the SQE before its CQE, but a race detector cannot see
 *               that edge through the ring's shared memory.
 * @why:         why the module refused it.
 * @has_deadline: @pts ends with the job's deadline (ACCEL_POINT_F_DEADLINE,
 *               ABI 1.7), counted in @kj.nsignals.
 * @pts:         the waits, then the signals, as the module reads them.
 */
struct kernel_job {
	struct job_link link;
	struct kernel_job *next;
	struct accel_sched_job *job;
	struct accel_job kj;
	uint32_t id;
	uint32_t seq;
	uint32_t res;
	bool submitted;
	bool released;
	bool timedout;
	bool settled;
	bool retried;
	bool has_deadline;
	atomic_bool published;
	char why[ACCEL_FAILURE_MAX / 2];
	struct accel_point pts[];
};

/*
 * The kernel queue behind an executor (accel_executor_data()). @next_seq
 * and @held belong to the io_uring reaper alone: the number of the next
 * release it hands on, and the releases that came before their turn,
 * sorted by number.
 */
struct kernel_queue {
	struct accel_sched_kernel *k;
	uint32_t handle;
	char engine[ACCEL_ENGINE_NAME_LEN];
	uint32_t next_seq;
	struct kernel_job *held;
	/* With answers: jobs submitted and not completed (kernel_job_submit()). */
	atomic_uint in_flight;
	struct accel_pool *pool; /* its jobs' struct kernel_job (pool.h) */
};

/* A struct kernel_job with this many points or fewer comes from its queue's pool. */
#define KERNEL_JOB_POOLED_POINTS 16
#define KERNEL_JOB_POOLED \
	(sizeof(struct kernel_job) + KERNEL_JOB_POOLED_POINTS * sizeof(struct accel_point))

#define for_each_job(r, k)                                                   \
	for (struct job_link *l_ = (k)->jobs.next;                            \
	     l_ != &(k)->jobs && ((r) = (struct kernel_job *)l_, 1);          \
	     l_ = l_->next)

/* sched_kernel_sem.c */
int kernel_sem_create(accel_scheduler_t *s, uint64_t initial,
		      accel_semaphore_t **out);
void kernel_sem_destroy(accel_semaphore_t *sem);
void kernel_sem_query(accel_semaphore_t *sem, uint64_t *value, int *error);
int kernel_sem_signal(accel_semaphore_t *sem, uint64_t value,
		      const char *caller);
int kernel_sem_fail(accel_semaphore_t *sem, int error, const char *message);
int kernel_sem_wait(accel_scheduler_t *s, uint32_t count,
		    const struct accel_sched_point *p, uint32_t flags,
		    int64_t deadline, uint32_t *index);
int kernel_sem_export_fd(accel_semaphore_t *sem, int *fd);
int kernel_sem_import_fd(accel_scheduler_t *s, int fd,
			 accel_semaphore_t **out);
int kernel_sem_export_sync_file(accel_semaphore_t *sem, uint64_t value,
				int *fd, const char *caller);
int kernel_sem_set_deadline(accel_semaphore_t *sem, uint64_t value,
			    int64_t deadline);
int kernel_sem_import_sync_file(accel_semaphore_t *sem, uint64_t value,
				int fd);

/* sched_kernel_job.c */
uint32_t kernel_failed_wait(struct accel_sched_job *job, int want,
			    int *error, bool *settled);
void kernel_resolve_failure(struct accel_sched_kernel *k, accel_semaphore_t *sem,
			    int error);
bool kernel_drop_passed_signals(struct kernel_job *r);
bool kernel_drop_deadline(struct kernel_job *r);
void kernel_refusal_message(struct accel_sched_kernel *k, struct kernel_job *r, int err);
int kernel_ring_flush_locked(struct accel_sched_kernel *k);
struct io_uring_sqe *kernel_get_sqe_locked(struct accel_sched_kernel *k);
void kernel_sq_drain(struct accel_sched_kernel *k);
int kernel_enter_submit(struct accel_sched_kernel *k, struct kernel_job *r);
int kernel_job_submit(accel_scheduler_t *s, struct accel_sched_job *job);
void kernel_job_complete(accel_scheduler_t *s, struct accel_sched_job *job,
			 int status, const char *msg);
void kernel_dev_wake(struct accel_sched_kernel *k);
void kernel_sem_device_promise(accel_semaphore_t *sem, const void *domain,
			       uint64_t value, uint64_t token);
int kernel_job_device_wait(accel_scheduler_t *s, struct accel_sched_job *job,
			   uint64_t *token);
int kernel_executor_create(accel_scheduler_t *s, const char *name,
			   const struct accel_sched_queue_params *params,
			   struct accel_sched_executor **out);
void kernel_executor_destroy(struct accel_sched_executor *ex);

/* sched_kernel_reaper.c */
int kernel_reaper_start_locked(struct accel_sched_kernel *k);
/* Events taken by one fetch (the reaper's, or a COMPLETE's). */
#define KERNEL_FETCH_MAX 64

void kernel_release(struct accel_sched_kernel *k, struct kernel_job *r, uint32_t id);
void kernel_handle_events_locked(struct accel_sched_kernel *k,
				 const struct accel_job_event *ev, uint32_t count);
void kernel_reaper_stop(struct accel_sched_kernel *k);

#endif /* ACCEL_SRC_SCHED_KERNEL_H */
