// SPDX-License-Identifier: MIT
/*
 * Check suite "command-buffer": the state machine, every record-time
 * validation rule, and the submit-time validation of binding tables. Each
 * rejected call must return its errno, say why, and change nothing (the
 * command count stays; a rejected submission runs nothing and signals
 * nothing).
 */
#include <inttypes.h>

#include "test-accel.h"

static accel_command_buffer_t *cb;
static accel_buffer_t *buf;     /* 256 bytes, every usage */
static accel_executable_t *exe;

static void setup(void)
{
	device_setup();
	ASSERT_OK(accel_command_buffer_create(dev, ACCEL_COMMAND_BUFFER_REUSABLE, 4, &cb));
	ASSERT_OK(accel_command_buffer_begin(cb));
	buf = buffer_new(256);
	exe = kernels();
}

static void teardown(void)
{
	accel_executable_release(exe);
	accel_buffer_release(buf);
	accel_command_buffer_release(cb);
	device_teardown();
}

static const uint32_t pat4 = 0x01020304;

/* The call must fail with -err, say `needle`, and record nothing. */
#define REJECT(call, err, needle) do {                                        \
	uint32_t before_ = accel_command_buffer_command_count(cb);            \
	ASSERT_ERRNO(call, err);                                              \
	ASSERT_MESSAGE_CONTAINS(needle);                                      \
	ck_assert_uint_eq(accel_command_buffer_command_count(cb), before_);   \
} while (0)

/* ---- state machine ----------------------------------------------------- */

START_TEST(test_state_record_before_begin)
{
	accel_command_buffer_t *c;

	ASSERT_OK(accel_command_buffer_create(dev, 0, 0, &c));
	ASSERT_ERRNO(accel_command_buffer_barrier(c), EBADFD);
	ASSERT_MESSAGE_CONTAINS("accel_command_buffer_barrier: the command buffer is not recording; call accel_command_buffer_begin() first");
	ASSERT_ERRNO(accel_command_buffer_end(c), EBADFD);
	ck_assert_uint_eq(accel_command_buffer_command_count(c), 0);
	accel_command_buffer_release(c);
}
END_TEST

START_TEST(test_state_begin_twice)
{
	REJECT(accel_command_buffer_begin(cb), EBADFD, "already recording");
	ASSERT_OK(accel_command_buffer_end(cb));
	REJECT(accel_command_buffer_begin(cb), EBADFD, "recorded already; command buffers are recorded once");
}
END_TEST

START_TEST(test_state_record_after_end)
{
	ASSERT_OK(accel_command_buffer_barrier(cb));
	ASSERT_OK(accel_command_buffer_end(cb));
	REJECT(accel_command_buffer_fill(cb, accel_buffer_ref_direct(buf, 0, 4), &pat4, 4),
	       EBADFD, "accel_command_buffer_fill: the command buffer was ended");
	REJECT(accel_command_buffer_end(cb), EBADFD, "was ended");
	ck_assert_uint_eq(accel_command_buffer_command_count(cb), 1);
}
END_TEST

START_TEST(test_state_submit_before_end)
{
	accel_queue_t *q;

	ASSERT_OK(accel_queue_create(dev, 0, &q));
	ASSERT_ERRNO(accel_queue_execute(q, NULL, NULL, cb, NULL, 0), EBADFD);
	ASSERT_MESSAGE_CONTAINS("the command buffer was not ended");
	accel_queue_release(q);
}
END_TEST

START_TEST(test_state_one_shot_twice)
{
	accel_command_buffer_t *c;
	accel_semaphore_t *s = sem_new(0);
	POINT(sig, s, 1);
	accel_queue_t *q;

	ASSERT_OK(accel_queue_create(dev, 0, &q));
	ASSERT_OK(accel_command_buffer_create(dev, ACCEL_COMMAND_BUFFER_ONE_SHOT, 0, &c));
	ASSERT_OK(accel_command_buffer_begin(c));
	ASSERT_OK(accel_command_buffer_end(c));
	ASSERT_OK(accel_queue_execute(q, NULL, &sig, c, NULL, 0));
	sig_v[0] = 2;
	ASSERT_ERRNO(accel_queue_execute(q, NULL, &sig, c, NULL, 0), EBADFD);
	ASSERT_MESSAGE_CONTAINS("ONE_SHOT and was submitted already");
	ASSERT_OK(accel_semaphore_wait(s, 1, 0, accel_deadline_after(10 * SECOND)));
	ASSERT_ERRNO(accel_semaphore_wait(s, 2, 0, accel_deadline_after(SECOND / 50)), ETIME);
	accel_command_buffer_release(c);
	accel_semaphore_release(s);
	accel_queue_release(q);
}
END_TEST

