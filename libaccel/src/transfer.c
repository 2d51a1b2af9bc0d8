// SPDX-License-Identifier: MIT
/*
 * Synchronous transfers (accel/transfer.h): h2d, d2h and d2d copies of a
 * range that return once the bytes are there, and transfer_range, which
 * takes either kind of end.
 *
 * The core checks every argument, then hands the copy to the driver's
 * ->transfer when it has one (cpu: its buffers are host memory). Else it
 * copies itself: with memmove() when every buffer end is HOST_VISIBLE
 * (the driver keeps those mapped, coherently), or through the device:
 * a one-shot command buffer with one copy, run on a queue of its own and
 * waited for, host data passing through a HOST_VISIBLE staging buffer of
 * at most TRANSFER_STAGING_MAX bytes, reused chunk after chunk. So every
 * backend gets transfers on buffers the host cannot map, through the
 * commands it implements anyway.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "accel/queue.h"
#include "accel/semaphore.h"
#include "accel/status.h"
#include "accel/transfer.h"
#include "core.h"
#include "error.h"

/* The most bytes one staged chunk moves (and the staging buffer's size). */
#define TRANSFER_STAGING_MAX (UINT64_C(32) << 20)

/* Where a buffer end's bytes are for the host, or NULL if not mappable. */
static uint8_t *host_of(const accel_buffer_t *b, uint64_t offset)
{
	if (!(b->memory_type & ACCEL_MEMORY_TYPE_HOST_VISIBLE) || !b->host)
		return NULL;
	return (uint8_t *)b->host + offset;
}

/* Fails with @err, the message of the failed call prefixed with @fn. */
static int fail_in(int err, const char *fn, const char *what)
{
	char msg[ACCEL_ERROR_MAX];

	accel_strfmt(msg, sizeof(msg), "%s", accel_error_message());
	return accel_fail(-err, "%s: %s: %s", fn, what, msg);
}

/*
 * Runs one copy of @length bytes, @src at @src_offset into @dst at
 * @dst_offset, on @q, signalling @s to @point, and waits for it.
 */
static int run_copy(const struct accel_transfer *t, accel_queue_t *q,
		    accel_semaphore_t *s, uint64_t point, accel_buffer_t *src,
		    uint64_t src_offset, accel_buffer_t *dst,
		    uint64_t dst_offset, uint64_t length)
{
	accel_semaphore_list_t signal = { 1, &s, &point };
	accel_command_buffer_t *cb = NULL;
	int err;

	err = accel_command_buffer_create(t->src ? t->src->device : t->dst->device,
					  ACCEL_COMMAND_BUFFER_ONE_SHOT, 0, &cb);
	if (!err)
		err = accel_command_buffer_begin(cb);
	if (!err)
		err = accel_command_buffer_copy(cb,
			accel_buffer_ref_direct(src, src_offset, length),
			accel_buffer_ref_direct(dst, dst_offset, length));
	if (!err)
		err = accel_command_buffer_end(cb);
	if (!err)
		err = accel_queue_execute(q, NULL, &signal, cb, NULL, 0);
	accel_command_buffer_release(cb);
	if (err)
		return fail_in(err, t->fn, "recording the device's copy");
	err = accel_semaphore_wait(s, point, 0, t->deadline_ns);
	if (err == -ETIME)
		return accel_fail(ETIME,
			"%s: the deadline passed before the device's copy of %" PRIu64 " bytes ended; it goes on, and the target may be partly written",
			t->fn, length);
	if (err)
		return fail_in(err, t->fn, "the device's copy failed");
	return 0;
}

