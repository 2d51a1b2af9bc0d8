// SPDX-License-Identifier: MIT
/*
 * Check suite "alloca": queue-ordered memory (accel_queue_alloca() and
 * accel_queue_dealloca()) on the test device (cpu:// or ACCEL_TEST_DEVICE,
 * see test-accel.h), with a transient pool of POOL bytes.
 *
 * Chains of alloca -> work -> dealloca whose memory is reused while the
 * work before is in flight, with the pool's peak bounded by its capacity
 * and every result intact; a dealloca's waits ordering the next alloca of
 * its memory; a buffer returned by dealloca refused wherever it could be
 * used; the errors of both calls; three threads on three queues of one
 * device. The embedded scheduler only: the kernel scheduler's job path is
 * the barrier's, tested by the queue suite in the VM.
 */
#include <inttypes.h>
#include <pthread.h>

#include "test-accel.h"

#define POOL (UINT64_C(1) << 20)
#define DEVICE_TYPE ACCEL_MEMORY_TYPE_DEVICE_LOCAL

static accel_queue_t *queue;

static void setup(void)
{
	device_setup();
	setenv("ACCEL_TRANSIENT_POOL_BYTES", "1M", 1);
	ASSERT_OK(accel_queue_create(dev, 0, &queue));
}

static void teardown(void)
{
	accel_queue_release(queue);
	device_teardown();
}

static accel_buffer_t *alloca_on(accel_queue_t *q,
				 const accel_semaphore_list_t *waits,
				 const accel_semaphore_list_t *signals,
				 uint32_t memory_type, uint64_t size)
{
	accel_buffer_params_t p = { memory_type, ALL_USAGE };
	accel_buffer_t *b = TEST_NOT_NULL;

	ASSERT_OK(accel_queue_alloca(q, waits, signals, &p, size, 0, &b));
	ck_assert_ptr_nonnull(b);
	ck_assert_uint_eq(accel_buffer_size(b), size);
	return b;
}

static accel_buffer_t *alloca_now(uint64_t size)
{
	return alloca_on(queue, NULL, NULL, HOST_TYPE, size);
}

static accel_transient_pool_stats_t stats(void)
{
	accel_transient_pool_stats_t st;

	ASSERT_OK(accel_device_transient_pool_stats(dev, &st));
	return st;
}

static void check_bounded(void)
{
	accel_transient_pool_stats_t st = stats();

	ck_assert_uint_eq(st.capacity, POOL);
	ck_assert_msg(st.committed_peak <= st.capacity,
		      "committed_peak %" PRIu64 " > capacity %" PRIu64,
		      st.committed_peak, st.capacity);
	ck_assert_msg(st.reserved_peak <= st.committed_peak,
		      "reserved_peak %" PRIu64 " > committed_peak %" PRIu64,
		      st.reserved_peak, st.committed_peak);
}

/* A ONE_SHOT command buffer: fill @b with @v, then copy 4 bytes to @out. */
static accel_command_buffer_t *fill_and_copy(accel_buffer_t *b, uint32_t v,
					     accel_buffer_t *out, uint64_t at)
{
	accel_command_buffer_t *cb = cb_new(ACCEL_COMMAND_BUFFER_ONE_SHOT, 0);
	uint64_t last = (accel_buffer_size(b) - 4) & ~UINT64_C(3);

	ASSERT_OK(accel_command_buffer_fill(cb, accel_buffer_ref_direct(b, 0, ACCEL_WHOLE_BUFFER), &v, 4));
	ASSERT_OK(accel_command_buffer_barrier(cb));
	ASSERT_OK(accel_command_buffer_copy(cb, accel_buffer_ref_direct(b, last, 4),
					    accel_buffer_ref_direct(out, at, 4)));
	ASSERT_OK(accel_command_buffer_end(cb));
	return cb;
}

/* ---- use ------------------------------------------------------------------ */

/* The memory is the buffer's: filled by the device, read by the host. */
START_TEST(test_alloca_fill_map)
{
	accel_semaphore_t *a = sem_new(0), *w = sem_new(0);
	POINT(got, a, 1);
	POINT(done, w, 1);
	accel_buffer_t *b = alloca_on(queue, NULL, &got, HOST_TYPE, 4096);
	accel_command_buffer_t *cb = cb_new(ACCEL_COMMAND_BUFFER_ONE_SHOT, 0);
	uint32_t v = 0xabcd1234, *p;
	accel_transient_pool_stats_t st;

	ASSERT_OK(accel_command_buffer_fill(cb, accel_buffer_ref_direct(b, 0, 4096), &v, 4));
	ASSERT_OK(accel_command_buffer_end(cb));
	ASSERT_OK(accel_queue_execute(queue, &got, &done, cb, NULL, 0));
	ASSERT_OK(accel_semaphore_wait(w, 1, 0, WAIT_LONG));
	ck_assert_uint_eq(sem_value(a, NULL), 1);
	p = map(b);
	for (int i = 0; i < 1024; i++)
		ck_assert_uint_eq(p[i], v);
	st = stats();
	ck_assert_uint_eq(st.reserved, 4096);
	ck_assert_uint_le(st.committed, POOL);
	ASSERT_OK(accel_queue_dealloca(queue, &done, NULL, b, 0));
	ck_assert_uint_eq(stats().reserved, 0); /* its waits were reached */
	accel_command_buffer_release(cb);
	accel_buffer_release(b);
	accel_semaphore_release(a);
	accel_semaphore_release(w);
}
END_TEST

/*
 * 1000 allocas of 1 KiB .. 384 KiB, each filled and read back by the
 * device, deallocated after that work without the host waiting: 130 MiB
 * in all through a 1 MiB pool. Each alloca reuses memory whose work may
 * still run (it waits for it); every result is intact and the pool never
 * holds more than its capacity.
 */
