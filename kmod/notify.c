// SPDX-License-Identifier: GPL-2.0
/*
 * DOC: notifications
 *
 * Two ways to learn that a point is reached without a thread blocked in an
 * ioctl: an eventfd written once (ACCEL_IOCTL_SYNCOBJ_EVENTFD), and an
 * io_uring ``ACCEL_URING_CMD_SYNCOBJ_WAIT`` whose CQE arrives with the
 * point's status. Both are a &struct accel_notify: a callback on the point's
 * fence, on its file's list (at most ``max_pending_waits`` per file;
 * -ENOSPC past it).
 *
 * Exactly one party completes a notification: the fence callback, or a
 * canceller (ACCEL_IOCTL_SYNCOBJ_CANCEL, the file's release, io_uring's ring
 * or task exit). They race on &accel_notify.state; the loser does nothing.
 * A canceller that wins detaches the fence callback, which serialises with
 * a callback running concurrently (both hold the fence's lock).
 *
 * A pending uring_cmd holds its file, so a file is never released with a
 * WAIT pending; but an exec, or a ring's exit, waits for every uring_cmd
 * in flight there. On kernels with cancelable uring_cmds (6.7+) io_uring
 * asks us to cancel them (IO_URING_F_CANCEL). Older kernels (Debian's 6.1)
 * have no such hook, so a per-file monitor re-checks every pending WAIT
 * every ACCEL_MONITOR_MS: a WAIT whose submitter's process is going (not
 * just its thread: see accel_uring_cmd_abandoned()), or whose ring is being
 * torn down, is completed with -ECANCELED, which bounds how long such an
 * exit can wait.
 */
#include <linux/eventfd.h>
#include <linux/file.h>
#include <linux/moduleparam.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "internal.h"


unsigned int accel_max_pending_waits = 4096;
module_param_named(max_pending_waits, accel_max_pending_waits, uint, 0644);
MODULE_PARM_DESC(max_pending_waits,
		 "Most eventfd and io_uring waits one open file may have pending (default 4096)");

enum accel_notify_type {
	ACCEL_NOTIFY_EVENTFD,
	ACCEL_NOTIFY_URING,
};

/*
 * REGISTERING: on the list, its fence callback being added; cancellers skip
 * it. A callback that fires then moves it to FIRED and the registering
 * thread delivers. PENDING: armed. DONE: someone owns its completion.
 */
enum accel_notify_state {
	ACCEL_NOTIFY_REGISTERING,
	ACCEL_NOTIFY_FIRED,
	ACCEL_NOTIFY_PENDING,
	ACCEL_NOTIFY_DONE,
};

/**
 * struct accel_notify - one pending notification.
 * @cb:     the callback on @fence.
 * @fence:  the point's fence; a reference.
 * @afile:  the file it belongs to (which outlives it: see file release).
 * @link:   in &accel_file.notifies, under &accel_file.notify_lock.
 * @state:  &enum accel_notify_state; the one who moves it to DONE completes.
 * @type:   eventfd or io_uring.
 * @handle: the syncobj's handle, for ACCEL_IOCTL_SYNCOBJ_CANCEL.
 * @context: the syncobj's own (its reached fence context, unique to it):
 *          the handle may be destroyed and its number given to another
 *          syncobj while the notification is pending.
 * @point:  the point.
 * @result: what the notification completes with.
 * @cancelled: it was cancelled (an eventfd is then not written).
 * @efd:    the eventfd (eventfd type).
 * @cmd:    the uring_cmd (io_uring type).
 * @task:   the task that issued @cmd; a reference (for the monitor).
 */
struct accel_notify {
	struct dma_fence_cb cb;
	struct dma_fence *fence;
	struct accel_file *afile;
	struct list_head link;
	atomic_t state;
	enum accel_notify_type type;
	u32 handle;
	u64 context;
	u64 point;
	int result;
	bool cancelled;
	union {
		struct eventfd_ctx *efd;
		struct {
			struct io_uring_cmd *cmd;
			struct task_struct *task;
		};
	};
};