/* The copy through the device, staging host data (see the top). */
static int transfer_staged(accel_device_t *d, const struct accel_transfer *t)
{
	accel_buffer_params_t params = {
		ACCEL_MEMORY_TYPE_HOST_VISIBLE | ACCEL_MEMORY_TYPE_HOST_COHERENT,
		ACCEL_BUFFER_USAGE_TRANSFER | ACCEL_BUFFER_USAGE_MAPPING,
	};
	uint64_t chunk = t->length, point = 0;
	accel_buffer_t *staging = NULL;
	accel_semaphore_t *s = NULL;
	accel_queue_t *q = NULL;
	int err;

	err = accel_queue_create(d, 0, &q);
	if (err)
		return fail_in(err, t->fn, "creating a queue for the device's copy");
	err = accel_semaphore_create(d->scheduler, 0, &s);
	if (err) {
		err = fail_in(err, t->fn, "creating a semaphore for the device's copy");
		goto out;
	}
	if (t->src_host || t->dst_host) {
		if (chunk > TRANSFER_STAGING_MAX)
			chunk = TRANSFER_STAGING_MAX;
		err = accel_allocator_allocate_buffer(&d->allocator, &params,
						      chunk, &staging);
		if (err) {
			err = fail_in(err, t->fn, "allocating a staging buffer");
			goto out;
		}
	}
	for (uint64_t done = 0; done < t->length; done += chunk) {
		uint64_t n = t->length - done < chunk ? t->length - done : chunk;

		if (t->src_host) {
			memcpy(staging->host, (const uint8_t *)t->src_host + done, n);
			err = run_copy(t, q, s, ++point, staging, 0, t->dst,
				       t->dst_offset + done, n);
		} else if (t->dst_host) {
			err = run_copy(t, q, s, ++point, t->src,
				       t->src_offset + done, staging, 0, n);
			if (!err)
				memcpy((uint8_t *)t->dst_host + done, staging->host, n);
		} else {
			err = run_copy(t, q, s, ++point, t->src, t->src_offset,
				       t->dst, t->dst_offset, n);
		}
		if (err)
			break;
	}
out:
	accel_buffer_release(staging);
	accel_semaphore_release(s);
	accel_queue_release(q);
	return err;
}

static int transfer(accel_device_t *d, const struct accel_transfer *t)
{
	const uint8_t *src;
	uint8_t *dst;

	if (d->ops->transfer)
		return d->ops->transfer(d, t);
	src = t->src_host ? t->src_host : host_of(t->src, t->src_offset);
	dst = t->dst_host ? t->dst_host : host_of(t->dst, t->dst_offset);
	if (!src || !dst)
		return transfer_staged(d, t);
	memmove(dst, src, t->length);
	return 0;
}

/* Checks @b, one end of @t: device, usage bit, range. */
static int check_end(accel_device_t *d, const struct accel_transfer *t,
		     const char *name, const accel_buffer_t *b, uint64_t offset,
		     uint32_t usage)
{
	if (!b)
		return accel_fail(EINVAL, "%s: %s is NULL", t->fn, name);
	if (b->device != d)
		return accel_fail(EXDEV,
			"%s: %s belongs to device %s, not to %s%s",
			t->fn, name, b->device->uri, d->uri,
			accel_device_twin(b->device, d));
	if (accel_buffer_returned(b))
		return accel_buffer_fail_returned(t->fn, name);
	if (!(b->usage & usage))
		return accel_fail(EINVAL,
			"%s: %s lacks %s; allocate it with that usage bit",
			t->fn, name, accel_usage_missing(b->usage, usage));
	if (offset > b->size || t->length > b->size - offset)
		return accel_fail(ERANGE,
			"%s: %s: offset %" PRIu64 " + length %" PRIu64 " is outside the buffer (%" PRIu64 " bytes)",
			t->fn, name, offset, t->length, b->size);
	return 0;
}

/* A host end of @t: its address + length must not wrap. */
static int check_host_end(const struct accel_transfer *t, const char *name,
			  const void *host)
{
	if (t->length > UINTPTR_MAX - (uintptr_t)host)
		return accel_fail(ERANGE,
			"%s: %s: host address %p + length %" PRIu64 " overflows",
			t->fn, name, host, t->length);
	return 0;
}

/* Whether the two buffer ranges of a checked d2d @t share memory. */
static bool share_memory(const struct accel_transfer *t)
{
	uint64_t src = t->src->address + t->src_offset;
	uint64_t dst = t->dst->address + t->dst_offset;

	return src < dst + t->length && dst < src + t->length;
}

