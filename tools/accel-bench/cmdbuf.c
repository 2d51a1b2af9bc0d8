// SPDX-License-Identifier: MIT
/*
 * accel-bench: what reusable command buffers save on the host.
 *
 *	cmdbuf  reuse_speedup_1000: host time to record a ONE_SHOT command
 *	        buffer of 1000 dispatches (direct refs to this input's
 *	        buffers) and submit it, over the host time to submit the
 *	        REUSABLE one, recorded once with 8 binding-table slots, with a
 *	        new binding table. submit_cost_10000_vs_100: host time of one
 *	        accel_queue_execute() of a REUSABLE command buffer of 10,000
 *	        dispatches over one of 100, both over the same 8 slots (flat in
 *	        the number of commands: ~1). submit_cost_sparse_vs_dense: host
 *	        time of one accel_queue_execute() of a REUSABLE command buffer
 *	        of one dispatch whose bindings use slot 65,535 only (a table
 *	        of 65,536 entries), over the same with slot 0 only (a table of
 *	        one): flat in the highest slot number, ~1.
 *
 *	        batch.submit_8_vs_8x1: host time of one
 *	        accel_queue_execute_batch() of 8 command buffers (the REUSABLE
 *	        one of 100 dispatches, each with its own table) over 8
 *	        accel_queue_execute() of the same, each signalling (one job
 *	        and one signal against 8).
 *
 *	ksubmit kernel_vs_embedded_submit (libaccel.): host time of one
 *	        accel_queue_execute() of the REUSABLE command buffer of 100
 *	        dispatches over 8 slots on the kernel scheduler (the module,
 *	        in the VM) over the same on the embedded scheduler, all
 *	        devices open in this process and their rounds interleaved.
 *	        uring_floor_vs_embedded_submit: the embedded submit plus one
 *	        ACCEL_URING_CMD_NOP entered alone (a trip into the module that
 *	        does nothing) over the embedded submit: the least
 *	        kernel_vs_embedded_submit can be while each submission enters
 *	        the ring itself. kernel_vs_uring_floor_submit: the kernel
 *	        scheduler's submit over that floor (what the SUBMIT and the
 *	        library's part in it add).
 *	        kernel_sqpoll_vs_embedded_submit: the same with the kernel
 *	        scheduler's ring polled by a kernel thread
 *	        (ACCEL_URING_SQPOLL=2): no system call per submission; the
 *	        module's work moves to that thread.
 *	        kernel_vs_embedded_stream (and kernel_sqpoll_): the other
 *	        side, end to end: REPS submissions of a one-dispatch
 *	        command buffer back to back, timed from the first until the
 *	        host's wait sees the last one's signal, per job; the release
 *	        of each job, its executor's run and COMPLETE, and the wake-ups
 *	        between them are in it.
 *	        kernel_events_vs_answers_stream: the kernel scheduler's stream
 *	        time with releases as events fetched by the COMPLETE (module
 *	        ABI 1.8) over the same with releases as SUBMIT completions
 *	        (ACCEL_KERNEL_EVENTS=0, what modules before 1.8 offer): below
 *	        1 is what events save. kernel_answered_vs_evented_submit,
 *	        _stream and _round_trip: the kernel scheduler with a lone
 *	        job's release answered by its submission (ABI 1.9,
 *	        ACCEL_KERNEL_ANSWER=1) over the same as it runs by default,
 *	        every release an event: below 1 is what the answers save.
 *	        kernel_vs_embedded_round_trip: one job at a time, submitted
 *	        and waited for (the host's wait returns), on the kernel
 *	        scheduler over the embedded one.
 *
 * Host time ends when accel_queue_execute() returns, i.e. when the job is
 * in the executor's hands. Each round submits REPS times back to back (the
 * steady state of a program feeding a stream of inputs) and keeps the
 * median submission, then waits, untimed, for all of them; so the figure
 * leaves out the one submission per round that found the executor asleep
 * and paid for waking it (a futex wake: an inter-processor interrupt,
 * 5-20 us under a hypervisor, and the same for any command buffer). Tables
 * alternate between two sets of 8 buffers, so each submission really has a
 * new table.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <liburing.h>

#include <accel/accel.h>
#include <accel/cpu_executable.h>

#include "accel-insn.h"
#include "bench.h"
#include "cpu-common.h"

#define SLOTS 8
#define REPS 40
#define SPARSE_SLOT 65535u

/*
 * bindings: a, b (u32[]). Reads a[0] and b[0]: a dispatch that touches
 * both bindings and writes nothing, so that the dispatches between two
 * barriers may run concurrently without racing.
 */