struct accel_uring_pdu {
	struct accel_notify *notify;
};

static bool accel_notify_claim(struct accel_notify *n)
{
	return atomic_cmpxchg(&n->state, ACCEL_NOTIFY_PENDING,
			      ACCEL_NOTIFY_DONE) == ACCEL_NOTIFY_PENDING;
}

/*
 * Wait until whoever holds @afile's notify_lock has let it go: a monitor
 * reading a notification's command, or the last accel_notify_free() still
 * waking the release. Any context.
 */
static void accel_notify_lock_sync(struct accel_file *afile)
{
	unsigned long flags;

	spin_lock_irqsave(&afile->notify_lock, flags);
	spin_unlock_irqrestore(&afile->notify_lock, flags);
}

/* Unlink and free; the completion has been delivered. Any context. */
static void accel_notify_free(struct accel_notify *n)
{
	struct accel_file *afile = n->afile;
	unsigned long flags;

	spin_lock_irqsave(&afile->notify_lock, flags);
	list_del_init(&n->link);
	if (!--afile->nr_notifies)
		wake_up_all(&afile->notify_wq);
	spin_unlock_irqrestore(&afile->notify_lock, flags);

	dma_fence_put(n->fence);
	if (n->type == ACCEL_NOTIFY_EVENTFD)
		eventfd_ctx_put(n->efd);
	else
		put_task_struct(n->task);
	kfree(n);
}

/*
 * Complete an io_uring notification's command with @res, then free it.
 * done() first: until it takes the command off io_uring's cancel list, a
 * ring exit may call accel_uring_wait_cancel() on it, which reads @n (an
 * issue from io-wq holds no ring lock to keep it out).
 */
static void accel_notify_uring_finish(struct accel_notify *n, int res,
				      unsigned int issue_flags)
{
	/*
	 * Where the monitor looks at pending commands (it reads the ring
	 * behind @n->cmd, under notify_lock, after it saw @n PENDING): one
	 * that saw it before its claim is done with the command before the
	 * command is, and one that comes later sees it claimed.
	 */
	if (!ACCEL_URING_CANCELABLE)
		accel_notify_lock_sync(n->afile);
	accel_uring_cmd_done(n->cmd, res, 0, issue_flags);
	accel_notify_free(n);
}

static void accel_notify_uring_tw(struct io_uring_cmd *cmd,
				  unsigned int issue_flags)
{
	struct accel_notify *n = accel_uring_cmd_pdu(cmd, struct accel_uring_pdu)->notify;

	accel_notify_uring_finish(n, n->result, issue_flags);
}

/* Deliver @n->result; the caller won the claim. Any context. */
static void accel_notify_deliver(struct accel_notify *n)
{
	if (n->type == ACCEL_NOTIFY_EVENTFD) {
		if (!n->cancelled)
			accel_eventfd_signal(n->efd);
		accel_notify_free(n);
	} else {
		io_uring_cmd_complete_in_task(n->cmd, accel_notify_uring_tw);
	}
}

/*
 * One atomic step decides who delivers. Trying PENDING -> DONE first and
 * then REGISTERING -> FIRED, as this did, lost the notification when the
 * registering thread moved REGISTERING -> PENDING between the two: both
 * exchanges failed, and the waiter was never completed (an io_uring WAIT
 * whose point was reached, its CQE never posted).
 */
static void accel_notify_cb(struct dma_fence *f, struct dma_fence_cb *cb)
{
	struct accel_notify *n = container_of(cb, struct accel_notify, cb);
	int old = atomic_cmpxchg(&n->state, ACCEL_NOTIFY_REGISTERING,
				 ACCEL_NOTIFY_FIRED);

	if (old == ACCEL_NOTIFY_REGISTERING)
		return; /* the registering thread sees FIRED and delivers */
	/* Armed: deliver, unless a cancel claimed it first. */
	if (old == ACCEL_NOTIFY_PENDING && accel_notify_claim(n)) {
		n->result = f->error;
		accel_notify_deliver(n);
	}
}

