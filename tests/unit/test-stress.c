// SPDX-License-Identifier: MIT
/*
 * Check suite "stress": many threads submitting, waiting and releasing
 * objects at once, on the test device (cpu:// or ACCEL_TEST_DEVICE, see
 * test-accel.h), and on the kernel scheduler in the VM (the static build,
 * ACCEL_SCHEDULER=kernel).
 *
 * Each test asserts outcomes, not just survival: the values each timeline
 * reaches, the counts the kernels wrote, the error a failure propagates,
 * and that every wait ends: all waits are bounded (WAIT_LONG), so a lost
 * wake-up fails the test, naming the wait, instead of hanging the run.
 * Together they take a few seconds on cpu; the sizes are small enough for
 * TSan and the VM's emulated CPUs.
 */
#include <pthread.h>

#include "test-accel.h"

#define THREADS 6

static accel_executable_t *exe;

static void setup(void)
{
	device_setup();
	exe = kernels();
}

static void teardown(void)
{
	accel_executable_release(exe);
	device_teardown();
}

static void start(pthread_t *t, void *(*fn)(void *), void *arg)
{
	ck_assert_int_eq(pthread_create(t, NULL, fn, arg), 0);
}

/* A REUSABLE command buffer: "increment" on slot 0 (a u32 counter). */
static accel_command_buffer_t *increment_cb(void)
{
	accel_command_buffer_t *cb = cb_new(ACCEL_COMMAND_BUFFER_REUSABLE, 1);
	accel_buffer_ref_t r[1] = { accel_buffer_ref_indirect(0, 0, 4) };
	uint32_t one[3] = { 1, 1, 1 };

	ASSERT_OK(accel_command_buffer_dispatch(cb, exe, entry(exe, "increment"),
						one, NULL, 0, r, 1));
	ASSERT_OK(accel_command_buffer_end(cb));
	return cb;
}

/* Submits @cb on @q with @counter in slot 0: waits @ws@wv, signals @ss@sv. */
static int execute_one(accel_queue_t *q, accel_command_buffer_t *cb,
		       accel_buffer_t *counter, accel_semaphore_t *ws, uint64_t wv,
		       accel_semaphore_t *ss, uint64_t sv)
{
	accel_binding_t t[1] = { { counter, 0, 4 } };
	accel_binding_table_t table = { 1, t };
	accel_semaphore_t *wsa[1] = { ws }, *ssa[1] = { ss };
	uint64_t wva[1] = { wv }, sva[1] = { sv };
	accel_semaphore_list_t wl = { ws ? 1 : 0, wsa, wva }, sl = { 1, ssa, sva };

	return accel_queue_execute(q, &wl, &sl, cb, &table, 0);
}

/* ---- many submitters, many waiters ------------------------------------- */

enum { CHAIN = 400 };

struct chain {
	accel_queue_t *queue;           /* shared by two threads each */
	accel_command_buffer_t *cb;     /* shared by all */
	accel_buffer_t *counter;
	accel_semaphore_t *timeline;
	int submit_err;                 /* first failed call's errno */
	int wait_err;
	uint64_t waits_done;
};

/*
 * Submits CHAIN increments, each waiting on the previous point of the
 * thread's own timeline, and waits on every 10th point on the way (so that
 * host waits race the executor's signals) and on the last.
 */
static void *chain_main(void *arg)
{
	struct chain *c = arg;

	for (uint64_t i = 1; i <= CHAIN; i++) {
		int err = execute_one(c->queue, c->cb, c->counter, c->timeline, i - 1,
				      c->timeline, i);

		if (err && !c->submit_err)
			c->submit_err = err;
		if (i % 10 == 0) {
			err = accel_semaphore_wait(c->timeline, i - 5, 0, WAIT_LONG);
			if (err && !c->wait_err)
				c->wait_err = err;
			c->waits_done++;
		}
	}
	if (!c->wait_err)
		c->wait_err = accel_semaphore_wait(c->timeline, CHAIN, 0, WAIT_LONG);
	return NULL;
}