static void touch(const struct accel_cpu_dispatch *d)
{
	const uint32_t *a = d->bindings[0], *b = d->bindings[1];
	uint32_t sum = a[0] + b[0];

	__asm__ __volatile__("" : : "r"(sum));
}

static const struct accel_cpu_entry touch_entries[] = {
	{ "touch", 2, 0, { 1, 1, 1 }, touch },
};

static const struct accel_cpu_executable touch_table = {
	ACCEL_CPU_EXECUTABLE_ABI_VERSION, 1, touch_entries, NULL,
};

struct cmdbuf_bench {
	struct bench_dev d;
	accel_executable_t *exe;
	accel_buffer_t *bufs[2][SLOTS];
	accel_binding_t bindings[2][SLOTS];
	accel_command_buffer_t *r1, *r100, *r1000, *r10000;
	/* one dispatch on slot 0 / on slot SPARSE_SLOT, and their tables */
	accel_command_buffer_t *dense, *sparse;
	accel_binding_t *sparse_bindings[2];
};

/* Command i uses slots (or buffers) i % 8 and (i + 1) % 8. */
static int record(struct cmdbuf_bench *c, accel_command_buffer_t *cb,
		  uint32_t n, accel_buffer_t *const *direct)
{
	static const uint32_t one[3] = { 1, 1, 1 };
	int err = 0;

	for (uint32_t i = 0; i < n && !err; i++) {
		uint32_t s0 = i % SLOTS, s1 = (i + 1) % SLOTS;
		accel_buffer_ref_t b[2] = {
			accel_buffer_ref_indirect(s0, 0, 4),
			accel_buffer_ref_indirect(s1, 4, 4),
		};

		if (direct) {
			b[0] = accel_buffer_ref_direct(direct[s0], 0, 4);
			b[1] = accel_buffer_ref_direct(direct[s1], 4, 4);
		}
		err = accel_command_buffer_dispatch(cb, c->exe, 0, one, NULL, 0, b, 2);
	}
	return err ? err : accel_command_buffer_end(cb);
}

static int reusable(struct cmdbuf_bench *c, uint32_t n,
		    accel_command_buffer_t **out)
{
	int err = bench_cb(&c->d, out);

	return err ? err : record(c, *out, n, NULL);
}

/* The benchmark running, for die(): cmdbuf's helpers serve ksubmit too. */
static const char *bench_name = "cmdbuf";

static void die(const char *what)
{
	fprintf(stderr, "accel-bench: %s: %s: %s\n", bench_name, what, accel_error_message());
	exit(1);
}

/* Median host ns of REPS submissions of @cb, alternating @tables. */
static double submit_tables_ns(struct cmdbuf_bench *c, accel_command_buffer_t *cb,
			       const accel_binding_table_t tables[2])
{
	double v[REPS];

	for (int i = 0; i < REPS; i++) {
		const accel_binding_table_t *t = &tables[i & 1];
		double t0 = now_ns();

		if (bench_submit(&c->d, cb, t))
			die("accel_queue_execute");
		v[i] = now_ns() - t0;
	}
	bench_drain(&c->d);
	return median(v, REPS);
}

