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
 *	alloca accel_queue_alloca + dealloca against allocate + release of
 *	      the same sizes, on cpu:// and vulkan://0.
 *	tenant, ktenant  tenants sharing the cpu engine through libaccel, on
 *	      the embedded scheduler and on the module (in the VM): a HIGH
 *	      tenant's p99 under a flood, weighted shares, 8 queues vs 1.
 *	model the cost model's median relative error, predicted against
 *	      measured device time, on cpu:// and vulkan://0.
 *	share fair share when one queue's jobs are 10x the other's and
 *	      change size, charged by prediction vs the running average.
 *	insn  runs only when named: the module's and libaccel's submission
 *	      paths in windows whose guest instructions the accel-insn QEMU
 *	      plugin counts (scripts/insn-vm.sh, run by `make bench`).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <accel/accel.h>

#include "bench.h"
#include "output.h"
#include "parse.h"

#define OPS_MIN 128
#define OPS_MAX 100000000ull /* 1e8: minutes per benchmark already */
#define ROUNDS_MAX 1000

/* Every benchmark: one line each. */
static const struct bench benches[] = {
	{ "nop", "the submission path: uring_cmd vs ioctl vs IORING_OP_NOP", 1, bench_nop },
	{ "wake", "syncobj signal -> wake round trip vs eventfd", 1, bench_wake },
	{ "submit", "job submission: batched io_uring vs ioctl per job", 1, bench_jobs },
	{ "latency", "high-priority p99 release latency, flooded vs idle", 1, bench_latency },
	{ "inversion", "high-priority p99 release latency behind a low producer under a flood, vs direct", 1, bench_inversion },
	{ "fair", "fair share of two queues weighted 1:3", 1, bench_fair },
	{ "deadline", "frames with feasible deadlines under a two-tenant flood: miss rate with deadlines vs without", 1, bench_deadline },
	{ "ktenant", "the module's tenants: HIGH p99 under a flood, 1:3 shares, 8 queues vs 1", 1, bench_ktenant },
	{ "ksubmit", "libaccel's REUSABLE submit: kernel scheduler vs embedded", 1, bench_ksubmit },
	{ "insn", "submit, NOP, libaccel submit and stream windows for the accel-insn QEMU plugin (only when named)", NAMED_ONLY, bench_insn },
	{ "cpu", "cpu:// fill/copy/saxpy vs memset/memcpy/C loop, same threads", 0, bench_cpu },
	{ "cmdbuf", "reusable command buffers: submit cost vs re-recording, vs size", 0, bench_cmdbuf },
	{ "alloca", "queue alloca+dealloca vs allocate+release, 256 B .. 1 MiB", 0, bench_alloca },
	{ "sem", "embedded semaphore signal -> wake round trip vs raw futex", 0, bench_sem },
	{ "tenant", "embedded scheduler: HIGH p99 under a flood, 1:3 shares", 0, bench_tenant },
	{ "vulkan", "vulkan:// reusable submit with a new table vs raw Vulkan resubmit", 0, bench_vulkan },
	{ "chain", "vulkan://, cuda:// dependent chain: edges ordered on the device vs the host", 0, bench_chain },
	{ "vkcache", "vulkan:// executable loads with a warm executable cache vs a cold one", 0, bench_vkcache },
	{ "cucache", "cuda:// PTX executable loads with a warm executable cache vs a cold one", 0, bench_cucache },
	{ "model", "cost model: median |predicted - measured| / measured on cpu:// and vulkan://0", 0, bench_model },
	{ "share", "fair share of 1:1 queues with 10x and changing job sizes: charged by prediction vs average", 0, bench_share },
};

#define NBENCH (sizeof(benches) / sizeof(benches[0]))

static void usage(FILE *f)
{
	fprintf(f,
		"usage: accel-bench [-j] [-r ROUNDS] [-n OPS] [--host|--module] [BENCH...]\n"
		"       accel-bench -h|--help|help, accel-bench -V|--version\n"
		"  -j, --json      one JSON object per benchmark on stdout (the '#' notes\n"
		"                  and progress go to stderr)\n"
		"  -r, --rounds N  interleaved rounds per figure, 1 to 1000 (default 7)\n"
		"  -n, --ops N     operations per round, 128 to 100000000 (default 20000)\n"
		"  --host          only the benchmarks that need no module\n"
		"  --module        only the benchmarks that need the module\n"
		"  -V, --version   print the version and exit\n"
		"exit: 0 ok, 1 a benchmark could not run, 2 usage error\n"
		"benchmarks:\n");
	for (size_t i = 0; i < NBENCH; i++)
		fprintf(f, "  %-8s %s%s\n", benches[i].name, benches[i].what,
			benches[i].needs_module ? " (needs the module)" : "");
}

static int find(const char *name)
{
	for (size_t i = 0; i < NBENCH; i++)
		if (!strcmp(name, benches[i].name))
			return (int)i;
	return -1;
}

