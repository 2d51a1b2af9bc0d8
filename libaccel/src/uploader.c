// SPDX-License-Identifier: MIT
/*
 * Uploaders: a ring of host-visible memory for per-submission data, on a
 * buffer of accel_queue_alloca().
 *
 * Positions are virtual, ever growing byte counts: @head where the next
 * write goes, @tail the oldest byte still in use; a position's place in
 * the ring is position % size. A write of n bytes that does not fit
 * before the end of the ring skips to the next lap (a bip buffer: data is
 * always contiguous), and needs head + n - tail <= size. Each fence
 * records a point and the head at the time: once the point is reached,
 * the tail moves up to that head. Fences are kept in order in a FIFO
 * (a growing array used as a queue).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "accel/status.h"
#include "core.h"
#include "error.h"

struct fence {
	struct accel_sched_point point; /* the semaphore is referenced */
	uint64_t head;
};

struct accel_uploader {
	accel_queue_t *queue;
	accel_buffer_t *ring;
	uint8_t *host;
	uint64_t size;
	uint64_t head, tail;
	uint64_t fenced;        /* the head at the last fence */
	struct fence *fences;   /* [first, first + count) of [capacity] */
	uint32_t first, count, capacity;
};

ACCEL_EXPORT int accel_uploader_create(accel_queue_t *queue, uint64_t ring_size,
				       uint32_t flags, accel_uploader_t **out)
{
	static const char fn[] = "accel_uploader_create";
	const accel_buffer_params_t params = {
		ACCEL_MEMORY_TYPE_HOST_VISIBLE | ACCEL_MEMORY_TYPE_HOST_COHERENT,
		ACCEL_BUFFER_USAGE_DISPATCH_STORAGE | ACCEL_BUFFER_USAGE_TRANSFER_SOURCE |
		ACCEL_BUFFER_USAGE_DISPATCH_INDIRECT_PARAMS | ACCEL_BUFFER_USAGE_MAPPING,
	};
	accel_semaphore_t *ready = NULL;
	accel_uploader_t *up;
	uint64_t one = 1, asked;
	accel_semaphore_list_t signal = { 1, &ready, &one };
	void *host = NULL;
	int err;

	if (!out)
		return accel_fail(EINVAL, "%s: out is NULL", fn);
	*out = NULL;
	if (!queue)
		return accel_fail(EINVAL, "%s: queue is NULL", fn);
	if (flags)
		return accel_fail(EINVAL, "%s: flags 0x%x: no flags are defined; pass 0",
				  fn, flags);
	if (!ring_size)
		return accel_fail(EINVAL, "%s: ring_size 0: a ring holds at least 1 byte", fn);
	if (ring_size > ACCEL_BUFFER_MAX_SIZE)
		return accel_fail(ENOSPC,
			"%s: ring_size %" PRIu64 " is above ACCEL_BUFFER_MAX_SIZE, the largest transient pool, so it could never fit; ask for less",
			fn, ring_size);
	asked = ring_size;
	ring_size = (ring_size + ACCEL_UPLOADER_ALIGN - 1) & ~(uint64_t)(ACCEL_UPLOADER_ALIGN - 1);
	up = calloc(1, sizeof(*up));
	if (!up)
		return accel_fail(ENOMEM, "%s: out of memory", fn);
	err = accel_semaphore_create(queue->device->scheduler, 0, &ready);
	if (!err)
		err = accel_queue_alloca(queue, NULL, &signal, &params, ring_size,
					 0, &up->ring);
	/* The pool may have handed it memory still in use: wait for it. */
	if (!err)
		err = accel_semaphore_wait(ready, 1, 0, ACCEL_DEADLINE_INFINITE);
	if (!err)
		err = accel_buffer_map(up->ring, ACCEL_MAP_WRITE, 0,
				       ACCEL_WHOLE_BUFFER, &host);
	accel_semaphore_release(ready);
	if (err) {
		char msg[ACCEL_ERROR_MAX];

		/* The failed call's message, said as this function's. */
		accel_strfmt(msg, sizeof(msg), "%s", accel_error_message());
		if (up->ring)
			accel_queue_dealloca(queue, NULL, NULL, up->ring, 0);
		accel_buffer_release(up->ring);
		free(up);
		return accel_fail(-err,
			"%s: a ring of %" PRIu64 " bytes (ring_size %" PRIu64 " rounded up to ACCEL_UPLOADER_ALIGN) could not be made: %s",
			fn, ring_size, asked, msg);
	}
	accel_buffer_unmap(up->ring); /* it stays addressable */
	accel_queue_retain(queue);
	up->queue = queue;
	up->host = host;
	up->size = ring_size;
	*out = up;
	return 0;
}

/* Moves the tail past the fences reached (or failed). */
static void reclaim(accel_uploader_t *up)
{
	while (up->count) {
		struct fence *f = &up->fences[up->first];
		accel_semaphore_t *sem = f->point.sem;
		uint64_t value = 0;
		int error = 0;

		sem->scheduler->ops->sem_query(sem, &value, &error);
		if (!error && value < f->point.value)
			return;
		up->tail = f->head;
		accel_semaphore_release(sem);
		up->first = (up->first + 1) % up->capacity;
		up->count--;
	}
}

