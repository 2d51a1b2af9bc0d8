// SPDX-License-Identifier: MIT
/*
 * tenants: three tenants share one cpu device, and the scheduler keeps
 * them apart.
 *
 *	latency  HIGH, a 200 us job every 4 ms, each waited for
 *	batch1   LOW, weight 1, 1 ms jobs, 4 always submitted
 *	batch2   LOW, weight 3, 250 us jobs, 4 always submitted
 *
 *	tenants [--seconds N] [--threads | --processes]
 *
 * It prints each tenant's p50 and p99 latency and its share of the device
 * time. HIGH goes before any LOW job (strict priority between classes);
 * the batch tenants split the rest by their weights, 1:3, in device time
 * rather than in jobs: batch2's jobs are 4 times smaller, so it runs about
 * 12 times as many.
 *
 * Two ways to run:
 *
 * - threads (the default on the embedded scheduler; --threads): one
 *   process, a thread per tenant, each with its own queue on one shared
 *   device. A process is one tenant of the scheduler and its queues share
 *   by queue weight, so the weights 1:3 are queue weights.
 * - processes (the default on the kernel scheduler; --processes): a process
 *   per tenant, each with its own device, so each opens /dev/accelsched and
 *   is a tenant of the module. Tenants' weights are the administrator's: as
 *   root with cgroup2, the example puts each process in a cgroup of its own
 *   before it opens the device and writes the batch tenants' weights in
 *   sysfs, printing what it did; otherwise the weights stay equal and it
 *   says why. Results come back to the parent through a pipe.
 *
 * The device runs one job at a time, as one accelerator would: the
 * engine's credit limit is 1 (ACCEL_ENGINE_CREDITS=1 on the embedded
 * scheduler unless it is set; on the module, as root, written in sysfs and
 * restored at the end). With the embedded default of 4, four jobs would
 * share the CPUs of a small machine and their times would say more about
 * the CPUs than about the arbiter. A released job is not preempted: a HIGH
 * job that comes while a 1 ms batch job runs waits for its end.
 *
 * What is measured:
 *
 * - a job is one workgroup of a kernel linked into this program (spin())
 *   that keeps the device for the job's time and writes when it started
 *   and ended (CLOCK_MONOTONIC) into a record that the submission binds
 *   to slot 0 of its binding table;
 * - latency: from accel_queue_execute() to the return of the submitting
 *   thread's accel_semaphore_wait() for the job's point, what the
 *   application sees, the signal and the wake-up included. A batch job's
 *   includes its own tenant's backlog (the 3 jobs submitted before it);
 * - device time: the sum of the tenant's jobs' run intervals (the
 *   records), clipped to the window while both batch tenants are
 *   backlogged, from WARMUP_MS after the start to the end of the run. Its
 *   share is of the device time all tenants used in the window.
 *
 * The numbers depend on the machine and are not judged; the program fails
 * (exit 1) when a job fails or a tenant got no device time at all.
 *
 * Build: cc tenants.c $(pkg-config --cflags --libs libaccel) -lpthread
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <linux/magic.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <accel/accel.h>
#include <accel/cpu_executable.h>

#define NTENANTS 3
#define DEPTH 4           /* jobs a batch tenant keeps submitted */
#define RING 16           /* run records per tenant; more than DEPTH */
#define START_MS 100      /* from setting up to the common start */
#define WARMUP_MS 250     /* from the start to the window */
#define WAIT_NS 10000000000LL /* a job not done in 10 s has failed */
#define MS 1000000LL

/* One worker: a job is one workgroup. The module names its engine "cpu". */
#define DEVICE "cpu://?threads=1"
#define SYSFS "/sys/kernel/accelsched"
#define CREDITS SYSFS "/engines/cpu/credits"
#define CGROOT "/sys/fs/cgroup"
#define CGDIR CGROOT "/accel-tenants"

struct spec {
	const char *name;
	uint32_t priority;
	uint32_t queue_weight;  /* threads: its queue's share in the process */
	uint32_t tenant_weight; /* processes: its cgroup's, 0: left at 100 */
	uint32_t job_us;
	uint32_t period_us;     /* a job each period, waited for; 0: backlogged */
};

