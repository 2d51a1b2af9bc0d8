/* SPDX-License-Identifier: MIT */
/**
 * DOC: accel/command_buffer.h - command buffers, buffer refs, binding tables
 *
 * A command buffer is recorded once (accel_command_buffer_begin(), the
 * commands, accel_command_buffer_end()) and then submitted with
 * accel_queue_execute(): once if it was created ONE_SHOT, any number of
 * times (also concurrently) if REUSABLE.
 *
 * **Buffer refs.** Every buffer argument is an accel_buffer_ref_t:
 *
 * - *direct*: a buffer, an offset and a length, fixed at record time; the
 *   command buffer holds a reference to the buffer;
 * - *indirect*: a slot of the binding table, an offset and a length: the
 *   buffer is whatever the table given to accel_queue_execute() puts in
 *   that slot, and the offset is added to the table entry's offset.
 *
 * Slots must be below the binding capacity given at creation. A length may
 * be ACCEL_WHOLE_BUFFER (up to the end of the buffer or table entry),
 * except for copy and update through indirect refs (their lengths must be
 * known when recorded).
 *
 * **Validation.** Each recording call checks everything it can see and
 * fails without recording anything: the state, NULL arguments, ranges and
 * their overflow, alignment, usage bits of direct buffers, slot < capacity,
 * entry point binding and constant counts. For indirect refs it accumulates
 * what each slot needs (usage bits, the minimum length, alignment), and
 * accel_queue_execute() checks the table against that in time proportional
 * to the number of slots, never to the number of commands.
 *
 * **Errors** (besides -EINVAL for NULL or invalid arguments): -EBADFD for
 * a call in the wrong state (recording outside begin/end, begin twice,
 * submitting before end, a ONE_SHOT submitted twice); -ERANGE for a range
 * outside a buffer, an offset or length that overflows, a slot not below
 * the capacity, or a count past its limit (an update above
 * ACCEL_UPDATE_MAX_SIZE, a workgroup count above ACCEL_WORKGROUP_COUNT_MAX,
 * an entry point ordinal not below the executable's count, an indirect
 * count's ref shorter than its 12 bytes); -EINVAL for misalignment (a dispatch binding's offset
 * included: it must be a multiple of the device's
 * ACCEL_DEVICE_QUERY_MIN_BINDING_ALIGNMENT, checked when recorded for a
 * direct ref and when submitted for a binding table slot), a missing usage
 * bit, mismatched lengths, or binding/constant counts that differ from the
 * entry point's;
 * -EXDEV for a buffer or executable of another device; -ENOMEM.
 *
 * **Ordering.** Commands between two barriers may run in any order or
 * concurrently; accel_command_buffer_barrier() makes everything recorded
 * before it complete before anything recorded after it starts.
 *
 * Thread-safety: recording is thread-compatible (one thread at a time per
 * command buffer). After accel_command_buffer_end() the command buffer is
 * immutable and thread-safe: any number of threads may submit it at once.
 */
#ifndef ACCEL_COMMAND_BUFFER_H
#define ACCEL_COMMAND_BUFFER_H

#include <stdint.h>

#include <accel/buffer.h>
#include <accel/executable.h>