ACCEL_EXPORT int accel_uploader_write(accel_uploader_t *uploader,
				      const void *data, uint64_t size,
				      accel_buffer_t **buffer, uint64_t *offset)
{
	static const char fn[] = "accel_uploader_write";
	accel_uploader_t *up = uploader;
	uint64_t at, need, start;

	if (!up || !data || !buffer || !offset)
		return accel_fail(EINVAL, "%s: %s is NULL", fn,
				  !up ? "uploader" : !data ? "data" :
				  !buffer ? "buffer" : "offset");
	if (!size)
		return accel_fail(EINVAL, "%s: size is 0; write at least one byte", fn);
	if (size > up->size)
		return accel_fail(ENOSPC,
			"%s: size %" PRIu64 " is above the ring's %" PRIu64 " bytes, so it could never fit; create the uploader with a larger ring",
			fn, size, up->size);
	need = (size + ACCEL_UPLOADER_ALIGN - 1) & ~(uint64_t)(ACCEL_UPLOADER_ALIGN - 1);
	if (need > up->size)
		need = up->size;
	start = up->head;
	at = start % up->size;
	if (at + need > up->size)
		start += up->size - at; /* to the next lap: data is contiguous */
	if (start + need - up->tail > up->size)
		reclaim(up);
	if (start + need - up->tail > up->size) {
		const struct fence *f = up->count ? &up->fences[up->first] : NULL;

		if (!f)
			return accel_fail(EAGAIN,
				"%s: the ring of %" PRIu64 " bytes is full of writes not fenced yet; call accel_uploader_fence() after the submission that reads them",
				fn, up->size);
		return accel_fail(EAGAIN,
			"%s: the ring of %" PRIu64 " bytes is full of writes still in use; the oldest are free once their semaphore reaches %" PRIu64 ": wait for it and write again",
			fn, up->size, f->point.value);
	}
	memcpy(up->host + start % up->size, data, size);
	up->head = start + need;
	*buffer = up->ring;
	*offset = start % up->size;
	return 0;
}

ACCEL_EXPORT int accel_uploader_fence(accel_uploader_t *uploader,
				      accel_semaphore_t *semaphore,
				      uint64_t value)
{
	static const char fn[] = "accel_uploader_fence";
	accel_uploader_t *up = uploader;

	if (!up || !semaphore)
		return accel_fail(EINVAL, "%s: %s is NULL", fn,
				  up ? "semaphore" : "uploader");
	if (semaphore->scheduler != up->queue->device->scheduler)
		return accel_fail(EXDEV,
			"%s: the semaphore is of another scheduler than the uploader's queue",
			fn);
	if (up->count == up->capacity) {
		uint32_t cap = up->capacity ? 2 * up->capacity : 8;
		struct fence *f = malloc(cap * sizeof(*f));

		if (!f)
			return accel_fail(ENOMEM, "%s: out of memory", fn);
		for (uint32_t i = 0; i < up->count; i++)
			f[i] = up->fences[(up->first + i) % up->capacity];
		free(up->fences);
		up->fences = f;
		up->first = 0;
		up->capacity = cap;
	}
	accel_semaphore_retain(semaphore);
	up->fences[(up->first + up->count) % up->capacity] = (struct fence){
		.point = { .sem = semaphore, .value = value },
		.head = up->head,
	};
	up->count++;
	up->fenced = up->head;
	return 0;
}

ACCEL_EXPORT void accel_uploader_release(accel_uploader_t *uploader)
{
	accel_uploader_t *up = uploader;
	accel_semaphore_t **sems;
	uint64_t *values;
	uint32_t n = 0;
	int err = -ENOMEM;

	if (!up)
		return;
	reclaim(up);
	/* One point per semaphore, the highest: the ring's last readers. */
	sems = malloc((up->count + 1) * sizeof(*sems));
	values = malloc((up->count + 1) * sizeof(*values));
	for (uint32_t i = 0; sems && values && i < up->count; i++) {
		const struct fence *f = &up->fences[(up->first + i) % up->capacity];
		uint32_t j = 0;

		while (j < n && sems[j] != f->point.sem)
			j++;
		if (j == n) {
			sems[n] = f->point.sem;
			values[n++] = 0;
		}
		if (f->point.value > values[j])
			values[j] = f->point.value;
	}
	if (sems && values) {
		accel_semaphore_list_t waits = { n, sems, values };

		err = accel_queue_dealloca(up->queue, n ? &waits : NULL, NULL,
					   up->ring, 0);
	}
	if (err) {
		/*
		 * Out of memory (or over ACCEL_SEMAPHORE_LIST_MAX semaphores):
		 * the release below returns the ring at once, so wait for
		 * its readers first.
		 */
		for (uint32_t i = 0; i < up->count; i++) {
			const struct fence *f = &up->fences[(up->first + i) % up->capacity];

			accel_semaphore_wait(f->point.sem, f->point.value, 0,
					     ACCEL_DEADLINE_INFINITE);
		}
	}
	for (uint32_t i = 0; i < up->count; i++)
		accel_semaphore_release(up->fences[(up->first + i) % up->capacity].point.sem);
	free(sems);
	free(values);
	free(up->fences);
	accel_buffer_release(up->ring);
	accel_queue_release(up->queue);
	free(up);
}
