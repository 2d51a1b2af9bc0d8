// SPDX-License-Identifier: MIT
/*
 * cuda and hip submissions in flight: enqueued on the executor's thread,
 * completed on the device's completion thread.
 *
 * An executor does not wait for its submission: once the work is on the
 * device's stream, gpu_flight_enqueue() records an event after it, makes
 * the completion stream wait for that event and run a host function, and
 * returns; the executor goes on with its next job (Documentation/gpu.rst).
 * Host functions may not call the driver API, so the host function only
 * marks its flight done and wakes the device's completion thread, which
 * reads the event's status (an error of the work) and the time from the
 * flight's start event to it (its device time, as vulkan's timestamps give
 * it), returns the events to the pool and calls the flight's ->complete. The completion stream runs
 * its host functions in order, and the thread completes flights in the
 * order they were enqueued: submission order, the stream's own.
 *
 * Device-side waits: every submission of a device goes to its one stream,
 * in the order of gpu_flight_enqueue() calls (under @submit_lock), so a
 * submission released after its predecessor was enqueued is ordered after
 * it by the stream itself; ->submitted tells the scheduler when that is
 * (with a token that only grows), so no event wait is needed.
 *
 * Lifetime: each flight's submission holds a reference to the device, so
 * the device is destroyed only with no flight left; the last ->complete
 * may be what destroys it, on the completion thread itself: the thread is
 * then detached and frees its state when its loop ends (as vk_flight.c).
 */
#include <errno.h>
#include <stdlib.h>

#include "src/error.h"
#include "src/worker.h"
#include "gpu.h"

struct gpu_completer {
	pthread_mutex_t lock;
	pthread_cond_t cond;       /* a flight done, or stop */
	struct gpu_flight *head, *tail;
	struct accel_worker worker;
	struct gpu_device *dev;
};

/* Runs on a driver thread: no driver call allowed here. */
static void flight_done(void *data)
{
	struct gpu_flight *f = data;
	struct gpu_completer *w = f->dev->completer;

	pthread_mutex_lock(&w->lock);
	f->done = true;
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->lock);
}

/* Completes @f: the event's status, the event back to the pool, ->complete. */
static void complete_one(struct gpu_completer *w, struct gpu_flight *f)
{
	struct gpu_device *dev = w->dev;
	char msg[ACCEL_FAILURE_MAX / 2] = "";
	int r = 0, err;

	err = gpu_enter(dev, "accel_queue_execute");
	if (!err) {
		float ms = 0;

		r = dev->api->event_query(f->event);
		if (!r && f->start && !dev->api->event_elapsed(&ms, f->start, f->event))
			f->device_ns = ms > 0 ? (uint64_t)((double)ms * 1e6) : 1;
		if (f->start)
			gpu_event_put(dev, f->start);
		gpu_event_put(dev, f->event);
		gpu_leave(dev);
		if (r)
			err = gpu_fail(dev, r, "accel_queue_execute", "completing the command buffer");
	}
	if (err)
		accel_strfmt(msg, sizeof(msg), "%s", accel_error_message());
	f->event = NULL;
	f->start = NULL;
	f->complete(f, err, msg); /* may destroy the device */
}

static void *completer_main(void *arg)
{
	struct gpu_completer *w = arg;
	bool detached;

	pthread_mutex_lock(&w->lock);
	for (;;) {
		struct gpu_flight *f;

		while (!(w->head && w->head->done) && !w->worker.stop)
			pthread_cond_wait(&w->cond, &w->lock);
		f = w->head;
		if (!f || !f->done)
			break; /* stopped, nothing in flight */
		w->head = f->next;
		if (!w->head)
			w->tail = NULL;
		pthread_mutex_unlock(&w->lock);
		complete_one(w, f);
		pthread_mutex_lock(&w->lock);
	}
	detached = w->worker.detached;
	pthread_mutex_unlock(&w->lock);
	if (detached) {
		pthread_cond_destroy(&w->cond);
		pthread_mutex_destroy(&w->lock);
		free(w);
	}
	return NULL;
}

int gpu_completer_init(struct gpu_device *dev)
{
	struct gpu_completer *w = calloc(1, sizeof(*w));

	if (!w)
		return accel_fail(ENOMEM, "accel_device_open: out of memory");
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->cond, NULL);
	w->dev = dev;
	dev->completer = w;
	return 0;
}

void gpu_completer_fini(struct gpu_device *dev)
{
	struct gpu_completer *w = dev->completer;

	if (!w)
		return;
	dev->completer = NULL;
	if (!accel_worker_stop(&w->worker, &w->lock, &w->cond))
		return;
	pthread_cond_destroy(&w->cond);
	pthread_mutex_destroy(&w->lock);
	free(w);
}

/* Starts the completion thread at the first flight. */
static int completer_start(struct gpu_completer *w)
{
	int err = 0;

	pthread_mutex_lock(&w->lock);
	if (!w->worker.started) {
		err = pthread_create(&w->worker.thread, NULL, completer_main, w);
		if (!err) {
			pthread_setname_np(w->worker.thread, "accel-gpudone");
			w->worker.started = true;
		}
	}
	pthread_mutex_unlock(&w->lock);
	return err;
}

int gpu_flight_enqueue(struct gpu_device *dev, struct gpu_flight *f)
{
	struct gpu_completer *w = dev->completer;
	int r, err = completer_start(w);

	if (err)
		return accel_fail(EAGAIN,
			"accel_queue_execute: cannot start the thread that completes submissions on %s: %s (check RLIMIT_NPROC and the memory limit)",
			dev->base.uri, accel_errno_name(err));
	f->dev = dev;
	f->done = false;
	f->next = NULL;
	f->call.fn = flight_done;
	f->call.data = f;
	r = gpu_event_get(dev, &f->event);
	if (!r)
		r = dev->api->event_record(f->event, dev->stream);
	if (!r)
		r = dev->api->stream_wait_event(dev->done_stream, f->event, 0);
	if (!r)
		r = dev->be->add_host_func(dev->api, dev->done_stream, &f->call);
	if (r) {
		if (f->event)
			gpu_event_put(dev, f->event);
		f->event = NULL;
		return gpu_fail(dev, r, "accel_queue_execute", "enqueueing the completion");
	}
	/* Before it can complete: ->complete may free @f. */
	if (f->submitted)
		f->submitted(f, ++dev->flight_seq);
	pthread_mutex_lock(&w->lock);
	if (w->tail)
		w->tail->next = f;
	else
		w->head = f;
	w->tail = f;
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->lock);
	return 0;
}