START_TEST(test_chain_bounded)
{
	enum { N = 1000 };
	accel_semaphore_t **got = calloc(N, sizeof(*got)), **done = calloc(N, sizeof(*done));
	accel_command_buffer_t **cbs = calloc(N, sizeof(*cbs));
	accel_buffer_t *out = buffer_new(N * 4);
	uint32_t *res = map(out), seed = 12345;
	uint64_t total = 0;

	memset(res, 0, N * 4);
	for (uint32_t i = 0; i < N; i++) {
		uint64_t size;
		accel_buffer_t *b;

		seed = seed * 1103515245 + 12345;
		size = (1024 + (seed >> 8) % (384 * 1024)) & ~UINT64_C(3);
		total += size;
		got[i] = sem_new(0);
		done[i] = sem_new(0);
		{
			POINT(g, got[i], 1);
			POINT(d, done[i], 1);

			b = alloca_on(queue, NULL, &g, DEVICE_TYPE | HOST_TYPE, size);
			cbs[i] = fill_and_copy(b, 0x1000 + i, out, i * 4);
			ASSERT_OK(accel_queue_execute(queue, &g, &d, cbs[i], NULL, 0));
			ASSERT_OK(accel_queue_dealloca(queue, &d, NULL, b, 0));
		}
		accel_buffer_release(b);
	}
	ck_assert_uint_gt(total, 100 * POOL);
	for (uint32_t i = 0; i < N; i++) {
		ASSERT_OK(accel_semaphore_wait(done[i], 1, 0, WAIT_LONG));
		accel_semaphore_release(got[i]);
		accel_semaphore_release(done[i]);
		accel_command_buffer_release(cbs[i]);
	}
	for (uint32_t i = 0; i < N; i++)
		ck_assert_msg(res[i] == 0x1000 + i, "result %u is 0x%x, expected 0x%x",
			      i, res[i], 0x1000 + i);
	check_bounded();
	free(got);
	free(done);
	free(cbs);
	accel_buffer_release(out);
}
END_TEST

/*
 * A dealloca whose waits are not reached yet: the next alloca of that
 * memory gets it at once, but signals only after them; a dealloca's own
 * signals follow its waits.
 */
START_TEST(test_reuse_waits_for_dealloca)
{
	accel_semaphore_t *h = sem_new(0), *t = sem_new(0), *u = sem_new(0);
	POINT(gate, h, 1);
	POINT(freed, u, 1);
	POINT(sig, t, 1);
	accel_buffer_t *a = alloca_now(POOL), *b;

	ASSERT_OK(accel_queue_dealloca(queue, &gate, &freed, a, 0));
	ck_assert_uint_eq(stats().reserved, POOL); /* pending */
	b = alloca_on(queue, NULL, &sig, HOST_TYPE, POOL);
	ck_assert_ptr_ne(b, a);
	ck_assert_uint_eq(sem_value(t, NULL), 0);
	ck_assert_uint_eq(sem_value(u, NULL), 0);
	ASSERT_ERRNO(accel_semaphore_wait(t, 1, 0, accel_deadline_after(SECOND / 20)), ETIME);
	ASSERT_OK(accel_semaphore_signal(h, 1));
	ASSERT_OK(accel_semaphore_wait(t, 1, 0, WAIT_LONG));
	ASSERT_OK(accel_semaphore_wait(u, 1, 0, WAIT_LONG));
	ck_assert_uint_eq(stats().reserved, POOL);
	ASSERT_OK(accel_queue_dealloca(queue, NULL, NULL, b, 0));
	ck_assert_uint_eq(stats().reserved, 0);
	check_bounded();
	accel_buffer_release(a);
	accel_buffer_release(b);
	accel_semaphore_release(h);
	accel_semaphore_release(t);
	accel_semaphore_release(u);
}
END_TEST

/* Pending ranges that are adjacent serve one larger alloca together. */
START_TEST(test_reuse_adjacent_pending)
{
	accel_semaphore_t *h1 = sem_new(0), *h2 = sem_new(0), *t = sem_new(0);
	POINT(g1, h1, 1);
	POINT(g2, h2, 1);
	POINT(sig, t, 1);
	accel_buffer_t *a = alloca_now(POOL / 2), *b = alloca_now(POOL / 2), *c;

	ASSERT_OK(accel_queue_dealloca(queue, &g1, NULL, a, 0));
	ASSERT_OK(accel_queue_dealloca(queue, &g2, NULL, b, 0));
	c = alloca_on(queue, NULL, &sig, HOST_TYPE, POOL);
	ASSERT_OK(accel_semaphore_signal(h1, 1));
	ASSERT_ERRNO(accel_semaphore_wait(t, 1, 0, accel_deadline_after(SECOND / 20)), ETIME);
	ASSERT_OK(accel_semaphore_signal(h2, 1));
	ASSERT_OK(accel_semaphore_wait(t, 1, 0, WAIT_LONG));
	check_bounded();
	accel_buffer_release(a);
	accel_buffer_release(b);
	accel_buffer_release(c);
	accel_semaphore_release(h1);
	accel_semaphore_release(h2);
	accel_semaphore_release(t);
}
END_TEST

/* Waits that fail: the alloca's signals fail with their error. */
START_TEST(test_failed_wait_propagates)
{
	accel_semaphore_t *h = sem_new(0), *t = sem_new(0);
	POINT(gate, h, 1);
	POINT(sig, t, 1);
	accel_buffer_t *b = alloca_on(queue, &gate, &sig, HOST_TYPE, 256);
	int err = 0;

	ASSERT_OK(accel_semaphore_fail(h, -ECONNRESET));
	ASSERT_ERRNO(accel_semaphore_wait(t, 1, 0, WAIT_LONG), ECONNRESET);
	sem_value(t, &err);
	ck_assert_int_eq(err, -ECONNRESET);
	/* The buffer is still the caller's to return. */
	ASSERT_OK(accel_queue_dealloca(queue, NULL, NULL, b, 0));
	accel_buffer_release(b);
	accel_semaphore_release(h);
	accel_semaphore_release(t);
}
END_TEST

/*
 * A dealloca whose waits fail: its signals fail with them, and its range
 * is free (the work it guarded will not run): the next alloca of it
 * signals without waiting.
 */
START_TEST(test_dealloca_failed_wait)
{
	accel_semaphore_t *h = sem_new(0), *u = sem_new(0), *t = sem_new(0);
	POINT(gate, h, 1);
	POINT(freed, u, 1);
	POINT(sig, t, 1);
	accel_buffer_t *a = alloca_now(POOL), *b;
	int err = 0;

	ASSERT_OK(accel_queue_dealloca(queue, &gate, &freed, a, 0));
	ASSERT_OK(accel_semaphore_fail(h, -ENOLINK));
	ASSERT_ERRNO(accel_semaphore_wait(u, 1, 0, WAIT_LONG), ENOLINK);
	b = alloca_on(queue, NULL, &sig, HOST_TYPE, POOL);
	ASSERT_OK(accel_semaphore_wait(t, 1, 0, WAIT_LONG));
	ck_assert_uint_eq(sem_value(t, &err), 1);
	ck_assert_int_eq(err, 0);
	ASSERT_OK(accel_queue_dealloca(queue, NULL, NULL, b, 0));
	accel_buffer_release(a);
	accel_buffer_release(b);
	accel_semaphore_release(h);
	accel_semaphore_release(u);
	accel_semaphore_release(t);
}
END_TEST

