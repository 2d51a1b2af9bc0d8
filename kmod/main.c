// SPDX-License-Identifier: GPL-2.0
/*
 * DOC: overview
 *
 * accelsched.ko exposes one character device, ``/dev/accelsched`` (a misc
 * device, mode 0660; the shipped udev rule gives it to the ``render`` group).
 * Each open file is a *client*: everything a process creates through the
 * device belongs to the file it used, and goes away when that file is
 * released, so a process that dies never leaves state behind.
 *
 * Userspace drives the device in two equivalent ways:
 *
 * - ioctls on the fd, one per operation (``ACCEL_IOCTL_*``);
 * - io_uring ``IORING_OP_URING_CMD`` SQEs on the fd, with ``sqe->cmd_op`` one
 *   of ``ACCEL_URING_CMD_*`` and the payload in ``sqe->cmd``. Many commands
 *   go in with one ``io_uring_enter()``; a command that finishes at once
 *   completes synchronously, one that waits completes later with its CQE.
 *
 * ``ACCEL_IOCTL_INFO`` reports the ABI version, the feature bits and the
 * client id; ``NOP`` exists on both paths so that their costs can be compared.
 */
#include <linux/module.h>
#include <linux/seq_file.h>
#include <linux/slab.h>

#include "internal.h"

static int accel_open(struct inode *inode, struct file *file)
{
	struct accel_file *afile;
	int ret;

	afile = kzalloc(sizeof(*afile), GFP_KERNEL);
	if (!afile)
		return -ENOMEM;
	afile->imports = accel_import_quota_new();
	if (!afile->imports) {
		kfree(afile);
		return -ENOMEM;
	}

	afile->adev = &accel_dev;
	afile->client_id = atomic64_inc_return(&accel_dev.next_client_id);
	ret = accel_sched_file_tenant(afile);
	if (ret) {
		accel_import_quota_put(afile->imports);
		kfree(afile);
		return ret;
	}
	xa_init_flags(&afile->syncobjs, XA_FLAGS_ALLOC1);
	accel_notify_init(afile);
	accel_sched_file_init(afile);
	file->private_data = afile;
	return 0;
}

/*
 * The file goes: its notifications are cancelled first (nothing may touch
 * the file afterwards), then its handles dropped.
 */
static int accel_release(struct inode *inode, struct file *file)
{
	struct accel_file *afile = file->private_data;
	struct accel_syncobj *s;
	unsigned long handle;

	accel_notify_release(afile);
	accel_sched_file_release(afile);
	xa_for_each(&afile->syncobjs, handle, s)
		accel_syncobj_put(s);
	xa_destroy(&afile->syncobjs);
	accel_import_quota_put(afile->imports);
	kfree(afile);
	return 0;
}

/*
 * fdinfo follows Documentation/gpu/drm-usage-stats.rst, so that tools which
 * already read DRM clients' usage (nvtop, gputop) can read ours.
 */
static void accel_show_fdinfo(struct seq_file *m, struct file *file)
{
	struct accel_file *afile = file->private_data;

	seq_printf(m, "drm-driver:\t%s\n", ACCEL_DEVICE_NAME);
	seq_printf(m, "drm-client-id:\t%llu\n", afile->client_id);
	accel_sched_show_fdinfo(m, afile);
}

static __poll_t accel_poll(struct file *file, struct poll_table_struct *wait)
{
	return accel_sched_poll(file->private_data, file, wait);
}

static const struct file_operations accel_fops = {
	.owner = THIS_MODULE,
	.open = accel_open,
	.release = accel_release,
	.unlocked_ioctl = accel_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.uring_cmd = accel_uring_cmd,
	.show_fdinfo = accel_show_fdinfo,
	.poll = accel_poll,
	.llseek = noop_llseek,
};

struct accel_device accel_dev = {
	.misc = {
		.minor = MISC_DYNAMIC_MINOR,
		.name = ACCEL_DEVICE_NAME,
		.fops = &accel_fops,
		.mode = 0660,
	},
	.next_client_id = ATOMIC64_INIT(0),
};

struct workqueue_struct *accel_wq;

static int __init accel_init(void)
{
	int ret;

	ret = accel_fence_cache_init();
	if (ret)
		return ret;
	ret = accel_sched_init();
	if (ret) {
		accel_fence_cache_fini();
		return ret;
	}
	accel_wq = alloc_workqueue("accelsched", WQ_UNBOUND, 0);
	if (!accel_wq) {
		accel_sched_fini();
		accel_fence_cache_fini();
		return -ENOMEM;
	}
	ret = misc_register(&accel_dev.misc);
	if (ret) {
		pr_err("accelsched: cannot register /dev/%s: %d\n",
		       ACCEL_DEVICE_NAME, ret);
		destroy_workqueue(accel_wq);
		accel_sched_fini();
		accel_fence_cache_fini();
		return ret;
	}
	pr_info("accelsched: %s loaded, ABI %u.%u, uring_cmd%s\n",
		ACCEL_MODULE_VERSION, ACCEL_ABI_MAJOR, ACCEL_ABI_MINOR,
		ACCEL_URING_CANCELABLE ? " (cancelable)" : "");
	return 0;
}

static void __exit accel_exit(void)
{
	/*
	 * A module with open files cannot be unloaded (fops->owner holds it),
	 * so every accel_file is gone by now.
	 */
	misc_deregister(&accel_dev.misc);
	accel_syncobj_imports_fini();
	/*
	 * The engines the administrator pinned go first: destroying the
	 * workqueue drains what is queued, not a timeout work whose timer
	 * has yet to fire, and an engine's free cancels its own.
	 */
	accel_sched_unpin();
	destroy_workqueue(accel_wq); /* drains imports, kicks, timeouts run */
	accel_sched_fini();
	accel_fence_cache_fini();
}

module_init(accel_init);
module_exit(accel_exit);

MODULE_DESCRIPTION("accelsched: timeline sync objects and an accelerator job scheduler");
MODULE_AUTHOR("The accelsched authors");
MODULE_LICENSE("GPL");
MODULE_VERSION(ACCEL_MODULE_VERSION);
