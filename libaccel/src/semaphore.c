// SPDX-License-Identifier: MIT
/*
 * Semaphores: the public API. Arguments are validated here; the timeline
 * itself is the scheduler kind's (sched_embedded.c, sched_kernel.c).
 */
#include <errno.h>
#include <inttypes.h>
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

void accel_semaphore_init(accel_semaphore_t *sem, accel_scheduler_t *s)
{
	accel_ref_init(&sem->ref);
	accel_scheduler_retain(s);
	sem->scheduler = s;
	pthread_mutex_init(&sem->msg_lock, NULL);
	sem->failure[0] = '\0';
}

void accel_semaphore_fini(accel_semaphore_t *sem)
{
	pthread_mutex_destroy(&sem->msg_lock);
	accel_scheduler_release(sem->scheduler);
}

void accel_semaphore_set_failure(accel_semaphore_t *sem, const char *message)
{
	pthread_mutex_lock(&sem->msg_lock);
	if (!sem->failure[0])
		accel_strfmt(sem->failure, sizeof(sem->failure), "%s", message);
	pthread_mutex_unlock(&sem->msg_lock);
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
	const char *msg;

	if (!semaphore) {
		accel_fail(EINVAL, "accel_semaphore_failure_message: semaphore is NULL");
		return "";
	}
	pthread_mutex_lock(&semaphore->msg_lock);
	msg = semaphore->failure;
	pthread_mutex_unlock(&semaphore->msg_lock);
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
