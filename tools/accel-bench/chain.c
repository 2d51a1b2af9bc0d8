// SPDX-License-Identifier: MIT
/*
 * accel-bench chain: what a dependency between two submissions on one
 * GPU costs when the device orders it, against the host.
 *
 * For vulkan://0 and cuda://0, where each opens: two devices of the URI
 * are open side by side: one as libaccel opens it (device-side waits: a
 * submission whose predecessor is already on the device waits for it on
 * the device: vulkan on its timeline, cuda by the order of its stream),
 * one with
 * ACCEL_DEVICE_WAITS=0 (each edge waits on the host: the predecessor
 * completes, the waiter thread signals its semaphore, the successor's
 * executor wakes and submits). A round submits a chain of CHAIN
 * submissions alternating between two queues of the device, each waiting
 * on the one before, behind a closed gate; then it opens the gate and
 * times until the last point is reached. Each submission is a REUSABLE
 * fill of 4 KiB (little device work: the figure is the edge). Rounds
 * alternate between the two devices; medians are kept.
 *
 * The embedded scheduler lets ACCEL_ENGINE_CREDITS jobs (default 4) be in
 * flight per device, device-ordered ones included: once 4 of the chain are
 * on the device, the next is released only when one completes, as with
 * host waits, and with little device work per job both then run at the
 * speed of that completion loop. So each figure is printed twice: with the
 * default credits, and with 128 (the whole chain may be on the device).
 *
 *	METRIC vulkan.chain_edge_device_vs_host   per-edge latency with
 *	       device-side waits over host-mediated waits (goal <= 0.5)
 *	METRIC cuda.chain_edge_device_vs_host     the same on cuda://0
 *	METRIC *.chain_edge_device_vs_host_credits128   the same, 128 credits
 *	METRIC *.chain_edge_device_vs_host_kernel  on the kernel scheduler
 *	       (ACCEL_SCHEDULER=kernel, in the VM): the chain without a gate,
 *	       timed from its first submission (see chain_round())
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <accel/accel.h>

#include "bench.h"

#define CHAIN 100
#define FILL_BYTES 4096u

struct chain {
	accel_device_t *dev;
	accel_queue_t *queue[2];
	accel_buffer_t *target;
	accel_command_buffer_t *cb;
	accel_semaphore_t *gate, *sem[CHAIN];
};

static int chain_setup(struct chain *c, const char *uri, const char *device_waits,
		       const char *credits)
{
	accel_buffer_params_t p = { ACCEL_MEMORY_TYPE_DEVICE_LOCAL, ACCEL_BUFFER_USAGE_ALL };
	uint32_t v = 0x5a5a5a5a;
	int err;

	/* Each device opens its own embedded scheduler, whose engine reads these. */
	setenv("ACCEL_DEVICE_WAITS", device_waits, 1);
	if (credits)
		setenv("ACCEL_ENGINE_CREDITS", credits, 1);
	err = accel_device_open(uri, NULL, &c->dev);
	for (int i = 0; i < 2 && !err; i++)
		err = accel_queue_create(c->dev, 0, &c->queue[i]);
	unsetenv("ACCEL_DEVICE_WAITS");
	if (credits)
		unsetenv("ACCEL_ENGINE_CREDITS");
	if (!err)
		err = accel_allocator_allocate_buffer(accel_device_allocator(c->dev), &p,
						      FILL_BYTES, &c->target);
	if (!err)
		err = accel_command_buffer_create(c->dev, ACCEL_COMMAND_BUFFER_REUSABLE, 0, &c->cb);
	if (!err)
		err = accel_command_buffer_begin(c->cb);
	if (!err)
		err = accel_command_buffer_fill(c->cb, accel_buffer_ref_direct(c->target, 0, FILL_BYTES),
						&v, 4);
	if (!err)
		err = accel_command_buffer_end(c->cb);
	return err;
}

static void chain_teardown(struct chain *c)
{
	accel_command_buffer_release(c->cb);
	accel_buffer_release(c->target);
	for (int i = 0; i < 2; i++)
		accel_queue_release(c->queue[i]);
	accel_device_release(c->dev);
}

/*
 * One chain: ns per edge from the gate's opening to the last point, or -1.
 * @open: no gate (the kernel scheduler's form): the chain is submitted
 * with its first submission runnable, and the time runs from the first
 * submission. Behind a gate the module pipelines a submission as a
 * follower of its predecessor, but keeps at most 64 followers per engine:
 * of a chain of 100 the last edges would be ordered by their points, not
 * by the device. Without a gate every edge can be pipelined.
 */
