// SPDX-License-Identifier: MIT
/*
 * The kernel scheduler: the accelsched module, reached through its device.
 *
 * Opening makes sure the node really is an accelsched device this library can
 * talk to, in order, stopping at the first failure:
 *
 *  1. open(2) it O_RDWR | O_CLOEXEC (ENOENT: module not loaded; EACCES: the
 *     udev rule / 'render' group; ENXIO: a node nothing answers; ...);
 *  2. it must be a character device (else ENOTTY);
 *  3. ACCEL_IOCTL_INFO must answer (else: another driver's node);
 *  4. its ABI major must be ours (else EPROTO).
 *
 * Every failure is put in words, with what would fix it, for the caller to
 * use as a fallback reason (AUTO) or an error message (KERNEL). Then the
 * io_uring fast path is set up (uring.c); its failure only costs speed, so
 * it is recorded, not returned.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <accelsched.h>

#include "error.h"
#include "sched.h"
#include "uapi_check.h"
#include "uring.h"

struct accel_sched_kernel {
	accel_scheduler_t base;
	int fd;
	struct accel_info info;
	bool uring;
	struct io_uring ring;
};

/* Enough for a PATH_MAX path plus " (from options->device_path)". */
#define DEVICE_NAME_MAX (PATH_MAX + 64)

static const char *device_name(const struct accel_sched_config *cfg,
			       char *buf, size_t len)
{
	if (!cfg->path_origin[0])
		return accel_strfmt(buf, len, "%s", cfg->device_path);
	return accel_strfmt(buf, len, "%s (from %s)", cfg->device_path,
			    cfg->path_origin);
}

/* What to do when the path names the wrong thing. */
static const char *hint_wrong_node(const struct accel_sched_config *cfg)
{
	if (strcmp(cfg->path_origin, ACCEL_DEVICE_ENV) == 0)
		return "point " ACCEL_DEVICE_ENV " at the accelsched device node, or unset it to use " ACCEL_SCHEDULER_DEFAULT_DEVICE;
	if (cfg->path_origin[0])
		return "point options->device_path at the accelsched device node, or leave it NULL to use " ACCEL_SCHEDULER_DEFAULT_DEVICE;
	return "something else took the name; check 'ls -l " ACCEL_SCHEDULER_DEFAULT_DEVICE "' and reload the accelsched module";
}

static const char *file_type_name(mode_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG:
		return "regular file";
	case S_IFDIR:
		return "directory";
	case S_IFSOCK:
		return "socket";
	case S_IFIFO:
		return "FIFO";
	case S_IFBLK:
		return "block device";
	case S_IFLNK:
		return "symbolic link";
	case S_IFCHR:
		return "character device";
	}
	return "file of unknown type";
}

static void explain_enoent(const struct accel_sched_config *cfg,
			   const char *name, char *why, size_t len)
{
	if (!cfg->path_origin[0])
		accel_strfmt(why, len,
			"%s does not exist (the accelsched module is not loaded; 'modprobe accelsched' creates it)",
			name);
	else
		accel_strfmt(why, len, "%s does not exist (%s)", name,
			     hint_wrong_node(cfg));
}

static void explain_eacces(const char *name, int err, char *why, size_t len)
{
	accel_strfmt(why, len,
		"%s exists, but this process (uid %u, gid %u) may not open it read-write (%s); install the accelsched udev rule, which gives the 'render' group read-write access to " ACCEL_SCHEDULER_DEFAULT_DEVICE ", and add the user to the 'render' group (then log in again)",
		name, (unsigned int)geteuid(), (unsigned int)getegid(),
		accel_errno_name(err));
}

static void explain_enxio(const struct accel_sched_config *cfg,
			  const char *name, int err, char *why, size_t len)
{
	struct stat st;

	if (stat(cfg->device_path, &st) == 0 && !S_ISCHR(st.st_mode))
		accel_strfmt(why, len,
			"%s is a %s, not a device node, and cannot be opened (%s; %s)",
			name, file_type_name(st.st_mode), accel_errno_name(err),
			hint_wrong_node(cfg));
	else
		accel_strfmt(why, len,
			"%s is a device node that no driver answers (%s): the module that created it is not loaded any more; reload the accelsched module",
			name, accel_errno_name(err));
}

