/* SPDX-License-Identifier: MIT */
/**
 * DOC: accel/transfer.h - synchronous transfers
 *
 * Copies of a range between host memory and a buffer, or between two
 * buffers of one device, that return once the bytes are there: no command
 * buffer, queue or semaphore to manage. They work on every buffer a
 * transfer usage bit allows, mappable or not, on every backend: a
 * DEVICE_LOCAL buffer that the host cannot map is reached through a
 * staging buffer and the device's own copy; a HOST_VISIBLE one (and every
 * cpu buffer) with a plain memory copy. Offsets and lengths need no
 * alignment.
 *
 * IREE's counterparts: iree_hal_device_transfer_h2d(), _d2h() and _d2d(),
 * and iree_hal_device_transfer_range() for accel_device_transfer_range(),
 * whose ends are either kind (struct accel_transfer_buffer, IREE's
 * iree_hal_transfer_buffer_t).
 *
 * **Ordering.** A transfer is not ordered against queue work: like a
 * mapping, it must not touch a range that work in flight reads or writes
 * (wait for that work's semaphores first). Transfers into disjoint ranges
 * may run at once from several threads.
 *
 * **Errors.** Every function checks all its arguments before it moves a
 * byte, and on any of these errors nothing is written:
 *
 * - -EINVAL: a NULL argument, @flags not 0, a buffer without the usage bit
 *   its end needs (the message names the bit to allocate it with), or
 *   overlapping source and target ranges of one buffer's memory (d2d);
 * - -EXDEV: a buffer of another device than @device;
 * - -ERANGE: a range outside its buffer, an offset + length that
 *   overflows, or a host end whose address + length wraps around the
 *   address space (no buffer bounds a host end's length);
 * - -ETIME: @deadline_ns had passed when the transfer would have started.
 *
 * A zero length succeeds at once, whatever the deadline (nothing to wait
 * for), once the arguments pass the checks above: its offset must still
 * lie within its buffer (at most the buffer's size), else -ERANGE. Once a copy through the device has started, the call can still
 * fail with the errors of making and running it (-ENOMEM for the staging
 * buffer, -EAGAIN, the kernel scheduler's, a device error; the message
 * names the step), and with -ETIME when the deadline passes before the
 * device's copy ended: the copy then goes on and the target may be partly
 * written, so a deadline bounds how long the call waits; it cancels
 * nothing.
 *
 * Thread-safety: thread-safe.
 */
#ifndef ACCEL_TRANSFER_H
#define ACCEL_TRANSFER_H

#include <stdint.h>

#include <accel/buffer.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * accel_device_transfer_h2d() - copy @length bytes from host memory into
 * @target at @target_offset, and return once they are there.
 * @device:        the device of @target.
 * @source:        @length bytes of host memory, only read during the call.
 * @target:        a buffer with ACCEL_BUFFER_USAGE_TRANSFER_TARGET.
 * @target_offset: where in @target; any alignment.
 * @length:        bytes; 0 is a no-op. ACCEL_WHOLE_BUFFER is not special.
 * @flags:         must be 0.
 * @deadline_ns:   absolute CLOCK_MONOTONIC ns (accel_deadline_after()), or
 *                 ACCEL_DEADLINE_INFINITE.
 *
 * Return: 0, or a negative errno with the message set (see the DOC above).
 *
 * Thread-safety: thread-safe.
 */
int accel_device_transfer_h2d(accel_device_t *device, const void *source,
			      accel_buffer_t *target, uint64_t target_offset,
			      uint64_t length, uint32_t flags,
			      int64_t deadline_ns);

/**
 * accel_device_transfer_d2h() - copy @length bytes of @source at
 * @source_offset into host memory, and return once they are there.
 * @device:        the device of @source.
 * @source:        a buffer with ACCEL_BUFFER_USAGE_TRANSFER_SOURCE.
 * @source_offset: where in @source; any alignment.
 * @target:        @length bytes of host memory.
 * @length:        bytes; 0 is a no-op.
 * @flags:         must be 0.
 * @deadline_ns:   as accel_device_transfer_h2d().
 *
 * Return: 0, or a negative errno with the message set (see the DOC above).
 *
 * Thread-safety: thread-safe.
 */
