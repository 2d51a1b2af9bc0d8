// SPDX-License-Identifier: MIT
/*
 * accelctl top: a live view of the module's engines, tenants and queues.
 *
 * A frame compares two samples taken an interval apart. A sample reads
 *
 *  - per engine, /sys/kernel/accelsched/engines/<name>/: credits,
 *    in_flight, busy_ns, released, completed, failed, timedout, latency_ns;
 *  - per cgroup tenant, /sys/kernel/accelsched/tenants/<cgroup-id>/:
 *    weight, queues, jobs, busy_ns, released, latency_ns;
 *  - per open file of the device (a *client*), its fdinfo
 *    (/proc/<pid>/fdinfo/<fd> where /proc/<pid>/fd/<fd> is the device
 *    node): drm-client-id; per engine drm-engine-<e> (ns), drm-engine-
 *    capacity-<e>, accel-released-<e>, accel-latency-<e> (ns); accel-tenant
 *    (0: the file is a tenant of its own); and a line per live queue,
 *    accel-queue-<handle>: engine= priority= weight= runnable= in_flight=
 *    released= busy_ns= latency_ns=.
 *
 * Every counter is cumulative. A frame shows what grew over the interval:
 *
 *  - an engine's busy %: busy time over interval x credits, so 100 % is
 *    every credit busy for the whole interval (drm-usage-stats' capacity
 *    rule; an engine of 0 credits counts as 1);
 *  - a tenant's, a client's or a queue's share % of an engine: its engine
 *    time over the engine's, i.e. of the engine time used in the interval,
 *    by whomever; none when the engine did no work;
 *  - released/s: jobs released over the interval;
 *  - latency: the mean time from runnable to released of the jobs released
 *    in the interval; none when none was.
 *
 * Engine time is what executors report at COMPLETE, so a job's time counts
 * in the interval it completed in. A file, queue, engine or tenant that
 * appears between the two samples counts from zero; one that goes is left
 * out. A value the module does not report (an older module) is "-" in the
 * text and null in the JSON; unknown lines and fields are ignored. The
 * same file open in several processes (fork, fd passing) is one client,
 * shown with the lowest pid.
 *
 * Each derived value is computed once, as a fixed-point integer, and
 * printed with the same digits in the text and in the JSON.
 *
 * ACCELCTL_SYSFS and ACCELCTL_PROC, when set, stand for
 * /sys/kernel/accelsched and /proc: the tests build fake trees there.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <accel/accel.h>

#include "accelctl.h"
#include "json.h"
#include "output.h"

#define SYSFS_DEFAULT "/sys/kernel/accelsched"
#define PROC_DEFAULT "/proc"
#define MODULE_NAME "accelsched"
#define DELAY_MAX_S 86400.0
/* The weight of a file that is a tenant of its own (no sysfs entry). */
#define FILE_TENANT_WEIGHT 100
/* A counter the module does not report. */
#define NONE UINT64_MAX
/* A derived value that does not exist (no interval, no work). */
#define NO_VALUE INT64_MIN
#define NAME_LEN 64
/*
 * An fdinfo is a few hundred bytes, and some 150 per queue (64 queues a
 * file by default, the module's max_queues): one larger than this is not
 * the module's, and is left out rather than read on.
 */
#define FDINFO_MAX (256 * 1024)

/* ---- one sample ---------------------------------------------------------- */

struct engine {
	char name[NAME_LEN];
	uint64_t credits, in_flight;
	uint64_t busy_ns, released, completed, failed, timedout, latency_ns;
};

/* A cgroup tenant, as sysfs shows it. */
struct tenant {
	uint64_t id;
	uint64_t weight, queues, jobs, busy_ns, released, latency_ns;
};

/* A client's totals on one engine, for the file's life. */
struct usage {
	char engine[NAME_LEN];
	uint64_t busy_ns, capacity, released, latency_ns;
};

struct queue {
	uint64_t handle;
	char engine[NAME_LEN];
	char priority[16];
	uint64_t weight, runnable, in_flight, released, busy_ns, latency_ns;
	/* Its completed jobs' predictions, and the time those jobs took. */
	uint64_t predicted_ns, predicted_busy_ns;
	/* Its jobs with a deadline completed by it, and after it (ABI 1.7). */
	uint64_t deadlines_met, deadlines_missed;
};

struct client {
	uint64_t id;		/* drm-client-id */
	long pid;		/* the lowest pid holding it */
	char comm[32];
	uint64_t tenant;	/* cgroup id, 0: its own, NONE: not said */
	struct usage *usage;
	size_t nusage;
	struct queue *queues;
	size_t nqueues;
};

struct sample {
	uint64_t t_ns;		/* CLOCK_MONOTONIC when it began */
	struct engine *engines;
	size_t nengines;
	struct tenant *tenants;
	size_t ntenants;
	struct client *clients;
	size_t nclients;
	bool stats;		/* the module has the released counters */
	unsigned int unreadable_procs;	/* /proc/<pid>/fd refused */
	unsigned int unreadable_clients; /* a device fd whose fdinfo refused */
};

static const char *sysfs_root = SYSFS_DEFAULT;
static const char *proc_root = PROC_DEFAULT;

static void out_of_memory(void)
{
	fprintf(stderr, "%s: top: out of memory\n", progname);
	exit(EXIT_FAILURE);
}

/* @p, an array of @n elements, with room for one more (capacity 4, 8, 16...). */
static void *xgrow(void *p, size_t n, size_t size)
{
	if (n != 0 && (n < 4 || (n & (n - 1))))
		return p;
	p = realloc(p, (n ? n * 2 : 4) * size);
	if (!p)
		out_of_memory();
	return p;
}

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);

	if (!p)
		out_of_memory();
	return p;
}

#define PUSH(arr, n) \
	((arr) = xgrow((arr), (n), sizeof(*(arr))), memset(&(arr)[(n)], 0, sizeof(*(arr))), &(arr)[(n)++])

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A decimal number ending the string or followed by @end; NONE if not. */
static uint64_t parse_u64(const char *s, const char *end)
{
	unsigned long long v;
	char *e;

	if (*s < '0' || *s > '9')
		return NONE;
	errno = 0;
	v = strtoull(s, &e, 10);
	if (errno || (*e && strcmp(e, end) != 0))
		return NONE;
	return v;
}

/*
 * @dir/@name whole into @buf (@len bytes, a '\0' added): its length, or
 * -errno: -EINVAL for what is not a regular file, -EFBIG for a file that
 * does not fit. Every sysfs and /proc file top reads is a small regular
 * file; a FIFO or a device where one was expected (a broken or hostile
 * tree) would block top, or feed it for ever (/dev/zero), so it is
 * refused without a read, opened O_NONBLOCK so that even its open cannot
 * wait for a writer.
 */