/*
 * Signals of an alloca whose waits are reached go from the host, as a
 * barrier's would: a point not above the semaphore's value fails it with
 * -EINVAL, saying so; the alloca itself succeeds (the buffer is valid).
 */
START_TEST(test_signal_not_above)
{
	accel_semaphore_t *t = sem_new(5);
	POINT(sig, t, 3);
	accel_buffer_t *b = alloca_on(queue, NULL, &sig, HOST_TYPE, 256);
	int err = 0;

	ck_assert_uint_eq(sem_value(t, &err), 5);
	ck_assert_int_eq(err, -EINVAL);
	ASSERT_CONTAINS("failure message", accel_semaphore_failure_message(t),
			"accel_queue_alloca could not signal 3: the semaphore is already at 5");
	ASSERT_OK(accel_queue_dealloca(queue, NULL, NULL, b, 0));
	accel_buffer_release(b);
	accel_semaphore_release(t);
}
END_TEST

/*
 * An alloca without signals gets memory free now: a range deallocated on
 * waits not reached yet is not handed to it (it could not order its use
 * after them), -EAGAIN saying so; once they are reached, the range is free.
 * libaccel once handed it out and dropped the waits: the caller wrote
 * memory the work before might still use.
 */
START_TEST(test_no_pending_range_without_signals)
{
	accel_semaphore_t *h = sem_new(0);
	accel_buffer_params_t p = { HOST_TYPE, ALL_USAGE };
	accel_buffer_t *a = alloca_now(POOL), *b = TEST_NOT_NULL;
	POINT(gate, h, 1);

	ASSERT_OK(accel_queue_dealloca(queue, &gate, NULL, a, 0));
	ASSERT_ERRNO(accel_queue_alloca(queue, NULL, NULL, &p, POOL, 0, &b), EAGAIN);
	ck_assert_ptr_null(b);
	ASSERT_CONTAINS("message", accel_error_message(),
			"an alloca without signals cannot wait for the ranges deallocated on waits not reached yet: pass signals");
	b = TEST_NOT_NULL;
	ASSERT_ERRNO(accel_queue_alloca(queue, &gate, NULL, &p, POOL, 0, &b), EAGAIN);
	ck_assert_uint_eq(stats().reserved, POOL); /* still pending */
	ASSERT_OK(accel_semaphore_signal(h, 1));
	b = alloca_now(POOL);
	ASSERT_OK(accel_queue_dealloca(queue, NULL, NULL, b, 0));
	ck_assert_uint_eq(stats().reserved, 0);
	accel_buffer_release(a);
	accel_buffer_release(b);
	accel_semaphore_release(h);
}
END_TEST

/*
 * A buffer whose alloca took a pending range, returned before the work
 * before it ended (released without a dealloca, or deallocated on no
 * waits): the range stays pending on that work, and the next alloca of it
 * waits for it too. libaccel once freed it at once: the next alloca
 * signalled from the host while the work before could still write it.
 */
START_TEST(test_inherited_waits_outlive_an_early_return)
{
	for (int how = 0; how < 2; how++) {
		accel_semaphore_t *h = sem_new(0), *t = sem_new(0), *u = sem_new(0);
		accel_buffer_t *a = alloca_now(POOL), *b, *c;
		POINT(gate, h, 1);
		POINT(tsig, t, 1);
		POINT(usig, u, 1);

		ASSERT_OK(accel_queue_dealloca(queue, &gate, NULL, a, 0));
		b = alloca_on(queue, NULL, &tsig, HOST_TYPE, POOL);
		if (how == 0) {
			accel_buffer_release(b); /* unused: no dealloca */
			b = NULL;
		} else {
			ASSERT_OK(accel_queue_dealloca(queue, NULL, NULL, b, 0));
		}
		ck_assert_uint_eq(stats().reserved, POOL);
		c = alloca_on(queue, NULL, &usig, HOST_TYPE, POOL);
		ASSERT_ERRNO(accel_semaphore_wait(u, 1, 0, accel_deadline_after(SECOND / 20)), ETIME);
		ASSERT_OK(accel_semaphore_signal(h, 1));
		ASSERT_OK(accel_semaphore_wait(u, 1, 0, WAIT_LONG));
		ASSERT_OK(accel_semaphore_wait(t, 1, 0, WAIT_LONG));
		/* Reached: the range is free when c goes. */
		ASSERT_OK(accel_queue_dealloca(queue, NULL, NULL, c, 0));
		ck_assert_uint_eq(stats().reserved, 0);
		check_bounded();
		accel_buffer_release(a);
		accel_buffer_release(b);
		accel_buffer_release(c);
		accel_semaphore_release(h);
		accel_semaphore_release(t);
		accel_semaphore_release(u);
	}
}
END_TEST

/*
 * An alloca and a dealloca that succeed leave the thread's message as it
 * was (status.h), even when a signal they send from the host is refused
 * (that failure is the semaphore's, with its own message).
 */
START_TEST(test_success_keeps_the_message)
{
	accel_semaphore_t *t = sem_new(5);
	POINT(low, t, 3);
	accel_buffer_t *b;
	char before[512];

	ASSERT_ERRNO(accel_queue_dealloca(queue, NULL, NULL, NULL, 0), EINVAL);
	snprintf(before, sizeof(before), "%s", accel_error_message());
	ck_assert_str_ne(before, "");
	b = alloca_on(queue, NULL, &low, HOST_TYPE, 256);
	ck_assert_str_eq(accel_error_message(), before);
	ASSERT_OK(accel_queue_dealloca(queue, NULL, &low, b, 0));
	ck_assert_str_eq(accel_error_message(), before);
	ASSERT_CONTAINS("failure message", accel_semaphore_failure_message(t),
			"could not signal 3: the semaphore is already at 5");
	accel_buffer_release(b);
	accel_semaphore_release(t);
}
END_TEST

/*
 * The waits of a range an alloca took fail after it: its signals fail
 * with them (the memory's previous owner's work will not end well, and
 * whoever uses the buffer must not run on it as if it had).
 */
START_TEST(test_taken_range_wait_fails_later)
{
	accel_semaphore_t *h = sem_new(0), *t = sem_new(0);
	accel_buffer_t *a = alloca_now(POOL), *b;
	POINT(gate, h, 1);
	POINT(sig, t, 1);
	int err = 0;

	ASSERT_OK(accel_queue_dealloca(queue, &gate, NULL, a, 0));
	b = alloca_on(queue, NULL, &sig, HOST_TYPE, POOL);
	ASSERT_OK(accel_semaphore_fail(h, -EPIPE));
	ASSERT_ERRNO(accel_semaphore_wait(t, 1, 0, WAIT_LONG), EPIPE);
	sem_value(t, &err);
	ck_assert_int_eq(err, -EPIPE);
	/* Failed work will not run: the range is free once b goes. */
	ASSERT_OK(accel_queue_dealloca(queue, NULL, NULL, b, 0));
	ck_assert_uint_eq(stats().reserved, 0);
	accel_buffer_release(a);
	accel_buffer_release(b);
	accel_semaphore_release(h);
	accel_semaphore_release(t);
}
END_TEST