int accel_device_transfer_d2h(accel_device_t *device, accel_buffer_t *source,
			      uint64_t source_offset, void *target,
			      uint64_t length, uint32_t flags,
			      int64_t deadline_ns);

/**
 * accel_device_transfer_d2d() - copy @length bytes of @source at
 * @source_offset into @target at @target_offset, and return once they are
 * there.
 * @device:        the device of both buffers.
 * @source:        a buffer with ACCEL_BUFFER_USAGE_TRANSFER_SOURCE.
 * @source_offset: where in @source; any alignment.
 * @target:        a buffer with ACCEL_BUFFER_USAGE_TRANSFER_TARGET; may be
 *                 @source, or share its memory (a subspan), when the two
 *                 ranges do not overlap (-EINVAL, as
 *                 accel_command_buffer_copy()).
 * @target_offset: where in @target; any alignment.
 * @length:        bytes; 0 is a no-op.
 * @flags:         must be 0.
 * @deadline_ns:   as accel_device_transfer_h2d().
 *
 * Return: 0, or a negative errno with the message set (see the DOC above).
 *
 * Thread-safety: thread-safe.
 */
int accel_device_transfer_d2d(accel_device_t *device, accel_buffer_t *source,
			      uint64_t source_offset, accel_buffer_t *target,
			      uint64_t target_offset, uint64_t length,
			      uint32_t flags, int64_t deadline_ns);

/**
 * struct accel_transfer_buffer - one end of accel_device_transfer_range():
 * host memory or a buffer, exactly one of the two.
 * @host:   host memory (for a source, only read), or NULL.
 * @buffer: a buffer of the device, or NULL.
 */
typedef struct accel_transfer_buffer {
	void *host;
	accel_buffer_t *buffer;
} accel_transfer_buffer_t;

/** accel_transfer_host() - an end in host memory at @host. */
static inline accel_transfer_buffer_t accel_transfer_host(void *host)
{
	accel_transfer_buffer_t end = { host, 0 };

	return end;
}

/** accel_transfer_device() - an end in @buffer. */
static inline accel_transfer_buffer_t
accel_transfer_device(accel_buffer_t *buffer)
{
	accel_transfer_buffer_t end = { 0, buffer };

	return end;
}

/**
 * accel_device_transfer_range() - copy @length bytes from @source at
 * @source_offset to @target at @target_offset, whichever kind each end
 * is, and return once they are there: accel_device_transfer_h2d(), _d2h()
 * or _d2d() by the ends' kinds, or a memmove() when both are host memory.
 * @device:        the device of the buffer ends.
 * @source:        host memory or a buffer with TRANSFER_SOURCE.
 * @source_offset: bytes from the start of @source (host ends too).
 * @target:        host memory or a buffer with TRANSFER_TARGET.
 * @target_offset: bytes from the start of @target.
 * @length:        bytes; 0 is a no-op.
 * @flags:         must be 0.
 * @deadline_ns:   as accel_device_transfer_h2d().
 *
 * Return: 0, or a negative errno with the message set (see the DOC
 * above); also -EINVAL when an end sets both @host and @buffer, or
 * neither, and -ERANGE when a host end's address + offset (+ length)
 * overflows.
 *
 * Thread-safety: thread-safe.
 */
int accel_device_transfer_range(accel_device_t *device,
				accel_transfer_buffer_t source,
				uint64_t source_offset,
				accel_transfer_buffer_t target,
				uint64_t target_offset, uint64_t length,
				uint32_t flags, int64_t deadline_ns);

#ifdef __cplusplus
}
#endif

#endif /* ACCEL_TRANSFER_H */
