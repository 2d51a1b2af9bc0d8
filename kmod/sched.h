/* SPDX-License-Identifier: GPL-2.0 */
/*
 * accelsched: engines, queues and jobs. See sched.c.
 */
#ifndef _ACCEL_SCHED_H
#define _ACCEL_SCHED_H

#include <linux/dma-fence.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/llist.h>
#include <linux/rbtree.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/workqueue.h>

struct accel_file;
struct accel_syncobj;
struct io_uring_cmd;

/**
 * struct accel_engine - a scheduling domain shared by every file naming it.
 * @link:     in the global engine list (accel_engines_lock).
 * @ref:      one per queue bound to it.
 * @name:     its name.
 * @lock:     protects everything below, the scheduling fields of its queues
 *            and the state of their jobs. Taken with interrupts off; fence
 *            locks nest inside it, never outside.
 * @credits:  the most released jobs in flight.
 * @in_flight: released and not completed.
 * @rq:       per priority class, the queues with runnable jobs, by vruntime.
 * @min_vruntime: per class, the floor a queue that becomes runnable starts
 *            from (so an idle queue cannot bank time and then starve others).
 * @ready:    jobs whose last wait was reached in a fence callback.
 * @kick:     drains @ready and releases what it can (process context);
 *            queued, it holds an engine reference.
 * @released: the released jobs, by deadline.
 * @timeout_work: fails the jobs of @released past their deadline; armed,
 *            it holds an engine reference (@timeout_armed).
 * @busy_ns, @nr_released, @nr_completed, @nr_failed, @nr_timedout: counters.
 */
struct accel_engine {
	struct list_head link;
	struct kref ref;
	char name[32];
	spinlock_t lock;
	u32 credits;
	u32 in_flight;
	struct rb_root_cached rq[3];
	u64 min_vruntime[3];
	struct llist_head ready;
	struct llist_head pool;
	spinlock_t pool_lock;
	atomic_t pool_count;
	struct work_struct kick;
	struct list_head released;
	struct delayed_work timeout_work;
	bool timeout_armed;
	u64 busy_ns;
	u64 nr_released, nr_completed, nr_failed, nr_timedout;
};

/**
 * struct accel_queue - a submission queue of one file.
 * @afile:    the file (the queue never outlives it).
 * @engine:   the engine; a reference.
 * @handle:   its handle in the file.
 * @priority: its class.
 * @weight:   its share in the class.
 * @vruntime: engine time consumed, scaled by 1/@weight (engine lock).
 * @busy_ns:  engine time consumed (engine lock).
 * @avg_ns:   running average of its jobs' engine time (engine lock).
 * @rb:       in @engine->rq[@priority] while @on_rq.
 * @on_rq:    it has runnable jobs and sits in the engine's run queue.
 * @runnable: its runnable jobs, in submission order (engine lock).
 * @dead:     destroyed: no new jobs.
 * @answer_seq: the next number of a release answered through io_uring
 *            (engine lock).
 */
struct accel_queue {
	struct accel_file *afile;
	struct accel_engine *engine;
	u32 handle;
	u32 priority;
	u32 weight;
	u64 vruntime;
	u64 busy_ns;
	u64 avg_ns;
	struct rb_node rb;
	bool on_rq;
	struct list_head runnable;
	bool dead;
	u32 answer_seq;
};

struct accel_sched_file_stats {
	const char *engine;
	u64 busy_ns;
};

int accel_sched_init(void);
void accel_sched_fini(void);
void accel_sched_file_init(struct accel_file *afile);
void accel_sched_file_release(struct accel_file *afile);
void accel_sched_show_fdinfo(struct seq_file *m, struct accel_file *afile);
__poll_t accel_sched_poll(struct accel_file *afile, struct file *file,
			  struct poll_table_struct *wait);
void accel_sched_monitor(struct accel_file *afile, bool *again);

int accel_ioctl_queue_create(struct accel_file *afile, void *data);
int accel_ioctl_queue_destroy(struct accel_file *afile, void *data);
int accel_ioctl_job_submit(struct accel_file *afile, void *data);
int accel_ioctl_job_complete(struct accel_file *afile, void *data);
int accel_ioctl_job_fetch(struct accel_file *afile, void *data);
int accel_uring_job_submit(struct accel_file *afile, struct io_uring_cmd *cmd,
			   unsigned int issue_flags);
int accel_uring_job_complete(struct accel_file *afile, struct io_uring_cmd *cmd);
void accel_uring_job_cancel(struct io_uring_cmd *cmd, unsigned int issue_flags);

#endif /* _ACCEL_SCHED_H */
