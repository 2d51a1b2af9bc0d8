// SPDX-License-Identifier: MIT
/*
 * Semaphores: the public API. Arguments are validated here; the timeline
 * itself is the scheduler kind's (sched_embedded.c, sched_kernel.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "error.h"
#include "sched.h"

int64_t accel_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

ACCEL_EXPORT int64_t accel_deadline_after(uint64_t ns)
{
	int64_t now = accel_now_ns();

	if (ns >= (uint64_t)(ACCEL_DEADLINE_INFINITE - now))
		return ACCEL_DEADLINE_INFINITE;
	return now + (int64_t)ns;
}

/*
 * Failure messages. A semaphore's message is written once and then never
 * changes. A cascaded failure (a submission not run because its wait
 * failed) is "<its own sentence>: <the cause's message>", and its cause's
 * message may not be known yet when it fails: the kernel scheduler fails a
 * whole chain of submissions at once, and this library learns of each in
 * no set order. Such a semaphore then keeps its sentence (@hop) and a
 * reference to its cause, and the message is composed when it is read,
 * from the root of the chain back; until the chain reaches a semaphore
 * with a full message, a read returns the sentence alone.
 *
 * failure_lock protects the failure fields of every semaphore: a cascade
 * spans several. Links never form a cycle: a link that would (a
 * submission that waits on the semaphore it signals) is not made, and the
 * sentence stands alone. A chain is at most FAILURE_HOPS_MAX links long.
 */
#define FAILURE_HOPS_MAX 65536

static pthread_mutex_t failure_lock = PTHREAD_MUTEX_INITIALIZER;

void accel_semaphore_init(accel_semaphore_t *sem, accel_scheduler_t *s)
{
	accel_ref_init(&sem->ref);
	accel_scheduler_retain(s);
	sem->scheduler = s;
	sem->failure[0] = '\0';
	sem->hop = NULL;
	sem->cause = NULL;
	sem->drop_next = NULL;
}

/*
 * Semaphores whose last reference this thread dropped while it was
 * destroying another: destroyed one after the other, not recursively, so
 * that freeing a long chain of causes takes no deep stack.
 */
static __thread accel_semaphore_t *drop_list;
static __thread bool dropping;

static void drop_cause(accel_semaphore_t *cause)
{
	if (!cause || !accel_ref_put(&cause->ref))
		return;
	cause->drop_next = drop_list;
	drop_list = cause;
	if (dropping)
		return;
	dropping = true;
	while (drop_list) {
		accel_semaphore_t *sem = drop_list;

		drop_list = sem->drop_next;
		sem->scheduler->ops->sem_destroy(sem);
	}
	dropping = false;
}

void accel_semaphore_fini(accel_semaphore_t *sem)
{
	accel_scheduler_t *s = sem->scheduler;

	free(sem->hop);
	drop_cause(sem->cause);
	accel_scheduler_release(s);
}

void accel_semaphore_set_failure(accel_semaphore_t *sem, const char *message)
{
	pthread_mutex_lock(&failure_lock);
	if (!sem->failure[0] && !sem->cause)
		accel_strfmt(sem->failure, sizeof(sem->failure), "%s", message);
	pthread_mutex_unlock(&failure_lock);
}

/* The parts of a hop's sentence (accel_sched_wait_failed_message()). */
#define HOP_NOT_RUN " was not run: its wait "
#define HOP_FAILED ") failed with "
#define HOP_VIA " (via "

/*
 * If @msg is a hop's sentence, the cause it names (the text after the
 * errno name and ": "), with *@hops increased by the submissions it
 * passed through: its own, and the N of a "(via N submissions)"; else
 * NULL.
 */
static const char *hop_cause(const char *msg, uint64_t *hops)
{
	const char *p = strstr(msg, HOP_NOT_RUN), *end, *via;
	unsigned long long n = 0;

	if (!p || !(p = strstr(p, HOP_FAILED)))
		return NULL;
	p += strlen(HOP_FAILED);
	end = strstr(p, ": ");
	if (!end)
		return NULL;
	via = strstr(p, HOP_VIA);
	if (via && via < end &&
	    sscanf(via + strlen(HOP_VIA), "%llu", &n) != 1)
		return NULL;
	*hops += 1 + n;
	return end + 2;
}

