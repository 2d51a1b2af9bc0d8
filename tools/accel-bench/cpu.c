// SPDX-License-Identifier: MIT
/*
 * accel-bench: the cpu backend against plain C on the same threads.
 *
 *	cpu   fill and copy of 64 MiB through command buffers on cpu:// against
 *	      memset/memcpy split over the same number of threads; a saxpy
 *	      dispatch over 16 M floats against the same loop split the same
 *	      way. Each figure is baseline time / cpu:// time (1.0 = as fast).
 *
 * The device is opened with as many workers as this process may use CPUs
 * (or ACCEL_CPU_THREADS), and the baseline team has that many threads, the
 * caller included. Every buffer is touched before timing, so page faults
 * are not measured. A cpu:// figure includes the submission and the wait
 * for its semaphore (a few microseconds against milliseconds of work).
 *
 * The saxpy kernel is linked into this program and handed to
 * accel_cpu_executable_create(): accel-bench is linked statically, and a
 * static program cannot dlopen() a shared object that needs the C library
 * (it would get a second, uninitialised copy of it).
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <accel/accel.h>
#include <accel/cpu_executable.h>

#include "bench.h"
#include "cpu-common.h"

#define BYTES (UINT64_C(64) << 20)
#define SAXPY_N (UINT64_C(16) << 20)
#define SAXPY_WG 4096
#define REPS 3

/* ---- the kernel and the loop it is compared with ------------------------ */

static void saxpy_range(const float *x, float *y, float a, uint64_t b, uint64_t e)
{
	for (uint64_t i = b; i < e; i++)
		y[i] = a * x[i] + y[i];
}

static void saxpy_entry(const struct accel_cpu_dispatch *d)
{
	uint64_t n = d->binding_lengths[1] / sizeof(float);
	uint64_t b = (uint64_t)d->workgroup_id[0] * SAXPY_WG;
	float a;

	memcpy(&a, d->constants, sizeof(a));
	saxpy_range(d->bindings[0], d->bindings[1], a, b,
		    b + SAXPY_WG < n ? b + SAXPY_WG : n);
}

static const struct accel_cpu_entry saxpy_entries[] = {
	{ "saxpy", 2, 1, { SAXPY_WG, 1, 1 }, saxpy_entry },
};

static const struct accel_cpu_executable saxpy_table = {
	ACCEL_CPU_EXECUTABLE_ABI_VERSION, 1, saxpy_entries, NULL,
};

/* ---- the baseline team ---------------------------------------------- */

enum job { JOB_MEMSET, JOB_MEMCPY, JOB_SAXPY };

struct team {
	unsigned int n;
	pthread_t *threads;
	pthread_barrier_t start, done;
	int stop;
	enum job job;
	uint8_t *dst;
	const uint8_t *src;
	uint64_t bytes;
};

struct member {
	struct team *t;
	unsigned int i;
};

static void do_part(struct team *t, unsigned int i)
{
	uint64_t per = (t->bytes / t->n + 63) & ~(uint64_t)63;
	uint64_t b = per * i, e = b + per < t->bytes ? b + per : t->bytes;

	if (b >= e)
		return;
	switch (t->job) {
	case JOB_MEMSET:
		memset(t->dst + b, 0x3f, e - b);
		break;
	case JOB_MEMCPY:
		memcpy(t->dst + b, t->src + b, e - b);
		break;
	case JOB_SAXPY:
		saxpy_range((const float *)t->src, (float *)t->dst, 0.5f,
			    b / sizeof(float), e / sizeof(float));
		break;
	}
}

static void *member_main(void *arg)
{
	struct member *m = arg;

	for (;;) {
		pthread_barrier_wait(&m->t->start);
		if (m->t->stop)
			break;
		do_part(m->t, m->i);
		pthread_barrier_wait(&m->t->done);
	}
	free(m);
	return NULL;
}

static int team_start(struct team *t, unsigned int n)
{
	t->n = n;
	t->threads = calloc(n, sizeof(*t->threads));
	if (!t->threads)
		return -ENOMEM;
	pthread_barrier_init(&t->start, NULL, n);
	pthread_barrier_init(&t->done, NULL, n);
	for (unsigned int i = 1; i < n; i++) {
		struct member *m = malloc(sizeof(*m));

		if (!m)
			return -ENOMEM;
		m->t = t;
		m->i = i;
		if (pthread_create(&t->threads[i], NULL, member_main, m))
			return -EAGAIN;
	}
	return 0;
}

static double team_run(struct team *t, enum job job, void *dst,
		       const void *src, uint64_t bytes)
{
	double t0 = now_ns();

	t->job = job;
	t->dst = dst;
	t->src = src;
	t->bytes = bytes;
	pthread_barrier_wait(&t->start);
	do_part(t, 0);
	pthread_barrier_wait(&t->done);
	return now_ns() - t0;
}

static void team_stop(struct team *t)
{
	t->stop = 1;
	pthread_barrier_wait(&t->start);
	for (unsigned int i = 1; i < t->n; i++)
		pthread_join(t->threads[i], NULL);
	pthread_barrier_destroy(&t->start);
	pthread_barrier_destroy(&t->done);
	free(t->threads);
}

/* ---- the benchmark -------------------------------------------------- */

struct cpu_bench {
	struct bench_dev d;
	struct team team;
	accel_buffer_t *a, *b;
	uint8_t *pa, *pb;
	accel_command_buffer_t *fill, *copy, *saxpy;
};