/* Size 0, and releasing without a dealloca returns the memory. */
START_TEST(test_zero_and_release)
{
	accel_buffer_t *z = alloca_now(0), *a;

	ck_assert_uint_eq(accel_buffer_size(z), 0);
	ASSERT_OK(accel_queue_dealloca(queue, NULL, NULL, z, 0));
	accel_buffer_release(z);
	a = alloca_now(POOL);
	accel_buffer_release(a); /* no dealloca: nothing uses it any more */
	ck_assert_uint_eq(stats().reserved, 0);
	a = alloca_now(POOL);
	ASSERT_OK(accel_queue_dealloca(queue, NULL, NULL, a, 0));
	accel_buffer_release(a);
	check_bounded();
}
END_TEST

/* ---- refusals -------------------------------------------------------------- */

/* Larger than the pool: it could never fit. Full now: -EAGAIN. */
START_TEST(test_alloca_too_large_and_full)
{
	accel_buffer_params_t p = { HOST_TYPE, ALL_USAGE };
	const uint64_t sizes[] = { POOL + 1, UINT64_C(1) << 32, UINT64_C(1) << 48,
				   (UINT64_C(1) << 48) + 1, UINT64_MAX };
	accel_transient_pool_stats_t before = stats(), after;
	accel_buffer_t *b = TEST_NOT_NULL, *full;

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		b = TEST_NOT_NULL;
		ASSERT_ERRNO(accel_queue_alloca(queue, NULL, NULL, &p, sizes[i], 0, &b), ENOSPC);
		ASSERT_MESSAGE_CONTAINS("could never fit");
		ASSERT_MESSAGE_CONTAINS("ACCEL_TRANSIENT_POOL_BYTES");
		ck_assert_ptr_null(b);
	}
	after = stats();
	ck_assert_mem_eq(&before, &after, sizeof(before));

	full = alloca_now(POOL);
	before = stats();
	b = TEST_NOT_NULL;
	ASSERT_ERRNO(accel_queue_alloca(queue, NULL, NULL, &p, 1, 0, &b), EAGAIN);
	ASSERT_MESSAGE_CONTAINS("no free range of 256 bytes");
	ck_assert_ptr_null(b);
	after = stats();
	ck_assert_mem_eq(&before, &after, sizeof(before));
	ASSERT_OK(accel_queue_dealloca(queue, NULL, NULL, full, 0));
	accel_buffer_release(full);
	b = alloca_now(1);
	ASSERT_OK(accel_queue_dealloca(queue, NULL, NULL, b, 0));
	accel_buffer_release(b);
}
END_TEST

/*
 * After dealloca: recording the buffer, a table slot naming it, a command
 * buffer that recorded it before, mapping, a subspan (and a subspan made
 * before) and a second dealloca are refused, and nothing changes.
 */