void accel_failure_compose(char *msg, size_t len, const char *hop,
			   const char *cause)
{
	const char *next;
	uint64_t hops = 0;
	int n = snprintf(msg, len, "%s: %s", hop, cause);

	if (n >= 0 && (size_t)n < len)
		return;
	/* Too long for one message: count the hops, keep the first cause. */
	while ((next = hop_cause(cause, &hops)))
		cause = next;
	accel_strfmt(msg, len, "%s" HOP_VIA "%" PRIu64 " submission%s): %s",
		     hop, hops, hops == 1 ? "" : "s", cause);
}

/*
 * Under failure_lock: compose the messages of @sem's chain of causes, from
 * the root back, if the chain reaches one. Returns the causes whose
 * references the composed links held, *@count of them, for the caller to
 * drop after unlocking (drop_causes()); NULL if nothing was composed.
 */
static accel_semaphore_t **resolve_locked(accel_semaphore_t *sem, size_t *count)
{
	accel_semaphore_t *p = sem, **causes;
	size_t n = 0;

	while (p->cause && n < FAILURE_HOPS_MAX) {
		p = p->cause;
		n++;
	}
	if (p->cause || !p->failure[0] || !n)
		return NULL; /* no root yet */
	causes = malloc(n * sizeof(*causes));
	if (!causes)
		return NULL; /* the sentence alone, for now */
	p = sem;
	for (size_t i = 0; i < n; i++, p = p->cause)
		causes[i] = p; /* the links, for now */
	for (size_t i = n; i--;) {
		p = causes[i];
		accel_failure_compose(p->failure, sizeof(p->failure), p->hop,
				      p->cause->failure);
		causes[i] = p->cause;
		p->cause = NULL;
	}
	*count = n;
	return causes;
}

static void drop_causes(accel_semaphore_t **causes, size_t count)
{
	for (size_t i = 0; i < count; i++)
		drop_cause(causes[i]);
	free(causes);
}

void accel_semaphore_set_failure_cause(accel_semaphore_t *sem, const char *hop,
				       accel_semaphore_t *cause)
{
	accel_semaphore_t *p = cause;
	char *copy = strdup(hop);
	size_t n = 0;

	pthread_mutex_lock(&failure_lock);
	if (sem->failure[0] || sem->cause)
		goto out; /* the first failure wins */
	while (p != sem && p->cause && n++ < FAILURE_HOPS_MAX)
		p = p->cause;
	if (cause->failure[0] && !cause->cause) {
		accel_failure_compose(sem->failure, sizeof(sem->failure), hop,
				      cause->failure);
	} else if (p == sem || p->cause || !copy) {
		/* A cycle, too long a chain, or no memory: the sentence alone. */
		accel_strfmt(sem->failure, sizeof(sem->failure), "%s", hop);
	} else {
		accel_semaphore_retain(cause);
		sem->cause = cause;
		sem->hop = copy;
		copy = NULL;
	}
out:
	pthread_mutex_unlock(&failure_lock);
	free(copy);
}

bool accel_semaphore_failure_known(accel_semaphore_t *sem)
{
	bool known;

	pthread_mutex_lock(&failure_lock);
	known = sem->failure[0] || sem->cause;
	pthread_mutex_unlock(&failure_lock);
	return known;
}

ACCEL_EXPORT int accel_semaphore_create(accel_scheduler_t *scheduler,
					uint64_t initial,
					accel_semaphore_t **out)
{
	if (!out)
		return accel_fail(EINVAL, "accel_semaphore_create: out is NULL");
	*out = NULL;
	if (!scheduler)
		return accel_fail(EINVAL,
			"accel_semaphore_create: scheduler is NULL; pass one from accel_scheduler_open() or accel_device_scheduler()");
	return scheduler->ops->sem_create(scheduler, initial, out);
}

