// SPDX-License-Identifier: MIT
/*
 * The cpu driver's worker pool: runs the units of a segment's tasks on N
 * workers, the calling (executor) thread being one of them.
 *
 * Publishing. The caller stores the tasks, then a new generation in @join
 * (the generation in the high 32 bits, a CLOSED bit, a count of workers
 * inside), then the generation in @gen, and wakes sleeping workers only if
 * @sleepers says some are asleep (no system call when all are spinning).
 *
 * Joining. A worker that sees a new @gen enters the segment by
 * incrementing the user count in @join with a compare-and-swap that fails
 * if the generation moved on or the segment is CLOSED; only a worker that
 * entered reads the tasks. It then claims chunks of units from each task's
 * counter (starting at a different task per worker, to spread contention)
 * until every counter is exhausted, and leaves (decrements the count).
 *
 * Completion. The caller claims units like any worker; when it finds none
 * left it sets CLOSED (no worker may enter any more) and waits until the
 * count of workers inside drops to zero: spinning briefly, then sleeping on
 * @left, which the last worker to leave bumps (and wakes, if the caller
 * said it sleeps). A worker that wakes late thus never delays a segment: it
 * finds it closed and goes back to waiting. The seq_cst atomics of the
 * leave and of the caller's wait order every write of the segment before
 * whatever the caller does next (the next segment included).
 *
 * Idle workers spin for about IDLE_SPIN_NS after each segment (segments
 * separated by a barrier come in quick succession), then sleep on a futex.
 */
#include <errno.h>
#include <linux/futex.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "cpu.h"

#define JOIN_CLOSED (UINT64_C(1) << 31)
#define JOIN_USERS (JOIN_CLOSED - 1)
#define IDLE_SPIN_NS 50000
#define WAIT_SPIN_NS 20000

struct cpu_worker {
	struct cpu_pool *pool;
	unsigned int index;
	pthread_t thread;
};

struct cpu_pool {
	unsigned int workers;
	unsigned int started;           /* threads running (workers - 1 at most) */
	struct cpu_worker *threads;

	_Alignas(64) atomic_uint gen;   /* futex: bumped per segment */
	atomic_uint sleepers;           /* workers asleep (or about to be) on @gen */
	atomic_bool stop;

	_Alignas(64) _Atomic uint64_t join; /* gen << 32 | CLOSED | users */

	_Alignas(64) atomic_uint left;  /* futex: bumped by the last to leave */
	atomic_uint caller_sleeps;

	struct cpu_task *tasks;         /* the published segment */
	uint32_t count;
};

static void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

static int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void futex_wait(atomic_uint *word, unsigned int val)
{
	syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
}

static void futex_wake(atomic_uint *word)
{
	syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL, NULL, 0);
}

/* Claims and runs chunks of every task, starting with task @first. */
static void run_units(struct cpu_task *tasks, uint32_t count, uint32_t first)
{
	for (uint32_t k = 0; k < count; k++) {
		struct cpu_task *t = &tasks[(first + k) % count];

		while (atomic_load_explicit(&t->next, memory_order_relaxed) < t->total) {
			uint64_t b = atomic_fetch_add_explicit(&t->next, t->chunk,
							       memory_order_relaxed);

			if (b >= t->total)
				break;
			t->run(t, b, b + t->chunk < t->total ? b + t->chunk : t->total);
		}
	}
}

/* Enters generation @g's segment; false if it is closed or gone. */
static bool enter(struct cpu_pool *p, unsigned int g)
{
	uint64_t s = atomic_load(&p->join);

	do {
		if ((uint32_t)(s >> 32) != g || (s & JOIN_CLOSED))
			return false;
	} while (!atomic_compare_exchange_weak(&p->join, &s, s + 1));
	return true;
}

static void leave(struct cpu_pool *p)
{
	uint64_t s = atomic_fetch_sub(&p->join, 1);

	if ((s & JOIN_USERS) != 1)
		return;
	atomic_fetch_add(&p->left, 1);
	if (atomic_load(&p->caller_sleeps))
		futex_wake(&p->left);
}

