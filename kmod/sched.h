/* SPDX-License-Identifier: GPL-2.0 */
/*
 * accelsched: engines, queues and jobs. See sched.c.
 */
#ifndef _ACCEL_SCHED_H
#define _ACCEL_SCHED_H

#include <linux/dma-fence.h>
#include <linux/kobject.h>
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
 * @kobj:     its sysfs directory, /sys/kernel/accelsched/engines/<name>/;
 *            its release frees the engine.
 * @pinned:   the administrator configured it: a reference held until the
 *            module goes, so that the configuration outlives its queues
 *            (accel_engines_lock).
 * @credits:  the most released jobs in flight (set by the administrator).
 * @in_flight: released and not completed.
 * @rq:       per priority class, the tenants (&struct accel_entity) with
 *            runnable jobs, by tenant vruntime.
 * @nr_on_rq: the tenants in @rq, all classes: 0 when nothing is runnable.
 * @entities: every &struct accel_entity of the engine.
 * @min_vruntime: per class, the floor a tenant that becomes runnable starts
 *            from (so an idle tenant cannot bank time and then starve others).
 * @ready:    jobs whose last wait was reached in a fence callback.
 * @kick:     drains @ready and releases what it can (process context);
 *            queued, it holds an engine reference.
 * @released: the released jobs, by expiry.
 * @timeout_work: fails the jobs of @released past their expiry
 *            (@timeout_armed: queued, to run at @timeout_at, no later than
 *            the first of them expires); it holds no engine reference:
 *            freeing the engine cancels it.
 * @timeout_at: when @timeout_work runs, while @timeout_armed.
 * @busy_ns:  engine time its jobs consumed.
 * @nr_released: jobs released.
 * @nr_completed: jobs completed with status 0 (a pipelined job completed
 *	before its waits: once they are reached, none failed).
 * @nr_failed: jobs failed: an error status, a failed wait, or cancelled;
 *	each job counts once in these two or @nr_timedout.
 * @nr_timedout: jobs failed by their timeout (not counted failed too).
 * @latency_ns: the sum of its released jobs' latencies, each the time from
 *            runnable to released (see accel_job_release_locked()).
 * @followers: pending jobs to pipeline once their promisers are released
 *            (@nr_followers of them; @follow_retry: the kick tries them).
 * @completing: COMPLETEs between reaching their points and making what
 *            that readied runnable (accel_engine_ready_now()); each holds
 *            its job's credit until then.
 * @boosted:  per priority class, the queues that a runnable job raised to
 *            it by priority inheritance, in the order they were raised;
 *            served after the class's own queues (see sched_inherit.c).
 * @dl:       per priority class, the queues with a runnable job that has a
 *            deadline, by the latest start of the first such job
 *            (&accel_queue.dl_lst; see sched_deadline.c).
 * @nr_deadlines_met: jobs with a deadline completed by it.
 * @nr_deadlines_missed: jobs with a deadline completed after it, or timed
 *            out.
 * @nr_ahead: releases made ahead of fair-share order for a deadline.
 *
 * The counters run from the engine's creation; sysfs reads them without
 * the lock.
 */
struct accel_engine {
	struct list_head link;
	struct kref ref;
	char name[32];
	struct kobject kobj;
	bool pinned;
	bool dying;
	spinlock_t lock;
	u32 credits;
	u32 in_flight;
	struct rb_root_cached rq[3];
	u32 nr_on_rq;
	struct list_head entities;
	u64 min_vruntime[3];
	struct llist_head ready;
	struct accel_pool pool;
	struct work_struct kick;
	struct list_head released;
	struct delayed_work timeout_work;
	bool timeout_armed;
	u64 timeout_at;
	u64 busy_ns;
	u64 nr_released, nr_completed, nr_failed, nr_timedout;
	u64 latency_ns;
	struct list_head followers;
	u32 nr_followers;
	bool follow_retry;
	atomic_t completing;
	struct list_head boosted[3];
	struct rb_root_cached dl[3];
	u64 nr_deadlines_met, nr_deadlines_missed, nr_ahead;
};