static const struct spec specs[NTENANTS] = {
	{ "latency", ACCEL_QUEUE_PRIORITY_HIGH, 1, 0, 200, 4000 },
	{ "batch1", ACCEL_QUEUE_PRIORITY_LOW, 1, 100, 1000, 0 },
	{ "batch2", ACCEL_QUEUE_PRIORITY_LOW, 3, 300, 250, 0 },
};

/* What a tenant found; a processes-mode child sends it up a pipe. */
struct report {
	int32_t err;       /* the tenant failed (it said why on stderr) */
	uint32_t priority; /* the class it got */
	uint64_t jobs;     /* jobs submitted in the window */
	int64_t p50, p99;  /* their latencies, ns */
	int64_t busy;      /* device time in the window, ns */
	char note[512];    /* why HIGH became NORMAL; "" if it did not */
};

/* A job's run on the device, written by spin(). */
struct record {
	int64_t t0, t1;
};

struct tenant {
	const struct spec *spec;
	accel_queue_t *queue;
	accel_semaphore_t *sem;
	accel_command_buffer_t *cb;
	accel_buffer_t *records;
	struct record *rec;         /* RING records, mapped */
	uint64_t submitted, done;   /* points of @sem */
	int64_t submit_ns[RING];    /* by point % RING, as @rec */
	int64_t start, w0, end;     /* the run [start, end), window [w0, end) */
	int64_t *lat;               /* latencies of the window's jobs */
	size_t cap;
	pthread_t thread;
	struct report r;
};

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void sleep_until(int64_t t)
{
	struct timespec ts = { t / 1000000000LL, t % 1000000000LL };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static int check(int err, const char *who, const char *what)
{
	if (err)
		fprintf(stderr, "tenants: %s: %s: %s\n", who, what, accel_error_message());
	return err;
}

static const char *class_name(uint32_t priority)
{
	return priority == ACCEL_QUEUE_PRIORITY_HIGH ? "HIGH" :
	       priority == ACCEL_QUEUE_PRIORITY_LOW ? "LOW" : "NORMAL";
}

/* ---- the job ------------------------------------------------------------ */

/* Keeps the device constants[0] us, then says when it ran. */
static void spin(const struct accel_cpu_dispatch *d)
{
	struct record *r = d->bindings[0];
	int64_t t0 = now_ns(), t, end = t0 + (int64_t)d->constants[0] * 1000;

	while ((t = now_ns()) < end)
		;
	r->t0 = t0;
	r->t1 = t;
}

static const struct accel_cpu_entry spin_entries[] = {
	{ "spin", 1, 1, { 1, 1, 1 }, spin },
};

static const struct accel_cpu_executable spin_table = {
	ACCEL_CPU_EXECUTABLE_ABI_VERSION, 1, spin_entries, NULL,
};

/* ---- a tenant ------------------------------------------------------------ */

/* Its queue; HIGH refused (the module wants CAP_SYS_NICE) becomes NORMAL. */
static int queue_open(struct tenant *t, accel_device_t *dev)
{
	accel_queue_options_t o = ACCEL_QUEUE_OPTIONS_INIT;
	int err;

	o.priority = t->spec->priority;
	o.weight = t->spec->queue_weight;
	err = accel_queue_create_with_options(dev, &o, &t->queue);
	if (err == -EACCES && o.priority == ACCEL_QUEUE_PRIORITY_HIGH) {
		snprintf(t->r.note, sizeof(t->r.note), "%s", accel_error_message());
		o.priority = ACCEL_QUEUE_PRIORITY_NORMAL;
		err = accel_queue_create_with_options(dev, &o, &t->queue);
	}
	t->r.priority = o.priority;
	return check(err, t->spec->name, "creating its queue");
}

/* One job, recorded once: each submission binds its own record to slot 0. */
static int record_job(struct tenant *t, accel_device_t *dev, accel_executable_t *exe)
{
	accel_buffer_ref_t ref = accel_buffer_ref_indirect(0, 0, sizeof(struct record));
	uint32_t wg[3] = { 1, 1, 1 }, us = t->spec->job_us;
	int err = accel_command_buffer_create(dev, ACCEL_COMMAND_BUFFER_REUSABLE, 1, &t->cb);

	err = err ? err : accel_command_buffer_begin(t->cb);
	err = err ? err : accel_command_buffer_dispatch(t->cb, exe, 0, wg, &us, 1, &ref, 1);
	err = err ? err : accel_command_buffer_end(t->cb);
	return check(err, t->spec->name, "recording its job");
}

static int tenant_open(struct tenant *t, accel_device_t *dev, accel_executable_t *exe)
{
	accel_buffer_params_t p = {
		ACCEL_MEMORY_TYPE_HOST_LOCAL | ACCEL_MEMORY_TYPE_HOST_VISIBLE |
		ACCEL_MEMORY_TYPE_HOST_COHERENT,
		ACCEL_BUFFER_USAGE_DISPATCH_STORAGE | ACCEL_BUFFER_USAGE_MAPPING,
	};
	void *ptr = NULL;
	int err = queue_open(t, dev);

	if (!err)
		err = check(accel_semaphore_create(accel_device_scheduler(dev), 0, &t->sem),
			    t->spec->name, "creating its semaphore");
	if (!err)
		err = check(accel_allocator_allocate_buffer(accel_device_allocator(dev), &p,
							    RING * sizeof(struct record), &t->records),
			    t->spec->name, "allocating its records");
	if (!err)
		err = check(accel_buffer_map(t->records, ACCEL_MAP_READ, 0, ACCEL_WHOLE_BUFFER, &ptr),
			    t->spec->name, "mapping its records");
	t->rec = ptr;
	return err ? err : record_job(t, dev, exe);
}

static void tenant_close(struct tenant *t)
{
	if (t->rec)
		accel_buffer_unmap(t->records);
	accel_buffer_release(t->records);
	accel_command_buffer_release(t->cb);
	accel_semaphore_release(t->sem);
	accel_queue_release(t->queue);
	free(t->lat);
}

static int submit(struct tenant *t)
{
	uint64_t v = t->submitted + 1;
	accel_binding_t b = { t->records, v % RING * sizeof(struct record), sizeof(struct record) };
	accel_binding_table_t table = { 1, &b };
	accel_semaphore_list_t signals = { 1, &t->sem, &v };

	t->submit_ns[v % RING] = now_ns();
	if (check(accel_queue_execute(t->queue, NULL, &signals, t->cb, &table, 0),
		  t->spec->name, "submitting a job"))
		return -1;
	t->submitted = v;
	return 0;
}

static int64_t overlap(const struct record *r, int64_t a, int64_t b)
{
	int64_t lo = r->t0 > a ? r->t0 : a, hi = r->t1 < b ? r->t1 : b;

	return hi > lo ? hi - lo : 0;
}

/* Waits for the oldest job in flight and counts it. */
static int complete(struct tenant *t)
{
	uint64_t v = t->done + 1;
	int err = accel_semaphore_wait(t->sem, v, 0, accel_deadline_after(WAIT_NS));
	int64_t lat = now_ns() - t->submit_ns[v % RING];

	if (check(err, t->spec->name, "waiting for a job"))
		return -1;
	t->done = v;
	t->r.busy += overlap(&t->rec[v % RING], t->w0, t->end);
	if (t->submit_ns[v % RING] < t->w0 || t->submit_ns[v % RING] >= t->end)
		return 0;
	if (t->r.jobs == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 1024;
		int64_t *lats = realloc(t->lat, cap * sizeof(*lats));

		if (!lats) {
			fprintf(stderr, "tenants: %s: out of memory\n", t->spec->name);
			return -1;
		}
		t->lat = lats;
		t->cap = cap;
	}
	t->lat[t->r.jobs++] = lat;
	return 0;
}

/* The latency tenant: a job each period, waited for. */
static int run_periodic(struct tenant *t)
{
	int64_t next = t->start;

	while (next < t->end) {
		sleep_until(next);
		if (submit(t) || complete(t))
			return -1;
		next += (int64_t)t->spec->period_us * 1000;
	}
	return 0;
}

/* A batch tenant: DEPTH jobs submitted until the end, then drained. */
static int run_backlogged(struct tenant *t)
{
	sleep_until(t->start);
	while (now_ns() < t->end) {
		while (t->submitted - t->done < DEPTH)
			if (submit(t))
				return -1;
		if (complete(t))
			return -1;
	}
	while (t->done < t->submitted)
		if (complete(t))
			return -1;
	return 0;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* The nearest-rank percentile @q of the sorted @v. */
static int64_t percentile(const int64_t *v, size_t n, double q)
{
	size_t k = (size_t)(q * (double)n + 0.999999);

	return n ? v[k ? k - 1 : 0] : 0;
}

static void *tenant_main(void *arg)
{
	struct tenant *t = arg;

	t->r.err = t->spec->period_us ? run_periodic(t) : run_backlogged(t);
	qsort(t->lat, t->r.jobs, sizeof(*t->lat), cmp_i64);
	t->r.p50 = percentile(t->lat, t->r.jobs, 0.50);
	t->r.p99 = percentile(t->lat, t->r.jobs, 0.99);
	return NULL;
}

static void tenant_times(struct tenant *t, int64_t start, int seconds)
{
	t->start = start;
	t->w0 = start + WARMUP_MS * MS;
	t->end = start + seconds * 1000 * MS;
}

/* ---- what every mode prints ---------------------------------------------- */

static void print_plan(void)
{
	for (int i = 0; i < NTENANTS; i++) {
		const struct spec *s = &specs[i];

		if (s->period_us)
			printf("  %-8s %-4s  a %u us job every %u ms, each waited for\n",
			       s->name, class_name(s->priority), s->job_us, s->period_us / 1000);
		else
			printf("  %-8s %-4s  %u us jobs, %d always submitted\n",
			       s->name, class_name(s->priority), s->job_us, DEPTH);
	}
}

/*
 * The table, from each tenant's report and the weights in effect
 * (queue weights, or tenant weights); 0, or 1 when a tenant failed or got
 * no device time.
 */
static int print_table(const struct report *r, const uint32_t *weight, int seconds)
{
	int64_t total = 0, batch = r[1].busy + r[2].busy;
	double window = seconds * 1e3 - WARMUP_MS;
	int bad = 0;

	for (int i = 0; i < NTENANTS; i++)
		total += r[i].busy;
	printf("\n%-8s  %-6s  %6s  %5s  %7s  %7s  %11s  %s\n", "tenant", "class", "weight",
	       "jobs", "p50 ms", "p99 ms", "device time", "of batch (target)");
	for (int i = 0; i < NTENANTS; i++) {
		printf("%-8s  %-6s  %6u  %5" PRIu64 "  %7.2f  %7.2f  %10.1f%%", specs[i].name,
		       class_name(r[i].priority), weight[i], r[i].jobs, r[i].p50 / 1e6,
		       r[i].p99 / 1e6, total ? 100.0 * r[i].busy / total : 0);
		if (i)
			printf("  %5.1f%% (%.0f%%)", batch ? 100.0 * r[i].busy / batch : 0,
			       100.0 * weight[i] / (weight[1] + weight[2]));
		printf("\n");
		if (r[i].err) {
			fprintf(stderr, "tenants: %s failed (see above)\n", specs[i].name);
			bad = 1;
		} else if (!r[i].busy) {
			fprintf(stderr, "tenants: %s got no device time in the window\n", specs[i].name);
			bad = 1;
		}
	}
	printf("window: %.2f..%d s, both batch tenants backlogged; jobs ran %.1f%% of it\n",
	       WARMUP_MS / 1e3, seconds, total / window / 1e4);
	printf("jobs: submitted in the window; latency: submit to signal, as the submitter sees it\n");
	printf("tenants: %s\n", bad ? "FAILED" : "ok");
	return bad;
}

/* ---- the administrator's part: sysfs and cgroups ------------------------- */

static int write_file(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), err = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, val, strlen(val)) < 0)
		err = -errno;
	close(fd);
	return err;
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