/*
 * Add the fence callback of a listed notification. Returns true when the
 * caller must deliver it now (its fence signalled already, or while the
 * callback was being added), with n->result set.
 */
static bool accel_notify_arm(struct accel_notify *n)
{
	if (!dma_fence_add_callback(n->fence, &n->cb, accel_notify_cb) &&
	    atomic_cmpxchg(&n->state, ACCEL_NOTIFY_REGISTERING,
			   ACCEL_NOTIFY_PENDING) == ACCEL_NOTIFY_REGISTERING)
		return false;
	atomic_set(&n->state, ACCEL_NOTIFY_DONE);
	n->result = n->fence->error;
	return true;
}

/*
 * Cancelling is two steps, because the fence's lock nests outside the
 * file's notify_lock (a fence callback delivers, which unlinks under
 * notify_lock): claim under notify_lock, moving what we won to a local list;
 * then, without the lock, detach each fence callback and deliver.
 */
static void accel_notify_cancel_claimed(struct list_head *claimed)
{
	struct accel_notify *n, *tmp;

	list_for_each_entry_safe(n, tmp, claimed, link) {
		/* Off the local list: the delivery may finish after we return. */
		list_del_init(&n->link);
		dma_fence_remove_callback(n->fence, &n->cb);
		n->result = -ECANCELED;
		n->cancelled = true;
		accel_notify_deliver(n);
	}
}

static struct accel_notify *accel_notify_new(struct accel_file *afile,
					     u32 handle, u64 point, u32 flags,
					     struct dma_fence **fence)
{
	enum accel_point_kind kind = flags & ACCEL_WAIT_SUBMITTED ?
		ACCEL_POINT_SUBMITTED : ACCEL_POINT_REACHED;
	struct accel_syncobj *s;
	struct accel_notify *n;
	u64 context;

	s = accel_syncobj_lookup(afile, handle);
	if (!s)
		return ERR_PTR(-ENOENT);
	*fence = accel_syncobj_point_fence(s, point, kind);
	context = accel_syncobj_reached_context(s);
	accel_syncobj_put(s);
	if (IS_ERR(*fence))
		return ERR_CAST(*fence);
	n = kzalloc(sizeof(*n), GFP_KERNEL);
	if (!n) {
		dma_fence_put(*fence);
		return ERR_PTR(-ENOMEM);
	}
	n->fence = *fence;
	n->afile = afile;
	n->handle = handle;
	n->context = context;
	n->point = point;
	INIT_LIST_HEAD(&n->link);
	INIT_LIST_HEAD(&n->cb.node);
	atomic_set(&n->state, ACCEL_NOTIFY_REGISTERING);
	return n;
}

/* Put @n on its file's list, within the file's limit. */
static int accel_notify_add(struct accel_notify *n)
{
	struct accel_file *afile = n->afile;
	int ret = 0;

	spin_lock_irq(&afile->notify_lock);
	if (afile->nr_notifies >= accel_max_pending_waits) {
		ret = -ENOSPC;
	} else {
		list_add_tail(&n->link, &afile->notifies);
		afile->nr_notifies++;
	}
	spin_unlock_irq(&afile->notify_lock);
	return ret;
}

/**
 * accel_notify_eventfd() - write @fd's eventfd once a point is reached.
 * @afile:  the file.
 * @handle: the syncobj.
 * @point:  the point.
 * @flags:  0 or ACCEL_WAIT_SUBMITTED.
 * @fd:     an eventfd.
 *
 * The eventfd is written (1) when the point is reached (at once if it is
 * already) or the syncobj fails (the waiter then queries it to learn the
 * error); not at all if the registration is cancelled first.
 *
 * Context: process context; may sleep.
 * Return: 0; -ENOENT (handle), -EBADF or -EINVAL (not an eventfd), -ENOSPC
 * (the file's limit), -ENOMEM.
 */