START_TEST(test_use_after_dealloca)
{
	accel_buffer_t *b = alloca_now(1024), *sub = NULL, *sub2 = TEST_NOT_NULL;
	accel_command_buffer_t *early = cb_new(ACCEL_COMMAND_BUFFER_REUSABLE, 0);
	accel_command_buffer_t *cb = cb_new(ACCEL_COMMAND_BUFFER_REUSABLE, 1);
	accel_command_buffer_t *late = cb_new(ACCEL_COMMAND_BUFFER_REUSABLE, 0);
	accel_semaphore_t *t = sem_new(0);
	POINT(sig, t, 1);
	accel_binding_t bind[1] = { { b, 0, ACCEL_WHOLE_BUFFER } };
	accel_binding_table_t table = { 1, bind };
	uint32_t v = 7;
	void *ptr = TEST_NOT_NULL;
	int err = 0;

	ASSERT_OK(accel_buffer_subspan(b, 256, 256, &sub));
	ASSERT_OK(accel_command_buffer_fill(early, accel_buffer_ref_direct(b, 0, 64), &v, 4));
	ASSERT_OK(accel_command_buffer_end(early));
	ASSERT_OK(accel_command_buffer_fill(cb, accel_buffer_ref_indirect(0, 0, 64), &v, 4));
	ASSERT_OK(accel_command_buffer_end(cb));
	ASSERT_OK(accel_queue_dealloca(queue, NULL, NULL, b, 0));

	ASSERT_ERRNO(accel_command_buffer_fill(late, accel_buffer_ref_direct(b, 0, 64), &v, 4), EBADFD);
	ASSERT_MESSAGE_CONTAINS("command 0: target: the buffer was returned by accel_queue_dealloca()");
	ASSERT_ERRNO(accel_command_buffer_fill(late, accel_buffer_ref_direct(sub, 0, 64), &v, 4), EBADFD);
	ASSERT_MESSAGE_CONTAINS("returned by accel_queue_dealloca()");
	ck_assert_uint_eq(accel_command_buffer_command_count(late), 0);

	ASSERT_ERRNO(accel_queue_execute(queue, NULL, &sig, cb, &table, 0), EBADFD);
	ASSERT_MESSAGE_CONTAINS("binding table slot 0: the buffer was returned by accel_queue_dealloca()");
	ASSERT_ERRNO(accel_queue_execute_batch(queue, NULL, &sig, 1, &cb, &table, 0), EBADFD);
	ASSERT_MESSAGE_CONTAINS("returned by accel_queue_dealloca()");
	ASSERT_ERRNO(accel_queue_execute(queue, NULL, &sig, early, NULL, 0), EBADFD);
	ASSERT_MESSAGE_CONTAINS("a buffer the command buffer recorded: the buffer was returned by accel_queue_dealloca()");
	/* The prediction of a submission answers as the submission would. */
	accel_prediction_t pred;

	ASSERT_ERRNO(accel_command_buffer_predict(dev, early, NULL, &pred), EBADFD);
	ASSERT_MESSAGE_CONTAINS("accel_command_buffer_predict: a buffer the command buffer recorded: the buffer was returned by accel_queue_dealloca()");
	ASSERT_ERRNO(accel_command_buffer_predict(dev, cb, &table, &pred), EBADFD);
	ASSERT_MESSAGE_CONTAINS("binding table slot 0: the buffer was returned by accel_queue_dealloca()");
	ck_assert_uint_eq(sem_value(t, &err), 0);
	ck_assert_int_eq(err, 0);
	ASSERT_ERRNO(accel_semaphore_wait(t, 1, ACCEL_SEMAPHORE_WAIT_SUBMITTED, 0), ETIME);

	ASSERT_ERRNO(accel_buffer_map(b, ACCEL_MAP_READ, 0, ACCEL_WHOLE_BUFFER, &ptr), EBADFD);
	ASSERT_MESSAGE_CONTAINS("accel_buffer_map: buffer: the buffer was returned by accel_queue_dealloca()");
	ck_assert_ptr_null(ptr);
	ptr = TEST_NOT_NULL;
	ASSERT_ERRNO(accel_buffer_map(sub, ACCEL_MAP_READ, 0, ACCEL_WHOLE_BUFFER, &ptr), EBADFD);
	ASSERT_ERRNO(accel_buffer_subspan(b, 0, 16, &sub2), EBADFD);
	ASSERT_MESSAGE_CONTAINS("accel_buffer_subspan: buffer: the buffer was returned");
	ck_assert_ptr_null(sub2);

	ASSERT_ERRNO(accel_queue_dealloca(queue, NULL, NULL, b, 0), EBADFD);
	ASSERT_MESSAGE_CONTAINS("accel_queue_dealloca: buffer: the buffer was returned by accel_queue_dealloca()");
	ck_assert_uint_eq(stats().reserved, 0);

	/*
	 * Nor a transfer, either way: its memory is the pool's again, and
	 * a transfer into it wrote into the next alloca that took it (an
	 * outside test found it). The live buffer keeps what it had.
	 */
	{
		accel_buffer_t *live = alloca_now(1024);
		uint8_t junk[64], back[64];
		uint32_t *w = map(live);

		memset(junk, 0x66, sizeof(junk));
		w[0] = 0x12345678;
		ASSERT_ERRNO(accel_device_transfer_h2d(dev, junk, b, 0, sizeof(junk), 0,
						       ACCEL_DEADLINE_INFINITE), EBADFD);
		ASSERT_MESSAGE_CONTAINS("accel_device_transfer_h2d: target: the buffer was returned by accel_queue_dealloca()");
		ASSERT_ERRNO(accel_device_transfer_h2d(dev, junk, sub, 0, sizeof(junk), 0,
						       ACCEL_DEADLINE_INFINITE), EBADFD);
		ASSERT_ERRNO(accel_device_transfer_d2h(dev, sub, 0, back, sizeof(back), 0,
						       ACCEL_DEADLINE_INFINITE), EBADFD);
		ASSERT_MESSAGE_CONTAINS("accel_device_transfer_d2h: source: the buffer was returned");
		ASSERT_ERRNO(accel_device_transfer_d2d(dev, live, 0, b, 0, 64, 0,
						       ACCEL_DEADLINE_INFINITE), EBADFD);
		ASSERT_ERRNO(accel_device_transfer_range(dev,
				(accel_transfer_buffer_t){ .host = junk }, 0,
				(accel_transfer_buffer_t){ .buffer = b }, 0, 64, 0,
				ACCEL_DEADLINE_INFINITE), EBADFD);
		ck_assert_uint_eq(w[0], 0x12345678);
		ASSERT_OK(accel_queue_dealloca(queue, NULL, NULL, live, 0));
		accel_buffer_release(live);
	}

	accel_command_buffer_release(early);
	accel_command_buffer_release(cb);
	accel_command_buffer_release(late);
	accel_buffer_release(sub);
	accel_buffer_release(b);
	accel_semaphore_release(t);
}
END_TEST

/* Buffers dealloca does not take, and bad arguments of both calls. */
START_TEST(test_errors)
{
	accel_buffer_params_t p = { HOST_TYPE, ALL_USAGE }, bad = p;
	accel_buffer_t *plain = buffer_new(256), *b = alloca_now(512), *sub = NULL;
	accel_buffer_t *out = TEST_NOT_NULL;
	accel_semaphore_t *s = sem_new(0);
	accel_semaphore_list_t nulls = { 1, NULL, NULL };
	accel_device_t *other = NULL;
	accel_queue_t *oq = NULL;
	accel_transient_pool_stats_t before, after;

	before = stats();
	ASSERT_ERRNO(accel_queue_alloca(queue, NULL, NULL, &p, 1, 0, NULL), EINVAL);
	ASSERT_ERRNO(accel_queue_alloca(NULL, NULL, NULL, &p, 1, 0, &out), EINVAL);
	ASSERT_MESSAGE_CONTAINS("queue is NULL");
	ck_assert_ptr_null(out);
	ASSERT_ERRNO(accel_queue_alloca(queue, NULL, NULL, NULL, 1, 0, &out), EINVAL);
	ASSERT_MESSAGE_CONTAINS("params is NULL");
	ASSERT_ERRNO(accel_queue_alloca(queue, NULL, NULL, &p, 1, 1, &out), EINVAL);
	ASSERT_MESSAGE_CONTAINS("flags 0x1");
	bad.usage = 0;
	ASSERT_ERRNO(accel_queue_alloca(queue, NULL, NULL, &bad, 1, 0, &out), EINVAL);
	ASSERT_MESSAGE_CONTAINS("params->usage is 0");
	bad.usage = 1u << 31;
	ASSERT_ERRNO(accel_queue_alloca(queue, NULL, NULL, &bad, 1, 0, &out), EINVAL);
	ASSERT_MESSAGE_CONTAINS("unknown bits");
	bad = p;
	bad.memory_type = 1u << 30;
	ASSERT_ERRNO(accel_queue_alloca(queue, NULL, NULL, &bad, 1, 0, &out), EINVAL);
	ASSERT_ERRNO(accel_queue_alloca(queue, &nulls, NULL, &p, 1, 0, &out), EINVAL);
	ASSERT_ERRNO(accel_queue_alloca(queue, NULL, &nulls, &p, 1, 0, &out), EINVAL);
	ck_assert_ptr_null(out);
	after = stats();
	ck_assert_mem_eq(&before, &after, sizeof(before));

	ASSERT_ERRNO(accel_queue_dealloca(queue, NULL, NULL, plain, 0), EINVAL);
	ASSERT_MESSAGE_CONTAINS("not one of accel_queue_alloca()'s");
	ASSERT_OK(accel_buffer_subspan(b, 0, 256, &sub));
	ASSERT_ERRNO(accel_queue_dealloca(queue, NULL, NULL, sub, 0), EINVAL);
	ASSERT_MESSAGE_CONTAINS("subspan of one");
	ASSERT_ERRNO(accel_queue_dealloca(NULL, NULL, NULL, b, 0), EINVAL);
	ASSERT_ERRNO(accel_queue_dealloca(queue, NULL, NULL, NULL, 0), EINVAL);
	ASSERT_ERRNO(accel_queue_dealloca(queue, NULL, NULL, b, 2), EINVAL);
	ASSERT_ERRNO(accel_queue_dealloca(queue, &nulls, NULL, b, 0), EINVAL);
	ASSERT_OK(accel_device_open(test_device_uri(), NULL, &other));
	ASSERT_OK(accel_queue_create(other, 0, &oq));
	ASSERT_ERRNO(accel_queue_dealloca(oq, NULL, NULL, b, 0), EXDEV);
	ASSERT_MESSAGE_CONTAINS("the buffer is of device");
	after = stats();
	ck_assert_uint_eq(after.reserved, 512);
	/* Still live: the refused calls changed nothing. */
	ASSERT_OK(accel_buffer_map(b, ACCEL_MAP_READ, 0, 16, (void **)&out));
	ASSERT_OK(accel_buffer_unmap(b));
	ASSERT_OK(accel_queue_dealloca(queue, NULL, NULL, b, 0));

	ASSERT_ERRNO(accel_device_transient_pool_stats(NULL, &before), EINVAL);
	ASSERT_ERRNO(accel_device_transient_pool_stats(dev, NULL), EINVAL);

	accel_queue_release(oq);
	accel_device_release(other);
	accel_buffer_release(sub);
	accel_buffer_release(b);
	accel_buffer_release(plain);
	accel_semaphore_release(s);
}
END_TEST

