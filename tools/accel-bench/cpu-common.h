/* SPDX-License-Identifier: MIT */
/*
 * accel-bench: what the libaccel benchmarks (cpu.c, cmdbuf.c, sem.c)
 * share: a cpu:// device with a known number of workers, on the embedded
 * scheduler, with one queue and one timeline semaphore.
 */
#ifndef ACCEL_BENCH_CPU_COMMON_H
#define ACCEL_BENCH_CPU_COMMON_H

#include <stdint.h>

#include <accel/accel.h>

struct bench_dev {
	accel_scheduler_t *sched;
	accel_device_t *dev;
	accel_queue_t *queue;
	accel_semaphore_t *sem;
	uint64_t value;        /* the semaphore's last promised value */
	unsigned int threads;  /* the device's workers */
};

/*
 * bench_open() - the embedded scheduler and cpu:// with @threads workers
 * (0: ACCEL_CPU_THREADS, else the CPUs this process may use).
 */
int bench_open(struct bench_dev *d, unsigned int threads);
/* The same on the scheduler of @kind (the module's: in the VM). */
int bench_open_on(struct bench_dev *d, unsigned int threads,
		  accel_scheduler_kind_t kind);
void bench_close(struct bench_dev *d);
/* A host-visible buffer of @size bytes with every usage, and its pointer. */
int bench_buffer(struct bench_dev *d, uint64_t size, accel_buffer_t **out,
		 uint8_t **host);
/* A REUSABLE command buffer with 8 slots, begun. */
int bench_cb(struct bench_dev *d, accel_command_buffer_t **out);
/* Submits @cb with @table, signalling the next value; does not wait. */
int bench_submit(struct bench_dev *d, accel_command_buffer_t *cb,
		 const accel_binding_table_t *table);
/* Waits for everything submitted; exits on failure. */
void bench_drain(struct bench_dev *d);
/* bench_submit() then bench_drain(); exits on failure. */
void bench_run(struct bench_dev *d, accel_command_buffer_t *cb,
	       const accel_binding_table_t *table);

#endif