static ssize_t read_small(int dir, const char *name, char *buf, size_t len)
{
	int fd = openat(dir, name, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	size_t got = 0;
	struct stat st;
	ssize_t n = 0;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	while (got < len && (n = read(fd, buf + got, len - got)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	if (n < 0)
		return -EIO;
	if (got == len)
		return -EFBIG;
	buf[got] = '\0';
	return (ssize_t)got;
}

/* The number in @dir/@name (sysfs: "<n>\n"); NONE if absent or not one. */
static uint64_t read_u64(int dir, const char *name)
{
	char buf[64];

	if (read_small(dir, name, buf, sizeof(buf)) <= 0)
		return NONE;
	return parse_u64(buf, "\n");
}

static void read_engine(struct engine *e, int dir)
{
	e->credits = read_u64(dir, "credits");
	e->in_flight = read_u64(dir, "in_flight");
	e->busy_ns = read_u64(dir, "busy_ns");
	e->released = read_u64(dir, "released");
	e->completed = read_u64(dir, "completed");
	e->failed = read_u64(dir, "failed");
	e->timedout = read_u64(dir, "timedout");
	e->latency_ns = read_u64(dir, "latency_ns");
}

static void read_tenant(struct tenant *t, int dir)
{
	t->weight = read_u64(dir, "weight");
	t->queues = read_u64(dir, "queues");
	t->jobs = read_u64(dir, "jobs");
	t->busy_ns = read_u64(dir, "busy_ns");
	t->released = read_u64(dir, "released");
	t->latency_ns = read_u64(dir, "latency_ns");
}

/*
 * Each entry of @root/@sub (engines or tenants): @fn(entry name, its
 * directory). One that goes while we read it is left out. A missing
 * @sub is an empty one.
 */
static void each_dir(const char *sub, void (*fn)(struct sample *, const char *, int),
		     struct sample *s)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "%s/%s", sysfs_root, sub);
	d = opendir(path);
	if (!d)
		return;
	while ((de = readdir(d))) {
		int fd;

		if (de->d_name[0] == '.')
			continue;
		fd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			continue;
		fn(s, de->d_name, fd);
		close(fd);
	}
	closedir(d);
}

/*
 * Make @s, in place, a name fit for a terminal and for JSON: a process
 * names itself (comm), so "\033]0;...\007" would retitle or rewrite the
 * admin's terminal, and a byte that is not UTF-8 makes the JSON line
 * unreadable. Each control character (C0, DEL, C1) and each byte that does
 * not start a whole UTF-8 character becomes '?'; the rest is kept.
 */
static void printable(char *s)
{
	unsigned char *in = (unsigned char *)s, *out = in;

	while (*in) {
		size_t n = text_utf8_len(in);

		if (n == 0 || in[0] < 0x20 || in[0] == 0x7f ||
		    (in[0] == 0xc2 && in[1] < 0xa0)) {
			*out++ = '?';
			in += n ? n : 1;
			continue;
		}
		while (n--)
			*out++ = *in++;
	}
	*out = '\0';
}

static void add_engine(struct sample *s, const char *name, int dir)
{
	struct engine *e;

	if (strlen(name) >= NAME_LEN)
		return;
	e = PUSH(s->engines, s->nengines);
	strcpy(e->name, name);
	printable(e->name);
	read_engine(e, dir);
}

static void add_tenant(struct sample *s, const char *name, int dir)
{
	uint64_t id = parse_u64(name, "");
	struct tenant *t;

	if (id == NONE)
		return;
	t = PUSH(s->tenants, s->ntenants);
	t->id = id;
	read_tenant(t, dir);
}

/* ---- fdinfo -------------------------------------------------------------- */

/* An engine name as fdinfo writes it ("%3a" for ':'), decoded; false if too long. */
static bool engine_name(char *out, const char *s, size_t len)
{
	size_t o = 0;

	for (size_t i = 0; i < len; i++) {
		if (o + 1 >= NAME_LEN)
			return false;
		if (i + 3 <= len && strncmp(s + i, "%3a", 3) == 0) {
			out[o++] = ':';
			i += 2;
		} else {
			out[o++] = s[i];
		}
	}
	out[o] = '\0';
	printable(out);
	return o > 0;
}

/*
 * The client's totals on the engine that @key names after @prefix (its
 * name encoded as in fdinfo), made if new; NULL if @key is not one.
 */
static struct usage *client_usage(struct client *c, const char *key, const char *prefix)
{
	size_t n = strlen(prefix);
	char name[NAME_LEN];
	struct usage *u;

	if (strncmp(key, prefix, n) != 0 || !engine_name(name, key + n, strlen(key + n)))
		return NULL;
	for (size_t i = 0; i < c->nusage; i++)
		if (strcmp(c->usage[i].engine, name) == 0)
			return &c->usage[i];
	u = PUSH(c->usage, c->nusage);
	strcpy(u->engine, name);
	u->busy_ns = u->capacity = u->released = u->latency_ns = NONE;
	return u;
}

/* The numeric fields of a queue's line. */
static const struct {
	const char *name;
	size_t off;
} queue_fields[] = {
	{ "weight", offsetof(struct queue, weight) },
	{ "runnable", offsetof(struct queue, runnable) },
	{ "in_flight", offsetof(struct queue, in_flight) },
	{ "released", offsetof(struct queue, released) },
	{ "busy_ns", offsetof(struct queue, busy_ns) },
	{ "latency_ns", offsetof(struct queue, latency_ns) },
	{ "predicted_ns", offsetof(struct queue, predicted_ns) },
	{ "predicted_busy_ns", offsetof(struct queue, predicted_busy_ns) },
	{ "deadlines_met", offsetof(struct queue, deadlines_met) },
	{ "deadlines_missed", offsetof(struct queue, deadlines_missed) },
};

/* "accel-queue-<handle>:" then "name=value" fields, space-separated. */
static void parse_queue(struct client *c, const char *handle, char *fields)
{
	struct queue *q;
	uint64_t h = parse_u64(handle, "");
	char *save = NULL;

	if (h == NONE)
		return;
	q = PUSH(c->queues, c->nqueues);
	q->handle = h;
	strcpy(q->priority, "-");
	q->weight = q->runnable = q->in_flight = NONE;
	q->released = q->busy_ns = q->latency_ns = NONE;
	q->predicted_ns = q->predicted_busy_ns = NONE;
	q->deadlines_met = q->deadlines_missed = NONE;
	for (char *f = strtok_r(fields, " ", &save); f; f = strtok_r(NULL, " ", &save)) {
		char *v = strchr(f, '=');

		if (!v)
			continue;
		*v++ = '\0';
		if (strcmp(f, "engine") == 0) {
			if (!engine_name(q->engine, v, strlen(v)))
				q->engine[0] = '\0';
		} else if (strcmp(f, "priority") == 0) {
			snprintf(q->priority, sizeof(q->priority), "%s", v);
			printable(q->priority);
		}
		for (size_t i = 0; i < sizeof(queue_fields) / sizeof(queue_fields[0]); i++)
			if (strcmp(f, queue_fields[i].name) == 0)
				*(uint64_t *)((char *)q + queue_fields[i].off) = parse_u64(v, "");
	}
	if (!q->engine[0])
		strcpy(q->engine, "-");
}

/*
 * One "key:\tvalue" line of a client's fdinfo. A busy time ends in " ns",
 * a capacity does not: so "drm-engine-capacity-x: 5 ns" is the busy time
 * of an engine named "capacity-x".
 */
static void parse_line(struct client *c, char *key, char *value, bool *ours)
{
	size_t len = strlen(value);
	bool ns = len > 3 && strcmp(value + len - 3, " ns") == 0;
	struct usage *u;

	if (strcmp(key, "drm-driver") == 0)
		*ours = strcmp(value, MODULE_NAME) == 0;
	else if (strcmp(key, "drm-client-id") == 0)
		c->id = parse_u64(value, "");
	else if (strcmp(key, "accel-tenant") == 0)
		c->tenant = parse_u64(value, "");
	else if (strncmp(key, "accel-queue-", 12) == 0)
		parse_queue(c, key + 12, value);
	else if (!ns && (u = client_usage(c, key, "drm-engine-capacity-")))
		u->capacity = parse_u64(value, "");
	else if (ns && (u = client_usage(c, key, "drm-engine-")))
		u->busy_ns = parse_u64(value, " ns");
	else if (!ns && (u = client_usage(c, key, "accel-released-")))
		u->released = parse_u64(value, "");
	else if (ns && (u = client_usage(c, key, "accel-latency-")))
		u->latency_ns = parse_u64(value, " ns");
}

static void client_free(struct client *c)
{
	free(c->usage);
	free(c->queues);
}

/*
 * Read a client from fdinfo @f into @c. Return true if it is one of the
 * module's: a drm-client-id, and a drm-driver that says accelsched (an
 * fdinfo that names no driver is not known to be the module's, and its
 * numbers would be counted as the module's).
 */
static bool parse_fdinfo(FILE *f, struct client *c)
{
	char *line = NULL;
	size_t cap = 0;
	bool ours = false;
	ssize_t n;

	c->id = NONE;
	c->tenant = NONE;
	while ((n = getline(&line, &cap, f)) > 0) {
		char *colon = strchr(line, ':');

		if (line[n - 1] == '\n')
			line[n - 1] = '\0';
		if (!colon)
			continue;
		*colon = '\0';
		colon++;
		colon += strspn(colon, " \t");
		parse_line(c, line, colon, &ours);
	}
	free(line);
	if (!ours || c->id == NONE) {
		client_free(c);
		return false;
	}
	return true;
}

/* ---- /proc --------------------------------------------------------------- */

struct device {
	const char *path;	/* the node, as /proc/<pid>/fd links name it */
	dev_t rdev;		/* its device number, when it exists here */
	bool have_rdev;
};

static bool is_device(int fddir, const char *fd, const struct device *dev)
{
	char target[PATH_MAX];
	ssize_t n = readlinkat(fddir, fd, target, sizeof(target) - 1);
	struct stat st;

	if (n <= 0)
		return false;
	target[n] = '\0';
	/*
	 * The node itself, by its number, whatever either name says: a
	 * symlink, "/dev/./accelsched", a relative ACCEL_DEVICE, a
	 * container's /dev. Only a path is looked at (a socket or a pipe
	 * reads "socket:[...]"). The name is the fallback, for a node that
	 * does not exist here (the test trees).
	 */
	if (dev->have_rdev && target[0] == '/' &&
	    fstatat(fddir, fd, &st, 0) == 0 && S_ISCHR(st.st_mode))
		return st.st_rdev == dev->rdev;
	return strcmp(target, dev->path) == 0;
}

static void read_comm(int pdir, char *comm, size_t len)
{
	if (read_small(pdir, "comm", comm, len) <= 0) {
		snprintf(comm, len, "?");
		return;
	}
	comm[strcspn(comm, "\n")] = '\0';
	printable(comm);
}

static struct client *find_client(const struct sample *s, uint64_t id)
{
	for (size_t i = 0; i < s->nclients; i++)
		if (s->clients[i].id == id)
			return &s->clients[i];
	return NULL;
}

/* One device fd of process @pid: its client, unless already seen. */
static void add_fd(struct sample *s, int pdir, long pid, const char *fd)
{
	static char buf[FDINFO_MAX];
	char path[300], comm[32];
	struct client c = { 0 }, *seen;
	bool ok;
	FILE *f;
	ssize_t n;

	/* The name first: the fdinfo is the last thing read of a process. */
	read_comm(pdir, comm, sizeof(comm));
	snprintf(path, sizeof(path), "fdinfo/%s", fd);
	n = read_small(pdir, path, buf, FDINFO_MAX);
	if (n == -EACCES || n == -EPERM)
		s->unreadable_clients++;
	/* Else gone since the readlink, or not an fdinfo (too long, no file). */
	if (n <= 0)
		return;
	f = fmemopen(buf, (size_t)n, "r");
	if (!f)
		out_of_memory();
	ok = parse_fdinfo(f, &c);
	fclose(f);
	if (!ok)
		return;
	seen = find_client(s, c.id);
	if (seen) {
		if (pid < seen->pid) {
			seen->pid = pid;
			memcpy(seen->comm, comm, sizeof(comm));
		}
		client_free(&c);
		return;
	}
	c.pid = pid;
	memcpy(c.comm, comm, sizeof(comm));
	*PUSH(s->clients, s->nclients) = c;
}

static void scan_process(struct sample *s, int proc, const char *name,
			 const struct device *dev)
{
	long pid = strtol(name, NULL, 10);
	struct dirent *de;
	int pdir, fddir;
	DIR *d;

	pdir = openat(proc, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (pdir < 0)
		return;
	fddir = openat(pdir, "fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fddir < 0) {
		if (errno == EACCES || errno == EPERM)
			s->unreadable_procs++;
		close(pdir);
		return;
	}
	d = fdopendir(fddir);
	if (!d) {
		close(fddir);
		close(pdir);
		return;
	}
	while ((de = readdir(d)))
		if (de->d_name[0] != '.' && is_device(fddir, de->d_name, dev))
			add_fd(s, pdir, pid, de->d_name);
	closedir(d);
	close(pdir);
}

static int scan_proc(struct sample *s, const struct device *dev)
{
	struct dirent *de;
	DIR *d = opendir(proc_root);

	if (!d)
		return -errno;
	while ((de = readdir(d)))
		if (de->d_name[0] >= '1' && de->d_name[0] <= '9' &&
		    de->d_name[strspn(de->d_name, "0123456789")] == '\0')
			scan_process(s, dirfd(d), de->d_name, dev);
	closedir(d);
	return 0;
}

/* ---- sorting ------------------------------------------------------------- */

static int cmp_u64(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

static int cmp_engine(const void *a, const void *b)
{
	return strcmp(((const struct engine *)a)->name, ((const struct engine *)b)->name);
}

static int cmp_tenant(const void *a, const void *b)
{
	return cmp_u64(((const struct tenant *)a)->id, ((const struct tenant *)b)->id);
}

static int cmp_usage(const void *a, const void *b)
{
	return strcmp(((const struct usage *)a)->engine, ((const struct usage *)b)->engine);
}

static int cmp_queue(const void *a, const void *b)
{
	return cmp_u64(((const struct queue *)a)->handle, ((const struct queue *)b)->handle);
}

static int cmp_client(const void *a, const void *b)
{
	return cmp_u64(((const struct client *)a)->id, ((const struct client *)b)->id);
}

/* qsort(), which must not see a NULL array, even an empty one. */
static void sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(base, n, size, cmp);
}

static void sample_free(struct sample *s)
{
	for (size_t i = 0; i < s->nclients; i++)
		client_free(&s->clients[i]);
	free(s->clients);
	free(s->engines);
	free(s->tenants);
	memset(s, 0, sizeof(*s));
}

static void module_missing(void)
{
	fprintf(stderr,
		"%s: top: the %s module is not loaded (%s does not exist), so there is nothing to show:\n"
		"  programs on libaccel's embedded scheduler schedule inside their own process.\n"
		"  'modprobe %s' loads the module.\n",
		progname, MODULE_NAME, sysfs_root, MODULE_NAME);
}

/* Take a sample; 0, or 1 (the exit status) after saying what failed. */
static int sample_take(struct sample *s, const struct device *dev)
{
	struct stat st;
	int err;

	memset(s, 0, sizeof(*s));
	s->t_ns = now_ns();
	if (stat(sysfs_root, &st) != 0) {
		module_missing();
		return EXIT_FAILURE;
	}
	each_dir("engines", add_engine, s);
	each_dir("tenants", add_tenant, s);
	for (size_t i = 0; i < s->nengines; i++)
		s->stats |= s->engines[i].released != NONE;
	err = scan_proc(s, dev);
	if (err) {
		fprintf(stderr, "%s: top: cannot read %s: %s\n", progname,
			proc_root, strerror(-err));
		sample_free(s);
		return EXIT_FAILURE;
	}
	sort(s->engines, s->nengines, sizeof(*s->engines), cmp_engine);
	sort(s->tenants, s->ntenants, sizeof(*s->tenants), cmp_tenant);
	sort(s->clients, s->nclients, sizeof(*s->clients), cmp_client);
	for (size_t i = 0; i < s->nclients; i++) {
		struct client *c = &s->clients[i];

		sort(c->usage, c->nusage, sizeof(*c->usage), cmp_usage);
		sort(c->queues, c->nqueues, sizeof(*c->queues), cmp_queue);
	}
	return 0;
}

/* ---- the frame: what grew over the interval ------------------------------ */

/* What grew over the interval, and what it means. */
struct rates {
	uint64_t busy_ns, released, latency_ns;	/* growth; NONE: unknown */
	int64_t pct10;		/* busy % (engines) or share % (others), x10 */
	int64_t rate10;		/* released per second, x10 */
	int64_t lat_us;		/* mean latency, microseconds */
};

struct share {
	const char *engine;
	uint64_t busy_ns;	/* the visible clients' total */
	struct rates r;
};

struct vtenant {
	char label[32];		/* "<cgroup id>" or "file <client id>" */
	uint64_t cgroup_id, client_id;	/* one of them NONE */
	uint64_t weight, queues, jobs;
	uint64_t busy_ns, released, latency_ns;	/* totals */
	struct rates r;
	struct share *shares;
	size_t nshares;
};

struct vclient {
	const struct client *c;
	char tenant[32];
	struct rates *usage;	/* [c->nusage] */
	struct rates *queues;	/* [c->nqueues] */
};

struct view {
	const struct sample *cur;
	uint64_t interval_ns;
	struct rates *engines;	/* [cur->nengines] */
	struct vtenant *tenants;
	size_t ntenants;
	struct vclient *clients; /* [cur->nclients] */
};

/* @cur - @prev; a counter that is new (@prev NONE) or was reset counts from 0. */
static uint64_t growth(uint64_t cur, uint64_t prev)
{
	if (cur == NONE)
		return NONE;
	if (prev == NONE || prev > cur)
		return cur;
	return cur - prev;
}

static int64_t ratio(uint64_t num, long double scale, long double den)
{
	if (num == NONE || !(den > 0))
		return NO_VALUE;
	return llroundl((long double)num * scale / den);
}

/* Rates of a growth; @den: what busy_ns is a share of (0: none). */
static void rates_fill(struct rates *r, uint64_t interval_ns, long double den)
{
	r->pct10 = ratio(r->busy_ns, 1000, den);
	r->rate10 = ratio(r->released, 1e10L, interval_ns);
	r->lat_us = r->released == NONE || r->released == 0 ? NO_VALUE :
		    ratio(r->latency_ns, 1e-3L, r->released);
}

static void rates_growth(struct rates *r, uint64_t busy, uint64_t pbusy,
			 uint64_t rel, uint64_t prel, uint64_t lat, uint64_t plat)
{
	r->busy_ns = growth(busy, pbusy);
	r->released = growth(rel, prel);
	r->latency_ns = growth(lat, plat);
}

static const struct engine *find_engine(const struct sample *s, const char *name, size_t *idx)
{
	for (size_t i = 0; i < s->nengines; i++) {
		if (strcmp(s->engines[i].name, name) == 0) {
			if (idx)
				*idx = i;
			return &s->engines[i];
		}
	}
	return NULL;
}

static const struct tenant *find_tenant(const struct sample *s, uint64_t id)
{
	for (size_t i = 0; i < s->ntenants; i++)
		if (s->tenants[i].id == id)
			return &s->tenants[i];
	return NULL;
}

static const struct usage *find_usage(const struct client *c, const char *engine)
{
	for (size_t i = 0; c && i < c->nusage; i++)
		if (strcmp(c->usage[i].engine, engine) == 0)
			return &c->usage[i];
	return NULL;
}

static const struct queue *find_queue(const struct client *c, const struct queue *q)
{
	for (size_t i = 0; c && i < c->nqueues; i++)
		if (c->queues[i].handle == q->handle &&
		    strcmp(c->queues[i].engine, q->engine) == 0)
			return &c->queues[i];
	return NULL;
}

/* The engine time used on @engine over the interval (0: none, or unknown). */
static long double engine_growth(const struct view *v, const char *engine)
{
	size_t i;

	if (!find_engine(v->cur, engine, &i) || v->engines[i].busy_ns == NONE)
		return 0;
	return v->engines[i].busy_ns;
}

static uint64_t add(uint64_t a, uint64_t b)
{
	return a == NONE || b == NONE ? NONE : a + b;
}

static struct vtenant *tenant_add(struct view *v, uint64_t cgroup_id, uint64_t client_id)
{
	struct vtenant *t = PUSH(v->tenants, v->ntenants);

	t->cgroup_id = cgroup_id;
	t->client_id = client_id;
	if (cgroup_id != NONE)
		snprintf(t->label, sizeof(t->label), "%" PRIu64, cgroup_id);
	else
		snprintf(t->label, sizeof(t->label), "file %" PRIu64, client_id);
	t->weight = t->queues = t->jobs = NONE;
	t->busy_ns = t->released = t->latency_ns = NONE;
	t->r.busy_ns = t->r.released = t->r.latency_ns = NONE;
	return t;
}

/* Add a client's engine time to its tenant's shares. */
static void tenant_shares(struct vtenant *t, const struct client *c,
			  const struct client *pc)
{
	for (size_t i = 0; i < c->nusage; i++) {
		const struct usage *u = &c->usage[i], *pu = find_usage(pc, u->engine);
		struct share *sh = NULL;

		for (size_t k = 0; k < t->nshares; k++)
			if (strcmp(t->shares[k].engine, u->engine) == 0)
				sh = &t->shares[k];
		if (!sh) {
			sh = PUSH(t->shares, t->nshares);
			sh->engine = u->engine;
		}
		sh->busy_ns = add(sh->busy_ns, u->busy_ns);
		sh->r.busy_ns = add(sh->r.busy_ns, growth(u->busy_ns, pu ? pu->busy_ns : NONE));
	}
}

static int cmp_share(const void *a, const void *b)
{
	return strcmp(((const struct share *)a)->engine, ((const struct share *)b)->engine);
}

static void view_tenants(struct view *v, const struct sample *prev)
{
	const struct sample *cur = v->cur;

	/* The cgroup tenants: sysfs, and any a client names that sysfs lacks. */
	for (size_t i = 0; i < cur->ntenants; i++) {
		const struct tenant *t = &cur->tenants[i], *p = find_tenant(prev, t->id);
		struct vtenant *vt = tenant_add(v, t->id, NONE);

		vt->weight = t->weight;
		vt->queues = t->queues;
		vt->jobs = t->jobs;
		vt->busy_ns = t->busy_ns;
		vt->released = t->released;
		vt->latency_ns = t->latency_ns;
		rates_growth(&vt->r, t->busy_ns, p ? p->busy_ns : NONE,
			     t->released, p ? p->released : NONE,
			     t->latency_ns, p ? p->latency_ns : NONE);
	}
	for (size_t i = 0; i < cur->nclients; i++) {
		uint64_t id = cur->clients[i].tenant;
		bool known = id == 0 || id == NONE;

		for (size_t k = 0; !known && k < v->ntenants; k++)
			known = v->tenants[k].cgroup_id == id;
		if (!known)
			tenant_add(v, id, NONE);
	}
	/* The files that are tenants of their own: their fdinfo totals. */
	for (size_t i = 0; i < cur->nclients; i++) {
		const struct client *c = &cur->clients[i];
		const struct client *pc = find_client(prev, c->id);
		struct vtenant *vt;
		uint64_t pbusy = 0, prel = 0, plat = 0;

		if (c->tenant != 0)
			continue;
		vt = tenant_add(v, NONE, c->id);
		vt->weight = FILE_TENANT_WEIGHT;
		/* A module without statistics has no queue lines either. */
		vt->queues = cur->stats || c->nqueues ? c->nqueues : NONE;
		vt->busy_ns = vt->released = vt->latency_ns = 0;
		for (size_t k = 0; k < c->nusage; k++) {
			const struct usage *u = &c->usage[k], *pu = find_usage(pc, u->engine);

			vt->busy_ns = add(vt->busy_ns, u->busy_ns);
			vt->released = add(vt->released, u->released);
			vt->latency_ns = add(vt->latency_ns, u->latency_ns);
			pbusy = add(pbusy, pu ? pu->busy_ns : 0);
			prel = add(prel, pu ? pu->released : 0);
			plat = add(plat, pu ? pu->latency_ns : 0);
		}
		rates_growth(&vt->r, vt->busy_ns, pc ? pbusy : NONE,
			     vt->released, pc ? prel : NONE,
			     vt->latency_ns, pc ? plat : NONE);
	}
	/* Each tenant's engine time, engine by engine, from its clients. */
	for (size_t i = 0; i < v->ntenants; i++) {
		struct vtenant *vt = &v->tenants[i];

		for (size_t k = 0; k < cur->nclients; k++) {
			const struct client *c = &cur->clients[k];

			if (vt->cgroup_id != NONE ? c->tenant == vt->cgroup_id :
			    c->tenant == 0 && c->id == vt->client_id)
				tenant_shares(vt, c, find_client(prev, c->id));
		}
		sort(vt->shares, vt->nshares, sizeof(*vt->shares), cmp_share);
		rates_fill(&vt->r, v->interval_ns, 0);
		for (size_t k = 0; k < vt->nshares; k++) {
			struct share *sh = &vt->shares[k];

			sh->r.released = sh->r.latency_ns = NONE;
			rates_fill(&sh->r, v->interval_ns, engine_growth(v, sh->engine));
		}
	}
}

static void view_clients(struct view *v, const struct sample *prev)
{
	const struct sample *cur = v->cur;

	v->clients = xcalloc(cur->nclients, sizeof(*v->clients));
	for (size_t i = 0; i < cur->nclients; i++) {
		const struct client *c = &cur->clients[i];
		const struct client *pc = find_client(prev, c->id);
		struct vclient *vc = &v->clients[i];

		vc->c = c;
		if (c->tenant == 0)
			snprintf(vc->tenant, sizeof(vc->tenant), "file %" PRIu64, c->id);
		else if (c->tenant != NONE)
			snprintf(vc->tenant, sizeof(vc->tenant), "%" PRIu64, c->tenant);
		vc->usage = xcalloc(c->nusage, sizeof(*vc->usage));
		vc->queues = xcalloc(c->nqueues, sizeof(*vc->queues));
		for (size_t k = 0; k < c->nusage; k++) {
			const struct usage *u = &c->usage[k], *pu = find_usage(pc, u->engine);

			rates_growth(&vc->usage[k], u->busy_ns, pu ? pu->busy_ns : NONE,
				     u->released, pu ? pu->released : NONE,
				     u->latency_ns, pu ? pu->latency_ns : NONE);
			rates_fill(&vc->usage[k], v->interval_ns, engine_growth(v, u->engine));
		}
		for (size_t k = 0; k < c->nqueues; k++) {
			const struct queue *q = &c->queues[k], *pq = find_queue(pc, q);

			rates_growth(&vc->queues[k], q->busy_ns, pq ? pq->busy_ns : NONE,
				     q->released, pq ? pq->released : NONE,
				     q->latency_ns, pq ? pq->latency_ns : NONE);
			rates_fill(&vc->queues[k], v->interval_ns, engine_growth(v, q->engine));
		}
	}
}

static void view_free(struct view *v)
{
	for (size_t i = 0; i < v->ntenants; i++)
		free(v->tenants[i].shares);
	for (size_t i = 0; i < v->cur->nclients; i++) {
		free(v->clients[i].usage);
		free(v->clients[i].queues);
	}
	free(v->tenants);
	free(v->clients);
	free(v->engines);
}

/* The frame between two samples. */
static void view_make(struct view *v, const struct sample *prev, const struct sample *cur)
{
	memset(v, 0, sizeof(*v));
	v->cur = cur;
	v->interval_ns = cur->t_ns - prev->t_ns;
	v->engines = xcalloc(cur->nengines, sizeof(*v->engines));
	for (size_t i = 0; i < cur->nengines; i++) {
		const struct engine *e = &cur->engines[i];
		const struct engine *p = find_engine(prev, e->name, NULL);
		long double cap = e->credits == NONE ? 0 : e->credits ? e->credits : 1;

		rates_growth(&v->engines[i], e->busy_ns, p ? p->busy_ns : NONE,
			     e->released, p ? p->released : NONE,
			     e->latency_ns, p ? p->latency_ns : NONE);
		rates_fill(&v->engines[i], v->interval_ns, cap * v->interval_ns);
	}
	view_tenants(v, prev);
	view_clients(v, prev);
}

/* ---- printing ------------------------------------------------------------ */

/* @v as a decimal with @decimals digits after the point, or @none. */
static const char *fixed(char *buf, size_t len, int64_t v, int decimals, const char *none)
{
	int64_t div = decimals == 1 ? 10 : 1000;

	if (v == NO_VALUE)
		return none;
	/* Every value here is a ratio of counters: never negative. */
	snprintf(buf, len, "%" PRId64 ".%0*" PRId64, v / div, decimals, v % div);
	return buf;
}

static const char *num(char *buf, size_t len, uint64_t v, const char *none)
{
	if (v == NONE)
		return none;
	snprintf(buf, len, "%" PRIu64, v);
	return buf;
}

/*
 * A queue's predictions over the time its predicted jobs took, in tenths of
 * a percent: 1000 is exact, above is over-predicted. NO_VALUE without a
 * predicted job (a module before ABI 1.6, or an executor that predicts
 * nothing).
 */
static int64_t queue_pred10(const struct queue *q)
{
	if (q->predicted_ns == NONE || q->predicted_busy_ns == NONE ||
	    !q->predicted_busy_ns)
		return NO_VALUE;
	return ratio(q->predicted_ns, 1000, q->predicted_busy_ns);
}

/*
 * The share of a queue's jobs with a deadline that missed it, in tenths of
 * a percent; NO_VALUE before the first (or from a module before ABI 1.7).
 */
static int64_t queue_miss10(const struct queue *q)
{
	if (q->deadlines_met == NONE || q->deadlines_missed == NONE ||
	    !(q->deadlines_met + q->deadlines_missed))
		return NO_VALUE;
	return ratio(q->deadlines_missed, 1000,
		     q->deadlines_met + q->deadlines_missed);
}

/* The three derived columns: share/busy %, released/s, latency (ms). */
#define F_PCT(r) fixed(b1, sizeof(b1), (r)->pct10, 1, none)
#define F_RATE(r) fixed(b2, sizeof(b2), (r)->rate10, 1, none)
#define F_LAT(r) fixed(b3, sizeof(b3), (r)->lat_us, 3, none)
#define N(x) num(n1, sizeof(n1), (x), none)
#define N2(x) num(n2, sizeof(n2), (x), none)
#define N3(x) num(n3, sizeof(n3), (x), none)

static const char *plural(size_t n)
{
	return n == 1 ? "" : "s";
}

static void text_frame(const struct view *v)
{
	const struct sample *s = v->cur;
	const char *none = "-";
	char b1[32], b2[32], b3[32], n1[32], n2[32], n3[32];

	printf("accelsched: %zu engine%s, %zu tenant%s, %zu client%s; interval %s s\n",
	       s->nengines, plural(s->nengines), v->ntenants, plural(v->ntenants),
	       s->nclients, plural(s->nclients),
	       fixed(b1, sizeof(b1), llroundl(v->interval_ns / 1e6L), 3, none));

	printf("\n%-16s %7s %8s %6s %8s %8s\n", "ENGINE", "CREDITS", "INFLIGHT",
	       "BUSY%", "REL/S", "LAT(ms)");
	for (size_t i = 0; i < s->nengines; i++) {
		const struct engine *e = &s->engines[i];
		const struct rates *r = &v->engines[i];

		printf("%-16s %7s %8s %6s %8s %8s\n", e->name, N(e->credits),
		       N2(e->in_flight), F_PCT(r), F_RATE(r), F_LAT(r));
	}

	printf("\n%-12s %6s %6s %6s %8s %8s  %-16s %6s\n", "TENANT", "WEIGHT",
	       "QUEUES", "JOBS", "REL/S", "LAT(ms)", "ENGINE", "SHARE%");
	for (size_t i = 0; i < v->ntenants; i++) {
		const struct vtenant *t = &v->tenants[i];

		printf("%-12s %6s %6s %6s %8s %8s", t->label, N(t->weight),
		       N2(t->queues), N3(t->jobs), F_RATE(&t->r), F_LAT(&t->r));
		if (!t->nshares)
			printf("  %-16s %6s\n", none, none);
		for (size_t k = 0; k < t->nshares; k++)
			printf("%*s  %-16s %6s\n", k ? 51 : 0, "", t->shares[k].engine,
			       F_PCT(&t->shares[k].r));
	}

	printf("\n%-7s %6s %-12s %5s %-16s %-6s %6s %8s %8s %6s %8s %8s %6s %6s  %s\n",
	       "PID", "CLIENT", "TENANT", "QUEUE", "ENGINE", "PRIO", "WEIGHT",
	       "RUNNABLE", "INFLIGHT", "SHARE%", "REL/S", "LAT(ms)", "PRED%",
	       "MISS%", "COMM");
	for (size_t i = 0; i < s->nclients; i++) {
		const struct vclient *vc = &v->clients[i];
		const struct client *c = vc->c;

		if (!c->nqueues)
			printf("%-7ld %6" PRIu64 " %-12s %5s %-16s %-6s %6s %8s %8s %6s %8s %8s %6s %6s  %s\n",
			       c->pid, c->id, vc->tenant[0] ? vc->tenant : none,
			       none, none, none, none, none, none, none, none,
			       none, none, none, c->comm);
		for (size_t k = 0; k < c->nqueues; k++) {
			const struct queue *q = &c->queues[k];
			const struct rates *r = &vc->queues[k];
			char b4[32], b5[32];

			printf("%-7ld %6" PRIu64 " %-12s %5" PRIu64 " %-16s %-6s %6s %8s %8s %6s %8s %8s %6s %6s  %s\n",
			       c->pid, c->id, vc->tenant[0] ? vc->tenant : none,
			       q->handle, q->engine, q->priority, N(q->weight),
			       N2(q->runnable), N3(q->in_flight), F_PCT(r),
			       F_RATE(r), F_LAT(r),
			       fixed(b4, sizeof(b4), queue_pred10(q), 1, none),
			       fixed(b5, sizeof(b5), queue_miss10(q), 1, none),
			       c->comm);
		}
	}
	if (s->unreadable_procs)
		printf("\n%u process%s not readable (another user's): run as root to see their clients\n",
		       s->unreadable_procs, s->unreadable_procs == 1 ? "" : "es");
	if (s->unreadable_clients)
		printf("%s%u client%s not readable (fdinfo refused): run as root to see %s\n",
		       s->unreadable_procs ? "" : "\n", s->unreadable_clients,
		       plural(s->unreadable_clients),
		       s->unreadable_clients == 1 ? "it" : "them");
}

static void json_key_num(const char *key, uint64_t v, bool comma)
{
	char n1[32];

	printf("\"%s\": %s%s", key, num(n1, sizeof(n1), v, "null"), comma ? ", " : "");
}

/* The derived values and the growth behind them. */
static void json_rates(const struct rates *r, const char *pct_key)
{
	const char *none = "null";
	char b1[32], b2[32], b3[32];

	if (pct_key)
		printf("\"%s\": %s, ", pct_key, F_PCT(r));
	printf("\"released_per_s\": %s, \"latency_mean_ms\": %s, \"interval\": {",
	       F_RATE(r), F_LAT(r));
	json_key_num("busy_ns", r->busy_ns, true);
	json_key_num("released", r->released, true);
	json_key_num("latency_ns", r->latency_ns, false);
	printf("}");
}

static void json_totals(uint64_t busy, uint64_t released, uint64_t latency)
{
	printf(", \"total\": {");
	json_key_num("busy_ns", busy, true);
	json_key_num("released", released, true);
	json_key_num("latency_ns", latency, false);
	printf("}");
}

static void json_engine(const struct engine *e, const struct rates *r)
{
	printf("{\"name\": ");
	json_string(e->name);
	printf(", ");
	json_key_num("credits", e->credits, true);
	json_key_num("in_flight", e->in_flight, true);
	json_rates(r, "busy_pct");
	printf(", \"total\": {");
	json_key_num("busy_ns", e->busy_ns, true);
	json_key_num("released", e->released, true);
	json_key_num("completed", e->completed, true);
	json_key_num("failed", e->failed, true);
	json_key_num("timedout", e->timedout, true);
	json_key_num("latency_ns", e->latency_ns, false);
	printf("}}");
}

static void json_tenant(const struct vtenant *t)
{
	char b1[32];

	printf("{\"tenant\": ");
	json_string(t->label);
	printf(", ");
	json_key_num("cgroup_id", t->cgroup_id, true);
	json_key_num("client_id", t->client_id, true);
	json_key_num("weight", t->weight, true);
	json_key_num("queues", t->queues, true);
	json_key_num("jobs", t->jobs, true);
	json_rates(&t->r, NULL);
	json_totals(t->busy_ns, t->released, t->latency_ns);
	printf(", \"engines\": [");
	for (size_t k = 0; k < t->nshares; k++) {
		const struct share *sh = &t->shares[k];

		printf("%s{\"name\": ", k ? ", " : "");
		json_string(sh->engine);
		printf(", \"share_pct\": %s, \"interval\": {",
		       fixed(b1, sizeof(b1), sh->r.pct10, 1, "null"));
		json_key_num("busy_ns", sh->r.busy_ns, false);
		printf("}, \"total\": {");
		json_key_num("busy_ns", sh->busy_ns, false);
		printf("}}");
	}
	printf("]}");
}

static void json_client(const struct vclient *vc)
{
	const struct client *c = vc->c;
	char b4[32];

	printf("{\"pid\": %ld, \"comm\": ", c->pid);
	json_string(c->comm);
	printf(", ");
	json_key_num("client_id", c->id, true);
	printf("\"tenant\": ");
	if (vc->tenant[0])
		json_string(vc->tenant);
	else
		printf("null");
	printf(", ");
	json_key_num("cgroup_id", c->tenant == 0 ? NONE : c->tenant, true);
	printf("\"engines\": [");
	for (size_t k = 0; k < c->nusage; k++) {
		const struct usage *u = &c->usage[k];

		printf("%s{\"name\": ", k ? ", " : "");
		json_string(u->engine);
		printf(", ");
		json_key_num("capacity", u->capacity, true);
		json_rates(&vc->usage[k], "share_pct");
		json_totals(u->busy_ns, u->released, u->latency_ns);
		printf("}");
	}
	printf("], \"queues\": [");
	for (size_t k = 0; k < c->nqueues; k++) {
		const struct queue *q = &c->queues[k];

		printf("%s{", k ? ", " : "");
		json_key_num("handle", q->handle, true);
		printf("\"engine\": ");
		json_string(q->engine);
		printf(", \"priority\": ");
		json_string(q->priority);
		printf(", ");
		json_key_num("weight", q->weight, true);
		json_key_num("runnable", q->runnable, true);
		json_key_num("in_flight", q->in_flight, true);
		json_rates(&vc->queues[k], "share_pct");
		json_totals(q->busy_ns, q->released, q->latency_ns);
		printf(", \"predicted_pct\": %s, ",
		       fixed(b4, sizeof(b4), queue_pred10(q), 1, "null"));
		json_key_num("predicted_ns", q->predicted_ns, true);
		json_key_num("predicted_busy_ns", q->predicted_busy_ns, true);
		printf("\"missed_pct\": %s, ",
		       fixed(b4, sizeof(b4), queue_miss10(q), 1, "null"));
		json_key_num("deadlines_met", q->deadlines_met, true);
		json_key_num("deadlines_missed", q->deadlines_missed, false);
		printf("}");
	}
	printf("]}");
}

/* One line: everything text_frame() prints, and the totals behind it. */
static void json_frame(const struct view *v)
{
	const struct sample *s = v->cur;
	char b1[32];

	printf("{\"interval_s\": %s, \"interval_ns\": %" PRIu64 ", \"engines\": [",
	       fixed(b1, sizeof(b1), llroundl(v->interval_ns / 1e6L), 3, "null"),
	       v->interval_ns);
	for (size_t i = 0; i < s->nengines; i++) {
		printf("%s", i ? ", " : "");
		json_engine(&s->engines[i], &v->engines[i]);
	}
	printf("], \"tenants\": [");
	for (size_t i = 0; i < v->ntenants; i++) {
		printf("%s", i ? ", " : "");
		json_tenant(&v->tenants[i]);
	}
	printf("], \"clients\": [");
	for (size_t i = 0; i < s->nclients; i++) {
		printf("%s", i ? ", " : "");
		json_client(&v->clients[i]);
	}
	printf("], \"unreadable\": {\"processes\": %u, \"clients\": %u}}\n",
	       s->unreadable_procs, s->unreadable_clients);
}

/* ---- the command --------------------------------------------------------- */

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* Sleep until CLOCK_MONOTONIC @t_ns; false if a signal said stop. */
static bool sleep_until(uint64_t t_ns)
{
	struct timespec ts = { (time_t)(t_ns / 1000000000u), (long)(t_ns % 1000000000u) };

	while (!stop) {
		int err = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);

		if (err != EINTR)
			return !stop;
	}
	return false;
}

static void top_usage(FILE *f)
{
	fprintf(f,
		"Usage: %s top [-J|-j|--json] [--once] [-d|--delay SECONDS] [-n|--iterations N]\n"
		"\n"
		"A live view of the %s module: per engine its credits, jobs in flight,\n"
		"busy %% (of interval x credits), jobs released per second and their mean\n"
		"latency (runnable to released); per tenant its weight, queues, jobs and\n"
		"share of each engine's time; per client and queue the same, from fdinfo.\n"
		"Each frame compares two samples SECONDS apart.\n"
		"\n"
		"  -d, --delay SECONDS    the interval, fractional allowed (default 1)\n"
		"  -n, --iterations N     print N frames, then exit\n"
		"      --once             print one frame and exit (for scripts)\n"
		"  -J, -j, --json         one JSON object per frame, one a line\n"
		"  -h, --help             print this help\n"
		"\n"
		"Environment (for tests): ACCELCTL_SYSFS=DIR stands for %s,\n"
		"ACCELCTL_PROC=DIR for %s.\n",
		progname, MODULE_NAME, SYSFS_DEFAULT, PROC_DEFAULT);
}

struct top_options {
	bool json, once;
	double delay;
	unsigned long frames;	/* 0: until interrupted */
};

static int top_parse(int argc, char **argv, struct top_options *o)
{
	enum { OPT_JSON = OPT_LONG, OPT_ONCE, OPT_DELAY, OPT_ITERATIONS,
	       OPT_HELP };
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, OPT_JSON },
		{ "once", no_argument, NULL, OPT_ONCE },
		{ "delay", required_argument, NULL, OPT_DELAY },
		{ "iterations", required_argument, NULL, OPT_ITERATIONS },
		{ "help", no_argument, NULL, OPT_HELP },
		{ NULL, 0, NULL, 0 },
	};
	bool delay_given = false, frames_given = false;
	char opt[OPT_NAME_MAX], *end;
	int c;

	*o = (struct top_options){ .delay = 1.0 };
	optind = 0;
	while ((c = getopt_long(argc, argv, ":Jjd:n:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'J':
		case 'j':
		case OPT_JSON:
			o->json = true;
			break;
		case OPT_ONCE:
			o->once = true;
			break;
		case 'd':
		case OPT_DELAY:
			if (option_once("top", "-d/--delay", &delay_given))
				return EXIT_USAGE;
			/*
			 * Whole strings of digits and a point only, as
			 * parse_u64() takes integers: strtod() would take
			 * leading blanks (but not trailing ones), a sign,
			 * hex, exponents and "inf".
			 */
			errno = 0;
			o->delay = strtod(optarg, &end);
			if (optarg[strspn(optarg, "0123456789.")] || errno ||
			    end == optarg || *end || !(o->delay >= 0) ||
			    o->delay > DELAY_MAX_S)
				return usage_error("top: bad delay '%s': give seconds, a number from 0 to %.0f (e.g. 0.5)",
						   optarg, DELAY_MAX_S);
			break;
		case 'n':
		case OPT_ITERATIONS:
			if (option_once("top", "-n/--iterations", &frames_given))
				return EXIT_USAGE;
			errno = 0;
			o->frames = strtoul(optarg, &end, 10);
			/* strtoul() takes leading blanks and signs: not here */
			if (optarg[0] < '0' || optarg[0] > '9' || errno ||
			    *end || !o->frames)
				return usage_error("top: bad frame count '%s' for -n: give a whole number from 1",
						   optarg);
			break;
		case 'h':
		case OPT_HELP:
			top_usage(stdout);
			exit(EXIT_SUCCESS);
		case ':':
			return usage_error("top: option '%s' needs a value (%s)",
					   bad_option(argv, opt, sizeof(opt)),
					   optopt == 'd' || optopt == OPT_DELAY ?
					   "seconds" : "a number of frames");
		default:
			return option_error("top", c, argv,
					    "(valid: -d SECONDS, -n N, --once, -J, -h)");
		}
	}
	if (optind < argc)
		return usage_error("top: unexpected argument '%s'", argv[optind]);
	/* Two frame counts that disagree: neither silently wins. */
	if (o->once && frames_given && o->frames != 1)
		return usage_error("top: --once is one frame, -n asks for %lu; give one of them",
				   (unsigned long)o->frames);
	if (o->once)
		o->frames = 1;
	return 0;
}