/* Host waiters on another thread's timeline, with ANY lists and timeouts. */
struct watcher {
	struct chain *chains;
	int err;
	uint64_t timeouts;
};

static void *watcher_main(void *arg)
{
	struct watcher *w = arg;
	accel_semaphore_t *s[THREADS];
	uint64_t v[THREADS];

	for (int i = 0; i < THREADS; i++)
		s[i] = w->chains[i].timeline;
	for (uint64_t target = 10; target <= CHAIN; target += 10) {
		accel_semaphore_list_t any = { THREADS, s, v };
		int err;

		for (int i = 0; i < THREADS; i++)
			v[i] = target;
		/* A short deadline first: -ETIME or 0, nothing else. */
		err = accel_semaphore_list_wait(&any, ACCEL_SEMAPHORE_WAIT_ANY,
						accel_deadline_after(100000), NULL);
		if (err == -ETIME)
			w->timeouts++;
		else if (err && !w->err)
			w->err = err;
		err = accel_semaphore_list_wait(&any, ACCEL_SEMAPHORE_WAIT_ALL, WAIT_LONG, NULL);
		if (err && !w->err)
			w->err = err;
	}
	return NULL;
}

START_TEST(test_threads_submit_and_wait)
{
	struct chain c[THREADS];
	struct watcher w[2];
	pthread_t t[THREADS], wt[2];
	accel_command_buffer_t *cb = increment_cb();
	accel_queue_t *q[THREADS / 2];

	for (int i = 0; i < THREADS / 2; i++)
		ASSERT_OK(accel_queue_create(dev, 0, &q[i]));
	for (int i = 0; i < THREADS; i++) {
		c[i] = (struct chain){ .queue = q[i / 2], .cb = cb,
				       .counter = buffer_new(4), .timeline = sem_new(0) };
		memset(map(c[i].counter), 0, 4);
	}
	for (int i = 0; i < 2; i++) {
		w[i] = (struct watcher){ .chains = c };
		start(&wt[i], watcher_main, &w[i]);
	}
	for (int i = 0; i < THREADS; i++)
		start(&t[i], chain_main, &c[i]);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < 2; i++) {
		pthread_join(wt[i], NULL);
		ck_assert_msg(w[i].err == 0, "watcher %d: a list wait returned %s", i,
			      test_errname(w[i].err));
	}
	for (int i = 0; i < THREADS; i++) {
		int error;

		ck_assert_msg(c[i].submit_err == 0, "thread %d: accel_queue_execute returned %s",
			      i, test_errname(c[i].submit_err));
		ck_assert_msg(c[i].wait_err == 0, "thread %d: accel_semaphore_wait returned %s",
			      i, test_errname(c[i].wait_err));
		ck_assert_uint_eq(c[i].waits_done, CHAIN / 10);
		ck_assert_uint_eq(sem_value(c[i].timeline, &error), CHAIN);
		ck_assert_int_eq(error, 0);
		ck_assert_msg(*(uint32_t *)map(c[i].counter) == CHAIN,
			      "thread %d: counter is %u, expected %u", i,
			      *(uint32_t *)map(c[i].counter), CHAIN);
		accel_buffer_release(c[i].counter);
		accel_semaphore_release(c[i].timeline);
	}
	for (int i = 0; i < THREADS / 2; i++)
		accel_queue_release(q[i]);
	accel_command_buffer_release(cb);
}
END_TEST

/* ---- releasing objects while work and waits are in progress ------------- */

struct held_waiter {
	accel_semaphore_t *s; /* the thread's own reference */
	uint64_t value;
	int ret;
};

static void *held_waiter_main(void *arg)
{
	struct held_waiter *h = arg;

	h->ret = accel_semaphore_wait(h->s, h->value, 0, WAIT_LONG);
	accel_semaphore_release(h->s);
	return NULL;
}

/*
 * Gated submissions on a queue, then every reference the test holds to
 * the queue, the command buffer, the semaphores and the table's buffers
 * is dropped while the work waits and while host threads wait on its
 * signals (each with a reference of its own). Opening the gate must run
 * everything: the submissions held what they use.
 */
