// SPDX-License-Identifier: MIT
/*
 * Drains: accel_queue_wait_idle() and accel_device_wait_idle().
 *
 * A queue and a device each count their submissions not yet done in a
 * struct accel_drain: one more at accel_queue_execute(), one less when the
 * submission is destroyed, which is after its signals were signalled or
 * failed (embedded), or after its COMPLETE ioctl returned (kernel: the
 * module signalled them), or after the scheduler gave up on it (a failed
 * wait). So "idle" means every submission made before the wait began has
 * ended, one way or the other, and its signals say how.
 *
 * A drain is its own allocation: a submission may outlive its queue and
 * device (it drops them when it has run, before its signals, so that an
 * application that sees the signal finds its objects torn down; see
 * Documentation/libaccel.rst), but it decrements the drains at destroy.
 * The drain goes when its owner has gone and no submission counts in it.
 * It is made at the first submission: a queue or device never used has
 * none and is idle.
 *
 * One lock, the device drain's, guards the device's count and its
 * queues': a submission changes both at once, so a thread that saw its
 * queue idle then finds the device counting none of the queue's work,
 * and the other way round, for one lock taken per change. The device's
 * drain outlives its queues' use of the lock: a queue holds its device,
 * and work a released queue still counts, the device counts too.
 *
 * IREE's counterpart: iree_hal_device_wait_idle() (and, per queue, a
 * wait on the queue's last signal).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "core.h"
#include "error.h"

struct accel_drain {
	pthread_mutex_t lock;       /* a device's drain's: see @guard */
	pthread_cond_t idle;        /* CLOCK_MONOTONIC; broadcast at pending == 0 */
	struct accel_drain *guard;  /* whose lock guards the rest: the device's */
	uint64_t pending;
	bool owned;                 /* its queue or device is alive */
};

/* A drain guarded by @guard's lock, or by its own (a device's: NULL). */
static struct accel_drain *drain_new(struct accel_drain *guard)
{
	struct accel_drain *d = calloc(1, sizeof(*d));
	pthread_condattr_t attr;

	if (!d)
		return NULL;
	d->guard = guard ? guard : d;
	if (!guard)
		pthread_mutex_init(&d->lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&d->idle, &attr);
	pthread_condattr_destroy(&attr);
	d->owned = true;
	return d;
}

static void drain_free(struct accel_drain *d)
{
	pthread_cond_destroy(&d->idle);
	if (d->guard == d)
		pthread_mutex_destroy(&d->lock);
	free(d);
}

/* @slot's drain, made on first use (guarded by @guard); NULL: out of memory. */
static struct accel_drain *drain_of(_Atomic(struct accel_drain *) *slot,
				    struct accel_drain *guard)
{
	struct accel_drain *d = atomic_load_explicit(slot, memory_order_acquire), *expected = NULL;

	if (d)
		return d;
	d = drain_new(guard);
	if (!d)
		return NULL;
	if (!atomic_compare_exchange_strong(slot, &expected, d)) {
		drain_free(d);
		d = expected;
	}
	return d;
}

/* One submission fewer in @d; locked. True: @d is to be freed. */
static bool drain_dec(struct accel_drain *d)
{
	if (--d->pending == 0)
		pthread_cond_broadcast(&d->idle);
	return !d->pending && !d->owned;
}

/* The owner goes: the drain goes with it, or with its last submission. */
void accel_drain_disown(_Atomic(struct accel_drain *) *slot)
{
	struct accel_drain *d = atomic_exchange(slot, NULL);
	bool gone;

	if (!d)
		return;
	pthread_mutex_lock(&d->guard->lock);
	d->owned = false;
	gone = !d->pending;
	pthread_mutex_unlock(&d->guard->lock);
	if (gone)
		drain_free(d);
}

/*
 * A submission counts in its queue's drain and its device's, and both
 * change under the device's lock (out[1], d[1]). Changed one after the
 * other, a queue's drain could return while the device still counted the
 * submission that made it idle.
 */
int accel_drain_submit(accel_queue_t *q, struct accel_drain *out[2])
{
	out[1] = drain_of(&q->device->drain, NULL);
	out[0] = out[1] ? drain_of(&q->drain, out[1]) : NULL;
	if (!out[0]) {
		out[1] = NULL;
		return -ENOMEM;
	}
	pthread_mutex_lock(&out[1]->lock);
	out[0]->pending++;
	out[1]->pending++;
	pthread_mutex_unlock(&out[1]->lock);
	return 0;
}

void accel_drain_done(struct accel_drain *d[2])
{
	bool gone[2];

	if (!d[0])
		return;
	pthread_mutex_lock(&d[1]->lock);
	gone[0] = drain_dec(d[0]);
	gone[1] = drain_dec(d[1]);
	pthread_mutex_unlock(&d[1]->lock);
	for (int i = 0; i < 2; i++)
		if (gone[i])
			drain_free(d[i]);
	d[0] = d[1] = NULL;
}

static int drain_wait(_Atomic(struct accel_drain *) *slot, int64_t deadline_ns)
{
	struct accel_drain *d = atomic_load_explicit(slot, memory_order_acquire);
	struct timespec ts;
	int err = 0;

	if (!d)
		return 0;
	if (deadline_ns > 0) {
		ts.tv_sec = (time_t)(deadline_ns / 1000000000);
		ts.tv_nsec = (long)(deadline_ns % 1000000000);
	}
	pthread_mutex_lock(&d->guard->lock);
	while (d->pending && !err) {
		if (deadline_ns <= 0)
			err = ETIME;
		else if (pthread_cond_timedwait(&d->idle, &d->guard->lock, &ts) == ETIMEDOUT &&
			 d->pending)
			err = ETIME;
	}
	pthread_mutex_unlock(&d->guard->lock);
	return -err;
}

ACCEL_EXPORT int accel_queue_wait_idle(accel_queue_t *queue, int64_t deadline_ns)
{
	if (!queue)
		return accel_fail(EINVAL, "accel_queue_wait_idle: queue is NULL");
	if (drain_wait(&queue->drain, deadline_ns))
		return accel_fail(ETIME,
			"accel_queue_wait_idle: the deadline passed with submissions of the queue on %s not done (a wait not reached holds one back: see accel_semaphore_query())",
			queue->device->uri);
	return 0;
}

ACCEL_EXPORT int accel_device_wait_idle(accel_device_t *device, int64_t deadline_ns)
{
	if (!device)
		return accel_fail(EINVAL, "accel_device_wait_idle: device is NULL");
	if (drain_wait(&device->drain, deadline_ns))
		return accel_fail(ETIME,
			"accel_device_wait_idle: the deadline passed with submissions on %s not done (a wait not reached holds one back: see accel_semaphore_query())",
			device->uri);
	return 0;
}
