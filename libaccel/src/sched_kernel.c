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
 *
 * Semaphores are the module's timeline syncobjs, and queue submissions
 * are the module's jobs (see "Jobs" below): the module orders them, picks
 * which to release within each engine's credits, and propagates failures;
 * this process only runs what it is given and reports back.
 *
 * Thread-safety: thread-safe. A scheduler is one open file of the device,
 * shared by every device and queue opened on it.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <linux/sync_file.h>

#include <accelsched.h>

#include "error.h"
#include "sched.h"
#include "uapi_check.h"
#include "uring.h"

/* A link in the list of jobs in flight (the first member of a job). */
struct job_link {
	struct job_link *prev, *next;
};

/*
 * struct accel_sched_kernel - the kernel scheduler: one open device file.
 * The job fields are described with the jobs, below.
 */
struct accel_sched_kernel {
	accel_scheduler_t base;
	int fd;
	struct accel_info info;
	bool uring;
	struct io_uring ring;

	pthread_mutex_t jobs_lock;
	struct job_link jobs;
	pthread_mutex_t sq_lock;
	bool reaping;
	pthread_t reaper;
	int efd;
	atomic_bool stop;
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

static void reaper_stop(struct accel_sched_kernel *k);

/* No job is left: each held the scheduler through its queue's device. */
static void kernel_destroy(accel_scheduler_t *s)
{
	struct accel_sched_kernel *k = (struct accel_sched_kernel *)s;

	reaper_stop(k);
	if (k->uring)
		io_uring_queue_exit(&k->ring);
	if (k->efd >= 0)
		close(k->efd);
	close(k->fd);
	pthread_mutex_destroy(&k->sq_lock);
	pthread_mutex_destroy(&k->jobs_lock);
	free(k);
}

static void kernel_jobs_init(struct accel_sched_kernel *k)
{
	pthread_mutexattr_t attr;

	pthread_mutexattr_init(&attr);
	pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&k->jobs_lock, &attr);
	pthread_mutexattr_destroy(&attr);
	k->jobs.next = k->jobs.prev = &k->jobs;
	pthread_mutex_init(&k->sq_lock, NULL);
	k->efd = -1;
	atomic_init(&k->stop, false);
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

/*
 * @shared: exported, imported, or given a foreign fence: something outside
 * this process's submissions may fail it, and its message then says so.
 */
struct kernel_sem {
	accel_semaphore_t base;
	int fd;          /* the scheduler's device fd (the semaphore holds it) */
	uint32_t handle;
	atomic_bool shared;
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

static void ksem_init(struct kernel_sem *ks, struct accel_sched_kernel *k,
		      uint32_t handle)
{
	accel_semaphore_init(&ks->base, &k->base);
	ks->fd = k->fd;
	ks->handle = handle;
	atomic_init(&ks->shared, false);
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
	ksem_init(ks, k, args.handle);
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

static void note_foreign_failure(accel_semaphore_t *sem, int error);

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

static void resolve_failure(struct accel_sched_kernel *k, accel_semaphore_t *sem,
			    int error);

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
			resolve_failure(k, p[args.index].sem, err);
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
	accel_strfmt(buf, len, "a %s", file_type_name(st.st_mode));
	return buf;
}

static int kernel_sem_export_fd(accel_semaphore_t *sem, int *fd)
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

static int kernel_sem_import_fd(accel_scheduler_t *s, int fd,
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

static int kernel_sem_export_sync_file(accel_semaphore_t *sem, uint64_t value,
				       int *fd, const char *caller)
{
	struct kernel_sem *ks = to_ksem(sem);
	struct accel_syncobj_sync_file args = { .handle = ks->handle,
						.point = value };
	int err = kioctl(ks->fd, ACCEL_IOCTL_SYNCOBJ_EXPORT_SYNC_FILE, &args);

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

static int kernel_sem_import_sync_file(accel_semaphore_t *sem, uint64_t value,
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
 * Jobs: the module's job scheduler (DESIGN.md section 4).
 *
 * Queues. Each accel queue is a kernel queue (ACCEL_IOCTL_QUEUE_CREATE) on
 * the engine named after its device ("cpu" for cpu://, "vulkan:0" for
 * vulkan://0), with the priority class and weight of its options
 * (accel_queue_create(): normal, weight 1). A queue that makes an engine
 * asks for KERNEL_ENGINE_CREDITS credits, which the module grants only to
 * an administrator (CAP_SYS_ADMIN, ABI 1.4): otherwise, and for an engine
 * that exists, the limit is the module's default or the one the
 * administrator wrote in sysfs. Modules before ABI 1.4 refused a second
 * limit for an existing engine with -EEXIST; the queue then takes the
 * engine's.
 *
 * Submission. The semaphores are syncobjs already, so a submission's waits
 * and signals are their handles and values in one struct accel_job whose
 * user_data is the job's record (struct kernel_job). With io_uring it is
 * one ACCEL_URING_CMD_JOB_SUBMIT SQE (filled by hand: liburing 2.3 has no
 * helper). Submitters that come while another thread is in
 * io_uring_enter() leave their SQE to that thread (flat combining), so
 * concurrent submissions share one system call; each returns once its SQE
 * went in, that is once its signal points are promised. Without io_uring
 * it is one ACCEL_IOCTL_JOB_SUBMIT.
 *
 * Release. One reaper thread per scheduler (per open device file) learns
 * what the module decided: the SUBMIT's CQE (res = the released job's id,
 * or the error it failed or was refused with) and the device's events,
 * read with ACCEL_IOCTL_JOB_FETCH when the fd polls readable (through an
 * IORING_OP_POLL_ADD on the ring, or poll(2)): RELEASED for jobs submitted
 * by ioctl, TIMEDOUT for any. It hands each released job to its queue's
 * executor thread (executor.c) in release order (SUBMIT CQEs come in no
 * set order; release_in_order() puts them back by the numbers the module
 * gives them), which runs the work on the device and
 * sends ACCEL_IOCTL_JOB_COMPLETE with the status and the time the work
 * took. COMPLETE is an ioctl so that it has happened before the job's
 * references go (the last one may destroy the kernel queue).
 *
 * Failures are the module's: a job whose wait failed is never released and
 * its signals fail there with that error. Its SUBMIT's CQE says so; an
 * ioctl submission gets no event for it, so each of its waits has a
 * one-shot ACCEL_IOCTL_SYNCOBJ_EVENTFD on the reaper's eventfd, and a wake
 * (or one second passing) makes the reaper look for ioctl jobs whose waits
 * are all settled with one failed. Either way the job goes to its executor
 * as not run, which writes the message and drops the submission's
 * references. The module fails points before the library can say why, so
 * a host wait that meets a failed semaphore without a message asks this
 * process's jobs in flight which one promised it and writes that job's
 * explanation first (resolve_failure()); messages thus read as in the
 * embedded scheduler.
 *
 * A submission the module refuses is failed by the library itself (its
 * points were never promised). A refusal with -EINVAL because a signal
 * point is not above its semaphore's value is retried once without those
 * points, which fail with -EINVAL at completion as in the embedded
 * scheduler; any other refusal fails every signal with its error. A
 * completing job's signal that a host signal passed meanwhile fails with
 * -EINVAL as well (the module would skip it; errors are never dropped).
 * TIMEDOUT: the module failed the job's points with -ETIMEDOUT already; a
 * job not started yet is dropped, a running one completes late (refused).
 *
 * Lifetime: a job holds its queue, the queue its device, the device the
 * scheduler; so a kernel queue is destroyed only once its jobs are done,
 * and the reaper, joined by kernel_destroy(), outlives every job. A
 * process that dies leaves the rest to the module (-EOWNERDEAD).
 *
 * Locking: jobs_lock (recursive) protects the
 * list of jobs in flight and their released/id/timedout/settled fields;
 * sq_lock the ring's submission side (the reaper alone reads the CQ).
 * Order: jobs_lock, then sq_lock.
 */

_Static_assert(ACCEL_SCHED_PRIO_HIGH == ACCEL_PRIORITY_HIGH &&
	       ACCEL_SCHED_PRIO_NORMAL == ACCEL_PRIORITY_NORMAL &&
	       ACCEL_SCHED_PRIO_LOW == ACCEL_PRIORITY_LOW &&
	       ACCEL_QUEUE_WEIGHT_MIN == ACCEL_WEIGHT_MIN &&
	       ACCEL_QUEUE_WEIGHT_MAX == ACCEL_WEIGHT_MAX,
	       "the library's priority classes and weights are the module's");

/* Credits of an engine this library creates: released jobs in flight. */
#define KERNEL_ENGINE_CREDITS 4
/* user_data of the ring's own requests (records are 16-byte aligned). */
#define TAG_STOP 1
#define TAG_POLL 2
#define FETCH_MAX 64
/* The ioctl reaper's look at its jobs when nothing woke it, in ms. */
#define SCAN_PERIOD_MS 1000

/*
 * struct kernel_job - a job in the module (struct accel_sched_job.priv).
 * @link:       in the scheduler's jobs in flight (jobs_lock).
 * @next:        in a local list (the ioctl reaper's failed jobs), or in
 *               its queue's held releases (the io_uring reaper).
 * @id:          the module's id, once released.
 * @seq:         its place in its queue's release order (the io_uring reaper).
 * @res:         its SUBMIT's CQE res, while held.
 * @submitted:   an ioctl submission the module took (jobs_lock).
 * @released:    the module released it (jobs_lock).
 * @timedout:    the module timed it out (jobs_lock).
 * @settled:     the ioctl reaper found a failed wait (jobs_lock).
 * @retried:     submitted again without signals already passed.
 * @why:         why the module refused it.
 * @pts:         the waits, then the signals, as the module reads them.
 */
struct kernel_job {
	struct job_link link;
	struct kernel_job *next;
	struct accel_sched_job *job;
	struct accel_job kj;
	uint32_t id;
	uint32_t seq;
	uint32_t res;
	bool submitted;
	bool released;
	bool timedout;
	bool settled;
	bool retried;
	char why[ACCEL_FAILURE_MAX / 2];
	struct accel_point pts[];
};

/*
 * The kernel queue behind an executor (accel_executor_data()). @next_seq
 * and @held belong to the io_uring reaper alone: the number of the next
 * release it hands on, and the releases that came before their turn,
 * sorted by number.
 */
struct kernel_queue {
	struct accel_sched_kernel *k;
	uint32_t handle;
	char engine[ACCEL_ENGINE_NAME_LEN];
	uint32_t next_seq;
	struct kernel_job *held;
};

static struct accel_sched_kernel *to_kernel(accel_scheduler_t *s)
{
	return (struct accel_sched_kernel *)s;
}

static void link_locked(struct accel_sched_kernel *k, struct kernel_job *r)
{
	r->link.next = &k->jobs;
	r->link.prev = k->jobs.prev;
	k->jobs.prev->next = &r->link;
	k->jobs.prev = &r->link;
}

static void unlink_locked(struct kernel_job *r)
{
	r->link.prev->next = r->link.next;
	r->link.next->prev = r->link.prev;
	r->link.prev = r->link.next = NULL;
}

#define for_each_job(r, k)                                                   \
	for (struct job_link *l_ = (k)->jobs.next;                            \
	     l_ != &(k)->jobs && ((r) = (struct kernel_job *)l_, 1);          \
	     l_ = l_->next)

static void jobs_link(struct accel_sched_kernel *k, struct kernel_job *r)
{
	pthread_mutex_lock(&k->jobs_lock);
	link_locked(k, r);
	pthread_mutex_unlock(&k->jobs_lock);
}

static void jobs_unlink(struct accel_sched_kernel *k, struct kernel_job *r)
{
	pthread_mutex_lock(&k->jobs_lock);
	unlink_locked(r);
	pthread_mutex_unlock(&k->jobs_lock);
}

/* ---- failure messages ------------------------------------------------- */

/*
 * The first wait of @job whose syncobj failed (with @want, or with any
 * error when @want is 0), or UINT32_MAX; *@error gets its error and
 * *@settled whether every wait is reached or failed.
 */
static uint32_t failed_wait(struct accel_sched_job *job, int want,
			    int *error, bool *settled)
{
	uint32_t found = UINT32_MAX;
	uint64_t v;
	int e;

	if (settled)
		*settled = true;
	for (uint32_t i = 0; i < job->wait_count; i++) {
		kernel_sem_query(job->waits[i].sem, &v, &e);
		if (e && found == UINT32_MAX && (!want || e == want)) {
			found = i;
			if (error)
				*error = e;
		} else if (!e && v < job->waits[i].value && settled) {
			*settled = false;
		}
	}
	return found;
}

/* Writes @msg as @sem's failure message, unless it failed for another reason. */
static void note_failure(accel_semaphore_t *sem, int error, const char *msg)
{
	uint64_t v;
	int e;

	kernel_sem_query(sem, &v, &e);
	if (!e || e == error)
		accel_semaphore_set_failure(sem, msg);
}

/*
 * @job was not run, or failed, because its wait @i failed with @error: its
 * signals' messages are its sentence and that wait's message, however
 * late that one is written.
 */
static void note_wait_failure(struct accel_sched_job *job, uint32_t i,
			      int error)
{
	char hop[ACCEL_FAILURE_MAX];
	uint64_t v;
	int e;

	accel_sched_wait_failed_hop(job, i, error, hop, sizeof(hop));
	for (uint32_t j = 0; j < job->signal_count; j++) {
		accel_semaphore_t *sem = job->signals[j].sem;

		kernel_sem_query(sem, &v, &e);
		if (!e || e == error)
			accel_semaphore_set_failure_cause(sem, hop, job->waits[i].sem);
	}
}

/* Notes @msg, then fails @sem with @error (the first failure wins). */
static void fail_signal(accel_semaphore_t *sem, int error, const char *msg)
{
	struct accel_syncobj_fail args = { .handle = to_ksem(sem)->handle,
					   .error = error };

	note_failure(sem, error, msg);
	kioctl(to_ksem(sem)->fd, ACCEL_IOCTL_SYNCOBJ_FAIL, &args);
}

static bool job_signals(const struct accel_sched_job *job,
			const accel_semaphore_t *sem)
{
	for (uint32_t i = 0; i < job->signal_count; i++)
		if (job->signals[i].sem == sem)
			return true;
	return false;
}

static void timeout_message(const struct accel_sched_job *job, char *msg,
			    size_t len)
{
	accel_strfmt(msg, len,
		"%s timed out: the kernel scheduler failed it with ETIMEDOUT because it did not complete within its job timeout (the accelsched module parameter job_timeout_ms)",
		job->label);
}

/*
 * Why @r's points failed with @error, as the embedded scheduler says it,
 * when no wait of its failed: its signals get the message. Otherwise its
 * signals name the failed wait as their cause, which is returned.
 */
static accel_semaphore_t *describe_job(struct kernel_job *r, int error)
{
	struct accel_sched_job *job = r->job;
	uint32_t i = failed_wait(job, error, NULL, NULL);
	char msg[ACCEL_FAILURE_MAX];

	if (i < job->wait_count) {
		note_wait_failure(job, i, error);
		return job->waits[i].sem;
	}
	if (error == -ETIMEDOUT && r->released)
		timeout_message(job, msg, sizeof(msg));
	else if (r->why[0])
		accel_strfmt(msg, sizeof(msg), "%s", r->why);
	else
		accel_strfmt(msg, sizeof(msg), "%s failed in the kernel scheduler with %s",
			     job->label, accel_errno_name(-error));
	for (uint32_t j = 0; j < job->signal_count; j++)
		note_failure(job->signals[j].sem, error, msg);
	return NULL;
}

/*
 * resolve_failure() - give @sem, failed with @error by the module, the
 * message of the job of this process that promised it, if it has none;
 * and so on down the chain of jobs not run because the one before failed,
 * to the first failure. Each link names its cause, so the order in which
 * the jobs of a chain are resolved does not matter (semaphore.c); the walk
 * ends at a semaphore with a message, or after as many steps as there are
 * jobs in flight (a job may wait on what it signals).
 */
static void resolve_failure(struct accel_sched_kernel *k, accel_semaphore_t *sem,
			    int error)
{
	struct kernel_job *r;
	size_t steps = 0, jobs = 0;

	pthread_mutex_lock(&k->jobs_lock);
	for_each_job(r, k)
		jobs++;
	while (sem && steps++ <= jobs && !accel_semaphore_failure_known(sem)) {
		accel_semaphore_t *next = NULL;

		for_each_job(r, k) {
			if (job_signals(r->job, sem)) {
				next = describe_job(r, error);
				break;
			}
		}
		sem = next;
	}
	pthread_mutex_unlock(&k->jobs_lock);
}

/* ---- submission ------------------------------------------------------- */

static struct kernel_job *kernel_job_new(struct accel_sched_job *job,
					 uint32_t queue)
{
	uint32_t nw = job->wait_count, ns = job->signal_count;
	struct kernel_job *r = calloc(1, sizeof(*r) + (nw + ns) * sizeof(r->pts[0]));

	if (!r)
		return NULL;
	for (uint32_t i = 0; i < nw + ns; i++) {
		const struct accel_sched_point *p =
			i < nw ? &job->waits[i] : &job->signals[i - nw];

		r->pts[i].handle = to_ksem(p->sem)->handle;
		r->pts[i].point = p->value;
	}
	r->job = job;
	r->kj.user_data = (uint64_t)(uintptr_t)r;
	r->kj.waits = (uint64_t)(uintptr_t)r->pts;
	r->kj.signals = (uint64_t)(uintptr_t)(r->pts + nw);
	r->kj.nwaits = nw;
	r->kj.nsignals = ns;
	r->kj.queue = queue;
	return r;
}

/*
 * Drops from @r's kernel signals the points their semaphore has passed
 * already (the module refuses them; they fail with -EINVAL at completion).
 * True if it dropped any. Only before the first retry: the kernel's list
 * then still matches job->signals.
 */
static bool drop_passed_signals(struct kernel_job *r)
{
	struct accel_point *sig = r->pts + r->job->wait_count;
	uint32_t n = 0;
	uint64_t v;
	int e;

	for (uint32_t i = 0; i < r->kj.nsignals; i++) {
		kernel_sem_query(r->job->signals[i].sem, &v, &e);
		if (!e && v >= sig[i].point)
			continue;
		sig[n++] = sig[i];
	}
	if (n == r->kj.nsignals)
		return false;
	r->kj.nsignals = n;
	return true;
}

static const char *refusal_hint(int err)
{
	switch (err) {
	case ENOSPC:
		return " (the module's per-file limit of jobs submitted and not completed, parameter max_jobs)";
	case ENOENT:
		return " (a semaphore or the queue is unknown to the module)";
	case ENOMEM:
		return " (the kernel is out of memory)";
	}
	return "";
}

static void refusal_message(struct kernel_job *r, int err)
{
	accel_strfmt(r->why, sizeof(r->why),
		     "%s was not run: the kernel scheduler refused it with %s%s",
		     r->job->label, accel_errno_name(-err), refusal_hint(-err));
}

static void prep_submit(struct io_uring_sqe *sqe, int fd, struct kernel_job *r)
{
	struct accel_uring_submit p = { .job = (uint64_t)(uintptr_t)&r->kj };

	io_uring_prep_rw(IORING_OP_URING_CMD, sqe, fd, NULL, 0, 0);
	sqe->cmd_op = ACCEL_URING_CMD_JOB_SUBMIT;
	memset(sqe->cmd, 0, 16);
	memcpy(sqe->cmd, &p, sizeof(p));
	io_uring_sqe_set_data64(sqe, (uint64_t)(uintptr_t)r);
}

/*
 * Under sq_lock: hand the SQ to the kernel. Transient failures (a full
 * completion queue, a signal) are retried; the reaper drains the CQ.
 */
static int ring_flush_locked(struct accel_sched_kernel *k)
{
	int ret;

	for (;;) {
		ret = io_uring_submit(&k->ring);
		if (ret >= 0 || (ret != -EINTR && ret != -EAGAIN && ret != -EBUSY))
			return ret;
		if (ret != -EINTR)
			usleep(1000);
	}
}

static struct io_uring_sqe *get_sqe_locked(struct accel_sched_kernel *k)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&k->ring);

	if (!sqe && ring_flush_locked(k) >= 0)
		sqe = io_uring_get_sqe(&k->ring);
	return sqe;
}

/*
 * Puts @r's SUBMIT in the ring and enters it. Once its SQE is in the ring
 * it counts as submitted (a later enter takes it if this one failed), and
 * the record may be released, run and freed at any time: the caller must
 * not touch it after a 0. Returns -EBUSY when the ring has no free SQE.
 *
 * Each thread enters its own SQE: io_uring binds a request to the task
 * that issued it, and a task's exit cancels (6.12) or waits for (6.1) its
 * requests in flight, so a SUBMIT entered on another thread's behalf
 * would fail that thread's job when the issuer exits first. Entering from
 * the long-lived reaper would allow batching across threads.
 */
static int enter_submit(struct accel_sched_kernel *k, struct kernel_job *r)
{
	struct io_uring_sqe *sqe;

	pthread_mutex_lock(&k->sq_lock);
	sqe = get_sqe_locked(k);
	if (sqe) {
		prep_submit(sqe, k->fd, r);
		ring_flush_locked(k);
	}
	pthread_mutex_unlock(&k->sq_lock);
	return sqe ? 0 : -EBUSY;
}

static int submit_uring(struct accel_sched_kernel *k, struct kernel_job *r)
{
	int ret;

	jobs_link(k, r);
	ret = enter_submit(k, r);
	if (ret)
		jobs_unlink(k, r); /* its SQE never went in */
	return ret;
}

/* One-shot wakes of the reaper when a wait of an ioctl job settles. */
static void watch_waits(struct accel_sched_kernel *k, const struct kernel_job *r)
{
	for (uint32_t i = 0; i < r->kj.nwaits; i++) {
		struct accel_syncobj_eventfd a = {
			.handle = r->pts[i].handle,
			.point = r->pts[i].point,
			.fd = k->efd,
		};

		kioctl(k->fd, ACCEL_IOCTL_SYNCOBJ_EVENTFD, &a); /* else the scan period */
	}
}

static int submit_ioctl_locked(struct accel_sched_kernel *k, struct kernel_job *r)
{
	struct accel_job_submit a = { .jobs = (uint64_t)(uintptr_t)&r->kj, .count = 1 };
	int err = kioctl(k->fd, ACCEL_IOCTL_JOB_SUBMIT, &a);

	if (err == -EINVAL && !r->retried) {
		r->retried = true;
		if (drop_passed_signals(r)) {
			a.submitted = 0;
			err = kioctl(k->fd, ACCEL_IOCTL_JOB_SUBMIT, &a);
		}
	}
	return err;
}

/*
 * Under jobs_lock, so that the reaper sees the job only once the module
 * took it (its RELEASED event may come before the ioctl returns).
 */
static int submit_ioctl(struct accel_sched_kernel *k, struct kernel_job *r)
{
	int err;

	watch_waits(k, r);
	pthread_mutex_lock(&k->jobs_lock);
	link_locked(k, r);
	err = submit_ioctl_locked(k, r);
	if (err)
		unlink_locked(r);
	else
		r->submitted = true;
	pthread_mutex_unlock(&k->jobs_lock);
	return err;
}

static int check_points(const struct accel_sched_job *job)
{
	const char *what = job->wait_count > ACCEL_JOB_MAX_POINTS ? "waits" : "signals";
	uint32_t n = job->wait_count > ACCEL_JOB_MAX_POINTS ? job->wait_count : job->signal_count;

	if (n <= ACCEL_JOB_MAX_POINTS)
		return 0;
	return accel_fail(E2BIG,
		"accel_queue_execute: %s has %u entries, but the kernel scheduler takes at most ACCEL_JOB_MAX_POINTS (%u) per submission; split it (a barrier can gather points) or use ACCEL_SCHEDULER=embedded",
		what, n, ACCEL_JOB_MAX_POINTS);
}

static int kernel_job_submit(accel_scheduler_t *s, struct accel_sched_job *job)
{
	struct accel_sched_kernel *k = to_kernel(s);
	struct kernel_queue *q = accel_executor_data(job->executor);
	struct kernel_job *r;
	int err = check_points(job);

	if (err)
		return err;
	r = kernel_job_new(job, q->handle);
	if (!r)
		return accel_fail(ENOMEM, "accel_queue_execute: out of memory for the kernel job");
	atomic_init(&job->pending, 0);
	atomic_init(&job->wait_error, 0);
	atomic_init(&job->wait_index, 0);
	atomic_init(&job->cancel_error, 0);
	atomic_init(&job->pipelined, false);
	job->device_ns = 0;
	job->priv = r;
	/* From here on, a success hands @job to the reaper: touch nothing. */
	err = k->uring ? submit_uring(k, r) : submit_ioctl(k, r);
	if (!err)
		return 0;
	job->priv = NULL;
	free(r);
	return accel_fail(-err,
		"accel_queue_execute: the kernel scheduler refused the submission: %s failed with %s%s",
		k->uring ? "io_uring_enter (ACCEL_URING_CMD_JOB_SUBMIT)" : "ACCEL_IOCTL_JOB_SUBMIT",
		accel_errno_name(-err), refusal_hint(-err));
}

/* ---- the reaper ------------------------------------------------------- */

static void release(struct accel_sched_kernel *k, struct kernel_job *r, uint32_t id)
{
	pthread_mutex_lock(&k->jobs_lock);
	r->id = id & ACCEL_JOB_RES_ID_MASK;
	r->released = true;
	pthread_mutex_unlock(&k->jobs_lock);
	/* Pipelined: the executor orders it after its waits (executor.c). */
	atomic_store(&r->job->pipelined, (id & ACCEL_JOB_RES_PIPELINED) != 0);
	accel_executor_push(r->job->executor, r->job);
}

/* @r will never be released: its executor completes it as not run. */
static void not_run(struct accel_sched_kernel *k, struct kernel_job *r,
		    int err, uint32_t wait)
{
	struct accel_sched_job *job = r->job;

	if (wait < job->wait_count) {
		resolve_failure(k, job->waits[wait].sem, err);
		atomic_store(&job->wait_index, wait);
		atomic_store(&job->wait_error, err);
	} else {
		refusal_message(r, err);
		atomic_store(&job->cancel_error, err);
	}
	accel_executor_push(job->executor, job);
}

/*
 * A release CQE, handed on in its queue's release order. CQEs of SUBMITs
 * answered from task work reach the ring in no set order (each is posted
 * by the thread that entered it); the module numbers them in @x1
 * (ACCEL_URING_SEQ_VALID), and one without a number takes the next (the
 * module answers at once only when all earlier releases are posted). A
 * release that comes early waits in its queue's @held list for the gap.
 * Without big CQEs (an older module) @x1 is 0: arrival order.
 */
static void release_in_order(struct accel_sched_kernel *k, struct kernel_job *r,
			     uint32_t res, uint64_t x1)
{
	struct kernel_queue *q = accel_executor_data(r->job->executor);
	struct kernel_job **p;

	r->seq = x1 & ACCEL_URING_SEQ_VALID ? (uint32_t)(x1 & ACCEL_URING_SEQ_MASK) :
					      q->next_seq;
	if (r->seq != q->next_seq) {
		r->res = res;
		for (p = &q->held; *p && (int32_t)((*p)->seq - r->seq) < 0; p = &(*p)->next)
			;
		r->next = *p;
		*p = r;
		return;
	}
	/*
	 * Take the run of releases off @q first: once the last of them is
	 * pushed, its job may complete and drop the last queue reference,
	 * which frees @q (and each pushed @r) under this thread.
	 */
	r->res = res;
	r->next = NULL;
	for (p = &r->next, q->next_seq++; q->held && q->held->seq == q->next_seq;
	     q->next_seq++, p = &(*p)->next) {
		*p = q->held;
		q->held = q->held->next;
		(*p)->next = NULL;
	}
	while (r) {
		struct kernel_job *next = r->next;

		release(k, r, r->res);
		r = next;
	}
}

static void on_submit_cqe(struct accel_sched_kernel *k, struct kernel_job *r,
			  int res, uint64_t x1)
{
	if (res >= 0) {
		release_in_order(k, r, (uint32_t)res, x1);
		return;
	}
	if (res == -EINVAL && !r->retried) {
		r->retried = true;
		if (drop_passed_signals(r) && enter_submit(k, r) == 0)
			return;
	}
	not_run(k, r, res, failed_wait(r->job, res, NULL, NULL));
}

static void on_timedout(struct accel_sched_kernel *k, uint32_t id)
{
	struct kernel_job *r;

	pthread_mutex_lock(&k->jobs_lock);
	for_each_job(r, k) {
		if (!r->released || r->id != id)
			continue;
		r->timedout = true;
		/* Not started yet: it is dropped. */
		atomic_store(&r->job->cancel_error, -ETIMEDOUT);
		break;
	}
	pthread_mutex_unlock(&k->jobs_lock);
}

static void fetch_events(struct accel_sched_kernel *k)
{
	struct accel_job_event ev[FETCH_MAX];
	struct accel_job_fetch f;

	do {
		f = (struct accel_job_fetch){ .events = (uint64_t)(uintptr_t)ev,
					      .max = FETCH_MAX };
		if (kioctl(k->fd, ACCEL_IOCTL_JOB_FETCH, &f))
			return;
		for (uint32_t i = 0; i < f.count; i++) {
			if (ev[i].type == ACCEL_JOB_EVENT_RELEASED)
				release(k, (struct kernel_job *)(uintptr_t)ev[i].user_data,
					ev[i].id | (ev[i].flags & ACCEL_JOB_RES_PIPELINED));
			else if (ev[i].type == ACCEL_JOB_EVENT_TIMEDOUT)
				on_timedout(k, ev[i].id);
		}
	} while (f.count == FETCH_MAX);
}

/* ioctl jobs whose waits all settled with one failed: the module dropped them. */
static void scan_failed(struct accel_sched_kernel *k)
{
	struct kernel_job *failed = NULL, *r;
	int err = 0;

	pthread_mutex_lock(&k->jobs_lock);
	for_each_job(r, k) {
		bool settled;
		uint32_t i;

		if (!r->submitted || r->released || r->settled)
			continue;
		i = failed_wait(r->job, 0, &err, &settled);
		if (!settled || i >= r->job->wait_count)
			continue;
		r->settled = true;
		r->id = i;              /* never released: reuse as the wait index */
		atomic_store(&r->job->wait_error, err);
		r->next = failed;
		failed = r;
	}
	pthread_mutex_unlock(&k->jobs_lock);
	while (failed) {
		r = failed;
		failed = r->next;
		not_run(k, r, atomic_load(&r->job->wait_error), r->id);
	}
}

static void arm_poll(struct accel_sched_kernel *k)
{
	struct io_uring_sqe *sqe;

	pthread_mutex_lock(&k->sq_lock);
	sqe = get_sqe_locked(k);
	if (sqe) {
		io_uring_prep_poll_add(sqe, k->fd, POLLIN);
		io_uring_sqe_set_data64(sqe, TAG_POLL);
		ring_flush_locked(k);
	}
	pthread_mutex_unlock(&k->sq_lock);
}

static void *reaper_uring(void *arg)
{
	struct accel_sched_kernel *k = arg;

	arm_poll(k);
	for (;;) {
		struct io_uring_cqe *cqe;
		uint64_t ud, x1;
		int res, ret = io_uring_wait_cqe(&k->ring, &cqe);

		if (ret < 0) {
			if (ret != -EINTR)
				usleep(1000);
			continue;
		}
		ud = io_uring_cqe_get_data64(cqe);
		res = cqe->res;
		x1 = k->ring.flags & IORING_SETUP_CQE32 ? cqe->big_cqe[0] : 0;
		io_uring_cqe_seen(&k->ring, cqe);
		if (ud == TAG_STOP)
			break;
		if (ud == TAG_POLL) {
			fetch_events(k);
			arm_poll(k);
		} else if (ud > TAG_POLL) {
			on_submit_cqe(k, (struct kernel_job *)(uintptr_t)ud, res, x1);
		}
	}
	return NULL;
}

static void *reaper_ioctl(void *arg)
{
	struct accel_sched_kernel *k = arg;
	struct pollfd p[2] = { { .fd = k->fd, .events = POLLIN },
			       { .fd = k->efd, .events = POLLIN } };
	uint64_t v;

	while (!atomic_load(&k->stop)) {
		int n = poll(p, 2, SCAN_PERIOD_MS);

		if (n < 0)
			continue;
		if (p[0].revents & POLLIN)
			fetch_events(k);
		if (n == 0 || (p[1].revents & POLLIN)) {
			if (read(k->efd, &v, sizeof(v)) < 0 && errno != EAGAIN)
				usleep(1000);
			scan_failed(k);
		}
	}
	return NULL;
}

/* Under jobs_lock: start the reaper with the first queue. */
static int reaper_start_locked(struct accel_sched_kernel *k)
{
	int err;

	if (k->reaping)
		return 0;
	if (!k->uring && k->efd < 0) {
		k->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (k->efd < 0)
			return accel_fail(errno,
				"accel_queue_create: eventfd() for the kernel scheduler's reaper failed: %s",
				accel_errno_name(errno));
	}
	err = pthread_create(&k->reaper, NULL, k->uring ? reaper_uring : reaper_ioctl, k);
	if (err)
		return accel_fail(EAGAIN,
			"accel_queue_create: cannot start the kernel scheduler's reaper thread: %s (check RLIMIT_NPROC and the memory limit)",
			accel_errno_name(err));
	pthread_setname_np(k->reaper, "accel-reap");
	k->reaping = true;
	return 0;
}

static void reaper_stop(struct accel_sched_kernel *k)
{
	uint64_t one = 1;

	if (!k->reaping)
		return;
	atomic_store(&k->stop, true);
	if (k->uring) {
		struct io_uring_sqe *sqe;

		pthread_mutex_lock(&k->sq_lock);
		while (!(sqe = get_sqe_locked(k)))
			usleep(1000);
		io_uring_prep_nop(sqe);
		io_uring_sqe_set_data64(sqe, TAG_STOP);
		ring_flush_locked(k);
		pthread_mutex_unlock(&k->sq_lock);
	} else if (write(k->efd, &one, sizeof(one)) < 0) {
		/* a full counter wakes it as well */
	}
	pthread_join(k->reaper, NULL);
	k->reaping = false;
}

/* ---- completion (executor thread) ------------------------------------- */

/* Success: a signal a host signal passed fails with -EINVAL, as embedded. */
static void check_signals(struct accel_sched_job *job)
{
	char msg[ACCEL_FAILURE_MAX];
	uint64_t v;
	int e;

	for (uint32_t i = 0; i < job->signal_count; i++) {
		const struct accel_sched_point *p = &job->signals[i];

		kernel_sem_query(p->sem, &v, &e);
		if (e || v < p->value)
			continue;
		accel_strfmt(msg, sizeof(msg),
			     "%s completed, but could not signal %" PRIu64 ": the semaphore is already at %" PRIu64 " (a timeline never moves back)",
			     job->label, p->value, v);
		fail_signal(p->sem, -EINVAL, msg);
	}
}

static void kernel_job_complete(accel_scheduler_t *s, struct accel_sched_job *job,
				int status, const char *msg)
{
	struct accel_sched_kernel *k = to_kernel(s);
	struct kernel_job *r = job->priv;
	char buf[ACCEL_FAILURE_MAX];
	bool released, timedout;

	pthread_mutex_lock(&k->jobs_lock);
	released = r->released;
	timedout = r->timedout;
	pthread_mutex_unlock(&k->jobs_lock);
	if (timedout) {
		status = -ETIMEDOUT;
		timeout_message(job, buf, sizeof(buf));
		msg = buf;
	} else if (!released && r->why[0]) {
		msg = r->why;
	} else if (status && status == atomic_load(&job->wait_error)) {
		/* Not run: its signals name the failed wait as their cause. */
		note_wait_failure(job, atomic_load(&job->wait_index), status);
	}
	if (status)
		for (uint32_t i = 0; i < job->signal_count; i++)
			fail_signal(job->signals[i].sem, status, msg);
	else
		check_signals(job);
	if (released) {
		struct accel_job_complete c = { .id = r->id, .status = status,
						.device_ns = job->device_ns };

		kioctl(k->fd, ACCEL_IOCTL_JOB_COMPLETE, &c); /* late: -ETIMEDOUT */
	}
	jobs_unlink(k, r);
}

/* ---- queues ----------------------------------------------------------- */

/* "cpu://0" -> "cpu", "vulkan://1?x=y" -> "vulkan:1": [a-z0-9:._-]. */
static void engine_name(const char *uri, char *out, size_t len)
{
	const char *sep = strstr(uri, "://");
	size_t dlen;

	if (!sep) {
		accel_strfmt(out, len, "%s", uri);
	} else if (sep - uri == 3 && strncmp(uri, "cpu", 3) == 0) {
		accel_strfmt(out, len, "cpu");
	} else {
		dlen = strcspn(sep + 3, "?");
		accel_strfmt(out, len, "%.*s:%.*s", (int)(sep - uri), uri,
			     dlen ? (int)dlen : 1, dlen ? sep + 3 : "0");
	}
	for (char *c = out; *c; c++) {
		*c = (char)tolower((unsigned char)*c);
		if (!isalnum((unsigned char)*c) && !strchr(":._-", *c))
			*c = '_';
	}
	if (!out[0])
		accel_strfmt(out, len, "unnamed");
}

static int queue_create(struct accel_sched_kernel *k, const char *name,
			const struct accel_sched_queue_params *params,
			struct kernel_queue *q)
{
	struct accel_queue_create a = {
		.priority = params->priority,
		.weight = params->weight,
		.credits = KERNEL_ENGINE_CREDITS,
	};
	int err;

	engine_name(name, a.engine, sizeof(a.engine));
	memcpy(q->engine, a.engine, sizeof(q->engine));
	err = kioctl(k->fd, ACCEL_IOCTL_QUEUE_CREATE, &a);
	if (err == -EEXIST) { /* ABI < 1.4: another limit; take the engine's */
		a.credits = 0;
		err = kioctl(k->fd, ACCEL_IOCTL_QUEUE_CREATE, &a);
	}
	if (err == -EACCES && a.priority == ACCEL_PRIORITY_HIGH)
		return accel_fail(EACCES,
			"%s: the accelsched module refused priority HIGH on engine \"%s\" for %s (EACCES): this process lacks CAP_SYS_NICE, which HIGH requires; ACCEL_QUEUE_PRIORITY_NORMAL works without it",
			params->caller, a.engine, name);
	if (err)
		return accel_fail(-err,
			"%s: ACCEL_IOCTL_QUEUE_CREATE on engine \"%s\" for %s (priority %u, weight %u) failed with %s%s",
			params->caller, a.engine, name, a.priority, a.weight,
			accel_errno_name(-err),
			err == -EMFILE ? " (the module's per-file queue limit, parameter max_queues)" : "");
	q->handle = a.handle;
	return 0;
}

static void queue_destroy(struct accel_sched_kernel *k, struct kernel_queue *q)
{
	struct accel_queue_destroy a = { .handle = q->handle };

	kioctl(k->fd, ACCEL_IOCTL_QUEUE_DESTROY, &a);
	free(q);
}

static int kernel_executor_create(accel_scheduler_t *s, const char *name,
				  const struct accel_sched_queue_params *params,
				  struct accel_sched_executor **out)
{
	struct accel_sched_kernel *k = to_kernel(s);
	struct kernel_queue *q;
	int err;

	if (!(k->info.features & ACCEL_FEATURE_SCHED))
		return accel_fail(EOPNOTSUPP,
			"accel_queue_create: the accelsched module (ABI %u.%u) has no job scheduler (ACCEL_FEATURE_SCHED, ABI 1.2); upgrade the module or use ACCEL_SCHEDULER=embedded",
			k->info.abi_major, k->info.abi_minor);
	pthread_mutex_lock(&k->jobs_lock);
	err = reaper_start_locked(k);
	pthread_mutex_unlock(&k->jobs_lock);
	if (err)
		return err;
	q = calloc(1, sizeof(*q));
	if (!q)
		return accel_fail(ENOMEM, "accel_queue_create: out of memory");
	q->k = k;
	err = queue_create(k, name, params, q);
	if (err) {
		free(q);
		return err;
	}
	err = accel_executor_thread_create(s, name, out);
	if (err) {
		queue_destroy(k, q);
		return err;
	}
	accel_executor_set_data(*out, q);
	return 0;
}

/* Called when the queue's last job is done: nothing is left to cancel. */
static void kernel_executor_destroy(struct accel_sched_executor *ex)
{
	/* The executor may be this very thread: read it before it goes. */
	struct kernel_queue *q = accel_executor_data(ex);

	accel_executor_thread_destroy(ex);
	queue_destroy(q->k, q);
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
	.sem_export_fd = kernel_sem_export_fd,
	.sem_import_fd = kernel_sem_import_fd,
	.sem_export_sync_file = kernel_sem_export_sync_file,
	.sem_import_sync_file = kernel_sem_import_sync_file,
	.executor_create = kernel_executor_create,
	.executor_destroy = kernel_executor_destroy,
	.job_submit = kernel_job_submit,
	.job_complete = kernel_job_complete,
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
	kernel_jobs_init(k);
	k->fd = fd;
	k->info = info;
	k->uring = accel_uring_setup(&k->ring, fd, info.features, uring_why,
				     sizeof(uring_why)) == 0;
	kernel_describe(cfg, k, uring_why, why, why_len);
	*out = &k->base;
	return 0;
}