START_TEST(test_release_everything_in_flight)
{
	enum { ROUNDS = 20, SUBS = 8 };

	for (int round = 0; round < ROUNDS; round++) {
		accel_queue_t *q;
		accel_command_buffer_t *cb = increment_cb();
		accel_semaphore_t *gate = sem_new(0), *done = sem_new(0);
		accel_buffer_t *counter = buffer_new(4);
		uint32_t *pc = map(counter);
		struct held_waiter h[3];
		pthread_t t[3];

		*pc = 0;
		ASSERT_OK(accel_queue_create(dev, 0, &q));
		for (uint64_t i = 1; i <= SUBS; i++)
			ASSERT_OK(execute_one(q, cb, counter, i == 1 ? gate : done,
					      i == 1 ? 1 : i - 1, done, i));
		accel_buffer_retain(counter); /* to read it back */
		for (int i = 0; i < 3; i++) {
			h[i] = (struct held_waiter){ done, SUBS - (uint64_t)i, 1 };
			accel_semaphore_retain(done);
			start(&t[i], held_waiter_main, &h[i]);
		}
		accel_queue_release(q);
		accel_command_buffer_release(cb);
		accel_buffer_release(counter);
		accel_semaphore_release(done);
		ASSERT_OK(accel_semaphore_signal(gate, 1));
		accel_semaphore_release(gate);
		for (int i = 0; i < 3; i++) {
			pthread_join(t[i], NULL);
			ck_assert_msg(h[i].ret == 0, "round %d: waiter %d returned %s", round, i,
				      test_errname(h[i].ret));
		}
		ck_assert_msg(*pc == SUBS, "round %d: counter is %u, expected %u", round, *pc, SUBS);
		accel_buffer_release(counter);
	}
}
END_TEST

/*
 * A semaphore released by its creator while threads wait on it through
 * their own references and the host signals it from another thread: every
 * waiter wakes with 0, and nothing is touched after the last release.
 */
static void *signal_later_main(void *arg)
{
	accel_semaphore_t *s = arg;

	usleep(1000);
	if (accel_semaphore_signal(s, 2))
		return (void *)1;
	accel_semaphore_release(s);
	return NULL;
}

START_TEST(test_release_semaphore_during_waits)
{
	enum { ROUNDS = 300 };

	for (int round = 0; round < ROUNDS; round++) {
		accel_semaphore_t *s = sem_new(0);
		struct held_waiter h[4];
		pthread_t t[4], sig;
		void *sig_ret;

		for (int i = 0; i < 4; i++) {
			h[i] = (struct held_waiter){ s, 1 + (uint64_t)(i % 2), 1 };
			accel_semaphore_retain(s);
			start(&t[i], held_waiter_main, &h[i]);
		}
		accel_semaphore_retain(s);
		start(&sig, signal_later_main, s);
		accel_semaphore_release(s); /* the creator's, during the waits */
		pthread_join(sig, &sig_ret);
		ck_assert_msg(sig_ret == NULL, "round %d: accel_semaphore_signal failed", round);
		for (int i = 0; i < 4; i++) {
			pthread_join(t[i], NULL);
			ck_assert_msg(h[i].ret == 0, "round %d: waiter %d returned %s", round, i,
				      test_errname(h[i].ret));
		}
	}
}
END_TEST

/* ---- devices released with work in flight -------------------------------- */

struct device_worker {
	int rounds;
	int err;       /* first unexpected result, as -errno */
	char what[160];
};

static void worker_fail(struct device_worker *w, int err, const char *what)
{
	if (w->err)
		return;
	w->err = err ? err : -EPROTO;
	snprintf(w->what, sizeof(w->what), "%s: %s", what, accel_error_message());
}

/*
 * Each round opens a device of its own, queues gated work on it (an
 * execute that fills a buffer, then a barrier), releases the queue, the
 * command buffer, the buffer and the device itself, then opens the gate
 * and waits for the barrier's signal. The last release of the device
 * happens on whichever thread finishes last; the semaphores keep their
 * scheduler.
 */