/* The same, for a command buffer over one slot: 0 or SPARSE_SLOT. */
static double submit_slot_ns(struct cmdbuf_bench *c, int sparse)
{
	accel_binding_table_t t[2];

	for (int i = 0; i < 2; i++)
		t[i] = sparse ? (accel_binding_table_t){ SPARSE_SLOT + 1, c->sparse_bindings[i] } :
				(accel_binding_table_t){ 1, c->bindings[i] };
	return submit_tables_ns(c, sparse ? c->sparse : c->dense, t);
}

/*
 * REPS submissions of @cb back to back, alternating tables, then a wait
 * for the last one's signal. Returns the median host ns of a submission;
 * with @stream, also the ns per job from the first submission until the
 * host saw the last signal: what a stream of jobs costs end to end, the
 * executor's side included.
 */
static double submit_ns_stream(struct cmdbuf_bench *c, accel_command_buffer_t *cb,
			       double *stream)
{
	double v[REPS], start = now_ns();

	for (int i = 0; i < REPS; i++) {
		accel_binding_table_t t = { SLOTS, c->bindings[i & 1] };
		double t0 = now_ns();

		if (bench_submit(&c->d, cb, &t))
			die("accel_queue_execute");
		v[i] = now_ns() - t0;
	}
	bench_drain(&c->d);
	if (stream)
		*stream = (now_ns() - start) / REPS;
	return median(v, REPS);
}

/*
 * REPS times: submit @cb, wait for its signal. The median host ns of one
 * round trip: what a program that waits for each job pays, a job alone on
 * its engine each time.
 */
static double round_trip_ns(struct cmdbuf_bench *c, accel_command_buffer_t *cb)
{
	double v[REPS];

	for (int i = 0; i < REPS; i++) {
		accel_binding_table_t t = { SLOTS, c->bindings[i & 1] };
		double t0 = now_ns();

		bench_run(&c->d, cb, &t);
		v[i] = now_ns() - t0;
	}
	return median(v, REPS);
}

static double submit_ns(struct cmdbuf_bench *c, accel_command_buffer_t *cb)
{
	return submit_ns_stream(c, cb, NULL);
}

#define BATCH 8

/*
 * Median host ns of REPS submissions of @cb 8 times, alternating tables:
 * as one batch (@batch), or as 8 executes.
 */
static double submit_8_ns(struct cmdbuf_bench *c, accel_command_buffer_t *cb, int batch)
{
	accel_command_buffer_t *cbs[BATCH];
	accel_binding_table_t t[BATCH];
	double v[REPS];

	for (int j = 0; j < BATCH; j++) {
		cbs[j] = cb;
		t[j] = (accel_binding_table_t){ SLOTS, c->bindings[j & 1] };
	}
	for (int i = 0; i < REPS; i++) {
		uint64_t value = c->d.value + 1;
		accel_semaphore_list_t sig = { 1, &c->d.sem, &value };
		double t0 = now_ns();

		if (batch) {
			if (accel_queue_execute_batch(c->d.queue, NULL, &sig, BATCH, cbs, t, 0))
				die("accel_queue_execute_batch");
			c->d.value = value;
		} else {
			for (int j = 0; j < BATCH; j++)
				if (bench_submit(&c->d, cb, &t[j]))
					die("accel_queue_execute");
		}
		v[i] = now_ns() - t0;
	}
	bench_drain(&c->d);
	return median(v, REPS);
}

/* Median host ns to create, record 1000 dispatches, end and submit. */
static double one_shot_ns(struct cmdbuf_bench *c)
{
	double v[REPS];

	for (int i = 0; i < REPS; i++) {
		accel_command_buffer_t *cb;
		double t0 = now_ns();

		if (accel_command_buffer_create(c->d.dev, ACCEL_COMMAND_BUFFER_ONE_SHOT,
						0, &cb) ||
		    accel_command_buffer_begin(cb) ||
		    record(c, cb, 1000, c->bufs[i & 1]) ||
		    bench_submit(&c->d, cb, NULL))
			die("recording the ONE_SHOT command buffer");
		accel_command_buffer_release(cb);
		v[i] = now_ns() - t0;
	}
	bench_drain(&c->d);
	return median(v, REPS);
}

