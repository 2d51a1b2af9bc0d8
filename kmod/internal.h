/* SPDX-License-Identifier: GPL-2.0 */
/*
 * accelsched: declarations shared by the module's files. Nothing here is
 * ABI; the ABI is uapi/accelsched.h.
 */
#ifndef _ACCEL_INTERNAL_H
#define _ACCEL_INTERNAL_H

#include <linux/atomic.h>
#include <linux/fs.h>
#include <linux/list.h>
#include <linux/miscdevice.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>

#include "compat.h"
#include <accelsched.h>
#include "idtable.h"
#include "pool.h"
#include "syncobj.h"
#include "sched.h"

/* How often the monitor re-checks pending uring_cmds (kernels without
 * cancelable uring_cmds). */
#define ACCEL_MONITOR_MS 50

/* Queue handles below this are found without the xarray (queue_fast). */
#define ACCEL_QUEUE_FAST 64
/* Syncobj handles below this are found without the xarray (syncobj_fast). */
#define ACCEL_SYNCOBJ_FAST 64

/*
 * Whether @e is an errno userspace may hand the module (a job's status, a
 * syncobj's failure, a NOP's result): negative, within ACCEL_MAX_ERRNO, and
 * not one of the kernel's internal codes (-512..-530: -ERESTARTSYS and
 * friends), which a waiter would get back from its syscall and which would
 * make it restart, or leak ENOIOCTLCMD and the like to userspace.
 */
static inline bool accel_user_errno_ok(int e)
{
	return e < 0 && e >= -ACCEL_MAX_ERRNO && !(e <= -512 && e >= -530);
}

/* The top-level VERSION file, passed by Kbuild as a string literal. */
#ifndef ACCEL_MODULE_VERSION
#error "ACCEL_MODULE_VERSION is not defined: build the module with its Kbuild file, which reads VERSION"
#endif

/**
 * struct accel_device - the one /dev/accelsched instance.
 * @misc:           the misc device; its registration is the module's life.
 * @next_client_id: source of &accel_file.client_id values; never reused
 *                  while the module is loaded.
 */
struct accel_device {
	struct miscdevice misc;
	atomic64_t next_client_id;
};

/**
 * struct accel_file - the state of one open file of /dev/accelsched.
 * @adev:      the device it was opened on.
 * @client_id: unique id of this open file (fdinfo, debugfs, traces).
 *
 * Everything a process creates through the device hangs off its file, so
 * closing the file (or the process dying) releases it all.
 */
struct accel_file {
	struct accel_device *adev;
	u64 client_id;

	/*
	 * Syncobj handles (from 1): the xarray's own lock. syncobj_fast
	 * mirrors the lowest handles, written under that lock and read
	 * under RCU (syncobjs are freed after a grace period): a job's
	 * points are looked up with one load, not an xarray walk, on every
	 * submission.
	 */
	struct xarray syncobjs;
	struct accel_syncobj __rcu *syncobj_fast[ACCEL_SYNCOBJ_FAST];
	/* How many handles it holds, under the xarray's lock (max_syncobjs). */
	u32 nr_syncobjs;
	/* Its sync_file imports still pending (they may outlive it). */
	struct accel_import_quota *imports;

	/*
	 * Pending notifications (notify.c). notify_lock is taken with
	 * interrupts off, inside a fence's lock (a fence callback unlinks
	 * under it), never outside one.
	 */
	spinlock_t notify_lock;
	struct list_head notifies;
	unsigned int nr_notifies;
	wait_queue_head_t notify_wq;
	struct delayed_work monitor;

	/*
	 * Scheduler state (sched*.c). Queues by handle, with the xarray's
	 * own lock; jobs by id, with the id table's (idtable.c);
	 * sched_mutex serialises queue teardown.
	 * events_lock (interrupts off) nests inside an engine's lock.
	 * queue_fast mirrors the queues of the lowest handles, written
	 * under the xarray's lock and read locklessly by submissions: one
	 * load instead of an xarray walk on every job.
	 */
	struct xarray queues;
	struct accel_queue *queue_fast[ACCEL_QUEUE_FAST];
	/* How many handles it holds, under the xarray's lock (max_queues). */
	u32 nr_queues;
	struct accel_idtable jobs;
	atomic_t nr_jobs;
	/* SUBMIT answers queued as task work, their CQEs not yet posted. */
	atomic_t answers_in_transit;
	struct mutex sched_mutex;
	/*
	 * Its tenant (a reference) and per-engine totals: added under
	 * sched_mutex, with list_add_tail_rcu(); fdinfo reads them under RCU.
	 */
	struct accel_tenant *tenant;
	struct list_head engines;
	spinlock_t events_lock;
	struct list_head events;
	wait_queue_head_t events_wq;
	/*
	 * The task in ACCEL_IOCTL_JOB_COMPLETE_FETCH, which fetches the
	 * events its COMPLETE queues: they wake no poller (read locklessly
	 * by accel_event_push_locked(), compared with current).
	 */
	struct task_struct *fetcher;
	/* In the module's list of files, for debugfs's jobs listing. */
	struct list_head link;
};