/*
 * The maxima are accepted, one past them refused: a command buffer of
 * ACCEL_BINDING_CAPACITY_MAX slots using its last, an update of
 * ACCEL_UPDATE_MAX_SIZE bytes (run, its last word checked), and a batch
 * of ACCEL_QUEUE_BATCH_MAX submissions of one command buffer.
 */
START_TEST(test_maxima_accepted)
{
	accel_command_buffer_t *big = NULL, *up = NULL;
	static accel_command_buffer_t *many[ACCEL_QUEUE_BATCH_MAX];
	accel_buffer_t *target = buffer_new(ACCEL_UPDATE_MAX_SIZE + 256);
	accel_semaphore_t *s = sem_new(0);
	accel_queue_t *q = NULL;
	uint8_t *src = malloc(ACCEL_UPDATE_MAX_SIZE + 4);
	const uint32_t *words;
	POINT(one, s, 1);
	POINT(two, s, 2);

	ck_assert_ptr_nonnull(src);
	for (uint64_t i = 0; i < ACCEL_UPDATE_MAX_SIZE + 4; i++)
		src[i] = (uint8_t)(i * 7 + 1);
	ASSERT_OK(accel_command_buffer_create(dev, ACCEL_COMMAND_BUFFER_REUSABLE,
					      ACCEL_BINDING_CAPACITY_MAX, &big));
	ASSERT_OK(accel_command_buffer_begin(big));
	ASSERT_OK(accel_command_buffer_fill(big, accel_buffer_ref_indirect(ACCEL_BINDING_CAPACITY_MAX - 1, 0, 4),
					    &pat4, 4));
	ASSERT_ERRNO(accel_command_buffer_fill(big, accel_buffer_ref_indirect(ACCEL_BINDING_CAPACITY_MAX, 0, 4),
					       &pat4, 4), ERANGE);
	ASSERT_OK(accel_command_buffer_end(big));
	ck_assert_uint_eq(accel_command_buffer_command_count(big), 1);

	ASSERT_OK(accel_command_buffer_create(dev, ACCEL_COMMAND_BUFFER_REUSABLE, 0, &up));
	ASSERT_OK(accel_command_buffer_begin(up));
	ASSERT_ERRNO(accel_command_buffer_update(up, src,
						 accel_buffer_ref_direct(target, 0, ACCEL_UPDATE_MAX_SIZE + 4)),
		     ERANGE);
	ASSERT_MESSAGE_CONTAINS("is above ACCEL_UPDATE_MAX_SIZE");
	ASSERT_OK(accel_command_buffer_update(up, src,
					      accel_buffer_ref_direct(target, 0, ACCEL_UPDATE_MAX_SIZE)));
	ASSERT_OK(accel_command_buffer_end(up));
	ASSERT_OK(accel_queue_create(dev, 0, &q));
	ASSERT_OK(accel_queue_execute(q, NULL, &one, up, NULL, 0));
	ASSERT_OK(accel_semaphore_wait(s, 1, 0, WAIT_LONG));
	words = map(target);
	ck_assert_mem_eq(words + ACCEL_UPDATE_MAX_SIZE / 4 - 1,
			 src + ACCEL_UPDATE_MAX_SIZE - 4, 4);
	accel_buffer_unmap(target);

	/* The batch: 4096 runs of one small fill. */
	accel_command_buffer_t *small = NULL;

	ASSERT_OK(accel_command_buffer_create(dev, ACCEL_COMMAND_BUFFER_REUSABLE, 0, &small));
	ASSERT_OK(accel_command_buffer_begin(small));
	ASSERT_OK(accel_command_buffer_fill(small, accel_buffer_ref_direct(buf, 0, 4), &pat4, 4));
	ASSERT_OK(accel_command_buffer_end(small));
	for (uint32_t i = 0; i < ACCEL_QUEUE_BATCH_MAX; i++)
		many[i] = small;
	ASSERT_OK(accel_queue_execute_batch(q, NULL, &two, ACCEL_QUEUE_BATCH_MAX,
					    many, NULL, 0));
	ASSERT_OK(accel_semaphore_wait(s, 2, 0, WAIT_LONG));
	accel_queue_release(q);
	accel_command_buffer_release(small);
	accel_command_buffer_release(big);
	accel_command_buffer_release(up);
	accel_buffer_release(target);
	accel_semaphore_release(s);
	free(src);
}
END_TEST

START_TEST(test_create_errors)
{
	accel_command_buffer_t *c = TEST_NOT_NULL;

	ASSERT_ERRNO(accel_command_buffer_create(dev, 0x10, 0, &c), EINVAL);
	ASSERT_MESSAGE_CONTAINS("mode 0x10 has unknown bits");
	ck_assert_ptr_null(c);
	ASSERT_ERRNO(accel_command_buffer_create(dev, 0, ACCEL_BINDING_CAPACITY_MAX + 1, &c), ERANGE);
	ASSERT_MESSAGE_CONTAINS("binding_capacity 1048577 is above ACCEL_BINDING_CAPACITY_MAX");
	ASSERT_ERRNO(accel_command_buffer_create(NULL, 0, 0, &c), EINVAL);
	ASSERT_ERRNO(accel_command_buffer_create(dev, 0, 0, NULL), EINVAL);
	ASSERT_ERRNO(accel_command_buffer_begin(NULL), EINVAL);
	ASSERT_ERRNO(accel_command_buffer_fill(NULL, accel_buffer_ref_direct(buf, 0, 4), &pat4, 4), EINVAL);
}
END_TEST