/**
 * struct accel_tenant_stats - a tenant's counters on one CPU.
 * @busy_ns:  engine time of its jobs over all engines, since it was made.
 * @nr_released: its jobs released, over all engines.
 * @latency_ns: the sum of their latencies, runnable to released.
 */
struct accel_tenant_stats {
	u64 busy_ns;
	u64 nr_released;
	u64 latency_ns;
};

/**
 * struct accel_tenant - who shares an engine: a cgroup (v2), or one file.
 * @link:     in the global tenant list (accel_tenants_lock); cgroup tenants.
 * @ref:      one per file, one more while @pinned.
 * @kobj:     a cgroup tenant's /sys/kernel/accelsched/tenants/<cgroup-id>/;
 *            its release frees the tenant.
 * @cgroup_id: the cgroup's id; 0 for a per-file tenant.
 * @weight:   its share of an engine's class against other tenants,
 *            [ACCEL_WEIGHT_MIN, ACCEL_WEIGHT_MAX], 100 by default (READ_ONCE:
 *            the administrator may change it at any time).
 * @inv_weight: accel_inv_weight(@weight), what a charge multiplies by
 *            (READ_ONCE; written after @weight).
 * @pinned:   the administrator configured it (accel_tenants_lock).
 * @nr_queues: its queues, over all its files (limit: tenant_max_queues).
 * @nr_jobs:  its jobs submitted and not completed (limit: tenant_max_jobs).
 * @stats:    per CPU, its counters (&struct accel_tenant_stats).
 *
 * The counters are per CPU and summed when read: a tenant spans engines,
 * whose locks differ, and a shared atomic would be two more locked
 * instructions on every release (accel_queue_count_release_locked()).
 */
struct accel_tenant {
	struct list_head link;
	struct kref ref;
	struct kobject kobj;
	u64 cgroup_id;
	u32 weight;
	u64 inv_weight;
	bool pinned;
	bool dying;
	atomic_t nr_queues;
	atomic_t nr_jobs;
	struct accel_tenant_stats __percpu *stats;
};

/**
 * struct accel_entity - one tenant's queues of one class on one engine.
 * @link:     in &accel_engine.entities.
 * @tenant:   the tenant (its files keep it alive longer than any queue).
 * @priority: the class.
 * @nr_queues: queues using it; it goes with the last.
 * @vruntime: engine time its queues consumed, scaled by 1/tenant weight.
 * @min_vruntime: the floor a queue of it that becomes runnable starts from.
 * @rb:       in the engine's rq[@priority] while @on_rq.
 * @on_rq:    one of its queues is runnable.
 * @rq:       its runnable queues, by queue vruntime.
 *
 * All under the engine's lock.
 */
struct accel_entity {
	struct list_head link;
	struct accel_tenant *tenant;
	u32 priority;
	u32 nr_queues;
	u64 vruntime;
	u64 min_vruntime;
	struct rb_node rb;
	bool on_rq;
	struct rb_root_cached rq;
};

/**
 * struct accel_file_engine - what one file's jobs consumed of one engine,
 * for the file's whole life (fdinfo): it outlives the file's queues.
 * @link:     in the file's list: added under its sched_mutex, read
 *            without it by fdinfo (RCU list), removed with the file.
 * @engine:   the engine; a reference.
 * @busy_ns:  engine time.
 * @nr_released: its jobs released.
 * @latency_ns: the sum of their latencies, runnable to released.
 *
 * The counters are written under the engine's lock.
 */
struct accel_file_engine {
	struct list_head link;
	struct accel_engine *engine;
	u64 busy_ns;
	u64 nr_released;
	u64 latency_ns;
};

