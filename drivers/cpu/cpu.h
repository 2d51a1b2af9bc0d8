/* SPDX-License-Identifier: MIT */
/*
 * The cpu driver: devices, buffers in host memory, executables that are
 * shared objects (accel/cpu_executable.h) or tables linked into the
 * program, and the replay of recorded command buffers through the binding
 * plan on a pool of worker threads.
 *
 * Replay (cpu_replay.c) cuts a command buffer at its barriers into
 * *segments*. Each command of a segment becomes one *task* of independent
 * *units*: the workgroups of a dispatch, or the blocks of a fill or copy.
 * The pool (cpu_pool.c) runs every unit of every task of a segment on all
 * its workers (the calling executor thread is one of them), each claiming
 * chunks of units from the task's atomic counter, and returns when all are
 * done; only then does the next segment start. Commands between two
 * barriers therefore run concurrently, and a barrier costs one join.
 */
#ifndef ACCEL_DRIVERS_CPU_H
#define ACCEL_DRIVERS_CPU_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "accel/cpu_executable.h"
#include "src/core.h"

/* The most workers a device may have (ACCEL_CPU_THREADS, ?threads=). */
#define CPU_MAX_WORKERS 256

struct cpu_task;

/* Runs units [@begin, @end) of @t; called from any worker. */
typedef void (*cpu_task_fn)(const struct cpu_task *t, uint64_t begin,
			    uint64_t end);

/*
 * struct cpu_task - one command of a segment, as units to run.
 * @next:  the next unit to claim (claims are @chunk units at a time).
 * @total: number of units.
 * @chunk: units per claim (>= 1).
 * @run:   runs a range of units.
 *
 * Cache-line aligned, so that workers claiming from different tasks do
 * not share a line. Everything but @next is written before the segment is
 * published and read-only while it runs.
 */
struct cpu_task {
	_Alignas(64) atomic_uint_fast64_t next;
	uint64_t total;
	uint64_t chunk;
	cpu_task_fn run;
	union {
		struct {
			accel_cpu_entry_fn fn;
			struct accel_cpu_dispatch d; /* workgroup_id unset */
			uint32_t bindings;           /* index into the scratch */
		} dispatch;
		struct {
			uint8_t *p;
			uint64_t length;
			uint64_t pattern;    /* replicated to 8 bytes */
			uint64_t block;      /* bytes per unit */
		} fill;
		struct {
			uint8_t *dst;
			const uint8_t *src;
			uint64_t length;
			uint64_t block;      /* bytes per unit */
			bool stream;         /* non-temporal stores */
		} copy;
	};
};

struct cpu_pool;

/*
 * cpu_pool_create() - a pool of @workers workers in all: the thread that
 * calls cpu_pool_run() and @workers - 1 threads, started by the first run.
 * 0 or -ENOMEM.
 */
int cpu_pool_create(unsigned int workers, struct cpu_pool **out);
/* Stops and joins the threads; no run may be in progress. */
void cpu_pool_destroy(struct cpu_pool *pool);
/* The number of workers, the caller included. */
unsigned int cpu_pool_workers(const struct cpu_pool *pool);
/*
 * cpu_pool_run() - run every unit of @tasks[0..@count) on the workers and
 * the calling thread; return when all are done (their writes visible to
 * the caller). One caller at a time (the device's exec lock).
 */
void cpu_pool_run(struct cpu_pool *pool, struct cpu_task *tasks,
		  uint32_t count);

/*
 * struct cpu_device - the cpu device.
 * @lock:    serialises replays (the pool and the scratch arrays below);
 *           taken by accel_cpu_execute() for a whole submission.
 * @pool:    the workers.
 * @tasks, @task_cap, @ptrs, @lens: the scratch of the segment being
 *           built (@tasks is 64-byte aligned, so it is not an accel_vec).
 */
struct cpu_device {
	accel_device_t base;
	pthread_mutex_t lock;
	struct cpu_pool *pool;
	struct cpu_task *tasks;
	uint32_t task_cap;
	struct accel_vec ptrs;  /* void * */
	struct accel_vec lens;  /* uint64_t */
};

extern const struct accel_device_ops accel_cpu_device_ops;

/* The cost model's calibration kernel (device ops, core.h). */
int accel_cpu_calibration_executable(accel_device_t *d, accel_executable_t **out);

int accel_cpu_executable_load(accel_device_t *d, const char *path,
			      accel_executable_t **out);
int accel_cpu_execute(accel_device_t *d, struct accel_cb_exec *x);

#endif /* ACCEL_DRIVERS_CPU_H */
