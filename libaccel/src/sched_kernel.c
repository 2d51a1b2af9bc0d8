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
 * are the module's jobs (see "Jobs" in sched_kernel_job.c): the module
 * orders them, picks which to release within each engine's credits, and
 * propagates failures; this process only runs what it is given and
 * reports back.
 *
 * The files, around what they share (sched_kernel.h):
 *  - sched_kernel.c: opening and probing the device, the ops table,
 *    destroy and query;
 *  - sched_kernel_sem.c: semaphores, the module's syncobjs, and sharing
 *    them (exported fds, sync_files);
 *  - sched_kernel_job.c: jobs (records, the jobs in flight, failure
 *    messages, submission, completion, device-side waits of pipelined
 *    jobs) and queues (executors);
 *  - sched_kernel_reaper.c: the reaper thread, which learns what the
 *    module decided and hands jobs to their executors.
 * Locking: jobs_lock, then sq_lock; the reaper alone reads the CQ.
 *
 * Thread-safety: thread-safe. A scheduler is one open file of the device,
 * shared by every device and queue opened on it.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <accelsched.h>

#include "error.h"
#include "sched.h"
#include "sched_kernel.h"
#include "uapi_check.h"
#include "uring.h"

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
			name, accel_file_type(st.st_mode), accel_errno_name(err),
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
		accel_file_type(st.st_mode), hint_wrong_node(cfg));
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

/* No job is left: each held the scheduler through its queue's device. */
static void kernel_destroy(accel_scheduler_t *s)
{
	struct accel_sched_kernel *k = (struct accel_sched_kernel *)s;

	kernel_reaper_stop(k);
	/* No SUBMIT is in flight: the file goes from the table at once. */
	if (k->fixed_fd)
		io_uring_unregister_files(&k->ring);
	if (k->uring)
		io_uring_queue_exit(&k->ring);
	if (k->efd >= 0)
		close(k->efd);
	close(k->fd);
	pthread_mutex_destroy(&k->sq_lock);
	pthread_mutex_destroy(&k->fetch_lock);
	pthread_mutex_destroy(&k->jobs_lock);
	pthread_cond_destroy(&k->dev_cond);
	pthread_mutex_destroy(&k->dev_lock);
	free(k);
}

static void kernel_jobs_init(struct accel_sched_kernel *k)
{
	pthread_condattr_t cattr;
	pthread_mutexattr_t attr;

	pthread_mutexattr_init(&attr);
	pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&k->jobs_lock, &attr);
	pthread_mutexattr_destroy(&attr);
	k->jobs.next = k->jobs.prev = &k->jobs;
	pthread_mutex_init(&k->sq_lock, NULL);
	pthread_mutex_init(&k->fetch_lock, NULL);
	pthread_mutex_init(&k->dev_lock, NULL);
	pthread_condattr_init(&cattr);
	pthread_condattr_setclock(&cattr, CLOCK_MONOTONIC);
	pthread_cond_init(&k->dev_cond, &cattr);
	pthread_condattr_destroy(&cattr);
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
	.sem_set_deadline = kernel_sem_set_deadline,
	.executor_create = kernel_executor_create,
	.executor_destroy = kernel_executor_destroy,
	.job_submit = kernel_job_submit,
	.job_complete = kernel_job_complete,
	.sem_device_promise = kernel_sem_device_promise,
	.job_device_wait = kernel_job_device_wait,
};

/*
 * Jobs' outcomes as events (ACCEL_JOB_F_EVENTS, ABI 1.8), unless
 * ACCEL_KERNEL_EVENTS=0 asks for the answers of earlier modules. On a
 * ring, a SUBMIT is then answered at once with 0, and the record it names
 * may be gone by the time its CQE would be read: the ring must be able to
 * leave successful CQEs out (IORING_FEAT_CQE_SKIP, Linux 5.17).
 */
static bool kernel_events_usable(const struct accel_sched_kernel *k)
{
	const char *env = secure_getenv(ACCEL_KERNEL_EVENTS_ENV);

	if (!(k->info.features & ACCEL_FEATURE_JOB_EVENTS))
		return false;
	if (env && strcmp(env, "0") == 0)
		return false;
	return !k->uring || k->ring.features & IORING_FEAT_CQE_SKIP;
}

