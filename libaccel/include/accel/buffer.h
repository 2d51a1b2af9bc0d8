/* SPDX-License-Identifier: MIT */
/**
 * DOC: accel/buffer.h - allocators and buffers
 *
 * A buffer is a range of device memory with a *memory type* (where it lives
 * and who can see it) and *usage* bits (what it may be used for). Both are
 * fixed at allocation and checked wherever the buffer is used: a fill into a
 * buffer without ACCEL_BUFFER_USAGE_TRANSFER_TARGET fails when recorded (or,
 * through a binding table, when submitted), on every backend alike, so a
 * program that works on cpu does not break on a GPU.
 *
 * Mapping gives the host a pointer to the contents; it needs
 * ACCEL_MEMORY_TYPE_HOST_VISIBLE and ACCEL_BUFFER_USAGE_MAPPING. Every
 * backend gives HOST_VISIBLE buffers host-coherent memory, so a mapping
 * needs no flush or invalidate (there is no call for either). Buffers the
 * host cannot map are read and written with the synchronous transfers of
 * accel/transfer.h. A *subspan* is a buffer that views a range of another
 * and keeps it alive.
 *
 * Thread-safety: an allocator is thread-safe. A buffer's properties are
 * immutable, and retain/release/map/unmap are thread-safe; what is written
 * into mapped memory is the program's to order against device work (wait
 * for the semaphores of the work that uses the buffer).
 */
#ifndef ACCEL_BUFFER_H
#define ACCEL_BUFFER_H

#include <stdint.h>

#include <accel/device.h>