/**
 * struct accel_queue - a submission queue of one file.
 * @afile:    the file (the queue never outlives it).
 * @engine:   the engine; a reference.
 * @ent:      its tenant's entity on the engine for its class.
 * @fstat:    its file's totals on the engine.
 * @handle:   its handle in the file.
 * @priority: its class.
 * @weight:   its share among its tenant's queues in the class.
 * @inv_weight: accel_inv_weight(@weight), what a charge multiplies by.
 * @vruntime: engine time consumed, scaled by 1/@weight (engine lock).
 * @busy_ns:  engine time consumed (engine lock).
 * @avg_ns:   running average of its jobs' engine time (engine lock).
 * @predicted_ns: the sum of the predictions its completed jobs carried
 *            (ACCEL_FEATURE_JOB_PREDICTION; engine lock).
 * @predicted_busy_ns: the engine time those same jobs took (engine lock):
 *            against @predicted_ns, how well its executor predicts.
 * @rb:       in @ent->rq while @on_rq.
 * @on_rq:    it has runnable jobs and sits in its entity's run queue.
 * @runnable: its runnable jobs, in submission order (engine lock).
 * @nr_runnable: jobs in @runnable (engine lock).
 * @waiting:  its jobs armed with a wait not yet reached, still pending, in
 *            the order they were armed (engine lock; see
 *            accel_job_settle_earlier()).
 * @nr_in_flight: its jobs released and not completed (engine lock).
 * @nr_released: its jobs released since it was made (engine lock).
 * @latency_ns: the sum of their latencies, runnable to released (engine
 *            lock).
 * @dead:     destroyed: no new jobs.
 * @answer_seq: the next number of a release answered through io_uring
 *            (engine lock).
 * @blink:    in its engine's &accel_engine.boosted[@boost] while one of its
 *            runnable jobs is boosted and it is on its run queue (engine
 *            lock).
 * @boost:    the best class its boosted runnable jobs inherited (engine
 *            lock; meaningful while @nr_boosted).
 * @nr_boosted: its runnable jobs that are boosted (engine lock).
 * @pred_enq: the predicted time of every job added to @runnable so far
 *            (engine lock; see &accel_sched_job.pred_end).
 * @pred_deq: the same, up to the last job released from @runnable.
 * @dl_jobs:  its runnable jobs with a deadline, in submission order.
 * @dl_rb:    in its engine's &accel_engine.dl[@priority] while @on_dl.
 * @on_dl:    @dl_jobs is not empty and it is on its run queue.
 * @dl_lst:   the latest start of its first job with a deadline: that
 *            deadline less the predicted time of its runnable jobs up to
 *            the job.
 * @nr_deadlines_met: its jobs with a deadline completed by it.
 * @nr_deadlines_missed: completed after it, or timed out.
 */
struct accel_queue {
	struct accel_file *afile;
	struct accel_engine *engine;
	struct accel_entity *ent;
	struct accel_file_engine *fstat;
	u32 handle;
	u32 priority;
	u32 weight;
	u64 inv_weight;
	u64 vruntime;
	u64 busy_ns;
	u64 avg_ns;
	u64 predicted_ns;
	u64 predicted_busy_ns;
	struct rb_node rb;
	bool on_rq;
	struct list_head runnable;
	u32 nr_runnable;
	struct list_head waiting;
	u32 nr_in_flight;
	u64 nr_released;
	u64 latency_ns;
	bool dead;
	u32 answer_seq;
	struct list_head blink;
	u32 boost;
	u32 nr_boosted;
	u64 pred_enq, pred_deq;
	struct list_head dl_jobs;
	struct rb_node dl_rb;
	bool on_dl;
	u64 dl_lst;
	u64 nr_deadlines_met, nr_deadlines_missed;
};

void accel_sched_point_deadline(struct accel_syncobj *s, u64 point,
				u64 deadline);
int accel_sched_file_tenant(struct accel_file *afile);
int accel_sched_init(void);
void accel_sched_unpin(void);
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
int accel_ioctl_job_complete_fetch(struct accel_file *afile, void *data);
int accel_uring_job_submit(struct accel_file *afile, struct io_uring_cmd *cmd,
			   unsigned int issue_flags);
int accel_uring_job_submit_inline(struct accel_file *afile,
				  struct io_uring_cmd *cmd,
				  unsigned int issue_flags);
int accel_uring_job_complete(struct accel_file *afile, struct io_uring_cmd *cmd);
void accel_uring_job_cancel(struct io_uring_cmd *cmd, unsigned int issue_flags);

#endif /* _ACCEL_SCHED_H */