/* A REUSABLE command buffer of one dispatch, both bindings on @slot. */
static int one_slot(struct cmdbuf_bench *c, uint32_t slot,
		    accel_command_buffer_t **out)
{
	static const uint32_t one[3] = { 1, 1, 1 };
	accel_buffer_ref_t b[2] = {
		accel_buffer_ref_indirect(slot, 0, 4),
		accel_buffer_ref_indirect(slot, 4, 4),
	};
	int err = accel_command_buffer_create(c->d.dev, ACCEL_COMMAND_BUFFER_REUSABLE,
					      SPARSE_SLOT + 1, out);

	if (!err)
		err = accel_command_buffer_begin(*out);
	if (!err)
		err = accel_command_buffer_dispatch(*out, c->exe, 0, one, NULL, 0, b, 2);
	return err ? err : accel_command_buffer_end(*out);
}

/* The sparse tables: SPARSE_SLOT + 1 entries, the last one set. */
static int sparse_setup(struct cmdbuf_bench *c)
{
	int err = one_slot(c, 0, &c->dense);

	if (!err)
		err = one_slot(c, SPARSE_SLOT, &c->sparse);
	for (int t = 0; t < 2 && !err; t++) {
		c->sparse_bindings[t] = calloc(SPARSE_SLOT + 1, sizeof(accel_binding_t));
		if (!c->sparse_bindings[t])
			return -ENOMEM;
		c->sparse_bindings[t][SPARSE_SLOT] = c->bindings[t][0];
	}
	return err;
}

/* cpu:// on the scheduler of @kind; with @all, every command buffer. */
static int setup_on(struct cmdbuf_bench *c, accel_scheduler_kind_t kind, int all)
{
	int err = bench_open_on(&c->d, 0, kind);

	if (!err)
		err = accel_cpu_executable_create(c->d.dev, &touch_table, &c->exe);
	for (int t = 0; t < 2 && !err; t++)
		for (int s = 0; s < SLOTS && !err; s++) {
			uint8_t *p;

			err = bench_buffer(&c->d, 64, &c->bufs[t][s], &p);
			if (!err)
				memset(p, 0, 64);
			c->bindings[t][s] = (accel_binding_t){ c->bufs[t][s], 0, ACCEL_WHOLE_BUFFER };
		}
	if (!err)
		err = reusable(c, 100, &c->r100);
	if (!err)
		err = reusable(c, 1, &c->r1);
	if (!all)
		return err;
	if (!err)
		err = reusable(c, 1000, &c->r1000);
	if (!err)
		err = reusable(c, 10000, &c->r10000);
	if (!err)
		err = sparse_setup(c);
	return err;
}

static int setup(struct cmdbuf_bench *c)
{
	return setup_on(c, ACCEL_SCHEDULER_EMBEDDED, 1);
}

static void teardown(struct cmdbuf_bench *c)
{
	accel_command_buffer_release(c->r1);
	accel_command_buffer_release(c->r100);
	accel_command_buffer_release(c->r1000);
	accel_command_buffer_release(c->r10000);
	accel_command_buffer_release(c->dense);
	accel_command_buffer_release(c->sparse);
	free(c->sparse_bindings[0]);
	free(c->sparse_bindings[1]);
	for (int t = 0; t < 2; t++)
		for (int s = 0; s < SLOTS; s++)
			accel_buffer_release(c->bufs[t][s]);
	accel_executable_release(c->exe);
	bench_close(&c->d);
}