/* ACCEL_TRANSIENT_POOL_BYTES is read at the first alloca, and checked. */
START_TEST(test_pool_bytes_env)
{
	accel_buffer_params_t p = { HOST_TYPE, ALL_USAGE };
	const char *bad[] = { "0", "-1", "12Q", "K", "1G1", "281474976710657",
			      "999999999999999999999" };
	accel_transient_pool_stats_t st;
	accel_buffer_t *b = TEST_NOT_NULL;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		setenv("ACCEL_TRANSIENT_POOL_BYTES", bad[i], 1);
		ASSERT_ERRNO(accel_queue_alloca(queue, NULL, NULL, &p, 1, 0, &b), EINVAL);
		ASSERT_MESSAGE_CONTAINS("ACCEL_TRANSIENT_POOL_BYTES is \"");
		ck_assert_ptr_null(b);
		ASSERT_ERRNO(accel_device_transient_pool_stats(dev, &st), EINVAL);
	}
	unsetenv("ACCEL_TRANSIENT_POOL_BYTES");
	ASSERT_OK(accel_device_transient_pool_stats(dev, &st));
	ck_assert_uint_eq(st.capacity, UINT64_C(256) << 20);
	setenv("ACCEL_TRANSIENT_POOL_BYTES", "4096", 1);
	b = alloca_now(4096);
	setenv("ACCEL_TRANSIENT_POOL_BYTES", "8K", 1); /* read once */
	st = stats();
	ck_assert_uint_eq(st.capacity, 4096);
	ck_assert_uint_eq(st.committed, 4096);
	ASSERT_OK(accel_queue_dealloca(queue, NULL, NULL, b, 0));
	accel_buffer_release(b);
}
END_TEST

/*
 * A capacity that is not a multiple of the pool's 256-byte alignment is
 * rounded up to one: every size up to the capacity asked for fits an
 * empty pool. Before, alloca(300) of a 300-byte pool asked for 512 and
 * answered -EAGAIN for ever, so a caller retrying as told spun (an
 * outside test found it).
 */