static void device_round(struct device_worker *w)
{
	accel_device_t *d;
	accel_queue_t *q;
	accel_command_buffer_t *cb;
	accel_buffer_t *b;
	accel_semaphore_t *gate, *mid, *done;
	accel_buffer_params_t p = { HOST_TYPE, ALL_USAGE };
	uint32_t v = 0x5a5a5a5a;
	uint64_t value;
	int err, error;

	err = accel_device_open(test_device_uri(), NULL, &d);
	if (err)
		return worker_fail(w, err, "accel_device_open");
	if ((err = accel_queue_create(d, 0, &q)) ||
	    (err = accel_command_buffer_create(d, ACCEL_COMMAND_BUFFER_ONE_SHOT, 0, &cb))) {
		accel_device_release(d);
		return worker_fail(w, err, "accel_queue_create/accel_command_buffer_create");
	}
	err = accel_allocator_allocate_buffer(accel_device_allocator(d), &p, 256, &b);
	if (!err)
		err = accel_command_buffer_begin(cb);
	if (!err)
		err = accel_command_buffer_fill(cb, accel_buffer_ref_direct(b, 0, 256), &v, 4);
	if (!err)
		err = accel_command_buffer_end(cb);
	gate = mid = done = NULL;
	if (!err)
		err = accel_semaphore_create(accel_device_scheduler(d), 0, &gate);
	if (!err)
		err = accel_semaphore_create(accel_device_scheduler(d), 0, &mid);
	if (!err)
		err = accel_semaphore_create(accel_device_scheduler(d), 0, &done);
	if (!err) {
		accel_semaphore_t *g[1] = { gate }, *m[1] = { mid }, *dn[1] = { done };
		uint64_t one[1] = { 1 };
		accel_semaphore_list_t gl = { 1, g, one }, ml = { 1, m, one }, dl = { 1, dn, one };

		err = accel_queue_execute(q, &gl, &ml, cb, NULL, 0);
		if (!err)
			err = accel_queue_barrier(q, &ml, &dl, 0);
	}
	accel_queue_release(q);
	accel_command_buffer_release(cb);
	accel_buffer_release(b);
	accel_device_release(d);
	if (err) {
		worker_fail(w, err, "recording or submitting");
	} else if ((err = accel_semaphore_signal(gate, 1))) {
		worker_fail(w, err, "accel_semaphore_signal");
	} else if ((err = accel_semaphore_wait(done, 1, 0, WAIT_LONG))) {
		worker_fail(w, err, "accel_semaphore_wait (the barrier's signal)");
	} else if (accel_semaphore_query(mid, &value, &error) || value != 1 || error) {
		worker_fail(w, error, "the execute's signal");
	}
	accel_semaphore_release(gate);
	accel_semaphore_release(mid);
	accel_semaphore_release(done);
}

static void *device_worker_main(void *arg)
{
	struct device_worker *w = arg;

	for (int i = 0; i < w->rounds && !w->err; i++)
		device_round(w);
	return NULL;
}

START_TEST(test_release_device_with_work_in_flight)
{
	enum { WORKERS = 3 };
	/* Opening a vulkan device creates an instance: fewer rounds there. */
	int rounds = test_device_is_cpu() ? 60 : 4;
	struct device_worker w[WORKERS];
	pthread_t t[WORKERS];

	for (int i = 0; i < WORKERS; i++) {
		w[i] = (struct device_worker){ .rounds = rounds };
		start(&t[i], device_worker_main, &w[i]);
	}
	for (int i = 0; i < WORKERS; i++) {
		pthread_join(t[i], NULL);
		ck_assert_msg(w[i].err == 0, "worker %d: %s returned %s", i, w[i].what,
			      test_errname(w[i].err));
	}
}
END_TEST

/* ---- errors propagated under load --------------------------------------- */