ACCEL_EXPORT void accel_semaphore_retain(accel_semaphore_t *semaphore)
{
	if (semaphore)
		accel_ref_get(&semaphore->ref);
}

ACCEL_EXPORT void accel_semaphore_release(accel_semaphore_t *semaphore)
{
	if (semaphore && accel_ref_put(&semaphore->ref))
		semaphore->scheduler->ops->sem_destroy(semaphore);
}

ACCEL_EXPORT int accel_semaphore_query(accel_semaphore_t *semaphore,
				       uint64_t *value, int *error)
{
	uint64_t v;
	int e;

	if (!semaphore)
		return accel_fail(EINVAL, "accel_semaphore_query: semaphore is NULL");
	semaphore->scheduler->ops->sem_query(semaphore, &v, &e);
	if (value)
		*value = v;
	if (error)
		*error = e;
	return 0;
}

ACCEL_EXPORT const char *accel_semaphore_failure_message(accel_semaphore_t *semaphore)
{
	accel_semaphore_t **causes = NULL;
	const char *msg = "";
	size_t n = 0;

	if (!semaphore) {
		accel_fail(EINVAL, "accel_semaphore_failure_message: semaphore is NULL");
		return "";
	}
	pthread_mutex_lock(&failure_lock);
	if (semaphore->cause)
		causes = resolve_locked(semaphore, &n);
	if (semaphore->failure[0])
		msg = semaphore->failure;
	else if (semaphore->hop)
		msg = semaphore->hop;
	pthread_mutex_unlock(&failure_lock);
	if (causes)
		drop_causes(causes, n);
	return msg;
}

ACCEL_EXPORT int accel_semaphore_signal(accel_semaphore_t *semaphore,
					uint64_t value)
{
	if (!semaphore)
		return accel_fail(EINVAL, "accel_semaphore_signal: semaphore is NULL");
	return semaphore->scheduler->ops->sem_signal(semaphore, value,
						     "accel_semaphore_signal");
}

ACCEL_EXPORT int accel_semaphore_fail(accel_semaphore_t *semaphore, int error)
{
	char msg[128];

	if (!semaphore)
		return accel_fail(EINVAL, "accel_semaphore_fail: semaphore is NULL");
	if (error >= 0 || error < -ACCEL_SEMAPHORE_MAX_ERROR)
		return accel_fail(EINVAL,
			"accel_semaphore_fail: error %d is not a negative errno in [-%d, -1]",
			error, ACCEL_SEMAPHORE_MAX_ERROR);
	accel_strfmt(msg, sizeof(msg), "failed by accel_semaphore_fail(%s) from the host",
		     accel_errno_name(-error));
	return semaphore->scheduler->ops->sem_fail(semaphore, error, msg);
}

static int check_list(const accel_semaphore_list_t *list, const char *fn,
		      const char *what, accel_scheduler_t **s)
{
	const char *whose = *s ? "the queue's device" : "entry 0's";

	if (list->count > ACCEL_SEMAPHORE_LIST_MAX)
		return accel_fail(EINVAL,
			"%s: %s has %u entries; the most is ACCEL_SEMAPHORE_LIST_MAX (%u)",
			fn, what, list->count, ACCEL_SEMAPHORE_LIST_MAX);
	if (list->count && (!list->semaphores || !list->values))
		return accel_fail(EINVAL, "%s: %s->%s is NULL but its count is %u",
				  fn, what, list->semaphores ? "values" : "semaphores",
				  list->count);
	for (uint32_t i = 0; i < list->count; i++) {
		accel_semaphore_t *sem = list->semaphores[i];

		if (!sem)
			return accel_fail(EINVAL, "%s: %s entry %u: the semaphore is NULL",
					  fn, what, i);
		if (!*s)
			*s = sem->scheduler;
		if (sem->scheduler != *s)
			return accel_fail(EXDEV,
				"%s: %s entry %u: the semaphore belongs to another scheduler than %s",
				fn, what, i, whose);
	}
	return 0;
}

