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
 * Benchmarks:
 *	nop   the submission path: a NOP uring_cmd on /dev/accelsched, batched
 *	      128 per io_uring_enter, against one NOP ioctl per syscall and
 *	      against io_uring's own IORING_OP_NOP, same batching (needs the
 *	      module; run it in the VM with `make bench`).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include <accelsched.h>

#define BATCH 128

struct opts {
	int json;
	int rounds;
	long ops;
};

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* ns per NOP ioctl, one syscall each. */
static double run_ioctl_nop(int fd, long ops)
{
	struct accel_nop nop = { 0 };
	double t0 = now_ns();

	for (long i = 0; i < ops; i++) {
		if (ioctl(fd, ACCEL_IOCTL_NOP, &nop)) {
			fprintf(stderr, "accel-bench: NOP ioctl: %s\n", strerror(errno));
			exit(1);
		}
	}
	return (now_ns() - t0) / ops;
}

/* ns per op, BATCH SQEs per io_uring_enter; fd < 0 means IORING_OP_NOP. */
static double run_ring(struct io_uring *ring, int fd, long ops)
{
	struct accel_nop nop = { 0 };
	struct io_uring_cqe *cqe;
	double t0 = now_ns();
	long done = 0;

	while (done < ops) {
		for (int i = 0; i < BATCH; i++) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

			if (fd < 0) {
				io_uring_prep_nop(sqe);
			} else {
				io_uring_prep_rw(IORING_OP_URING_CMD, sqe, fd, NULL, 0, 0);
				sqe->cmd_op = ACCEL_URING_CMD_NOP;
				memcpy(sqe->cmd, &nop, sizeof(nop));
			}
		}
		int ret = io_uring_submit_and_wait(ring, BATCH);

		if (ret < 0) {
			fprintf(stderr, "accel-bench: io_uring_submit: %s\n", strerror(-ret));
			exit(1);
		}
		unsigned int head, seen = 0;

		io_uring_for_each_cqe(ring, head, cqe) {
			if (cqe->res < 0) {
				fprintf(stderr, "accel-bench: CQE res %d (%s)\n", cqe->res,
					strerror(-cqe->res));
				exit(1);
			}
			seen++;
		}
		io_uring_cq_advance(ring, seen);
		done += seen;
	}
	return (now_ns() - t0) / done;
}

static void metric(const struct opts *o, const char *name, double v, int *first)
{
	if (o->json) {
		printf("%s\"%s\": %.4f", *first ? "" : ", ", name, v);
		*first = 0;
	} else {
		printf("METRIC %s %.4f\n", name, v);
	}
}

static int bench_nop(const struct opts *o)
{
	struct io_uring ring;
	int fd, ret, first = 1;
	double *io, *uc, *rn;

	fd = open("/dev/" ACCEL_DEVICE_NAME, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "accel-bench: nop: cannot open /dev/%s: %s; load the "
			"module (or run `make bench`, which boots a VM with it)\n",
			ACCEL_DEVICE_NAME, strerror(errno));
		return 1;
	}
	ret = io_uring_queue_init(BATCH, &ring, 0);
	if (ret < 0) {
		fprintf(stderr, "accel-bench: io_uring_queue_init: %s\n", strerror(-ret));
		return 1;
	}
	io = calloc(o->rounds, sizeof(double));
	uc = calloc(o->rounds, sizeof(double));
	rn = calloc(o->rounds, sizeof(double));
	/* Warm up every path once, then interleave the rounds. */
	run_ioctl_nop(fd, o->ops / 10 + 1);
	run_ring(&ring, fd, BATCH * 8);
	run_ring(&ring, -1, BATCH * 8);
	for (int r = 0; r < o->rounds; r++) {
		io[r] = run_ioctl_nop(fd, o->ops);
		uc[r] = run_ring(&ring, fd, o->ops);
		rn[r] = run_ring(&ring, -1, o->ops);
	}
	double mi = median(io, o->rounds), mu = median(uc, o->rounds);
	double mr = median(rn, o->rounds);

	if (o->json) {
		printf("{\"bench\": \"nop\", \"ioctl_nop_ns\": %.1f, "
		       "\"uring_cmd_nop_ns\": %.1f, \"ring_nop_ns\": %.1f, "
		       "\"batch\": %d, \"metrics\": {", mi, mu, mr, BATCH);
	} else {
		printf("# nop: ioctl %.1f ns/op, uring_cmd %.1f ns/op, "
		       "IORING_OP_NOP %.1f ns/op (batch %d, median of %d rounds)\n",
		       mi, mu, mr, BATCH, o->rounds);
	}
	metric(o, "submit.uring_nop_vs_ioctl_nop_rate", mi / mu, &first);
	metric(o, "submit.uring_cmd_nop_vs_ring_nop_cost", mu / mr, &first);
	if (o->json)
		printf("}}\n");
	io_uring_queue_exit(&ring);
	close(fd);
	free(io);
	free(uc);
	free(rn);
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: accel-bench [-j] [-r ROUNDS] [-n OPS] [BENCH...]\n"
		"  -j, --json      one JSON object per benchmark\n"
		"  -r, --rounds N  interleaved rounds per figure (default 7)\n"
		"  -n, --ops N     operations per round (default 20000)\n"
		"benchmarks: nop (default: all)\n");
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "rounds", required_argument, NULL, 'r' },
		{ "ops", required_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct opts o = { .rounds = 7, .ops = 20000 };
	int c, rc = 0;

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
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (o.rounds < 1 || o.rounds > 1000 || o.ops < BATCH) {
		fprintf(stderr, "accel-bench: need 1 <= rounds <= 1000 and ops >= %d\n",
			BATCH);
		return 2;
	}
	if (optind == argc)
		return bench_nop(&o);
	for (int i = optind; i < argc; i++) {
		if (!strcmp(argv[i], "nop")) {
			rc |= bench_nop(&o);
		} else {
			fprintf(stderr, "accel-bench: unknown benchmark '%s' (known: nop)\n",
				argv[i]);
			return 2;
		}
	}
	return rc;
}
