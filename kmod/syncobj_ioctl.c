// SPDX-License-Identifier: GPL-2.0
/*
 * DOC: syncobj commands
 *
 * The ioctls of timeline syncobjs. Handles live in a per-file xarray
 * (allocated from 1; 0 is never a handle; the lowest mirrored in a small
 * array for submissions' lookups), so a handle means nothing to another
 * file: sharing goes through an exported fd. Every command checks
 * its flags and padding first (-EINVAL), then its handles (-ENOENT), and
 * changes nothing when it fails. A file holds at most ``max_syncobjs``
 * syncobjs (module parameter; -EMFILE past it).
 *
 * The host wait (ACCEL_IOCTL_SYNCOBJ_WAIT) takes one fence per entry, adds
 * a callback that wakes the waiting task to each, and sleeps on an absolute
 * CLOCK_MONOTONIC hrtimer deadline, so its resolution is not a jiffy.
 */
#include <linux/file.h>
#include <linux/hrtimer.h>
#include <linux/moduleparam.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/sync_file.h>
#include <linux/uaccess.h>

#include "internal.h"

unsigned int accel_max_syncobjs = 65536;
module_param_named(max_syncobjs, accel_max_syncobjs, uint, 0644);
MODULE_PARM_DESC(max_syncobjs, "Most syncobjs one open file may hold (default 65536)");

/**
 * accel_syncobj_lookup() - the syncobj behind a handle of @afile.
 * @afile:  the file.
 * @handle: the handle.
 *
 * Under RCU, without the table's lock: a syncobj's memory outlives a
 * grace period after its last reference (accel_syncobj_free()), and one
 * whose count reached zero, its handle destroyed meanwhile, is not
 * taken. Every job's point goes through here: a handle below
 * ACCEL_SYNCOBJ_FAST is one load of the file's syncobj_fast (about 95
 * instructions fewer than the xarray's walk and its own RCU section),
 * the rest are looked up in the xarray.
 *
 * Context: any context.
 * Return: a new reference, or NULL for a handle @afile does not hold.
 */
struct accel_syncobj *accel_syncobj_lookup(struct accel_file *afile, u32 handle)
{
	struct accel_syncobj *s;

	rcu_read_lock();
	s = handle < ACCEL_SYNCOBJ_FAST ? rcu_dereference(afile->syncobj_fast[handle]) :
	    xa_load(&afile->syncobjs, handle);
	if (s && !kref_get_unless_zero(&s->ref))
		s = NULL;
	rcu_read_unlock();
	return s;
}

static int accel_syncobj_install(struct accel_file *afile,
				 struct accel_syncobj *s, u32 *handle)
{
	int ret;

	/*
	 * The handle's fast slot is written under the xarray's lock, which
	 * DESTROY's erase takes: a DESTROY of the new handle on another
	 * thread clears the slot after it is set, never before.
	 */
	xa_lock(&afile->syncobjs);
	ret = __accel_handle_alloc(&afile->syncobjs, &afile->nr_syncobjs, handle,
				   s, READ_ONCE(accel_max_syncobjs));
	if (!ret && *handle < ACCEL_SYNCOBJ_FAST)
		rcu_assign_pointer(afile->syncobj_fast[*handle], s);
	xa_unlock(&afile->syncobjs);
	return ret;
}

int accel_ioctl_syncobj_create(struct accel_file *afile, void *data)
{
	struct accel_syncobj_create *args = data;
	struct accel_syncobj *s;
	int ret;

	if (args->flags || args->handle)
		return -EINVAL;
	s = accel_syncobj_create(args->initial);
	if (!s)
		return -ENOMEM;
	ret = accel_syncobj_install(afile, s, &args->handle);
	if (ret)
		accel_syncobj_put(s);
	return ret;
}

int accel_ioctl_syncobj_destroy(struct accel_file *afile, void *data)
{
	struct accel_syncobj_destroy *args = data;
	struct accel_syncobj *s;

	if (args->pad)
		return -EINVAL;
	xa_lock(&afile->syncobjs);
	s = __xa_erase(&afile->syncobjs, args->handle);
	if (s && args->handle < ACCEL_SYNCOBJ_FAST)
		RCU_INIT_POINTER(afile->syncobj_fast[args->handle], NULL);
	if (s)
		afile->nr_syncobjs--;
	xa_unlock(&afile->syncobjs);
	if (!s)
		return -ENOENT;
	accel_syncobj_put(s);
	return 0;
}

int accel_ioctl_syncobj_query(struct accel_file *afile, void *data)
{
	struct accel_syncobj_query *args = data;
	struct accel_syncobj *s;
	int error;

	if (args->flags || args->pad || args->value || args->submitted ||
	    args->error)
		return -EINVAL;
	s = accel_syncobj_lookup(afile, args->handle);
	if (!s)
		return -ENOENT;
	accel_syncobj_query(s, &args->value, &args->submitted, &error);
	args->error = error;
	accel_syncobj_put(s);
	return 0;
}