#ifdef __cplusplus
extern "C" {
#endif

/** typedef accel_buffer_t - a buffer (opaque, reference counted). */
typedef struct accel_buffer accel_buffer_t;

/* Memory types (bits of accel_buffer_params.memory_type). */
/** ACCEL_MEMORY_TYPE_DEVICE_LOCAL - fastest for the device. */
#define ACCEL_MEMORY_TYPE_DEVICE_LOCAL (1u << 0)
/** ACCEL_MEMORY_TYPE_DEVICE_VISIBLE - the device can use it. Always set. */
#define ACCEL_MEMORY_TYPE_DEVICE_VISIBLE (1u << 1)
/**
 * ACCEL_MEMORY_TYPE_HOST_LOCAL - lives in host memory: cpu, cuda and hip
 * put it there; vulkan prefers a HOST_CACHED memory type. Mapping still
 * needs HOST_VISIBLE.
 */
#define ACCEL_MEMORY_TYPE_HOST_LOCAL (1u << 2)
/** ACCEL_MEMORY_TYPE_HOST_VISIBLE - the host can map it (coherently). */
#define ACCEL_MEMORY_TYPE_HOST_VISIBLE (1u << 3)
/**
 * ACCEL_MEMORY_TYPE_HOST_COHERENT - host and device accesses need no flush
 * or invalidate. Every backend's HOST_VISIBLE memory is coherent, so with
 * HOST_VISIBLE it changes nothing; without it, the buffer is in
 * host-visible memory (vulkan, cuda, hip) but cannot be mapped.
 */
#define ACCEL_MEMORY_TYPE_HOST_COHERENT (1u << 4)
#define ACCEL_MEMORY_TYPE_ALL (0x1fu)

/* Usage bits (accel_buffer_params.usage). */
/** ACCEL_BUFFER_USAGE_TRANSFER_SOURCE - copy source. */
#define ACCEL_BUFFER_USAGE_TRANSFER_SOURCE (1u << 0)
/** ACCEL_BUFFER_USAGE_TRANSFER_TARGET - fill, update and copy target. */
#define ACCEL_BUFFER_USAGE_TRANSFER_TARGET (1u << 1)
/** ACCEL_BUFFER_USAGE_DISPATCH_STORAGE - a dispatch binding. */
#define ACCEL_BUFFER_USAGE_DISPATCH_STORAGE (1u << 2)
/** ACCEL_BUFFER_USAGE_DISPATCH_INDIRECT_PARAMS - a dispatch-indirect count. */
#define ACCEL_BUFFER_USAGE_DISPATCH_INDIRECT_PARAMS (1u << 3)
/** ACCEL_BUFFER_USAGE_MAPPING - accel_buffer_map() may be used. */
#define ACCEL_BUFFER_USAGE_MAPPING (1u << 4)
#define ACCEL_BUFFER_USAGE_TRANSFER \
	(ACCEL_BUFFER_USAGE_TRANSFER_SOURCE | ACCEL_BUFFER_USAGE_TRANSFER_TARGET)
#define ACCEL_BUFFER_USAGE_ALL (0x1fu)

/** ACCEL_WHOLE_BUFFER - a length meaning "from the offset to the end". */
#define ACCEL_WHOLE_BUFFER UINT64_MAX

/** ACCEL_BUFFER_MAX_SIZE - the largest buffer an allocator accepts (2^48). */
#define ACCEL_BUFFER_MAX_SIZE (UINT64_C(1) << 48)

/**
 * struct accel_buffer_params - what a buffer is for.
 * @memory_type: ACCEL_MEMORY_TYPE_* bits; DEVICE_VISIBLE is implied.
 * @usage:       ACCEL_BUFFER_USAGE_* bits; at least one.
 */
typedef struct accel_buffer_params {
	uint32_t memory_type;
	uint32_t usage;
} accel_buffer_params_t;

/* Map flags (IREE_HAL_MEMORY_ACCESS_READ / _WRITE). */
/**
 * ACCEL_MAP_READ - the host reads through the mapping: it sees what the
 * device wrote before (work whose semaphores were waited for).
 */
#define ACCEL_MAP_READ (1u << 0)
/**
 * ACCEL_MAP_WRITE - the host writes through the mapping: work submitted
 * after the writes sees them.
 */
#define ACCEL_MAP_WRITE (1u << 1)

/**
 * accel_allocator_allocate_buffer() - allocate a buffer.
 * @allocator: from accel_device_allocator().
 * @params:    memory type and usage.
 * @size:      bytes; 0 is allowed (an empty buffer). At most
 *             ACCEL_BUFFER_MAX_SIZE.
 * @out:       receives the buffer (one reference, the caller's); set to
 *             NULL first, left NULL on failure. The buffer holds a
 *             reference to the device. Its contents are undefined.
 *
 * Return: 0, or -EINVAL (NULL argument, unknown bits, no usage bit),
 * -ENOMEM (over ACCEL_BUFFER_MAX_SIZE, or out of memory; the message gives
 * the size).
 *
 * Thread-safety: thread-safe.
 */
int accel_allocator_allocate_buffer(accel_allocator_t *allocator,
				    const accel_buffer_params_t *params,
				    uint64_t size, accel_buffer_t **out);

/**
 * accel_buffer_subspan() - a buffer viewing [@offset, @offset + @length) of
 * @buffer, with its memory type and usage; it holds a reference to @buffer.
 * @length may be ACCEL_WHOLE_BUFFER.
 *
 * Return: 0, -EINVAL (NULL argument), -ERANGE (range outside @buffer or
 * overflowing), -ENOMEM.
 *
 * Thread-safety: thread-safe.
 */
int accel_buffer_subspan(accel_buffer_t *buffer, uint64_t offset,
			 uint64_t length, accel_buffer_t **out);

/** accel_buffer_retain() - one more reference (NULL: no-op). Thread-safe. */
void accel_buffer_retain(accel_buffer_t *buffer);

/**
 * accel_buffer_release() - drop a reference (NULL: no-op); the last one
 * frees the memory. Command buffers and submissions hold their own
 * references to the buffers they use, so a buffer may be released while
 * work that uses it is in flight. Thread-safe.
 */
void accel_buffer_release(accel_buffer_t *buffer);

/** accel_buffer_size() - its size in bytes; 0 for NULL. Thread-safe. */
uint64_t accel_buffer_size(const accel_buffer_t *buffer);

/**
 * accel_buffer_params() - its memory type and usage, as allocated
 * (memory_type includes DEVICE_VISIBLE). Zeroes for NULL. Thread-safe.
 */
accel_buffer_params_t accel_buffer_params(const accel_buffer_t *buffer);

/**
 * accel_buffer_map() - a host pointer to [@offset, @offset + @length).
 * @flags:  ACCEL_MAP_READ and/or ACCEL_MAP_WRITE (at least one).
 * @length: may be ACCEL_WHOLE_BUFFER.
 * @ptr:    receives the pointer; set to NULL first.
 *
 * The mapping stays valid until the matching accel_buffer_unmap(); maps
 * nest (each needs an unmap). Host-visible memory is coherent on every
 * backend, so neither flag makes a driver call: READ needs no invalidate,
 * WRITE no flush. The flags are checked, not enforced on the memory: a
 * READ mapping's pointer can be written. IREE: iree_hal_buffer_map_range().
 *
 * Return: 0, or, with nothing mapped, -EINVAL (NULL argument, flags 0 or
 * with bits other than READ and WRITE, the buffer lacks HOST_VISIBLE or
 * USAGE_MAPPING), -ERANGE (range outside the buffer).
 *
 * Thread-safety: thread-safe.
 */
int accel_buffer_map(accel_buffer_t *buffer, uint32_t flags, uint64_t offset,
		     uint64_t length, void **ptr);

/**
 * accel_buffer_unmap() - end one accel_buffer_map() of @buffer.
 *
 * Return: 0, -EINVAL for NULL, -EBADFD if @buffer is not mapped.
 *
 * Thread-safety: thread-safe.
 */
int accel_buffer_unmap(accel_buffer_t *buffer);

#ifdef __cplusplus
}
#endif

#endif /* ACCEL_BUFFER_H */
