// SPDX-License-Identifier: MIT
/*
 * The kernel scheduler's semaphores: the module's timeline syncobjs, each a
 * handle on the scheduler's device file (struct kernel_sem), and their
 * sharing: exported fds and sync_files, and the message of a failure that
 * came from outside this process.
 *
 * Locking: none of its own: each operation is one ioctl on the device
 * file. A host wait that meets a failed semaphore asks the jobs in flight
 * why (kernel_resolve_failure(), under jobs_lock).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

#include <linux/sync_file.h>

#include <accelsched.h>

#include "error.h"
#include "sched.h"
#include "sched_kernel.h"

static void ksem_init(struct kernel_sem *ks, struct accel_sched_kernel *k,
		      uint32_t handle)
{
	accel_semaphore_init(&ks->base, &k->base);
	ks->fd = k->fd;
	ks->handle = handle;
	atomic_init(&ks->shared, false);
}

int kernel_sem_create(accel_scheduler_t *s, uint64_t initial,
		      accel_semaphore_t **out)
{
	struct accel_sched_kernel *k = (struct accel_sched_kernel *)s;
	struct accel_syncobj_create args = { .initial = initial };
	struct kernel_sem *ks;
	int err;

	if (!(k->info.features & ACCEL_FEATURE_SYNCOBJ))
		return accel_fail(EOPNOTSUPP,
			"accel_semaphore_create: the accelsched module (ABI %u.%u) has no timeline syncobjs (ACCEL_FEATURE_SYNCOBJ, ABI 1.1); upgrade the module or use ACCEL_SCHEDULER=embedded",
			k->info.abi_major, k->info.abi_minor);
	ks = calloc(1, sizeof(*ks));
	if (!ks)
		return accel_fail(ENOMEM, "accel_semaphore_create: out of memory");
	err = kioctl(k->fd, ACCEL_IOCTL_SYNCOBJ_CREATE, &args);
	if (err) {
		free(ks);
		return accel_fail(-err, "accel_semaphore_create: ACCEL_IOCTL_SYNCOBJ_CREATE failed with %s%s",
				  accel_errno_name(-err),
				  err == -EMFILE ? " (the module's per-file syncobj limit)" : "");
	}
	ksem_init(ks, k, args.handle);
	*out = &ks->base;
	return 0;
}

void kernel_sem_destroy(accel_semaphore_t *sem)
{
	struct kernel_sem *ks = to_ksem(sem);
	struct accel_syncobj_destroy args = { .handle = ks->handle };

	kioctl(ks->fd, ACCEL_IOCTL_SYNCOBJ_DESTROY, &args);
	accel_semaphore_fini(sem);
	free(ks);
}

void kernel_sem_query(accel_semaphore_t *sem, uint64_t *value, int *error)
{
	struct kernel_sem *ks = to_ksem(sem);
	struct accel_syncobj_query args = { .handle = ks->handle };
	int err = kioctl(ks->fd, ACCEL_IOCTL_SYNCOBJ_QUERY, &args);

	ksem_hb_acquire(sem);
	*value = err ? 0 : args.value;
	*error = err ? err : args.error;
}

static void note_foreign_failure(accel_semaphore_t *sem, int error);

int kernel_sem_signal(accel_semaphore_t *sem, uint64_t value,
		      const char *caller)
{
	struct kernel_sem *ks = to_ksem(sem);
	struct accel_syncobj_signal args = { .handle = ks->handle, .value = value };
	uint64_t cur;
	int err, error;

	ksem_hb_release(sem);
	kernel_sq_drain((struct accel_sched_kernel *)sem->scheduler);
	err = kioctl(ks->fd, ACCEL_IOCTL_SYNCOBJ_SIGNAL, &args);
	if (!err) { /* a pipelined job waiting on it looks again */
		kernel_dev_wake((struct accel_sched_kernel *)sem->scheduler);
		return 0;
	}
	kernel_sem_query(sem, &cur, &error);
	if (error) {
		note_foreign_failure(sem, error);
		return accel_fail(-error,
			"%s: the semaphore has failed (%s): %s; a failed semaphore stays failed",
			caller, accel_errno_name(-error),
			accel_semaphore_failure_message(sem));
	}
	if (err == -EINVAL)
		return accel_fail(EINVAL,
			"%s: value %" PRIu64 " is not greater than the current value %" PRIu64 "; a timeline only moves forward",
			caller, value, cur);
	return accel_fail(-err, "%s: ACCEL_IOCTL_SYNCOBJ_SIGNAL failed with %s",
			  caller, accel_errno_name(-err));
}