struct admin {
	bool made;                    /* made CGDIR: remove it at the end */
	bool cgroups;                 /* the tenants are in their cgroups */
	bool mounted;                 /* mounted cgroup2 at CGROOT */
	char cg[NTENANTS][64];        /* the tenants' cgroups */
	uint64_t id[NTENANTS];        /* their ids (the module's tenant ids) */
	uint32_t weight[NTENANTS];    /* the tenant weights in effect */
	char old_credits[16];         /* the engine's limit to restore */
};

/*
 * cgroup2 at CGROOT, mounted if nothing is mounted there (never over
 * another hierarchy); NULL, or why not.
 */
static const char *cgroup2_ready(struct admin *a)
{
	static char why[160];
	struct statfs sf;
	struct stat mnt, up;

	if (!statfs(CGROOT, &sf) && sf.f_type == CGROUP2_SUPER_MAGIC)
		return NULL;
	if (stat(CGROOT, &mnt) || stat(CGROOT "/..", &up)) {
		snprintf(why, sizeof(why), "no %s: %s", CGROOT, strerror(errno));
		return why;
	}
	if (mnt.st_dev != up.st_dev)
		return "another cgroup hierarchy (v1) is mounted at " CGROOT;
	if (mount("none", CGROOT, "cgroup2", 0, NULL)) {
		snprintf(why, sizeof(why), "mounting cgroup2 at %s: %s", CGROOT, strerror(errno));
		return why;
	}
	a->mounted = true;
	printf("  mount -t cgroup2 none %s\n", CGROOT);
	return NULL;
}