/* ---- ranges, overflow, alignment, usage ---------------------------------- */

START_TEST(test_fill_range)
{
	REJECT(accel_command_buffer_fill(cb, accel_buffer_ref_direct(buf, 252, 8), &pat4, 4),
	       ERANGE, "command 0: target: offset 252 + length 8 is outside the buffer (256 bytes)");
	REJECT(accel_command_buffer_fill(cb, accel_buffer_ref_direct(buf, 260, ACCEL_WHOLE_BUFFER), &pat4, 4),
	       ERANGE, "offset 260 is beyond the end of the buffer (256 bytes)");
	REJECT(accel_command_buffer_fill(cb, accel_buffer_ref_direct(buf, 8, UINT64_MAX - 4), &pat4, 4),
	       ERANGE, "is outside the buffer");
	REJECT(accel_command_buffer_fill(cb, accel_buffer_ref_indirect(0, 8, UINT64_MAX - 4), &pat4, 1),
	       ERANGE, "overflows");
	ASSERT_OK(accel_command_buffer_fill(cb, accel_buffer_ref_direct(buf, 252, 4), &pat4, 4));
	ASSERT_OK(accel_command_buffer_fill(cb, accel_buffer_ref_direct(buf, 256, 0), &pat4, 4));
}
END_TEST

START_TEST(test_fill_alignment)
{
	REJECT(accel_command_buffer_fill(cb, accel_buffer_ref_direct(buf, 2, 8), &pat4, 4),
	       EINVAL, "offset 2 and length 8 must be multiples of 4");
	REJECT(accel_command_buffer_fill(cb, accel_buffer_ref_direct(buf, 4, 6), &pat4, 4),
	       EINVAL, "must be multiples of 4");
	REJECT(accel_command_buffer_fill(cb, accel_buffer_ref_indirect(0, 1, 2), &pat4, 2),
	       EINVAL, "offset 1 and length 2 must be multiples of 2");
	REJECT(accel_command_buffer_fill(cb, accel_buffer_ref_direct(buf, 0, 4), &pat4, 3),
	       EINVAL, "pattern_length is 3; it must be 1, 2 or 4");
	REJECT(accel_command_buffer_fill(cb, accel_buffer_ref_direct(buf, 0, 4), NULL, 4),
	       EINVAL, "pattern is NULL");
	ASSERT_OK(accel_command_buffer_fill(cb, accel_buffer_ref_direct(buf, 3, 5), &pat4, 1));
}
END_TEST

START_TEST(test_subspan_alignment_is_absolute)
{
	accel_buffer_t *sub;

	ASSERT_OK(accel_buffer_subspan(buf, 2, 64, &sub));
	REJECT(accel_command_buffer_fill(cb, accel_buffer_ref_direct(sub, 0, 4), &pat4, 4),
	       EINVAL, "offset 2 and length 4 must be multiples of 4");
	ASSERT_OK(accel_command_buffer_fill(cb, accel_buffer_ref_direct(sub, 2, 4), &pat4, 4));
	accel_buffer_release(sub);
}
END_TEST

START_TEST(test_usage_bits)
{
	accel_buffer_t *src_only = buffer_usage(64, ACCEL_BUFFER_USAGE_TRANSFER_SOURCE);
	accel_buffer_t *dst_only = buffer_usage(64, ACCEL_BUFFER_USAGE_TRANSFER_TARGET);
	accel_buffer_ref_t b[1] = { accel_buffer_ref_direct(dst_only, 0, 64) };
	uint32_t wg[3] = { 1, 1, 1 }, c = 0;

	REJECT(accel_command_buffer_fill(cb, accel_buffer_ref_direct(src_only, 0, 4), &pat4, 4),
	       EINVAL, "target: the buffer lacks ACCEL_BUFFER_USAGE_TRANSFER_TARGET");
	REJECT(accel_command_buffer_copy(cb, accel_buffer_ref_direct(dst_only, 0, 4),
					 accel_buffer_ref_direct(src_only, 0, 4)),
	       EINVAL, "source: the buffer lacks ACCEL_BUFFER_USAGE_TRANSFER_SOURCE");
	REJECT(accel_command_buffer_dispatch(cb, exe, entry(exe, "fill_u32"), wg, &c, 1, b, 1),
	       EINVAL, "bindings[0]: the buffer lacks ACCEL_BUFFER_USAGE_DISPATCH_STORAGE");
	REJECT(accel_command_buffer_dispatch_indirect(cb, exe, entry(exe, "increment"),
			accel_buffer_ref_direct(dst_only, 0, 12), NULL, 0,
			(accel_buffer_ref_t[]){ accel_buffer_ref_direct(buf, 0, 4) }, 1),
	       EINVAL, "workgroup_count_ref: the buffer lacks ACCEL_BUFFER_USAGE_DISPATCH_INDIRECT_PARAMS");
	ASSERT_OK(accel_command_buffer_copy(cb, accel_buffer_ref_direct(src_only, 0, 4),
					    accel_buffer_ref_direct(dst_only, 0, 4)));
	accel_buffer_release(src_only);
	accel_buffer_release(dst_only);
}
END_TEST