extern struct accel_device accel_dev;
extern struct workqueue_struct *accel_wq;
extern unsigned int accel_max_syncobjs;
extern unsigned int accel_max_pending_waits;

typedef int (*accel_ioctl_fn)(struct accel_file *afile, void *data);
void accel_ioctl_install_fd(void *data, int fd, struct file *file);

long accel_ioctl(struct file *file, unsigned int cmd, unsigned long arg);
int accel_uring_cmd(struct io_uring_cmd *cmd, unsigned int issue_flags);
int accel_nop(const struct accel_nop *nop);
void accel_fill_info(struct accel_file *afile, struct accel_info *info);

/* syncobj_ioctl.c */
struct accel_syncobj *accel_syncobj_lookup(struct accel_file *afile, u32 handle);
int accel_syncobj_do_signal(struct accel_file *afile,
			    const struct accel_syncobj_signal *args);
int accel_ioctl_syncobj_create(struct accel_file *afile, void *data);
int accel_ioctl_syncobj_destroy(struct accel_file *afile, void *data);
int accel_ioctl_syncobj_query(struct accel_file *afile, void *data);
int accel_ioctl_syncobj_signal(struct accel_file *afile, void *data);
int accel_ioctl_syncobj_fail(struct accel_file *afile, void *data);
int accel_ioctl_syncobj_wait(struct accel_file *afile, void *data);
int accel_ioctl_syncobj_export(struct accel_file *afile, void *data);
int accel_ioctl_syncobj_import(struct accel_file *afile, void *data);
int accel_ioctl_syncobj_export_sync_file(struct accel_file *afile, void *data);
int accel_ioctl_syncobj_import_sync_file(struct accel_file *afile, void *data);
int accel_ioctl_syncobj_eventfd(struct accel_file *afile, void *data);
int accel_ioctl_syncobj_cancel(struct accel_file *afile, void *data);
int accel_ioctl_syncobj_set_deadline(struct accel_file *afile, void *data);

/* syncobj.c */
void accel_syncobj_imports_fini(void);

/* notify.c */
void accel_notify_init(struct accel_file *afile);
void accel_notify_release(struct accel_file *afile);
int accel_notify_eventfd(struct accel_file *afile, u32 handle, u64 point,
			 u32 flags, int fd);
u32 accel_notify_cancel(struct accel_file *afile, u32 handle, u64 context,
			u64 point);
int accel_uring_wait(struct accel_file *afile, struct io_uring_cmd *cmd,
		     unsigned int issue_flags);
void accel_uring_wait_cancel(struct io_uring_cmd *cmd, unsigned int issue_flags);

/**
 * __accel_handle_alloc() - a handle of 1..@max in @xa for @entry (NULL:
 * a reservation), counted in *@held: -EMFILE once the file holds @max,
 * whatever the numbers of the handles it holds (a limit lowered below its
 * highest would otherwise let it fill the numbers under it). Fewer than
 * @max held leaves a free number in 1..@max. The caller holds @xa's lock
 * (which the allocation may drop to sleep: the count is taken first) and
 * decrements *@held, under it, when it erases the handle.
 */
static inline int __accel_handle_alloc(struct xarray *xa, u32 *held, u32 *id,
				       void *entry, u32 max)
{
	int ret;

	if (*held >= max)
		return -EMFILE;
	(*held)++;
	ret = __xa_alloc(xa, id, entry, XA_LIMIT(1, max), GFP_KERNEL);
	if (ret)
		(*held)--;
	return ret == -EBUSY ? -EMFILE : ret;
}

#endif /* _ACCEL_INTERNAL_H */