static int record(struct cpu_bench *c, accel_executable_t *exe)
{
	uint32_t pattern = 0x3f800000, wg[3] = { SAXPY_N / SAXPY_WG, 1, 1 };
	float alpha = 0.5f;
	uint32_t abits;
	accel_buffer_ref_t xy[2] = {
		accel_buffer_ref_direct(c->b, 0, SAXPY_N * 4),
		accel_buffer_ref_direct(c->a, 0, SAXPY_N * 4),
	};
	int err;

	memcpy(&abits, &alpha, sizeof(abits));
	err = bench_cb(&c->d, &c->fill);
	err = err ? err : accel_command_buffer_fill(c->fill, accel_buffer_ref_direct(c->a, 0, BYTES), &pattern, 4);
	err = err ? err : accel_command_buffer_end(c->fill);
	err = err ? err : bench_cb(&c->d, &c->copy);
	err = err ? err : accel_command_buffer_copy(c->copy, accel_buffer_ref_direct(c->b, 0, BYTES),
						    accel_buffer_ref_direct(c->a, 0, BYTES));
	err = err ? err : accel_command_buffer_end(c->copy);
	err = err ? err : bench_cb(&c->d, &c->saxpy);
	err = err ? err : accel_command_buffer_dispatch(c->saxpy, exe, 0, wg, &abits, 1, xy, 2);
	err = err ? err : accel_command_buffer_end(c->saxpy);
	return err;
}

/* Mean ns of REPS runs of @cb (submit and wait). */
static double time_cb(struct cpu_bench *c, accel_command_buffer_t *cb)
{
	double t0 = now_ns();

	for (int i = 0; i < REPS; i++)
		bench_run(&c->d, cb, NULL);
	return (now_ns() - t0) / REPS;
}

static double time_team(struct cpu_bench *c, enum job job)
{
	double sum = 0;

	for (int i = 0; i < REPS; i++)
		sum += job == JOB_SAXPY ?
		       team_run(&c->team, job, c->pa, c->pb, SAXPY_N * 4) :
		       team_run(&c->team, job, c->pa, c->pb, BYTES);
	return sum / REPS;
}

int bench_cpu(const struct opts *o)
{
	struct cpu_bench c = { 0 };
	accel_executable_t *exe = NULL;
	double *v = calloc(6 * (size_t)o->rounds, sizeof(double)), m[6];
	int first = 1, err;

	err = v ? bench_open(&c.d, 0) : -ENOMEM;
	if (!err)
		err = accel_cpu_executable_create(c.d.dev, &saxpy_table, &exe);
	if (!err)
		err = bench_buffer(&c.d, BYTES, &c.a, &c.pa);
	if (!err)
		err = bench_buffer(&c.d, BYTES, &c.b, &c.pb);
	if (!err)
		err = record(&c, exe);
	if (!err)
		err = team_start(&c.team, c.d.threads);
	if (err) {
		fprintf(stderr, "accel-bench: cpu: %s\n", accel_error_message());
		return 1;
	}
	memset(c.pa, 1, BYTES);
	memset(c.pb, 2, BYTES);
	for (int r = 0; r < o->rounds; r++) {
		v[0 * o->rounds + r] = time_team(&c, JOB_MEMSET);
		v[1 * o->rounds + r] = time_cb(&c, c.fill);
		v[2 * o->rounds + r] = time_team(&c, JOB_MEMCPY);
		v[3 * o->rounds + r] = time_cb(&c, c.copy);
		v[4 * o->rounds + r] = time_team(&c, JOB_SAXPY);
		v[5 * o->rounds + r] = time_cb(&c, c.saxpy);
	}
	for (int i = 0; i < 6; i++)
		m[i] = median(v + i * o->rounds, o->rounds);
	if (o->json)
		printf("{\"bench\": \"cpu\", \"threads\": %u, \"bytes\": %llu, "
		       "\"memset_ns\": %.0f, \"fill_ns\": %.0f, \"memcpy_ns\": %.0f, "
		       "\"copy_ns\": %.0f, \"saxpy_floats\": %llu, \"c_loop_ns\": %.0f, "
		       "\"saxpy_ns\": %.0f, \"metrics\": {",
		       c.d.threads, (unsigned long long)BYTES, m[0], m[1], m[2], m[3],
		       (unsigned long long)SAXPY_N, m[4], m[5]);
	else
		fprintf(notes, "# cpu: %u threads; 64 MiB: memset %.2f GB/s, fill %.2f GB/s; "
		       "memcpy %.2f GB/s, copy %.2f GB/s; saxpy 16M floats: "
		       "C loop %.2f ms, dispatch %.2f ms\n",
		       c.d.threads, BYTES / m[0], BYTES / m[1], BYTES / m[2],
		       BYTES / m[3], m[4] / 1e6, m[5] / 1e6);
	metric(o, "cpu.fill_vs_memset", m[0] / m[1], &first);
	metric(o, "cpu.copy_vs_memcpy", m[2] / m[3], &first);
	metric(o, "cpu.saxpy_vs_c_loop", m[4] / m[5], &first);
	if (o->json)
		printf("}}\n");
	team_stop(&c.team);
	accel_command_buffer_release(c.fill);
	accel_command_buffer_release(c.copy);
	accel_command_buffer_release(c.saxpy);
	accel_executable_release(exe);
	accel_buffer_release(c.a);
	accel_buffer_release(c.b);
	bench_close(&c.d);
	free(v);
	return 0;
}