/**
 * accel_syncobj_do_signal() - the host signal, shared by ioctl and uring_cmd.
 * @afile: the file.
 * @args:  the command, copied from userspace.
 *
 * Context: process context.
 * Return: 0 or a negative errno (see &struct accel_syncobj_signal).
 */
int accel_syncobj_do_signal(struct accel_file *afile,
			    const struct accel_syncobj_signal *args)
{
	struct accel_syncobj *s;
	int ret;

	if (args->flags)
		return -EINVAL;
	s = accel_syncobj_lookup(afile, args->handle);
	if (!s)
		return -ENOENT;
	ret = accel_syncobj_signal(s, args->value);
	accel_syncobj_put(s);
	return ret;
}

int accel_ioctl_syncobj_signal(struct accel_file *afile, void *data)
{
	return accel_syncobj_do_signal(afile, data);
}

int accel_ioctl_syncobj_fail(struct accel_file *afile, void *data)
{
	struct accel_syncobj_fail *args = data;
	struct accel_syncobj *s;
	int ret;

	if (!accel_user_errno_ok(args->error))
		return -EINVAL;
	s = accel_syncobj_lookup(afile, args->handle);
	if (!s)
		return -ENOENT;
	ret = accel_syncobj_fail(s, args->error);
	accel_syncobj_put(s);
	return ret;
}

/*
 * One entry of a wait: the point's fence and, for a point already reached
 * when the wait blocks, the syncobj's failure fence, so that a failure
 * during the wait reaches a present waiter as it reaches later ones.
 */
struct accel_wait_entry {
	struct dma_fence_cb cb, fail_cb;
	struct dma_fence *fence, *fail;
	struct task_struct *task;
	bool armed, fail_armed;
};

static void accel_wait_wake(struct dma_fence *f, struct dma_fence_cb *cb)
{
	struct accel_wait_entry *e = container_of(cb, struct accel_wait_entry, cb);

	wake_up_process(e->task);
}

static void accel_wait_fail_wake(struct dma_fence *f, struct dma_fence_cb *cb)
{
	struct accel_wait_entry *e =
		container_of(cb, struct accel_wait_entry, fail_cb);

	wake_up_process(e->task);
}

/*
 * Check every entry: 1 when the wait is satisfied (ALL: every entry; ANY:
 * one, whose index goes to *index), a negative errno when an entry failed
 * (its index to *index), 0 otherwise.
 */
static int accel_wait_check(struct accel_wait_entry *e, u32 count, bool all,
			    u32 *index)
{
	u32 i, done = 0;

	for (i = 0; i < count; i++) {
		if (e[i].fail && dma_fence_is_signaled(e[i].fail) &&
		    e[i].fail->error) {
			*index = i;
			return e[i].fail->error;
		}
		if (!dma_fence_is_signaled(e[i].fence))
			continue;
		if (e[i].fence->error) {
			*index = i;
			return e[i].fence->error;
		}
		if (!all) {
			*index = i;
			return 1;
		}
		done++;
	}
	return done == count;
}

/* A poll (deadline 0 or past) makes no fence: it only reads values. */
static int accel_wait_poll(struct accel_syncobj **ss, const u64 *points,
			   u32 count, enum accel_point_kind kind, bool all,
			   u32 *index)
{
	u32 i, done = 0;

	for (i = 0; i < count; i++) {
		int st = accel_syncobj_point_status(ss[i], points[i], kind);

		if (st < 0 || (st && !all)) {
			*index = i;
			return st < 0 ? st : 0;
		}
		done += st;
	}
	return done == count ? 0 : -ETIME;
}

/*
 * Before blocking, an ALL wait watches the syncobjs of its points already
 * reached for a failure (an ANY wait with one reached does not block).
 */
static int accel_wait_watch_failures(struct accel_wait_entry *e,
				     struct accel_syncobj **ss, u32 count)
{
	u32 i;

	for (i = 0; i < count; i++) {
		struct dma_fence *f;

		if (!dma_fence_is_signaled(e[i].fence))
			continue;
		f = accel_syncobj_fail_fence(ss[i]);
		if (IS_ERR(f))
			return PTR_ERR(f);
		e[i].fail = f;
	}
	return 0;
}