/* Checks @t whole, then runs it. */
static int transfer_checked(accel_device_t *d, struct accel_transfer *t,
			    uint32_t flags)
{
	int err;

	if (!d)
		return accel_fail(EINVAL, "%s: device is NULL", t->fn);
	if (flags)
		return accel_fail(EINVAL, "%s: flags 0x%x: must be 0", t->fn, flags);
	if (!t->src_host && !t->src)
		return accel_fail(EINVAL, "%s: source is NULL", t->fn);
	if (!t->dst_host && !t->dst)
		return accel_fail(EINVAL, "%s: target is NULL", t->fn);
	if ((t->src_host && t->src) || (t->dst_host && t->dst))
		return accel_fail(EINVAL,
			"%s: %s sets both host and buffer; an end is one or the other",
			t->fn, t->src_host && t->src ? "source" : "target");
	err = t->src_host ? 0 :
	      check_end(d, t, "source", t->src, t->src_offset,
			ACCEL_BUFFER_USAGE_TRANSFER_SOURCE);
	if (!err && !t->dst_host)
		err = check_end(d, t, "target", t->dst, t->dst_offset,
				ACCEL_BUFFER_USAGE_TRANSFER_TARGET);
	/* Then the host ends, which only the length bounds. */
	if (!err && t->src_host)
		err = check_host_end(t, "source", t->src_host);
	if (!err && t->dst_host)
		err = check_host_end(t, "target", t->dst_host);
	if (err)
		return err;
	if (t->src && t->dst && t->length && share_memory(t))
		return accel_fail(EINVAL,
			"%s: the source range (offset %" PRIu64 ") and the target range (offset %" PRIu64 ") of %" PRIu64 " bytes share memory; copy through a temporary buffer",
			t->fn, t->src_offset, t->dst_offset, t->length);
	if (!t->length)
		return 0;
	if (t->deadline_ns != ACCEL_DEADLINE_INFINITE &&
	    accel_now_ns() >= t->deadline_ns)
		return accel_fail(ETIME,
			"%s: the deadline (%" PRId64 " ns, CLOCK_MONOTONIC) had passed; nothing was copied",
			t->fn, t->deadline_ns);
	return transfer(d, t);
}

ACCEL_EXPORT int accel_device_transfer_h2d(accel_device_t *device,
					   const void *source,
					   accel_buffer_t *target,
					   uint64_t target_offset,
					   uint64_t length, uint32_t flags,
					   int64_t deadline_ns)
{
	struct accel_transfer t = {
		.src_host = source, .dst = target, .dst_offset = target_offset,
		.length = length, .deadline_ns = deadline_ns,
		.fn = "accel_device_transfer_h2d",
	};

	return transfer_checked(device, &t, flags);
}

ACCEL_EXPORT int accel_device_transfer_d2h(accel_device_t *device,
					   accel_buffer_t *source,
					   uint64_t source_offset, void *target,
					   uint64_t length, uint32_t flags,
					   int64_t deadline_ns)
{
	struct accel_transfer t = {
		.src = source, .src_offset = source_offset, .dst_host = target,
		.length = length, .deadline_ns = deadline_ns,
		.fn = "accel_device_transfer_d2h",
	};

	return transfer_checked(device, &t, flags);
}

ACCEL_EXPORT int accel_device_transfer_d2d(accel_device_t *device,
					   accel_buffer_t *source,
					   uint64_t source_offset,
					   accel_buffer_t *target,
					   uint64_t target_offset,
					   uint64_t length, uint32_t flags,
					   int64_t deadline_ns)
{
	struct accel_transfer t = {
		.src = source, .src_offset = source_offset, .dst = target,
		.dst_offset = target_offset, .length = length,
		.deadline_ns = deadline_ns, .fn = "accel_device_transfer_d2d",
	};

	return transfer_checked(device, &t, flags);
}

/* One end of transfer_range into @t: a host pointer (+ offset) or a buffer. */
static int range_end(struct accel_transfer *t, const char *name,
		     accel_transfer_buffer_t end, uint64_t offset,
		     const void **host, accel_buffer_t **buffer,
		     uint64_t *buffer_offset)
{
	*buffer = end.buffer;
	*buffer_offset = offset;
	*host = NULL;
	if (!end.host)
		return 0;
	if (offset > UINTPTR_MAX - (uintptr_t)end.host)
		return accel_fail(ERANGE,
			"%s: %s: host address %p + offset %" PRIu64 " overflows",
			t->fn, name, end.host, offset);
	*host = (const uint8_t *)end.host + offset;
	*buffer_offset = 0;
	return 0;
}

ACCEL_EXPORT int accel_device_transfer_range(accel_device_t *device,
					     accel_transfer_buffer_t source,
					     uint64_t source_offset,
					     accel_transfer_buffer_t target,
					     uint64_t target_offset,
					     uint64_t length, uint32_t flags,
					     int64_t deadline_ns)
{
	struct accel_transfer t = {
		.length = length, .deadline_ns = deadline_ns,
		.fn = "accel_device_transfer_range",
	};
	const void *dst_host;
	int err;

	if (!device)
		return accel_fail(EINVAL, "%s: device is NULL", t.fn);
	err = range_end(&t, "source", source, source_offset, &t.src_host,
			&t.src, &t.src_offset);
	if (!err)
		err = range_end(&t, "target", target, target_offset, &dst_host,
				&t.dst, &t.dst_offset);
	if (err)
		return err;
	t.dst_host = (void *)dst_host;
	return transfer_checked(device, &t, flags);
}
