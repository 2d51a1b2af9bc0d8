// SPDX-License-Identifier: MIT
/*
 * Buffers: allocation through the device's driver, subspans, mapping.
 *
 * The core owns the header (struct accel_buffer): size, memory type, usage,
 * the device address the binding plan writes into parameter blocks, and the
 * host pointer mapping returns. A subspan is a core-only buffer whose
 * address and host pointer are offset from its parent's.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include "core.h"
#include "error.h"

void accel_buffer_init(accel_buffer_t *b, const struct accel_buffer_ops *ops,
		       accel_device_t *d, const accel_buffer_params_t *params,
		       uint64_t size)
{
	accel_ref_init(&b->ref);
	b->ops = ops;
	accel_device_retain(d);
	b->device = d;
	b->size = size;
	b->memory_type = params->memory_type | ACCEL_MEMORY_TYPE_DEVICE_VISIBLE;
	b->usage = params->usage;
	atomic_init(&b->map_count, 0);
	atomic_init(&b->returned, false);
}

void accel_buffer_fini(accel_buffer_t *b)
{
	if (!b->weak_device)
		accel_device_release(b->device);
}

int accel_buffer_fail_returned(const char *fn, const char *where)
{
	return accel_fail(EBADFD,
		"%s: %s: the buffer was returned by accel_queue_dealloca(); its memory belongs to the pool again (alloca a new one)",
		fn, where);
}

int accel_buffer_params_check(const accel_buffer_params_t *params,
			      const char *fn)
{
	if (params->memory_type & ~ACCEL_MEMORY_TYPE_ALL)
		return accel_fail(EINVAL, "%s: params->memory_type 0x%x has unknown bits (known: 0x%x)",
				  fn, params->memory_type, ACCEL_MEMORY_TYPE_ALL);
	if (params->usage & ~ACCEL_BUFFER_USAGE_ALL)
		return accel_fail(EINVAL, "%s: params->usage 0x%x has unknown bits (known: 0x%x)",
				  fn, params->usage, ACCEL_BUFFER_USAGE_ALL);
	if (!params->usage)
		return accel_fail(EINVAL,
			"%s: params->usage is 0; say what the buffer is for (ACCEL_BUFFER_USAGE_*)", fn);
	return 0;
}

ACCEL_EXPORT int accel_allocator_allocate_buffer(accel_allocator_t *allocator,
						 const accel_buffer_params_t *params,
						 uint64_t size,
						 accel_buffer_t **out)
{
	static const char fn[] = "accel_allocator_allocate_buffer";
	accel_device_t *d;

	if (!out)
		return accel_fail(EINVAL, "%s: out is NULL", fn);
	*out = NULL;
	if (!allocator || !params)
		return accel_fail(EINVAL, "%s: %s is NULL", fn,
				  allocator ? "params" : "allocator");
	if (accel_buffer_params_check(params, fn))
		return -EINVAL;
	if (size > ACCEL_BUFFER_MAX_SIZE)
		return accel_fail(ENOMEM,
			"%s: size %" PRIu64 " is above ACCEL_BUFFER_MAX_SIZE (%" PRIu64 ")",
			fn, size, ACCEL_BUFFER_MAX_SIZE);
	d = allocator->device;
	return d->ops->buffer_allocate(d, params, size, out);
}

static void subspan_destroy(accel_buffer_t *b)
{
	accel_buffer_release(b->parent);
	accel_buffer_fini(b);
	free(b);
}

static const struct accel_buffer_ops subspan_ops = {
	.destroy = subspan_destroy,
};

ACCEL_EXPORT int accel_buffer_subspan(accel_buffer_t *buffer, uint64_t offset,
				      uint64_t length, accel_buffer_t **out)
{
	accel_buffer_params_t params;
	accel_buffer_t *b;

	if (!out)
		return accel_fail(EINVAL, "accel_buffer_subspan: out is NULL");
	*out = NULL;
	if (!buffer)
		return accel_fail(EINVAL, "accel_buffer_subspan: buffer is NULL");
	if (offset > buffer->size ||
	    (length != ACCEL_WHOLE_BUFFER && length > buffer->size - offset))
		return accel_fail(ERANGE,
			"accel_buffer_subspan: offset %" PRIu64 " + length %" PRIu64 " is outside the buffer (%" PRIu64 " bytes)",
			offset, length, buffer->size);
	if (accel_buffer_returned(buffer))
		return accel_buffer_fail_returned("accel_buffer_subspan", "buffer");
	if (length == ACCEL_WHOLE_BUFFER)
		length = buffer->size - offset;
	b = calloc(1, sizeof(*b));
	if (!b)
		return accel_fail(ENOMEM, "accel_buffer_subspan: out of memory");
	params.memory_type = buffer->memory_type;
	params.usage = buffer->usage;
	accel_buffer_init(b, &subspan_ops, buffer->device, &params, length);
	accel_buffer_retain(buffer);
	b->parent = buffer;
	b->root_offset = buffer->root_offset + offset;
	b->address = buffer->address + offset;
	b->host = buffer->host ? (uint8_t *)buffer->host + offset : NULL;
	b->transient = buffer->transient;
	*out = b;
	return 0;
}

ACCEL_EXPORT void accel_buffer_retain(accel_buffer_t *buffer)
{
	if (buffer)
		accel_ref_get(&buffer->ref);
}

ACCEL_EXPORT void accel_buffer_release(accel_buffer_t *buffer)
{
	if (buffer && accel_ref_put(&buffer->ref))
		buffer->ops->destroy(buffer);
}

ACCEL_EXPORT uint64_t accel_buffer_size(const accel_buffer_t *buffer)
{
	return buffer ? buffer->size : 0;
}

ACCEL_EXPORT accel_buffer_params_t accel_buffer_params(const accel_buffer_t *buffer)
{
	accel_buffer_params_t p = { 0, 0 };

	if (buffer) {
		p.memory_type = buffer->memory_type;
		p.usage = buffer->usage;
	}
	return p;
}

ACCEL_EXPORT int accel_buffer_map(accel_buffer_t *buffer, uint32_t flags,
				  uint64_t offset, uint64_t length, void **ptr)
{
	static const char fn[] = "accel_buffer_map";

	if (!ptr)
		return accel_fail(EINVAL, "%s: ptr is NULL", fn);
	*ptr = NULL;
	if (!buffer)
		return accel_fail(EINVAL, "%s: buffer is NULL", fn);
	if (!flags || (flags & ~(ACCEL_MAP_READ | ACCEL_MAP_WRITE)))
		return accel_fail(EINVAL,
			"%s: flags 0x%x: use ACCEL_MAP_READ and/or ACCEL_MAP_WRITE", fn, flags);
	if (accel_buffer_returned(buffer))
		return accel_buffer_fail_returned(fn, "buffer");
	if (!(buffer->memory_type & ACCEL_MEMORY_TYPE_HOST_VISIBLE) || !buffer->host)
		return accel_fail(EINVAL,
			"%s: the buffer is not ACCEL_MEMORY_TYPE_HOST_VISIBLE, so the host cannot map it", fn);
	if (!(buffer->usage & ACCEL_BUFFER_USAGE_MAPPING))
		return accel_fail(EINVAL,
			"%s: the buffer lacks ACCEL_BUFFER_USAGE_MAPPING; allocate it with that usage bit", fn);
	if (offset > buffer->size ||
	    (length != ACCEL_WHOLE_BUFFER && length > buffer->size - offset))
		return accel_fail(ERANGE,
			"%s: offset %" PRIu64 " + length %" PRIu64 " is outside the buffer (%" PRIu64 " bytes)",
			fn, offset, length, buffer->size);
	atomic_fetch_add(&buffer->map_count, 1);
	*ptr = (uint8_t *)buffer->host + offset;
	return 0;
}

ACCEL_EXPORT int accel_buffer_unmap(accel_buffer_t *buffer)
{
	unsigned int n;

	if (!buffer)
		return accel_fail(EINVAL, "accel_buffer_unmap: buffer is NULL");
	n = atomic_load(&buffer->map_count);
	do {
		if (n == 0)
			return accel_fail(EBADFD,
				"accel_buffer_unmap: the buffer is not mapped (more unmaps than maps)");
	} while (!atomic_compare_exchange_weak(&buffer->map_count, &n, n - 1));
	return 0;
}