/* A cgroup per tenant under CGDIR; NULL, or why not. */
static const char *cgroups_make(struct admin *a)
{
	static char why[160];
	const char *no = geteuid() ? "not root" : cgroup2_ready(a);
	struct stat st;

	if (no)
		return no;
	if (mkdir(CGDIR, 0755) && errno != EEXIST) {
		snprintf(why, sizeof(why), "mkdir %s: %s", CGDIR, strerror(errno));
		return why;
	}
	a->made = true;
	for (int i = 0; i < NTENANTS; i++) {
		snprintf(a->cg[i], sizeof(a->cg[i]), CGDIR "/%s", specs[i].name);
		if ((mkdir(a->cg[i], 0755) && errno != EEXIST) || stat(a->cg[i], &st)) {
			snprintf(why, sizeof(why), "mkdir %s: %s", a->cg[i], strerror(errno));
			return why;
		}
		a->id[i] = st.st_ino; /* the cgroup's id */
	}
	a->cgroups = true;
	printf("  mkdir %s %s/{latency,batch1,batch2}\n", CGDIR, CGDIR);
	return NULL;
}

/*
 * Moves process @pid into tenant @i's cgroup, before it opens the device;
 * if it cannot, the weights stay equal.
 */
static void cgroup_enter(struct admin *a, int i, pid_t pid)
{
	char path[96], val[24];
	int err;

	if (!a->cgroups)
		return;
	snprintf(path, sizeof(path), "%s/cgroup.procs", a->cg[i]);
	snprintf(val, sizeof(val), "%d", (int)pid);
	err = write_file(path, val);
	if (!err) {
		printf("  echo %s > %s\n", val, path);
		return;
	}
	printf("  (writing %s to %s: %s; the tenant weights stay equal, 100)\n", val, path,
	       strerror(-err));
	a->cgroups = false;
}

