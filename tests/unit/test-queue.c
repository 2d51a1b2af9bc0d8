// SPDX-License-Identifier: MIT
/*
 * Check suite "queue": submissions executed end to end on the test device
 * (cpu:// or ACCEL_TEST_DEVICE, see test-accel.h).
 * Transfers and dispatches (direct and through binding tables), reuse with
 * several tables in flight, no hidden command limits, failure propagation,
 * the failing command's index, wait-before-signal without head-of-line
 * blocking, and submissions from several threads at once.
 */
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

#include "test-accel.h"


static accel_queue_t *queue;
static accel_executable_t *exe;

static void setup(void)
{
	device_setup();
	ASSERT_OK(accel_queue_create(dev, 0, &queue));
	exe = kernels();
}

static void teardown(void)
{
	accel_executable_release(exe);
	accel_queue_release(queue);
	device_teardown();
}

static int run(accel_command_buffer_t *cb, const accel_binding_table_t *table)
{
	return run_on(queue, cb, table);
}

/* ---- transfers ---------------------------------------------------------- */

START_TEST(test_fill_patterns)
{
	accel_buffer_t *b = buffer_new(64);
	uint8_t *p = map(b);
	uint8_t p1 = 0x11;
	uint16_t p2 = 0x2233;
	uint32_t p4 = 0x44556677;
	accel_command_buffer_t *cb = cb_new(ACCEL_COMMAND_BUFFER_ONE_SHOT, 0);

	memset(p, 0, 64);
	ASSERT_OK(accel_command_buffer_fill(cb, accel_buffer_ref_direct(b, 3, 5), &p1, 1));
	ASSERT_OK(accel_command_buffer_fill(cb, accel_buffer_ref_direct(b, 10, 6), &p2, 2));
	ASSERT_OK(accel_command_buffer_fill(cb, accel_buffer_ref_direct(b, 16, 8), &p4, 4));
	ASSERT_OK(accel_command_buffer_fill(cb, accel_buffer_ref_direct(b, 40, 0), &p4, 4));
	ASSERT_OK(accel_command_buffer_end(cb));
	ASSERT_OK(run(cb, NULL));
	for (int i = 0; i < 64; i++) {
		uint8_t want = 0;

		if (i >= 3 && i < 8)
			want = 0x11;
		else if (i >= 10 && i < 16)
			want = i % 2 ? 0x22 : 0x33;
		else if (i >= 16 && i < 24)
			want = ((const uint8_t *)&p4)[i % 4];
		ck_assert_msg(p[i] == want, "byte %d is 0x%x, expected 0x%x", i, p[i], want);
	}
	accel_command_buffer_release(cb);
	accel_buffer_release(b);
}
END_TEST

/*
 * Command buffers of barriers only, or starting with one, record and run
 * (UBSan saw memset(NULL, 0, 0) when recording a leading barrier, and
 * vulkan's program memcpy(p, NULL, 0) for barriers only).
 */
START_TEST(test_barrier_only)
{
	accel_buffer_t *b = buffer_new(16);
	uint32_t *p = map(b), v = 0x5a5a5a5a;
	accel_command_buffer_t *only = cb_new(ACCEL_COMMAND_BUFFER_REUSABLE, 0);
	accel_command_buffer_t *first = cb_new(ACCEL_COMMAND_BUFFER_REUSABLE, 1);
	accel_binding_t bind[1] = { { b, 0, ACCEL_WHOLE_BUFFER } };
	accel_binding_table_t t = { 1, bind };

	memset(p, 0, 16);
	ASSERT_OK(accel_command_buffer_barrier(only));
	ASSERT_OK(accel_command_buffer_barrier(only));
	ASSERT_OK(accel_command_buffer_end(only));
	ASSERT_OK(accel_command_buffer_barrier(first));
	ASSERT_OK(accel_command_buffer_fill(first, accel_buffer_ref_indirect(0, 0, 16), &v, 4));
	ASSERT_OK(accel_command_buffer_barrier(first));
	ASSERT_OK(accel_command_buffer_end(first));
	ASSERT_OK(run(only, NULL));
	ASSERT_OK(run(only, NULL));
	ASSERT_OK(run(first, &t));
	test_expect_u32(p, 4, v, "buffer");
	accel_command_buffer_release(only);
	accel_command_buffer_release(first);
	accel_buffer_release(b);
}
END_TEST

/*
 * A table of 65,536 entries of which two are used, the highest first:
 * each command reaches its own slot's buffer (a submission captures the
 * used slots densely, in slot order).
 */
START_TEST(test_sparse_high_slots)
{
	enum { CAP = 65536 };
	accel_buffer_t *hi = buffer_new(64), *lo = buffer_new(64);
	uint32_t *ph = map(hi), *pl = map(lo), a = 0x11111111, b = 0x22222222;
	accel_command_buffer_t *cb = cb_new(ACCEL_COMMAND_BUFFER_REUSABLE, CAP);
	accel_binding_t *bind = calloc(CAP, sizeof(*bind));
	accel_binding_table_t t = { CAP, bind };

	ck_assert_ptr_nonnull(bind);
	memset(ph, 0, 64);
	memset(pl, 0, 64);
	ASSERT_OK(accel_command_buffer_fill(cb, accel_buffer_ref_indirect(CAP - 1, 16, 16), &a, 4));
	ASSERT_OK(accel_command_buffer_fill(cb, accel_buffer_ref_indirect(5, 0, ACCEL_WHOLE_BUFFER), &b, 4));
	ASSERT_OK(accel_command_buffer_end(cb));
	bind[CAP - 1] = (accel_binding_t){ hi, 0, ACCEL_WHOLE_BUFFER };
	bind[5] = (accel_binding_t){ lo, 32, 32 };
	ASSERT_OK(run(cb, &t));
	test_expect_u32(ph, 4, 0, "hi[0..4)");
	test_expect_u32(ph + 4, 4, a, "hi[4..8)");
	test_expect_u32(ph + 8, 8, 0, "hi[8..16)");
	test_expect_u32(pl, 8, 0, "lo[0..8)");
	test_expect_u32(pl + 8, 8, b, "lo[8..16)");
	accel_command_buffer_release(cb);
	free(bind);
	accel_buffer_release(hi);
	accel_buffer_release(lo);
}
END_TEST