START_TEST(test_pool_bytes_rounded_up)
{
	static const struct { const char *env; uint64_t size, capacity; } cases[] = {
		{ "1", 1, 256 }, { "300", 300, 512 }, { "1000", 1000, 1024 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		accel_device_t *d = NULL;
		accel_queue_t *q = NULL;
		accel_buffer_params_t p = { HOST_TYPE, ALL_USAGE };
		accel_buffer_t *b = NULL, *big = TEST_NOT_NULL;
		accel_transient_pool_stats_t st;

		setenv("ACCEL_TRANSIENT_POOL_BYTES", cases[i].env, 1);
		ASSERT_OK(accel_device_open(test_device_uri(), NULL, &d));
		ASSERT_OK(accel_queue_create(d, 0, &q));
		ASSERT_OK(accel_queue_alloca(q, NULL, NULL, &p, cases[i].size, 0, &b));
		ASSERT_OK(accel_device_transient_pool_stats(d, &st));
		ck_assert_uint_eq(st.capacity, cases[i].capacity);
		ck_assert_uint_le(st.committed, st.capacity);
		ASSERT_ERRNO(accel_queue_alloca(q, NULL, NULL, &p, cases[i].capacity + 1, 0, &big), ENOSPC);
		ck_assert_ptr_null(big);
		ASSERT_OK(accel_queue_dealloca(q, NULL, NULL, b, 0));
		accel_buffer_release(b);
		accel_queue_release(q);
		accel_device_release(d);
	}
	setenv("ACCEL_TRANSIENT_POOL_BYTES", "1M", 1);
}
END_TEST

/* ---- uploader ------------------------------------------------------------- */

/*
 * 1000 submissions, each reading its own parameters (4 .. 1000 bytes)
 * from a ring of 4 KiB through a table slot: each write's space is
 * recycled once its submission ended; every submission read its own.
 */
START_TEST(test_uploader_ring)
{
	enum { N = 1000 };
	accel_uploader_t *up = NULL;
	accel_semaphore_t *done = sem_new(0);
	accel_buffer_t *out = buffer_new(N * 4);
	uint32_t *res = map(out), params[256];
	accel_command_buffer_t *cb = cb_new(ACCEL_COMMAND_BUFFER_REUSABLE, 2);
	uint32_t full = 0;

	memset(res, 0, N * 4);
	ASSERT_OK(accel_command_buffer_copy(cb, accel_buffer_ref_indirect(0, 0, 4),
					    accel_buffer_ref_indirect(1, 0, 4)));
	ASSERT_OK(accel_command_buffer_end(cb));
	ASSERT_OK(accel_uploader_create(queue, 4096, 0, &up));
	for (uint32_t i = 0; i < N; i++) {
		uint64_t size = 4 + (i * 7919) % 997, offset = UINT64_MAX, v = i + 1;
		accel_buffer_t *ring = NULL;
		accel_binding_t bind[2];
		accel_binding_table_t table = { 2, bind };
		accel_semaphore_list_t sig = { 1, &done, &v };
		int err;

		for (uint32_t k = 0; k < 256; k++)
			params[k] = 0xc0de0000u + i + k;
		while ((err = accel_uploader_write(up, params, size, &ring, &offset)) == -EAGAIN) {
			full++;
			ASSERT_OK(accel_semaphore_wait(done, i, 0, WAIT_LONG));
		}
		ASSERT_OK(err);
		ck_assert_uint_eq(offset % ACCEL_UPLOADER_ALIGN, 0);
		ck_assert_uint_le(offset + size, 4096);
		bind[0] = (accel_binding_t){ ring, offset, 4 };
		bind[1] = (accel_binding_t){ out, i * 4, 4 };
		ASSERT_OK(accel_queue_execute(queue, NULL, &sig, cb, &table, 0));
		ASSERT_OK(accel_uploader_fence(up, done, v));
	}
	ASSERT_OK(accel_semaphore_wait(done, N, 0, WAIT_LONG));
	for (uint32_t i = 0; i < N; i++)
		ck_assert_msg(res[i] == 0xc0de0000u + i, "submission %u read 0x%x", i, res[i]);
	printf("uploader: the ring was full %u times in %u writes\n", full, N);
	accel_uploader_release(up);
	ck_assert_uint_eq(stats().reserved, 0);
	accel_command_buffer_release(cb);
	accel_buffer_release(out);
	accel_semaphore_release(done);
}
END_TEST

/* A write that does not fit before the end starts the next lap at 0. */
START_TEST(test_uploader_wraps_contiguous)
{
	accel_uploader_t *up = NULL;
	accel_semaphore_t *h = sem_new(0);
	accel_buffer_t *ring = NULL;
	uint8_t data[512] = { 1 };
	uint64_t off[4];

	ASSERT_OK(accel_uploader_create(queue, 1024, 0, &up));
	for (int i = 0; i < 3; i++)
		ASSERT_OK(accel_uploader_write(up, data, 200, &ring, &off[i]));
	ck_assert_uint_eq(off[0], 0);
	ck_assert_uint_eq(off[1], 256);
	ck_assert_uint_eq(off[2], 512);
	ASSERT_OK(accel_uploader_fence(up, h, 1));
	/* 512 bytes: not before the end (768 + 512 > 1024), nor at 0 yet. */
	ASSERT_ERRNO(accel_uploader_write(up, data, 512, &ring, &off[3]), EAGAIN);
	ASSERT_MESSAGE_CONTAINS("the oldest are free once their semaphore reaches 1");
	ASSERT_OK(accel_semaphore_signal(h, 1));
	ASSERT_OK(accel_uploader_write(up, data, 512, &ring, &off[3]));
	ck_assert_uint_eq(off[3], 0);
	accel_uploader_release(up);
	accel_semaphore_release(h);
}
END_TEST

START_TEST(test_uploader_errors)
{
	accel_uploader_t *up = TEST_NOT_NULL, *small = NULL;
	accel_buffer_t *ring = NULL;
	accel_scheduler_t *other = NULL;
	accel_semaphore_t *foreign = NULL;
	uint64_t off = 0;
	uint8_t data[600] = { 0 };

	ASSERT_ERRNO(accel_uploader_create(NULL, 4096, 0, &up), EINVAL);
	ck_assert_ptr_null(up);
	ASSERT_ERRNO(accel_uploader_create(queue, 4096, 0, NULL), EINVAL);
	ASSERT_ERRNO(accel_uploader_create(queue, 4096, 1, &up), EINVAL);
	ASSERT_MESSAGE_CONTAINS("flags 0x1");
	ASSERT_ERRNO(accel_uploader_create(queue, 0, 0, &up), EINVAL);
	ASSERT_MESSAGE_CONTAINS("ring_size 0");
	/* Above any pool: it could never fit, as one above this pool. */
	ASSERT_ERRNO(accel_uploader_create(queue, UINT64_MAX, 0, &up), ENOSPC);
	ASSERT_MESSAGE_CONTAINS("could never fit");
	ck_assert_ptr_null(up);
	ASSERT_ERRNO(accel_uploader_create(queue, (UINT64_C(1) << 48) + 1, 0, &up), ENOSPC);
	ASSERT_ERRNO(accel_uploader_create(queue, POOL + 1, 0, &up), ENOSPC);
	ASSERT_MESSAGE_CONTAINS("could never fit");
	/* Said as the uploader's, with the size the caller gave. */
	ASSERT_MESSAGE_CONTAINS("accel_uploader_create: a ring of");
	ASSERT_MESSAGE_CONTAINS("ring_size 1048577 rounded up");
	ck_assert_ptr_null(up);
	ck_assert_uint_eq(stats().reserved, 0);

	ASSERT_OK(accel_uploader_create(queue, 512, 0, &small));
	ASSERT_ERRNO(accel_uploader_write(NULL, data, 4, &ring, &off), EINVAL);
	ASSERT_ERRNO(accel_uploader_write(small, NULL, 4, &ring, &off), EINVAL);
	ASSERT_ERRNO(accel_uploader_write(small, data, 4, NULL, &off), EINVAL);
	ASSERT_ERRNO(accel_uploader_write(small, data, 4, &ring, NULL), EINVAL);
	ASSERT_ERRNO(accel_uploader_write(small, data, 0, &ring, &off), EINVAL);
	ASSERT_ERRNO(accel_uploader_write(small, data, 513, &ring, &off), ENOSPC);
	ASSERT_MESSAGE_CONTAINS("above the ring's 512 bytes");
	ASSERT_OK(accel_uploader_write(small, data, 512, &ring, &off));
	ASSERT_ERRNO(accel_uploader_write(small, data, 1, &ring, &off), EAGAIN);
	ASSERT_MESSAGE_CONTAINS("not fenced yet");
	ASSERT_OK(accel_scheduler_open(NULL, &other));
	ASSERT_OK(accel_semaphore_create(other, 0, &foreign));
	ASSERT_ERRNO(accel_uploader_fence(NULL, foreign, 1), EINVAL);
	ASSERT_ERRNO(accel_uploader_fence(small, NULL, 1), EINVAL);
	ASSERT_ERRNO(accel_uploader_fence(small, foreign, 1), EXDEV);
	accel_uploader_release(small);
	accel_uploader_release(NULL);
	accel_semaphore_release(foreign);
	accel_scheduler_release(other);
}
END_TEST

/* A fence whose point fails counts as reached: its ring space is free. */
START_TEST(test_uploader_failed_fence_frees_the_ring)
{
	accel_uploader_t *up = NULL;
	accel_semaphore_t *h = sem_new(0);
	accel_buffer_t *ring = NULL;
	static uint8_t bytes[512];
	uint64_t off = 99;

	ASSERT_OK(accel_uploader_create(queue, 512, 0, &up));
	ASSERT_OK(accel_uploader_write(up, bytes, 512, &ring, &off));
	ASSERT_OK(accel_uploader_fence(up, h, 1));
	ASSERT_ERRNO(accel_uploader_write(up, bytes, 1, &ring, &off), EAGAIN);
	ASSERT_OK(accel_semaphore_fail(h, -EIO));
	ASSERT_OK(accel_uploader_write(up, bytes, 1, &ring, &off));
	ck_assert_uint_eq(off, 0);
	accel_uploader_release(up);
	accel_semaphore_release(h);
}
END_TEST

/*
 * Released with fences not reached: its ring goes back to the pool
 * pending, and the next alloca of that memory waits for the last one.
 */
START_TEST(test_uploader_release_pending)
{
	accel_uploader_t *up = NULL;
	accel_semaphore_t *h = sem_new(0), *t = sem_new(0);
	POINT(sig, t, 1);
	accel_buffer_t *ring = NULL, *b;
	uint64_t off;
	uint32_t word = 1;

	ASSERT_OK(accel_uploader_create(queue, POOL, 0, &up));
	ASSERT_OK(accel_uploader_write(up, &word, 4, &ring, &off));
	ASSERT_OK(accel_uploader_fence(up, h, 1));
	ASSERT_OK(accel_uploader_fence(up, h, 2));
	accel_uploader_release(up);
	ck_assert_uint_eq(stats().reserved, POOL);
	/* The ring's memory type, or fewer properties: its chunk serves it. */
	b = alloca_on(queue, NULL, &sig, ACCEL_MEMORY_TYPE_HOST_VISIBLE, POOL);
	ASSERT_OK(accel_semaphore_signal(h, 1));
	ASSERT_ERRNO(accel_semaphore_wait(t, 1, 0, accel_deadline_after(SECOND / 20)), ETIME);
	ASSERT_OK(accel_semaphore_signal(h, 2));
	ASSERT_OK(accel_semaphore_wait(t, 1, 0, WAIT_LONG));
	ASSERT_OK(accel_queue_dealloca(queue, NULL, NULL, b, 0));
	accel_buffer_release(b);
	accel_semaphore_release(h);
	accel_semaphore_release(t);
}
END_TEST

/* ---- threads --------------------------------------------------------------- */

struct worker {
	accel_queue_t *q;
	uint32_t id;
	int failures;
};

/*
 * 300 rounds of alloca -> fill -> copy -> dealloca without host waits,
 * each round checked at the end; 3 threads, each on its own queue, share
 * the device's pool.
 */
static void *worker_main(void *arg)
{
	enum { ROUNDS = 300 };
	struct worker *w = arg;
	accel_buffer_t *out = buffer_new(ROUNDS * 4);
	uint32_t *res = map(out);
	accel_semaphore_t *done[ROUNDS];
	accel_command_buffer_t *cbs[ROUNDS];

	memset(res, 0, ROUNDS * 4);
	for (uint32_t i = 0; i < ROUNDS; i++) {
		accel_semaphore_t *g = sem_new(0);
		POINT(got, g, 1);
		accel_buffer_t *b;

		done[i] = sem_new(0);
		{
			POINT(d, done[i], 1);

			b = alloca_on(w->q, NULL, &got, HOST_TYPE,
				      4096 * (1 + (i + w->id) % 16));
			cbs[i] = fill_and_copy(b, (w->id << 16) | i, out, i * 4);
			ASSERT_OK(accel_queue_execute(w->q, &got, &d, cbs[i], NULL, 0));
			ASSERT_OK(accel_queue_dealloca(w->q, &d, NULL, b, 0));
		}
		accel_buffer_release(b);
		accel_semaphore_release(g);
	}
	for (uint32_t i = 0; i < ROUNDS; i++) {
		ASSERT_OK(accel_semaphore_wait(done[i], 1, 0, WAIT_LONG));
		accel_semaphore_release(done[i]);
		accel_command_buffer_release(cbs[i]);
		if (res[i] != ((w->id << 16) | i))
			w->failures++;
	}
	accel_buffer_release(out);
	return NULL;
}

START_TEST(test_threads_three_queues)
{
	struct worker w[3];
	pthread_t t[3];

	for (uint32_t i = 0; i < 3; i++) {
		w[i] = (struct worker){ .id = i + 1 };
		ASSERT_OK(accel_queue_create(dev, 0, &w[i].q));
	}
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, worker_main, &w[i]), 0);
	for (int i = 0; i < 3; i++) {
		pthread_join(t[i], NULL);
		ck_assert_msg(w[i].failures == 0, "thread %d: %d results wrong",
			      i, w[i].failures);
		accel_queue_release(w[i].q);
	}
	check_bounded();
	ck_assert_uint_eq(stats().reserved_peak <= POOL, 1);
}
END_TEST

