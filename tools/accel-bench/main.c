// SPDX-License-Identifier: MIT
/*
 * accel-bench: accelsched's benchmarks. Every figure is a ratio against a
 * baseline measured side by side in the same run (rounds of A and B
 * interleaved, the median of each kept), because absolute times on a shared
 * or emulated machine mean little. Results are printed as
 *
 *	METRIC <name> <value>
 *
 * lines, plus the absolute figures behind them as comments (text) or fields
 * (--json).
 *
 *	accel-bench [-j] [-r ROUNDS] [-n OPS] [BENCH...]
 *
 * Without BENCH it runs every benchmark this machine can run: those that
 * need the module only where /dev/accelsched exists (`make bench` runs them
 * in the VM). Benchmarks (see the files that define them):
 *	nop   the submission path: a NOP uring_cmd on /dev/accelsched, batched
 *	      128 per io_uring_enter, against one NOP ioctl per syscall and
 *	      against io_uring's own IORING_OP_NOP, same batching (needs the
 *	      module; run it in the VM with `make bench`).
 *	wake  a host signal -> wake round trip between two threads through
 *	      syncobjs (waiting with the WAIT ioctl, and with an io_uring
 *	      WAIT), against the same ping-pong over two eventfds.
 *	tenant, ktenant  tenants sharing the cpu engine through libaccel, on
 *	      the embedded scheduler and on the module (in the VM): a HIGH
 *	      tenant's p99 under a flood, weighted shares, 8 queues vs 1.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

/* Every benchmark: one line each. */
static const struct bench benches[] = {
	{ "nop", "the submission path: uring_cmd vs ioctl vs IORING_OP_NOP", 1, bench_nop },
	{ "wake", "syncobj signal -> wake round trip vs eventfd", 1, bench_wake },
	{ "submit", "job submission: batched io_uring vs ioctl per job", 1, bench_jobs },
	{ "latency", "high-priority p99 release latency, flooded vs idle", 1, bench_latency },
	{ "fair", "fair share of two queues weighted 1:3", 1, bench_fair },
	{ "ktenant", "the module's tenants: HIGH p99 under a flood, 1:3 shares, 8 queues vs 1", 1, bench_ktenant },
	{ "ksubmit", "libaccel's REUSABLE submit: kernel scheduler vs embedded", 1, bench_ksubmit },
	{ "cpu", "cpu:// fill/copy/saxpy vs memset/memcpy/C loop, same threads", 0, bench_cpu },
	{ "cmdbuf", "reusable command buffers: submit cost vs re-recording, vs size", 0, bench_cmdbuf },
	{ "sem", "embedded semaphore signal -> wake round trip vs raw futex", 0, bench_sem },
	{ "tenant", "embedded scheduler: HIGH p99 under a flood, 1:3 shares", 0, bench_tenant },
	{ "vulkan", "vulkan:// reusable submit with a new table vs raw Vulkan resubmit", 0, bench_vulkan },
};

#define NBENCH (sizeof(benches) / sizeof(benches[0]))

static void usage(FILE *f)
{
	fprintf(f,
		"usage: accel-bench [-j] [-r ROUNDS] [-n OPS] [--host|--module] [BENCH...]\n"
		"  -j, --json      one JSON object per benchmark\n"
		"  -r, --rounds N  interleaved rounds per figure (default 7)\n"
		"  -n, --ops N     operations per round (default 20000)\n"
		"  --host          only the benchmarks that need no module\n"
		"  --module        only the benchmarks that need the module\n"
		"benchmarks:\n");
	for (size_t i = 0; i < NBENCH; i++)
		fprintf(f, "  %-8s %s%s\n", benches[i].name, benches[i].what,
			benches[i].needs_module ? " (needs the module)" : "");
}

int main(int argc, char **argv)
{
	enum { OPT_HOST = 256, OPT_MODULE };
	static const struct option lopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "rounds", required_argument, NULL, 'r' },
		{ "ops", required_argument, NULL, 'n' },
		{ "host", no_argument, NULL, OPT_HOST },
		{ "module", no_argument, NULL, OPT_MODULE },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct opts o = { .rounds = 7, .ops = 20000 };
	int c, rc = 0, only = -1;

	while ((c = getopt_long(argc, argv, "jr:n:h", lopts, NULL)) != -1) {
		switch (c) {
		case 'j':
			o.json = 1;
			break;
		case 'r':
			o.rounds = atoi(optarg);
			break;
		case 'n':
			o.ops = atol(optarg);
			break;
		case OPT_HOST:
			only = 0;
			break;
		case OPT_MODULE:
			only = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (o.rounds < 1 || o.rounds > 1000 || o.ops < 128) {
		fprintf(stderr, "accel-bench: need 1 <= rounds <= 1000 and ops >= 128\n");
		return 2;
	}
	if (optind == argc) {
		int have_module = access("/dev/accelsched", F_OK) == 0;

		for (size_t i = 0; i < NBENCH; i++) {
			if (only >= 0 && benches[i].needs_module != only)
				continue;
			if (benches[i].needs_module && !have_module) {
				printf("# %s: skipped: /dev/accelsched does not exist "
				       "(`make bench` runs it in the VM)\n", benches[i].name);
				continue;
			}
			rc |= benches[i].run(&o);
		}
		return rc;
	}
	for (int a = optind; a < argc; a++) {
		size_t i;

		for (i = 0; i < NBENCH; i++)
			if (!strcmp(argv[a], benches[i].name))
				break;
		if (i == NBENCH) {
			fprintf(stderr, "accel-bench: unknown benchmark '%s' (try --help)\n",
				argv[a]);
			return 2;
		}
		rc |= benches[i].run(&o);
	}
	return rc;
}
