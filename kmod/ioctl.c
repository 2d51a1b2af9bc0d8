// SPDX-License-Identifier: GPL-2.0
/*
 * DOC: ioctl dispatch
 *
 * Every ioctl goes through one table, indexed by its number, which records
 * the direction and the size of the struct the module knows. The prologue is
 * the same for all of them:
 *
 * - a number that is not ours, or not in the table, or whose direction bits
 *   differ from the table's, is ``-ENOTTY``;
 * - the struct is copied in with copy_struct_from_user(): a shorter struct
 *   (an older userspace) is zero-extended, a longer one (a newer userspace)
 *   is accepted only if every byte past what the module knows is zero, else
 *   ``-E2BIG``;
 * - a struct the command writes back (``_IOWR``) has its first and last
 *   byte written back as they were read before the handler runs (it lies
 *   on at most two pages, each holding one of them): memory the module
 *   cannot write fails the call with ``-EFAULT`` before anything is done,
 *   so that no command creates, takes or completes anything whose result
 *   the caller would not learn;
 * - the handler validates flags and padding (``-EINVAL``) before it looks at
 *   anything else, and changes nothing when it fails;
 * - on success, the output is copied back, truncated to userspace's size;
 *   a longer struct of a read-only command (``_IOR``, a newer userspace)
 *   has the bytes past what the module knows zeroed;
 * - a file descriptor a command makes (an export) is reserved by the
 *   handler and installed only once the output that names it is written
 *   (accel_ioctl_install_fd()); should that write fail after all (another
 *   thread unmapped the struct meanwhile), the fd is given back unused.
 */
#include <linux/file.h>
#include <linux/kernel.h>
#include <linux/uaccess.h>
#include <linux/utsname.h>

#include "internal.h"

/*
 * ACCEL_IOCTL_OUT_ON_ERROR: copy the output back even when the handler
 * fails (a wait reports which entry failed).
 */
#define ACCEL_IOCTL_OUT_ON_ERROR (1U << 0)

struct accel_ioctl_desc {
	unsigned int cmd;
	unsigned int flags;
	accel_ioctl_fn fn;
	const char *name;
};

/* The largest struct any ioctl takes; the prologue copies into the stack. */
#define ACCEL_IOCTL_MAX_SIZE 256

/*
 * One call's struct, and the file a handler made for a reserved fd, which
 * the prologue installs once the struct naming it is written back.
 */
struct accel_ioctl_call {
	u8 buf[ACCEL_IOCTL_MAX_SIZE] __aligned(8);
	struct file *file;
	int fd;
};

/**
 * accel_ioctl_install_fd() - install @file at the reserved @fd once the
 * ioctl's output is written back.
 * @data: the handler's struct (what accel_ioctl() passed it).
 * @fd:   from get_unused_fd_flags().
 * @file: the file, whose reference the install (or its undoing) takes.
 *
 * If the output cannot be written, or the handler fails after this, @fd
 * is put back unused and @file released: the caller's fd table never
 * holds a file it was not told of. At most one per call.
 */
void accel_ioctl_install_fd(void *data, int fd, struct file *file)
{
	struct accel_ioctl_call *call = container_of(data, struct accel_ioctl_call, buf[0]);

	WARN_ON_ONCE(call->file);
	call->file = file;
	call->fd = fd;
}

void accel_fill_info(struct accel_file *afile, struct accel_info *info)
{
	memset(info, 0, sizeof(*info));
	info->abi_major = ACCEL_ABI_MAJOR;
	info->abi_minor = ACCEL_ABI_MINOR;
	info->features = ACCEL_FEATURE_URING_CMD | ACCEL_FEATURE_SYNCOBJ |
			 ACCEL_FEATURE_SCHED;
	if (ACCEL_URING_CANCELABLE)
		info->features |= ACCEL_FEATURE_URING_CANCEL;
	if (ACCEL_URING_RES2)
		info->features |= ACCEL_FEATURE_URING_SEQ;
	info->features |= ACCEL_FEATURE_TENANTS | ACCEL_FEATURE_URING_INLINE_JOB |
			   ACCEL_FEATURE_JOB_PREDICTION | ACCEL_FEATURE_JOB_DEADLINE |
			   ACCEL_FEATURE_JOB_EVENTS | ACCEL_FEATURE_JOB_ANSWER;
	if (ACCEL_FENCE_DEADLINE)
		info->features |= ACCEL_FEATURE_FENCE_DEADLINE;
	info->client_id = afile->client_id;
	strscpy(info->version, ACCEL_MODULE_VERSION, sizeof(info->version));
	strscpy(info->kernel_release, init_utsname()->release,
		sizeof(info->kernel_release));
}