int bench_cmdbuf(const struct opts *o)
{
	struct cmdbuf_bench c = { 0 };
	double *v = calloc(8 * (size_t)o->rounds, sizeof(double)), m[8];
	int first = 1;

	if (!v || setup(&c))
		die("setting up");
	for (int r = 0; r < o->rounds; r++) {
		v[0 * o->rounds + r] = one_shot_ns(&c);
		v[1 * o->rounds + r] = submit_ns(&c, c.r1000);
		v[2 * o->rounds + r] = submit_ns(&c, c.r100);
		v[3 * o->rounds + r] = submit_ns(&c, c.r10000);
		v[4 * o->rounds + r] = submit_slot_ns(&c, 0);
		v[5 * o->rounds + r] = submit_slot_ns(&c, 1);
		v[6 * o->rounds + r] = submit_8_ns(&c, c.r100, 1);
		v[7 * o->rounds + r] = submit_8_ns(&c, c.r100, 0);
	}
	for (int i = 0; i < 8; i++)
		m[i] = median(v + i * o->rounds, o->rounds);
	if (o->json)
		printf("{\"bench\": \"cmdbuf\", \"slots\": %d, "
		       "\"one_shot_record_submit_1000_ns\": %.0f, "
		       "\"reusable_submit_1000_ns\": %.0f, \"reusable_submit_100_ns\": %.0f, "
		       "\"reusable_submit_10000_ns\": %.0f, "
		       "\"submit_slot_0_ns\": %.0f, \"submit_slot_%u_ns\": %.0f, "
		       "\"batch_of_8_ns\": %.0f, \"eight_executes_ns\": %.0f, \"metrics\": {",
		       SLOTS, m[0], m[1], m[2], m[3], m[4], SPARSE_SLOT, m[5], m[6], m[7]);
	else
		fprintf(notes, "# cmdbuf: 1000 dispatches: ONE_SHOT record+submit %.1f us, "
		       "REUSABLE submit %.2f us; REUSABLE submit of 100 / 10000 "
		       "dispatches: %.2f / %.2f us (%d slots); one slot used, "
		       "slot 0 / slot %u: %.2f / %.2f us; 8 command buffers as one "
		       "batch / as 8 executes: %.2f / %.2f us\n",
		       m[0] / 1e3, m[1] / 1e3, m[2] / 1e3, m[3] / 1e3, SLOTS,
		       SPARSE_SLOT, m[4] / 1e3, m[5] / 1e3, m[6] / 1e3, m[7] / 1e3);
	metric(o, "cmdbuf.reuse_speedup_1000", m[0] / m[1], &first);
	metric(o, "cmdbuf.submit_cost_10000_vs_100", m[3] / m[2], &first);
	metric(o, "cmdbuf.submit_cost_sparse_vs_dense", m[5] / m[4], &first);
	metric(o, "batch.submit_8_vs_8x1", m[6] / m[7], &first);
	if (o->json)
		printf("}}\n");
	teardown(&c);
	free(v);
	return 0;
}

/*
 * Median ns of REPS ACCEL_URING_CMD_NOPs, each entered alone and reaped
 * (bench_uring_cmd_nop_alone()): what one trip into the module costs a
 * submission that enters the ring itself, before the SUBMIT does anything
 * (a ring without big SQEs or CQEs: no dearer than libaccel's).
 */
static double single_cmd_nop_ns(struct io_uring *ring, int fd)
{
	double v[REPS];

	for (int i = 0; i < REPS; i++) {
		double t0 = now_ns();
		int ret = bench_uring_cmd_nop_alone(ring, fd);

		v[i] = now_ns() - t0;
		if (ret < 0) {
			fprintf(stderr, "accel-bench: ksubmit: ACCEL_URING_CMD_NOP: %s\n",
				strerror(-ret));
			exit(1);
		}
	}
	return median(v, REPS);
}

/*
 * The comparisons name their schedulers and their modes: nothing from
 * outside (ACCEL_SCHEDULER, ACCEL_URING_SQPOLL, ACCEL_KERNEL_EVENTS,
 * ACCEL_KERNEL_ANSWER) may change what is compared.
 */