/* A reaped child may leave its cgroup busy for a moment. */
static void rmdir_retry(const char *dir)
{
	for (int k = 0; k < 100 && dir[0] && rmdir(dir) && errno == EBUSY; k++)
		usleep(10000);
}

static void cgroups_remove(struct admin *a)
{
	for (int i = 0; i < NTENANTS && a->made; i++)
		rmdir_retry(a->cg[i]);
	if (a->made)
		rmdir_retry(CGDIR);
	if (a->mounted && umount(CGROOT))
		fprintf(stderr, "tenants: umount %s: %s\n", CGROOT, strerror(errno));
}

/*
 * The batch tenants' weights, once their processes opened the device (the
 * tenant's directory appears then).
 */
static void weights_write(struct admin *a)
{
	for (int i = 0; i < NTENANTS && a->cgroups; i++) {
		char path[96], val[16];
		int err = -ENOENT;

		if (!specs[i].tenant_weight)
			continue;
		snprintf(path, sizeof(path), SYSFS "/tenants/%" PRIu64 "/weight", a->id[i]);
		snprintf(val, sizeof(val), "%u", specs[i].tenant_weight);
		for (int k = 0; k < 200 && err == -ENOENT; k++) {
			err = write_file(path, val);
			if (err == -ENOENT)
				usleep(10000);
		}
		if (err) {
			printf("  (writing %s to %s: %s: %s's weight stays %u)\n", val, path,
			       strerror(-err), specs[i].name, a->weight[i]);
			continue;
		}
		printf("  echo %s > %s   # %s\n", val, path, specs[i].name);
		a->weight[i] = specs[i].tenant_weight;
	}
}

