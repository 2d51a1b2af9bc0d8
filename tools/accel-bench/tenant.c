// SPDX-License-Identifier: MIT
/*
 * accel-bench: tenants sharing one engine, through libaccel on cpu:// with
 * real work (issue 17).
 *
 *	tenant   the embedded scheduler: threads of one process (a process
 *	         is one tenant there, so its queues stand for the tenants).
 *	ktenant  the module (ACCEL_SCHEDULER=kernel): a process per tenant,
 *	         forked, in a cgroup of its own where tenant weights matter;
 *	         the module releases, each process's cpu executor runs.
 *
 * Figures, each a ratio of figures taken in the same run:
 *
 *	tenant.high_p99_loaded_vs_idle.{embedded,kernel}
 *		the p99 of the submit -> signal latency of a HIGH tenant's
 *		jobs, one every HIGH_PERIOD_US, while two LOW tenants keep the
 *		engine backlogged, over the p99 without them; phases of
 *		HIGH_PHASE jobs alternate idle, loaded, idle, loaded... (so
 *		drift and noise of the machine fall on both), and the figure is
 *		the median of HIGH_BLOCKS blocks' ratios.
 *	tenant.share_error[.embedded]
 *		two LOW tenants of weights 1:3 (cgroups of weights 100 and 300
 *		on the module, queue weights 1 and 3 on the embedded
 *		scheduler), jobs of unequal sizes, both backlogged: the larger
 *		of the two |share / target - 1| of their device time, summed
 *		over o->rounds windows.
 *	tenant.split_gain
 *		(module) tenant A's share of device time against an equal
 *		competitor B when A floods through 8 queues, over when it
 *		floods through 1; windows of both interleaved.
 *
 * A job is one workgroup of a kernel linked into this program that spins
 * a number of iterations calibrated at start to the job's size: real work,
 * which takes longer when its thread has to share a CPU. Its run interval,
 * taken inside the kernel, is logged per queue in memory every tenant
 * process shares; a tenant's device time over a window is the overlap of
 * its intervals with the window. The # lines give the sizes measured.
 *
 * The engine gets one credit (embedded: ACCEL_ENGINE_CREDITS=1; module:
 * engines/cpu/credits in sysfs, restored afterwards), as a model of one
 * device: with more credits than CPUs left over, a released HIGH job would
 * share a CPU with running batch jobs, which no scheduler can help. A
 * released job is not preempted either, so a HIGH job that comes while a
 * batch job runs waits for its end: loaded / idle is at least about
 * (HIGH job + batch job) / HIGH job whatever the scheduler does, and the
 * batch jobs are a fifth of the HIGH job so that the goal (1.5) measures
 * the scheduler rather than that floor (1.2, in the # line).
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <accel/accel.h>
#include <accel/cpu_executable.h>
#include <accelsched.h>

#include "bench.h"
#include "cpu-common.h"

#define MAX_STREAMS 12
#define MAX_TENANTS 3
#define LOG_MAX 8192      /* run intervals a queue logs per window */
#define SAMPLES_MAX 4096  /* HIGH latencies of each kind */
#define BACKLOG_US 10000  /* work a flooding queue keeps submitted */

#define HIGH_US 1000      /* the HIGH tenant's job */
#define HIGH_PERIOD_US 4000
#define HIGH_PHASE 20     /* HIGH jobs per phase (idle or loaded) */
#define HIGH_BLOCKS 5     /* of phases, each giving a ratio */
#define BATCH_US 200      /* the flooding LOW tenants' jobs */
#define LIGHT_US 1000     /* share: the weight-1 tenant's jobs */
#define HEAVY_US 300      /* share: the weight-3 tenant's jobs */
#define SPLIT_US 500      /* split: every job */
#define WINDOW_MS 400     /* share and split: one measuring window */

#define SYSFS "/sys/kernel/accelsched"
#define CGROOT "/sys/fs/cgroup"
#define ENGINE "cpu"      /* libaccel's engine for cpu:// */

/* ---- what every tenant process shares ---------------------------------- */

/* What the controller asks of a queue's thread. */
enum cmd { CMD_IDLE, CMD_FLOOD, CMD_MEASURE, CMD_EXIT };

struct interval {
	int64_t t0, t1;
};

/*
 * struct lane - one queue's mailbox. The controller writes @cmd then bumps
 * @gen; the queue's thread sets @ack to @gen once the command took effect
 * (IDLE: its jobs are all done; FLOOD: one of its jobs completed since;
 * MEASURE: the samples are taken), or @err on a failure.
 */