static void explain_open_error(const struct accel_sched_config *cfg, int err,
			       char *why, size_t len)
{
	char name[DEVICE_NAME_MAX];

	device_name(cfg, name, sizeof(name));
	switch (err) {
	case ENOENT:
		explain_enoent(cfg, name, why, len);
		break;
	case EACCES:
	case EPERM:
		explain_eacces(name, err, why, len);
		break;
	case ENXIO:
	case ENODEV:
		explain_enxio(cfg, name, err, why, len);
		break;
	case EISDIR:
		accel_strfmt(why, len,
			"%s is a directory, not the accelsched device node (%s)",
			name, hint_wrong_node(cfg));
		break;
	default:
		accel_strfmt(why, len, "cannot open %s read-write: %s (%s)",
			     name, accel_errno_name(err), strerror(err));
		break;
	}
}

static int device_open(const struct accel_sched_config *cfg, char *why,
		       size_t len)
{
	int fd = open(cfg->device_path, O_RDWR | O_CLOEXEC);
	int err;

	if (fd >= 0)
		return fd;
	err = errno;
	explain_open_error(cfg, err, why, len);
	return -err;
}

static int device_check_type(const struct accel_sched_config *cfg, int fd,
			     char *why, size_t len)
{
	char name[DEVICE_NAME_MAX];
	struct stat st;
	int err;

	if (fstat(fd, &st) != 0) {
		err = errno;
		accel_strfmt(why, len, "fstat of %s failed: %s (%s)",
			     device_name(cfg, name, sizeof(name)),
			     accel_errno_name(err), strerror(err));
		return -err;
	}
	if (S_ISCHR(st.st_mode))
		return 0;
	accel_strfmt(why, len,
		"%s is a %s, not a character device, so it is not the accelsched device (%s)",
		device_name(cfg, name, sizeof(name)),
		file_type_name(st.st_mode), hint_wrong_node(cfg));
	return -ENOTTY;
}

static int device_get_info(const struct accel_sched_config *cfg, int fd,
			   struct accel_info *info, char *why, size_t len)
{
	char name[DEVICE_NAME_MAX];
	int err;

	memset(info, 0, sizeof(*info));
	if (ioctl(fd, ACCEL_IOCTL_INFO, info) == 0) {
		info->version[sizeof(info->version) - 1] = '\0';
		info->kernel_release[sizeof(info->kernel_release) - 1] = '\0';
		return 0;
	}
	err = errno;
	device_name(cfg, name, sizeof(name));
	if (err == ENOTTY || err == EINVAL)
		accel_strfmt(why, len,
			"%s is not the accelsched device: the ACCEL_IOCTL_INFO ioctl failed with %s (%s) (%s)",
			name, accel_errno_name(err), strerror(err),
			hint_wrong_node(cfg));
	else
		accel_strfmt(why, len,
			"the ACCEL_IOCTL_INFO ioctl on %s failed with %s (%s)",
			name, accel_errno_name(err), strerror(err));
	return -err;
}

static int device_check_abi(const struct accel_sched_config *cfg,
			    const struct accel_info *info, char *why,
			    size_t len)
{
	char name[DEVICE_NAME_MAX];

	if (info->abi_major == ACCEL_ABI_MAJOR)
		return 0;
	accel_strfmt(why, len,
		"%s speaks accelsched ABI %u.%u, but this libaccel speaks ABI %u.%u: ABI major %u and %u cannot talk to each other; install a libaccel and an accelsched module of the same ABI major",
		device_name(cfg, name, sizeof(name)), info->abi_major,
		info->abi_minor, ACCEL_ABI_MAJOR, ACCEL_ABI_MINOR,
		info->abi_major, ACCEL_ABI_MAJOR);
	return -EPROTO;
}

/* Steps 1-4 of the DOC above; returns the open fd or a negative errno. */
static int device_probe(const struct accel_sched_config *cfg,
			struct accel_info *info, char *why, size_t len)
{
	int fd = device_open(cfg, why, len);
	int err;