int cmd_top(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct device dev = { 0 };
	struct top_options o;
	struct sample prev, cur;
	struct stat st;
	bool clear;
	int ret;

	ret = top_parse(argc, argv, &o);
	if (ret)
		return ret;
	if (getenv("ACCELCTL_SYSFS"))
		sysfs_root = getenv("ACCELCTL_SYSFS");
	if (getenv("ACCELCTL_PROC"))
		proc_root = getenv("ACCELCTL_PROC");
	dev.path = getenv(ACCEL_DEVICE_ENV);
	if (!dev.path || !*dev.path)
		dev.path = ACCEL_SCHEDULER_DEFAULT_DEVICE;
	if (stat(dev.path, &st) == 0 && S_ISCHR(st.st_mode)) {
		dev.rdev = st.st_rdev;
		dev.have_rdev = true;
	}
	clear = !o.json && o.frames != 1 && isatty(STDOUT_FILENO);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	ret = sample_take(&prev, &dev);
	if (ret)
		return ret;
	for (unsigned long n = 0; !o.frames || n < o.frames; n++) {
		struct view v;

		if (!sleep_until(prev.t_ns + (uint64_t)llround(o.delay * 1e9)))
			break;
		ret = sample_take(&cur, &dev);
		if (ret)
			break;
		view_make(&v, &prev, &cur);
		if (clear)
			fputs("\033[H\033[2J", stdout);
		if (o.json)
			json_frame(&v);
		else
			text_frame(&v);
		view_free(&v);
		/*
		 * A closed, full or broken stdout ends top: else, until
		 * interrupted, it would loop for ever printing frames that
		 * nobody reads (stdio says a write failed only at a flush).
		 */
		if (!output_flush(progname)) {
			ret = EXIT_FAILURE;
			sample_free(&cur);
			break;
		}
		sample_free(&prev);
		prev = cur;
	}
	sample_free(&prev);
	return ret;
}