/* Waits until @gen differs from @seen; returns it. */
static unsigned int wait_gen(struct cpu_pool *p, unsigned int seen)
{
	int64_t until = mono_ns() + IDLE_SPIN_NS;
	unsigned int g;

	for (unsigned int i = 1;; i++) {
		g = atomic_load(&p->gen);
		if (g != seen)
			return g;
		if (i % 64 == 0 && mono_ns() > until)
			break;
		cpu_relax();
	}
	atomic_fetch_add(&p->sleepers, 1);
	while ((g = atomic_load(&p->gen)) == seen)
		futex_wait(&p->gen, seen);
	atomic_fetch_sub(&p->sleepers, 1);
	return g;
}

static void *worker_main(void *arg)
{
	struct cpu_worker *w = arg;
	struct cpu_pool *p = w->pool;
	unsigned int seen = 0;

	for (;;) {
		seen = wait_gen(p, seen);
		if (atomic_load(&p->stop))
			break;
		if (!enter(p, seen))
			continue;
		run_units(p->tasks, p->count, w->index * p->count / p->workers);
		leave(p);
	}
	return NULL;
}

int cpu_pool_create(unsigned int workers, struct cpu_pool **out)
{
	struct cpu_pool *p = calloc(1, sizeof(*p));

	if (!p)
		return -ENOMEM;
	p->threads = calloc(workers, sizeof(*p->threads));
	if (!p->threads) {
		free(p);
		return -ENOMEM;
	}
	p->workers = workers;
	*out = p;
	return 0;
}

unsigned int cpu_pool_workers(const struct cpu_pool *pool)
{
	return pool->workers;
}

/* Starts the threads; on failure runs with those that started. */
static void start_threads(struct cpu_pool *p)
{
	for (unsigned int i = 1; i < p->workers; i++) {
		struct cpu_worker *w = &p->threads[p->started];
		char name[32];

		w->pool = p;
		w->index = i;
		if (pthread_create(&w->thread, NULL, worker_main, w))
			break;
		snprintf(name, sizeof(name), "accel-cpu-%u", i);
		name[15] = '\0'; /* the kernel's limit */
		pthread_setname_np(w->thread, name);
		p->started++;
	}
	p->workers = p->started + 1;
}

void cpu_pool_destroy(struct cpu_pool *p)
{
	if (!p)
		return;
	atomic_store(&p->stop, true);
	atomic_fetch_add(&p->gen, 1);
	futex_wake(&p->gen);
	for (unsigned int i = 0; i < p->started; i++)
		pthread_join(p->threads[i].thread, NULL);
	free(p->threads);
	free(p);
}

/* Waits until no worker is inside the (closed) segment. */
static void wait_left(struct cpu_pool *p)
{
	int64_t until = mono_ns() + WAIT_SPIN_NS;

	for (unsigned int i = 1; atomic_load(&p->join) & JOIN_USERS; i++) {
		if (i % 64 == 0 && mono_ns() > until)
			break;
		cpu_relax();
	}
	for (;;) {
		unsigned int v;

		atomic_store(&p->caller_sleeps, 1);
		v = atomic_load(&p->left);
		if (!(atomic_load(&p->join) & JOIN_USERS))
			break;
		futex_wait(&p->left, v);
	}
	atomic_store(&p->caller_sleeps, 0);
}

void cpu_pool_run(struct cpu_pool *p, struct cpu_task *tasks, uint32_t count)
{
	unsigned int g;
	uint64_t units = 0;

	for (uint32_t i = 0; i < count && units < 2; i++)
		units += tasks[i].total;
	if (units == 0)
		return;
	if (p->workers > 1 && !p->started)
		start_threads(p);
	if (units < 2 || p->workers == 1) {
		run_units(tasks, count, 0); /* nothing to share */
		return;
	}
	p->tasks = tasks;
	p->count = count;
	g = atomic_load(&p->gen) + 1;
	atomic_store(&p->join, (uint64_t)g << 32);
	atomic_store(&p->gen, g);
	if (atomic_load(&p->sleepers))
		futex_wake(&p->gen);
	run_units(tasks, count, 0);
	atomic_fetch_or(&p->join, JOIN_CLOSED);
	wait_left(p);
}