static int accel_wait_fences(struct accel_wait_entry *e, u32 count, bool all,
			     s64 deadline, u32 *index)
{
	ktime_t expires = ns_to_ktime(deadline);
	u32 i;
	int ret;

	for (i = 0; i < count; i++) {
		e[i].task = current;
		e[i].armed = !dma_fence_add_callback(e[i].fence, &e[i].cb,
						     accel_wait_wake);
		if (e[i].fail)
			e[i].fail_armed = !dma_fence_add_callback(e[i].fail,
						&e[i].fail_cb, accel_wait_fail_wake);
	}
	for (;;) {
		set_current_state(TASK_INTERRUPTIBLE);
		ret = accel_wait_check(e, count, all, index);
		if (ret) {
			ret = ret < 0 ? ret : 0;
			break;
		}
		if (signal_pending(current)) {
			ret = -ERESTARTSYS;
			break;
		}
		if (!schedule_hrtimeout_range(&expires, 0, HRTIMER_MODE_ABS)) {
			ret = -ETIME;
			/* The last look: a point reached as the timer fired. */
			__set_current_state(TASK_RUNNING);
			if (accel_wait_check(e, count, all, index) == 1)
				ret = 0;
			break;
		}
	}
	__set_current_state(TASK_RUNNING);
	for (i = 0; i < count; i++) {
		if (e[i].armed)
			dma_fence_remove_callback(e[i].fence, &e[i].cb);
		if (e[i].fail_armed)
			dma_fence_remove_callback(e[i].fail, &e[i].fail_cb);
	}
	return ret;
}

int accel_ioctl_syncobj_wait(struct accel_file *afile, void *data)
{
	struct accel_syncobj_wait *args = data;
	bool all = args->flags & ACCEL_WAIT_ALL;
	enum accel_point_kind kind;
	struct accel_wait_entry *e = NULL;
	struct accel_syncobj **ss;
	u32 *handles, i;
	u64 *points;
	int ret;

	if (args->flags & ~ACCEL_WAIT_FLAGS_ALL || args->pad || args->index)
		return -EINVAL;
	if (args->count > ACCEL_WAIT_MAX_COUNT)
		return -EINVAL;
	if (!args->count)
		return 0;
	if (!IS_ALIGNED(args->handles, sizeof(u32)) ||
	    !IS_ALIGNED(args->points, sizeof(u64)))
		return -EINVAL;
	kind = args->flags & ACCEL_WAIT_SUBMITTED ? ACCEL_POINT_SUBMITTED :
						    ACCEL_POINT_REACHED;

	handles = memdup_user(u64_to_user_ptr(args->handles),
			      array_size(args->count, sizeof(u32)));
	if (IS_ERR(handles))
		return PTR_ERR(handles);
	points = memdup_user(u64_to_user_ptr(args->points),
			     array_size(args->count, sizeof(u64)));
	if (IS_ERR(points)) {
		ret = PTR_ERR(points);
		goto err_handles;
	}
	ss = kcalloc(args->count, sizeof(*ss), GFP_KERNEL);
	if (!ss) {
		ret = -ENOMEM;
		goto err_points;
	}
	/* Look every handle up before waiting on any. */
	for (i = 0; i < args->count; i++) {
		ss[i] = accel_syncobj_lookup(afile, handles[i]);
		if (!ss[i]) {
			ret = -ENOENT;
			goto out;
		}
	}
	if (args->deadline <= 0) {
		ret = accel_wait_poll(ss, points, args->count, kind, all,
				      &args->index);
		goto out;
	}
	e = kcalloc(args->count, sizeof(*e), GFP_KERNEL);
	if (!e) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < args->count; i++) {
		e[i].fence = accel_syncobj_point_fence(ss[i], points[i], kind);
		if (IS_ERR(e[i].fence)) {
			ret = PTR_ERR(e[i].fence);
			e[i].fence = NULL;
			goto out;
		}
	}
	ret = accel_wait_check(e, args->count, all, &args->index);
	if (ret) {
		ret = ret < 0 ? ret : 0;
		goto out;
	}
	if (all) {
		ret = accel_wait_watch_failures(e, ss, args->count);
		if (ret)
			goto out;
	}
	/*
	 * The wait holds fences, not syncobjs: a syncobj whose last handle
	 * goes meanwhile fails its pending points with -ENOENT as usual.
	 */
	for (i = 0; i < args->count; i++) {
		accel_syncobj_put(ss[i]);
		ss[i] = NULL;
	}
	ret = accel_wait_fences(e, args->count, all, args->deadline,
				&args->index);
out:
	for (i = 0; e && i < args->count; i++) {
		if (e[i].fence)
			dma_fence_put(e[i].fence);
		if (e[i].fail)
			dma_fence_put(e[i].fail);
	}
	kfree(e);
	for (i = 0; i < args->count; i++)
		accel_syncobj_put(ss[i]);
	kfree(ss);
err_points:
	kfree(points);
err_handles:
	kfree(handles);
	return ret;
}