struct lane {
	_Atomic int cmd;
	_Atomic int gen;
	_Atomic int ack;
	_Atomic int err;
	_Atomic uint32_t nlog;        /* intervals in @log */
	struct interval log[LOG_MAX]; /* its jobs' runs, inside the kernel */
};

struct shared {
	_Atomic int ready;            /* tenant processes set up */
	_Atomic int failed;           /* a tenant process could not set up */
	double lat[HIGH_PHASE];       /* the last MEASURE's latencies, ns */
	struct lane lane[MAX_STREAMS];
};

static struct shared *sh;
static double iters_per_ns;      /* of spin(), calibrated before any fork */

/* ---- the job: spinning, timed from inside ------------------------------ */

static volatile uint64_t tenant_sink; /* keeps spin()'s result, so its loop */

static uint64_t spin(uint32_t iters)
{
	uint64_t x = iters;

	for (uint32_t i = 0; i < iters; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	return x;
}

static void spin_entry(const struct accel_cpu_dispatch *d)
{
	struct lane *l = &sh->lane[d->constants[1]];
	int64_t t0 = (int64_t)now_ns();
	uint32_t n;

	tenant_sink = spin(d->constants[0]);
	n = atomic_fetch_add(&l->nlog, 1);
	if (n < LOG_MAX)
		l->log[n] = (struct interval){ t0, (int64_t)now_ns() };
}

/* constants: iterations, the queue's lane */
static const struct accel_cpu_entry spin_entries[] = {
	{ "spin", 0, 2, { 1, 1, 1 }, spin_entry },
};

static const struct accel_cpu_executable spin_table = {
	ACCEL_CPU_EXECUTABLE_ABI_VERSION, 1, spin_entries, NULL,
};

/* Iterations per ns of spin(): the fastest of a few 2 ms runs. */
static void calibrate(void)
{
	double best = 0;

	for (int i = 0; i < 5; i++) {
		uint32_t n = 1u << 16;
		double t0 = now_ns(), dt;

		while ((dt = now_ns() - t0) < 2e6 && n < (1u << 30)) {
			tenant_sink = spin(n);
			n += n / 4;
		}
		/* One more run of the size reached, timed alone. */
		t0 = now_ns();
		tenant_sink = spin(n);
		dt = now_ns() - t0;
		if (n / dt > best)
			best = n / dt;
	}
	iters_per_ns = best;
}

/* ---- a benchmark's tenants and queues ---------------------------------- */

/*
 * struct stream_spec - one queue: its tenant, class, weight and job size.
 * Every queue has a thread of its own that submits to it.
 */
struct stream_spec {
	int tenant;
	uint32_t prio;
	uint32_t weight;
	uint32_t job_us;
};

/*
 * struct setup - what a benchmark runs: @kernel (a process per tenant on
 * the module) or embedded (threads in this process), and each tenant's
 * cgroup weight on the module (0: a per-file tenant in the root cgroup).
 */
struct setup {
	int kernel;
	int ntenants;
	uint32_t cg_weight[MAX_TENANTS];
	int nstreams;
	struct stream_spec st[MAX_STREAMS];
};

struct cgroup {
	char path[96];
	uint64_t id;
};

/* A running setup, as the controller sees it. */
struct run {
	const struct setup *s;
	pid_t pid[MAX_TENANTS];       /* kernel: the tenant processes */
	struct cgroup cg[MAX_TENANTS];
	struct tenant *embedded;      /* embedded: everything, in process */
	int engine_fd;                /* kernel: holds the engine */
	char old_credits[16];
};

/* A queue on the tenant's side. */
struct stream {
	struct bench_dev d;           /* its queue and semaphore */
	accel_command_buffer_t *cb;   /* one job */
	uint64_t depth;               /* jobs it keeps submitted when flooding */
	int lane;
	pthread_t thread;
	int started;
};

/* What one process holds for its tenants' queues. */
struct tenant {
	accel_scheduler_t *sched;
	accel_device_t *dev;
	accel_executable_t *exe;
	int nstreams;
	struct stream st[MAX_STREAMS];
};

/* ---- a queue's thread -------------------------------------------------- */

static int lane_fail(struct lane *l, const char *what)
{
	fprintf(stderr, "accel-bench: tenant: %s: %s\n", what, accel_error_message());
	atomic_store(&l->err, 1);
	return -1;
}

/* Jobs of @st completed: its semaphore's value. */
static uint64_t completed(struct stream *st)
{
	uint64_t v = 0;

	accel_semaphore_query(st->d.sem, &v, NULL);
	return v;
}

/* Waits up to @ms (< 0: for ever) for @st's semaphore to reach @v. */
static int wait_for(struct stream *st, uint64_t v, int64_t ms)
{
	int64_t deadline = ms < 0 ? ACCEL_DEADLINE_INFINITE :
			   accel_deadline_after((uint64_t)ms * 1000000);

	return accel_semaphore_wait(st->d.sem, v, 0, deadline);
}

/*
 * FLOOD: keep BACKLOG_US of work submitted, enough to ride out a late
 * wake-up of this thread, topped up when half of it is done (not after
 * each job: this thread would take a CPU from the others); ack once a job
 * completed since @from.
 */
static int flood(struct stream *st, struct lane *l, int gen, uint64_t from)
{
	uint64_t done = completed(st);
	int err;

	if (done > from)
		atomic_store(&l->ack, gen);
	if (st->d.value - done <= st->depth / 2)
		while (st->d.value < done + st->depth)
			if (bench_submit(&st->d, st->cb, NULL))
				return lane_fail(l, "accel_queue_execute");
	err = wait_for(st, st->d.value - st->depth / 2, 10);
	return err && err != -ETIME ? lane_fail(l, "a batch job") : 0;
}

/* MEASURE: HIGH_PHASE jobs, one per period, each timed to its signal. */
static int measure(struct stream *st, struct lane *l)
{
	double next = now_ns();

	for (int k = 0; k < HIGH_PHASE; k++) {
		double t0;

		while ((t0 = now_ns()) < next)
			usleep((useconds_t)((next - t0) / 1000) + 1);
		if (bench_submit(&st->d, st->cb, NULL) || wait_for(st, st->d.value, -1))
			return lane_fail(l, "a HIGH job");
		sh->lat[k] = now_ns() - t0;
		next = t0 + HIGH_PERIOD_US * 1000.0;
	}
	return 0;
}

static void *stream_main(void *arg)
{
	struct stream *st = arg;
	struct lane *l = &sh->lane[st->lane];
	int cmd = CMD_IDLE, gen = 0, err = 0;
	uint64_t from = 0;

	while (!err) {
		if (atomic_load(&l->gen) != gen) { /* cmd is written first */
			gen = atomic_load(&l->gen);
			cmd = atomic_load(&l->cmd);
			from = completed(st);
		}
		if (cmd == CMD_EXIT)
			break;
		if (cmd == CMD_FLOOD) {
			err = flood(st, l, gen, from);
		} else if (cmd == CMD_MEASURE) {
			err = measure(st, l);
			cmd = CMD_IDLE; /* acks it */
		} else if (atomic_load(&l->ack) != gen) {
			if (wait_for(st, st->d.value, -1))
				err = lane_fail(l, "draining");
			atomic_store(&l->ack, gen);
		} else {
			usleep(1000); /* idle: no system call but this one */
		}
	}
	wait_for(st, st->d.value, -1);
	return NULL;
}

/* ---- setting a tenant up ------------------------------------------------ */

static int stream_open(struct tenant *t, const struct stream_spec *spec,
		       int lane)
{
	struct stream *st = &t->st[t->nstreams];
	accel_queue_options_t qo = ACCEL_QUEUE_OPTIONS_INIT;
	uint32_t c[2] = { (uint32_t)(spec->job_us * 1000.0 * iters_per_ns), lane };
	uint32_t wg[3] = { 1, 1, 1 };
	int err;

	qo.priority = spec->prio;
	qo.weight = spec->weight;
	st->lane = lane;
	st->depth = BACKLOG_US / spec->job_us > 4 ? BACKLOG_US / spec->job_us : 4;
	st->d.sched = t->sched;
	st->d.dev = t->dev;
	accel_scheduler_retain(t->sched); /* bench_close() drops them */
	accel_device_retain(t->dev);
	t->nstreams++;
	err = accel_queue_create_with_options(t->dev, &qo, &st->d.queue);
	err = err ? err : accel_semaphore_create(t->sched, 0, &st->d.sem);
	err = err ? err : bench_cb(&st->d, &st->cb);
	err = err ? err : accel_command_buffer_dispatch(st->cb, t->exe, 0, wg, c, 2, NULL, 0);
	err = err ? err : accel_command_buffer_end(st->cb);
	if (!err && pthread_create(&st->thread, NULL, stream_main, st))
		err = -EAGAIN;
	st->started = !err;
	return err;
}

/*
 * The scheduler, a cpu:// device with one worker (a job is one thread's
 * work) and the queues of tenant @tenant (-1: every tenant) of @s.
 */
static int tenant_open(const struct setup *s, int tenant, struct tenant **out)
{
	struct tenant *t = calloc(1, sizeof(*t));
	accel_scheduler_options_t so;
	int err;

	*out = t;
	if (!t)
		return -ENOMEM;
	accel_scheduler_options_init(&so);
	so.kind = s->kernel ? ACCEL_SCHEDULER_KERNEL : ACCEL_SCHEDULER_EMBEDDED;
	err = accel_scheduler_open(&so, &t->sched);
	err = err ? err : accel_device_open("cpu://?threads=1", t->sched, &t->dev);
	err = err ? err : accel_cpu_executable_create(t->dev, &spin_table, &t->exe);
	for (int i = 0; !err && i < s->nstreams; i++)
		if (tenant < 0 || s->st[i].tenant == tenant)
			err = stream_open(t, &s->st[i], i);
	if (err)
		fprintf(stderr, "accel-bench: tenant: setting up: %s\n",
			accel_error_message());
	return err;
}

/* Joins the queues' threads (they leave on CMD_EXIT) and frees it all. */
static void tenant_close(struct tenant *t)
{
	if (!t)
		return;
	for (int i = 0; i < t->nstreams; i++) {
		struct stream *st = &t->st[i];

		if (st->started)
			pthread_join(st->thread, NULL);
		accel_command_buffer_release(st->cb);
		bench_close(&st->d);
	}
	accel_executable_release(t->exe);
	accel_device_release(t->dev);
	accel_scheduler_release(t->sched);
	free(t);
}

/* ---- the module's side: sysfs, cgroups, processes ---------------------- */

static int write_file(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, val, strlen(val)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

static int read_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = 0;
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

/* cgroup2 at CGROOT, mounting it if needed; 0 or -errno. */
static int cgroup2_ready(void)
{
	if (!access(CGROOT "/cgroup.procs", W_OK))
		return 0;
	mkdir(CGROOT, 0755);
	if (mount("none", CGROOT, "cgroup2", 0, NULL) && errno != EBUSY)
		return -errno;
	return access(CGROOT "/cgroup.procs", W_OK) ? -errno : 0;
}

static int cg_make(struct cgroup *c, int i)
{
	struct stat st;

	snprintf(c->path, sizeof(c->path), CGROOT "/accel-bench-%d-%d", getpid(), i);
	if (mkdir(c->path, 0755) && errno != EEXIST)
		return -errno;
	if (stat(c->path, &st))
		return -errno;
	c->id = st.st_ino; /* the cgroup id */
	return 0;
}

/* Moves this process into @c. */
static int cg_enter(const struct cgroup *c)
{
	char path[128], pid[24];

	snprintf(path, sizeof(path), "%s/cgroup.procs", c->path);
	snprintf(pid, sizeof(pid), "%d", getpid());
	return write_file(path, pid);
}

/*
 * One credit on the module's "cpu" engine: a queue of our own makes the
 * engine exist (it names it), then sysfs sets the limit; the old one is
 * kept for run_stop().
 */
static int engine_one_credit(struct run *r)
{
	struct accel_queue_create q = { .priority = ACCEL_PRIORITY_NORMAL, .weight = 1 };
	const char *path = SYSFS "/engines/" ENGINE "/credits";
	int err;

	r->engine_fd = open("/dev/" ACCEL_DEVICE_NAME, O_RDWR | O_CLOEXEC);
	if (r->engine_fd < 0)
		return -errno;
	snprintf(q.engine, sizeof(q.engine), ENGINE);
	if (ioctl(r->engine_fd, ACCEL_IOCTL_QUEUE_CREATE, &q))
		return -errno;
	err = read_file(path, r->old_credits, sizeof(r->old_credits));
	return err ? err : write_file(path, "1");
}

/* 0, or -1 when a tenant process is gone (it said why on stderr). */
static int children_alive(struct run *r)
{
	for (int t = 0; t < r->s->ntenants; t++) {
		if (r->pid[t] <= 0 || waitpid(r->pid[t], NULL, WNOHANG) != r->pid[t])
			continue;
		fprintf(stderr, "accel-bench: tenant: tenant process %d ended early\n", t);
		r->pid[t] = 0;
		return -1;
	}
	return 0;
}

static void child_main(struct run *r, int t)
{
	struct tenant *ten;
	int err = 0;

	if (r->s->cg_weight[t])
		err = cg_enter(&r->cg[t]);
	if (err)
		fprintf(stderr, "accel-bench: tenant: joining %s: %s\n",
			r->cg[t].path, strerror(-err));
	if (err || tenant_open(r->s, t, &ten)) {
		atomic_store(&sh->failed, 1);
		_exit(1);
	}
	atomic_fetch_add(&sh->ready, 1);
	tenant_close(ten); /* waits for CMD_EXIT */
	_exit(0);
}

/* The tenants' cgroups and weights, once their processes opened the device. */
static int set_weights(struct run *r)
{
	for (int t = 0; t < r->s->ntenants; t++) {
		char path[96], w[16];
		int err;

		if (!r->s->cg_weight[t])
			continue;
		snprintf(path, sizeof(path), SYSFS "/tenants/%llu/weight",
			 (unsigned long long)r->cg[t].id);
		snprintf(w, sizeof(w), "%u", r->s->cg_weight[t]);
		err = write_file(path, w);
		if (err) {
			fprintf(stderr, "accel-bench: tenant: %s: %s\n", path, strerror(-err));
			return err;
		}
	}
	return 0;
}

static int spawn(struct run *r)
{
	int err = engine_one_credit(r);

	if (err) {
		fprintf(stderr, "accel-bench: tenant: one credit on engine " ENGINE
			": %s\n", strerror(-err));
		return err;
	}
	for (int t = 0; t < r->s->ntenants; t++) {
		if (r->s->cg_weight[t] && (err = cg_make(&r->cg[t], t))) {
			fprintf(stderr, "accel-bench: tenant: making %s: %s\n",
				r->cg[t].path, strerror(-err));
			return err;
		}
		fflush(stdout);
		r->pid[t] = fork();
		if (r->pid[t] < 0)
			return -errno;
		if (!r->pid[t])
			child_main(r, t);
	}
	while (atomic_load(&sh->ready) < r->s->ntenants) {
		if (atomic_load(&sh->failed) || children_alive(r))
			return -EIO;
		usleep(1000);
	}
	return set_weights(r);
}

/* ---- the controller ------------------------------------------------------ */

static int run_start(struct run *r, const struct setup *s)
{
	memset(sh, 0, sizeof(*sh));
	memset(r, 0, sizeof(*r));
	r->s = s;
	r->engine_fd = -1;
	if (s->kernel)
		return spawn(r);
	return tenant_open(s, -1, &r->embedded);
}

static void run_stop(struct run *r)
{
	for (int i = 0; i < r->s->nstreams; i++) {
		atomic_store(&sh->lane[i].cmd, CMD_EXIT);
		atomic_fetch_add(&sh->lane[i].gen, 1);
	}
	tenant_close(r->embedded);
	for (int t = 0; t < r->s->ntenants; t++) {
		if (r->pid[t] > 0)
			waitpid(r->pid[t], NULL, 0);
		if (r->cg[t].path[0])
			rmdir(r->cg[t].path);
	}
	if (r->old_credits[0])
		write_file(SYSFS "/engines/" ENGINE "/credits", r->old_credits);
	if (r->engine_fd >= 0)
		close(r->engine_fd);
}

/* Sends @cmd to the lanes in @mask and waits for their acks (60 s at most). */
static int command(struct run *r, unsigned int mask, int cmd)
{
	int gen[MAX_STREAMS];
	double t0 = now_ns();

	for (int i = 0; i < r->s->nstreams; i++) {
		if (!(mask & (1u << i)))
			continue;
		atomic_store(&sh->lane[i].cmd, cmd);
		gen[i] = atomic_fetch_add(&sh->lane[i].gen, 1) + 1;
	}
	for (int i = 0; i < r->s->nstreams; i++) {
		if (!(mask & (1u << i)))
			continue;
		while (atomic_load(&sh->lane[i].ack) != gen[i]) {
			if (atomic_load(&sh->lane[i].err) || children_alive(r) ||
			    now_ns() - t0 > 60e9) {
				fprintf(stderr, "accel-bench: tenant: queue %d did not "
					"follow command %d\n", i, cmd);
				return -1;
			}
			usleep(200);
		}
	}
	return 0;
}

static unsigned int all_lanes(const struct run *r)
{
	return (1u << r->s->nstreams) - 1;
}

/*
 * Floods with the lanes of @mask (the others idle) and returns in @busy
 * each lane's device time over the window from the moment every lane of
 * @mask had a job completed to WINDOW_MS later.
 */
static int window(struct run *r, unsigned int mask, double *busy)
{
	double ws, we;

	if (command(r, all_lanes(r), CMD_IDLE))
		return -1;
	for (int i = 0; i < r->s->nstreams; i++)
		atomic_store(&sh->lane[i].nlog, 0);
	if (command(r, mask, CMD_FLOOD))
		return -1;
	ws = now_ns();
	usleep(WINDOW_MS * 1000);
	we = now_ns();
	if (command(r, mask, CMD_IDLE))
		return -1;
	for (int i = 0; i < r->s->nstreams; i++) {
		struct lane *l = &sh->lane[i];
		uint32_t n = atomic_load(&l->nlog);

		busy[i] = 0;
		for (uint32_t k = 0; k < n && k < LOG_MAX; k++) {
			double a = fmax(l->log[k].t0, ws), b = fmin(l->log[k].t1, we);

			if (b > a)
				busy[i] += b - a;
		}
	}
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double p99(double *v, int n)
{
	int k = (int)ceil(n * 0.99) - 1;

	qsort(v, n, sizeof(*v), cmp_double);
	return v[k < 0 ? 0 : k];
}

/* The median run time of the jobs lane @i logged, in ns. */
static double lane_job_ns(int i)
{
	uint32_t n = atomic_load(&sh->lane[i].nlog);
	double *v, m;

	n = n < LOG_MAX ? n : LOG_MAX;
	v = calloc(n ? n : 1, sizeof(*v));
	if (!v || !n) {
		free(v);
		return 0;
	}
	for (uint32_t k = 0; k < n; k++)
		v[k] = (double)(sh->lane[i].log[k].t1 - sh->lane[i].log[k].t0);
	m = median(v, (int)n);
	free(v);
	return m;
}

/* ---- the three measurements ---------------------------------------------- */

struct high_result {
	double idle_p99, loaded_p99;  /* ns, over every sample */
	double ratio;                 /* the median of the blocks' ratios */
	double high_job, batch_job;   /* measured median run times, ns */
	int samples;                  /* of each kind */
};

/*
 * Lane 0 is the HIGH tenant, lanes 1 and 2 the LOW batch tenants (one
 * process each on the module, all per-file tenants: the classes decide).
 * Phases of HIGH_PHASE jobs alternate, idle then loaded, until each kind
 * has o->ops / 40 samples, in HIGH_BLOCKS blocks: the figure is the
 * median of the blocks' p99 loaded / p99 idle, so that a burst of load
 * from elsewhere on the machine, which lands in one block, does not decide
 * it.
 */
static int high_p99(const struct opts *o, int kernel, struct high_result *res)
{
	static double lat[2][SAMPLES_MAX];
	const struct setup s = {
		.kernel = kernel, .ntenants = 3, .nstreams = 3,
		.st = {
			{ 0, ACCEL_QUEUE_PRIORITY_HIGH, 1, HIGH_US },
			{ 1, ACCEL_QUEUE_PRIORITY_LOW, 1, BATCH_US },
			{ 2, ACCEL_QUEUE_PRIORITY_LOW, 1, BATCH_US },
		},
	};
	long want = o->ops / 40;
	int per, n, err;   /* phases of each kind per block; samples per block */
	double ratio[HIGH_BLOCKS];
	struct run r;

	want = want < 100 ? 100 : want > SAMPLES_MAX ? SAMPLES_MAX : want;
	per = (int)((want + HIGH_BLOCKS * HIGH_PHASE - 1) / (HIGH_BLOCKS * HIGH_PHASE));
	n = per * HIGH_PHASE;
	res->samples = n * HIGH_BLOCKS;
	err = res->samples > SAMPLES_MAX || run_start(&r, &s);
	for (int k = 0; !err && k < 2 * per * HIGH_BLOCKS; k++) {
		int load = k & 1;

		err = command(&r, 6, load ? CMD_FLOOD : CMD_IDLE) ||
		      command(&r, 1, CMD_MEASURE);
		memcpy(lat[load] + k / 2 * HIGH_PHASE, sh->lat,
		       HIGH_PHASE * sizeof(double));
	}
	res->high_job = lane_job_ns(0);
	res->batch_job = lane_job_ns(1);
	run_stop(&r);
	if (err)
		return -1;
	for (int b = 0; b < HIGH_BLOCKS; b++)
		ratio[b] = p99(lat[1] + b * n, n) / p99(lat[0] + b * n, n);
	res->ratio = median(ratio, HIGH_BLOCKS);
	res->idle_p99 = p99(lat[0], res->samples);
	res->loaded_p99 = p99(lat[1], res->samples);
	return 0;
}

struct share_result {
	double share3, error;
	double light_job, heavy_job;  /* measured median run times, ns */
};

/* How the two tenants of share() are made. */
enum share_how {
	SHARE_EMBEDDED,   /* queue weights 1 and 3, one process */
	SHARE_CGROUPS,    /* a process per cgroup, tenant weights 100 and 300 */
	SHARE_ONE_FILE,   /* the module without cgroups: queue weights, one file */
};

/*
 * Two LOW tenants of weights 1:3, the lighter one with jobs of LIGHT_US,
 * the heavier with HEAVY_US, both backlogged: the weight-3 tenant's share
 * of their device time over o->rounds windows, and the larger of the two
 * tenants' |share / target - 1|.
 */
static int share(const struct opts *o, enum share_how how, struct share_result *res)
{
	int cg = how == SHARE_CGROUPS;
	const struct setup s = {
		.kernel = how != SHARE_EMBEDDED, .ntenants = cg ? 2 : 1, .nstreams = 2,
		.cg_weight = { cg ? 100 : 0, cg ? 300 : 0 },
		.st = {
			{ 0, ACCEL_QUEUE_PRIORITY_LOW, 1, LIGHT_US },
			{ cg, ACCEL_QUEUE_PRIORITY_LOW, cg ? 1 : 3, HEAVY_US },
		},
	};
	double sum[2] = { 0, 0 };
	struct run r;
	int err = run_start(&r, &s);

	for (int k = 0; !err && k < o->rounds; k++) {
		double busy[2];

		err = window(&r, 3, busy);
		sum[0] += busy[0];
		sum[1] += busy[1];
	}
	res->light_job = lane_job_ns(0);
	res->heavy_job = lane_job_ns(1);
	run_stop(&r);
	if (err)
		return -1;
	res->share3 = sum[1] / (sum[0] + sum[1]);
	res->error = fmax(fabs((1 - res->share3) / 0.25 - 1), fabs(res->share3 / 0.75 - 1));
	return 0;
}

/*
 * Tenant A (process 0) floods through lane 0 alone, or through lanes 0..7,
 * against tenant B (process 1, lane 8), both per-file tenants of equal
 * weight, jobs of SPLIT_US; A's share of device time each way, over
 * o->rounds windows of each, interleaved.
 */
static int split(const struct opts *o, double *one, double *eight, double *job)
{
	struct setup s = { .kernel = 1, .ntenants = 2, .nstreams = 9 };
	double a[2] = { 0, 0 }, b[2] = { 0, 0 };
	struct run r;
	int err;

	for (int i = 0; i < 9; i++)
		s.st[i] = (struct stream_spec){ i == 8, ACCEL_QUEUE_PRIORITY_NORMAL, 1, SPLIT_US };
	err = run_start(&r, &s);
	for (int k = 0; !err && k < 2 * o->rounds; k++) {
		double busy[9];

		err = window(&r, k & 1 ? 0x1ff : 0x101, busy);
		for (int i = 0; i < 8; i++)
			a[k & 1] += busy[i];
		b[k & 1] += busy[8];
	}
	*job = lane_job_ns(8);
	run_stop(&r);
	if (err)
		return -1;
	*one = a[0] / (a[0] + b[0]);
	*eight = a[1] / (a[1] + b[1]);
	return 0;
}

/* ---- the benchmarks ------------------------------------------------------- */

static int shared_map(void)
{
	if (sh)
		return 0;
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED) {
		sh = NULL;
		return -1;
	}
	calibrate();
	return 0;
}

static void print_high(const char *sched, const struct high_result *h)
{
	fprintf(notes, "# tenant: %s: a HIGH job (%.0f us of work) every %d us, while two "
	       "LOW tenants flood jobs of %.0f us or not, in phases of %d jobs "
	       "interleaved: submit -> signal p99 over %d samples of each %.0f us "
	       "idle, %.0f us loaded (%.2f); the figure is the median of %d blocks' "
	       "ratios\n", sched, h->high_job / 1e3, HIGH_PERIOD_US,
	       h->batch_job / 1e3, HIGH_PHASE, h->samples, h->idle_p99 / 1e3,
	       h->loaded_p99 / 1e3, h->loaded_p99 / h->idle_p99, HIGH_BLOCKS);
	fprintf(notes, "# tenant: %s: a released job is not preempted: a HIGH job waits for "
	       "the batch job in flight, so the ratio's floor is about %.2f\n",
	       sched, (h->high_job + h->batch_job) / h->high_job);
}

static void print_share(const char *sched, const char *who,
			const struct share_result *s)
{
	fprintf(notes, "# tenant: %s: %s of weights 1:3, jobs of %.0f and %.0f us: the "
	       "weight-3 share of device time %.4f (target 0.75)\n",
	       sched, who, s->light_job / 1e3, s->heavy_job / 1e3, s->share3);
}

/* The embedded measurements with ACCEL_ENGINE_CREDITS=1 (read as an engine is made). */
static int one_credit_embedded(const struct opts *o, struct high_result *h,
			       struct share_result *s)
{
	const char *env = getenv("ACCEL_ENGINE_CREDITS");
	char *old = env ? strdup(env) : NULL;
	int err;

	setenv("ACCEL_ENGINE_CREDITS", "1", 1);
	err = high_p99(o, 0, h) || share(o, SHARE_EMBEDDED, s);
	if (old)
		setenv("ACCEL_ENGINE_CREDITS", old, 1);
	else
		unsetenv("ACCEL_ENGINE_CREDITS");
	free(old);
	return err;
}

int bench_tenant(const struct opts *o)
{
	struct high_result h;
	struct share_result s;
	int first = 1;

	if (shared_map() || one_credit_embedded(o, &h, &s))
		return 1;
	if (o->json) {
		printf("{\"bench\": \"tenant\", \"scheduler\": \"embedded\", \"credits\": 1, "
		       "\"high_job_ns\": %.0f, \"high_period_ns\": %d, \"batch_job_ns\": %.0f, "
		       "\"samples\": %d, \"blocks\": %d, \"high_p99_idle_ns\": %.0f, \"high_p99_loaded_ns\": %.0f, "
		       "\"share_weights\": [1, 3], \"share_job_ns\": [%.0f, %.0f], "
		       "\"share_of_weight_3\": %.4f, \"metrics\": {",
		       h.high_job, HIGH_PERIOD_US * 1000, h.batch_job, h.samples, HIGH_BLOCKS,
		       h.idle_p99, h.loaded_p99, s.light_job, s.heavy_job, s.share3);
	} else {
		fprintf(notes, "# tenant: embedded scheduler, threads of one process, "
		       "ACCEL_ENGINE_CREDITS=1: one device, whose jobs never share a CPU\n");
		print_high("embedded", &h);
		print_share("embedded", "queues", &s);
	}
	metric(o, "tenant.high_p99_loaded_vs_idle.embedded", h.ratio, &first);
	metric(o, "tenant.share_error.embedded", s.error, &first);
	if (o->json)
		printf("}}\n");
	return 0;
}

int bench_ktenant(const struct opts *o)
{
	struct high_result h;
	struct share_result s;
	double one, eight, job;
	int first = 1, cg = cgroup2_ready();

	if (shared_map() || high_p99(o, 1, &h) ||
	    share(o, cg ? SHARE_ONE_FILE : SHARE_CGROUPS, &s) || split(o, &one, &eight, &job))
		return 1;
	if (o->json) {
		printf("{\"bench\": \"ktenant\", \"scheduler\": \"kernel\", \"credits\": 1, "
		       "\"high_job_ns\": %.0f, \"high_period_ns\": %d, \"batch_job_ns\": %.0f, "
		       "\"samples\": %d, \"blocks\": %d, \"high_p99_idle_ns\": %.0f, \"high_p99_loaded_ns\": %.0f, "
		       "\"share_tenants\": \"%s\", \"share_job_ns\": [%.0f, %.0f], "
		       "\"share_of_weight_3\": %.4f, \"split_job_ns\": %.0f, "
		       "\"split_share_1_queue\": %.4f, \"split_share_8_queues\": %.4f, "
		       "\"metrics\": {",
		       h.high_job, HIGH_PERIOD_US * 1000, h.batch_job, h.samples, HIGH_BLOCKS,
		       h.idle_p99, h.loaded_p99, cg ? "queues of one file" : "cgroups",
		       s.light_job, s.heavy_job, s.share3, job, one, eight);
	} else {
		fprintf(notes, "# tenant: the module, a process per tenant, engine " ENGINE
		       " at one credit (sysfs): one device, whose jobs never share a CPU\n");
		print_high("kernel", &h);
		if (cg)
			fprintf(notes, "# tenant: kernel: no cgroup2 (%s), so no tenant weights: "
			       "the share below is of one file's queues\n", strerror(-cg));
		print_share("kernel", cg ? "queues" : "cgroups", &s);
		fprintf(notes, "# tenant: kernel: per-file tenant A against an equal B, jobs of "
		       "%.0f us: A's share %.4f with 1 queue, %.4f with 8\n",
		       job / 1e3, one, eight);
	}
	metric(o, "tenant.high_p99_loaded_vs_idle.kernel", h.ratio, &first);
	metric(o, "tenant.share_error", s.error, &first);
	metric(o, "tenant.split_gain", eight / one, &first);
	if (o->json)
		printf("}}\n");
	return 0;
}