static void clear_scheduler_env(void)
{
	unsetenv(ACCEL_SCHEDULER_ENV);
	unsetenv(ACCEL_URING_SQPOLL_ENV);
	unsetenv(ACCEL_KERNEL_EVENTS_ENV);
	unsetenv(ACCEL_KERNEL_ANSWER_ENV);
}

int bench_ksubmit(const struct opts *o)
{
	/*
	 * The kernel scheduler four times: as it runs, a polled ring, with
	 * the answers of modules before ABI 1.8 (ACCEL_KERNEL_EVENTS=0:
	 * releases as SUBMIT completions, not events), and with a lone
	 * job's release answered by its submission (ACCEL_KERNEL_ANSWER=1).
	 */
	enum { EMB, KRN, KSQ, KANS, KANSW, N };
	static const accel_scheduler_kind_t kinds[N] = {
		ACCEL_SCHEDULER_EMBEDDED, ACCEL_SCHEDULER_KERNEL,
		ACCEL_SCHEDULER_KERNEL, ACCEL_SCHEDULER_KERNEL,
		ACCEL_SCHEDULER_KERNEL,
	};
	static const char *const what[N] = {
		"cpu:// on the embedded scheduler",
		"cpu:// on the kernel scheduler (is the module loaded?)",
		"cpu:// on the kernel scheduler with ACCEL_URING_SQPOLL=2",
		"cpu:// on the kernel scheduler with ACCEL_KERNEL_EVENTS=0",
		"cpu:// on the kernel scheduler with ACCEL_KERNEL_ANSWER=1",
	};
	struct cmdbuf_bench c[N] = { 0 };
	/* After the 3 * N figures: one trip into the module, alone. */
	double *v = calloc((3 * N + 1) * (size_t)o->rounds, sizeof(double)), m[3 * N + 1];
	const int NOP1 = 3 * N;
	struct io_uring ring;
	int first = 1, fd;

	bench_name = "ksubmit";
	/* The comparison names its schedulers: no override from outside. */
	clear_scheduler_env();
	for (int k = 0; k < N; k++) {
		if (k == KSQ)
			setenv(ACCEL_URING_SQPOLL_ENV, "2", 1);
		if (k == KANS)
			setenv(ACCEL_KERNEL_EVENTS_ENV, "0", 1);
		if (k == KANSW)
			setenv(ACCEL_KERNEL_ANSWER_ENV, "1", 1);
		if (!v || setup_on(&c[k], kinds[k], 0))
			die(what[k]);
		clear_scheduler_env();
	}
	fd = bench_open_dev("ksubmit");
	if (fd < 0)
		exit(1);
	int ret = io_uring_queue_init(8, &ring, 0);

	if (ret < 0) {
		fprintf(stderr, "accel-bench: ksubmit: io_uring_queue_init: %s\n",
			strerror(-ret));
		exit(1);
	}
	/* Warm every path (the kernel's job cache, the executors' threads). */
	for (int k = 0; k < N; k++) {
		submit_ns(&c[k], c[k].r100);
		submit_ns(&c[k], c[k].r1);
	}
	single_cmd_nop_ns(&ring, fd);
	/*
	 * m[k]: submit ns on device k; m[N + k]: stream ns per job;
	 * m[2 * N + k]: round trip ns.
	 */
	for (int r = 0; r < o->rounds; r++)
		for (int k = 0; k < N; k++) {
			v[k * o->rounds + r] = submit_ns(&c[k], c[k].r100);
			submit_ns_stream(&c[k], c[k].r1, &v[(N + k) * o->rounds + r]);
			v[(2 * N + k) * o->rounds + r] = round_trip_ns(&c[k], c[k].r1);
			if (k == EMB)
				v[NOP1 * o->rounds + r] = single_cmd_nop_ns(&ring, fd);
		}
	io_uring_queue_exit(&ring);
	close(fd);
	for (int k = 0; k < 3 * N + 1; k++)
		m[k] = median(v + k * o->rounds, o->rounds);
	if (o->json)
		printf("{\"bench\": \"ksubmit\", \"slots\": %d, "
		       "\"embedded_submit_ns\": %.0f, \"kernel_submit_ns\": %.0f, "
		       "\"kernel_sqpoll_submit_ns\": %.0f, \"kernel_answers_submit_ns\": %.0f, "
		       "\"embedded_stream_job_ns\": %.0f, \"kernel_stream_job_ns\": %.0f, "
		       "\"kernel_sqpoll_stream_job_ns\": %.0f, \"kernel_answers_stream_job_ns\": %.0f, "
		       "\"kernel_answered_submit_ns\": %.0f, "
		       "\"kernel_answered_stream_job_ns\": %.0f, "
		       "\"embedded_round_trip_ns\": %.0f, \"kernel_round_trip_ns\": %.0f, "
		       "\"kernel_sqpoll_round_trip_ns\": %.0f, "
		       "\"kernel_answers_round_trip_ns\": %.0f, "
		       "\"kernel_answered_round_trip_ns\": %.0f, "
		       "\"single_uring_cmd_nop_ns\": %.0f, \"metrics\": {",
		       SLOTS, m[EMB], m[KRN], m[KSQ], m[KANS], m[N + EMB], m[N + KRN],
		       m[N + KSQ], m[N + KANS], m[KANSW], m[N + KANSW], m[2 * N + EMB],
		       m[2 * N + KRN], m[2 * N + KSQ], m[2 * N + KANS], m[2 * N + KANSW],
		       m[NOP1]);
	else
		fprintf(notes, "# ksubmit: REUSABLE submit of 100 dispatches (%d slots): "
		       "embedded %.2f us, kernel %.2f us, kernel with a polled ring %.2f us, "
		       "kernel without events %.2f us, kernel with answers %.2f us; "
		       "a stream of %d one-dispatch jobs, per job until the last signal: "
		       "%.2f us, %.2f us, %.2f us, %.2f us, %.2f us\n",
		       SLOTS, m[EMB] / 1e3, m[KRN] / 1e3, m[KSQ] / 1e3, m[KANS] / 1e3,
		       m[KANSW] / 1e3, REPS, m[N + EMB] / 1e3, m[N + KRN] / 1e3,
		       m[N + KSQ] / 1e3, m[N + KANS] / 1e3, m[N + KANSW] / 1e3);
	if (!o->json) {
		fprintf(notes, "# ksubmit: one job at a time, submit and wait for its signal: "
			"embedded %.2f us, kernel %.2f us, polled ring %.2f us, "
			"without events %.2f us, with answers %.2f us\n",
			m[2 * N + EMB] / 1e3, m[2 * N + KRN] / 1e3, m[2 * N + KSQ] / 1e3,
			m[2 * N + KANS] / 1e3, m[2 * N + KANSW] / 1e3);
		fprintf(notes, "# ksubmit: one ACCEL_URING_CMD_NOP entered alone: %.2f us; "
			"the embedded submit plus that trip into the module: %.2f us\n",
			m[NOP1] / 1e3, (m[EMB] + m[NOP1]) / 1e3);
	}
	metric(o, "libaccel.kernel_vs_embedded_submit", m[KRN] / m[EMB], &first);
	/*
	 * The least kernel_vs_embedded_submit can be while each submission
	 * enters the ring itself: the embedded submit's work plus one trip
	 * into the module that does nothing. Above 1.5 here, no SUBMIT, however
	 * cheap, meets that goal without a polled ring.
	 */
	metric(o, "libaccel.uring_floor_vs_embedded_submit", (m[EMB] + m[NOP1]) / m[EMB],
	       &first);
	metric(o, "libaccel.kernel_vs_uring_floor_submit", m[KRN] / (m[EMB] + m[NOP1]),
	       &first);
	metric(o, "libaccel.kernel_sqpoll_vs_embedded_submit", m[KSQ] / m[EMB], &first);
	metric(o, "libaccel.kernel_vs_embedded_stream", m[N + KRN] / m[N + EMB], &first);
	metric(o, "libaccel.kernel_sqpoll_vs_embedded_stream", m[N + KSQ] / m[N + EMB],
	       &first);
	metric(o, "libaccel.kernel_events_vs_answers_stream", m[N + KRN] / m[N + KANS],
	       &first);
	metric(o, "libaccel.kernel_answered_vs_evented_submit", m[KANSW] / m[KRN], &first);
	metric(o, "libaccel.kernel_answered_vs_evented_stream", m[N + KANSW] / m[N + KRN],
	       &first);
	metric(o, "libaccel.kernel_vs_embedded_round_trip", m[2 * N + KRN] / m[2 * N + EMB],
	       &first);
	metric(o, "libaccel.kernel_answered_vs_evented_round_trip",
	       m[2 * N + KANSW] / m[2 * N + KRN], &first);
	if (o->json)
		printf("}}\n");
	for (int k = 0; k < N; k++)
		teardown(&c[k]);
	free(v);
	return 0;
}