int accel_ioctl_syncobj_export(struct accel_file *afile, void *data)
{
	struct accel_syncobj_handle_fd *args = data;
	struct accel_syncobj *s;
	struct file *file;
	int fd;

	if (args->flags || args->pad || args->fd)
		return -EINVAL;
	s = accel_syncobj_lookup(afile, args->handle);
	if (!s)
		return -ENOENT;
	file = accel_syncobj_export_file(s, &fd);
	accel_syncobj_put(s);
	if (IS_ERR(file))
		return PTR_ERR(file);
	accel_ioctl_install_fd(data, fd, file);
	args->fd = fd;
	return 0;
}

int accel_ioctl_syncobj_import(struct accel_file *afile, void *data)
{
	struct accel_syncobj_handle_fd *args = data;
	struct accel_syncobj *s;
	int ret;

	if (args->flags || args->pad || args->handle)
		return -EINVAL;
	s = accel_syncobj_from_fd(args->fd);
	if (IS_ERR(s))
		return PTR_ERR(s);
	ret = accel_syncobj_install(afile, s, &args->handle);
	if (ret)
		accel_syncobj_put(s);
	return ret;
}

int accel_ioctl_syncobj_export_sync_file(struct accel_file *afile,
						void *data)
{
	struct accel_syncobj_sync_file *args = data;
	struct accel_syncobj *s;
	struct sync_file *sf;
	struct dma_fence *f;
	int fd;

	if (args->flags || args->pad || args->fd)
		return -EINVAL;
	s = accel_syncobj_lookup(afile, args->handle);
	if (!s)
		return -ENOENT;
	f = accel_syncobj_point_fence(s, args->point, ACCEL_POINT_REACHED);
	accel_syncobj_put(s);
	if (IS_ERR(f))
		return PTR_ERR(f);
	fd = get_unused_fd_flags(O_CLOEXEC);
	if (fd < 0) {
		dma_fence_put(f);
		return fd;
	}
	sf = sync_file_create(f);
	dma_fence_put(f);
	if (!sf) {
		put_unused_fd(fd);
		return -ENOMEM;
	}
	accel_ioctl_install_fd(data, fd, sf->file);
	args->fd = fd;
	return 0;
}

int accel_ioctl_syncobj_import_sync_file(struct accel_file *afile,
						void *data)
{
	struct accel_syncobj_sync_file *args = data;
	struct accel_syncobj *s;
	struct dma_fence *f;
	int ret;

	if (args->flags || args->pad)
		return -EINVAL;
	s = accel_syncobj_lookup(afile, args->handle);
	if (!s)
		return -ENOENT;
	f = sync_file_get_fence(args->fd);
	if (!f) {
		struct file *file = fget(args->fd);

		/* No fd at all, as SYNCOBJ_IMPORT says; else not a sync_file. */
		accel_syncobj_put(s);
		if (!file)
			return -EBADF;
		fput(file);
		return -EINVAL;
	}
	ret = accel_syncobj_import_fence(s, args->point, f, afile->imports);
	dma_fence_put(f);
	accel_syncobj_put(s);
	return ret;
}

int accel_ioctl_syncobj_eventfd(struct accel_file *afile, void *data)
{
	struct accel_syncobj_eventfd *args = data;

	if (args->flags & ~ACCEL_WAIT_SUBMITTED || args->pad)
		return -EINVAL;
	return accel_notify_eventfd(afile, args->handle, args->point,
				    args->flags, args->fd);
}

/*
 * A deadline on a point: the job that promised it, if any and not yet
 * released, takes it (see sched_deadline.c). A hint: a point no job is
 * about to reach takes it with nothing to do.
 */
int accel_ioctl_syncobj_set_deadline(struct accel_file *afile, void *data)
{
	struct accel_syncobj_deadline *args = data;
	struct accel_syncobj *s;

	if (args->flags || !args->deadline_ns || args->deadline_ns > S64_MAX)
		return -EINVAL;
	s = accel_syncobj_lookup(afile, args->handle);
	if (!s)
		return -ENOENT;
	if (args->deadline_ns <= ktime_get_ns()) {
		accel_syncobj_put(s);
		return -ETIME;
	}
	accel_sched_point_deadline(s, args->point, args->deadline_ns);
	accel_syncobj_put(s);
	return 0;
}

int accel_ioctl_syncobj_cancel(struct accel_file *afile, void *data)
{
	struct accel_syncobj_cancel *args = data;
	struct accel_syncobj *s;
	u64 context;

	if (args->flags || args->pad || args->cancelled)
		return -EINVAL;
	s = accel_syncobj_lookup(afile, args->handle);
	if (!s)
		return -ENOENT;
	/* Not what was registered through a handle of that number before. */
	context = accel_syncobj_reached_context(s);
	accel_syncobj_put(s);
	args->cancelled = accel_notify_cancel(afile, args->handle, context,
					      args->point);
	return 0;
}