/* Progress on stderr: a whole run takes minutes, one benchmark seconds. */
static int run(const struct bench *b, const struct opts *o, size_t k, size_t n)
{
	double t0 = now_ns();
	int rc;

	fprintf(stderr, "accel-bench: [%zu/%zu] %s ...\n", k, n, b->name);
	if (b->needs_module && access("/dev/accelsched", F_OK) != 0) {
		/* Said once, here, rather than as whatever call fails first. */
		fprintf(stderr, "accel-bench: %s needs the module, and /dev/accelsched does not exist: "
			"load it (modprobe accelsched), or run `make bench`, which runs it in the VM\n",
			b->name);
		rc = 1;
	} else {
		rc = b->run(o);
	}
	fprintf(stderr, "accel-bench: [%zu/%zu] %s: %s in %.1f s\n", k, n, b->name,
		rc ? "failed" : "done", (now_ns() - t0) / 1e9);
	return rc;
}

static int tool_main(int argc, char **argv)
{
	enum { OPT_HOST = 256, OPT_MODULE };
	static const struct option lopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "rounds", required_argument, NULL, 'r' },
		{ "ops", required_argument, NULL, 'n' },
		{ "host", no_argument, NULL, OPT_HOST },
		{ "module", no_argument, NULL, OPT_MODULE },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 },
	};
	struct opts o = { .rounds = 7, .ops = 20000 };
	int c, rc = 0, only = -1;
	uint64_t v;

	output_check_at_exit("accel-bench");
	notes = stdout;
	while ((c = getopt_long(argc, argv, "jr:n:hV", lopts, NULL)) != -1) {
		switch (c) {
		case 'j':
			o.json = 1;
			break;
		case 'r':
			if (parse_u64("accel-bench", "--rounds", optarg, 1, ROUNDS_MAX, &v))
				return 2;
			o.rounds = (int)v;
			break;
		case 'n':
			if (parse_u64("accel-bench", "--ops", optarg, OPS_MIN, OPS_MAX, &v))
				return 2;
			o.ops = (long)v;
			break;
		case 'V':
			printf("accel-bench (libaccel) %s\n", accel_version());
			return 0;
		case OPT_HOST:
		case OPT_MODULE:
			if (only == (c == OPT_HOST ? 1 : 0)) {
				fprintf(stderr, "accel-bench: --host and --module select opposite sets; give one\n");
				return 2;
			}
			only = c == OPT_MODULE;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (o.json)
		notes = stderr;
	if (optind + 1 == argc && !strcmp(argv[optind], "help")) {
		usage(stdout);
		return 0;
	}
	/*
	 * Every name checked before anything runs; with --host or --module,
	 * a name it does not select is refused, not run.
	 */
	for (int a = optind; a < argc; a++) {
		int i = find(argv[a]);

		if (i < 0) {
			fprintf(stderr, "accel-bench: unknown benchmark '%s' (try --help)\n",
				argv[a]);
			return 2;
		}
		if (only >= 0 && benches[i].needs_module != NAMED_ONLY &&
		    benches[i].needs_module != only) {
			fprintf(stderr, "accel-bench: '%s' %s the module, but %s selects only those that %s\n",
				argv[a], only ? "does not need" : "needs",
				only ? "--module" : "--host", only ? "need it" : "need none");
			return 2;
		}
	}
	if (optind == argc) {
		int have_module = access("/dev/accelsched", F_OK) == 0;
		size_t n = 0, k = 0;

		/* --module asks for nothing but what cannot run here. */
		if (only == 1 && !have_module) {
			fprintf(stderr, "accel-bench: --module: every benchmark it selects needs the module, and /dev/accelsched does not exist: "
				"load it (modprobe accelsched), or run `make bench`, which runs them in the VM\n");
			return 1;
		}

		for (size_t i = 0; i < NBENCH; i++)
			n += (only < 0 || benches[i].needs_module == only) &&
			     (!benches[i].needs_module || have_module) &&
			     benches[i].needs_module != NAMED_ONLY;
		for (size_t i = 0; i < NBENCH; i++) {
			if ((only >= 0 && benches[i].needs_module != only) ||
			    benches[i].needs_module == NAMED_ONLY)
				continue;
			if (benches[i].needs_module && !have_module) {
				fprintf(notes, "# %s: skipped: /dev/accelsched does not exist "
				       "(`make bench` runs it in the VM)\n", benches[i].name);
				continue;
			}
			rc |= run(&benches[i], &o, ++k, n);
		}
		return rc;
	}
	for (int a = optind; a < argc; a++)
		rc |= run(&benches[find(argv[a])], &o, a - optind + 1,
			  (size_t)(argc - optind));
	return rc;
}

int main(int argc, char **argv)
{
	return output_end("accel-bench", tool_main(argc, argv));
}