START_TEST(test_copy_rules)
{
	REJECT(accel_command_buffer_copy(cb, accel_buffer_ref_direct(buf, 0, 8),
					 accel_buffer_ref_direct(buf, 64, 16)),
	       EINVAL, "source length 8 differs from target length 16");
	REJECT(accel_command_buffer_copy(cb, accel_buffer_ref_direct(buf, 0, 16),
					 accel_buffer_ref_direct(buf, 8, 16)),
	       EINVAL, "the source and target ranges overlap");
	REJECT(accel_command_buffer_copy(cb, accel_buffer_ref_indirect(0, 0, ACCEL_WHOLE_BUFFER),
					 accel_buffer_ref_direct(buf, 8, 16)),
	       EINVAL, "source: an indirect ref needs an explicit length here");
	ASSERT_OK(accel_command_buffer_copy(cb, accel_buffer_ref_direct(buf, 0, 16),
					    accel_buffer_ref_direct(buf, 16, 16)));
	ASSERT_OK(accel_command_buffer_copy(cb, accel_buffer_ref_indirect(1, 0, 16),
					    accel_buffer_ref_direct(buf, 16, 16)));
}
END_TEST

START_TEST(test_update_rules)
{
	uint8_t data[16] = { 0 };

	REJECT(accel_command_buffer_update(cb, NULL, accel_buffer_ref_direct(buf, 0, 16)),
	       EINVAL, "source is NULL");
	REJECT(accel_command_buffer_update(cb, data, accel_buffer_ref_indirect(0, 0, ACCEL_WHOLE_BUFFER)),
	       EINVAL, "an indirect ref needs an explicit length");
	REJECT(accel_command_buffer_update(cb, data, accel_buffer_ref_direct(buf, 250, 16)),
	       ERANGE, "offset 250 + length 16 is outside the buffer");
	ASSERT_OK(accel_command_buffer_update(cb, data, accel_buffer_ref_direct(buf, 1, 15)));
}
END_TEST

START_TEST(test_slot_capacity)
{
	REJECT(accel_command_buffer_fill(cb, accel_buffer_ref_indirect(4, 0, 4), &pat4, 4),
	       ERANGE, "target: slot 4 is not below the command buffer's binding capacity 4");
	ASSERT_OK(accel_command_buffer_fill(cb, accel_buffer_ref_indirect(3, 0, 4), &pat4, 4));
}
END_TEST

START_TEST(test_dispatch_rules)
{
	accel_buffer_ref_t b[2] = { accel_buffer_ref_direct(buf, 0, 64),
				    accel_buffer_ref_direct(buf, 64, 64) };
	uint32_t wg[3] = { 1, 1, 1 }, big[3] = { 1, ACCEL_WORKGROUP_COUNT_MAX + 1, 1 };
	uint32_t c[2] = { 0, 0 }, fill = entry(exe, "fill_u32");

	REJECT(accel_command_buffer_dispatch(cb, exe, fill, wg, c, 1, b, 2),
	       EINVAL, "entry point 'fill_u32' takes 1 bindings, but 2 were given");
	REJECT(accel_command_buffer_dispatch(cb, exe, fill, wg, c, 2, b, 1),
	       EINVAL, "entry point 'fill_u32' takes 1 constants, but 2 were given");
	REJECT(accel_command_buffer_dispatch(cb, exe, fill, wg, NULL, 1, b, 1),
	       EINVAL, "constants is NULL");
	REJECT(accel_command_buffer_dispatch(cb, exe, fill, wg, c, 1, NULL, 1),
	       EINVAL, "bindings is NULL");
	REJECT(accel_command_buffer_dispatch(cb, exe, 6, wg, c, 1, b, 1),
	       ERANGE, "ordinal 6 is not below the executable's 6 entry points");
	REJECT(accel_command_buffer_dispatch(cb, NULL, 0, wg, c, 1, b, 1),
	       EINVAL, "executable is NULL");
	REJECT(accel_command_buffer_dispatch(cb, exe, fill, NULL, c, 1, b, 1),
	       EINVAL, "workgroup_count is NULL");
	REJECT(accel_command_buffer_dispatch(cb, exe, fill, big, c, 1, b, 1),
	       ERANGE, "workgroup_count[1] is 65536, above ACCEL_WORKGROUP_COUNT_MAX");
	REJECT(accel_command_buffer_dispatch(cb, exe, fill, wg, c, 1, b, ACCEL_DISPATCH_MAX_BINDINGS + 1),
	       EINVAL, "the most a dispatch takes is 256 and 1024");
	b[0].slot = 9;
	b[0].buffer = NULL;
	REJECT(accel_command_buffer_dispatch(cb, exe, fill, wg, c, 1, b, 1),
	       ERANGE, "bindings[0]: slot 9 is not below");
	b[0] = accel_buffer_ref_direct(buf, 0, 64);
	ASSERT_OK(accel_command_buffer_dispatch(cb, exe, fill, wg, c, 1, b, 1));
}
END_TEST