START_TEST(test_update_and_copy)
{
	accel_buffer_t *a = buffer_new(32), *b = buffer_new(32);
	uint8_t *pa = map(a), *pb = map(b), data[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	accel_command_buffer_t *cb = cb_new(0, 0);

	memset(pa, 0, 32);
	memset(pb, 0, 32);
	ASSERT_OK(accel_command_buffer_update(cb, data, accel_buffer_ref_direct(a, 4, 8)));
	memset(data, 0xee, sizeof(data)); /* the update copied it already */
	ASSERT_OK(accel_command_buffer_barrier(cb));
	ASSERT_OK(accel_command_buffer_copy(cb, accel_buffer_ref_direct(a, 4, 8),
					    accel_buffer_ref_direct(b, 17, 8)));
	ASSERT_OK(accel_command_buffer_end(cb));
	ASSERT_OK(run(cb, NULL));
	for (int i = 0; i < 8; i++) {
		ck_assert_uint_eq(pa[4 + i], i + 1);
		ck_assert_uint_eq(pb[17 + i], i + 1);
	}
	ck_assert_uint_eq(pb[16], 0);
	ck_assert_uint_eq(pb[25], 0);
	accel_command_buffer_release(cb);
	accel_buffer_release(a);
	accel_buffer_release(b);
}
END_TEST

START_TEST(test_indirect_transfers)
{
	accel_buffer_t *a = buffer_new(64), *b = buffer_new(64);
	uint32_t *pa = map(a), *pb = map(b), v = 0xabcd0123, data[2] = { 7, 9 };
	accel_command_buffer_t *cb = cb_new(0, 2);
	accel_binding_t t[2] = { { a, 16, 32 }, { b, 0, ACCEL_WHOLE_BUFFER } };
	accel_binding_table_t table = { 2, t };

	memset(pa, 0, 64);
	memset(pb, 0, 64);
	ASSERT_OK(accel_command_buffer_fill(cb, accel_buffer_ref_indirect(0, 0, ACCEL_WHOLE_BUFFER), &v, 4));
	ASSERT_OK(accel_command_buffer_barrier(cb));
	ASSERT_OK(accel_command_buffer_update(cb, data, accel_buffer_ref_indirect(0, 8, 8)));
	ASSERT_OK(accel_command_buffer_barrier(cb));
	ASSERT_OK(accel_command_buffer_copy(cb, accel_buffer_ref_indirect(0, 0, 32),
					    accel_buffer_ref_indirect(1, 4, 32)));
	ASSERT_OK(accel_command_buffer_end(cb));
	ASSERT_OK(run(cb, &table));
	test_expect_u32(pa, 4, 0, "a");
	test_expect_u32(pa + 4, 2, v, "a");
	ck_assert_uint_eq(pa[6], 7);
	ck_assert_uint_eq(pa[7], 9);
	test_expect_u32(pa + 8, 4, v, "a");
	test_expect_u32(pa + 12, 4, 0, "a");
	ck_assert_uint_eq(pb[0], 0);
	test_expect_u32(pb + 1, 2, v, "b");
	ck_assert_uint_eq(pb[3], 7);
	ck_assert_uint_eq(pb[4], 9);
	test_expect_u32(pb + 5, 4, v, "b");
	ck_assert_uint_eq(pb[9], 0);
	accel_command_buffer_release(cb);
	accel_buffer_release(a);
	accel_buffer_release(b);
}
END_TEST

/* ---- dispatches ---------------------------------------------------------- */

START_TEST(test_dispatch_saxpy)
{
	accel_buffer_t *x = buffer_new(1000 * 4), *y = buffer_new(1000 * 4);
	float *px = map(x), *py = map(y), a = 3.0f;
	accel_buffer_ref_t b[2] = { accel_buffer_ref_direct(x, 0, ACCEL_WHOLE_BUFFER),
				    accel_buffer_ref_direct(y, 0, ACCEL_WHOLE_BUFFER) };
	uint32_t wg[3] = { (1000 + 63) / 64, 1, 1 }, c;
	accel_command_buffer_t *cb = cb_new(0, 0);

	memcpy(&c, &a, 4);
	for (int i = 0; i < 1000; i++) {
		px[i] = (float)i;
		py[i] = 10.0f;
	}
	ASSERT_OK(accel_command_buffer_dispatch(cb, exe, entry(exe, "saxpy"), wg, &c, 1, b, 2));
	ASSERT_OK(accel_command_buffer_end(cb));
	ASSERT_OK(run(cb, NULL));
	for (int i = 0; i < 1000; i++)
		ck_assert_msg(py[i] == 3.0f * (float)i + 10.0f, "y[%d] = %f", i, (double)py[i]);
	accel_command_buffer_release(cb);
	accel_buffer_release(x);
	accel_buffer_release(y);
}
END_TEST

START_TEST(test_dispatch_workgroup_ids_3d)
{
	accel_buffer_t *o = buffer_new(4 * 3 * 5 * 4);
	uint32_t *p = map(o), wg[3] = { 4, 3, 5 };
	accel_buffer_ref_t b[1] = { accel_buffer_ref_direct(o, 0, ACCEL_WHOLE_BUFFER) };
	accel_command_buffer_t *cb = cb_new(0, 0);

	memset(p, 0, 4 * 3 * 5 * 4);
	ASSERT_OK(accel_command_buffer_dispatch(cb, exe, entry(exe, "workgroup_ids"), wg, NULL, 0, b, 1));
	ASSERT_OK(accel_command_buffer_end(cb));
	ASSERT_OK(run(cb, NULL));
	for (uint32_t i = 0; i < 60; i++)
		ck_assert_uint_eq(p[i], i + 1);
	accel_command_buffer_release(cb);
	accel_buffer_release(o);
}
END_TEST

/* Dispatch A writes the workgroup count of dispatch B (after a barrier). */
START_TEST(test_dispatch_indirect_from_dispatch)
{
	accel_buffer_t *count = buffer_new(16), *o = buffer_new(64 * 4);
	uint32_t *po = map(o), one[3] = { 1, 1, 1 }, c3[3] = { 2, 2, 1 };
	accel_buffer_ref_t cb0[1] = { accel_buffer_ref_direct(count, 4, 12) };
	accel_buffer_ref_t ob[1] = { accel_buffer_ref_indirect(0, 0, ACCEL_WHOLE_BUFFER) };
	accel_binding_t t[1] = { { o, 0, ACCEL_WHOLE_BUFFER } };
	accel_binding_table_t table = { 1, t };
	accel_command_buffer_t *cb = cb_new(0, 1);

	memset(po, 0, 64 * 4);
	memset(map(count), 0, 16);
	ASSERT_OK(accel_command_buffer_dispatch(cb, exe, entry(exe, "write_count"), one, c3, 3, cb0, 1));
	ASSERT_OK(accel_command_buffer_barrier(cb));
	ASSERT_OK(accel_command_buffer_dispatch_indirect(cb, exe, entry(exe, "workgroup_ids"),
			accel_buffer_ref_direct(count, 4, 12), NULL, 0, ob, 1));
	ASSERT_OK(accel_command_buffer_end(cb));
	ASSERT_OK(run(cb, &table));
	for (uint32_t i = 0; i < 4; i++)
		ck_assert_uint_eq(po[i], i + 1);
	ck_assert_uint_eq(po[4], 0);
	accel_command_buffer_release(cb);
	accel_buffer_release(count);
	accel_buffer_release(o);
}
END_TEST

/* ---- no hidden limits ------------------------------------------------------ */

START_TEST(test_100000_commands)
{
	enum { N = 100000 };
	accel_buffer_t *b = buffer_new(N * 4);
	uint32_t *p = map(b);
	accel_command_buffer_t *cb = cb_new(0, 1);
	accel_binding_t t[1] = { { b, 0, ACCEL_WHOLE_BUFFER } };
	accel_binding_table_t table = { 1, t };
	uint32_t i;
	int ret = 0;

	memset(p, 0, N * 4);
	/* One assertion each for the lot (see test_expect_u32()). */
	for (i = 0; i < N && !ret; i++) {
		uint32_t v = i * 7 + 1;
		accel_buffer_ref_t r = i % 2 ? accel_buffer_ref_direct(b, i * 4, 4) :
					       accel_buffer_ref_indirect(0, i * 4, 4);

		ret = accel_command_buffer_fill(cb, r, &v, 4);
	}
	ASSERT_OK(ret);
	ASSERT_OK(accel_command_buffer_end(cb));
	ck_assert_uint_eq(accel_command_buffer_command_count(cb), N);
	ASSERT_OK(run(cb, &table));
	for (i = 0; i < N && p[i] == i * 7 + 1; i++)
		;
	ck_assert_msg(i == N, "p[%u] = %u", i, i < N ? p[i] : 0);
	accel_command_buffer_release(cb);
	accel_buffer_release(b);
}
END_TEST

START_TEST(test_512_dispatches_without_barrier)
{
	enum { N = 512, E = 64 };
	accel_buffer_t *b = buffer_new(N * E * 4);
	uint32_t *p = map(b), wg[3] = { 1, 1, 1 }, f = entry(exe, "fill_u32");
	accel_command_buffer_t *cb = cb_new(0, 0);

	memset(p, 0, N * E * 4);
	for (uint32_t i = 0; i < N; i++) {
		accel_buffer_ref_t r[1] = { accel_buffer_ref_direct(b, (uint64_t)i * E * 4, E * 4) };
		uint32_t v = 1000 + i;

		ASSERT_OK(accel_command_buffer_dispatch(cb, exe, f, wg, &v, 1, r, 1));
	}
	ASSERT_OK(accel_command_buffer_end(cb));
	ASSERT_OK(run(cb, NULL));
	for (uint32_t i = 0; i < N; i++)
		test_expect_u32(p + i * E, E, 1000 + i, "region");
	accel_command_buffer_release(cb);
	accel_buffer_release(b);
}
END_TEST

/* ---- reuse and binding tables ------------------------------------------------ */

/* One recorded add (slots 0 + 1 -> 2), submitted 8 times concurrently. */
START_TEST(test_reuse_concurrent_tables)
{
	enum { SUBS = 8, N = 256 };
	accel_command_buffer_t *cb = cb_new(ACCEL_COMMAND_BUFFER_REUSABLE, 3);
	accel_buffer_ref_t r[3] = { accel_buffer_ref_indirect(0, 0, ACCEL_WHOLE_BUFFER),
				    accel_buffer_ref_indirect(1, 0, ACCEL_WHOLE_BUFFER),
				    accel_buffer_ref_indirect(2, 0, ACCEL_WHOLE_BUFFER) };
	uint32_t wg[3] = { N / 64, 1, 1 };
	accel_semaphore_t *gate = sem_new(0), *done = sem_new(0);
	accel_buffer_t *in[SUBS], *out[SUBS], *shared = buffer_new(N * 4);
	uint32_t *ps = map(shared);

	for (int i = 0; i < N; i++)
		ps[i] = 100;
	ASSERT_OK(accel_command_buffer_dispatch(cb, exe, entry(exe, "add_u32"), wg, NULL, 0, r, 3));
	ASSERT_OK(accel_command_buffer_end(cb));
	for (int s = 0; s < SUBS; s++) {
		accel_binding_t t[3] = { { shared, 0, ACCEL_WHOLE_BUFFER }, { NULL, 0, N * 4 },
					 { NULL, 0, ACCEL_WHOLE_BUFFER } };
		accel_binding_table_t table = { 3, t };
		uint32_t *pi;
		POINT(w, gate, 1);
		POINT(sig, done, 0);

		in[s] = buffer_new(N * 4);
		out[s] = buffer_new(N * 4);
		pi = map(in[s]);
		for (int i = 0; i < N; i++)
			pi[i] = (uint32_t)(s * 1000 + i);
		memset(map(out[s]), 0, N * 4);
		t[1].buffer = in[s];
		t[2].buffer = out[s];
		sig_s[0] = sem_new(0);
		sig_v[0] = 1;
		ASSERT_OK(accel_queue_execute(queue, &w, &sig, cb, &table, 0));
		/* Each submission signals its own semaphore; keep them in done's place. */
		accel_semaphore_release(done);
		done = sig_s[0];
		memset(t, 0, sizeof(t)); /* the table was captured */
		{
			static accel_semaphore_t *keep[SUBS];

			keep[s] = done;
			accel_semaphore_retain(done);
			if (s == SUBS - 1) {
				ASSERT_OK(accel_semaphore_signal(gate, 1));
				for (int k = 0; k < SUBS; k++) {
					ASSERT_OK(accel_semaphore_wait(keep[k], 1, 0, WAIT_LONG));
					accel_semaphore_release(keep[k]);
				}
			}
		}
	}
	accel_command_buffer_release(cb); /* submissions held it */
	for (int s = 0; s < SUBS; s++) {
		uint32_t *po = map(out[s]);

		for (int i = 0; i < N; i++)
			ck_assert_msg(po[i] == (uint32_t)(s * 1000 + i + 100),
				      "submission %d: out[%d] = %u", s, i, po[i]);
		accel_buffer_release(in[s]);
		accel_buffer_release(out[s]);
	}
	accel_buffer_release(shared);
	accel_semaphore_release(done);
	accel_semaphore_release(gate);
}
END_TEST

/*
 * 100 submissions of one recorded add, each with its own table, back to
 * back with no wait between them: more than a backend keeps in flight at
 * once (vulkan: 32), so some wait for room. Each signals its own
 * semaphore (test_order_on_one_timeline checks order).
 */
START_TEST(test_many_in_flight)
{
	enum { SUBS = 100, N = 64 };
	accel_command_buffer_t *cb = cb_new(ACCEL_COMMAND_BUFFER_REUSABLE, 3);
	accel_buffer_ref_t r[3] = { accel_buffer_ref_indirect(0, 0, ACCEL_WHOLE_BUFFER),
				    accel_buffer_ref_indirect(1, 0, ACCEL_WHOLE_BUFFER),
				    accel_buffer_ref_indirect(2, 0, ACCEL_WHOLE_BUFFER) };
	uint32_t wg[3] = { N / 64, 1, 1 };
	accel_buffer_t *in[SUBS], *out[SUBS], *shared = buffer_new(N * 4);
	accel_semaphore_t *done[SUBS];
	uint32_t *ps = map(shared);
	int error;

	for (int i = 0; i < N; i++)
		ps[i] = 7;
	ASSERT_OK(accel_command_buffer_dispatch(cb, exe, entry(exe, "add_u32"), wg, NULL, 0, r, 3));
	ASSERT_OK(accel_command_buffer_end(cb));
	for (int s = 0; s < SUBS; s++) {
		accel_binding_t t[3] = { { shared, 0, ACCEL_WHOLE_BUFFER } };
		accel_binding_table_t table = { 3, t };
		uint32_t *pi;
		POINT(sig, done[s] = sem_new(0), 1);

		in[s] = buffer_new(N * 4);
		out[s] = buffer_new(N * 4);
		pi = map(in[s]);
		for (int i = 0; i < N; i++)
			pi[i] = (uint32_t)(s * 1000 + i);
		memset(map(out[s]), 0, N * 4);
		t[1] = (accel_binding_t){ in[s], 0, ACCEL_WHOLE_BUFFER };
		t[2] = (accel_binding_t){ out[s], 0, ACCEL_WHOLE_BUFFER };
		ASSERT_OK(accel_queue_execute(queue, NULL, &sig, cb, &table, 0));
	}
	for (int s = 0; s < SUBS; s++) {
		uint32_t *po = map(out[s]);

		ASSERT_OK(accel_semaphore_wait(done[s], 1, 0, WAIT_LONG));
		ck_assert_uint_eq(sem_value(done[s], &error), 1);
		ck_assert_int_eq(error, 0);
		accel_semaphore_release(done[s]);

		for (int i = 0; i < N; i++)
			ck_assert_msg(po[i] == (uint32_t)(s * 1000 + i + 7),
				      "submission %d: out[%d] = %u", s, i, po[i]);
		accel_buffer_release(in[s]);
		accel_buffer_release(out[s]);
	}
	accel_command_buffer_release(cb);
	accel_buffer_release(shared);
}
END_TEST

/*
 * Submission order among the runnable jobs of one queue is kept
 * (Documentation/sched.rst): 300 submissions with no waits, each
 * signalling the next value of one semaphore, more than the kernel
 * engine's credits and the vulkan flight limit. One run out of order
 * would signal a value at or below the semaphore's, which fails it with
 * EINVAL. With the kernel scheduler the releases come back as CQEs in no
 * set order (task work runs newest first on 6.1), and libaccel puts them
 * back by the numbers the module gives.
 */
START_TEST(test_order_on_one_timeline)
{
	enum { SUBS = 300 };
	accel_command_buffer_t *cb = cb_new(ACCEL_COMMAND_BUFFER_REUSABLE, 1);
	accel_buffer_t *b = buffer_new(4096);
	accel_semaphore_t *done = sem_new(0);
	uint32_t v = 0x5a5a5a5au;
	int error;

	ASSERT_OK(accel_command_buffer_fill(cb, accel_buffer_ref_indirect(0, 0, 4096), &v, 4));
	ASSERT_OK(accel_command_buffer_end(cb));
	for (int s = 0; s < SUBS; s++) {
		accel_binding_t t[1] = { { b, 0, ACCEL_WHOLE_BUFFER } };
		accel_binding_table_t table = { 1, t };
		POINT(sig, done, (uint64_t)s + 1);

		ASSERT_OK(accel_queue_execute(queue, NULL, &sig, cb, &table, 0));
	}
	ASSERT_OK(accel_semaphore_wait(done, SUBS, 0, WAIT_LONG));
	ck_assert_uint_eq(sem_value(done, &error), SUBS);
	ck_assert_msg(error == 0, "a submission ran out of order: the semaphore failed with %d", error);
	ck_assert_uint_eq(((uint32_t *)map(b))[1023], v);
	accel_command_buffer_release(cb);
	accel_buffer_release(b);
	accel_semaphore_release(done);
}
END_TEST

/*
 * A signal on one thread, and on another a submission that read the
 * signalled value while the signal may still be waking its waiters: the
 * submissions of the queue waiting on the point were runnable from the
 * moment it was reached, so they run first. Each earlier one fills the
 * word with 1, the later one with 2: the word ends at 2, or the later
 * one went ahead. On the module, a SUBMIT could before 2026-11-27 (see
 * sched.job_readied_by_a_signal_on_another_thread_goes_first).
 */
struct observed_gate {
	accel_queue_t *q;
	accel_semaphore_t *gate, *done;
	accel_command_buffer_t *two;
	_Atomic uint64_t go;
	_Atomic int failed;
	_Atomic bool stop;
};

static bool observed_gate_next(struct observed_gate *r, uint64_t i)
{
	while (atomic_load(&r->go) < i) {
		if (atomic_load(&r->stop))
			return false;
		sched_yield();
	}
	return true;
}

static void *observed_gate_signaller(void *arg)
{
	struct observed_gate *r = arg;

	for (uint64_t i = 1; observed_gate_next(r, i); i++)
		if (accel_semaphore_signal(r->gate, i))
			atomic_store(&r->failed, 1);
	return NULL;
}

static void *observed_gate_observer(void *arg)
{
	struct observed_gate *r = arg;

	for (uint64_t i = 1; observed_gate_next(r, i); i++) {
		uint64_t v = 0;
		int e = 0;
		POINT(sig, r->done, i);

		do {
			if (accel_semaphore_query(r->gate, &v, &e) || e)
				atomic_store(&r->failed, 1);
		} while (v < i && !atomic_load(&r->failed));
		if (accel_queue_execute(r->q, NULL, &sig, r->two, NULL, 0))
			atomic_store(&r->failed, 1);
	}
	return NULL;
}

START_TEST(test_signal_on_another_thread_orders_its_waiters_first)
{
	enum { ROUNDS = 150, WAITERS = 16 };
	accel_buffer_t *b = buffer_new(4);
	accel_command_buffer_t *one = cb_new(ACCEL_COMMAND_BUFFER_REUSABLE, 1);
	accel_semaphore_t *ones = sem_new(0);
	struct observed_gate r = {
		.q = queue, .gate = sem_new(0), .done = sem_new(0),
		.two = cb_new(ACCEL_COMMAND_BUFFER_REUSABLE, 1),
	};
	volatile uint32_t *word = map(b);
	uint32_t v1 = 1, v2 = 2;
	pthread_t ts, to;
	int wrong = 0;

	ASSERT_OK(accel_command_buffer_fill(one, accel_buffer_ref_direct(b, 0, 4), &v1, 4));
	ASSERT_OK(accel_command_buffer_end(one));
	ASSERT_OK(accel_command_buffer_fill(r.two, accel_buffer_ref_direct(b, 0, 4), &v2, 4));
	ASSERT_OK(accel_command_buffer_end(r.two));
	ck_assert_int_eq(pthread_create(&ts, NULL, observed_gate_signaller, &r), 0);
	ck_assert_int_eq(pthread_create(&to, NULL, observed_gate_observer, &r), 0);
	for (uint64_t i = 1; i <= ROUNDS && !atomic_load(&r.failed); i++) {
		POINT(w, r.gate, i);

		for (uint64_t k = 1; k <= WAITERS; k++) {
			POINT(sig, ones, (i - 1) * WAITERS + k);

			ASSERT_OK(accel_queue_execute(queue, &w, &sig, one, NULL, 0));
		}
		atomic_store(&r.go, i);
		ASSERT_OK(accel_semaphore_wait(ones, i * WAITERS, 0, WAIT_LONG));
		ASSERT_OK(accel_semaphore_wait(r.done, i, 0, WAIT_LONG));
		wrong += *word != 2;
	}
	atomic_store(&r.stop, true);
	pthread_join(ts, NULL);
	pthread_join(to, NULL);
	ck_assert_int_eq(atomic_load(&r.failed), 0);
	ck_assert_uint_eq(sem_value(r.done, NULL), ROUNDS);
	ck_assert_msg(wrong == 0, "%d of %d rounds ran the later submission before the earlier ones",
		      wrong, ROUNDS);
	accel_command_buffer_release(one);
	accel_command_buffer_release(r.two);
	accel_buffer_release(b);
	accel_semaphore_release(ones);
	accel_semaphore_release(r.gate);
	accel_semaphore_release(r.done);
}
END_TEST

/* The threads of this process. */
static int task_count(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/*
 * The same with nothing held at all: the device owns its scheduler (opened
 * with none), and no semaphore (each holds its scheduler) outlives the
 * release, so the job's drop of its queue destroys the device and, with
 * it, the scheduler, on the thread that completes the job. That thread
 * must not touch the scheduler afterwards: before the fix it did (ASan:
 * heap-use-after-free in job_complete(); without ASan it crashed). The
 * test waits until the library's threads of that device are gone, which
 * is when its last job has settled.
 *
 * The count to return to is taken after one device has run the same work
 * and been released once it was done: a driver may start threads of its
 * own on first use that live as long as the process (libcuda does at
 * cuInit, and again at the first host function on a stream), and those
 * are not the library's.
 */
static void fill_on_a_new_device(bool drain)
{
	accel_buffer_params_t p = { HOST_TYPE, ACCEL_BUFFER_USAGE_ALL };
	uint32_t v = 0x5a5a5a5au;
	accel_device_t *d = NULL;
	accel_queue_t *q = NULL;
	accel_command_buffer_t *cb = NULL;
	accel_buffer_t *b = NULL;

	ASSERT_OK(accel_device_open(test_device_uri(), NULL, &d));
	ASSERT_OK(accel_queue_create(d, 0, &q));
	ASSERT_OK(accel_allocator_allocate_buffer(accel_device_allocator(d), &p,
						  16 << 20, &b));
	ASSERT_OK(accel_command_buffer_create(d, ACCEL_COMMAND_BUFFER_ONE_SHOT, 0, &cb));
	ASSERT_OK(accel_command_buffer_begin(cb));
	for (int k = 0; k < 4; k++)
		ASSERT_OK(accel_command_buffer_fill(cb, accel_buffer_ref_direct(b, 0, ACCEL_WHOLE_BUFFER),
						    &v, 4));
	ASSERT_OK(accel_command_buffer_end(cb));
	ASSERT_OK(accel_queue_execute(q, NULL, NULL, cb, NULL, 0));
	if (drain)
		ASSERT_OK(accel_queue_wait_idle(q, WAIT_LONG));
	accel_command_buffer_release(cb);
	accel_buffer_release(b);
	accel_queue_release(q);
	accel_device_release(d);
}

START_TEST(test_release_all_in_flight_nothing_held)
{
	int before, now = 0;

	fill_on_a_new_device(true);
	before = task_count();
	for (int i = 0; i < 5; i++) {
		fill_on_a_new_device(false);
		for (int t = 0; t < 3000 && (now = task_count()) > before; t++)
			usleep(10000);
		ck_assert_msg(now <= before,
			      "round %d: %d threads 30 s after the release, %d before the device was opened",
			      i, now, before);
	}
}
END_TEST

/*
 * Everything released while its work is queued: the device, its queue, the
 * command buffer and the table's buffers live on in the submissions, which
 * drop them as they complete, before their signals (the last drop destroys
 * the device on whichever library thread completed it).
 */
START_TEST(test_release_all_in_flight)
{
	enum { SUBS = 40 };
	accel_buffer_params_t p = { HOST_TYPE, ACCEL_BUFFER_USAGE_ALL };
	accel_device_t *d = NULL;
	accel_queue_t *q = NULL;
	accel_command_buffer_t *cb = NULL;
	accel_buffer_t *b[2] = { NULL, NULL };
	accel_semaphore_t *gate = NULL, *done[SUBS];
	uint32_t v = 0xa5a5a5a5u;
	int error;

	ASSERT_OK(accel_device_open(test_device_uri(), NULL, &d));
	ASSERT_OK(accel_queue_create(d, 0, &q));
	for (int i = 0; i < 2; i++)
		ASSERT_OK(accel_allocator_allocate_buffer(accel_device_allocator(d), &p, 4096, &b[i]));
	ASSERT_OK(accel_command_buffer_create(d, ACCEL_COMMAND_BUFFER_REUSABLE, 1, &cb));
	ASSERT_OK(accel_command_buffer_begin(cb));
	ASSERT_OK(accel_command_buffer_fill(cb, accel_buffer_ref_indirect(0, 0, 4096), &v, 4));
	ASSERT_OK(accel_command_buffer_end(cb));
	ASSERT_OK(accel_semaphore_create(accel_device_scheduler(d), 0, &gate));
	for (int s = 0; s < SUBS; s++) {
		accel_binding_t t[1] = { { b[s & 1], 0, ACCEL_WHOLE_BUFFER } };
		accel_binding_table_t table = { 1, t };
		POINT(w, gate, 1);
		POINT(sig, NULL, 1);

		ASSERT_OK(accel_semaphore_create(accel_device_scheduler(d), 0, &done[s]));
		sig_s[0] = done[s];

		ASSERT_OK(accel_queue_execute(q, &w, &sig, cb, &table, 0));
	}
	accel_command_buffer_release(cb);
	accel_buffer_release(b[0]);
	accel_buffer_release(b[1]);
	accel_queue_release(q);
	accel_device_release(d);
	ASSERT_OK(accel_semaphore_signal(gate, 1));
	for (int s = 0; s < SUBS; s++) {
		ASSERT_OK(accel_semaphore_wait(done[s], 1, 0, WAIT_LONG));
		ck_assert_uint_eq(sem_value(done[s], &error), 1);
		ck_assert_int_eq(error, 0);
		accel_semaphore_release(done[s]);
	}
	accel_semaphore_release(gate);
}
END_TEST

/* The table's buffers and the command buffer stay alive until the signal. */
START_TEST(test_table_retained_until_signal)
{
	accel_buffer_t *src = buffer_new(16), *dst = buffer_new(16);
	uint32_t *ps = map(src), *pd = map(dst);
	accel_command_buffer_t *cb = cb_new(0, 1);
	accel_binding_t t[1] = { { src, 0, 16 } };
	accel_binding_table_t table = { 1, t };
	accel_semaphore_t *gate = sem_new(0), *done = sem_new(0);
	POINT(w, gate, 1);
	POINT(sig, done, 1);

	test_expect_u32(ps, 0, 0, "");
	for (int i = 0; i < 4; i++)
		ps[i] = 0x5a5a0000u + (uint32_t)i;
	memset(pd, 0, 16);
	ASSERT_OK(accel_command_buffer_copy(cb, accel_buffer_ref_indirect(0, 0, 16),
					    accel_buffer_ref_direct(dst, 0, 16)));
	ASSERT_OK(accel_command_buffer_end(cb));
	ASSERT_OK(accel_queue_execute(queue, &w, &sig, cb, &table, 0));
	accel_buffer_release(src);
	accel_command_buffer_release(cb);
	ASSERT_OK(accel_semaphore_signal(gate, 1));
	ASSERT_OK(accel_semaphore_wait(done, 1, 0, WAIT_LONG));
	for (int i = 0; i < 4; i++)
		ck_assert_uint_eq(pd[i], 0x5a5a0000u + (uint32_t)i);
	accel_buffer_release(dst);
	accel_semaphore_release(gate);
	accel_semaphore_release(done);
}
END_TEST

/* ---- ordering, failures ----------------------------------------------------- */

/* A submission waiting on an unreached point does not hold back later ones. */
START_TEST(test_no_head_of_line_blocking)
{
	accel_semaphore_t *gate = sem_new(0), *a = sem_new(0), *b = sem_new(0);
	POINT(w, gate, 1);
	POINT(sa, a, 1);
	POINT(sb, b, 1);

	ASSERT_OK(accel_queue_barrier(queue, &w, &sa, 0));
	ASSERT_OK(accel_queue_barrier(queue, NULL, &sb, 0));
	ASSERT_OK(accel_semaphore_wait(b, 1, 0, WAIT_LONG));
	ck_assert_uint_eq(sem_value(a, NULL), 0);
	/* Its signal was promised at submit: wait-for-submitted returns at once. */
	ASSERT_OK(accel_semaphore_wait(a, 1, ACCEL_SEMAPHORE_WAIT_SUBMITTED, 0));
	ASSERT_ERRNO(accel_semaphore_wait(a, 2, ACCEL_SEMAPHORE_WAIT_SUBMITTED, 0), ETIME);
	ASSERT_OK(accel_semaphore_signal(gate, 1));
	ASSERT_OK(accel_semaphore_wait(a, 1, 0, WAIT_LONG));
	accel_semaphore_release(gate);
	accel_semaphore_release(a);
	accel_semaphore_release(b);
}
END_TEST

/* Wait-for-submitted from another thread, before the promise exists. */
struct submitted_waiter {
	accel_semaphore_t *s;
	int ret;
};

static void *submitted_main(void *arg)
{
	struct submitted_waiter *w = arg;

	w->ret = accel_semaphore_wait(w->s, 4, ACCEL_SEMAPHORE_WAIT_SUBMITTED, WAIT_LONG);
	return NULL;
}

START_TEST(test_wait_for_submitted)
{
	accel_semaphore_t *gate = sem_new(0), *s = sem_new(0);
	struct submitted_waiter sw = { s, 1 };
	POINT(w, gate, 1);
	POINT(sig, s, 4);
	pthread_t t;

	ck_assert_int_eq(pthread_create(&t, NULL, submitted_main, &sw), 0);
	usleep(10000);
	ASSERT_OK(accel_queue_barrier(queue, &w, &sig, 0));
	pthread_join(t, NULL);
	ck_assert_int_eq(sw.ret, 0);
	ck_assert_uint_eq(sem_value(s, NULL), 0); /* submitted, not reached */
	ASSERT_OK(accel_semaphore_signal(gate, 1));
	ASSERT_OK(accel_semaphore_wait(s, 4, 0, WAIT_LONG));
	accel_semaphore_release(gate);
	accel_semaphore_release(s);
}
END_TEST

START_TEST(test_chain_across_queues)
{
	accel_queue_t *q2;
	accel_semaphore_t *s1 = sem_new(0), *s2 = sem_new(0), *s3 = sem_new(0);
	POINT(w1, s1, 1);
	POINT(p2, s2, 1);
	POINT(p3, s3, 1);

	ASSERT_OK(accel_queue_create(dev, 0, &q2));
	ASSERT_OK(accel_queue_barrier(q2, &p2, &p3, 0)); /* submitted first */
	ASSERT_OK(accel_queue_barrier(queue, &w1, &p2, 0));
	ASSERT_ERRNO(accel_semaphore_wait(s3, 1, 0, accel_deadline_after(SECOND / 100)), ETIME);
	ASSERT_OK(accel_semaphore_signal(s1, 1));
	ASSERT_OK(accel_semaphore_wait(s3, 1, 0, WAIT_LONG));
	accel_queue_release(q2);
	accel_semaphore_release(s1);
	accel_semaphore_release(s2);
	accel_semaphore_release(s3);
}
END_TEST

/* Drops the last references to s[1] and s[2], then signals s[0]. */
static void *drop_then_signal(void *arg)
{
	accel_semaphore_t **s = arg;
	struct timespec ts = { 0, 30 * 1000 * 1000 };

	nanosleep(&ts, NULL);
	accel_semaphore_release(s[1]);
	accel_semaphore_release(s[2]);
	accel_semaphore_signal(s[0], 1);
	return NULL;
}

/*
 * A list wait holds its semaphores: another thread drops their last
 * references while it sleeps, then wakes it through a barrier that still
 * signals one of them (the submission's own reference).
 */
START_TEST(test_release_during_list_wait)
{
	accel_semaphore_t *s[3] = { sem_new(0), sem_new(0), sem_new(0) };
	accel_semaphore_t *waited[2] = { s[1], s[2] };
	uint64_t v[2] = { 1, 1 };
	accel_semaphore_list_t list = { 2, waited, v };
	uint32_t index = 99;
	POINT(w, s[0], 1);
	POINT(sig, s[1], 1);
	pthread_t t;

	ASSERT_OK(accel_queue_barrier(queue, &w, &sig, 0));
	ck_assert_int_eq(pthread_create(&t, NULL, drop_then_signal, s), 0);
	ASSERT_OK(accel_semaphore_list_wait(&list, 0, WAIT_LONG, &index));
	ck_assert_uint_eq(index, 0);
	pthread_join(t, NULL);
	accel_semaphore_release(s[0]);
}
END_TEST

/* A failed wait: the work is not run, its signals fail with that error. */
START_TEST(test_failed_wait_propagates)
{
	accel_buffer_t *b = buffer_new(16);
	uint32_t *p = map(b), v = 0xffffffff;
	accel_command_buffer_t *cb = cb_new(0, 0);
	accel_semaphore_t *gate = sem_new(0), *s1 = sem_new(0), *s2 = sem_new(0), *s3 = sem_new(0);
	accel_semaphore_t *sigs[2] = { s1, s2 };
	uint64_t vals[2] = { 1, 5 };
	accel_semaphore_list_t sig = { 2, sigs, vals };
	POINT(w, gate, 1);
	POINT(w2, s2, 5);
	POINT(sig3, s3, 1);
	int error;

	memset(p, 0, 16);
	ASSERT_OK(accel_command_buffer_fill(cb, accel_buffer_ref_direct(b, 0, 16), &v, 4));
	ASSERT_OK(accel_command_buffer_end(cb));
	ASSERT_OK(accel_queue_execute(queue, &w, &sig, cb, NULL, 0));
	/* A second submission downstream: the failure travels on. */
	ASSERT_OK(accel_queue_execute(queue, &w2, &sig3, cb, NULL, 0));
	ASSERT_OK(accel_semaphore_fail(gate, -ECONNRESET));
	ASSERT_ERRNO(accel_semaphore_wait(s1, 1, 0, WAIT_LONG), ECONNRESET);
	ASSERT_MESSAGE_CONTAINS("was not run: its wait 0 (value 1) failed with ECONNRESET");
	ASSERT_ERRNO(accel_semaphore_wait(s3, 1, 0, WAIT_LONG), ECONNRESET);
	sem_value(s2, &error);
	ck_assert_int_eq(error, -ECONNRESET);
	test_expect_u32(p, 4, 0, "buffer"); /* nothing ran */
	ASSERT_CONTAINS("s3 failure", accel_semaphore_failure_message(s3), "was not run");
	accel_command_buffer_release(cb);
	accel_buffer_release(b);
	accel_semaphore_release(gate);
	accel_semaphore_release(s1);
	accel_semaphore_release(s2);
	accel_semaphore_release(s3);
}
END_TEST

/* A failing command: its index in the message, later commands not run. */
START_TEST(test_failed_command_index)
{
	accel_buffer_t *count = buffer_new(12), *o = buffer_new(16);
	uint32_t *pc = map(count), *po = map(o), v = 7;
	accel_buffer_ref_t ob[1] = { accel_buffer_ref_direct(o, 0, 4) };
	accel_command_buffer_t *cb = cb_new(0, 0);
	accel_semaphore_t *s = sem_new(0);
	POINT(sig, s, 1);
	int error;

	pc[0] = 1;
	pc[1] = ACCEL_WORKGROUP_COUNT_MAX + 1;
	pc[2] = 1;
	memset(po, 0, 16);
	ASSERT_OK(accel_command_buffer_fill(cb, accel_buffer_ref_direct(o, 4, 4), &v, 4));
	ASSERT_OK(accel_command_buffer_barrier(cb));
	ASSERT_OK(accel_command_buffer_dispatch_indirect(cb, exe, entry(exe, "increment"),
			accel_buffer_ref_direct(count, 0, 12), NULL, 0, ob, 1));
	ASSERT_OK(accel_command_buffer_fill(cb, accel_buffer_ref_direct(o, 8, 4), &v, 4));
	ASSERT_OK(accel_command_buffer_end(cb));
	ASSERT_OK(accel_queue_execute(queue, NULL, &sig, cb, NULL, 0));
	ASSERT_ERRNO(accel_semaphore_wait(s, 1, 0, WAIT_LONG), ERANGE);
	ASSERT_MESSAGE_CONTAINS("command 2 (dispatch_indirect) failed with ERANGE");
	ASSERT_MESSAGE_CONTAINS("(1, 65536, 1)");
	sem_value(s, &error);
	ck_assert_int_eq(error, -ERANGE);
	{
		char want[128];

		snprintf(want, sizeof(want), "submission #1 on a queue of %s: command 2",
			 accel_device_uri(dev));
		ASSERT_CONTAINS("failure", accel_semaphore_failure_message(s), want);
	}
	ck_assert_uint_eq(po[1], 7); /* command 0 ran */
	ck_assert_uint_eq(po[0], 0); /* command 2 did not */
	ck_assert_uint_eq(po[2], 0); /* command 3 did not */
	accel_command_buffer_release(cb);
	accel_buffer_release(count);
	accel_buffer_release(o);
	accel_semaphore_release(s);
}
END_TEST

/*
 * A failure travels down a chain of 50 submissions, each not run because
 * the one before failed: the message at the end still names the first
 * failure, the failing command and what was wrong with it, however long
 * the chain (each hop once prepended its text, and the 1,023-byte message
 * lost the cause after about ten).
 */
START_TEST(test_failure_chain_keeps_cause)
{
	enum { CHAIN = 50 };
	accel_buffer_t *count = buffer_new(12), *o = buffer_new(16);
	uint32_t *pc = map(count);
	accel_buffer_ref_t ob[1] = { accel_buffer_ref_direct(o, 0, 4) };
	accel_command_buffer_t *cb = cb_new(0, 0);
	accel_semaphore_t *s[CHAIN];
	char first[128], last[128];
	const char *m;
	int error;

	for (int i = 0; i < CHAIN; i++)
		s[i] = sem_new(0);
	pc[0] = 1;
	pc[1] = ACCEL_WORKGROUP_COUNT_MAX + 1;
	pc[2] = 1;
	ASSERT_OK(accel_command_buffer_dispatch_indirect(cb, exe, entry(exe, "increment"),
			accel_buffer_ref_direct(count, 0, 12), NULL, 0, ob, 1));
	ASSERT_OK(accel_command_buffer_end(cb));
	for (int i = 1; i < CHAIN; i++) { /* submission #i+1: s[i-1] -> s[i] */
		POINT(w, s[i - 1], 1);
		POINT(sig, s[i], 1);

		ASSERT_OK(accel_queue_barrier(queue, &w, &sig, 0));
	}
	{
		POINT(sig, s[0], 1);

		ASSERT_OK(accel_queue_execute(queue, NULL, &sig, cb, NULL, 0)); /* #50 */
	}
	ASSERT_ERRNO(accel_semaphore_wait(s[CHAIN - 1], 1, 0, WAIT_LONG), ERANGE);
	sem_value(s[CHAIN - 1], &error);
	ck_assert_int_eq(error, -ERANGE);
	snprintf(first, sizeof(first), "submission #%d on a queue of %s: command 0 (dispatch_indirect) failed with ERANGE",
		 CHAIN, accel_device_uri(dev));
	snprintf(last, sizeof(last), "submission #%d on a queue of %s was not run",
		 CHAIN - 1, accel_device_uri(dev));
	m = accel_semaphore_failure_message(s[CHAIN - 1]);
	ASSERT_CONTAINS("last failure", m, last);
	ASSERT_CONTAINS("last failure", m, first);
	ASSERT_CONTAINS("last failure", m, "the workgroup count read from its buffer is (1, 65536, 1)");
	ASSERT_CONTAINS("last failure", m, "submissions)");
	ASSERT_MESSAGE_CONTAINS(first);
	ASSERT_MESSAGE_CONTAINS("(1, 65536, 1)");
	accel_command_buffer_release(cb);
	accel_buffer_release(count);
	accel_buffer_release(o);
	for (int i = 0; i < CHAIN; i++)
		accel_semaphore_release(s[i]);
}
END_TEST

/* A submission cannot move a timeline back: the semaphore fails, loudly. */
START_TEST(test_signal_not_above_current)
{
	accel_semaphore_t *gate = sem_new(0), *s = sem_new(0);
	POINT(w, gate, 1);
	POINT(sig, s, 2);
	int error;

	ASSERT_OK(accel_queue_barrier(queue, &w, &sig, 0));
	ASSERT_OK(accel_semaphore_signal(s, 3));
	ASSERT_OK(accel_semaphore_signal(gate, 1));
	ASSERT_ERRNO(accel_semaphore_wait(s, 4, 0, WAIT_LONG), EINVAL);
	ASSERT_MESSAGE_CONTAINS("could not signal 2: the semaphore is already at 3");
	ck_assert_uint_eq(sem_value(s, &error), 3);
	ck_assert_int_eq(error, -EINVAL);
	accel_semaphore_release(gate);
	accel_semaphore_release(s);
}
END_TEST

/*
 * Whatever took the timeline to a job's point first, the job's own signal
 * then fails, on either scheduler: a host signal to exactly that value,
 * another job's signal of the same value or of a higher one completing
 * first, or the semaphore's initial value. @base shifts every value, to
 * try the compares at 2^63 (signed) and at the top of the range.
 */
enum passed_by { BY_HOST, BY_SAME_VALUE, BY_HIGHER_VALUE, BY_INITIAL_VALUE };

static void signal_passed_by(enum passed_by how, uint64_t base)
{
	const uint64_t mine = base + 2, other = how == BY_HIGHER_VALUE ? base + 3 : mine;
	accel_semaphore_t *gate = sem_new(0);
	accel_semaphore_t *s = sem_new(how == BY_INITIAL_VALUE ? mine : base);
	accel_queue_t *q2;
	char want[128];
	POINT(w, gate, 1);
	POINT(sig, s, mine);
	POINT(sig2, s, other);
	int error;

	ASSERT_OK(accel_queue_create(dev, 0, &q2));
	ASSERT_OK(accel_queue_barrier(queue, &w, &sig, 0));
	if (how == BY_HOST)
		ASSERT_OK(accel_semaphore_signal(s, mine));
	else if (how != BY_INITIAL_VALUE)
		ASSERT_OK(accel_queue_barrier(q2, NULL, &sig2, 0));
	ASSERT_OK(accel_semaphore_wait(s, other, 0, WAIT_LONG));
	ASSERT_OK(accel_semaphore_signal(gate, 1));
	/* A wait past what it holds ends only with the job's failure. */
	ASSERT_ERRNO(accel_semaphore_wait(s, other + 1, 0, WAIT_LONG), EINVAL);
	snprintf(want, sizeof(want),
		 "could not signal %" PRIu64 ": the semaphore is already at %" PRIu64,
		 mine, other);
	ASSERT_MESSAGE_CONTAINS(want);
	ck_assert_uint_eq(sem_value(s, &error), other);
	ck_assert_int_eq(error, -EINVAL);
	accel_queue_release(q2);
	accel_semaphore_release(gate);
	accel_semaphore_release(s);
}

/* The top one puts the wait past them at UINT64_MAX itself. */
static const uint64_t passed_bases[] = { 0, (UINT64_C(1) << 63) - 2, UINT64_MAX - 4 };

START_TEST(test_signal_passed_by_host_at_its_value)
{
	signal_passed_by(BY_HOST, passed_bases[_i]);
}
END_TEST

START_TEST(test_signal_passed_by_a_job_of_the_same_value)
{
	signal_passed_by(BY_SAME_VALUE, passed_bases[_i]);
}
END_TEST

START_TEST(test_signal_passed_by_a_job_of_a_higher_value)
{
	signal_passed_by(BY_HIGHER_VALUE, passed_bases[_i]);
}
END_TEST

START_TEST(test_signal_at_the_initial_value)
{
	signal_passed_by(BY_INITIAL_VALUE, passed_bases[_i]);
}
END_TEST

/* Nothing passed it: a job's signal of a value below another's pending one. */
START_TEST(test_signal_below_a_pending_higher_one)
{
	accel_semaphore_t *gate = sem_new(0), *s = sem_new(0);
	accel_queue_t *q2;
	POINT(w, gate, 1);
	POINT(sig2, s, 2);
	POINT(sig3, s, 3);
	int error;

	ASSERT_OK(accel_queue_create(dev, 0, &q2));
	ASSERT_OK(accel_queue_barrier(q2, &w, &sig3, 0)); /* asks 3, gated */
	ASSERT_OK(accel_queue_barrier(queue, NULL, &sig2, 0));
	ASSERT_OK(accel_semaphore_wait(s, 2, 0, WAIT_LONG));
	ASSERT_OK(accel_semaphore_signal(gate, 1));
	ASSERT_OK(accel_semaphore_wait(s, 3, 0, WAIT_LONG));
	ck_assert_uint_eq(sem_value(s, &error), 3);
	ck_assert_int_eq(error, 0);
	accel_queue_release(q2);
	accel_semaphore_release(gate);
	accel_semaphore_release(s);
}
END_TEST

START_TEST(test_execute_errors)
{
	accel_scheduler_t *other;
	accel_semaphore_t *os, *s = sem_new(0);
	accel_semaphore_t *many[ACCEL_SEMAPHORE_LIST_MAX + 1];
	uint64_t vals[ACCEL_SEMAPHORE_LIST_MAX + 1] = { 0 };
	accel_semaphore_list_t big = { ACCEL_SEMAPHORE_LIST_MAX + 1, many, vals };
	accel_device_t *d2;
	accel_command_buffer_t *cb;
	accel_queue_t *q;
	POINT(sig, s, 1);

	for (uint32_t i = 0; i <= ACCEL_SEMAPHORE_LIST_MAX; i++)
		many[i] = s;
	ASSERT_ERRNO(accel_queue_execute(NULL, NULL, &sig, NULL, NULL, 0), EINVAL);
	ASSERT_MESSAGE_CONTAINS("accel_queue_execute: queue is NULL");
	ASSERT_ERRNO(accel_queue_barrier(queue, NULL, &sig, 4), EINVAL);
	ASSERT_MESSAGE_CONTAINS("accel_queue_barrier: flags 0x4");
	ASSERT_ERRNO(accel_queue_barrier(queue, &big, &sig, 0), EINVAL);
	ASSERT_MESSAGE_CONTAINS("waits has 1025 entries");
	ASSERT_ERRNO(accel_queue_barrier(queue, NULL, &big, 0), EINVAL);
	ASSERT_MESSAGE_CONTAINS("signals has 1025 entries");
	ASSERT_OK(accel_scheduler_open(NULL, &other));
	ASSERT_OK(accel_semaphore_create(other, 0, &os));
	{
		POINT(w, os, 1);

		ASSERT_ERRNO(accel_queue_barrier(queue, &w, &sig, 0), EXDEV);
		ASSERT_MESSAGE_CONTAINS("waits entry 0: the semaphore belongs to another scheduler than the queue's device");
	}
	ASSERT_OK(accel_device_open(test_device_uri(), NULL, &d2));
	ASSERT_OK(accel_command_buffer_create(d2, 0, 0, &cb));
	ASSERT_OK(accel_command_buffer_begin(cb));
	ASSERT_OK(accel_command_buffer_end(cb));
	ASSERT_ERRNO(accel_queue_execute(queue, NULL, &sig, cb, NULL, 0), EXDEV);
	{
		char want[128];

		snprintf(want, sizeof(want), "the command buffer is for device %s, but the queue for %s",
			 accel_device_uri(dev), accel_device_uri(dev));
		ASSERT_MESSAGE_CONTAINS(want);
		/* One URI twice says nothing: the message says why (outside test). */
		ASSERT_MESSAGE_CONTAINS("two devices opened from the same URI");
	}
	ASSERT_ERRNO(accel_queue_create(dev, 1, &q), EINVAL);
	ASSERT_MESSAGE_CONTAINS("accel_queue_create: flags 0x1");
	/* Nothing was submitted: s was never promised. */
	ASSERT_ERRNO(accel_semaphore_wait(s, 1, ACCEL_SEMAPHORE_WAIT_SUBMITTED, 0), ETIME);
	accel_command_buffer_release(cb);
	accel_device_release(d2);
	accel_semaphore_release(os);
	accel_semaphore_release(s);
	accel_scheduler_release(other);
}
END_TEST

/* ---- batches --------------------------------------------------------------- */

/* A REUSABLE command buffer: fill slot 0's first 16 bytes with @v. */
static accel_command_buffer_t *cb_fill_slot0(uint32_t v)
{
	accel_command_buffer_t *cb = cb_new(ACCEL_COMMAND_BUFFER_REUSABLE, 1);

	ASSERT_OK(accel_command_buffer_fill(cb, accel_buffer_ref_indirect(0, 0, 16), &v, 4));
	ASSERT_OK(accel_command_buffer_end(cb));
	return cb;
}

/*
 * Several command buffers, each with its own table, run in order between
 * one wait and one signal: a copy reads what the fill before it wrote, the
 * same command buffer runs twice with two tables, and one without a table
 * sits among them.
 */
START_TEST(test_batch_order_and_tables)
{
	accel_buffer_t *x = buffer_new(16), *y = buffer_new(16), *z = buffer_new(16),
		       *d = buffer_new(16);
	uint32_t *px = map(x), *py = map(y), *pz = map(z), *pd = map(d), v = 0xa1b2c3d4, w = 7;
	accel_command_buffer_t *fill = cb_fill_slot0(v);
	accel_command_buffer_t *copy = cb_new(ACCEL_COMMAND_BUFFER_REUSABLE, 2);
	accel_command_buffer_t *direct = cb_new(ACCEL_COMMAND_BUFFER_REUSABLE, 0);
	accel_binding_t bx[1] = { { x, 0, 16 } }, bz[1] = { { z, 0, 16 } },
			bxy[2] = { { x, 0, 16 }, { y, 0, 16 } };
	accel_semaphore_t *gate = sem_new(0), *s = sem_new(0);
	POINT(wait, gate, 1);
	POINT(sig, s, 1);

	ASSERT_OK(accel_command_buffer_copy(copy, accel_buffer_ref_indirect(0, 0, 16),
					    accel_buffer_ref_indirect(1, 0, 16)));
	ASSERT_OK(accel_command_buffer_end(copy));
	ASSERT_OK(accel_command_buffer_fill(direct, accel_buffer_ref_direct(d, 0, 16), &w, 4));
	ASSERT_OK(accel_command_buffer_end(direct));
	for (int round = 0; round < 20; round++) {
		accel_command_buffer_t *cbs[4] = { fill, copy, direct, fill };
		accel_binding_table_t tables[4] = { { 1, bx }, { 2, bxy }, { 0, NULL }, { 1, bz } };
		int error;

		memset(px, 0, 16);
		memset(py, 0, 16);
		memset(pz, 0, 16);
		memset(pd, 0, 16);
		ASSERT_OK(accel_queue_execute_batch(queue, &wait, &sig, 4, cbs, tables, 0));
		/* Waits first: nothing ran. */
		ck_assert_uint_eq(sem_value(s, NULL), 0);
		ck_assert_uint_eq(px[0], 0);
		ASSERT_OK(accel_semaphore_signal(gate, 1));
		ASSERT_OK(accel_semaphore_wait(s, 1, 0, WAIT_LONG));
		test_expect_u32(px, 4, v, "x");
		test_expect_u32(py, 4, v, "y (copied from x after its fill)");
		test_expect_u32(pz, 4, v, "z (the fill again, with the second table)");
		test_expect_u32(pd, 4, w, "d (no table)");
		ck_assert_uint_eq(sem_value(s, &error), 1);
		ck_assert_int_eq(error, 0);
		accel_semaphore_release(gate);
		accel_semaphore_release(s);
		gate = sem_new(0);
		s = sem_new(0);
		wait_s[0] = gate;
		sig_s[0] = s;
	}
	accel_semaphore_release(gate);
	accel_semaphore_release(s);
	accel_command_buffer_release(fill);
	accel_command_buffer_release(copy);
	accel_command_buffer_release(direct);
	accel_buffer_release(x);
	accel_buffer_release(y);
	accel_buffer_release(z);
	accel_buffer_release(d);
}
END_TEST

/*
 * 300 command buffers of one increment each: each starts after the one
 * before it ended (a read-modify-write of one counter would lose counts
 * otherwise), and a batch longer than the drivers' in-flight limits runs
 * through (vulkan continues a batch from its waiter thread, which must
 * not wait for room it alone makes).
 */
START_TEST(test_batch_long_in_order)
{
	enum { N = 300 };
	accel_buffer_t *c = buffer_new(4);
	uint32_t *pc = map(c);
	accel_command_buffer_t *inc = cb_new(ACCEL_COMMAND_BUFFER_REUSABLE, 1);
	accel_buffer_ref_t b[1] = { accel_buffer_ref_indirect(0, 0, 4) };
	const uint32_t one[3] = { 1, 1, 1 };
	accel_binding_t bc[1] = { { c, 0, 4 } };
	static accel_command_buffer_t *cbs[N];
	static accel_binding_table_t tables[N];
	accel_semaphore_t *s = sem_new(0);
	POINT(sig, s, 1);

	*pc = 0;
	ASSERT_OK(accel_command_buffer_dispatch(inc, exe, entry(exe, "increment"), one, NULL, 0, b, 1));
	ASSERT_OK(accel_command_buffer_end(inc));
	for (int i = 0; i < N; i++) {
		cbs[i] = inc;
		tables[i] = (accel_binding_table_t){ 1, bc };
	}
	ASSERT_OK(accel_queue_execute_batch(queue, NULL, &sig, N, cbs, tables, 0));
	/* Another submission on the queue meanwhile: batches do not starve it. */
	ck_assert_int_eq(run(inc, &(accel_binding_table_t){ 1, bc }), 0);
	ASSERT_OK(accel_semaphore_wait(s, 1, 0, WAIT_LONG));
	ASSERT_OK(accel_queue_wait_idle(queue, WAIT_LONG));
	ck_assert_uint_eq(*pc, N + 1);
	accel_semaphore_release(s);
	accel_command_buffer_release(inc);
	accel_buffer_release(c);
}
END_TEST

struct flooder {
	accel_queue_t *q;
	accel_command_buffer_t *cb;
	accel_buffer_t *counter;
	accel_semaphore_t *done;        /* submission i signals i + 1 */
	int failed;
	char why[256];                  /* the first refusal's message */
};

static void *flood_main(void *arg)
{
	struct flooder *f = arg;
	accel_binding_t bc[1] = { { f->counter, 0, 4 } };
	accel_binding_table_t t = { 1, bc };

	for (uint64_t i = 0; i < 200; i++) {
		POINT(sig, f->done, i + 1);

		if (accel_queue_execute(f->q, NULL, &sig, f->cb, &t, 0) &&
		    !f->failed++)
			snprintf(f->why, sizeof(f->why), "%s", accel_error_message());
	}
	return NULL;
}

/*
 * A batch runs while three other queues flood the device with
 * submissions, so that the drivers' in-flight limits are reached while it
 * goes from one command buffer to the next: every submission completes
 * (on vulkan the waiter thread continues the batch, and had it waited for
 * room at the limit, it could have waited for itself).
 */
START_TEST(test_batch_under_flood)
{
	enum { N = 200, FLOODERS = 3 };
	accel_buffer_t *c = buffer_new(4);
	uint32_t *pc = map(c);
	accel_command_buffer_t *inc = cb_new(ACCEL_COMMAND_BUFFER_REUSABLE, 1);
	accel_buffer_ref_t b[1] = { accel_buffer_ref_indirect(0, 0, 4) };
	const uint32_t one[3] = { 1, 1, 1 };
	accel_binding_t bc[1] = { { c, 0, 4 } };
	static accel_command_buffer_t *cbs[N];
	static accel_binding_table_t tables[N];
	struct flooder f[FLOODERS];
	pthread_t th[FLOODERS];
	accel_semaphore_t *s = sem_new(0);
	POINT(sig, s, 1);

	*pc = 0;
	ASSERT_OK(accel_command_buffer_dispatch(inc, exe, entry(exe, "increment"), one, NULL, 0, b, 1));
	ASSERT_OK(accel_command_buffer_end(inc));
	for (int i = 0; i < N; i++) {
		cbs[i] = inc;
		tables[i] = (accel_binding_table_t){ 1, bc };
	}
	for (int i = 0; i < FLOODERS; i++) {
		f[i] = (struct flooder){ .cb = inc, .counter = buffer_new(4), .done = sem_new(0) };
		*(uint32_t *)map(f[i].counter) = 0;
		ASSERT_OK(accel_queue_create(dev, 0, &f[i].q));
		ck_assert_int_eq(pthread_create(&th[i], NULL, flood_main, &f[i]), 0);
	}
	ASSERT_OK(accel_queue_execute_batch(queue, NULL, &sig, N, cbs, tables, 0));
	for (int i = 0; i < FLOODERS; i++)
		pthread_join(th[i], NULL);
	ASSERT_OK(accel_semaphore_wait(s, 1, 0, WAIT_LONG));
	ck_assert_uint_eq(*pc, N);
	for (int i = 0; i < FLOODERS; i++) {
		uint64_t v;
		int e;

		ASSERT_OK(accel_queue_wait_idle(f[i].q, WAIT_LONG));
		ck_assert_msg(f[i].failed == 0, "flooder %d: %d submissions refused, the first: %s",
			      i, f[i].failed, f[i].why);
		/* Idle means every submission ended: each says how. */
		ASSERT_OK(accel_semaphore_query(f[i].done, &v, &e));
		ck_assert_msg(e == 0 && v == 200, "flooder %d: its semaphore is at %" PRIu64 " (error %d): %s",
			      i, v, e, accel_semaphore_failure_message(f[i].done));
		ck_assert_uint_eq(*(uint32_t *)map(f[i].counter), 200);
		accel_queue_release(f[i].q);
		accel_buffer_release(f[i].counter);
		accel_semaphore_release(f[i].done);
	}
	accel_semaphore_release(s);
	accel_command_buffer_release(inc);
	accel_buffer_release(c);
}
END_TEST

/*
 * The first command buffer that fails ends the batch: the message names
 * it (its index) and its command, the ones after it do not run, the ones
 * before it did.
 */
START_TEST(test_batch_failure_names_command_buffer)
{
	accel_buffer_t *count = buffer_new(12), *o = buffer_new(16), *e = buffer_new(16),
		       *late = buffer_new(16);
	uint32_t *pc = map(count), *po = map(o), *pe = map(e), *pl = map(late), v = 7;
	accel_buffer_ref_t ob[1] = { accel_buffer_ref_direct(o, 0, 4) };
	accel_command_buffer_t *bad = cb_new(0, 0), *early = cb_fill_slot0(v),
			       *after = cb_fill_slot0(v);
	accel_binding_t be[1] = { { e, 0, 16 } }, bl[1] = { { late, 0, 16 } };
	accel_command_buffer_t *cbs[3] = { early, bad, after };
	accel_binding_table_t tables[3] = { { 1, be }, { 0, NULL }, { 1, bl } };
	accel_semaphore_t *s = sem_new(0);
	POINT(sig, s, 1);
	char want[160];
	int error;

	pc[0] = 1;
	pc[1] = ACCEL_WORKGROUP_COUNT_MAX + 1;
	pc[2] = 1;
	memset(po, 0, 16);
	memset(pe, 0, 16);
	memset(pl, 0, 16);
	ASSERT_OK(accel_command_buffer_barrier(bad));
	ASSERT_OK(accel_command_buffer_dispatch_indirect(bad, exe, entry(exe, "increment"),
			accel_buffer_ref_direct(count, 0, 12), NULL, 0, ob, 1));
	ASSERT_OK(accel_command_buffer_end(bad));
	ASSERT_OK(accel_queue_execute_batch(queue, NULL, &sig, 3, cbs, tables, 0));
	ASSERT_ERRNO(accel_semaphore_wait(s, 1, 0, WAIT_LONG), ERANGE);
	snprintf(want, sizeof(want),
		 "submission #1 on a queue of %s: command buffer 1 of 3, command 1 (dispatch_indirect) failed with ERANGE",
		 accel_device_uri(dev));
	ASSERT_CONTAINS("failure", accel_semaphore_failure_message(s), want);
	sem_value(s, &error);
	ck_assert_int_eq(error, -ERANGE);
	test_expect_u32(pe, 4, v, "e (cbs[0] ran)");
	ck_assert_uint_eq(po[0], 0);  /* cbs[1]'s dispatch did not run */
	test_expect_u32(pl, 4, 0, "late (cbs[2] did not run)");
	accel_semaphore_release(s);
	accel_command_buffer_release(bad);
	accel_command_buffer_release(early);
	accel_command_buffer_release(after);
	accel_buffer_release(count);
	accel_buffer_release(o);
	accel_buffer_release(e);
	accel_buffer_release(late);
}
END_TEST

/* No command buffer: a barrier, from its waits to its signals. */
START_TEST(test_batch_empty_is_barrier)
{
	accel_semaphore_t *gate = sem_new(0), *s = sem_new(0);
	POINT(w, gate, 5);
	POINT(sig, s, 3);

	ASSERT_OK(accel_queue_execute_batch(queue, &w, &sig, 0, NULL, NULL, 0));
	ASSERT_ERRNO(accel_semaphore_wait(s, 3, 0, 0), ETIME);
	ASSERT_OK(accel_semaphore_signal(gate, 5));
	ASSERT_OK(accel_semaphore_wait(s, 3, 0, WAIT_LONG));
	accel_semaphore_release(gate);
	accel_semaphore_release(s);
}
END_TEST

/*
 * Every bad batch is refused with its errno and a message naming the
 * command buffer at fault, and changes nothing: its signal is never
 * promised, and a ONE_SHOT command buffer in it can still be submitted.
 */
START_TEST(test_batch_errors)
{
	accel_buffer_t *b = buffer_new(16);
	accel_command_buffer_t *ok = cb_fill_slot0(1), *open = cb_new(0, 0),
			       *once = cb_new(ACCEL_COMMAND_BUFFER_ONE_SHOT, 0),
			       *foreign;
	accel_binding_t bb[1] = { { b, 0, 16 } };
	accel_semaphore_t *s = sem_new(0);
	accel_device_t *d2;
	POINT(sig, s, 1);

	ASSERT_OK(accel_command_buffer_end(once));
	ASSERT_OK(accel_device_open(test_device_uri(), NULL, &d2));
	ASSERT_OK(accel_command_buffer_create(d2, 0, 0, &foreign));
	ASSERT_OK(accel_command_buffer_begin(foreign));
	ASSERT_OK(accel_command_buffer_end(foreign));
	{
		accel_command_buffer_t *cbs[2] = { once, ok };
		accel_binding_table_t tables[2] = { { 0, NULL }, { 1, bb } };
		accel_binding_table_t short_tables[2] = { { 0, NULL }, { 0, NULL } };
		accel_command_buffer_t *with_null[2] = { once, NULL };
		accel_command_buffer_t *with_open[2] = { once, open };
		accel_command_buffer_t *with_foreign[3] = { once, ok, foreign };
		accel_binding_table_t t3[3] = { { 0, NULL }, { 1, bb }, { 0, NULL } };
		accel_command_buffer_t *twice[3] = { once, ok, once };

		ASSERT_ERRNO(accel_queue_execute_batch(NULL, NULL, &sig, 2, cbs, tables, 0), EINVAL);
		ASSERT_MESSAGE_CONTAINS("accel_queue_execute_batch: queue is NULL");
		ASSERT_ERRNO(accel_queue_execute_batch(queue, NULL, &sig, 2, cbs, tables, 1), EINVAL);
		ASSERT_MESSAGE_CONTAINS("accel_queue_execute_batch: flags 0x1");
		ASSERT_ERRNO(accel_queue_execute_batch(queue, NULL, &sig, 2, NULL, tables, 0), EINVAL);
		ASSERT_MESSAGE_CONTAINS("cbs is NULL but count is 2");
		ASSERT_ERRNO(accel_queue_execute_batch(queue, NULL, &sig, ACCEL_QUEUE_BATCH_MAX + 1,
						       cbs, tables, 0), E2BIG);
		ASSERT_MESSAGE_CONTAINS("count is 4097; a batch carries at most ACCEL_QUEUE_BATCH_MAX (4096)");
		ASSERT_ERRNO(accel_queue_execute_batch(queue, NULL, &sig, UINT32_MAX, cbs, tables, 0), E2BIG);
		ASSERT_ERRNO(accel_queue_execute_batch(queue, NULL, &sig, 2, with_null, tables, 0), EINVAL);
		ASSERT_MESSAGE_CONTAINS("accel_queue_execute_batch: cbs[1] is NULL");
		ASSERT_ERRNO(accel_queue_execute_batch(queue, NULL, &sig, 2, with_open, tables, 0), EBADFD);
		ASSERT_MESSAGE_CONTAINS("accel_queue_execute_batch: cbs[1]: the command buffer was not ended");
		ASSERT_ERRNO(accel_queue_execute_batch(queue, NULL, &sig, 2, cbs, short_tables, 0), ERANGE);
		ASSERT_MESSAGE_CONTAINS("accel_queue_execute_batch: cbs[1]: the binding table has 0 entries");
		/* A command buffer with slots and no tables at all. */
		ASSERT_ERRNO(accel_queue_execute_batch(queue, NULL, &sig, 2, cbs, NULL, 0), ERANGE);
		ASSERT_MESSAGE_CONTAINS("cbs[1]: the binding table has 0 entries");
		ASSERT_ERRNO(accel_queue_execute_batch(queue, NULL, &sig, 3, with_foreign, t3, 0), EXDEV);
		ASSERT_MESSAGE_CONTAINS("accel_queue_execute_batch: cbs[2]: the command buffer is for device");
		ASSERT_ERRNO(accel_queue_execute_batch(queue, NULL, &sig, 3, twice, t3, 0), EBADFD);
		ASSERT_MESSAGE_CONTAINS("cbs[2] is ONE_SHOT and appears earlier in the batch");
		/* Nothing was submitted: s was never promised, once still runs. */
		ASSERT_ERRNO(accel_semaphore_wait(s, 1, ACCEL_SEMAPHORE_WAIT_SUBMITTED, 0), ETIME);
		ASSERT_OK(accel_queue_execute_batch(queue, NULL, &sig, 2, cbs, tables, 0));
		ASSERT_OK(accel_semaphore_wait(s, 1, 0, WAIT_LONG));
		/* Now it ran: a second batch with it is refused. */
		ASSERT_ERRNO(accel_queue_execute_batch(queue, NULL, NULL, 2, cbs, tables, 0), EBADFD);
		ASSERT_MESSAGE_CONTAINS("cbs[0]: the command buffer is ONE_SHOT and was submitted already");
	}
	accel_command_buffer_release(ok);
	accel_command_buffer_release(open);
	accel_command_buffer_release(once);
	accel_command_buffer_release(foreign);
	accel_device_release(d2);
	accel_semaphore_release(s);
	accel_buffer_release(b);
}
END_TEST

struct one_shot_race {
	accel_command_buffer_t *cbs[2];
	accel_binding_table_t tables[2];
	_Atomic int wins, refused;
};

static void *one_shot_racer(void *arg)
{
	struct one_shot_race *r = arg;
	int err = accel_queue_execute_batch(queue, NULL, NULL, 2, r->cbs, r->tables, 0);

	if (!err)
		atomic_fetch_add(&r->wins, 1);
	else if (err == -EBADFD)
		atomic_fetch_add(&r->refused, 1);
	return NULL;
}

/*
 * Three threads submit batches holding one ONE_SHOT command buffer (after
 * a REUSABLE one) at once: exactly one batch is taken, the other two are
 * refused with EBADFD; 100 rounds.
 */
START_TEST(test_batch_one_shot_race)
{
	accel_buffer_t *b = buffer_new(16);
	accel_binding_t bb[1] = { { b, 0, 16 } };
	accel_command_buffer_t *ok = cb_fill_slot0(3);

	for (int round = 0; round < 100; round++) {
		struct one_shot_race r = { .cbs = { ok, cb_new(ACCEL_COMMAND_BUFFER_ONE_SHOT, 0) },
					   .tables = { { 1, bb }, { 0, NULL } } };
		pthread_t th[3];

		ASSERT_OK(accel_command_buffer_end(r.cbs[1]));
		for (int i = 0; i < 3; i++)
			ck_assert_int_eq(pthread_create(&th[i], NULL, one_shot_racer, &r), 0);
		for (int i = 0; i < 3; i++)
			pthread_join(th[i], NULL);
		ck_assert_int_eq(r.wins, 1);
		ck_assert_int_eq(r.refused, 2);
		accel_command_buffer_release(r.cbs[1]);
	}
	ASSERT_OK(accel_queue_wait_idle(queue, WAIT_LONG));
	accel_command_buffer_release(ok);
	accel_buffer_release(b);
}
END_TEST

/* ---- threads --------------------------------------------------------------- */

#define SUBMITTERS 6
#define PER_THREAD 100

struct submitter {
	accel_command_buffer_t *cb;
	accel_buffer_t *counter;
	accel_semaphore_t *s;
	int failed;
};

static void *submitter_main(void *arg)
{
	struct submitter *w = arg;
	accel_binding_t t[1] = { { w->counter, 0, 4 } };
	accel_binding_table_t table = { 1, t };

	for (uint64_t i = 1; i <= PER_THREAD; i++) {
		accel_semaphore_t *ws[1] = { w->s }, *ss[1] = { w->s };
		uint64_t wv[1] = { i - 1 }, sv[1] = { i };
		accel_semaphore_list_t wl = { 1, ws, wv }, sl = { 1, ss, sv };

		if (accel_queue_execute(queue, &wl, &sl, w->cb, &table, 0))
			w->failed++;
	}
	if (accel_semaphore_wait(w->s, PER_THREAD, 0, WAIT_LONG))
		w->failed++;
	return NULL;
}

/* Several threads submit one command buffer with their own tables. */
START_TEST(test_threads_submit)
{
	accel_command_buffer_t *cb = cb_new(0, 1);
	accel_buffer_ref_t r[1] = { accel_buffer_ref_indirect(0, 0, 4) };
	uint32_t one[3] = { 1, 1, 1 };
	struct submitter w[SUBMITTERS];
	pthread_t t[SUBMITTERS];

	ASSERT_OK(accel_command_buffer_dispatch(cb, exe, entry(exe, "increment"), one, NULL, 0, r, 1));
	ASSERT_OK(accel_command_buffer_end(cb));
	for (int i = 0; i < SUBMITTERS; i++) {
		w[i].cb = cb;
		w[i].counter = buffer_new(4);
		memset(map(w[i].counter), 0, 4);
		w[i].s = sem_new(0);
		w[i].failed = 0;
		ck_assert_int_eq(pthread_create(&t[i], NULL, submitter_main, &w[i]), 0);
	}
	for (int i = 0; i < SUBMITTERS; i++) {
		pthread_join(t[i], NULL);
		ck_assert_int_eq(w[i].failed, 0);
		ck_assert_uint_eq(*(uint32_t *)map(w[i].counter), PER_THREAD);
		accel_buffer_release(w[i].counter);
		accel_semaphore_release(w[i].s);
	}
	accel_command_buffer_release(cb);
}
END_TEST

/* The last reference to the queue may go while work is pending. */
START_TEST(test_release_queue_with_pending_work)
{
	accel_queue_t *q;
	accel_semaphore_t *gate = sem_new(0), *s = sem_new(0);
	POINT(w, gate, 1);
	POINT(sig, s, 1);

	ASSERT_OK(accel_queue_create(dev, 0, &q));
	ASSERT_OK(accel_queue_barrier(q, &w, &sig, 0));
	accel_queue_release(q);
	ASSERT_OK(accel_semaphore_signal(gate, 1));
	ASSERT_OK(accel_semaphore_wait(s, 1, 0, WAIT_LONG));
	accel_semaphore_release(gate);
	accel_semaphore_release(s);
}
END_TEST

/* ---- drains --------------------------------------------------------------- */

/*
 * accel_queue_wait_idle() and accel_device_wait_idle(): a queue whose work
 * waits on a gate is not idle (a poll and a short deadline say -ETIME,
 * with a message, and change nothing) while another queue of the device
 * is; once the gate opens both drain, and the signals are signalled by
 * the time the wait returns (no wait on the semaphore needed).
 */
static int64_t accel_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * SECOND + ts.tv_nsec;
}

static void *open_gate_later(void *gate)
{
	struct timespec ts = { 0, 20 * 1000 * 1000 };

	nanosleep(&ts, NULL);
	accel_semaphore_signal(gate, 1);
	return NULL;
}

START_TEST(test_wait_idle)
{
	accel_queue_t *q2;
	accel_semaphore_t *gate = sem_new(0), *s = sem_new(0), *t = sem_new(0);
	POINT(w, gate, 1);
	POINT(sig_s, s, 1);
	POINT(sig_t, t, 1);
	int error;

	ASSERT_OK(accel_queue_create(dev, 0, &q2));
	/* Never used: idle, even polled. */
	ASSERT_OK(accel_queue_wait_idle(q2, 0));
	ASSERT_OK(accel_queue_barrier(queue, &w, &sig_s, 0));
	ASSERT_OK(accel_queue_barrier(q2, NULL, &sig_t, 0));

	ASSERT_ERRNO(accel_queue_wait_idle(queue, 0), ETIME);
	ASSERT_MESSAGE_CONTAINS("accel_queue_wait_idle: the deadline passed");
	ASSERT_ERRNO(accel_queue_wait_idle(queue, accel_deadline_after(SECOND / 50)), ETIME);
	ASSERT_ERRNO(accel_device_wait_idle(dev, accel_deadline_after(SECOND / 50)), ETIME);
	ASSERT_MESSAGE_CONTAINS("accel_device_wait_idle: the deadline passed");
	ck_assert_uint_eq(sem_value(s, &error), 0); /* nothing changed */
	ck_assert_int_eq(error, 0);

	ASSERT_OK(accel_queue_wait_idle(q2, WAIT_LONG));
	ck_assert_uint_eq(sem_value(t, NULL), 1);

	/*
	 * The gate opens from another thread while the drain sleeps: the end
	 * of the work wakes it, long before its deadline (were the wake-up
	 * missing, it would sleep to the deadline and find the queue idle).
	 */
	{
		pthread_t th;
		int64_t deadline = accel_deadline_after(20 * SECOND);

		ck_assert_int_eq(pthread_create(&th, NULL, open_gate_later, gate), 0);
		ASSERT_OK(accel_queue_wait_idle(queue, deadline));
		ck_assert_msg(accel_now() < deadline - 10 * SECOND,
			      "accel_queue_wait_idle slept to its deadline: the end of the work did not wake it");
		pthread_join(th, NULL);
	}
	ck_assert_uint_eq(sem_value(s, NULL), 1);
	ASSERT_OK(accel_device_wait_idle(dev, 0));
	ASSERT_OK(accel_queue_wait_idle(queue, 0));

	accel_queue_release(q2);
	accel_semaphore_release(gate);
	accel_semaphore_release(s);
	accel_semaphore_release(t);
}
END_TEST

static void *open_gate_soon(void *gate)
{
	struct timespec ts = { 0, 1000 * 1000 };

	nanosleep(&ts, NULL); /* the drain is asleep by then */
	accel_semaphore_signal(gate, 1);
	return NULL;
}

/*
 * A queue found idle leaves no submission of its own counted by the
 * device: the two counts change together. Work ends on another thread
 * (the gate's, or the kernel's executor) while this one drains the queue
 * and at once polls the device. The drain wakes as the queue's count
 * falls: a device count changed after it was seen as ETIME (CI, kernel
 * scheduler, through the ioctl path).
 */
START_TEST(test_wait_idle_queue_then_device)
{
	for (int i = 0; i < 200; i++) {
		accel_semaphore_t *gate = sem_new(0), *s = sem_new(0);
		POINT(w, gate, 1);
		POINT(sig, s, 1);
		pthread_t th;

		ASSERT_OK(accel_queue_barrier(queue, &w, &sig, 0));
		ck_assert_int_eq(pthread_create(&th, NULL, open_gate_soon, gate), 0);
		ASSERT_OK(accel_queue_wait_idle(queue, WAIT_LONG));
		ASSERT_OK(accel_device_wait_idle(dev, 0));
		ck_assert_uint_eq(sem_value(s, NULL), 1);
		pthread_join(th, NULL);
		/* The other way round: the device idle, so is the queue. */
		ASSERT_OK(accel_queue_barrier(queue, &w, NULL, 0));
		ASSERT_OK(accel_device_wait_idle(dev, WAIT_LONG));
		ASSERT_OK(accel_queue_wait_idle(queue, 0));
		accel_semaphore_release(gate);
		accel_semaphore_release(s);
	}
}
END_TEST

/*
 * Work whose wait failed has ended: the drain returns 0 and the signal
 * carries the error. So does work on a queue already released, which the
 * device still counts.
 */
START_TEST(test_wait_idle_failed_and_released)
{
	accel_queue_t *q2;
	accel_semaphore_t *gate = sem_new(0), *s = sem_new(0), *g2 = sem_new(0), *u = sem_new(0);
	POINT(w, gate, 1);
	POINT(sig, s, 1);
	POINT(w2, g2, 1);
	POINT(sig_u, u, 1);
	int error;

	ASSERT_OK(accel_queue_barrier(queue, &w, &sig, 0));
	ASSERT_OK(accel_semaphore_fail(gate, -ENOLINK));
	ASSERT_OK(accel_queue_wait_idle(queue, WAIT_LONG));
	ck_assert_uint_eq(sem_value(s, &error), 0);
	ck_assert_int_eq(error, -ENOLINK);

	ASSERT_OK(accel_queue_create(dev, 0, &q2));
	ASSERT_OK(accel_queue_barrier(q2, &w2, &sig_u, 0));
	accel_queue_release(q2);
	ASSERT_ERRNO(accel_device_wait_idle(dev, 0), ETIME);
	ASSERT_OK(accel_semaphore_signal(g2, 1));
	ASSERT_OK(accel_device_wait_idle(dev, WAIT_LONG));
	ck_assert_uint_eq(sem_value(u, &error), 1);
	ck_assert_int_eq(error, 0);

	accel_semaphore_release(gate);
	accel_semaphore_release(s);
	accel_semaphore_release(g2);
	accel_semaphore_release(u);
}
END_TEST

#define IDLE_THREADS 4
#define IDLE_SUBS 200

struct idle_worker {
	accel_queue_t *q;
	accel_semaphore_t *tl;
	int err;
	uint64_t seen;
};

static void *idle_worker_main(void *arg)
{
	struct idle_worker *w = arg;

	for (uint64_t i = 1; i <= IDLE_SUBS && !w->err; i++) {
		accel_semaphore_t *ss[1] = { w->tl };
		uint64_t vs[1] = { i };
		accel_semaphore_list_t sig = { 1, ss, vs };

		w->err = accel_queue_barrier(w->q, NULL, &sig, 0);
	}
	if (!w->err)
		w->err = accel_queue_wait_idle(w->q, WAIT_LONG);
	if (!w->err)
		w->err = accel_semaphore_query(w->tl, &w->seen, NULL);
	return NULL;
}

/*
 * Four threads each submit 200 barriers on a queue of their own, then
 * drain it: each finds its timeline at 200 when its drain returns, while
 * the main thread drains the device under them.
 */
START_TEST(test_wait_idle_threads)
{
	struct idle_worker w[IDLE_THREADS];
	pthread_t th[IDLE_THREADS];

	for (int i = 0; i < IDLE_THREADS; i++) {
		w[i] = (struct idle_worker){ .tl = sem_new(0) };
		ASSERT_OK(accel_queue_create(dev, 0, &w[i].q));
		ck_assert_int_eq(pthread_create(&th[i], NULL, idle_worker_main, &w[i]), 0);
	}
	for (int i = 0; i < 5; i++) {
		int ret = accel_device_wait_idle(dev, accel_deadline_after(SECOND / 100));

		ck_assert_msg(ret == 0 || ret == -ETIME, "accel_device_wait_idle: %d", ret);
	}
	for (int i = 0; i < IDLE_THREADS; i++) {
		pthread_join(th[i], NULL);
		ck_assert_msg(w[i].err == 0, "thread %d: %s (%s)", i, test_errname(w[i].err),
			      accel_error_message());
		ck_assert_uint_eq(w[i].seen, IDLE_SUBS);
		accel_queue_release(w[i].q);
		accel_semaphore_release(w[i].tl);
	}
	ASSERT_OK(accel_device_wait_idle(dev, WAIT_LONG));
}
END_TEST

/* NULL is refused with EINVAL and a message naming the argument. */
START_TEST(test_wait_idle_bad_input)
{
	ASSERT_ERRNO(accel_queue_wait_idle(NULL, WAIT_LONG), EINVAL);
	ASSERT_MESSAGE_CONTAINS("accel_queue_wait_idle: queue is NULL");
	ASSERT_ERRNO(accel_device_wait_idle(NULL, 0), EINVAL);
	ASSERT_MESSAGE_CONTAINS("accel_device_wait_idle: device is NULL");
	/* A deadline in the past polls: idle here. */
	ASSERT_OK(accel_queue_wait_idle(queue, -1));
	ASSERT_OK(accel_device_wait_idle(dev, INT64_MIN));
}
END_TEST

/* ---- queue options ------------------------------------------------------ */

static void plain_setup(void)
{
	device_setup();
}

static void plain_teardown(void)
{
	device_teardown();
}

/* A barrier on @q completes: the queue works. */
static void check_queue_runs(accel_queue_t *q)
{
	accel_semaphore_t *s = sem_new(0);
	POINT(sig, s, 1);

	ASSERT_OK(accel_queue_barrier(q, NULL, &sig, 0));
	ASSERT_OK(accel_semaphore_wait(s, 1, 0, WAIT_LONG));
	accel_semaphore_release(s);
}

/*
 * NULL options, the initializer, every class and the weight bounds make
 * working queues; on the kernel scheduler HIGH may be refused with EACCES
 * (no CAP_SYS_NICE), and the message must say so.
 */
START_TEST(test_options_valid)
{
	static const uint32_t prio[] = {
		ACCEL_QUEUE_PRIORITY_NORMAL, ACCEL_QUEUE_PRIORITY_HIGH,
		ACCEL_QUEUE_PRIORITY_LOW,
	};
	static const uint32_t weight[] = { 0, 1, 7, ACCEL_QUEUE_WEIGHT_MAX };
	accel_queue_t *q = TEST_NOT_NULL;

	ASSERT_OK(accel_queue_create_with_options(dev, NULL, &q));
	check_queue_runs(q);
	accel_queue_release(q);
	for (size_t i = 0; i < 3; i++) {
		for (size_t j = 0; j < 4; j++) {
			accel_queue_options_t o = ACCEL_QUEUE_OPTIONS_INIT;
			int err;

			o.priority = prio[i];
			o.weight = weight[j];
			o.affinity = j % 2 ? 1 : 0;
			err = accel_queue_create_with_options(dev, &o, &q);
			if (err == -EACCES && prio[i] == ACCEL_QUEUE_PRIORITY_HIGH &&
			    test_kernel_mode()) {
				ASSERT_MESSAGE_CONTAINS("CAP_SYS_NICE");
				ASSERT_MESSAGE_CONTAINS("NORMAL works");
				ck_assert_ptr_null(q);
				continue;
			}
			ck_assert_msg(err == 0,
				      "priority %u weight %u: accel_queue_create_with_options returned %d: %s",
				      prio[i], weight[j], err, accel_error_message());
			check_queue_runs(q);
			accel_queue_release(q);
		}
	}
}
END_TEST

/* A later, larger struct is accepted when its unknown tail is zero. */
START_TEST(test_options_larger_struct)
{
	struct {
		accel_queue_options_t o;
		uint64_t later;
	} big = { ACCEL_QUEUE_OPTIONS_INIT, 0 };
	accel_queue_t *q = NULL;

	big.o.size = sizeof(big);
	ASSERT_OK(accel_queue_create_with_options(dev, &big.o, &q));
	accel_queue_release(q);
	big.later = 5;
	q = TEST_NOT_NULL;
	ASSERT_ERRNO(accel_queue_create_with_options(dev, &big.o, &q), EINVAL);
	ck_assert_ptr_null(q);
	ASSERT_MESSAGE_CONTAINS("options->size is 32 and byte 24 is not zero");
	/*
	 * A size no version could have: -E2BIG before a byte past the struct
	 * is read (it read up to UINT32_MAX bytes: ASan caught the overflow).
	 */
	static const uint32_t huge[] = {
		ACCEL_OPTIONS_SIZE_MAX + 1, UINT32_C(1) << 31, UINT32_MAX,
	};

	big.later = 0;
	for (size_t i = 0; i < sizeof(huge) / sizeof(huge[0]); i++) {
		big.o.size = huge[i];
		ASSERT_ERRNO(accel_queue_create_with_options(dev, &big.o, &q), E2BIG);
		ck_assert_ptr_null(q);
		ASSERT_MESSAGE_CONTAINS("above ACCEL_OPTIONS_SIZE_MAX");
	}
}
END_TEST

/* Each bad field: -EINVAL, a message naming it and its range, no queue. */
START_TEST(test_options_invalid)
{
	static const struct {
		uint32_t size, flags, priority, weight;
		uint64_t affinity;
		const char *msg;
	} bad[] = {
		{ 0, 0, 0, 0, 0, "options->size is 0; it must be at least 24" },
		{ 16, 0, 0, 0, 0, "options->size is 16; it must be at least 24" },
		{ 24, 1, 0, 0, 0, "options->flags is 0x1; no flags are defined, pass 0" },
		{ 24, 0, 3, 0, 0, "options->priority is 3; it must be ACCEL_QUEUE_PRIORITY_NORMAL (0), _HIGH (1) or _LOW (2)" },
		{ 24, 0, 0, 20000, 0, "options->weight is 20000; it must be in 1..10000 (0 takes the default, 1)" },
		{ 24, 0, 0, 10001, 0, "options->weight is 10001; it must be in 1..10000" },
		{ 24, 0, 0, 0, 6, "options->affinity is 0x6; the device has 1 hardware queue, so the mask must include bit 0" },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		accel_queue_options_t o = {
			bad[i].size, bad[i].flags, bad[i].priority,
			bad[i].weight, bad[i].affinity,
		};
		accel_queue_t *q = TEST_NOT_NULL;

		ASSERT_ERRNO(accel_queue_create_with_options(dev, &o, &q), EINVAL);
		ck_assert_msg(q == NULL, "case %zu: *out is not NULL", i);
		ASSERT_MESSAGE_CONTAINS("accel_queue_create_with_options: ");
		ASSERT_MESSAGE_CONTAINS(bad[i].msg);
	}
	{
		accel_queue_t *q = TEST_NOT_NULL;

		ASSERT_ERRNO(accel_queue_create_with_options(NULL, NULL, &q), EINVAL);
		ck_assert_ptr_null(q);
	}
	ASSERT_MESSAGE_CONTAINS("device is NULL");
	ASSERT_ERRNO(accel_queue_create_with_options(dev, NULL, NULL), EINVAL);
	ASSERT_MESSAGE_CONTAINS("out is NULL");
}
END_TEST

/* ---- the embedded scheduler's arbiter ----------------------------------- */

/*
 * Jobs of an in-test cpu executable: "gate" spins until the test opens the
 * gate (holding the engine's only credit), "record" appends its constant
 * to the run order (spinning 500 us, so jobs cost the same). With ACCEL_ENGINE_CREDITS=1 one job runs at a time, so
 * the order they ran in is the order the arbiter released them in.
 */
static int64_t accel_now_ns_for_test(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * INT64_C(1000000000) + ts.tv_nsec;
}

static atomic_int gate_open;
static atomic_int gate_entered;
static atomic_uint order_len;
static uint32_t order[512];
static int64_t order_ns[512]; /* how long each record_fn() job took */
static int64_t order_at[512]; /* when each started */

static void gate_fn(const struct accel_cpu_dispatch *d)
{
	atomic_store(&gate_entered, 1);
	while (!atomic_load(&gate_open))
		sched_yield();
}

/*
 * Equal cost: each job spins 500 us, and longer when the machine takes its
 * CPU away meanwhile (order_ns says how long, as its executor measures).
 */
static void record_fn(const struct accel_cpu_dispatch *d)
{
	unsigned int i = atomic_fetch_add(&order_len, 1);
	int64_t start = accel_now_ns_for_test(), now;

	while ((now = accel_now_ns_for_test()) < start + 500000)
		;
	if (i < 512) {
		order[i] = d->constants[0];
		order_ns[i] = now - start;
		order_at[i] = start;
	}
}

/* Spins constants[0] us, recording nothing: a job that costs that much. */
static void spin_fn(const struct accel_cpu_dispatch *d)
{
	int64_t end = accel_now_ns_for_test() + (int64_t)d->constants[0] * 1000;

	while (accel_now_ns_for_test() < end)
		;
}

static const struct accel_cpu_entry arb_entries[] = {
	{ "gate", 0, 0, { 1, 1, 1 }, gate_fn },
	{ "record", 0, 1, { 1, 1, 1 }, record_fn },
	{ "spin", 0, 1, { 1, 1, 1 }, spin_fn },
};
static const struct accel_cpu_executable arb_table = {
	ACCEL_CPU_EXECUTABLE_ABI_VERSION, 3, arb_entries, NULL,
};
static accel_executable_t *arb_exe;

static void arb_setup(void)
{
	device_setup();
	setenv("ACCEL_ENGINE_CREDITS", "1", 1);
	atomic_store(&gate_open, 0);
	atomic_store(&gate_entered, 0);
	atomic_store(&order_len, 0);
	ASSERT_OK(accel_cpu_executable_create(dev, &arb_table, &arb_exe));
}

/*
 * On the module, the engine's credit limit is the administrator's: its
 * sysfs file, written once the first queue made the engine. The limit it
 * had (or, for an engine not made yet, the module's default) is read once
 * before the tests and goes back after each, and again after them all
 * from the runner's process, should a failed test not reach its teardown.
 */
static bool arb_credits_set;

/*
 * The arbiter tests need a credit limit of 1: ACCEL_ENGINE_CREDITS on the
 * embedded scheduler, the engine's sysfs file on the module, which only
 * root may write. Returns why not, or NULL.
 */
static const char *arb_skip(void)
{
	if (!test_kernel_mode())
		return NULL;
	if (!test_saved_credits[0])
		return "the engine's credit limit is the administrator's (" TEST_ENGINE_CREDITS "), and this process cannot read it or the module's default";
	if (geteuid() != 0)
		return "the engine's credit limit is the administrator's (" TEST_ENGINE_CREDITS "): run as root";
	return NULL;
}

static void arb_teardown(void)
{
	unsetenv("ACCEL_ENGINE_CREDITS");
	if (arb_credits_set)
		test_credits_restore();
	arb_credits_set = false;
	accel_executable_release(arb_exe);
	device_teardown();
}

/* On the module, the engine's limit to 1 (a queue has made the engine). */
static void arb_credits_one(void)
{
	int err;

	if (!test_kernel_mode() || arb_credits_set)
		return;
	err = test_file_io(TEST_ENGINE_CREDITS, NULL, 0, "1");
	ck_assert_msg(err == 0, "writing 1 to %s failed: %s", TEST_ENGINE_CREDITS,
		      strerror(-err));
	arb_credits_set = true;
}

static accel_queue_t *arb_queue(uint32_t priority, uint32_t weight)
{
	accel_queue_options_t o = ACCEL_QUEUE_OPTIONS_INIT;
	accel_queue_t *q = NULL;

	o.priority = priority;
	o.weight = weight;
	ASSERT_OK(accel_queue_create_with_options(dev, &o, &q));
	arb_credits_one();
	return q;
}

/* Submits entry @ordinal (constant @id) on @q, signalling @sig. */
static void arb_submit(accel_queue_t *q, uint32_t ordinal, uint32_t id,
		       const accel_semaphore_list_t *waits,
		       const accel_semaphore_list_t *sig)
{
	static const uint32_t one[3] = { 1, 1, 1 };
	accel_command_buffer_t *cb = cb_new(ACCEL_COMMAND_BUFFER_ONE_SHOT, 0);

	ASSERT_OK(accel_command_buffer_dispatch(cb, arb_exe, ordinal, one,
						ordinal ? &id : NULL, ordinal ? 1 : 0,
						NULL, 0));
	ASSERT_OK(accel_command_buffer_end(cb));
	ASSERT_OK(accel_queue_execute(q, waits, sig, cb, NULL, 0));
	accel_command_buffer_release(cb);
}

/* Fills the engine (credit 1) with a gate job on @q; returns once it runs. */
static void arb_close_gate(accel_queue_t *q)
{
	arb_submit(q, 0, 0, NULL, NULL);
	while (!atomic_load(&gate_entered))
		sched_yield();
}

/*
 * On a saturated engine, a HIGH job submitted after LOW ones is released
 * first; then the LOW ones in submission order.
 */
START_TEST(test_arbiter_priority)
{
	accel_queue_t *g, *lo, *hi;
	accel_semaphore_t *done = sem_new(0);

	if (arb_skip())
		TEST_SKIP("%s", arb_skip());
	g = arb_queue(ACCEL_QUEUE_PRIORITY_NORMAL, 0);
	lo = arb_queue(ACCEL_QUEUE_PRIORITY_LOW, 0);
	hi = arb_queue(ACCEL_QUEUE_PRIORITY_HIGH, 0);
	arb_close_gate(g);
	for (uint32_t i = 1; i <= 3; i++) {
		POINT(sig, done, i);

		arb_submit(lo, 1, i, NULL, &sig);
	}
	{
		POINT(sig, done, 4);
		POINT(w, done, 3);

		/* HIGH, and independent of the LOW jobs: signals 4 after them. */
		arb_submit(hi, 1, 100, NULL, NULL);
		ASSERT_OK(accel_queue_barrier(hi, &w, &sig, 0));
	}
	atomic_store(&gate_open, 1);
	ASSERT_OK(accel_semaphore_wait(done, 4, 0, WAIT_LONG));
	ck_assert_uint_eq(atomic_load(&order_len), 4);
	ck_assert_msg(order[0] == 100 && order[1] == 1 && order[2] == 2 && order[3] == 3,
		      "run order %u %u %u %u, expected 100 (HIGH) 1 2 3 (LOW, in submission order)",
		      order[0], order[1], order[2], order[3]);
	accel_queue_release(g);
	accel_queue_release(lo);
	accel_queue_release(hi);
	accel_semaphore_release(done);
}
END_TEST

/*
 * A stall among the first @n + 1 starts of record_fn() jobs (credit 1:
 * each starts once the one before completed and the next was released):
 * the longest time from one start to the next, when it is over 4 times
 * the median and over 4 ms (8 jobs' worth); else 0. A queue charged for
 * that time (the machine took the CPU away from its job, its executor or
 * the reaper) has its fair share shifted by it, as it should be.
 */
static int64_t arb_stall_ns(uint32_t n)
{
	int64_t gap[64], worst = 0, median;

	ck_assert_uint_le(n, 64);
	for (uint32_t i = 0; i < n; i++) {
		gap[i] = order_at[i + 1] - order_at[i];
		worst = gap[i] > worst ? gap[i] : worst;
	}
	for (uint32_t i = 1; i < n; i++) /* insertion sort: 40 values */
		for (uint32_t j = i; j && gap[j - 1] > gap[j]; j--) {
			int64_t t = gap[j];

			gap[j] = gap[j - 1];
			gap[j - 1] = t;
		}
	median = gap[n / 2];
	return worst > 4 * median && worst > 4000000 ? worst : 0;
}

/*
 * Two queues of one class, weights 1 and 3, equal jobs queued behind a
 * gate: while both have work, the weight-3 queue gets about 3/4 of the
 * releases. Counted over the first 40 releases (both queues have 60
 * jobs); device times are measured, so the bound is loose, not timed. A
 * stall of the machine's among them is charged to the queue whose job it
 * hit and shifts the count by many jobs (39 of 40 seen once, under TCG):
 * the stage is then set again, up to 3 times, and the count checked only
 * on a round without one, or the last.
 */
START_TEST(test_arbiter_weights)
{
	accel_queue_t *g, *a, *b;
	accel_semaphore_t *done = sem_new(0);
	uint32_t heavy;
	char seen[41] = { 0 };
	int64_t stall;

	if (arb_skip())
		TEST_SKIP("%s", arb_skip());
	g = arb_queue(ACCEL_QUEUE_PRIORITY_NORMAL, 0);
	for (int round = 1;; round++) {
		a = arb_queue(ACCEL_QUEUE_PRIORITY_LOW, 1);
		b = arb_queue(ACCEL_QUEUE_PRIORITY_LOW, 3);
		arb_close_gate(g);
		for (uint32_t i = 0; i < 60; i++) {
			arb_submit(a, 1, 1, NULL, NULL);
			arb_submit(b, 1, 3, NULL, NULL);
		}
		atomic_store(&gate_open, 1);
		/* Each queue runs in submission order: a barrier after all of them. */
		{
			accel_semaphore_t *da = sem_new(0), *db = sem_new(0);
			POINT(sa, da, 1);
			POINT(sb, db, 1);

			ASSERT_OK(accel_queue_barrier(a, NULL, &sa, 0));
			ASSERT_OK(accel_queue_barrier(b, NULL, &sb, 0));
			ASSERT_OK(accel_semaphore_wait(da, 1, 0, WAIT_LONG));
			ASSERT_OK(accel_semaphore_wait(db, 1, 0, WAIT_LONG));
			accel_semaphore_release(da);
			accel_semaphore_release(db);
		}
		ck_assert_uint_eq(atomic_load(&order_len), 120);
		heavy = 0;
		for (uint32_t i = 0; i < 40; i++) {
			heavy += order[i] == 3;
			seen[i] = order[i] == 3 ? '3' : '1';
		}
		accel_queue_release(a);
		accel_queue_release(b);
		stall = heavy >= 24 && heavy <= 36 ? 0 : arb_stall_ns(40);
		if (!stall || round == 3)
			break;
		fprintf(stderr, "# the weight-3 queue ran %u of the first 40 jobs, after a stall of %.1f ms among them: again\n",
			heavy, stall / 1e6);
		atomic_store(&gate_open, 0);
		atomic_store(&gate_entered, 0);
		atomic_store(&order_len, 0);
	}
	ck_assert_msg(heavy >= 24 && heavy <= 36,
		      "the weight-3 queue ran %u of the first 40 jobs; expected about 30 (24..36); run order by weight: %s%s",
		      heavy, seen, stall ? " (after a stall at each of 3 tries)" : "");
	accel_queue_release(g);
	accel_semaphore_release(done);
}
END_TEST

/*
 * No head-of-line blocking through the arbiter: a job waiting on an
 * unreached point does not hold back later jobs of its queue, nor hold a
 * credit; once its point is reached it runs.
 */
START_TEST(test_arbiter_no_head_of_line_blocking)
{
	accel_queue_t *q;
	accel_semaphore_t *gate = sem_new(0), *done = sem_new(0);
	POINT(w, gate, 1);
	POINT(s1, done, 1);
	POINT(s2, done, 2);

	if (arb_skip())
		TEST_SKIP("%s", arb_skip());
	q = arb_queue(ACCEL_QUEUE_PRIORITY_NORMAL, 0);
	arb_submit(q, 1, 7, &w, &s2);   /* blocked on the gate */
	arb_submit(q, 1, 8, NULL, &s1); /* independent: runs now */
	ASSERT_OK(accel_semaphore_wait(done, 1, 0, WAIT_LONG));
	ck_assert_uint_eq(atomic_load(&order_len), 1);
	ck_assert_uint_eq(order[0], 8);
	ASSERT_OK(accel_semaphore_signal(gate, 1));
	ASSERT_OK(accel_semaphore_wait(done, 2, 0, WAIT_LONG));
	ck_assert_uint_eq(order[1], 7);
	accel_queue_release(q);
	accel_semaphore_release(gate);
	accel_semaphore_release(done);
}
END_TEST

/* A bad ACCEL_ENGINE_CREDITS is refused by the queue that makes the engine. */
/*
 * Deadlines (accel_submit_options_t). The stage: the engine held by the
 * gate; a flood queue of weight 100 with FLOOD_N jobs queued; two queues
 * of weight 1 that each already ran @handicap_us of work, so that fair
 * share serves the whole flood before any of their jobs. 2 ms is within the lag
 * bound (20 ms of device time) that lets a deadline take a queue ahead; 40
 * ms is beyond it.
 */
#define FLOOD_N 6
/*
 * How far off a "near" deadline is when its submissions start: they must
 * all reach the scheduler before it passes (one that arrives after is
 * sent without it: a passed deadline is a hint with nothing to say), and
 * it must pass before the gate opens. 50 ms was too little once: the ASan
 * build, run in the VM from the host's root over 9p, stalled longer than
 * that between taking the time and its first submission.
 */
#define DL_NEAR_NS (150 * 1000000LL)
/* The lag bound, on both schedulers (EMB_DL_LAG_NS, the module's). */
#define DL_LAG_NS INT64_C(20000000)

/* Submits entry @ordinal (constant @id) on @q with @deadline (0: none). */
static void arb_submit_dl(accel_queue_t *q, uint32_t ordinal, uint32_t id,
			  const accel_semaphore_list_t *waits,
			  const accel_semaphore_list_t *sig, int64_t deadline)
{
	static const uint32_t one[3] = { 1, 1, 1 };
	accel_command_buffer_t *cb = cb_new(ACCEL_COMMAND_BUFFER_ONE_SHOT, 0);
	accel_submit_options_t o = ACCEL_SUBMIT_OPTIONS_INIT;

	o.deadline_ns = deadline;
	ASSERT_OK(accel_command_buffer_dispatch(cb, arb_exe, ordinal, one, &id, 1,
						NULL, 0));
	ASSERT_OK(accel_command_buffer_end(cb));
	ASSERT_OK(accel_queue_execute_with_options(q, waits, sig, cb, NULL, &o));
	accel_command_buffer_release(cb);
}

struct dl_stage {
	accel_queue_t *g, *flood, *d, *c;
};

/*
 * A handicap is charged as the time its job took, as its executor
 * measured it, and a machine that stalls meanwhile makes that longer: two
 * runs on the debug kernel ran the flood first with 2 ms handicaps, as if
 * past the lag bound. Each handicap job is timed from its submission to
 * its signal, which bounds its charge; one meant to be within the bound
 * that took the bound or more is run again, on new queues, up to three
 * times (the debug kernel's two took 21 to 27 ms when timed together, so
 * each is timed alone). After that the stage goes on as it is, as it
 * always did: a retry can only spare a run, never fail one.
 */
static void dl_stage(struct dl_stage *s, uint32_t handicap_us)
{
	for (int tries = 1;; tries++) {
		accel_semaphore_t *warm = sem_new(0);
		POINT(w, warm, 1);
		POINT(w2, warm, 2);
		int64_t t0, took, took2;

		s->g = arb_queue(ACCEL_QUEUE_PRIORITY_NORMAL, 0);
		s->flood = arb_queue(ACCEL_QUEUE_PRIORITY_LOW, 100);
		s->d = arb_queue(ACCEL_QUEUE_PRIORITY_LOW, 1);
		s->c = arb_queue(ACCEL_QUEUE_PRIORITY_LOW, 1);
		t0 = accel_now_ns_for_test();
		arb_submit_dl(s->d, 2, handicap_us, NULL, &w, 0);
		ASSERT_OK(accel_semaphore_wait(warm, 1, 0, WAIT_LONG));
		took = accel_now_ns_for_test() - t0;
		t0 = accel_now_ns_for_test();
		arb_submit_dl(s->c, 2, handicap_us, NULL, &w2, 0);
		ASSERT_OK(accel_semaphore_wait(warm, 2, 0, WAIT_LONG));
		took2 = accel_now_ns_for_test() - t0;
		accel_semaphore_release(warm);
		took = took > took2 ? took : took2;
		if (handicap_us * INT64_C(1000) >= DL_LAG_NS || took < DL_LAG_NS)
			break;
		fprintf(stderr, "# a handicap of %u us took %.1f ms, past the lag bound%s\n",
			handicap_us, took / 1e6, tries < 3 ? ": again" : "");
		if (tries == 3)
			break;
		accel_queue_release(s->g);
		accel_queue_release(s->flood);
		accel_queue_release(s->d);
		accel_queue_release(s->c);
	}
	arb_close_gate(s->g);
	for (uint32_t i = 1; i <= FLOOD_N; i++)
		arb_submit(s->flood, 1, i, NULL, NULL);
}

/*
 * Opens the gate once @deadline has passed, waits until every queue of @s
 * is idle (so every record is written), and checks there are @n.
 */
static void dl_run(struct dl_stage *s, int64_t deadline, uint32_t n)
{
	while (accel_now_ns_for_test() < deadline)
		usleep(1000);
	atomic_store(&gate_open, 1);
	ASSERT_OK(accel_queue_wait_idle(s->flood, WAIT_LONG));
	ASSERT_OK(accel_queue_wait_idle(s->d, WAIT_LONG));
	ASSERT_OK(accel_queue_wait_idle(s->c, WAIT_LONG));
	ck_assert_uint_eq(atomic_load(&order_len), n);
}

static void dl_stage_end(struct dl_stage *s)
{
	ASSERT_OK(accel_queue_wait_idle(s->flood, WAIT_LONG));
	ASSERT_OK(accel_queue_wait_idle(s->d, WAIT_LONG));
	ASSERT_OK(accel_queue_wait_idle(s->c, WAIT_LONG));
	accel_queue_release(s->g);
	accel_queue_release(s->flood);
	accel_queue_release(s->d);
	accel_queue_release(s->c);
}

/*
 * Whether the submissions made since @deadline was taken, *@near ahead,
 * all went before it. A deadline that has passed when it is submitted is
 * sent as none (a hint with nothing to say), so a run whose submissions
 * overran it cannot judge the policy (50 ms was overrun once, see
 * DL_NEAR_NS; the stalls that inflate a handicap, see dl_stage(), could
 * overrun 150 ms too). Then the stage is run out and undone
 * (the caller releases what it made besides), and the caller tries again
 * with twice the margin, up to 8 * DL_NEAR_NS.
 */
static bool dl_in_time(struct dl_stage *s, int64_t deadline, int64_t *near)
{
	if (accel_now_ns_for_test() < deadline)
		return true;
	ck_assert_msg(*near < 8 * DL_NEAR_NS,
		      "the submissions overran their deadline, %.1f ms ahead, at every try",
		      *near / 1e6);
	fprintf(stderr, "# the submissions overran their deadline, %.1f ms ahead: again, %.1f ms ahead\n",
		*near / 1e6, *near * 2 / 1e6);
	atomic_store(&gate_open, 1);
	dl_stage_end(s);
	atomic_store(&gate_open, 0);
	atomic_store(&gate_entered, 0);
	atomic_store(&order_len, 0);
	*near *= 2;
	return false;
}

/* The run order as text, for messages. */
static const char *order_text(void)
{
	static char buf[256];
	size_t len = 0;

	buf[0] = 0;
	for (uint32_t i = 0; i < atomic_load(&order_len) && i < 24; i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%u ", order[i]);
	return buf;
}

/*
 * A submission whose deadline is near (passed by the time the engine frees
 * up) is released ahead of the flood that fair share would serve first; the
 * deadline ends at its release: the next submission of its queue, without
 * one, waits behind the flood. A deadline a minute off changes nothing.
 */
START_TEST(test_deadline_near_goes_ahead)
{
	int64_t deadline;
	struct dl_stage s;

	if (arb_skip())
		TEST_SKIP("%s", arb_skip());
	for (int64_t near = DL_NEAR_NS;;) {
		dl_stage(&s, 2000);
		deadline = accel_now_ns_for_test() + near;
		arb_submit_dl(s.d, 1, 100, NULL, NULL, deadline);
		arb_submit_dl(s.d, 1, 101, NULL, NULL, 0);
		arb_submit_dl(s.c, 1, 200, NULL, NULL, accel_now_ns_for_test() + 60 * SECOND);
		if (dl_in_time(&s, deadline, &near))
			break;
	}
	dl_run(&s, deadline, FLOOD_N + 3);
	ck_assert_msg(order[0] == 100, "run order %s: expected 100 (near deadline) first",
		      order_text());
	for (uint32_t i = 1; i <= FLOOD_N; i++)
		ck_assert_msg(order[i] == i, "run order %s: expected the flood 1..%u after 100 (101 has no deadline, 200's is a minute off)",
			      order_text(), FLOOD_N);
	dl_stage_end(&s);
}
END_TEST

/* The bound: a queue 40 ms of device time past fair share does not go ahead. */
START_TEST(test_deadline_bounded_by_lag)
{
	int64_t deadline;
	struct dl_stage s;

	if (arb_skip())
		TEST_SKIP("%s", arb_skip());
	for (int64_t near = DL_NEAR_NS;;) {
		dl_stage(&s, 40000);
		deadline = accel_now_ns_for_test() + near;
		arb_submit_dl(s.d, 1, 100, NULL, NULL, deadline);
		if (dl_in_time(&s, deadline, &near))
			break;
	}
	dl_run(&s, deadline, FLOOD_N + 1);
	for (uint32_t i = 0; i < FLOOD_N; i++)
		ck_assert_msg(order[i] == i + 1, "run order %s: expected the flood 1..%u first (the deadline's queue is past the lag bound)",
			      order_text(), FLOOD_N);
	ck_assert_uint_eq(order[FLOOD_N], 100);
	dl_stage_end(&s);
}
END_TEST

/*
 * accel_semaphore_set_deadline() on a promised point moves its promiser
 * ahead; and a submission waiting with a near deadline passes it on to the
 * one it waits on: producer first, then its consumer, then the flood. 101
 * second is the passed-on deadline's doing (without it, 100's charge puts
 * its queue behind the flood). The consumer becomes runnable when its
 * producer's signal is reached, before the producer's credit goes back
 * (on both schedulers), so no flood job goes between them however late
 * the completion thread signals.
 */
START_TEST(test_deadline_on_a_point_and_passed_on)
{
	int64_t deadline;
	accel_semaphore_t *x, *y;
	struct dl_stage s;

	if (arb_skip())
		TEST_SKIP("%s", arb_skip());
	for (int64_t near = DL_NEAR_NS;;) {
		x = sem_new(0);
		y = sem_new(0);
		dl_stage(&s, 2000);
		deadline = accel_now_ns_for_test() + near;
		{
			POINT(sx, x, 1);
			POINT(sy, y, 1);
			POINT(wy, y, 1);

			arb_submit_dl(s.d, 1, 100, NULL, &sx, 0);
			/* A hint with nothing to do: reached, or not promised. */
			ASSERT_OK(accel_semaphore_set_deadline(x, 0, deadline));
			ASSERT_OK(accel_semaphore_set_deadline(x, 2, deadline));
			ASSERT_OK(accel_semaphore_set_deadline(x, 1, deadline));
			arb_submit_dl(s.d, 1, 101, NULL, &sy, 0);
			arb_submit_dl(s.c, 1, 200, &wy, NULL, deadline);
		}
		if (dl_in_time(&s, deadline, &near))
			break;
		accel_semaphore_release(x);
		accel_semaphore_release(y);
	}
	dl_run(&s, deadline, FLOOD_N + 3);
	ck_assert_msg(order[0] == 100 && order[1] == 101 && order[2] == 200,
		      "run order %s: expected 100 (its point's deadline), then 101 (its consumer's), then 200 (the consumer, runnable before 101's credit went back)",
		      order_text());
	for (uint32_t i = 3; i < FLOOD_N + 3; i++)
		ck_assert_msg(order[i] == i - 2, "run order %s: expected the flood after 200",
			      order_text());

	dl_stage_end(&s);
	accel_semaphore_release(x);
	accel_semaphore_release(y);
}
END_TEST

/*
 * The bound over a run: two queues of equal weight, each with DL_SHARE_N
 * jobs of 500 us queued behind the gate; every job of one has a deadline
 * that has passed by the time the engine frees up (always urgent). It goes
 * ahead, but none of its jobs is released while it is more than the lag
 * bound (20 ms of device time) beyond the other's share. The bound is in
 * device time, so it is checked on the time each job took (order_ns), at
 * each release of the deadline queue (one credit: every job before has
 * completed and been charged). Counted in jobs it was flaky: a job of the
 * other queue that the machine slowed counts for more and lets the
 * deadline queue lead by more jobs (52 seen in a make check under ASan
 * beside other suites, against 40 on an idle machine); and measured after
 * the job in flight, a job slowed then (by a timeslice of another process)
 * passed it too. DL_SHARE_LEAD_NS_MAX allows 2 ms more: a release is
 * judged with the job's own charge, which the executor's overhead and a
 * running average make a little more or less than 500 us, and the module
 * charges what the executor measured (the replay around the spin), whose
 * overhead differs between the two queues' executors by some microseconds
 * a job: 40 jobs in, that was seen to reach 0.23 ms beyond one job's worth
 * (on the module, 6.12, with and without events). Without
 * deadlines the deadline queue would lead by a few jobs at most; with them
 * it reaches the bound, however many jobs that is where each is measured
 * longer (sanitizers, a VM): at least DL_SHARE_LEAD_MIN, against
 * DL_SHARE_N without the bound.
 */
#define DL_SHARE_N 80
#define DL_SHARE_LAG_NS DL_LAG_NS
#define DL_SHARE_LEAD_NS_MAX (DL_SHARE_LAG_NS + INT64_C(2000000))
#define DL_SHARE_LEAD_MIN 8

START_TEST(test_deadline_stream_within_share)
{
	accel_queue_t *g, *a, *b;
	int64_t last, lead_ns, lead_ns_max;
	int32_t lead, lead_max, lead_at, other_last;
	char seen[2 * DL_SHARE_N + 1] = { 0 };

	if (arb_skip())
		TEST_SKIP("%s", arb_skip());
	g = arb_queue(ACCEL_QUEUE_PRIORITY_NORMAL, 0);
	/*
	 * Up to 3 runs: the module bounds the lead with what the executor
	 * reported, this test with what the job itself measured, and a
	 * stall of the machine between the two (the executor's thread or
	 * the VM's vCPU taken away for a millisecond or more, seen beside
	 * the fuzzer's VM: 23.45 ms) counts on one side only. A broken
	 * bound fails every run; a retry can only spare a run.
	 */
	for (int round = 1;; round++) {
		lead_ns = lead_ns_max = 0;
		lead = lead_max = lead_at = other_last = 0;
		a = arb_queue(ACCEL_QUEUE_PRIORITY_LOW, 1);
		b = arb_queue(ACCEL_QUEUE_PRIORITY_LOW, 1);
		arb_close_gate(g);
		/* Far enough for a slow VM to submit them all before it passes. */
		last = accel_now_ns_for_test() + SECOND / 2;
		for (uint32_t i = 0; i < DL_SHARE_N; i++) {
			arb_submit_dl(a, 1, 1, NULL, NULL, last);
			arb_submit_dl(b, 1, 2, NULL, NULL, 0);
		}
		while (accel_now_ns_for_test() < last)
			usleep(1000);
		atomic_store(&gate_open, 1);
		ASSERT_OK(accel_queue_wait_idle(a, WAIT_LONG));
		ASSERT_OK(accel_queue_wait_idle(b, WAIT_LONG));
		ck_assert_uint_eq(atomic_load(&order_len), 2 * DL_SHARE_N);
		/*
		 * Share is judged while both queues compete: once the other
		 * one's last job ran, the deadline queue has the engine to
		 * itself (which happens when its jobs took more engine time
		 * each, as the executor measured them, and so fewer of them
		 * made its share).
		 */
		for (uint32_t i = 0; i < 2 * DL_SHARE_N; i++)
			if (order[i] != 1)
				other_last = (int32_t)i;
		for (uint32_t i = 0; i < 2 * DL_SHARE_N; i++) {
			/* Where it stood when its next job was released. */
			if (order[i] == 1 && (int32_t)i < other_last && lead_ns > lead_ns_max) {
				lead_ns_max = lead_ns;
				lead_at = (int32_t)i;
			}
			lead += order[i] == 1 ? 1 : -1;
			lead_ns += order[i] == 1 ? order_ns[i] : -order_ns[i];
			seen[i] = order[i] == 1 ? 'D' : '.';
			lead_max = lead > lead_max ? lead : lead_max;
		}
		accel_queue_release(a);
		accel_queue_release(b);
		if (lead_ns_max <= DL_SHARE_LEAD_NS_MAX || round == 3)
			break;
		fprintf(stderr, "# the deadline queue led by %.2f ms of device time (job %d), past the bound's %.2f: again\n",
			lead_ns_max / 1e6, lead_at + 1, DL_SHARE_LEAD_NS_MAX / 1e6);
		atomic_store(&gate_open, 0);
		atomic_store(&gate_entered, 0);
		atomic_store(&order_len, 0);
	}
	ck_assert_msg(lead_ns_max <= DL_SHARE_LEAD_NS_MAX,
		      "the deadline queue was released a job %.2f ms of device time ahead of its share (job %d of the run, in each of 3 runs); the lag bound allows %.2f ms; run order (D: deadline): %s",
		      lead_ns_max / 1e6, lead_at + 1, DL_SHARE_LAG_NS / 1e6, seen);
	/*
	 * The bound is device time as measured, 500 us and the executor's
	 * overhead a job: 40 jobs on an idle machine, 17 under TSan. Fair
	 * share alone has been seen to give 3 in a row.
	 */
	ck_assert_msg(lead_max >= DL_SHARE_LEAD_MIN,
		      "the deadline queue led by at most %d job(s), less than %d: its urgent deadlines did not take it ahead; run order (D: deadline): %s",
		      lead_max, DL_SHARE_LEAD_MIN, seen);
	accel_queue_release(g);
}
END_TEST

/*
 * accel_semaphore_set_deadline() alone: nothing submitted with a deadline,
 * the one set on the point takes its promiser ahead of the flood, and a
 * later, farther one (INT64_MAX) does not undo it (the earliest wins).
 * 200, on another queue without one, waits behind the flood.
 */
START_TEST(test_deadline_set_on_point_alone)
{
	int64_t deadline;
	accel_semaphore_t *x;
	struct dl_stage s;

	if (arb_skip())
		TEST_SKIP("%s", arb_skip());
	for (int64_t near = DL_NEAR_NS;;) {
		x = sem_new(0);
		dl_stage(&s, 2000);
		deadline = accel_now_ns_for_test() + near;
		{
			POINT(sx, x, 5);

			arb_submit_dl(s.d, 1, 100, NULL, &sx, 0);
		}
		arb_submit_dl(s.c, 1, 200, NULL, NULL, 0);
		/* Below the promised value: the same promiser. */
		ASSERT_OK(accel_semaphore_set_deadline(x, 3, deadline));
		ASSERT_OK(accel_semaphore_set_deadline(x, 5, INT64_MAX));
		if (dl_in_time(&s, deadline, &near))
			break;
		accel_semaphore_release(x);
	}
	dl_run(&s, deadline, FLOOD_N + 2);
	ck_assert_msg(order[0] == 100,
		      "run order %s: expected 100 (the deadline set on its point) first",
		      order_text());
	for (uint32_t i = 1; i <= FLOOD_N; i++)
		ck_assert_msg(order[i] == i, "run order %s: expected the flood 1..%u after 100, then 200",
			      order_text(), FLOOD_N);
	ck_assert_uint_eq(order[FLOOD_N + 1], 200);
	/* Reached: a hint with nothing to do. */
	ASSERT_OK(accel_semaphore_set_deadline(x, 5, accel_now_ns_for_test() + SECOND));
	dl_stage_end(&s);
	accel_semaphore_release(x);
}
END_TEST

/*
 * The deadline is one more signal entry on the kernel scheduler: a
 * submission with 3 points and a deadline no longer fits an inline SQE
 * (ACCEL_URING_JOB_POINTS) and goes whole, one with 2 does; both run and
 * reach every signal. ACCEL_JOB_MAX_POINTS signals and a deadline are one
 * entry too many there: -E2BIG naming the deadline, nothing promised (the
 * embedded scheduler takes them). A far deadline (INT64_MAX - 1) rides
 * along unchanged.
 */
START_TEST(test_deadline_signal_entries)
{
	enum { MAXP = 64 };
	accel_semaphore_t *sems[MAXP];
	uint64_t ones[MAXP], twos[MAXP];
	accel_command_buffer_t *cb = cb_new(ACCEL_COMMAND_BUFFER_REUSABLE, 0);
	accel_queue_t *q = arb_queue(ACCEL_QUEUE_PRIORITY_NORMAL, 0);
	static const uint32_t one[3] = { 1, 1, 1 };
	accel_submit_options_t o = ACCEL_SUBMIT_OPTIONS_INIT;
	uint32_t us = 10;
	int err;

	for (uint32_t i = 0; i < MAXP; i++) {
		sems[i] = sem_new(0);
		ones[i] = 1;
		twos[i] = 2;
	}
	ASSERT_OK(accel_command_buffer_dispatch(cb, arb_exe, 2, one, &us, 1, NULL, 0));
	ASSERT_OK(accel_command_buffer_end(cb));
	o.deadline_ns = INT64_MAX - 1;
	{
		accel_semaphore_list_t three = { 3, sems, ones };
		accel_semaphore_list_t wait1 = { 1, sems, ones };
		accel_semaphore_list_t sig1 = { 1, sems + 1, twos };

		/* 3 signals + the deadline: 4 entries. */
		ASSERT_OK(accel_queue_execute_with_options(q, NULL, &three, cb, NULL, &o));
		/* 1 wait, 1 signal + the deadline: 3, inline. */
		ASSERT_OK(accel_queue_execute_with_options(q, &wait1, &sig1, cb, NULL, &o));
		ASSERT_OK(accel_semaphore_wait(sems[1], 2, 0, WAIT_LONG));
		ck_assert_uint_eq(sem_value(sems[0], NULL), 1);
		ck_assert_uint_eq(sem_value(sems[2], NULL), 1);
	}
	{
		accel_semaphore_list_t all = { MAXP, sems, twos };

		o.deadline_ns = accel_now_ns_for_test() + 60 * SECOND;
		err = accel_queue_execute_with_options(q, NULL, &all, cb, NULL, &o);
		if (test_kernel_mode()) {
			ASSERT_ERRNO(err, E2BIG);
			ck_assert_msg(strstr(accel_error_message(), "deadline") != NULL,
				      "the -E2BIG message does not name the deadline: %s",
				      accel_error_message());
			ASSERT_ERRNO(accel_semaphore_wait(sems[MAXP - 1], 2,
							  ACCEL_SEMAPHORE_WAIT_SUBMITTED, 0),
				     ETIME);
			/* Without the deadline they fit. */
			ASSERT_OK(accel_queue_execute(q, NULL, &all, cb, NULL, 0));
		} else {
			ASSERT_OK(err);
		}
		ASSERT_OK(accel_semaphore_wait(sems[MAXP - 1], 2, 0, WAIT_LONG));
	}
	ASSERT_OK(accel_queue_wait_idle(q, WAIT_LONG));
	accel_command_buffer_release(cb);
	accel_queue_release(q);
	for (uint32_t i = 0; i < MAXP; i++)
		accel_semaphore_release(sems[i]);
}
END_TEST

/*
 * Bad options and deadlines: their errno, a message, and nothing
 * submitted (the signal not promised). INT64_MAX is taken.
 */
START_TEST(test_deadline_bad_input)
{
	accel_semaphore_t *x = sem_new(0);
	accel_command_buffer_t *cb = cb_new(ACCEL_COMMAND_BUFFER_REUSABLE, 0);
	accel_queue_t *q = arb_queue(ACCEL_QUEUE_PRIORITY_NORMAL, 0);
	static const uint32_t one[3] = { 1, 1, 1 };
	uint32_t id = 7;
	struct {
		accel_submit_options_t o;
		uint8_t tail[8];
	} big = { ACCEL_SUBMIT_OPTIONS_INIT, { 0 } };
	accel_submit_options_t o = ACCEL_SUBMIT_OPTIONS_INIT;
	POINT(sx, x, 1);
	POINT(wx, x, 1);

	ASSERT_OK(accel_command_buffer_dispatch(cb, arb_exe, 1, one, &id, 1, NULL, 0));
	ASSERT_OK(accel_command_buffer_end(cb));
	o.size = ACCEL_SUBMIT_OPTIONS_SIZE_V1 - 1;
	ASSERT_ERRNO(accel_queue_execute_with_options(q, NULL, &sx, cb, NULL, &o), EINVAL);
	ck_assert_ptr_nonnull(strstr(accel_error_message(), "options->size"));
	o = (accel_submit_options_t)ACCEL_SUBMIT_OPTIONS_INIT;
	o.flags = 1;
	ASSERT_ERRNO(accel_queue_execute_with_options(q, NULL, &sx, cb, NULL, &o), EINVAL);
	o = (accel_submit_options_t)ACCEL_SUBMIT_OPTIONS_INIT;
	o.deadline_ns = -1;
	ASSERT_ERRNO(accel_queue_execute_with_options(q, NULL, &sx, cb, NULL, &o), EINVAL);
	o.deadline_ns = INT64_MIN;
	ASSERT_ERRNO(accel_queue_execute_with_options(q, NULL, &sx, cb, NULL, &o), EINVAL);
	o.deadline_ns = 1;
	ASSERT_ERRNO(accel_queue_execute_with_options(q, NULL, &sx, cb, NULL, &o), ETIME);
	ck_assert_ptr_nonnull(strstr(accel_error_message(), "has passed"));
	ASSERT_ERRNO(accel_queue_execute_batch_with_options(q, NULL, &sx, 1, &cb, NULL, &o), ETIME);
	big.o.size = sizeof(big);
	big.tail[3] = 1;
	ASSERT_ERRNO(accel_queue_execute_with_options(q, NULL, &sx, cb, NULL, &big.o), EINVAL);
	/* A size no version could have: -E2BIG, nothing read past it. */
	o = (accel_submit_options_t)ACCEL_SUBMIT_OPTIONS_INIT;
	o.size = ACCEL_OPTIONS_SIZE_MAX + 1;
	ASSERT_ERRNO(accel_queue_execute_with_options(q, NULL, &sx, cb, NULL, &o), E2BIG);
	o.size = UINT32_MAX;
	ASSERT_ERRNO(accel_queue_execute_with_options(q, NULL, &sx, cb, NULL, &o), E2BIG);
	ASSERT_MESSAGE_CONTAINS("above ACCEL_OPTIONS_SIZE_MAX");
	/* Nothing was submitted: the point is not even promised. */
	ASSERT_ERRNO(accel_semaphore_wait(x, 1, ACCEL_SEMAPHORE_WAIT_SUBMITTED, 0), ETIME);
	ASSERT_ERRNO(accel_semaphore_set_deadline(NULL, 1, INT64_MAX), EINVAL);
	ASSERT_ERRNO(accel_semaphore_set_deadline(x, 1, 0), EINVAL);
	ASSERT_ERRNO(accel_semaphore_set_deadline(x, 1, -5), EINVAL);
	ASSERT_ERRNO(accel_semaphore_set_deadline(x, 1, 1), ETIME);
	/* A larger struct whose tail is zero, and the far edge: taken. */
	big.tail[3] = 0;
	big.o.deadline_ns = INT64_MAX;
	ASSERT_OK(accel_queue_execute_with_options(q, NULL, &sx, cb, NULL, &big.o));
	ASSERT_OK(accel_semaphore_set_deadline(x, UINT64_MAX, INT64_MAX));
	ASSERT_OK(accel_semaphore_wait(x, 1, 0, WAIT_LONG));
	ASSERT_OK(accel_queue_execute_with_options(q, &wx, NULL, cb, NULL, NULL));
	ASSERT_OK(accel_queue_wait_idle(q, WAIT_LONG));
	accel_command_buffer_release(cb);
	accel_queue_release(q);
	accel_semaphore_release(x);
}
END_TEST

START_TEST(test_arbiter_bad_credits)
{
	accel_queue_t *q = TEST_NOT_NULL;

	if (test_kernel_mode())
		TEST_SKIP("ACCEL_ENGINE_CREDITS is the embedded scheduler's; the module's limits are tests/kselftest/tenants.c's");
	setenv("ACCEL_ENGINE_CREDITS", "0", 1);
	ASSERT_ERRNO(accel_queue_create_with_options(dev, NULL, &q), EINVAL);
	ck_assert_ptr_null(q);
	ASSERT_MESSAGE_CONTAINS("ACCEL_ENGINE_CREDITS is \"0\"; it must be a number in 1..65536");
}
END_TEST

static Suite *queue_suite(void)
{
	Suite *suite = suite_create("queue");
	TCase *tc = tcase_create("execute");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_fill_patterns);
	tcase_add_test(tc, test_barrier_only);
	tcase_add_test(tc, test_sparse_high_slots);
	tcase_add_test(tc, test_update_and_copy);
	tcase_add_test(tc, test_indirect_transfers);
	tcase_add_test(tc, test_dispatch_saxpy);
	tcase_add_test(tc, test_dispatch_workgroup_ids_3d);
	tcase_add_test(tc, test_dispatch_indirect_from_dispatch);
	tcase_add_test(tc, test_100000_commands);
	tcase_add_test(tc, test_512_dispatches_without_barrier);
	tcase_add_test(tc, test_reuse_concurrent_tables);
	tcase_add_test(tc, test_many_in_flight);
	tcase_add_test(tc, test_order_on_one_timeline);
	tcase_add_test(tc, test_release_all_in_flight);
	tcase_add_test(tc, test_release_all_in_flight_nothing_held);
	tcase_add_test(tc, test_signal_on_another_thread_orders_its_waiters_first);
	tcase_add_test(tc, test_table_retained_until_signal);
	tcase_add_test(tc, test_no_head_of_line_blocking);
	tcase_add_test(tc, test_wait_for_submitted);
	tcase_add_test(tc, test_chain_across_queues);
	tcase_add_test(tc, test_release_during_list_wait);
	tcase_add_test(tc, test_failed_wait_propagates);
	tcase_add_test(tc, test_failed_command_index);
	tcase_add_test(tc, test_failure_chain_keeps_cause);
	tcase_add_test(tc, test_signal_not_above_current);
	tcase_add_loop_test(tc, test_signal_passed_by_host_at_its_value, 0, 3);
	tcase_add_loop_test(tc, test_signal_passed_by_a_job_of_the_same_value, 0, 3);
	tcase_add_loop_test(tc, test_signal_passed_by_a_job_of_a_higher_value, 0, 3);
	tcase_add_loop_test(tc, test_signal_at_the_initial_value, 0, 3);
	tcase_add_test(tc, test_signal_below_a_pending_higher_one);
	tcase_add_test(tc, test_execute_errors);
	tcase_add_test(tc, test_threads_submit);
	tcase_add_test(tc, test_release_queue_with_pending_work);
	tcase_add_test(tc, test_wait_idle);
	tcase_add_test(tc, test_wait_idle_queue_then_device);
	tcase_add_test(tc, test_wait_idle_failed_and_released);
	tcase_add_test(tc, test_wait_idle_threads);
	tcase_add_test(tc, test_wait_idle_bad_input);
	tcase_add_test(tc, test_batch_order_and_tables);
	tcase_add_test(tc, test_batch_long_in_order);
	tcase_add_test(tc, test_batch_under_flood);
	tcase_add_test(tc, test_batch_failure_names_command_buffer);
	tcase_add_test(tc, test_batch_empty_is_barrier);
	tcase_add_test(tc, test_batch_errors);
	tcase_add_test(tc, test_batch_one_shot_race);
	suite_add_tcase(suite, tc);

	tc = tcase_create("options");
	tcase_add_checked_fixture(tc, plain_setup, plain_teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_options_valid);
	tcase_add_test(tc, test_options_larger_struct);
	tcase_add_test(tc, test_options_invalid);
	suite_add_tcase(suite, tc);

	if (test_device_is_cpu()) { /* the gate is a cpu function */
		tc = tcase_create("arbiter");
		tcase_add_checked_fixture(tc, arb_setup, arb_teardown);
		tcase_add_unchecked_fixture(tc, test_credits_save, test_credits_restore);
		tcase_set_timeout(tc, 120);
		tcase_add_test(tc, test_arbiter_priority);
		tcase_add_test(tc, test_arbiter_weights);
		tcase_add_test(tc, test_arbiter_no_head_of_line_blocking);
		tcase_add_test(tc, test_arbiter_bad_credits);
		tcase_add_test(tc, test_deadline_near_goes_ahead);
		tcase_add_test(tc, test_deadline_bounded_by_lag);
		tcase_add_test(tc, test_deadline_stream_within_share);
		tcase_add_test(tc, test_deadline_on_a_point_and_passed_on);
		tcase_add_test(tc, test_deadline_set_on_point_alone);
		tcase_add_test(tc, test_deadline_bad_input);
		tcase_add_test(tc, test_deadline_signal_entries);
		suite_add_tcase(suite, tc);
	}
	return suite;
}

int main(void)
{
	test_require_device();
	return test_run_suite(queue_suite());
}