static Suite *alloca_suite(void)
{
	Suite *suite = suite_create("alloca");
	TCase *tc = tcase_create("alloca");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_alloca_fill_map);
	tcase_add_test(tc, test_chain_bounded);
	tcase_add_test(tc, test_reuse_waits_for_dealloca);
	tcase_add_test(tc, test_reuse_adjacent_pending);
	tcase_add_test(tc, test_failed_wait_propagates);
	tcase_add_test(tc, test_dealloca_failed_wait);
	tcase_add_test(tc, test_signal_not_above);
	tcase_add_test(tc, test_zero_and_release);
	tcase_add_test(tc, test_no_pending_range_without_signals);
	tcase_add_test(tc, test_inherited_waits_outlive_an_early_return);
	tcase_add_test(tc, test_success_keeps_the_message);
	tcase_add_test(tc, test_taken_range_wait_fails_later);
	tcase_add_test(tc, test_alloca_too_large_and_full);
	tcase_add_test(tc, test_use_after_dealloca);
	tcase_add_test(tc, test_errors);
	tcase_add_test(tc, test_pool_bytes_env);
	tcase_add_test(tc, test_pool_bytes_rounded_up);
	tcase_add_test(tc, test_uploader_ring);
	tcase_add_test(tc, test_uploader_wraps_contiguous);
	tcase_add_test(tc, test_uploader_errors);
	tcase_add_test(tc, test_uploader_release_pending);
	tcase_add_test(tc, test_uploader_failed_fence_frees_the_ring);
	tcase_add_test(tc, test_threads_three_queues);
	suite_add_tcase(suite, tc);
	return suite;
}

int main(void)
{
	test_require_device();
	return test_run_suite(alloca_suite());
}