static double chain_round(struct chain *c, bool open)
{
	accel_scheduler_t *s = accel_device_scheduler(c->dev);
	double t0 = now_ns(), t = -1;
	int err;

	err = accel_semaphore_create(s, open, &c->gate);
	for (int i = 0; i < CHAIN && !err; i++)
		err = accel_semaphore_create(s, 0, &c->sem[i]);
	if (open)
		t0 = now_ns();
	for (int i = 0; i < CHAIN && !err; i++) {
		accel_semaphore_t *ws[1] = { i ? c->sem[i - 1] : c->gate };
		accel_semaphore_t *ss[1] = { c->sem[i] };
		uint64_t one[1] = { 1 };
		accel_semaphore_list_t w = { 1, ws, one }, sig = { 1, ss, one };

		err = accel_queue_execute(c->queue[i & 1], &w, &sig, c->cb, NULL, 0);
	}
	if (!err) {
		if (!open) {
			t0 = now_ns();
			err = accel_semaphore_signal(c->gate, 1);
		}
		if (!err)
			err = accel_semaphore_wait(c->sem[CHAIN - 1], 1, 0,
						   accel_deadline_after(INT64_C(60000000000)));
		t = err ? -1 : (now_ns() - t0) / CHAIN;
	}
	/* Nothing left waiting on a semaphore released below. */
	if (err)
		accel_device_wait_idle(c->dev, accel_deadline_after(INT64_C(1000000000)));
	accel_semaphore_release(c->gate);
	for (int i = 0; i < CHAIN; i++)
		accel_semaphore_release(c->sem[i]);
	return t;
}

static bool on_kernel(accel_device_t *d)
{
	accel_scheduler_info_t si;

	return !accel_scheduler_query(accel_device_scheduler(d), &si) &&
	       si.kind == ACCEL_SCHEDULER_KERNEL;
}

/* One device kind: a metric, or a note saying why not. */
static int chain_on(const struct opts *o, const char *uri, const char *name,
		    const char *credits, int *first)
{
	struct chain dev = { 0 }, host = { 0 };
	int rounds = o->rounds < 15 ? 15 : o->rounds, rc = 0;
	bool open;
	double *v = calloc(2 * (size_t)rounds, sizeof(double));
	char metric_name[64];

	if (!v || chain_setup(&dev, uri, "1", credits) ||
	    chain_setup(&host, uri, "0", credits)) {
		fprintf(notes, "# chain: %s skipped: %s\n", uri, accel_error_message());
		chain_teardown(&dev);
		chain_teardown(&host);
		free(v);
		return 0;
	}
	open = on_kernel(dev.dev);
	if (open && credits) { /* ACCEL_ENGINE_CREDITS is the embedded one's */
		chain_teardown(&dev);
		chain_teardown(&host);
		free(v);
		return 0;
	}
	chain_round(&dev, open); /* warm up: instances, threads */
	chain_round(&host, open);
	for (int i = 0; !rc && i < rounds; i++) {
		v[i] = chain_round(&dev, open);
		v[rounds + i] = chain_round(&host, open);
		if (v[i] < 0 || v[rounds + i] < 0) {
			fprintf(stderr, "accel-bench: chain: a submission on %s failed: %s\n",
				uri, accel_error_message());
			rc = 1;
		}
	}
	if (!rc) {
		double d = median(v, rounds), h = median(v + rounds, rounds);

		if (!o->json)
			fprintf(notes, "# chain: %d submissions across two queues of %s, %s: "
				"%.2f us per edge ordered on the device, %.2f us on the host\n",
				CHAIN, uri, open ? "the kernel scheduler, no gate" :
				credits ? "128 engine credits" : "the default engine credits",
				d / 1e3, h / 1e3);
		snprintf(metric_name, sizeof(metric_name), "%s.chain_edge_device_vs_host%s",
			 name, open ? "_kernel" : credits ? "_credits128" : "");
		metric(o, metric_name, d / h, first);
	}
	chain_teardown(&dev);
	chain_teardown(&host);
	free(v);
	return rc;
}

int bench_chain(const struct opts *o)
{
	int first = 1, rc;

	if (o->json)
		printf("{\"bench\": \"chain\", \"chain\": %d, \"metrics\": {", CHAIN);
	rc = chain_on(o, "vulkan://0", "vulkan", NULL, &first);
	rc |= chain_on(o, "vulkan://0", "vulkan", "128", &first);
	rc |= chain_on(o, "cuda://0", "cuda", NULL, &first);
	rc |= chain_on(o, "cuda://0", "cuda", "128", &first);
	if (o->json)
		printf("}}\n");
	return rc;
}