/*
 * The windows of `accel-bench insn` (insn.c) on libaccel: one window per
 * REUSABLE submit of 100 dispatches over 8 slots, the submission
 * libaccel.kernel_vs_embedded_submit times, on the embedded scheduler and
 * on the module's. The executors and the reaper run on other threads,
 * started before the submitting thread is pinned, as in an application.
 */
int insn_libaccel(const struct opts *o)
{
	struct cmdbuf_bench c[2] = { 0 };

	bench_name = "insn";
	clear_scheduler_env();
	if (setup_on(&c[0], ACCEL_SCHEDULER_EMBEDDED, 0))
		die("cpu:// on the embedded scheduler");
	if (setup_on(&c[1], ACCEL_SCHEDULER_KERNEL, 0))
		die("cpu:// on the kernel scheduler (is the module loaded?)");
	for (int k = 0; k < 2; k++)
		submit_ns(&c[k], c[k].r100);
	insn_window(INSN_EMBEDDED_SUBMIT, "embedded_submit", 1);
	insn_window(INSN_KERNEL_SUBMIT, "kernel_submit", 1);
	insn_window(INSN_EMBEDDED_STREAM, "embedded_stream", REPS);
	insn_window(INSN_KERNEL_STREAM, "kernel_stream", REPS);
	insn_pin();
	for (int r = 0; r < o->rounds; r++)
		for (int k = 0; k < 2; k++) {
			for (int i = 0; i < REPS; i++) {
				accel_binding_table_t t = { SLOTS, c[k].bindings[i & 1] };
				int err;

				if (k) {
					ACCEL_INSN_BEGIN(INSN_KERNEL_SUBMIT);
					err = bench_submit(&c[k].d, c[k].r100, &t);
					ACCEL_INSN_END(INSN_KERNEL_SUBMIT);
				} else {
					ACCEL_INSN_BEGIN(INSN_EMBEDDED_SUBMIT);
					err = bench_submit(&c[k].d, c[k].r100, &t);
					ACCEL_INSN_END(INSN_EMBEDDED_SUBMIT);
				}
				if (err)
					die("accel_queue_execute");
			}
			bench_drain(&c[k].d);
		}
	for (int r = 0; r < o->rounds; r++)
		for (int k = 0; k < 2; k++) {
			if (k)
				ACCEL_INSN_BEGIN(INSN_KERNEL_STREAM);
			else
				ACCEL_INSN_BEGIN(INSN_EMBEDDED_STREAM);
			submit_ns(&c[k], c[k].r1);
			if (k)
				ACCEL_INSN_END(INSN_KERNEL_STREAM);
			else
				ACCEL_INSN_END(INSN_EMBEDDED_STREAM);
		}
	insn_unpin();
	for (int k = 0; k < 2; k++)
		teardown(&c[k]);
	return 0;
}
