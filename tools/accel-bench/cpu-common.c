// SPDX-License-Identifier: MIT
/* accel-bench: the cpu:// device, queue and semaphore of cpu-common.h. */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

#include "cpu-common.h"

static unsigned int cpus(void)
{
	const char *env = getenv("ACCEL_CPU_THREADS");
	cpu_set_t set;

	if (env && atoi(env) > 0)
		return (unsigned int)atoi(env);
	if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
		return (unsigned int)CPU_COUNT(&set);
	return 1;
}

int bench_open(struct bench_dev *d, unsigned int threads)
{
	return bench_open_on(d, threads, ACCEL_SCHEDULER_EMBEDDED);
}

int bench_open_on(struct bench_dev *d, unsigned int threads,
		  accel_scheduler_kind_t kind)
{
	accel_scheduler_options_t so;
	char uri[64];
	int err;

	d->threads = threads ? threads : cpus();
	snprintf(uri, sizeof(uri), "cpu://?threads=%u", d->threads);
	accel_scheduler_options_init(&so);
	so.kind = kind;
	err = accel_scheduler_open(&so, &d->sched);
	if (!err)
		err = accel_device_open(uri, d->sched, &d->dev);
	if (!err)
		err = accel_queue_create(d->dev, 0, &d->queue);
	if (!err)
		err = accel_semaphore_create(d->sched, 0, &d->sem);
	return err;
}

void bench_close(struct bench_dev *d)
{
	accel_semaphore_release(d->sem);
	accel_queue_release(d->queue);
	accel_device_release(d->dev);
	accel_scheduler_release(d->sched);
}

int bench_buffer(struct bench_dev *d, uint64_t size, accel_buffer_t **out,
		 uint8_t **host)
{
	accel_buffer_params_t p = {
		ACCEL_MEMORY_TYPE_HOST_LOCAL | ACCEL_MEMORY_TYPE_HOST_VISIBLE |
		ACCEL_MEMORY_TYPE_HOST_COHERENT,
		ACCEL_BUFFER_USAGE_ALL,
	};
	void *ptr = NULL;
	int err = accel_allocator_allocate_buffer(accel_device_allocator(d->dev),
						  &p, size, out);

	if (!err)
		err = accel_buffer_map(*out, ACCEL_MAP_READ | ACCEL_MAP_WRITE, 0,
				       ACCEL_WHOLE_BUFFER, &ptr);
	if (!err)
		err = accel_buffer_unmap(*out); /* cpu memory stays addressable */
	*host = ptr;
	return err;
}

int bench_cb(struct bench_dev *d, accel_command_buffer_t **out)
{
	int err = accel_command_buffer_create(d->dev, ACCEL_COMMAND_BUFFER_REUSABLE,
					      8, out);

	return err ? err : accel_command_buffer_begin(*out);
}

int bench_submit(struct bench_dev *d, accel_command_buffer_t *cb,
		 const accel_binding_table_t *table)
{
	uint64_t v = d->value + 1;
	accel_semaphore_list_t sig = { 1, &d->sem, &v };
	int err = accel_queue_execute(d->queue, NULL, &sig, cb, table, 0);

	if (!err)
		d->value = v;
	return err;
}

void bench_drain(struct bench_dev *d)
{
	if (accel_semaphore_wait(d->sem, d->value, 0, ACCEL_DEADLINE_INFINITE)) {
		fprintf(stderr, "accel-bench: a submission failed: %s\n",
			accel_error_message());
		exit(1);
	}
}

void bench_run(struct bench_dev *d, accel_command_buffer_t *cb,
	       const accel_binding_table_t *table)
{
	if (bench_submit(d, cb, table)) {
		fprintf(stderr, "accel-bench: accel_queue_execute: %s\n",
			accel_error_message());
		exit(1);
	}
	bench_drain(d);
}