START_TEST(test_dispatch_indirect_rules)
{
	accel_buffer_ref_t b[1] = { accel_buffer_ref_direct(buf, 0, 4) };
	uint32_t inc = entry(exe, "increment");

	REJECT(accel_command_buffer_dispatch_indirect(cb, exe, inc, accel_buffer_ref_direct(buf, 2, 12), NULL, 0, b, 1),
	       EINVAL, "workgroup_count_ref: offset 2 and length 12 must be multiples of 4");
	REJECT(accel_command_buffer_dispatch_indirect(cb, exe, inc, accel_buffer_ref_direct(buf, 0, 8), NULL, 0, b, 1),
	       ERANGE, "workgroup_count_ref: length 8 is shorter than the 12 bytes it needs");
	REJECT(accel_command_buffer_dispatch_indirect(cb, exe, inc, accel_buffer_ref_direct(buf, 248, ACCEL_WHOLE_BUFFER), NULL, 0, b, 1),
	       ERANGE, "length 8 is shorter than the 12 bytes");
	REJECT(accel_command_buffer_dispatch_indirect(cb, exe, inc, accel_buffer_ref_indirect(0, 0, 8), NULL, 0, b, 1),
	       ERANGE, "length 8 is shorter than the 12 bytes");
	ASSERT_OK(accel_command_buffer_dispatch_indirect(cb, exe, inc, accel_buffer_ref_direct(buf, 16, 12), NULL, 0, b, 1));
}
END_TEST

/*
 * Offsets near 2^64: every offset + length sum of a ref is checked without
 * wrapping. A whole-buffer indirect count at 2^64-12 once passed as
 * needing "byte 0" of its slot, and the replay read before the buffer.
 */
static const uint64_t edges[] = {
	UINT64_C(1) << 31, UINT64_C(1) << 32, UINT64_C(1) << 63,
	UINT64_MAX - 15, UINT64_MAX - 11, UINT64_MAX - 7, UINT64_MAX - 3,
	UINT64_MAX - 1, UINT64_MAX,
};

/* True when @off + @need wraps past 2^64. */
static bool wraps(uint64_t off, uint64_t need)
{
	return off > UINT64_MAX - need;
}

START_TEST(test_offset_wrap_record)
{
	accel_buffer_ref_t b[1] = { accel_buffer_ref_direct(buf, 0, 4) };
	uint32_t inc = entry(exe, "increment");
	uint8_t data[4] = { 0 };

	for (size_t i = 0; i < sizeof(edges) / sizeof(edges[0]); i++) {
		uint64_t off = edges[i];
		accel_buffer_ref_t count = accel_buffer_ref_indirect(0, off, ACCEL_WHOLE_BUFFER);
		uint32_t before = accel_command_buffer_command_count(cb);
		int ret;

		/* direct: never beyond the buffer */
		REJECT(accel_command_buffer_fill(cb, accel_buffer_ref_direct(buf, off, ACCEL_WHOLE_BUFFER), &pat4, 1),
		       ERANGE, "is beyond the end of the buffer");
		if (off != ACCEL_WHOLE_BUFFER)
			REJECT(accel_command_buffer_fill(cb, accel_buffer_ref_direct(buf, 4, off), &pat4, 1),
			       ERANGE, "is outside the buffer");
		REJECT(accel_command_buffer_dispatch_indirect(cb, exe, inc, accel_buffer_ref_direct(buf, off & ~(uint64_t)3, 12), NULL, 0, b, 1),
		       ERANGE, "is beyond the end of the buffer");
		/* indirect, explicit length: offset + length must not wrap */
		REJECT(accel_command_buffer_update(cb, data, accel_buffer_ref_indirect(0, off, UINT64_MAX - off + 4)),
		       ERANGE, "overflows");
		REJECT(accel_command_buffer_copy(cb, accel_buffer_ref_indirect(0, off, UINT64_MAX - off + 1),
						 accel_buffer_ref_indirect(1, 0, UINT64_MAX - off + 1)),
		       ERANGE, "overflows");
		/* indirect, whole range: offset + the 12 bytes a count needs */
		if (off % 4)
			continue;
		ret = accel_command_buffer_dispatch_indirect(cb, exe, inc, count, NULL, 0, b, 1);
		if (!wraps(off, ACCEL_DISPATCH_INDIRECT_PARAMS_SIZE)) {
			ck_assert_msg(ret == 0, "offset %" PRIu64 ": %s", off, accel_error_message());
			continue;
		}
		ck_assert_msg(ret == -ERANGE,
			      "dispatch_indirect with a whole-buffer count at slot offset %" PRIu64 " returned %d (%s), expected -ERANGE",
			      off, ret, test_errname(ret));
		ASSERT_MESSAGE_CONTAINS("workgroup_count_ref: offset");
		ASSERT_MESSAGE_CONTAINS("+ the 12 bytes it needs overflows");
		ck_assert_uint_eq(accel_command_buffer_command_count(cb), before);
	}
}
END_TEST