int kernel_sem_fail(accel_semaphore_t *sem, int error, const char *message)
{
	struct kernel_sem *ks = to_ksem(sem);
	struct accel_syncobj_fail args = { .handle = ks->handle, .error = error };
	uint64_t cur;
	int err, was;

	kernel_sem_query(sem, &cur, &was);
	if (!was)
		accel_semaphore_set_failure(sem, message);
	ksem_hb_release(sem);
	kernel_sq_drain((struct accel_sched_kernel *)sem->scheduler);
	err = kioctl(ks->fd, ACCEL_IOCTL_SYNCOBJ_FAIL, &args);
	if (err)
		return accel_fail(-err, "accel_semaphore_fail: ACCEL_IOCTL_SYNCOBJ_FAIL failed with %s",
				  accel_errno_name(-err));
	return 0;
}

int kernel_sem_wait(accel_scheduler_t *s, uint32_t count,
		    const struct accel_sched_point *p, uint32_t flags,
		    int64_t deadline, uint32_t *index)
{
	struct accel_sched_kernel *k = (struct accel_sched_kernel *)s;
	struct accel_syncobj_wait args = { 0 };
	uint32_t *handles = malloc(count * sizeof(*handles));
	uint64_t *points = malloc(count * sizeof(*points)), v;
	int err, error;

	if (!handles || !points) {
		free(handles);
		free(points);
		return accel_fail(ENOMEM, "accel_semaphore_list_wait: out of memory");
	}
	for (uint32_t i = 0; i < count; i++) {
		handles[i] = to_ksem(p[i].sem)->handle;
		points[i] = p[i].value;
	}
	args.handles = (uint64_t)(uintptr_t)handles;
	args.points = (uint64_t)(uintptr_t)points;
	args.deadline = deadline;
	args.count = count;
	args.flags = flags & (ACCEL_WAIT_ALL | ACCEL_WAIT_SUBMITTED); /* same bits */
	if (flags & ACCEL_WAIT_SUBMITTED)
		kernel_sq_drain(k);
	err = kioctl(k->fd, ACCEL_IOCTL_SYNCOBJ_WAIT, &args);
	free(handles);
	free(points);
	for (uint32_t i = 0; i < count; i++)
		ksem_hb_acquire(p[i].sem);
	if (!err || err == -ETIME) {
		*index = err ? *index : args.index;
		return err;
	}
	if (args.index < count) {
		kernel_sem_query(p[args.index].sem, &v, &error);
		if (error == err) {
			*index = args.index;
			kernel_resolve_failure(k, p[args.index].sem, err);
			note_foreign_failure(p[args.index].sem, err);
			return err;
		}
	}
	return accel_fail(-err, "accel_semaphore_list_wait: ACCEL_IOCTL_SYNCOBJ_WAIT failed with %s",
			  accel_errno_name(-err));
}

/*
 * ---- sharing: exported fds and sync_files ----------------------------
 *
 * A semaphore is a handle on this scheduler's device file. Exporting it
 * gives an O_CLOEXEC fd that holds the syncobj (SCM_RIGHTS-ready);
 * importing such an fd makes a new handle, and a new semaphore object, on
 * the importer's file: the same timeline, its own references. A point
 * exported as a sync_file is a dma_fence any driver (and poll()) accepts;
 * a sync_file imported as a point makes that fence reach it.
 *
 * A failure's message stays in the process that wrote it: when a shared
 * semaphore fails and no submission of this process explains why,
 * note_foreign_failure() says where to look instead of leaving it empty.
 */