/* One credit on the module's engine "cpu", as root; else says what it is. */
static void credits_write(struct admin *a)
{
	char cur[16];
	int err = read_file(CREDITS, cur, sizeof(cur));

	if (err) {
		printf("  (%s: %s: the engine's credit limit is unknown)\n", CREDITS, strerror(-err));
		return;
	}
	if (!strcmp(cur, "1")) {
		printf("  (%s is 1 already)\n", CREDITS);
		return;
	}
	err = geteuid() ? -EPERM : write_file(CREDITS, "1");
	if (err) {
		printf("  (the engine's credit limit stays %s, the administrator's: writing %s: %s)\n",
		       cur, CREDITS, strerror(-err));
		printf("  (%s jobs run at once and share the CPUs: the shares say more about the CPUs than about the arbiter)\n",
		       cur);
		return;
	}
	memcpy(a->old_credits, cur, sizeof(cur));
	printf("  echo 1 > %s   # was %s, restored at the end\n", CREDITS, cur);
}

static void credits_restore(struct admin *a)
{
	int err = a->old_credits[0] ? write_file(CREDITS, a->old_credits) : 0;

	if (err)
		fprintf(stderr, "tenants: restoring %s to %s: %s\n", CREDITS, a->old_credits,
			strerror(-err));
}

/* ---- threads: one process, one device, a queue per tenant ---------------- */

static void print_notes(const struct report *r)
{
	for (int i = 0; i < NTENANTS; i++)
		if (r[i].note[0])
			printf("tenants: %s: %s\ntenants: %s runs as NORMAL instead (still before LOW)\n",
			       specs[i].name, r[i].note, specs[i].name);
}

/* The embedded engine's limit: ACCEL_ENGINE_CREDITS, set to 1 unless given. */
static void credits_env(void)
{
	const char *env = getenv("ACCEL_ENGINE_CREDITS");

	if (env) {
		printf("tenants: engine credits: ACCEL_ENGINE_CREDITS=%s (yours%s)\n", env,
		       strcmp(env, "1") ? "; with more than 1, jobs share the CPUs and the shares say less about the arbiter" : "");
		return;
	}
	setenv("ACCEL_ENGINE_CREDITS", "1", 1);
	printf("tenants: engine credits: ACCEL_ENGINE_CREDITS=1 for this run (one job on the device at a time; the default is 4)\n");
}

static int threads_setup(accel_scheduler_t *s, struct tenant *t, accel_device_t **dev,
			 accel_executable_t **exe)
{
	int err = check(accel_device_open(DEVICE, s, dev), "tenants", "opening " DEVICE);

	if (!err)
		err = check(accel_cpu_executable_create(*dev, &spin_table, exe), "tenants",
			    "creating the executable");
	for (int i = 0; i < NTENANTS && !err; i++) {
		t[i].spec = &specs[i];
		err = tenant_open(&t[i], *dev, *exe);
	}
	return err;
}

static int run_threads(accel_scheduler_t *s, int seconds)
{
	struct tenant t[NTENANTS] = { 0 };
	struct report r[NTENANTS];
	uint32_t weight[NTENANTS];
	accel_device_t *dev = NULL;
	accel_executable_t *exe = NULL;
	struct admin a = { 0 };
	bool kernel = accel_scheduler_kind(s) == ACCEL_SCHEDULER_KERNEL;
	int err, started = 0;
	int64_t start;

	printf("tenants: as threads of one process, a queue each: the scheduler sees one tenant, whose queues share by queue weight\n");
	if (!kernel)
		credits_env();
	err = threads_setup(s, t, &dev, &exe);
	if (!err && kernel) {
		printf("tenants: as the administrator would:\n");
		credits_write(&a); /* the queues made the engine */
	}
	if (!err) {
		for (int i = 0; i < NTENANTS; i++)
			r[i] = t[i].r;
		print_plan();
		print_notes(r);
	}
	start = now_ns() + START_MS * MS;
	for (int i = 0; i < NTENANTS && !err; i++) {
		tenant_times(&t[i], start, seconds);
		err = pthread_create(&t[i].thread, NULL, tenant_main, &t[i]);
		if (err)
			fprintf(stderr, "tenants: pthread_create: %s\n", strerror(err));
		started += !err;
	}
	for (int i = 0; i < started; i++)
		pthread_join(t[i].thread, NULL);
	credits_restore(&a);
	for (int i = 0; i < NTENANTS; i++) {
		r[i] = t[i].r;
		weight[i] = specs[i].queue_weight;
		tenant_close(&t[i]);
	}
	accel_executable_release(exe);
	accel_device_release(dev);
	return err ? 1 : print_table(r, weight, seconds);
}

