/* SPDX-License-Identifier: GPL-2.0 */
/*
 * accelsched: what the scheduler's files share, and nothing else includes:
 * sched.c (the fronts), sched_engine.c, sched_inherit.c, sched_deadline.c,
 * sched_job.c, sched_timeout.c and sched_tenant.c. The rest of the module sees sched.h. See sched.c.
 */
#ifndef _ACCEL_SCHED_INTERNAL_H
#define _ACCEL_SCHED_INTERNAL_H

#include <linux/atomic.h>
#include <linux/dma-fence.h>
#include <linux/kobject.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/llist.h>
#include <linux/math64.h>
#include <linux/mutex.h>
#include <linux/srcu.h>
#include <linux/stddef.h>
#include <linux/sysfs.h>
#include <linux/types.h>

#include "internal.h"

struct dentry;
struct io_uring_cmd;
struct kmem_cache;

/* Inline room for waits and signals: most jobs need no second allocation. */
#define ACCEL_JOB_INLINE 4

enum accel_job_state {
	ACCEL_JOB_PENDING,   /* waits not all reached */
	ACCEL_JOB_RUNNABLE,  /* in its queue's runnable list */
	ACCEL_JOB_RELEASED,  /* with its executor */
	ACCEL_JOB_TIMEDOUT,  /* failed by its timeout; awaits a late COMPLETE */
	ACCEL_JOB_FINISHING, /* pipelined, completed before its waits */
	ACCEL_JOB_DONE,
};

struct accel_sched_job;

struct accel_job_dep {
	struct dma_fence_cb cb;
	struct dma_fence *fence;
	struct accel_sched_job *job;
	struct accel_syncobj *s;  /* until armed: for pipelining */
	/*
	 * The job that promised the point when this one was armed, with a
	 * reference, while this one is pending (priority inheritance, see
	 * sched_inherit.c): read under the engine lock of this one.
	 */
	struct accel_sched_job *promiser;
	u64 point;
};

struct accel_job_sig {
	struct accel_syncobj *s;
	u64 point;
};

struct accel_event_node {
	struct list_head link;
	struct accel_job_event ev;
};

/**
 * struct accel_sched_job - one job.
 * @ref:        the id table's, the ready list's, a pending timeout's, a
 *              pending uring_cmd's, and short-lived lookups'.
 * @engine:     its queue's engine; a reference (the job may outlive its
 *              queue on the ready list or in a timeout).
 * @queue:      its queue; only dereferenced while the job is not DONE.
 * @afile:      its file; likewise.
 * @id:         its id in the file (for COMPLETE and events).
 * @qhandle:    its queue's handle (for traces; the queue may go first).
 * @priority:   its queue's class.
 * @boost:      the class it inherited from a waiter, while @boosted (engine
 *              lock; see sched_inherit.c).
 * @boosted:    it is released as of class @boost until its release.
 * @qboost:     runnable and counted in its queue's &accel_queue.nr_boosted.
 * @seq:        submission order in the file.
 * @user_data:  the executor's tag.
 * @timeout_ns: how long it may stay released.
 * @state:      &enum accel_job_state (engine lock).
 * @error:      the first error among its waits (atomic).
 * @deps_left:  waits not yet reached, plus one while arming.
 * @ready:      on the engine's ready list, its last wait reached.
 * @qlink:      in its queue's runnable list.
 * @wlink:      in its queue's &accel_queue.waiting while pending with a
 *              wait not reached when it was armed.
 * @cmd:        its io_uring SUBMIT while pending (engine lock).
 * @task:       the task that issued @cmd.
 * @issuing:    submitted through io_uring, or with ACCEL_JOB_F_ANSWER,
 *              and the submission still runs (a release then is returned
 *              by the submission itself; for @answer, only while the
 *              file has no event queued).
 * @released_inline: see @issuing.
 * @answer:     ACCEL_JOB_F_ANSWER (with @events).
 * @answer_seq: its place among its queue's releases answered through
 *              io_uring (see accel_job_release_locked()).
 * @runnable_ns: when it became runnable (its latency runs from there).
 * @release_ns: when it was released.
 * @charged:    engine time charged at release, corrected at COMPLETE.
 * @pipelined:  made runnable before its waits were reached, because each is
 *              promised by a job of the same file already released to the
 *              same engine (the executor orders it after them).
 * @flink:      on its engine's follower list, while pending for promisers
 *              not yet released (accel_job_try_pipeline()).
 * @has_followers: a follower waits for this job's release.
 * @events_closed: completed after it timed out: no event of it is queued
 *              any more (&accel_file.events_lock).
 * @events:     submitted with ACCEL_JOB_F_EVENTS: released by an event
 *              (even through io_uring), and failed by one if never
 *              released (accel_job_failed()).
 * @status:     a pipelined job's COMPLETE status, while it waits for its
 *              waits (FINISHING).
 * @deadline_ns: its deadline, absolute CLOCK_MONOTONIC ns, or 0 (engine
 *              lock once armed: set at submission, lowered by a deadline
 *              set on a point it promised or passed on by a waiter; see
 *              sched_deadline.c).
 * @pred_end:   while runnable: its queue's &accel_queue.pred_enq once it
 *              was added, so that pred_end less &accel_queue.pred_deq is
 *              the predicted time of its queue's runnable jobs up to it.
 * @dlink:      in its queue's &accel_queue.dl_jobs while runnable with a
 *              deadline.
 * @expires:    when a released job times out.
 * @tlink:      in the engine's in-flight list, by @expires.
 * @ev_released: its RELEASED event, queued for the executor.
 * @ev_timedout: its TIMEDOUT event.
 * @nwaits:     waits in @deps.
 * @nsignals:   signals in @sigs.
 * @deps:       the waits: @deps_inline, or allocated beyond it.
 * @sigs:       the signals: @sigs_inline, or allocated beyond it.
 * @deps_inline: room for the first waits.
 * @sigs_inline: room for the first signals.
 *
 * A job from the engine's pool clears only @zeroed (about a third of
 * it), the fields read before anything writes them; accel_job_init()
 * writes the head for every job, and must write a field added to it. The
 * events are written whole when queued (their links, initialised when the
 * job came from the slab, are unlinked with list_del_init() whenever they
 * leave the file's list, so they are empty again when the job is freed),
 * and only the first @nwaits / @nsignals entries of the inline arrays are
 * ever read.
 */