START_TEST(test_other_device)
{
	accel_device_t *other;
	accel_buffer_t *ob;
	accel_buffer_params_t p = { HOST_TYPE, ALL_USAGE };
	accel_executable_t *oe;
	uint32_t wg[3] = { 1, 1, 1 }, c = 0;
	accel_buffer_ref_t b[1] = { accel_buffer_ref_direct(buf, 0, 64) };

	char want[128];

	ASSERT_OK(accel_device_open(test_device_uri(), sched, &other));
	ASSERT_OK(accel_allocator_allocate_buffer(accel_device_allocator(other), &p, 64, &ob));
	ASSERT_OK(accel_executable_load(other, getenv("ACCEL_TEST_KERNELS"), &oe));
	snprintf(want, sizeof(want), "target: the buffer belongs to device %s, but the command buffer to %s",
		 accel_device_uri(dev), accel_device_uri(dev));
	REJECT(accel_command_buffer_fill(cb, accel_buffer_ref_direct(ob, 0, 4), &pat4, 4),
	       EXDEV, want);
	REJECT(accel_command_buffer_dispatch(cb, oe, 0, wg, &c, 1, b, 1),
	       EXDEV, "the executable was loaded for device");
	accel_executable_release(oe);
	accel_buffer_release(ob);
	accel_device_release(other);
}
END_TEST

/* ---- submit-time validation of the binding table ------------------------ */

struct submit_fixture {
	accel_queue_t *q;
	accel_semaphore_t *s;
};

/* Records: fill slot 1 [8, 8+16) with a 4-byte pattern; copy slot 3 -> buf. */
static void record_slots(void)
{
	ASSERT_OK(accel_command_buffer_fill(cb, accel_buffer_ref_indirect(1, 8, 16), &pat4, 4));
	ASSERT_OK(accel_command_buffer_copy(cb, accel_buffer_ref_indirect(3, 4, 32),
					    accel_buffer_ref_direct(buf, 0, 32)));
	ASSERT_OK(accel_command_buffer_end(cb));
}

/* Records a whole-range dispatch binding of slot 1 at @offset. */
static void record_slots_at(uint64_t offset)
{
	uint32_t wg[3] = { 1, 1, 1 }, c = 0;
	accel_buffer_ref_t b[1] = { accel_buffer_ref_indirect(1, offset, ACCEL_WHOLE_BUFFER) };

	ASSERT_OK(accel_command_buffer_dispatch(cb, exe, entry(exe, "fill_u32"), wg, &c, 1, b, 1));
	ASSERT_OK(accel_command_buffer_end(cb));
}

/* The submission must fail with -err and `needle`, running nothing. */
static void reject_table(const accel_binding_table_t *t, int err, const char *needle)
{
	accel_semaphore_t *s = sem_new(0);
	POINT(sig, s, 1);
	accel_queue_t *q;

	ASSERT_OK(accel_queue_create(dev, 0, &q));
	ASSERT_ERRNO(accel_queue_execute(q, NULL, &sig, cb, t, 0), err);
	ASSERT_MESSAGE_CONTAINS(needle);
	/* Nothing was promised or run. */
	ASSERT_ERRNO(accel_semaphore_wait(s, 1, ACCEL_SEMAPHORE_WAIT_SUBMITTED, 0), ETIME);
	accel_semaphore_release(s);
	accel_queue_release(q);
}

START_TEST(test_table_too_small)
{
	accel_binding_t b[3] = { { NULL, 0, 0 }, { buf, 0, ACCEL_WHOLE_BUFFER }, { NULL, 0, 0 } };
	accel_binding_table_t t = { 3, b };

	record_slots();
	reject_table(&t, ERANGE, "the binding table has 3 entries, but the command buffer uses slots up to 3; pass a table of at least 4 entries");
	reject_table(NULL, ERANGE, "the binding table has 0 entries");
}
END_TEST