int accel_semaphore_check_list(const accel_semaphore_list_t *list,
			       const char *fn, const char *what,
			       accel_scheduler_t **s)
{
	return check_list(list, fn, what, s);
}

static int wait_list(const accel_semaphore_list_t *list, uint32_t flags,
		     int64_t deadline, uint32_t *index, const char *fn)
{
	accel_scheduler_t *s = NULL;
	struct accel_sched_point points_small[16], *points = points_small;
	uint32_t at = UINT32_MAX;
	int err;

	if (flags & ~(ACCEL_SEMAPHORE_WAIT_ALL | ACCEL_SEMAPHORE_WAIT_SUBMITTED))
		return accel_fail(EINVAL,
			"%s: flags 0x%x has unknown bits; use ACCEL_SEMAPHORE_WAIT_ALL and ACCEL_SEMAPHORE_WAIT_SUBMITTED",
			fn, flags);
	if (!list || !list->count)
		return 0;
	err = check_list(list, fn, "list", &s);
	if (err)
		return err;
	if (list->count > ACCEL_ARRAY_SIZE(points_small)) {
		points = malloc(list->count * sizeof(*points));
		if (!points)
			return accel_fail(ENOMEM, "%s: out of memory", fn);
	}
	/*
	 * The wait holds its own references (semaphore.h): another thread
	 * may drop the caller's last ones while it sleeps.
	 */
	for (uint32_t i = 0; i < list->count; i++) {
		points[i].sem = list->semaphores[i];
		points[i].value = list->values[i];
		accel_semaphore_retain(points[i].sem);
	}
	err = s->ops->sem_wait(s, list->count, points, flags, deadline, &at);
	if (err == -ETIME)
		accel_fail(ETIME,
			"%s: the deadline passed before %s of the %u points were %s",
			fn, flags & ACCEL_SEMAPHORE_WAIT_ALL ? "all" : "any",
			list->count, flags & ACCEL_SEMAPHORE_WAIT_SUBMITTED ? "submitted" : "reached");
	else if (err < 0 && at < list->count)
		accel_fail(-err, "%s: entry %u (value %" PRIu64 "): the semaphore failed with %s: %s",
			   fn, at, points[at].value, accel_errno_name(-err),
			   accel_semaphore_failure_message(points[at].sem));
	if (index && at < list->count)
		*index = at;
	for (uint32_t i = 0; i < list->count; i++)
		accel_semaphore_release(points[i].sem);
	if (points != points_small)
		free(points);
	return err;
}

ACCEL_EXPORT int accel_semaphore_list_wait(const accel_semaphore_list_t *list,
					   uint32_t flags, int64_t deadline_ns,
					   uint32_t *index)
{
	return wait_list(list, flags, deadline_ns, index,
			 "accel_semaphore_list_wait");
}

ACCEL_EXPORT int accel_semaphore_wait(accel_semaphore_t *semaphore,
				      uint64_t value, uint32_t flags,
				      int64_t deadline_ns)
{
	accel_semaphore_list_t list = { 1, &semaphore, &value };

	if (!semaphore)
		return accel_fail(EINVAL, "accel_semaphore_wait: semaphore is NULL");
	return wait_list(&list, flags | ACCEL_SEMAPHORE_WAIT_ALL, deadline_ns, NULL,
			 "accel_semaphore_wait");
}

/*
 * ---- sharing (kernel scheduler) ---------------------------------------
 *
 * The arguments are checked here for every kind, so that a bad call gets
 * the same answer on both: NULL is -EINVAL, an fd that is negative or not
 * open is -EBADF. What the fd must be (an exported semaphore, a
 * sync_file) only the kernel kind can tell.
 */
static int check_fd(int fd, const char *fn, const char *what)
{
	if (fd < 0)
		return accel_fail(EBADF, "%s: fd %d is negative; pass %s",
				  fn, fd, what);
	if (fcntl(fd, F_GETFD) < 0)
		return accel_fail(EBADF, "%s: fd %d is not open in this process; pass %s",
				  fn, fd, what);
	return 0;
}