static void note_foreign_failure(accel_semaphore_t *sem, int error)
{
	char msg[256];

	if (!atomic_load(&to_ksem(sem)->shared) ||
	    accel_semaphore_failure_known(sem))
		return;
	accel_strfmt(msg, sizeof(msg),
		"failed with %s outside this process's submissions: by another process sharing the semaphore (accel_semaphore_import_fd) or by a sync_file fence imported into it (accel_semaphore_import_sync_file); that one knows why",
		accel_errno_name(-error));
	accel_semaphore_set_failure(sem, msg);
}

/* The sentence for @fd's kind, when the module said it is not ours. */
static const char *fd_kind(int fd, char *buf, size_t len)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return "a file fstat() cannot describe";
	accel_strfmt(buf, len, "a %s", accel_file_type(st.st_mode));
	return buf;
}

int kernel_sem_export_fd(accel_semaphore_t *sem, int *fd)
{
	struct kernel_sem *ks = to_ksem(sem);
	struct accel_syncobj_handle_fd args = { .handle = ks->handle };
	int err = kioctl(ks->fd, ACCEL_IOCTL_SYNCOBJ_EXPORT, &args);

	if (err)
		return accel_fail(-err, "accel_semaphore_export_fd: ACCEL_IOCTL_SYNCOBJ_EXPORT failed with %s%s",
				  accel_errno_name(-err),
				  err == -EMFILE ? " (this process's open file limit, RLIMIT_NOFILE)" : "");
	atomic_store(&ks->shared, true);
	*fd = args.fd;
	return 0;
}

int kernel_sem_import_fd(accel_scheduler_t *s, int fd,
			 accel_semaphore_t **out)
{
	struct accel_sched_kernel *k = (struct accel_sched_kernel *)s;
	struct accel_syncobj_handle_fd args = { .fd = fd };
	struct kernel_sem *ks;
	char kind[64];
	int err;

	if (!(k->info.features & ACCEL_FEATURE_SYNCOBJ))
		return accel_fail(EOPNOTSUPP,
			"accel_semaphore_import_fd: the accelsched module (ABI %u.%u) has no timeline syncobjs (ACCEL_FEATURE_SYNCOBJ, ABI 1.1); upgrade the module",
			k->info.abi_major, k->info.abi_minor);
	ks = calloc(1, sizeof(*ks));
	if (!ks)
		return accel_fail(ENOMEM, "accel_semaphore_import_fd: out of memory");
	err = kioctl(k->fd, ACCEL_IOCTL_SYNCOBJ_IMPORT, &args);
	if (err) {
		free(ks);
		if (err == -EINVAL)
			return accel_fail(EINVAL,
				"accel_semaphore_import_fd: fd %d is not a semaphore exported by accel_semaphore_export_fd() (it is %s)",
				fd, fd_kind(fd, kind, sizeof(kind)));
		return accel_fail(-err, "accel_semaphore_import_fd: ACCEL_IOCTL_SYNCOBJ_IMPORT of fd %d failed with %s%s",
				  fd, accel_errno_name(-err),
				  err == -EMFILE ? " (the module's per-file syncobj limit)" : "");
	}
	ksem_init(ks, k, args.handle);
	atomic_store(&ks->shared, true);
	*out = &ks->base;
	return 0;
}

int kernel_sem_export_sync_file(accel_semaphore_t *sem, uint64_t value,
				int *fd, const char *caller)
{
	struct kernel_sem *ks = to_ksem(sem);
	struct accel_syncobj_sync_file args = { .handle = ks->handle,
						.point = value };
	int err;

	kernel_sq_drain((struct accel_sched_kernel *)sem->scheduler);
	err = kioctl(ks->fd, ACCEL_IOCTL_SYNCOBJ_EXPORT_SYNC_FILE, &args);

	if (err)
		return accel_fail(-err, "%s: ACCEL_IOCTL_SYNCOBJ_EXPORT_SYNC_FILE of value %" PRIu64 " failed with %s%s",
				  caller, value, accel_errno_name(-err),
				  err == -EMFILE ? " (this process's open file limit, RLIMIT_NOFILE)" : "");
	*fd = args.fd;
	return 0;
}