START_TEST(test_table_null_buffer)
{
	accel_binding_t b[4] = { { NULL, 0, 0 }, { buf, 0, ACCEL_WHOLE_BUFFER },
				 { NULL, 0, 0 }, { NULL, 0, 64 } };
	accel_binding_table_t t = { 4, b };

	record_slots();
	reject_table(&t, EINVAL, "binding table slot 3 has a NULL buffer, but command 1 of the command buffer uses that slot");
}
END_TEST

START_TEST(test_table_usage)
{
	accel_buffer_t *no_src = buffer_usage(64, ACCEL_BUFFER_USAGE_TRANSFER_TARGET);
	accel_binding_t b[4] = { { NULL, 0, 0 }, { buf, 0, ACCEL_WHOLE_BUFFER },
				 { NULL, 0, 0 }, { no_src, 0, 64 } };
	accel_binding_table_t t = { 4, b };

	record_slots();
	reject_table(&t, EINVAL, "slot 3: the buffer lacks ACCEL_BUFFER_USAGE_TRANSFER_SOURCE, which command 1");
	accel_buffer_release(no_src);
}
END_TEST

START_TEST(test_table_short_range)
{
	accel_binding_t b[4] = { { NULL, 0, 0 }, { buf, 0, ACCEL_WHOLE_BUFFER },
				 { NULL, 0, 0 }, { buf, 64, 35 } };
	accel_binding_table_t t = { 4, b };

	record_slots();
	reject_table(&t, ERANGE, "slot 3: its range is 35 bytes, but the command buffer uses up to byte 36 of it");
	b[3].offset = 250;
	b[3].length = 8;
	reject_table(&t, ERANGE, "slot 3: offset 250 + length 8 is outside its buffer of 256 bytes");
}
END_TEST

START_TEST(test_table_alignment)
{
	accel_binding_t b[4] = { { NULL, 0, 0 }, { buf, 2, 64 },
				 { NULL, 0, 0 }, { buf, 64, 64 } };
	accel_binding_table_t t = { 4, b };

	record_slots();
	reject_table(&t, EINVAL, "slot 1: offset 2 is not a multiple of 4");
}
END_TEST

START_TEST(test_table_other_device)
{
	accel_device_t *other;
	accel_buffer_t *ob;
	accel_buffer_params_t p = { HOST_TYPE, ALL_USAGE };
	accel_binding_t b[4] = { { NULL, 0, 0 }, { buf, 0, 64 }, { NULL, 0, 0 }, { NULL, 0, 64 } };
	accel_binding_table_t t = { 4, b };

	char want[128];

	ASSERT_OK(accel_device_open(test_device_uri(), sched, &other));
	ASSERT_OK(accel_allocator_allocate_buffer(accel_device_allocator(other), &p, 64, &ob));
	b[3].buffer = ob;
	record_slots();
	snprintf(want, sizeof(want), "slot 3 holds a buffer of device %s", accel_device_uri(dev));
	reject_table(&t, EXDEV, want);
	accel_buffer_release(ob);
	accel_device_release(other);
}
END_TEST

START_TEST(test_table_whole_fill_length)
{
	accel_buffer_t *odd = buffer_new(30);
	accel_binding_t b[1] = { { odd, 0, ACCEL_WHOLE_BUFFER } };
	accel_binding_table_t t = { 1, b };

	ASSERT_OK(accel_command_buffer_fill(cb, accel_buffer_ref_indirect(0, 0, ACCEL_WHOLE_BUFFER), &pat4, 4));
	ASSERT_OK(accel_command_buffer_end(cb));
	reject_table(&t, EINVAL, "slot 0: length 30 is not a multiple of 4, as a whole-buffer fill");
	accel_buffer_release(odd);
}
END_TEST

/* Refs near 2^64 that could be recorded are refused by any real table. */
START_TEST(test_table_offset_wrap)
{
	accel_binding_t b[1] = { { buf, 0, ACCEL_WHOLE_BUFFER } };
	accel_binding_table_t t = { 1, b };
	uint32_t inc = entry(exe, "increment");

	ASSERT_OK(accel_command_buffer_dispatch_indirect(cb, exe, inc,
			accel_buffer_ref_indirect(0, UINT64_MAX - 15, ACCEL_WHOLE_BUFFER), NULL, 0,
			(accel_buffer_ref_t[]){ accel_buffer_ref_direct(buf, 0, 4) }, 1));
	ASSERT_OK(accel_command_buffer_end(cb));
	reject_table(&t, ERANGE, "slot 0: its range is 256 bytes, but the command buffer uses up to byte 18446744073709551612 of it");
}
END_TEST