ACCEL_EXPORT int accel_semaphore_set_deadline(accel_semaphore_t *semaphore,
					      uint64_t value, int64_t deadline_ns)
{
	static const char fn[] = "accel_semaphore_set_deadline";

	if (!semaphore)
		return accel_fail(EINVAL, "%s: semaphore is NULL", fn);
	if (deadline_ns <= 0)
		return accel_fail(EINVAL,
			"%s: deadline_ns is %" PRId64 "; it must be an absolute CLOCK_MONOTONIC time in ns (accel_deadline_after())",
			fn, deadline_ns);
	if (deadline_ns <= accel_now_ns())
		return accel_fail(ETIME,
			"%s: deadline_ns %" PRId64 " has passed (CLOCK_MONOTONIC is %" PRId64 " now); give a time still to come",
			fn, deadline_ns, accel_now_ns());
	return semaphore->scheduler->ops->sem_set_deadline(semaphore, value,
							   deadline_ns);
}

ACCEL_EXPORT int accel_semaphore_export_fd(accel_semaphore_t *semaphore,
					   int *fd)
{
	if (!fd)
		return accel_fail(EINVAL, "accel_semaphore_export_fd: fd is NULL");
	*fd = -1;
	if (!semaphore)
		return accel_fail(EINVAL, "accel_semaphore_export_fd: semaphore is NULL");
	return semaphore->scheduler->ops->sem_export_fd(semaphore, fd);
}

ACCEL_EXPORT int accel_semaphore_import_fd(accel_scheduler_t *scheduler, int fd,
					   accel_semaphore_t **out)
{
	static const char fn[] = "accel_semaphore_import_fd";
	int err;

	if (!out)
		return accel_fail(EINVAL, "%s: out is NULL", fn);
	*out = NULL;
	if (!scheduler)
		return accel_fail(EINVAL,
			"%s: scheduler is NULL; pass one from accel_scheduler_open() or accel_device_scheduler()",
			fn);
	err = check_fd(fd, fn, "an fd from accel_semaphore_export_fd()");
	if (err)
		return err;
	return scheduler->ops->sem_import_fd(scheduler, fd, out);
}

ACCEL_EXPORT int accel_semaphore_export_sync_file(accel_semaphore_t *semaphore,
						  uint64_t value, int *fd)
{
	if (!fd)
		return accel_fail(EINVAL, "accel_semaphore_export_sync_file: fd is NULL");
	*fd = -1;
	if (!semaphore)
		return accel_fail(EINVAL, "accel_semaphore_export_sync_file: semaphore is NULL");
	return semaphore->scheduler->ops->sem_export_sync_file(semaphore, value, fd,
				"accel_semaphore_export_sync_file");
}

ACCEL_EXPORT int accel_semaphore_import_sync_file(accel_semaphore_t *semaphore,
						  uint64_t value, int fd)
{
	static const char fn[] = "accel_semaphore_import_sync_file";
	int err;

	if (!semaphore)
		return accel_fail(EINVAL, "%s: semaphore is NULL", fn);
	err = check_fd(fd, fn, "a sync_file fd");
	if (err)
		return err;
	return semaphore->scheduler->ops->sem_import_sync_file(semaphore, value, fd);
}

/* The fd is the point's sync_file: see semaphore.h for why. */
ACCEL_EXPORT int accel_semaphore_notify_fd(accel_semaphore_t *semaphore,
					   uint64_t value, int *fd)
{
	if (!fd)
		return accel_fail(EINVAL, "accel_semaphore_notify_fd: fd is NULL");
	*fd = -1;
	if (!semaphore)
		return accel_fail(EINVAL, "accel_semaphore_notify_fd: semaphore is NULL");
	return semaphore->scheduler->ops->sem_export_sync_file(semaphore, value, fd,
				"accel_semaphore_notify_fd");
}