/* ---- processes: a process per tenant, each a tenant of the module -------- */

struct child {
	pid_t pid;
	int ctl[2];   /* parent -> child: 'o' (open the device), then the times */
	int res[2];   /* child -> parent: its report when set up, then at the end */
};

static int read_full(int fd, void *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(fd, (char *)buf + got, len - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		got += (size_t)n;
	}
	return 0;
}

/* A tenant process: its own scheduler (its file), device and queue. */
static int child_main(int i, int ctl, int res, int seconds)
{
	accel_scheduler_options_t so;
	accel_scheduler_t *s = NULL;
	accel_device_t *dev = NULL;
	accel_executable_t *exe = NULL;
	struct tenant t = { .spec = &specs[i] };
	int64_t start;
	char go;
	int err;

	if (read_full(ctl, &go, 1)) /* the parent gave up */
		return 1;
	accel_scheduler_options_init(&so);
	so.kind = ACCEL_SCHEDULER_KERNEL;
	err = check(accel_scheduler_open(&so, &s), specs[i].name, "opening the kernel scheduler");
	if (!err)
		err = check(accel_device_open(DEVICE, s, &dev), specs[i].name, "opening " DEVICE);
	if (!err)
		err = check(accel_cpu_executable_create(dev, &spin_table, &exe), specs[i].name,
			    "creating the executable");
	err = err ? err : tenant_open(&t, dev, exe);
	t.r.err = err;
	if (write(res, &t.r, sizeof(t.r)) == sizeof(t.r) && !err &&
	    !read_full(ctl, &start, sizeof(start))) {
		tenant_times(&t, start, seconds);
		tenant_main(&t);
		err = write(res, &t.r, sizeof(t.r)) == sizeof(t.r) ? t.r.err : 1;
	}
	tenant_close(&t);
	accel_executable_release(exe);
	accel_device_release(dev);
	accel_scheduler_release(s);
	return err ? 1 : 0;
}

static void pipes_close(struct child *c, int keep)
{
	for (int i = 0; i < NTENANTS; i++)
		for (int e = 0; e < 2; e++) {
			if (c[i].ctl[e] >= 0 && !(i == keep && e == 0))
				close(c[i].ctl[e]);
			if (c[i].res[e] >= 0 && !(i == keep && e == 1))
				close(c[i].res[e]);
		}
}

static int spawn(struct child *c, int seconds)
{
	for (int i = 0; i < NTENANTS; i++)
		if (pipe(c[i].ctl) || pipe(c[i].res)) {
			fprintf(stderr, "tenants: pipe: %s\n", strerror(errno));
			return -1;
		}
	fflush(stdout);
	for (int i = 0; i < NTENANTS; i++) {
		c[i].pid = fork();
		if (c[i].pid < 0) {
			fprintf(stderr, "tenants: fork: %s\n", strerror(errno));
			return -1;
		}
		if (!c[i].pid) {
			pipes_close(c, i);
			exit(child_main(i, c[i].ctl[0], c[i].res[1], seconds));
		}
	}
	for (int i = 0; i < NTENANTS; i++) { /* the children's ends */
		close(c[i].ctl[0]);
		close(c[i].res[1]);
		c[i].ctl[0] = c[i].res[1] = -1;
	}
	return 0;
}

/* Each child in its cgroup, then set up; their first reports in @r. */
static int children_open(struct child *c, struct admin *a, struct report *r)
{
	for (int i = 0; i < NTENANTS; i++) {
		cgroup_enter(a, i, c[i].pid);
		if (write(c[i].ctl[1], "o", 1) != 1 || read_full(c[i].res[0], &r[i], sizeof(r[i])) ||
		    r[i].err) {
			fprintf(stderr, "tenants: %s could not set up\n", specs[i].name);
			return -1;
		}
	}
	return 0;
}

static int children_run(struct child *c, struct report *r)
{
	int64_t start = now_ns() + START_MS * MS;
	int err = 0;

	for (int i = 0; i < NTENANTS; i++)
		if (write(c[i].ctl[1], &start, sizeof(start)) != sizeof(start))
			err = -1;
	for (int i = 0; i < NTENANTS; i++)
		if (read_full(c[i].res[0], &r[i], sizeof(r[i]))) {
			fprintf(stderr, "tenants: %s ended without a report\n", specs[i].name);
			err = -1;
		}
	return err;
}