/*
 * Releases answered by the SUBMIT (ABI 1.9) when ACCEL_KERNEL_ANSWER=1,
 * with events: by ioctl, which returns the answer to the thread that
 * asked; not on a polled ring, whose point is a submission without a
 * system call. Sets k->answer; returns why an answer asked for cannot be
 * had, or NULL (taken, or not asked).
 */
static const char *kernel_answer_setup(struct accel_sched_kernel *k)
{
	const char *env = secure_getenv(ACCEL_KERNEL_ANSWER_ENV);
	const char *refused = NULL;

	if (!env || strcmp(env, "1") != 0)
		return NULL;
	if (!(k->info.features & ACCEL_FEATURE_JOB_ANSWER))
		refused = "the module answers no release (that came with ABI 1.9)";
	else if (!k->events)
		refused = "releases are not events (" ACCEL_KERNEL_EVENTS_ENV "=0, or a module before ABI 1.8)";
	else if (k->sqpoll_ms)
		refused = "a polled ring submits without a system call";
	k->answer = !refused;
	return refused;
}

static void kernel_describe(const struct accel_sched_config *cfg,
			    const struct accel_sched_kernel *k, const char *uring_why,
			    const char *refused, char *why, size_t len)
{
	char name[DEVICE_NAME_MAX], ev[ACCEL_REASON_MAX / 2];

	accel_strfmt(ev, sizeof(ev), "%s%s%s",
		     k->answer ? "; releases as events, or in the answer of the submission that made them (" ACCEL_KERNEL_ANSWER_ENV "=1)" :
		     k->events ? "; releases as events" :
		     k->info.features & ACCEL_FEATURE_JOB_EVENTS ?
		     "; releases as SUBMIT answers (" ACCEL_KERNEL_EVENTS_ENV "=0)" : "",
		     refused ? "; " ACCEL_KERNEL_ANSWER_ENV "=1 ignored: " : "",
		     refused ? refused : "");

	device_name(cfg, name, sizeof(name));
	if (k->uring && k->sqpoll_ms)
		accel_strfmt(why, len,
			     "%s answered: module %s, ABI %u.%u, io_uring ok, polled by a kernel thread (idle %u ms)%s",
			     name, k->info.version, k->info.abi_major,
			     k->info.abi_minor, k->sqpoll_ms, ev);
	else if (k->uring)
		accel_strfmt(why, len,
			     "%s answered: module %s, ABI %u.%u, io_uring ok%s%s%s",
			     name, k->info.version, k->info.abi_major,
			     k->info.abi_minor, *uring_why ? "; " : "", uring_why, ev);
	else
		accel_strfmt(why, len,
			     "%s answered: module %s, ABI %u.%u, io_uring unavailable (%s), so commands go through ioctls%s",
			     name, k->info.version, k->info.abi_major,
			     k->info.abi_minor, uring_why, ev);
}

int accel_sched_kernel_open(const struct accel_sched_config *cfg,
			    accel_scheduler_t **out, char *why, size_t why_len)
{
	struct accel_sched_kernel *k;
	struct accel_info info;
	char uring_why[ACCEL_REASON_MAX / 2], sq_note[ACCEL_REASON_MAX / 4];
	const char *no_answer;
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
	/* A bad ACCEL_URING_SQPOLL means no polling, and the reason says so. */
	k->sqpoll_ms = accel_uring_sqpoll_ms(sq_note, sizeof(sq_note));
	k->uring = accel_uring_setup(&k->ring, fd, info.features, &k->sqpoll_ms,
				     uring_why, sizeof(uring_why)) == 0;
	if (!k->uring)
		k->sqpoll_ms = 0; /* no ring to poll, or to drain */
	else if (!k->sqpoll_ms) /* polled: the SQ thread holds the table's file */
		k->fixed_fd = io_uring_register_files(&k->ring, &fd, 1) == 0;
	if (k->uring && *sq_note)
		accel_strfmt(uring_why, sizeof(uring_why), "%s", sq_note);
	k->events = kernel_events_usable(k);
	no_answer = kernel_answer_setup(k);
	kernel_describe(cfg, k, uring_why, no_answer, why, why_len);
	*out = &k->base;
	return 0;
}