int accel_notify_eventfd(struct accel_file *afile, u32 handle, u64 point,
			 u32 flags, int fd)
{
	struct eventfd_ctx *efd;
	struct dma_fence *fence;
	struct accel_notify *n;
	int ret;

	n = accel_notify_new(afile, handle, point, flags, &fence);
	if (IS_ERR(n))
		return PTR_ERR(n);
	n->type = ACCEL_NOTIFY_EVENTFD;
	efd = eventfd_ctx_fdget(fd);
	if (IS_ERR(efd)) {
		ret = PTR_ERR(efd);
		goto err_free;
	}
	n->efd = efd;
	ret = accel_notify_add(n);
	if (ret)
		goto err_efd;
	if (accel_notify_arm(n))
		accel_notify_deliver(n);
	return 0;

err_efd:
	eventfd_ctx_put(efd);
err_free:
	dma_fence_put(fence);
	kfree(n);
	return ret;
}

/**
 * accel_notify_cancel() - cancel @afile's notifications on (handle, point).
 * @afile:   the file.
 * @handle:  the syncobj's handle.
 * @context: the syncobj's reached context: only notifications registered
 *           through @handle while it named this syncobj are cancelled.
 * @point:   the point.
 *
 * Cancelled eventfds are not written; cancelled io_uring WAITs complete with
 * -ECANCELED.
 *
 * Context: process context.
 * Return: how many were cancelled.
 */
u32 accel_notify_cancel(struct accel_file *afile, u32 handle, u64 context,
			u64 point)
{
	struct accel_notify *n, *tmp;
	LIST_HEAD(claimed);
	u32 count = 0;

	spin_lock_irq(&afile->notify_lock);
	list_for_each_entry_safe(n, tmp, &afile->notifies, link) {
		if (n->handle == handle && n->context == context &&
		    n->point == point && accel_notify_claim(n)) {
			list_move_tail(&n->link, &claimed);
			count++;
		}
	}
	spin_unlock_irq(&afile->notify_lock);
	accel_notify_cancel_claimed(&claimed);
	return count;
}

/**
 * accel_notify_release() - cancel every notification of a file going away.
 * @afile: the file being released.
 *
 * Waits for the completions already under way, so that none touches the
 * file after this returns.
 *
 * Context: process context; may sleep.
 */
void accel_notify_release(struct accel_file *afile)
{
	struct accel_notify *n, *tmp;
	LIST_HEAD(claimed);

	cancel_delayed_work_sync(&afile->monitor);
	spin_lock_irq(&afile->notify_lock);
	list_for_each_entry_safe(n, tmp, &afile->notifies, link)
		if (accel_notify_claim(n))
			list_move_tail(&n->link, &claimed);
	spin_unlock_irq(&afile->notify_lock);
	accel_notify_cancel_claimed(&claimed);
	wait_event(afile->notify_wq, !READ_ONCE(afile->nr_notifies));
	/*
	 * The last accel_notify_free() may still hold the lock, waking this
	 * queue: the file is freed once this returns.
	 */
	accel_notify_lock_sync(afile);
}

/*
 * Whether a pending WAIT's issuer can no longer reap it (its process is
 * going, or its ring): accel_uring_cmd_abandoned(). Only used where
 * io_uring cannot cancel uring_cmds itself.
 */
static bool accel_notify_abandoned(struct accel_notify *n)
{
	return accel_uring_cmd_abandoned(n->task, n->cmd);
}