START_TEST(test_table_binding_wrap)
{
	accel_binding_t b[2] = { { buf, 0, 64 }, { buf, 0, 64 } };
	accel_binding_table_t t = { 2, b };

	/* the highest offset every device's binding alignment (<= 4) allows */
	record_slots_at(UINT64_MAX - 3);
	for (size_t i = 0; i < sizeof(edges) / sizeof(edges[0]); i++) {
		b[1].offset = edges[i];
		b[1].length = ACCEL_WHOLE_BUFFER;
		reject_table(&t, ERANGE, "slot 1: offset");
		if (edges[i] == ACCEL_WHOLE_BUFFER)
			continue;
		b[1].offset = 8;
		b[1].length = edges[i];
		reject_table(&t, ERANGE, "is outside its buffer of 256 bytes");
	}
	b[1] = (accel_binding_t){ buf, 0, ACCEL_WHOLE_BUFFER };
	reject_table(&t, ERANGE, "slot 1: its range is 256 bytes, but the command buffer uses up to byte 18446744073709551612 of it");
}
END_TEST

START_TEST(test_map_offset_wrap)
{
	void *p = TEST_NOT_NULL;

	for (size_t i = 0; i < sizeof(edges) / sizeof(edges[0]); i++) {
		ASSERT_ERRNO(accel_buffer_map(buf, ACCEL_MAP_READ, edges[i], 8, &p), ERANGE);
		ASSERT_MESSAGE_CONTAINS("is outside the buffer (256 bytes)");
		ck_assert_ptr_null(p);
		ASSERT_ERRNO(accel_buffer_map(buf, ACCEL_MAP_READ, edges[i], ACCEL_WHOLE_BUFFER, &p), ERANGE);
		ASSERT_ERRNO(accel_buffer_subspan(buf, edges[i], 8, (accel_buffer_t **)&p), ERANGE);
		if (edges[i] == ACCEL_WHOLE_BUFFER)
			continue;
		ASSERT_ERRNO(accel_buffer_map(buf, ACCEL_MAP_READ, 8, edges[i], &p), ERANGE);
		ASSERT_ERRNO(accel_buffer_subspan(buf, 8, edges[i], (accel_buffer_t **)&p), ERANGE);
	}
}
END_TEST

START_TEST(test_table_unused_slots_ignored)
{
	accel_semaphore_t *s = sem_new(0);
	POINT(sig, s, 1);
	accel_binding_t b[5] = { { NULL, 0, 0 }, { buf, 0, ACCEL_WHOLE_BUFFER },
				 { NULL, 99, 99 }, { buf, 64, 64 }, { NULL, 0, 0 } };
	accel_binding_table_t t = { 5, b };
	accel_queue_t *q;

	record_slots();
	ASSERT_OK(accel_queue_create(dev, 0, &q));
	ASSERT_OK(accel_queue_execute(q, NULL, &sig, cb, &t, 0));
	ASSERT_OK(accel_semaphore_wait(s, 1, 0, accel_deadline_after(10 * SECOND)));
	accel_semaphore_release(s);
	accel_queue_release(q);
}
END_TEST

static Suite *cb_suite(void)
{
	Suite *suite = suite_create("command-buffer");
	TCase *tc = tcase_create("state");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_state_record_before_begin);
	tcase_add_test(tc, test_state_begin_twice);
	tcase_add_test(tc, test_state_record_after_end);
	tcase_add_test(tc, test_state_submit_before_end);
	tcase_add_test(tc, test_state_one_shot_twice);
	tcase_add_test(tc, test_create_errors);
	tcase_add_test(tc, test_maxima_accepted);
	suite_add_tcase(suite, tc);

	tc = tcase_create("record");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_fill_range);
	tcase_add_test(tc, test_fill_alignment);
	tcase_add_test(tc, test_subspan_alignment_is_absolute);
	tcase_add_test(tc, test_usage_bits);
	tcase_add_test(tc, test_copy_rules);
	tcase_add_test(tc, test_update_rules);
	tcase_add_test(tc, test_slot_capacity);
	tcase_add_test(tc, test_dispatch_rules);
	tcase_add_test(tc, test_dispatch_indirect_rules);
	tcase_add_test(tc, test_offset_wrap_record);
	tcase_add_test(tc, test_map_offset_wrap);
	tcase_add_test(tc, test_other_device);
	suite_add_tcase(suite, tc);

	tc = tcase_create("submit");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_table_too_small);
	tcase_add_test(tc, test_table_null_buffer);
	tcase_add_test(tc, test_table_usage);
	tcase_add_test(tc, test_table_short_range);
	tcase_add_test(tc, test_table_alignment);
	tcase_add_test(tc, test_table_other_device);
	tcase_add_test(tc, test_table_whole_fill_length);
	tcase_add_test(tc, test_table_offset_wrap);
	tcase_add_test(tc, test_table_binding_wrap);
	tcase_add_test(tc, test_table_unused_slots_ignored);
	suite_add_tcase(suite, tc);
	return suite;
}

int main(void)
{
	test_require_device();
	return test_run_suite(cb_suite());
}
