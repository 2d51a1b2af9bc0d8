/* SPDX-License-Identifier: MIT */
/*
 * The end of a worker thread: a queue's executor, a device's completion
 * thread (vulkan, cuda and hip). Such a thread sleeps on a condition under
 * its owner's lock and leaves its loop once @stop is set; what it runs may
 * drop the last reference to its own queue or device, so the thread that
 * stops it may be the worker itself. That one cannot be joined: it is
 * detached (@detached), and it frees its owner's state on its way out.
 */
#ifndef ACCEL_SRC_WORKER_H
#define ACCEL_SRC_WORKER_H

#include <pthread.h>
#include <stdbool.h>

struct accel_worker {
	pthread_t thread;
	bool started; /* @thread runs (the owner may start it lazily) */
	bool stop;    /* under the owner's lock: leave the loop */
	bool detached;
};

/*
 * accel_worker_stop() - tell @w's thread to leave its loop (@wake is the
 * condition it sleeps on, under @lock) and end it: joined, or detached when
 * the caller is that thread. Returns true when the caller frees the owner's
 * state now; false when the worker does, as it exits.
 */
static inline bool accel_worker_stop(struct accel_worker *w,
				     pthread_mutex_t *lock, pthread_cond_t *wake)
{
	bool self;

	pthread_mutex_lock(lock);
	self = w->started && pthread_equal(pthread_self(), w->thread);
	w->stop = true;
	w->detached = self;
	pthread_cond_broadcast(wake);
	pthread_mutex_unlock(lock);
	if (self) {
		pthread_detach(w->thread);
		return false;
	}
	if (w->started)
		pthread_join(w->thread, NULL);
	return true;
}

#endif /* ACCEL_SRC_WORKER_H */