static void accel_notify_monitor(struct work_struct *work)
{
	struct accel_file *afile =
		container_of(to_delayed_work(work), struct accel_file, monitor);
	struct accel_notify *n, *tmp;
	LIST_HEAD(claimed);
	bool again = false;

	spin_lock_irq(&afile->notify_lock);
	list_for_each_entry_safe(n, tmp, &afile->notifies, link) {
		if (n->type != ACCEL_NOTIFY_URING ||
		    atomic_read(&n->state) != ACCEL_NOTIFY_PENDING)
			continue;
		if (accel_notify_abandoned(n) && accel_notify_claim(n))
			list_move_tail(&n->link, &claimed);
		else
			again = true;
	}
	spin_unlock_irq(&afile->notify_lock);
	accel_notify_cancel_claimed(&claimed);
	accel_sched_monitor(afile, &again);
	if (again)
		queue_delayed_work(accel_wq, &afile->monitor,
				   msecs_to_jiffies(ACCEL_MONITOR_MS));
}

/**
 * accel_notify_init() - set up a new file's notification state.
 * @afile: the file.
 */
void accel_notify_init(struct accel_file *afile)
{
	spin_lock_init(&afile->notify_lock);
	INIT_LIST_HEAD(&afile->notifies);
	init_waitqueue_head(&afile->notify_wq);
	INIT_DELAYED_WORK(&afile->monitor, accel_notify_monitor);
}

/**
 * accel_uring_wait() - ACCEL_URING_CMD_SYNCOBJ_WAIT.
 * @afile:       the file.
 * @cmd:         the command.
 * @issue_flags: io_uring's issue flags.
 *
 * A point already reached (or a syncobj already failed) completes at once.
 * Otherwise the command stays pending until the point's fence signals, or it
 * is cancelled.
 *
 * Context: process context (the issuer).
 * Return: the result, or -EIOCBQUEUED when it completes later.
 */
int accel_uring_wait(struct accel_file *afile, struct io_uring_cmd *cmd,
		     unsigned int issue_flags)
{
	struct accel_uring_wait args;
	struct dma_fence *fence;
	struct accel_notify *n;
	int ret;

	memcpy(&args, accel_uring_cmd_payload(cmd), sizeof(args));
	if (args.flags & ~ACCEL_WAIT_SUBMITTED)
		return -EINVAL;
	n = accel_notify_new(afile, args.handle, args.point, args.flags, &fence);
	if (IS_ERR(n))
		return PTR_ERR(n);
	if (dma_fence_is_signaled(fence)) {
		ret = fence->error;
		dma_fence_put(fence);
		kfree(n);
		return ret;
	}
	n->type = ACCEL_NOTIFY_URING;
	n->cmd = cmd;
	n->task = get_task_struct(current);
	ret = accel_notify_add(n);
	if (ret) {
		put_task_struct(n->task);
		dma_fence_put(fence);
		kfree(n);
		return ret;
	}
	accel_uring_cmd_pdu(cmd, struct accel_uring_pdu)->notify = n;
	/*
	 * Cancelable before the callback can complete it: a command completed
	 * synchronously after being marked would stay on io_uring's list.
	 */
	accel_uring_cmd_mark_cancelable(cmd, issue_flags);
	if (accel_notify_arm(n)) {
		/* Signalled meanwhile: complete now, asynchronously. */
		accel_notify_uring_finish(n, n->result, issue_flags);
		return -EIOCBQUEUED;
	}
	if (!ACCEL_URING_CANCELABLE)
		queue_delayed_work(accel_wq, &afile->monitor,
				   msecs_to_jiffies(ACCEL_MONITOR_MS));
	return -EIOCBQUEUED;
}

/**
 * accel_uring_wait_cancel() - io_uring cancels a pending WAIT (ring or task
 * exit; kernels with cancelable uring_cmds).
 * @cmd:         the command.
 * @issue_flags: io_uring's issue flags (IO_URING_F_CANCEL set).
 */
void accel_uring_wait_cancel(struct io_uring_cmd *cmd, unsigned int issue_flags)
{
	struct accel_notify *n = accel_uring_cmd_pdu(cmd, struct accel_uring_pdu)->notify;

	if (!accel_notify_claim(n))
		return; /* completing already, through task work */
	dma_fence_remove_callback(n->fence, &n->cb);
	accel_notify_uring_finish(n, -ECANCELED, issue_flags);
}