/* Closing the pipes tells children still waiting to leave; then reaps. */
static int children_reap(struct child *c)
{
	int err = 0, status;

	pipes_close(c, -1);
	for (int i = 0; i < NTENANTS; i++)
		if (c[i].pid > 0 && (waitpid(c[i].pid, &status, 0) != c[i].pid ||
				     !WIFEXITED(status) || WEXITSTATUS(status)))
			err = -1;
	return err;
}

static int run_processes(int seconds)
{
	struct child c[NTENANTS];
	struct report r[NTENANTS] = { 0 };
	struct admin a = { .weight = { 100, 100, 100 } };
	const char *no;
	int err, reaped;

	memset(c, -1, sizeof(c));
	signal(SIGPIPE, SIG_IGN); /* a child that died is an EPIPE, not our end */
	printf("tenants: as %d processes, each with its own /dev/accelsched file: each a tenant of the module\n",
	       NTENANTS);
	printf("tenants: as the administrator would:\n");
	no = cgroups_make(&a);
	if (no)
		printf("  (no cgroups: %s; each process is a tenant of its own in the root cgroup, and the tenant weights stay equal, 100)\n",
		       no);
	err = spawn(c, seconds);
	err = err ? err : children_open(c, &a, r);
	if (!err) {
		weights_write(&a);
		credits_write(&a);
		print_plan();
		print_notes(r);
		fflush(stdout);
		err = children_run(c, r);
	}
	reaped = children_reap(c);
	credits_restore(&a);
	cgroups_remove(&a);
	if (err)
		return 1;
	return print_table(r, a.weight, seconds) || reaped ? 1 : 0;
}

/* ---- main ------------------------------------------------------------------ */

static int usage(FILE *f)
{
	fprintf(f, "usage: tenants [--seconds N] [--threads | --processes]\n"
		"  --seconds N   run N seconds (1..60; 3 by default)\n"
		"  --threads     tenants as threads of one process (the default on the embedded scheduler)\n"
		"  --processes   a process per tenant, on the kernel scheduler (the default there)\n");
	return f == stdout ? 0 : 2;
}

int main(int argc, char **argv)
{
	static const struct option longs[] = {
		{ "seconds", required_argument, NULL, 's' },
		{ "threads", no_argument, NULL, 't' },
		{ "processes", no_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	accel_scheduler_options_t so;
	accel_scheduler_t *s;
	int seconds = 3, mode = 0, opt, err;
	char *end;

	while ((opt = getopt_long(argc, argv, "", longs, NULL)) != -1) {
		if (opt == 's') {
			seconds = (int)strtol(optarg, &end, 10);
			if (*end || seconds < 1 || seconds > 60)
				return usage(stderr);
		} else if ((opt == 't' || opt == 'p') && (!mode || mode == opt)) {
			mode = opt;
		} else {
			return usage(opt == 'h' ? stdout : stderr);
		}
	}
	if (optind < argc)
		return usage(stderr);
	accel_scheduler_options_init(&so);
	if (mode == 'p')
		so.kind = ACCEL_SCHEDULER_KERNEL;
	err = accel_scheduler_open(&so, &s);
	if (err) {
		fprintf(stderr, "tenants: cannot open %s scheduler: %s\n",
			mode == 'p' ? "the kernel" : "a", accel_error_message());
		return 1;
	}
	printf("tenants: 3 tenants on %s for %d s, %s scheduler (%s)\n", DEVICE, seconds,
	       accel_scheduler_kind_name(accel_scheduler_kind(s)), accel_scheduler_reason(s));
	if (!mode)
		mode = accel_scheduler_kind(s) == ACCEL_SCHEDULER_KERNEL ? 'p' : 't';
	if (mode == 'p' && accel_scheduler_kind(s) != ACCEL_SCHEDULER_KERNEL) {
		fprintf(stderr, "tenants: --processes needs the kernel scheduler: the processes of the embedded one do not share a device\n");
		accel_scheduler_release(s);
		return 2;
	}
	if (mode == 't') {
		err = run_threads(s, seconds);
		accel_scheduler_release(s);
		return err;
	}
	accel_scheduler_release(s); /* no library threads across fork() */
	return run_processes(seconds);
}