	if (fd < 0)
		return fd;
	err = device_check_type(cfg, fd, why, len);
	if (!err)
		err = device_get_info(cfg, fd, info, why, len);
	if (!err)
		err = device_check_abi(cfg, info, why, len);
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

static void kernel_destroy(accel_scheduler_t *s)
{
	struct accel_sched_kernel *k = (struct accel_sched_kernel *)s;

	if (k->uring)
		io_uring_queue_exit(&k->ring);
	close(k->fd);
	free(k);
}

static void kernel_query(const accel_scheduler_t *s,
			 accel_scheduler_info_t *info)
{
	const struct accel_sched_kernel *k =
		(const struct accel_sched_kernel *)s;

	info->abi_major = k->info.abi_major;
	info->abi_minor = k->info.abi_minor;
	info->features = k->info.features;
	info->client_id = k->info.client_id;
	info->uring = k->uring;
	memcpy(info->module_version, k->info.version, sizeof(k->info.version));
	memcpy(info->kernel_release, k->info.kernel_release,
	       sizeof(k->info.kernel_release));
}

/* ---- semaphores: kernel timeline syncobjs ----------------------------- */

struct kernel_sem {
	accel_semaphore_t base;
	int fd;          /* the scheduler's device fd (the semaphore holds it) */
	uint32_t handle;
};

static struct kernel_sem *to_ksem(accel_semaphore_t *sem)
{
	return (struct kernel_sem *)sem;
}

static int kioctl(int fd, unsigned long req, void *arg)
{
	int ret;

	do
		ret = ioctl(fd, req, arg);
	while (ret < 0 && errno == EINTR);
	return ret < 0 ? -errno : 0;
}

static int kernel_sem_create(accel_scheduler_t *s, uint64_t initial,
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
	accel_semaphore_init(&ks->base, s);
	ks->fd = k->fd;
	ks->handle = args.handle;
	*out = &ks->base;
	return 0;
}

static void kernel_sem_destroy(accel_semaphore_t *sem)
{
	struct kernel_sem *ks = to_ksem(sem);
	struct accel_syncobj_destroy args = { .handle = ks->handle };

	kioctl(ks->fd, ACCEL_IOCTL_SYNCOBJ_DESTROY, &args);
	accel_semaphore_fini(sem);
	free(ks);
}

static void kernel_sem_query(accel_semaphore_t *sem, uint64_t *value, int *error)
{
	struct kernel_sem *ks = to_ksem(sem);
	struct accel_syncobj_query args = { .handle = ks->handle };
	int err = kioctl(ks->fd, ACCEL_IOCTL_SYNCOBJ_QUERY, &args);

	*value = err ? 0 : args.value;
	*error = err ? err : args.error;
}

static int kernel_sem_signal(accel_semaphore_t *sem, uint64_t value,
			     const char *caller)
{
	struct kernel_sem *ks = to_ksem(sem);
	struct accel_syncobj_signal args = { .handle = ks->handle, .value = value };
	uint64_t cur;
	int err = kioctl(ks->fd, ACCEL_IOCTL_SYNCOBJ_SIGNAL, &args), error;

	if (!err)
		return 0;
	kernel_sem_query(sem, &cur, &error);
	if (error)
		return accel_fail(-error,
			"%s: the semaphore has failed (%s): %s; a failed semaphore stays failed",
			caller, accel_errno_name(-error),
			accel_semaphore_failure_message(sem));
	if (err == -EINVAL)
		return accel_fail(EINVAL,
			"%s: value %" PRIu64 " is not greater than the current value %" PRIu64 "; a timeline only moves forward",
			caller, value, cur);
	return accel_fail(-err, "%s: ACCEL_IOCTL_SYNCOBJ_SIGNAL failed with %s",
			  caller, accel_errno_name(-err));
}

static int kernel_sem_fail(accel_semaphore_t *sem, int error, const char *message)
{
	struct kernel_sem *ks = to_ksem(sem);
	struct accel_syncobj_fail args = { .handle = ks->handle, .error = error };
	uint64_t cur;
	int err, was;

	kernel_sem_query(sem, &cur, &was);
	if (!was)
		accel_semaphore_set_failure(sem, message);
	err = kioctl(ks->fd, ACCEL_IOCTL_SYNCOBJ_FAIL, &args);
	if (err)
		return accel_fail(-err, "accel_semaphore_fail: ACCEL_IOCTL_SYNCOBJ_FAIL failed with %s",
				  accel_errno_name(-err));
	return 0;
}

static int kernel_sem_wait(accel_scheduler_t *s, uint32_t count,
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
	err = kioctl(k->fd, ACCEL_IOCTL_SYNCOBJ_WAIT, &args);
	free(handles);
	free(points);
	if (!err || err == -ETIME) {
		*index = err ? *index : args.index;
		return err;
	}
	if (args.index < count) {
		kernel_sem_query(p[args.index].sem, &v, &error);
		if (error == err) {
			*index = args.index;
			return err;
		}
	}
	return accel_fail(-err, "accel_semaphore_list_wait: ACCEL_IOCTL_SYNCOBJ_WAIT failed with %s",
			  accel_errno_name(-err));
}

/*
 * Jobs, TEMPORARY: the module has no job scheduler yet, so jobs run through
 * the in-process machinery, with the semaphores in the kernel. A job whose
 * waits are all reached goes to its executor at once; otherwise a helper
 * thread blocks in ACCEL_IOCTL_SYNCOBJ_WAIT (ALL) for it, so no job holds
 * back another. The kernel does not learn the job's promises, so
 * ACCEL_SEMAPHORE_WAIT_SUBMITTED waits on its signal points wait until they are
 * reached. Replaced by SUBMIT/COMPLETE uring_cmds when the module
 * schedules jobs.
 */
static void *kernel_job_waiter(void *arg)
{
	struct accel_sched_job *job = arg;
	accel_scheduler_t *s = job->waits[0].sem->scheduler;
	uint32_t index = 0;
	int err;

	err = kernel_sem_wait(s, job->wait_count, job->waits, ACCEL_SEMAPHORE_WAIT_ALL,
			      ACCEL_DEADLINE_INFINITE, &index);
	if (err) {
		atomic_store(&job->wait_error, err);
		atomic_store(&job->wait_index, index < job->wait_count ? index : 0);
	}
	accel_executor_push(job->executor, job);
	return NULL;
}

static int kernel_job_submit(accel_scheduler_t *s, struct accel_sched_job *job)
{
	pthread_attr_t attr;
	pthread_t thread;
	uint32_t index;
	int err;

	atomic_init(&job->pending, 0);
	atomic_init(&job->wait_error, 0);
	atomic_init(&job->wait_index, 0);
	job->priv = NULL;
	if (!job->wait_count ||
	    kernel_sem_wait(s, job->wait_count, job->waits, ACCEL_SEMAPHORE_WAIT_ALL, 0, &index) == 0) {
		accel_executor_push(job->executor, job);
		return 0;
	}
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	err = pthread_create(&thread, &attr, kernel_job_waiter, job);
	pthread_attr_destroy(&attr);
	if (err)
		return accel_fail(EAGAIN,
			"accel_queue_execute: cannot start the thread that waits for this submission's points (%s)",
			accel_errno_name(err));
	return 0;
}

static const struct accel_scheduler_ops kernel_ops = {
	.destroy = kernel_destroy,
	.query = kernel_query,
	.sem_create = kernel_sem_create,
	.sem_destroy = kernel_sem_destroy,
	.sem_query = kernel_sem_query,
	.sem_signal = kernel_sem_signal,
	.sem_fail = kernel_sem_fail,
	.sem_wait = kernel_sem_wait,
	.executor_create = accel_executor_thread_create,
	.executor_destroy = accel_executor_thread_destroy,
	.job_submit = kernel_job_submit,
};

static void kernel_describe(const struct accel_sched_config *cfg,
			    const struct accel_sched_kernel *k,
			    const char *uring_why, char *why, size_t len)
{
	char name[DEVICE_NAME_MAX];

	device_name(cfg, name, sizeof(name));
	if (k->uring)
		accel_strfmt(why, len,
			     "%s answered: module %s, ABI %u.%u, io_uring ok",
			     name, k->info.version, k->info.abi_major,
			     k->info.abi_minor);
	else
		accel_strfmt(why, len,
			     "%s answered: module %s, ABI %u.%u, io_uring unavailable (%s), so commands go through ioctls",
			     name, k->info.version, k->info.abi_major,
			     k->info.abi_minor, uring_why);
}

int accel_sched_kernel_open(const struct accel_sched_config *cfg,
			    accel_scheduler_t **out, char *why, size_t why_len)
{
	struct accel_sched_kernel *k;
	struct accel_info info;
	char uring_why[ACCEL_REASON_MAX / 2];
	int fd;

	fd = device_probe(cfg, &info, why, why_len);
	if (fd < 0)
		return fd;
	k = calloc(1, sizeof(*k));
	if (!k) {
		close(fd);
		accel_strfmt(why, why_len,
			     "out of memory allocating the kernel scheduler (%zu bytes)",
			     sizeof(*k));
		return -ENOMEM;
	}
	accel_scheduler_init(&k->base, ACCEL_SCHEDULER_KERNEL, &kernel_ops);
	k->fd = fd;
	k->info = info;
	k->uring = accel_uring_setup(&k->ring, fd, info.features, uring_why,
				     sizeof(uring_why)) == 0;
	kernel_describe(cfg, k, uring_why, why, why_len);
	*out = &k->base;
	return 0;
}
