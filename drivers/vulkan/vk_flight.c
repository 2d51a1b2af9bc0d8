// SPDX-License-Identifier: MIT
/*
 * vulkan submissions in flight: vkQueueSubmit on the executor's thread,
 * completion on the device's waiter thread.
 *
 * An executor does not wait for its submission: vk_flight_submit() hands
 * the VkCommandBuffer to the queue, signalling the device's timeline to the
 * next value, appends the flight to the device's list and returns, so the
 * executor goes on with its next job while the device runs this one (and
 * the device never idles between two submissions that were ready). The
 * waiter thread, started by the first submission, sleeps in
 * vkWaitSemaphores() on the oldest flight's value, then completes every
 * flight the timeline has reached, oldest first, through its ->complete:
 * a batch per wake-up when the device ran ahead.
 *
 * At most VK_FLIGHTS_MAX submissions are in flight per device; a further
 * one waits for room (the back-pressure that keeps an application which
 * submits without waiting from recording an instance per submission),
 * until half of them completed: one wake-up per half, not per completion.
 * A batch (accel_queue_execute_batch()) runs its command buffers one
 * flight each: the ->complete of one submits the next, on the waiter.
 *
 * Lifetime: each flight's submission holds a reference to the device, so
 * the device is destroyed only with no flight left; the last ->complete
 * may be what destroys it, on the waiter thread itself: the thread is then
 * detached and frees the waiter when its loop ends (as executor.c does).
 *
 * Device-side waits: a flight may wait for an earlier value of the same
 * timeline (its job's predecessors on this device, Documentation/
 * vulkan.rst); ->submitted tells the scheduler the value it will signal,
 * under dev->queue_lock, so values are promised in timeline order. The
 * waiter completes flights in timeline order, so a predecessor's
 * ->complete has always run before its successor's.
 *
 * Lock order: dev->queue_lock, then w->lock (a flight is appended under
 * both, so the list is in timeline order); ->submitted takes scheduler
 * locks under dev->queue_lock, and no scheduler lock is held around
 * vk_flight_submit().
 */
#include <errno.h>
#include <stdlib.h>

#include "src/error.h"
#include "src/worker.h"
#include "vk.h"

#define VK_FLIGHTS_MAX 32u

struct vk_waiter {
	pthread_mutex_t lock;
	pthread_cond_t work;  /* a flight was appended, or stop */
	pthread_cond_t room;  /* count fell to half, with room_waiters */
	struct vk_flight *head, *tail;
	uint32_t count;       /* in flight, or about to be (room taken) */
	uint32_t room_waiters;
	int64_t last_done_ns; /* when the last batch completed */
	struct accel_worker worker;
	struct vk_device *dev;
};

/* Detaches the flights the timeline reached (at least the head's). */
static struct vk_flight *take_reached(struct vk_waiter *w, uint64_t reached,
				      uint32_t *n)
{
	struct vk_flight *first = w->head, *last = NULL;

	*n = 0;
	for (struct vk_flight *f = w->head; f && f->value <= reached; f = f->next) {
		last = f;
		(*n)++;
	}
	if (!last) { /* an error: the head alone */
		last = first;
		*n = 1;
	}
	w->head = last->next;
	if (!w->head)
		w->tail = NULL;
	last->next = NULL;
	w->count -= *n;
	/* An executor at the limit wakes when half the room is back, not per completion. */
	if (w->room_waiters && w->count <= VK_FLIGHTS_MAX / 2)
		pthread_cond_broadcast(&w->room);
	return first;
}

/*
 * Completes a batch of @n flights that finished by @now: the device time
 * since the later of the oldest one's submission and the previous batch
 * is shared out evenly (the device ran them back to back).
 */
static void complete_batch(struct vk_waiter *w, struct vk_flight *f, uint32_t n,
			   int64_t now, int status, const char *msg)
{
	int64_t start = f->submit_ns > w->last_done_ns ? f->submit_ns : w->last_done_ns;
	uint64_t each = (uint64_t)(now - start) / n;

	w->last_done_ns = now;
	while (f) {
		struct vk_flight *next = f->next;

		f->device_ns = each ? each : 1;
		f->complete(f, status, msg); /* may free @w->dev */
		f = next;
	}
}

/* Waits for the oldest flight; completes what the timeline reached. */
static void wait_oldest(struct vk_waiter *w)
{
	struct vk_device *dev = w->dev;
	const struct vk_funcs *f = &dev->f;
	uint64_t value = w->head->value, reached = 0;
	VkSemaphoreWaitInfo wi = {
		.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO,
		.semaphoreCount = 1,
		.pSemaphores = &dev->timeline,
		.pValues = &value,
	};
	struct vk_flight *batch;
	char msg[256] = "";
	uint32_t n;
	VkResult r;

	pthread_mutex_unlock(&w->lock);
	r = f->vkWaitSemaphores(dev->device, &wi, UINT64_MAX);
	if (r == VK_SUCCESS)
		r = f->vkGetSemaphoreCounterValue(dev->device, dev->timeline, &reached);
	pthread_mutex_lock(&w->lock);
	batch = take_reached(w, r == VK_SUCCESS ? reached : 0, &n);
	pthread_mutex_unlock(&w->lock);
	if (r != VK_SUCCESS)
		accel_strfmt(msg, sizeof(msg), "waiting for the submission on %s: %s",
			     dev->name, vk_result_name(r));
	complete_batch(w, batch, n, accel_now_ns(),
		       r == VK_SUCCESS ? 0 : vk_errno(r),
		       msg); /* may destroy the device */
	pthread_mutex_lock(&w->lock);
}