#ifdef __cplusplus
extern "C" {
#endif

/** typedef accel_command_buffer_t - a command buffer (opaque, refcounted). */
typedef struct accel_command_buffer accel_command_buffer_t;

/** ACCEL_COMMAND_BUFFER_ONE_SHOT - submitted at most once (else REUSABLE). */
#define ACCEL_COMMAND_BUFFER_ONE_SHOT (1u << 0)
/** ACCEL_COMMAND_BUFFER_REUSABLE - submitted any number of times (0). */
#define ACCEL_COMMAND_BUFFER_REUSABLE 0u

/** ACCEL_BINDING_CAPACITY_MAX - the largest binding capacity (2^20). */
#define ACCEL_BINDING_CAPACITY_MAX (1u << 20)
/** ACCEL_UPDATE_MAX_SIZE - the most bytes one update command carries. */
#define ACCEL_UPDATE_MAX_SIZE (UINT64_C(1) << 24)
/** ACCEL_DISPATCH_MAX_CONSTANTS - most 32-bit constants per dispatch. */
#define ACCEL_DISPATCH_MAX_CONSTANTS 1024u
/** ACCEL_DISPATCH_MAX_BINDINGS - most bindings per dispatch. */
#define ACCEL_DISPATCH_MAX_BINDINGS 256u
/** ACCEL_DISPATCH_INDIRECT_PARAMS_SIZE - bytes a dispatch-indirect reads. */
#define ACCEL_DISPATCH_INDIRECT_PARAMS_SIZE 12u
/**
 * ACCEL_WORKGROUP_COUNT_MAX - the most workgroups per dimension; a
 * dispatch-indirect that reads more fails its submission (-ERANGE).
 */
#define ACCEL_WORKGROUP_COUNT_MAX 65535u

/**
 * struct accel_buffer_ref - where a command reads or writes.
 * @buffer: the buffer (direct), or NULL (indirect: use @slot).
 * @slot:   the binding-table slot (indirect only; ignored when direct).
 * @offset: bytes from the start of the buffer (direct) or of the table
 *          entry's range (indirect).
 * @length: bytes, or ACCEL_WHOLE_BUFFER.
 */
typedef struct accel_buffer_ref {
	accel_buffer_t *buffer;
	uint32_t slot;
	uint64_t offset;
	uint64_t length;
} accel_buffer_ref_t;

/** accel_buffer_ref_direct() - a direct ref (no reference is taken). */
static inline accel_buffer_ref_t accel_buffer_ref_direct(accel_buffer_t *buffer,
							 uint64_t offset,
							 uint64_t length)
{
	accel_buffer_ref_t ref = { buffer, 0, offset, length };

	return ref;
}

/** accel_buffer_ref_indirect() - a ref to binding-table slot @slot. */
static inline accel_buffer_ref_t accel_buffer_ref_indirect(uint32_t slot,
							   uint64_t offset,
							   uint64_t length)
{
	accel_buffer_ref_t ref = { 0, slot, offset, length };

	return ref;
}

/**
 * struct accel_binding - one entry of a binding table.
 * @buffer: the buffer; may be NULL for slots the command buffer never uses.
 * @offset: where the slot's range starts in @buffer.
 * @length: the range's length, or ACCEL_WHOLE_BUFFER.
 */
typedef struct accel_binding {
	accel_buffer_t *buffer;
	uint64_t offset;
	uint64_t length;
} accel_binding_t;

/**
 * struct accel_binding_table - the buffers of one submission, by slot.
 * @count:    entries; at least the highest slot used + 1. Extra entries are
 *            ignored.
 * @bindings: the entries (only read during accel_queue_execute(), which
 *            copies what it needs and retains the buffers).
 */
typedef struct accel_binding_table {
	uint32_t count;
	const accel_binding_t *bindings;
} accel_binding_table_t;

/**
 * accel_command_buffer_create() - a new, empty command buffer.
 * @device:           the device it will run on (retained).
 * @mode:             ACCEL_COMMAND_BUFFER_ONE_SHOT or _REUSABLE.
 * @binding_capacity: slots its indirect refs may use (0 ..
 *                    ACCEL_BINDING_CAPACITY_MAX).
 * @out:              receives it (one reference); NULL first and on failure.
 *
 * Return: 0, -EINVAL (NULL argument, unknown mode bits), -ERANGE
 * (capacity too large), -ENOMEM.
 */
int accel_command_buffer_create(accel_device_t *device, uint32_t mode,
				uint32_t binding_capacity,
				accel_command_buffer_t **out);

/** accel_command_buffer_retain() - one more reference (NULL: no-op). */
void accel_command_buffer_retain(accel_command_buffer_t *cb);
/**
 * accel_command_buffer_release() - drop a reference (NULL: no-op). Each
 * submission holds its own reference until its signals, so a command
 * buffer may be released while submissions of it are in flight.
 */
void accel_command_buffer_release(accel_command_buffer_t *cb);

/**
 * accel_command_buffer_begin() - start recording. Only once per command
 * buffer: -EBADFD if it is recording or was recorded already.
 */
int accel_command_buffer_begin(accel_command_buffer_t *cb);

/**
 * accel_command_buffer_end() - finish recording; the command buffer
 * becomes submittable. -EBADFD unless recording.
 */
int accel_command_buffer_end(accel_command_buffer_t *cb);

/**
 * accel_command_buffer_command_count() - commands recorded so far
 * (barriers included); 0 for NULL.
 */
uint32_t accel_command_buffer_command_count(const accel_command_buffer_t *cb);

/**
 * accel_command_buffer_fill() - fill @target with a repeated pattern.
 * @pattern:        1, 2 or 4 bytes, copied now.
 * @pattern_length: 1, 2 or 4; @target's offset and length must be
 *                  multiples of it (for an indirect ref, so must the table
 *                  entry's offset, and its length with ACCEL_WHOLE_BUFFER).
 *                  The offset is counted in the root buffer: on a subspan,
 *                  the subspan's own offset is added first.
 *
 * Needs ACCEL_BUFFER_USAGE_TRANSFER_TARGET. A zero length is a no-op.
 */
int accel_command_buffer_fill(accel_command_buffer_t *cb,
			      accel_buffer_ref_t target, const void *pattern,
			      uint32_t pattern_length);

/**
 * accel_command_buffer_update() - write host data into @target.
 * @source: @target.length bytes (at most ACCEL_UPDATE_MAX_SIZE), copied
 *          now, so the caller may reuse the memory at once. @target.length
 *          may not be ACCEL_WHOLE_BUFFER for an indirect ref.
 *
 * Needs ACCEL_BUFFER_USAGE_TRANSFER_TARGET.
 */
int accel_command_buffer_update(accel_command_buffer_t *cb, const void *source,
				accel_buffer_ref_t target);

/**
 * accel_command_buffer_copy() - copy @source to @target.
 *
 * The lengths must be equal once resolved (ACCEL_WHOLE_BUFFER is resolved
 * at record time for direct refs and not allowed for indirect ones).
 * Overlapping direct ranges of one buffer are rejected (-EINVAL). Needs
 * TRANSFER_SOURCE on @source and TRANSFER_TARGET on @target.
 */
int accel_command_buffer_copy(accel_command_buffer_t *cb,
			      accel_buffer_ref_t source,
			      accel_buffer_ref_t target);

/**
 * accel_command_buffer_dispatch() - run entry point @ordinal of
 * @executable over @workgroup_count workgroups.
 * @workgroup_count: per dimension 0 .. ACCEL_WORKGROUP_COUNT_MAX; a zero
 *                   count dispatches nothing.
 * @constants:       @constant_count 32-bit values, copied now; the count
 *                   must equal the entry point's.
 * @bindings:        @binding_count refs, as many as the entry point has;
 *                   each needs ACCEL_BUFFER_USAGE_DISPATCH_STORAGE.
 *
 * The executable is retained by the command buffer.
 */
int accel_command_buffer_dispatch(accel_command_buffer_t *cb,
				  accel_executable_t *executable,
				  uint32_t ordinal,
				  const uint32_t workgroup_count[3],
				  const uint32_t *constants,
				  uint32_t constant_count,
				  const accel_buffer_ref_t *bindings,
				  uint32_t binding_count);

/**
 * accel_command_buffer_dispatch_indirect() - like
 * accel_command_buffer_dispatch(), with the workgroup count read, when the
 * command runs, from three uint32_t at @workgroup_count_ref (offset 4-byte
 * aligned, length at least ACCEL_DISPATCH_INDIRECT_PARAMS_SIZE, usage
 * ACCEL_BUFFER_USAGE_DISPATCH_INDIRECT_PARAMS). Commands before the last
 * barrier may have written it. A count above ACCEL_WORKGROUP_COUNT_MAX
 * fails the submission with -ERANGE, naming this command's index.
 */
int accel_command_buffer_dispatch_indirect(accel_command_buffer_t *cb,
					   accel_executable_t *executable,
					   uint32_t ordinal,
					   accel_buffer_ref_t workgroup_count_ref,
					   const uint32_t *constants,
					   uint32_t constant_count,
					   const accel_buffer_ref_t *bindings,
					   uint32_t binding_count);

/**
 * accel_command_buffer_barrier() - everything recorded before completes
 * (and its writes are visible) before anything recorded after starts.
 */
int accel_command_buffer_barrier(accel_command_buffer_t *cb);

#ifdef __cplusplus
}
#endif

#endif /* ACCEL_COMMAND_BUFFER_H */