struct failing_chain {
	accel_queue_t *queue;
	accel_command_buffer_t *cb;
	accel_semaphore_t *source;  /* failed by the test */
	accel_semaphore_t *timeline;
	accel_buffer_t *counter;
	int err;
};

/* 40 submissions hang off @source=1 through the thread's own timeline. */
static void *failing_chain_main(void *arg)
{
	struct failing_chain *f = arg;

	for (uint64_t i = 1; i <= 40 && !f->err; i++)
		f->err = execute_one(f->queue, f->cb, f->counter,
				     i == 1 ? f->source : f->timeline, i == 1 ? 1 : i - 1,
				     f->timeline, i);
	return NULL;
}

/*
 * Several threads build chains on one source semaphore while the main
 * thread fails it: every chain's timeline ends failed with that error and
 * none of its work ran; an unrelated chain on the same queues completes.
 */
START_TEST(test_failure_propagates_under_load)
{
	struct failing_chain f[THREADS];
	pthread_t t[THREADS];
	accel_queue_t *q[2];
	accel_command_buffer_t *cb = increment_cb();
	accel_semaphore_t *source = sem_new(0), *ok = sem_new(0);
	accel_buffer_t *ok_counter = buffer_new(4);

	memset(map(ok_counter), 0, 4);
	ASSERT_OK(accel_queue_create(dev, 0, &q[0]));
	ASSERT_OK(accel_queue_create(dev, 0, &q[1]));
	for (int i = 0; i < THREADS; i++) {
		f[i] = (struct failing_chain){ .queue = q[i % 2], .cb = cb, .source = source,
					       .timeline = sem_new(0), .counter = buffer_new(4) };
		memset(map(f[i].counter), 0, 4);
		start(&t[i], failing_chain_main, &f[i]);
	}
	for (uint64_t i = 1; i <= 20; i++)
		ASSERT_OK(execute_one(q[i % 2], cb, ok_counter, i > 1 ? ok : NULL, i - 1, ok, i));
	usleep(2000); /* let some chains be partly built */
	ASSERT_OK(accel_semaphore_fail(source, -ECONNRESET));
	for (int i = 0; i < THREADS; i++) {
		int error = 0;
		int ret;

		pthread_join(t[i], NULL);
		ck_assert_msg(f[i].err == 0, "thread %d: accel_queue_execute returned %s", i,
			      test_errname(f[i].err));
		ret = accel_semaphore_wait(f[i].timeline, 40, 0, WAIT_LONG);
		ck_assert_msg(ret == -ECONNRESET, "thread %d: the chain's wait returned %s, expected ECONNRESET",
			      i, test_errname(ret));
		sem_value(f[i].timeline, &error);
		ck_assert_int_eq(error, -ECONNRESET);
		ck_assert_msg(*(uint32_t *)map(f[i].counter) == 0,
			      "thread %d: %u submissions ran after their wait failed", i,
			      *(uint32_t *)map(f[i].counter));
		accel_semaphore_release(f[i].timeline);
		accel_buffer_release(f[i].counter);
	}
	ASSERT_OK(accel_semaphore_wait(ok, 20, 0, WAIT_LONG));
	ck_assert_uint_eq(*(uint32_t *)map(ok_counter), 20);
	accel_queue_release(q[0]);
	accel_queue_release(q[1]);
	accel_command_buffer_release(cb);
	accel_buffer_release(ok_counter);
	accel_semaphore_release(source);
	accel_semaphore_release(ok);
}
END_TEST

static Suite *stress_suite(void)
{
	Suite *suite = suite_create("stress");
	TCase *tc = tcase_create("stress");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_threads_submit_and_wait);
	tcase_add_test(tc, test_release_everything_in_flight);
	tcase_add_test(tc, test_release_semaphore_during_waits);
	tcase_add_test(tc, test_release_device_with_work_in_flight);
	tcase_add_test(tc, test_failure_propagates_under_load);
	suite_add_tcase(suite, tc);
	return suite;
}

int main(void)
{
	test_require_device();
	return test_run_suite(stress_suite());
}