static void *waiter_main(void *arg)
{
	struct vk_waiter *w = arg;
	bool detached;

	pthread_mutex_lock(&w->lock);
	for (;;) {
		while (!w->head && !w->worker.stop)
			pthread_cond_wait(&w->work, &w->lock);
		if (!w->head)
			break;
		wait_oldest(w);
	}
	detached = w->worker.detached;
	pthread_mutex_unlock(&w->lock);
	if (detached) {
		pthread_cond_destroy(&w->work);
		pthread_cond_destroy(&w->room);
		pthread_mutex_destroy(&w->lock);
		free(w);
	}
	return NULL;
}

int vk_flights_init(struct vk_device *dev)
{
	struct vk_waiter *w = calloc(1, sizeof(*w));

	if (!w)
		return accel_fail(ENOMEM, "accel_device_open: out of memory");
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->work, NULL);
	pthread_cond_init(&w->room, NULL);
	w->dev = dev;
	dev->waiter = w;
	return 0;
}

void vk_flights_fini(struct vk_device *dev)
{
	struct vk_waiter *w = dev->waiter;

	if (!w)
		return;
	dev->waiter = NULL;
	if (!accel_worker_stop(&w->worker, &w->lock, &w->work))
		return;
	pthread_cond_destroy(&w->work);
	pthread_cond_destroy(&w->room);
	pthread_mutex_destroy(&w->lock);
	free(w);
}

/* Takes a place among the flights (waiting for one), starting the waiter. */
static int reserve(struct vk_waiter *w, char *msg, size_t len)
{
	int err = 0;

	pthread_mutex_lock(&w->lock);
	if (!w->worker.started) {
		err = pthread_create(&w->worker.thread, NULL, waiter_main, w);
		if (err) {
			pthread_mutex_unlock(&w->lock);
			accel_strfmt(msg, len,
				     "cannot start the thread that waits for the device: %s (check RLIMIT_NPROC and the memory limit)",
				     accel_errno_name(err));
			return -EAGAIN;
		}
		pthread_setname_np(w->worker.thread, "accel-vkwait");
		w->worker.started = true;
	}
	/*
	 * The waiter itself submits the next command buffer of a batch, from
	 * a ->complete: it never waits for room, which only it makes (the
	 * count may pass VK_FLIGHTS_MAX by one flight per batch it is
	 * continuing).
	 */
	while (w->count >= VK_FLIGHTS_MAX && !pthread_equal(pthread_self(), w->worker.thread)) {
		w->room_waiters++;
		pthread_cond_wait(&w->room, &w->lock);
		w->room_waiters--;
	}
	w->count++;
	pthread_mutex_unlock(&w->lock);
	return 0;
}

int vk_flight_submit(struct vk_device *dev, struct vk_flight *fl,
		     char *msg, size_t len)
{
	struct vk_waiter *w = dev->waiter;
	/* A device-side wait is on the device's own timeline, an earlier value. */
	const VkPipelineStageFlags stage = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
	VkTimelineSemaphoreSubmitInfo ts = {
		.sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO,
		.waitSemaphoreValueCount = fl->wait_value ? 1 : 0,
		.pWaitSemaphoreValues = &fl->wait_value,
		.signalSemaphoreValueCount = 1,
		.pSignalSemaphoreValues = &fl->value,
	};
	VkSubmitInfo si = {
		.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
		.pNext = &ts,
		.waitSemaphoreCount = fl->wait_value ? 1 : 0,
		.pWaitSemaphores = &dev->timeline,
		.pWaitDstStageMask = &stage,
		.commandBufferCount = 1,
		.pCommandBuffers = &fl->cmd,
		.signalSemaphoreCount = 1,
		.pSignalSemaphores = &dev->timeline,
	};
	VkResult r;
	int err = reserve(w, msg, len);

	if (err)
		return err;
	fl->next = NULL;
	fl->submit_ns = accel_now_ns();
	pthread_mutex_lock(&dev->queue_lock);
	fl->value = dev->last_value + 1;
	r = dev->f.vkQueueSubmit(dev->queue, 1, &si, VK_NULL_HANDLE);
	if (r == VK_SUCCESS) {
		dev->last_value = fl->value;
		/* Before the waiter can see it: ->complete may free @fl. */
		if (fl->submitted)
			fl->submitted(fl);
	}
	pthread_mutex_lock(&w->lock);
	if (r == VK_SUCCESS) {
		if (w->tail)
			w->tail->next = fl;
		else
			w->head = fl;
		w->tail = fl;
		pthread_cond_signal(&w->work);
	} else {
		w->count--;
		pthread_cond_broadcast(&w->room);
	}
	pthread_mutex_unlock(&w->lock);
	pthread_mutex_unlock(&dev->queue_lock);
	if (r == VK_SUCCESS)
		return 0;
	accel_strfmt(msg, len, "vkQueueSubmit on %s: %s", dev->name, vk_result_name(r));
	return vk_errno(r);
}