static int accel_ioctl_info(struct accel_file *afile, void *data)
{
	accel_fill_info(afile, data);
	return 0;
}

/**
 * accel_nop() - validate and "run" a NOP command.
 * @nop: the command, already copied from userspace.
 *
 * Context: any context.
 * Return: 0, or @nop->result with ACCEL_NOP_F_RESULT; -EINVAL for unknown
 * flags, a result outside [-4095, 0] or among the kernel's internal codes
 * (-530..-512), or a result without the flag.
 */
int accel_nop(const struct accel_nop *nop)
{
	if (nop->flags & ~ACCEL_NOP_FLAGS_ALL)
		return -EINVAL;
	if (!(nop->flags & ACCEL_NOP_F_RESULT))
		return nop->result ? -EINVAL : 0;
	if (nop->result && !accel_user_errno_ok(nop->result))
		return -EINVAL;
	return nop->result;
}

static int accel_ioctl_nop(struct accel_file *afile, void *data)
{
	return accel_nop(data);
}

#define ACCEL_IOCTL_DEF(_cmd, _fn, _flags) \
	[_IOC_NR(_cmd)] = { .cmd = _cmd, .fn = _fn, .flags = _flags, .name = #_cmd }

static const struct accel_ioctl_desc accel_ioctls[] = {
	ACCEL_IOCTL_DEF(ACCEL_IOCTL_INFO, accel_ioctl_info, 0),
	ACCEL_IOCTL_DEF(ACCEL_IOCTL_NOP, accel_ioctl_nop, 0),
	ACCEL_IOCTL_DEF(ACCEL_IOCTL_SYNCOBJ_CREATE, accel_ioctl_syncobj_create, 0),
	ACCEL_IOCTL_DEF(ACCEL_IOCTL_SYNCOBJ_DESTROY, accel_ioctl_syncobj_destroy, 0),
	ACCEL_IOCTL_DEF(ACCEL_IOCTL_SYNCOBJ_QUERY, accel_ioctl_syncobj_query, 0),
	ACCEL_IOCTL_DEF(ACCEL_IOCTL_SYNCOBJ_SIGNAL, accel_ioctl_syncobj_signal, 0),
	ACCEL_IOCTL_DEF(ACCEL_IOCTL_SYNCOBJ_FAIL, accel_ioctl_syncobj_fail, 0),
	ACCEL_IOCTL_DEF(ACCEL_IOCTL_SYNCOBJ_WAIT, accel_ioctl_syncobj_wait,
			ACCEL_IOCTL_OUT_ON_ERROR),
	ACCEL_IOCTL_DEF(ACCEL_IOCTL_SYNCOBJ_EXPORT, accel_ioctl_syncobj_export, 0),
	ACCEL_IOCTL_DEF(ACCEL_IOCTL_SYNCOBJ_IMPORT, accel_ioctl_syncobj_import, 0),
	ACCEL_IOCTL_DEF(ACCEL_IOCTL_SYNCOBJ_EXPORT_SYNC_FILE,
			accel_ioctl_syncobj_export_sync_file, 0),
	ACCEL_IOCTL_DEF(ACCEL_IOCTL_SYNCOBJ_IMPORT_SYNC_FILE,
			accel_ioctl_syncobj_import_sync_file, 0),
	ACCEL_IOCTL_DEF(ACCEL_IOCTL_SYNCOBJ_EVENTFD, accel_ioctl_syncobj_eventfd, 0),
	ACCEL_IOCTL_DEF(ACCEL_IOCTL_SYNCOBJ_CANCEL, accel_ioctl_syncobj_cancel, 0),
	ACCEL_IOCTL_DEF(ACCEL_IOCTL_SYNCOBJ_SET_DEADLINE,
			accel_ioctl_syncobj_set_deadline, 0),
	ACCEL_IOCTL_DEF(ACCEL_IOCTL_QUEUE_CREATE, accel_ioctl_queue_create, 0),
	ACCEL_IOCTL_DEF(ACCEL_IOCTL_QUEUE_DESTROY, accel_ioctl_queue_destroy, 0),
	ACCEL_IOCTL_DEF(ACCEL_IOCTL_JOB_SUBMIT, accel_ioctl_job_submit,
			ACCEL_IOCTL_OUT_ON_ERROR),
	ACCEL_IOCTL_DEF(ACCEL_IOCTL_JOB_COMPLETE, accel_ioctl_job_complete, 0),
	ACCEL_IOCTL_DEF(ACCEL_IOCTL_JOB_FETCH, accel_ioctl_job_fetch, 0),
	ACCEL_IOCTL_DEF(ACCEL_IOCTL_JOB_COMPLETE_FETCH,
			accel_ioctl_job_complete_fetch, ACCEL_IOCTL_OUT_ON_ERROR),
};

/*
 * Can the @n bytes at @uptr, just read into @buf, be written back? Writes
 * back their first and last byte: at most ACCEL_IOCTL_MAX_SIZE bytes lie
 * on at most two pages, and each of those holds one of the two, so this
 * faults where a copy_to_user() of the whole would, without the stack
 * object checks and the copy (about 100 instructions an ioctl).
 */
static int accel_ioctl_writable(u8 __user *uptr, const u8 *buf, size_t n)
{
	BUILD_BUG_ON(ACCEL_IOCTL_MAX_SIZE > PAGE_SIZE);
	if (!n)
		return 0;
	if (put_user(buf[0], uptr) || put_user(buf[n - 1], uptr + n - 1))
		return -EFAULT;
	return 0;
}

/**
 * accel_ioctl() - the device's unlocked_ioctl.
 * @file: the open file.
 * @cmd:  the ioctl number.
 * @arg:  the user pointer to the command's struct.
 *
 * Context: process context; may sleep.
 * Return: the handler's result, -ENOTTY for a number that is not ours,
 * -EFAULT for a bad pointer, -E2BIG for non-zero bytes past the struct.
 */
long accel_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct accel_file *afile = file->private_data;
	void __user *uptr = (void __user *)arg;
	const struct accel_ioctl_desc *desc;
	unsigned int nr = _IOC_NR(cmd);
	size_t usize = _IOC_SIZE(cmd);
	size_t ksize;
	/* Written before it is read: no zeroing (INIT_STACK_ALL_ZERO) per call. */
	struct accel_ioctl_call call __uninitialized;
	u8 *buf = call.buf;
	int ret;

	if (_IOC_TYPE(cmd) != ACCEL_IOCTL_BASE || nr >= ARRAY_SIZE(accel_ioctls))
		return -ENOTTY;
	desc = &accel_ioctls[nr];
	if (!desc->fn || _IOC_DIR(cmd) != _IOC_DIR(desc->cmd))
		return -ENOTTY;

	ksize = _IOC_SIZE(desc->cmd);
	BUILD_BUG_ON(sizeof(struct accel_info) > ACCEL_IOCTL_MAX_SIZE);
	if (WARN_ON_ONCE(ksize > sizeof(call.buf)))
		return -ENOTTY;

	if (_IOC_DIR(cmd) & _IOC_WRITE) {
		ret = copy_struct_from_user(buf, ksize, uptr, usize);
		if (ret)
			return ret;
		/* Output the module could not write: refused before it acts. */
		if ((_IOC_DIR(cmd) & _IOC_READ) &&
		    accel_ioctl_writable(uptr, buf, min(usize, ksize)))
			return -EFAULT;
	} else {
		memset(buf, 0, ksize);
	}

	call.file = NULL;
	ret = desc->fn(afile, buf);
	if (ret < 0 && !(desc->flags & ACCEL_IOCTL_OUT_ON_ERROR))
		goto out;

	if (_IOC_DIR(cmd) & _IOC_READ) {
		if (copy_to_user(uptr, buf, min(usize, ksize)) ||
		    (usize > ksize && !(_IOC_DIR(cmd) & _IOC_WRITE) &&
		     clear_user(uptr + ksize, usize - ksize)))
			ret = -EFAULT;
	}
out:
	if (call.file) {
		if (ret < 0) {
			put_unused_fd(call.fd);
			fput(call.file);
		} else {
			fd_install(call.fd, call.file);
		}
	}
	return ret;
}