struct accel_sched_job {
	/* Written by accel_job_init() for every new job, not cleared. */
	struct kref ref;
	struct accel_engine *engine;
	struct accel_queue *queue;
	struct accel_file *afile;
	u32 id;
	u32 qhandle;
	u32 priority;
	enum accel_job_state state;
	u64 seq;
	u64 user_data;
	u64 timeout_ns;
	u64 predicted_ns;
	/*
	 * Initialised when the job comes from the slab, not for a pooled
	 * one: every list a job joins, it leaves with list_del_init(), so
	 * each is empty again when the job is freed (checked there on the
	 * debug kernel, which frees every job to the slab: see pool.h).
	 */
	struct list_head qlink;
	struct list_head wlink;
	struct list_head flink;
	struct list_head dlink;
	struct list_head tlink;
	struct accel_job_dep *deps;
	struct accel_job_sig *sigs;
	bool issuing;
	bool events;
	bool answer;
	/* Cleared for every new job: read before anything writes them. */
	struct_group(zeroed,
		u32 boost;
		bool boosted;
		bool qboost;
		bool released_inline;
		bool pipelined;
		bool has_followers;
		bool events_closed;
		atomic_t error;
		atomic_t deps_left;
		u32 answer_seq;
		int status;
		u32 nwaits, nsignals;
		struct llist_node ready;
		struct io_uring_cmd *cmd;
		struct task_struct *task;
		u64 release_ns;
		u64 deadline_ns;
		u64 pred_end;
	);
	/*
	 * Not cleared for a new job: each is written before it is read.
	 * @runnable_ns is read only while RUNNABLE, or at its release, and
	 * @expires and @charged only once released: each is written on the
	 * way there (accel_job_runnable_locked(), __accel_job_release_locked()).
	 */
	u64 runnable_ns;
	u64 expires;
	u64 charged;
	struct accel_event_node ev_released, ev_timedout;
	struct accel_job_dep deps_inline[ACCEL_JOB_INLINE];
	struct accel_job_sig sigs_inline[ACCEL_JOB_INLINE];
};

struct accel_submit_pdu {
	struct accel_sched_job *job;
	int res;
	u32 seq;
};

static inline const char *accel_job_engine(struct accel_sched_job *job)
{
	return job->engine->name;
}

/*
 * A job's trace event (job_submit, job_runnable, job_release,
 * job_timeout), its arguments read out of line (sched.c): inlined, GCC
 * loaded them ahead of the tracepoint's static branch, six loads per
 * event on every submission, traced or not (scripts/insn-vm.sh
 * --profile uring_job_submit).
 */