/* 0 if @fd is a sync_file (it answers SYNC_IOC_FILE_INFO), else -EINVAL. */
static int check_sync_file(int fd, const char *fn)
{
	struct sync_file_info info = { 0 };
	char kind[64];

	if (ioctl(fd, SYNC_IOC_FILE_INFO, &info) == 0)
		return 0;
	return accel_fail(EINVAL,
		"%s: fd %d is not a sync_file (it is %s); pass one from accel_semaphore_export_sync_file() or another driver's fence export",
		fn, fd, fd_kind(fd, kind, sizeof(kind)));
}

int kernel_sem_import_sync_file(accel_semaphore_t *sem, uint64_t value,
				int fd)
{
	static const char fn[] = "accel_semaphore_import_sync_file";
	struct kernel_sem *ks = to_ksem(sem);
	struct accel_syncobj_sync_file args = { .handle = ks->handle,
						.point = value, .fd = fd };
	uint64_t cur;
	int err, error;

	err = check_sync_file(fd, fn);
	if (err)
		return err;
	kernel_sem_query(sem, &cur, &error);
	if (error) {
		note_foreign_failure(sem, error);
		return accel_fail(-error,
			"%s: the semaphore has failed (%s): %s; a failed semaphore stays failed",
			fn, accel_errno_name(-error),
			accel_semaphore_failure_message(sem));
	}
	/* Marked first: the fence may fail it as soon as it is imported. */
	atomic_store(&ks->shared, true);
	err = kioctl(ks->fd, ACCEL_IOCTL_SYNCOBJ_IMPORT_SYNC_FILE, &args);
	if (!err)
		return 0;
	kernel_sem_query(sem, &cur, &error);
	if (err == -EINVAL && value <= cur)
		return accel_fail(EINVAL,
			"%s: value %" PRIu64 " is not greater than the current value %" PRIu64 "; an imported point must be ahead of the timeline",
			fn, value, cur);
	return accel_fail(-err, "%s: ACCEL_IOCTL_SYNCOBJ_IMPORT_SYNC_FILE of fd %d at value %" PRIu64 " failed with %s%s",
			  fn, fd, value, accel_errno_name(-err),
			  err == -ENOSPC ? " (the module's limit on imports in flight, max_pending_imports)" : "");
}

/*
 * A deadline for the job of this or another process that promised @value
 * (ABI 1.7): the module finds it. A hint: on a module without deadlines it
 * is dropped, as the module itself drops one for a point no job is about
 * to reach.
 */
int kernel_sem_set_deadline(accel_semaphore_t *sem, uint64_t value,
			    int64_t deadline)
{
	struct accel_sched_kernel *k = (struct accel_sched_kernel *)sem->scheduler;
	struct kernel_sem *ks = to_ksem(sem);
	struct accel_syncobj_deadline args = { .handle = ks->handle,
					       .point = value,
					       .deadline_ns = (uint64_t)deadline };
	int err;

	if (!(k->info.features & ACCEL_FEATURE_JOB_DEADLINE))
		return 0;
	/* The job promising it may still be in the polled ring. */
	kernel_sq_drain(k);
	err = kioctl(ks->fd, ACCEL_IOCTL_SYNCOBJ_SET_DEADLINE, &args);
	if (!err)
		return 0;
	return accel_fail(-err,
		"accel_semaphore_set_deadline: ACCEL_IOCTL_SYNCOBJ_SET_DEADLINE of value %" PRIu64 " failed with %s%s",
		value, accel_errno_name(-err),
		err == -ETIME ? " (the deadline passed on the way to the module)" : "");
}
