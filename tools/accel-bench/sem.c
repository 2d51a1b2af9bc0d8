// SPDX-License-Identifier: MIT
/*
 * accel-bench: the embedded scheduler's semaphores against a raw futex.
 *
 *	sem   wake_embedded_vs_futex: a signal -> wake round trip between two
 *	      threads: A signals s1 to i and waits for s2 to reach i, B waits
 *	      for s1 to reach i and signals s2 to i (embedded-scheduler
 *	      semaphores, host signal and host wait), over the same ping-pong
 *	      on two futex words (store, FUTEX_WAKE; FUTEX_WAIT while the
 *	      word is below i). 1.0 = no overhead beyond the futex.
 *
 * With two CPUs or more, thread A runs on the first CPU this process may
 * use and thread B on the second, in both variants: a wake across CPUs
 * (an inter-processor interrupt) costs much more than one on the same CPU,
 * and leaving the placement to chance makes the ratio a coin toss.
 */
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <accel/accel.h>

#include "bench.h"

struct pingpong {
	long ops;
	int cpu_a, cpu_b;       /* -1: not pinned */
	/* embedded */
	accel_semaphore_t *s1, *s2;
	/* futex */
	atomic_uint w1, w2;
	int err;
};

static void pin(int cpu)
{
	cpu_set_t set;

	if (cpu < 0)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

/* The first two CPUs this process may use, or -1s. */
static void pick_cpus(struct pingpong *p)
{
	cpu_set_t set;
	int n = 0;

	p->cpu_a = p->cpu_b = -1;
	if (sched_getaffinity(0, sizeof(set), &set) || CPU_COUNT(&set) < 2)
		return;
	for (int c = 0; c < CPU_SETSIZE && n < 2; c++)
		if (CPU_ISSET(c, &set))
			*(n++ ? &p->cpu_b : &p->cpu_a) = c;
}

static void futex_wait(atomic_uint *w, unsigned int v)
{
	syscall(SYS_futex, w, FUTEX_WAIT_PRIVATE, v, NULL, NULL, 0);
}

static void futex_wake(atomic_uint *w)
{
	syscall(SYS_futex, w, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* Waits until *@w >= @v. */
static void futex_until(atomic_uint *w, unsigned int v)
{
	unsigned int seen;

	while ((seen = atomic_load(w)) < v)
		futex_wait(w, seen);
}

static void *futex_b(void *arg)
{
	struct pingpong *p = arg;

	pin(p->cpu_b);
	for (unsigned int i = 1; i <= p->ops; i++) {
		futex_until(&p->w1, i);
		atomic_store(&p->w2, i);
		futex_wake(&p->w2);
	}
	return NULL;
}

static double futex_round_trip(struct pingpong *p)
{
	pthread_t t;
	double t0;

	atomic_store(&p->w1, 0);
	atomic_store(&p->w2, 0);
	pthread_create(&t, NULL, futex_b, p);
	t0 = now_ns();
	for (unsigned int i = 1; i <= p->ops; i++) {
		atomic_store(&p->w1, i);
		futex_wake(&p->w1);
		futex_until(&p->w2, i);
	}
	t0 = now_ns() - t0;
	pthread_join(t, NULL);
	return t0 / p->ops;
}

static void *sem_b(void *arg)
{
	struct pingpong *p = arg;
	int err = 0;

	pin(p->cpu_b);
	for (long i = 1; i <= p->ops && !err; i++) {
		err = accel_semaphore_wait(p->s1, (uint64_t)i, 0, ACCEL_DEADLINE_INFINITE);
		if (!err)
			err = accel_semaphore_signal(p->s2, (uint64_t)i);
	}
	if (err)
		p->err = err;
	return NULL;
}

static double sem_round_trip(struct pingpong *p, accel_scheduler_t *s)
{
	pthread_t t;
	double t0;
	int err = 0;

	if (accel_semaphore_create(s, 0, &p->s1) || accel_semaphore_create(s, 0, &p->s2)) {
		fprintf(stderr, "accel-bench: sem: %s\n", accel_error_message());
		exit(1);
	}
	pthread_create(&t, NULL, sem_b, p);
	t0 = now_ns();
	for (long i = 1; i <= p->ops && !err; i++) {
		err = accel_semaphore_signal(p->s1, (uint64_t)i);
		if (!err)
			err = accel_semaphore_wait(p->s2, (uint64_t)i, 0, ACCEL_DEADLINE_INFINITE);
	}
	t0 = now_ns() - t0;
	if (err) { /* let B out, then report */
		accel_semaphore_fail(p->s1, err);
		p->err = err;
	}
	pthread_join(t, NULL);
	accel_semaphore_release(p->s1);
	accel_semaphore_release(p->s2);
	if (p->err) {
		fprintf(stderr, "accel-bench: sem: %s\n", accel_error_message());
		exit(1);
	}
	return t0 / p->ops;
}

int bench_sem(const struct opts *o)
{
	accel_scheduler_options_t so;
	accel_scheduler_t *s;
	struct pingpong p = { .ops = o->ops / 4 };
	double *v = calloc(2 * (size_t)o->rounds, sizeof(double)), me, mf;
	int first = 1;

	cpu_set_t saved;

	accel_scheduler_options_init(&so);
	so.kind = ACCEL_SCHEDULER_EMBEDDED;
	if (!v || accel_scheduler_open(&so, &s)) {
		fprintf(stderr, "accel-bench: sem: %s\n", accel_error_message());
		return 1;
	}
	pick_cpus(&p);
	pthread_getaffinity_np(pthread_self(), sizeof(saved), &saved);
	pin(p.cpu_a);
	for (int r = 0; r < o->rounds; r++) {
		v[r] = futex_round_trip(&p);
		v[o->rounds + r] = sem_round_trip(&p, s);
	}
	pthread_setaffinity_np(pthread_self(), sizeof(saved), &saved);
	mf = median(v, o->rounds);
	me = median(v + o->rounds, o->rounds);
	if (o->json)
		printf("{\"bench\": \"sem\", \"round_trips\": %ld, \"futex_round_trip_ns\": %.1f, "
		       "\"embedded_round_trip_ns\": %.1f, \"metrics\": {", p.ops, mf, me);
	else
		fprintf(notes, "# sem: round trip: raw futex %.1f ns, embedded semaphores %.1f ns "
		       "(%ld round trips per round)\n", mf, me, p.ops);
	metric(o, "sem.wake_embedded_vs_futex", me / mf, &first);
	if (o->json)
		printf("}}\n");
	accel_scheduler_release(s);
	free(v);
	return 0;
}