#define ACCEL_JOB_TRACE(ev, job)					\
	do {								\
		if (trace_job_##ev##_enabled())				\
			accel_job_trace_##ev(job);			\
	} while (0)
void __cold accel_job_trace_submit(struct accel_sched_job *job);
void __cold accel_job_trace_runnable(struct accel_sched_job *job);
void __cold accel_job_trace_release(struct accel_sched_job *job);
void __cold accel_job_trace_timeout(struct accel_sched_job *job);

/*
 * The read-only counters of engines and tenants (busy_ns, released,
 * latency_ns, ...): one show each for an engine's u64 (written under its
 * lock, read here without it) and a tenant's per-CPU sum, finding the
 * counter at its offset in the object (in &struct accel_tenant_stats for
 * a tenant).
 */
struct accel_counter_attr {
	struct kobj_attribute attr;
	size_t offset;
};

static inline size_t accel_counter_offset(struct kobj_attribute *attr)
{
	return container_of(attr, struct accel_counter_attr, attr)->offset;
}

#define ACCEL_COUNTER_ATTR(_obj, _name, _field)                              \
	static struct accel_counter_attr accel_##_obj##_##_name = {           \
		.attr = __ATTR(_name, 0444, accel_##_obj##_counter_show, NULL), \
		.offset = offsetof(struct accel_##_obj, _field),              \
	}

/* sched.c: module parameters, the sysfs root, fdinfo. */
extern unsigned int accel_max_jobs;
extern unsigned int accel_default_credits;
extern unsigned int accel_tenant_max_jobs;
extern bool accel_root_tenant_per_file;
extern unsigned int accel_job_timeout_ms;
extern atomic_t accel_sysfs_gone;
extern struct kobject *accel_sysfs_engines, *accel_sysfs_tenants;
extern const char *const accel_priority_names[ACCEL_PRIORITY_COUNT];

void accel_sysfs_removed(void);
void accel_sysfs_wait_removal(int gen);
int accel_sysfs_admin_u32(const char *buf, u32 min, u32 max, u32 *v);
bool accel_sysfs_pin_locked(struct list_head *link, bool dying,
			    bool *pinned, struct kref *ref);

/* sched_engine.c */
extern struct mutex accel_engines_lock;
extern struct list_head accel_engines;

void accel_engine_pool_put(struct accel_engine *e, struct accel_sched_job *job);
void accel_engine_put(struct accel_engine *e);
bool accel_engine_name_valid(const char *name);
struct accel_engine *accel_engine_get(const char *name, u32 credits);
void accel_rq_add_locked(struct accel_engine *e, struct accel_queue *q);
void accel_rq_del_locked(struct accel_engine *e, struct accel_queue *q);
void accel_queue_charge_slow_locked(struct accel_queue *q, s64 ns);
void accel_engine_follow(struct accel_engine *e);
void accel_engine_schedule_locked(struct accel_engine *e);
void accel_engine_ready_now(struct accel_engine *e);

/* What accel_engine_take_ready_locked() took off an engine's ready list. */
struct accel_ready_take {
	struct llist_node *keep;		/* made runnable: their references */
	struct llist_node *back, *back_last;	/* for the kick */
};

void accel_engine_take_ready_locked(struct accel_engine *e,
				    struct accel_ready_take *took);
void accel_engine_took_ready(struct accel_engine *e,
			     struct accel_ready_take *took, bool kick);
void accel_engine_debugfs_init(struct dentry *dir);

/* sched_job.c */
extern struct kmem_cache *accel_job_cache;

void accel_job_put(struct accel_sched_job *job);
bool accel_event_push_locked(struct accel_sched_job *job,
			     struct accel_event_node *n, u32 type, int status);
void accel_job_uncount(struct accel_sched_job *job);
struct accel_sched_job *accel_event_job(struct accel_event_node *n);
void accel_job_release_locked(struct accel_sched_job *job, u64 now);
bool accel_job_ready_locked(struct accel_sched_job *job);
void accel_job_unlink(struct accel_sched_job *job);
u64 accel_job_signal(struct accel_sched_job *job, int status);
void accel_job_failed(struct accel_sched_job *job, int error);
void accel_job_cancel(struct accel_sched_job *job, int error);
/**
 * struct accel_job_args - what a submission asks for: the fields of a
 * struct accel_job, with its points either in user memory (@uwaits,
 * @usignals: ACCEL_IOCTL_JOB_SUBMIT, ACCEL_URING_CMD_JOB_SUBMIT) or copied
 * already (@kpoints, the waits then the signals: an inline SUBMIT's, read
 * from its SQE).
 */
struct accel_job_args {
	u64 user_data;
	u64 timeout_ns;
	u64 uwaits, usignals;
	const struct accel_point *kpoints;
	u32 predicted_us;
	u32 nwaits, nsignals;
	u32 queue;
	bool events;
	bool answer;
};

/* @a from a struct accel_job read from user memory; -EINVAL. */
static inline int accel_job_args_user(struct accel_job_args *a,
				      const struct accel_job *uj)
{
	if (uj->flags & ~ACCEL_JOB_FLAGS_ALL ||
	    uj->predicted_us > ACCEL_JOB_PREDICTION_MAX_US)
		return -EINVAL;
	*a = (struct accel_job_args){
		.user_data = uj->user_data, .timeout_ns = uj->timeout_ns,
		.predicted_us = uj->predicted_us,
		.uwaits = uj->waits, .usignals = uj->signals,
		.nwaits = uj->nwaits, .nsignals = uj->nsignals,
		.queue = uj->queue, .events = uj->flags & ACCEL_JOB_F_EVENTS,
		.answer = uj->flags & ACCEL_JOB_F_ANSWER,
	};
	return 0;
}

int accel_job_submit(struct accel_file *afile, const struct accel_job_args *args,
		     u32 __user *uid, struct io_uring_cmd *cmd);

/*
 * A submission runs from its queue's lookup to the end of arming in a
 * read section of this SRCU (sched.c): see there.
 */
extern struct srcu_struct accel_submit_srcu;

/*
 * The two io_uring SUBMITs, around their accel_job_submit(): the SQE's
 * (sched_job.c, where the submission is compiled) and the one that points
 * at a struct accel_job (sched.c). Inlined into each, so that the inline
 * SUBMIT is one function from its uring_cmd to its answer.
 *
 * accel_uring_submit_begin() enters the read section. A SUBMIT issued by
 * io-wq (IOSQE_ASYNC, or a punt), not by the submitter, is made
 * cancelable first: a release answered from task work runs in the
 * submitter as soon as the command is installed, so it must be cancelable
 * before, and an answer at once (a refusal too) is then posted here
 * (done() takes it off the cancelable list), as accel_uring_wait() does.
 * A cancel meanwhile finds no job yet and leaves it to a later round.
 *
 * accel_uring_submit_end() leaves it and returns the SUBMIT's answer, or
 * -EIOCBQUEUED once the command is pending: the release (or a failure)
 * completes it.
 */
static __always_inline int accel_uring_submit_begin(struct io_uring_cmd *cmd,
						    unsigned int issue_flags)
{
	if (issue_flags & IO_URING_F_UNLOCKED) {
		accel_uring_cmd_pdu(cmd, struct accel_submit_pdu)->job = NULL;
		accel_uring_cmd_mark_cancelable(cmd, issue_flags);
	}
	return srcu_read_lock(&accel_submit_srcu);
}

static __always_inline int accel_uring_submit_end(struct accel_file *afile,
						  struct io_uring_cmd *cmd,
						  unsigned int issue_flags,
						  int idx, int ret)
{
	bool early = issue_flags & IO_URING_F_UNLOCKED;

	srcu_read_unlock(&accel_submit_srcu, idx);
	if (ret != -EIOCBQUEUED) {
		if (!early)
			return ret;
		accel_uring_cmd_done(cmd, ret, 0, issue_flags);
		return -EIOCBQUEUED;
	}
	if (!early)
		accel_uring_cmd_mark_cancelable(cmd, issue_flags);
	if (!ACCEL_URING_CANCELABLE)
		queue_delayed_work(accel_wq, &afile->monitor,
				   msecs_to_jiffies(ACCEL_MONITOR_MS));
	return -EIOCBQUEUED;
}
struct accel_sched_job *accel_job_lookup(struct accel_file *afile, u32 id);
struct accel_sched_job *accel_job_next(struct accel_file *afile, u32 *pos);
int accel_job_do_complete(struct accel_file *afile,
			  const struct accel_job_complete *args, u64 *passed);

/* sched_timeout.c */
void accel_timeout_arm_locked(struct accel_engine *e, u64 expires);
void accel_timeout_del_locked(struct accel_engine *e,
			      struct accel_sched_job *job);
void accel_engine_timeout(struct work_struct *work);

/* sched_inherit.c */
extern bool accel_inherit;

void __accel_job_find_promisers(struct accel_sched_job *job);
void __accel_job_drop_promisers(struct accel_sched_job *job);

/*
 * Only a job with waits has promisers: every submission and every free
 * asks, and most jobs of a stream have none.
 */
static inline void accel_job_find_promisers(struct accel_sched_job *job)
{
	if (job->nwaits)
		__accel_job_find_promisers(job);
}

static inline void accel_job_drop_promisers(struct accel_sched_job *job)
{
	if (job->nwaits)
		__accel_job_drop_promisers(job);
}

void accel_job_inherit(struct accel_sched_job *job);
void accel_walk_deadline(struct accel_sched_job *job, u64 d);
void accel_job_runnable_boost_locked(struct accel_sched_job *job);
void __accel_job_unboost_locked(struct accel_sched_job *job);

/* The boost of @job ends, if it has one: every release asks, few have. */
static inline void accel_job_unboost_locked(struct accel_sched_job *job)
{
	if (unlikely(job->boosted))
		__accel_job_unboost_locked(job);
}

/* sched_deadline.c */
void accel_queue_dl_update_locked(struct accel_queue *q);
void accel_job_dl_runnable_locked(struct accel_sched_job *job, bool tail);
void accel_job_dl_leave_locked(struct accel_sched_job *job, bool released);
struct accel_queue *accel_engine_dl_pick_locked(struct accel_engine *e, int p,
						struct accel_queue *fair,
						struct accel_entity *fent,
						u64 now);
void accel_job_dl_count_locked(struct accel_sched_job *job, u64 now);
u64 accel_job_dl_passed_locked(struct accel_sched_job *job);
u64 accel_job_set_deadline_locked(struct accel_sched_job *job, u64 d);

/* sched_tenant.c */
extern struct mutex accel_tenants_lock;
extern struct list_head accel_tenants;

void accel_tenant_put(struct accel_tenant *t);

/*
 * The submission's hot path, from accel_job_init() to a release answered
 * in its SUBMIT's CQE, runs these on every job: inline, so that its common
 * case is a few function bodies, not a chain of calls. A call and its
 * return cost more than most of these bodies on kernels built with return
 * thunks or call-depth tracking, and were a fifth of the path in the VM's
 * profile (scripts/profile-vm.sh).
 */

/* The weight that makes vruntime equal engine time. */
#define ACCEL_WEIGHT_UNIT 1024ULL

/*
 * A job from @e's pool, or NULL. Each engine keeps up to ACCEL_ENGINE_POOL
 * jobs freed on it (accel_engine_pool_put()).
 */
static inline struct accel_sched_job *accel_engine_pool_get(struct accel_engine *e)
{
	struct llist_node *n = accel_pool_get(&e->pool);

	return n ? llist_entry(n, struct accel_sched_job, ready) : NULL;
}

/*
 * Whether nothing of @e is runnable: every class's run queue is empty, as
 * @e->nr_on_rq counts them (one load, not one per class, on every
 * submission). Lockdep's kernel checks the count against the trees.
 */
static inline bool accel_engine_idle_locked(struct accel_engine *e)
{
	lockdep_assert_held(&e->lock);
	if (IS_ENABLED(CONFIG_PROVE_LOCKING)) {
		int p, n = 0;

		for (p = 0; p < ACCEL_PRIORITY_COUNT; p++)
			n += !RB_EMPTY_ROOT(&e->rq[p].rb_root);
		WARN_ON_ONCE(!n != !e->nr_on_rq);
	}
	return !e->nr_on_rq;
}

/*
 * The engine's invariant whenever its lock is free: a credit is free only
 * while nothing is runnable. Every section that frees or adds a credit
 * (a COMPLETE, accel_engine_ready_now(), a cancel, the timeout work, the
 * credits attribute) or makes jobs runnable (the kick, a submission)
 * releases what the credits allow before it unlocks: by
 * accel_engine_schedule_locked(), or by accel_job_runnable_locked()'s
 * release at once, which takes a job straight to its executor only on
 * an idle engine with a free credit and otherwise queues it where the
 * held credits keep it. So a submission whose job is not released at
 * once has nothing to release: true here means a section broke the
 * invariant and left a credit idle under runnable jobs.
 */
static inline bool accel_engine_unsettled_locked(struct accel_engine *e)
{
	lockdep_assert_held(&e->lock);
	return e->in_flight < e->credits && !accel_engine_idle_locked(e);
}

/*
 * ACCEL_WEIGHT_UNIT / @weight as a 32.32 fixed-point factor: a charge
 * multiplies by it instead of dividing by the weight, so the release and
 * the COMPLETE on the hot path take no division (a 64-bit divide is tens
 * of cycles; a 64 x 64 -> 128 multiply a few). Exact to 2^-32 of the
 * factor: a charge of an hour (2^42 ns) is off by under a microsecond of
 * vruntime, well inside what separates two queues' turns. No charge is
 * larger, a correction included (a charge and what the job took are each
 * at most its timeout, an hour), so with the factor at most 2^42 (weight
 * 1) the product fits 84 bits and its shifted value a u64.
 */
static inline u64 accel_inv_weight(u32 weight)
{
	return div_u64(ACCEL_WEIGHT_UNIT << 32, weight);
}

/*
 * (@a * @b) >> 32 through the full 128-bit product. On x86-64 one mulq:
 * mul_u64_u64_shr() there is C on unsigned __int128, and a function with
 * a 16-byte-aligned value realigns its stack frame when the kernel keeps
 * an 8-byte stack boundary, as x86-64's does: the inline SUBMIT, which
 * charges at its release, kept a frame pointer and realigned and restored
 * its stack on every call for it (scripts/insn-vm.sh counted this and the
 * two __uninitialized locals of sched_job.c at 7 instructions together).
 * Checked against the __int128 product to the bit, at 0, 2^31, 2^32,
 * 2^42, 2^63 and 2^64 - 1 and their neighbours, and on 10^7 random pairs.
 */
static __always_inline u64 accel_mul_shr32(u64 a, u64 b)
{
#ifdef CONFIG_X86_64
	u64 r;

	asm ("mulq %[b]\n\tshrdq $32, %%rdx, %%rax"
	     : "=a" (r) : "a" (a), [b] "rm" (b) : "rdx", "cc");
	return r;
#else
	return mul_u64_u64_shr(a, b, 32);
#endif
}

static inline u64 accel_vruntime_add(u64 v, s64 ns, u64 inv_weight)
{
	u64 dv = accel_mul_shr32(ns < 0 ? -(u64)ns : ns, inv_weight);

	if (ns >= 0)
		return v + dv;
	return dv > v ? 0 : v - dv;
}

/* The vruntimes alone: the caller keeps the run queues in order. */
static inline void accel_vruntime_charge(struct accel_queue *q, s64 ns)
{
	struct accel_entity *ent = q->ent;

	q->vruntime = accel_vruntime_add(q->vruntime, ns, q->inv_weight);
	ent->vruntime = accel_vruntime_add(ent->vruntime, ns,
					   READ_ONCE(ent->tenant->inv_weight));
}

/*
 * Charge @ns of engine time (may be negative: a correction) to @q, and to
 * its tenant on the engine: the queue by its weight among its tenant's
 * queues, the tenant by its weight among the engine's tenants. Neither on
 * a run queue (a job released as it came, on an engine that keeps up), no
 * tree moves.
 */
static inline void accel_queue_charge_locked(struct accel_queue *q, s64 ns)
{
	lockdep_assert_held(&q->engine->lock);
	if (q->on_rq || q->ent->on_rq)
		accel_queue_charge_slow_locked(q, ns);
	else
		accel_vruntime_charge(q, ns);
}

/*
 * Into @e's list of released jobs, by expiry (usually an append: the
 * same timeout for every job). The engine's timeout work is queued only
 * when it is not, or is queued to run after this job expires: every job
 * with the same timeout expires after one already released, so the work
 * queued for the first job of a busy spell serves the whole spell.
 */
static inline void accel_timeout_add_locked(struct accel_engine *e,
					    struct accel_sched_job *job)
{
	struct accel_sched_job *it;

	lockdep_assert_held(&e->lock);
	job->expires = job->release_ns + job->timeout_ns;
	list_for_each_entry_reverse(it, &e->released, tlink)
		if (it->expires <= job->expires)
			break;
	list_add(&job->tlink, &it->tlink);
	if (!e->timeout_armed || job->expires < e->timeout_at)
		accel_timeout_arm_locked(e, job->expires);
}

#endif /* _ACCEL_SCHED_INTERNAL_H */
