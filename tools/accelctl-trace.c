// SPDX-License-Identifier: MIT
/*
 * accelctl trace: record the module's tracepoints and write a trace that
 * Perfetto (ui.perfetto.dev) and chrome://tracing load: the Chrome
 * trace-event JSON format.
 *
 * Recording (libtracefs): a tracefs instance of its own, so that nothing
 * else tracing on the machine is disturbed or disturbs it, on the "mono"
 * clock (CLOCK_MONOTONIC, the clock of libaccel's deadlines and of
 * `perf trace`), with the accelsched events enabled (and
 * dma_fence:dma_fence_signaled with --fences), for a duration or while a
 * command runs. Then the instance's raw buffers are read (libtraceevent
 * parses the records by the events' formats) and the instance removed.
 * --input converts a text trace recorded by other means instead (the
 * tracefs "trace" file, or `trace-cmd report`).
 *
 * The trace (see Documentation/sched.rst, "Traces"):
 *
 * - a process per engine, whose threads are its credits in use: a job is
 *   on one from its release to its completion, so the engine's
 *   occupancy reads off at a glance;
 * - a process per client (an open file of the device), a thread per queue
 *   (several, "#1", "#2", ..., when its jobs overlap): each job a slice
 *   from its submission to its end, with "waiting", "runnable" and
 *   "running" inside it, its points and outcome as arguments;
 * - a flow arrow from the job that promised a point to each job that
 *   waited on it (the promise with the smallest point at or above the
 *   wait, on the same fence context), so dependencies read as arrows;
 * - failures and timeouts marked by an instant on the job, and in the
 *   slice's name;
 * - with --fences, the kernel's dma_fence_signaled events for the traced
 *   points' contexts, a thread per context (those events carry the
 *   context and seqno as 32-bit numbers, so they are matched on the low
 *   32 bits).
 *
 * Exit status: with a command, the command's (the trace is written
 * whatever it is); otherwise 0. 1 when recording, reading or writing
 * fails; 2 on a usage error.
 */
#define _GNU_SOURCE /* strerrorname_np() */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifdef ACCELCTL_TRACEFS
#include <linux/magic.h>
#include <tracefs.h>
#ifndef TRACEFS_MAGIC
#define TRACEFS_MAGIC 0x74726163
#endif
#endif

#include "accelctl.h"
#include "json.h"
#include "parse.h"

/* ---- events ------------------------------------------------------------- */

enum tev_type {
	TEV_SUBMIT,
	TEV_WAIT,
	TEV_SIGNAL,
	TEV_RUNNABLE,
	TEV_RELEASE,
	TEV_COMPLETE,
	TEV_FAIL,
	TEV_TIMEOUT,
	TEV_FENCE_SIGNALED,
	TEV_COUNT,
};

static const char *const tev_names[TEV_COUNT] = {
	[TEV_SUBMIT] = "job_submit",
	[TEV_WAIT] = "job_wait",
	[TEV_SIGNAL] = "job_signal",
	[TEV_RUNNABLE] = "job_runnable",
	[TEV_RELEASE] = "job_release",
	[TEV_COMPLETE] = "job_complete",
	[TEV_FAIL] = "job_fail",
	[TEV_TIMEOUT] = "job_timeout",
	[TEV_FENCE_SIGNALED] = "dma_fence_signaled",
};

/* A job's priority no event of the trace said (its job_fail only). */
#define PRIO_UNKNOWN UINT32_MAX

/* One tracepoint hit, whatever its event: the fields it does not have are 0. */
struct tev {
	uint64_t ts;      /* ns, the trace clock */
	uint64_t order;   /* as read, to keep equal timestamps in order */
	enum tev_type type;
	uint64_t client;
	uint32_t queue, job, prio;
	int engine;       /* index in the names, -1 for none */
	int64_t status;   /* complete's status, fail's error */
	uint64_t device_ns;
	uint64_t predicted_ns; /* complete's; 0: none, or a module before ABI 1.6 */
	uint64_t context, seqno;
};

struct trace {
	struct tev *ev;
	size_t nev, cap;
	char **engines;
	size_t nengines;
	uint64_t lost;       /* events the kernel dropped (buffer full) */
	const char *source;  /* "tracefs instance ..." or the input file */
};

static void *xrealloc(void *p, size_t n, size_t size)
{
	if (size && n > SIZE_MAX / size) {
		errno = ENOMEM;
		return NULL;
	}
	return realloc(p, n && size ? n * size : 1);
}

static int engine_index(struct trace *t, const char *name, size_t len)
{
	char **grown;

	for (size_t i = 0; i < t->nengines; i++)
		if (strlen(t->engines[i]) == len &&
		    memcmp(t->engines[i], name, len) == 0)
			return (int)i;
	grown = xrealloc(t->engines, t->nengines + 1, sizeof(*grown));
	if (!grown)
		return -1;
	t->engines = grown;
	t->engines[t->nengines] = strndup(name, len);
	if (!t->engines[t->nengines])
		return -1;
	return (int)t->nengines++;
}

static struct tev *trace_add(struct trace *t)
{
	if (t->nev == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 1024;
		struct tev *ev = xrealloc(t->ev, cap, sizeof(*ev));

		if (!ev)
			return NULL;
		t->ev = ev;
		t->cap = cap;
	}
	memset(&t->ev[t->nev], 0, sizeof(t->ev[0]));
	t->ev[t->nev].engine = -1;
	t->ev[t->nev].order = t->nev;
	return &t->ev[t->nev++];
}

static void trace_free(struct trace *t)
{
	for (size_t i = 0; i < t->nengines; i++)
		free(t->engines[i]);
	free(t->engines);
	free(t->ev);
}

static enum tev_type tev_type_of(const char *name, size_t len)
{
	for (int i = 0; i < TEV_COUNT; i++)
		if (strlen(tev_names[i]) == len && memcmp(tev_names[i], name, len) == 0)
			return i;
	return TEV_COUNT;
}

/* ---- text input: the tracefs "trace" file, or `trace-cmd report` --------- */

/* @line's value of " key=" (after a space or at the start), or NULL. */
static const char *field(const char *line, const char *key, size_t *len)
{
	size_t klen = strlen(key);
	const char *p = line;

	while ((p = strstr(p, key))) {
		if ((p == line || p[-1] == ' ') && p[klen] == '=') {
			p += klen + 1;
			*len = strcspn(p, " \n");
			return p;
		}
		p += klen;
	}
	return NULL;
}

/*
 * The decimal digits at @p, up to @end (or the first non-digit when @end
 * is NULL) into @v: at least one digit, no sign, no overflow past 2^64 - 1
 * (strtoull() would take "-1" as 2^64 - 1). Returns where it stopped, or
 * NULL.
 */
static const char *decimal(const char *p, const char *end, uint64_t *v)
{
	const char *q = p;

	for (*v = 0; (!end || q < end) && *q >= '0' && *q <= '9'; q++) {
		if (*v > (UINT64_MAX - (uint64_t)(*q - '0')) / 10)
			return NULL;
		*v = *v * 10 + (uint64_t)(*q - '0');
	}
	return q > p && (!end || q == end) ? q : NULL;
}

static bool field_u64(const char *line, const char *key, uint64_t *v)
{
	size_t len;
	const char *p = field(line, key, &len);

	return p && decimal(p, p + len, v);
}

/* An int32 (a status, an errno): "-5", "0". */
static bool field_s32(const char *line, const char *key, int64_t *v)
{
	size_t len;
	const char *p = field(line, key, &len);
	bool neg = p && len && *p == '-';
	uint64_t u;

	if (!p || !decimal(p + neg, p + len, &u) || u > (neg ? 2147483648u : 2147483647u))
		return false;
	*v = neg ? -(int64_t)u : (int64_t)u;
	return true;
}

/* "<ctx>:<seqno>" of fence=. */
static bool field_fence(const char *line, uint64_t *ctx, uint64_t *seqno)
{
	size_t len;
	const char *p = field(line, "fence", &len), *colon;

	if (!p || !(colon = memchr(p, ':', len)))
		return false;
	return decimal(p, colon, ctx) && decimal(colon + 1, p + len, seqno);
}

/*
 * The fields each of the module's events has (its TP_printk), in any
 * order; NULL-terminated. dma_fence_signaled is the kernel's: only the
 * fields read are required, others are let be.
 */
static const char *const fields_job[] = {
	"client", "engine", "queue", "job", "prio", NULL
};
static const char *const fields_point[] = {
	"client", "queue", "job", "fence", NULL
};
static const char *const fields_complete[] = {
	"client", "engine", "queue", "job", "status", "device_ns",
	"predicted_ns", NULL
};
static const char *const fields_fail[] = {
	"client", "engine", "queue", "job", "error", NULL
};

static const char *const *known_fields(enum tev_type type)
{
	switch (type) {
	case TEV_WAIT:
	case TEV_SIGNAL:
		return fields_point;
	case TEV_COMPLETE:
		return fields_complete;
	case TEV_FAIL:
		return fields_fail;
	case TEV_FENCE_SIGNALED:
		return NULL;
	default:
		return fields_job;
	}
}

/*
 * Whether every word of @rest is "<key>=<value>" with a key of @known.
 * A field this accelctl does not know is a module whose events changed:
 * converting on would drop or misread what it says.
 */
static bool only_known(const char *rest, const char *const *known)
{
	const char *p = rest;

	while (*(p += strspn(p, " \t\r\n"))) {
		size_t len = strcspn(p, " \t\r\n");
		const char *eq = memchr(p, '=', len);
		bool ok = false;

		for (size_t i = 0; eq && known[i]; i++)
			ok |= strlen(known[i]) == (size_t)(eq - p) &&
			      memcmp(known[i], p, (size_t)(eq - p)) == 0;
		if (!ok)
			return false;
		p += len;
	}
	return true;
}

/*
 * One line: "<task>-<pid> [<cpu>] <flags> <secs>.<frac>: <event>: <fields>".
 * Returns 1 with an event, 0 for a line that holds none of ours, -1 for
 * one of ours that does not parse (its fields changed: a newer module).
 */
static int parse_line(struct trace *t, const char *line, unsigned long lineno,
		      const char *path)
{
	const char *p, *colon, *name, *rest;
	uint64_t secs, frac = 0, v = 0;
	int digits = 0, dots = 0;
	bool ts_ok;
	enum tev_type type;
	struct tev *e;
	bool ok = true;

	/* The event name: the word before ": " that follows the timestamp. */
	p = strstr(line, ": ");
	if (!p)
		return 0;
	/* The timestamp ends at p: scan back over digits and one '.'. */
	colon = p;
	while (colon > line && ((colon[-1] >= '0' && colon[-1] <= '9') || colon[-1] == '.'))
		colon--;
	if (colon == p)
		return 0;
	if (sscanf(colon, "%" SCNu64, &secs) != 1)
		secs = UINT64_MAX; /* ".5": refused below if the event is ours */
	/*
	 * One '.' at most, and seconds whose nanoseconds fit 64 bits: else
	 * an event of ours with this timestamp is refused below (sscanf()
	 * saturates, and "1.2.3" would read as 1.183).
	 */
	for (const char *d = colon; d < p; d++)
		dots += *d == '.';
	ts_ok = dots <= 1 && *colon != '.' && secs < UINT64_MAX / 1000000000ull &&
		(p - colon) < 24;
	for (const char *d = strchr(colon, '.'); ts_ok && d && d < p && ++d < p; digits++)
		frac = frac * 10 + (uint64_t)(*d - '0');
	if (digits > 9)
		return 0;
	for (; digits < 9; digits++)
		frac *= 10;
	name = p + 2;
	rest = strstr(name, ": ");
	if (!rest) {
		/* "<event>:" ending the line: an event without its fields. */
		rest = name + strcspn(name, "\r\n");
		if (rest == name || rest[-1] != ':')
			return 0;
		rest--;
	}
	/* `trace-cmd report` may write "<system>:<event>". */
	for (const char *c = name; c < rest; c++)
		if (*c == ':')
			name = c + 1;
	type = tev_type_of(name, (size_t)(rest - name));
	if (type == TEV_COUNT)
		return 0;
	rest += *rest && rest[1] == ' ' ? 2 : 1;

	e = trace_add(t);
	if (!e)
		return -ENOMEM;
	e->ts = secs * 1000000000ull + frac;
	e->type = type;
	e->prio = PRIO_UNKNOWN;
	if (!ts_ok) {
		ok = false;
		goto out;
	}
	if (known_fields(type) && !only_known(rest, known_fields(type))) {
		ok = false;
		goto out;
	}
	if (type == TEV_FENCE_SIGNALED) {
		ok = field_u64(rest, "context", &e->context) &&
		     field_u64(rest, "seqno", &e->seqno);
		goto out;
	}
	ok = field_u64(rest, "client", &e->client) && field_u64(rest, "queue", &v) &&
	     v <= UINT32_MAX;
	e->queue = (uint32_t)v;
	ok = ok && field_u64(rest, "job", &v) && v <= UINT32_MAX;
	e->job = (uint32_t)v;
	if (type == TEV_WAIT || type == TEV_SIGNAL) {
		ok = ok && field_fence(rest, &e->context, &e->seqno);
		goto out;
	}
	{
		size_t len;
		const char *en = field(rest, "engine", &len);

		ok = ok && en && (e->engine = engine_index(t, en, len)) >= 0;
	}
	if (type == TEV_COMPLETE) {
		ok = ok && field_s32(rest, "status", &e->status) &&
		     field_u64(rest, "device_ns", &e->device_ns);
		/* Optional: a module before ABI 1.6 has no predictions. */
		if (ok && !field_u64(rest, "predicted_ns", &e->predicted_ns))
			e->predicted_ns = 0;
	}
	else if (type == TEV_FAIL)
		ok = ok && field_s32(rest, "error", &e->status);
	else if (field_u64(rest, "prio", &v) && v <= UINT32_MAX)
		e->prio = (uint32_t)v;
	else
		ok = false;
out:
	if (!ok && !ts_ok) {
		fprintf(stderr, "%s: trace: %s:%lu: a %s event whose timestamp is not SECONDS.FRACTION (one '.', at most 9 fraction digits, seconds below 2^64 ns): %s",
			progname, path, lineno, tev_names[type], line);
		t->nev--;
		return -EINVAL;
	}
	if (!ok) {
		fprintf(stderr, "%s: trace: %s:%lu: a %s event whose fields are not the ones this accelctl knows (a newer module?): %s",
			progname, path, lineno, tev_names[type], line);
		t->nev--;
		return -EINVAL;
	}
	return 1;
}

static int read_text(struct trace *t, const char *path)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "r") : stdin;
	unsigned long lineno = 0;
	char *line = NULL;
	size_t cap = 0;
	int ret = 0;

	if (!f) {
		fprintf(stderr, "%s: trace: cannot open %s: %s\n", progname,
			path, strerror(errno));
		return -errno;
	}
	while (getline(&line, &cap, f) > 0) {
		lineno++;
		ret = parse_line(t, line, lineno, path);
		if (ret < 0)
			break;
		ret = 0;
		/* The kernel's note when its buffer overflowed. */
		{
			const char *l = strstr(line, "[LOST ");
			unsigned long long n;

			if (l && sscanf(l, "[LOST %llu EVENTS]", &n) == 1)
				t->lost += n;
		}
	}
	/* A directory, a closed stdin: an error, not an empty trace. */
	if (!ret && ferror(f)) {
		ret = errno ? -errno : -EIO;
		fprintf(stderr, "%s: trace: cannot read %s: %s\n", progname,
			path, strerror(-ret));
	}
	free(line);
	if (f != stdin)
		fclose(f);
	t->source = path;
	return ret;
}

/* ---- recording ---------------------------------------------------------- */

static volatile sig_atomic_t stop_requested;

static void on_stop(int sig)
{
	(void)sig;
	stop_requested = 1;
}

#ifdef ACCELCTL_TRACEFS
struct raw_ctx {
	struct trace *t;
	struct tep_event *ev[TEV_COUNT];
	int err;
};

static bool raw_u64(struct tep_event *ev, struct tep_record *rec,
		    const char *name, uint64_t *v)
{
	unsigned long long val;

	if (tep_get_field_val(NULL, ev, name, rec, &val, 0))
		return false;
	*v = val;
	return true;
}

static int raw_event(struct tep_event *event, struct tep_record *rec,
		     int cpu, void *data)
{
	struct raw_ctx *c = data;
	struct tev *e;
	uint64_t v = 0;
	bool ok = true;
	int type;

	(void)cpu;
	for (type = 0; type < TEV_COUNT; type++)
		if (c->ev[type] == event)
			break;
	if (type == TEV_COUNT)
		return 0;
	if (rec->missed_events > 0)
		c->t->lost += (uint64_t)rec->missed_events;
	e = trace_add(c->t);
	if (!e) {
		c->err = -ENOMEM;
		return 1;
	}
	e->ts = rec->ts;
	e->type = type;
	if (type == TEV_FENCE_SIGNALED)
		return raw_u64(event, rec, "context", &e->context) &&
		       raw_u64(event, rec, "seqno", &e->seqno) ? 0 : (c->err = -EINVAL, 1);
	ok = raw_u64(event, rec, "client", &e->client) &&
	     raw_u64(event, rec, "queue", &v);
	e->queue = (uint32_t)v;
	ok = ok && raw_u64(event, rec, "job", &v);
	e->job = (uint32_t)v;
	if (type == TEV_WAIT || type == TEV_SIGNAL) {
		ok = ok && raw_u64(event, rec, "context", &e->context) &&
		     raw_u64(event, rec, "seqno", &e->seqno);
	} else {
		int len = 0;
		const char *en = tep_get_field_raw(NULL, event, "engine", rec, &len, 0);

		ok = ok && en;
		if (ok) {
			len = (int)strnlen(en, (size_t)len);
			ok = (e->engine = engine_index(c->t, en, (size_t)len)) >= 0;
		}
		if (type == TEV_COMPLETE) {
			ok = ok && raw_u64(event, rec, "status", &v);
			e->status = (int32_t)v;
			ok = ok && raw_u64(event, rec, "device_ns", &e->device_ns);
			if (ok && !raw_u64(event, rec, "predicted_ns", &e->predicted_ns))
				e->predicted_ns = 0; /* before ABI 1.6 */
		} else if (type == TEV_FAIL) {
			ok = ok && raw_u64(event, rec, "error", &v);
			e->status = (int32_t)v;
		} else {
			ok = ok && raw_u64(event, rec, "prio", &v);
			e->prio = (uint32_t)v;
		}
	}
	if (!ok) {
		fprintf(stderr, "%s: trace: a %s event lacks a field this accelctl reads (a newer module?)\n",
			progname, tev_names[type]);
		c->err = -EINVAL;
		return 1;
	}
	return 0;
}

struct record_opts {
	const char *tracing;  /* tracefs mount, NULL: found */
	unsigned int seconds; /* without a command */
	unsigned int buffer_kb;
	bool fences;
	char **cmd;           /* NULL: for @seconds */
	int cmd_status;       /* its exit status */
};

/* Run @o->cmd, or sleep @o->seconds; stop early on SIGINT/SIGTERM. */
static int record_run(struct record_opts *o)
{
	struct sigaction sa = { .sa_handler = on_stop };
	struct timespec slice = { 0, 100 * 1000 * 1000 };
	pid_t pid;
	int status;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (!o->cmd) {
		for (unsigned int i = 0; i < o->seconds * 10 && !stop_requested; i++)
			nanosleep(&slice, NULL);
		return 0;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "%s: trace: fork: %s\n", progname, strerror(errno));
		return -errno;
	}
	if (pid == 0) {
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		execvp(o->cmd[0], o->cmd);
		fprintf(stderr, "%s: trace: cannot run %s: %s\n", progname,
			o->cmd[0], strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			fprintf(stderr, "%s: trace: waitpid: %s\n", progname,
				strerror(errno));
			return -errno;
		}
		/* Our SIGINT went to the command too (same group): wait on. */
	}
	o->cmd_status = WIFEXITED(status) ? WEXITSTATUS(status) :
			128 + WTERMSIG(status);
	return 0;
}

/*
 * Whether @dir is a mounted tracefs, saying why not. libtracefs takes
 * any folder --tracing names, and may answer one where tracefs would be
 * (a bare mount point, debugfs's tracing/): without this, a tracefs not
 * mounted reads as a module not loaded, and modprobe mounts nothing.
 */
static bool tracefs_mounted(const char *dir)
{
	struct statfs sf;

	if (statfs(dir, &sf) < 0) {
		fprintf(stderr, "%s: trace: %s: %s%s\n", progname, dir,
			strerror(errno),
			errno == EACCES ? " (tracing needs root)" :
			errno == ENOENT ? ": pass the tracefs mount with --tracing DIR" : "");
		return false;
	}
	if (sf.f_type != TRACEFS_MAGIC) {
		fprintf(stderr, "%s: trace: tracefs is not mounted on %s: mount it with 'mount -t tracefs nodev %s' (as root), or pass its mount with --tracing DIR\n",
			progname, dir, dir);
		return false;
	}
	return true;
}

static int record(struct trace *t, struct record_opts *o, char *name,
		  size_t namelen)
{
	static const char *const systems[] = { "accelsched", "dma_fence", NULL };
	struct tracefs_instance *inst = NULL;
	struct raw_ctx ctx = { .t = t };
	struct tep_handle *tep = NULL;
	const char *dir = o->tracing;
	char path[4096];
	struct stat st;
	int ret = -1;

	if (dir && tracefs_set_tracing_dir((char *)dir)) {
		fprintf(stderr, "%s: trace: %s is not a tracefs mount\n", progname, dir);
		return -ENOENT;
	}
	dir = tracefs_tracing_dir();
	if (!dir) {
		fprintf(stderr, "%s: trace: tracefs is not mounted: mount it with 'mount -t tracefs nodev /sys/kernel/tracing' (as root)\n",
			progname);
		return -ENOENT;
	}
	if (!tracefs_mounted(dir))
		return -ENOENT;
	snprintf(path, sizeof(path), "%s/events/accelsched", dir);
	if (stat(path, &st) < 0) {
		int err = errno;

		if (err == ENOENT)
			fprintf(stderr, "%s: trace: %s does not exist: the accelsched module is not loaded (modprobe accelsched)\n",
				progname, path);
		else
			fprintf(stderr, "%s: trace: %s: %s%s\n", progname, path,
				strerror(err), err == EACCES ? " (tracing needs root)" : "");
		return -err;
	}
	snprintf(name, namelen, "accelctl-trace-%ld", (long)getpid());
	inst = tracefs_instance_create(name);
	if (!inst) {
		fprintf(stderr, "%s: trace: cannot create the tracefs instance %s/instances/%s: %s%s\n",
			progname, dir, name, strerror(errno),
			errno == EACCES || errno == EPERM ? " (tracing needs root)" : "");
		return -errno;
	}
	if (tracefs_instance_file_write(inst, "trace_clock", "mono") < 0 ||
	    tracefs_instance_set_buffer_size(inst, o->buffer_kb, -1) < 0 ||
	    tracefs_event_enable(inst, "accelsched", NULL) < 0 ||
	    (o->fences && tracefs_event_enable(inst, "dma_fence", "dma_fence_signaled") < 0)) {
		fprintf(stderr, "%s: trace: cannot set up the tracefs instance %s: %s\n",
			progname, name, strerror(errno));
		goto out;
	}
	stop_requested = 0;
	if (tracefs_trace_on(inst) < 0) {
		fprintf(stderr, "%s: trace: cannot start tracing: %s\n", progname,
			strerror(errno));
		goto out;
	}
	ret = record_run(o);
	tracefs_trace_off(inst);
	if (ret < 0)
		goto out;

	tep = tracefs_local_events_system(dir, systems);
	if (!tep) {
		fprintf(stderr, "%s: trace: cannot read the events' formats under %s/events\n",
			progname, dir);
		ret = -EIO;
		goto out;
	}
	for (int i = 0; i < TEV_COUNT; i++)
		ctx.ev[i] = tep_find_event_by_name(tep, i == TEV_FENCE_SIGNALED ?
						   "dma_fence" : "accelsched",
						   tev_names[i]);
	for (int i = 0; i < TEV_FENCE_SIGNALED; i++) {
		if (!ctx.ev[i]) {
			fprintf(stderr, "%s: trace: the module has no %s event: load a module of this accelctl's version\n",
				progname, tev_names[i]);
			ret = -ENOENT;
			goto out;
		}
	}
	if (tracefs_iterate_raw_events(tep, inst, NULL, 0, raw_event, &ctx) < 0 &&
	    !ctx.err) {
		fprintf(stderr, "%s: trace: cannot read the trace buffers: %s\n",
			progname, strerror(errno));
		ret = -EIO;
		goto out;
	}
	ret = ctx.err;
out:
	if (tep)
		tep_free(tep);
	tracefs_event_disable(inst, NULL, NULL);
	tracefs_instance_destroy(inst);
	tracefs_instance_free(inst);
	return ret;
}
#endif /* ACCELCTL_TRACEFS */

/* ---- the model: jobs, their lanes, their dependencies -------------------- */

enum job_end { END_NONE, END_COMPLETE, END_FAIL, END_TIMEOUT };

struct job {
	uint64_t client;
	uint32_t queue, id, prio;
	int engine;
	uint64_t t_submit, t_runnable, t_release, t_end;
	bool seen_submit, seen_runnable, seen_release;
	enum job_end end;
	int64_t status;
	uint64_t device_ns, predicted_ns;
	int qtid, etid;     /* its thread (lane) in its client's and engine's process */
	uint32_t serial;
};

struct point {
	size_t job;
	bool signal;
	uint64_t context, seqno;
};

struct model {
	struct job *jobs;
	size_t njobs, capjobs;
	struct point *pts;
	size_t npts, cappts;
	/* Open jobs by (client, id): ids are reused once a job ends. */
	size_t *open;       /* job index + 1, 0 empty */
	size_t ocap, nopen;
	/* The points of job i: pts[first[i]] .. pts[first[i + 1] - 1]. */
	size_t *first;
	uint64_t t0, t1;
};

static uint64_t okey(uint64_t client, uint32_t id)
{
	return (client << 32) ^ id ^ (client >> 32);
}

static size_t *open_slot(struct model *m, uint64_t client, uint32_t id,
			 bool *found)
{
	uint64_t k = okey(client, id);
	size_t h = (size_t)(k * 0x9e3779b97f4a7c15ull) & (m->ocap - 1);

	for (;; h = (h + 1) & (m->ocap - 1)) {
		size_t j = m->open[h];

		if (!j) {
			*found = false;
			return &m->open[h];
		}
		if (m->jobs[j - 1].client == client && m->jobs[j - 1].id == id) {
			*found = true;
			return &m->open[h];
		}
	}
}

/*
 * Removal from the open table: linear probing, so the following cluster
 * is re-inserted (the table is small: jobs in flight, not all jobs).
 */
static void open_del(struct model *m, size_t *slot)
{
	size_t h = (size_t)(slot - m->open);

	m->open[h] = 0;
	m->nopen--;
	for (h = (h + 1) & (m->ocap - 1); m->open[h]; h = (h + 1) & (m->ocap - 1)) {
		size_t j = m->open[h];
		bool found;

		m->open[h] = 0;
		*open_slot(m, m->jobs[j - 1].client, m->jobs[j - 1].id, &found) = j;
	}
}

static int open_grow(struct model *m)
{
	size_t oldcap = m->ocap, *old = m->open;

	m->ocap = oldcap ? oldcap * 2 : 256;
	m->open = calloc(m->ocap, sizeof(*m->open));
	if (!m->open)
		return -ENOMEM;
	for (size_t i = 0; i < oldcap; i++) {
		bool found;

		if (old[i])
			*open_slot(m, m->jobs[old[i] - 1].client,
				   m->jobs[old[i] - 1].id, &found) = old[i];
	}
	free(old);
	return 0;
}

/* The open job of @e's (client, job), made if it has none (its submission
 * came before the trace began). */
static struct job *job_of(struct model *m, const struct tev *e, bool fresh)
{
	size_t *slot;
	bool found;
	struct job *j;

	if (!m->ocap || m->nopen * 2 >= m->ocap)
		if (open_grow(m))
			return NULL;
	slot = open_slot(m, e->client, e->job, &found);
	if (found && !fresh)
		return &m->jobs[*slot - 1];
	if (found) /* a new submission reusing the id of a job never ended */
		open_del(m, slot), slot = open_slot(m, e->client, e->job, &found);
	if (m->njobs == m->capjobs) {
		size_t cap = m->capjobs ? m->capjobs * 2 : 256;
		struct job *grown = xrealloc(m->jobs, cap, sizeof(*grown));

		if (!grown)
			return NULL;
		m->jobs = grown;
		m->capjobs = cap;
	}
	j = &m->jobs[m->njobs++];
	memset(j, 0, sizeof(*j));
	j->client = e->client;
	j->queue = e->queue;
	j->id = e->job;
	j->engine = -1;
	j->prio = PRIO_UNKNOWN;
	j->t_submit = e->ts;
	j->serial = (uint32_t)m->njobs;
	*slot = m->njobs;
	m->nopen++;
	return j;
}

static int add_point(struct model *m, size_t job, const struct tev *e)
{
	if (m->npts == m->cappts) {
		size_t cap = m->cappts ? m->cappts * 2 : 256;
		struct point *grown = xrealloc(m->pts, cap, sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		m->pts = grown;
		m->cappts = cap;
	}
	m->pts[m->npts++] = (struct point){
		.job = job, .signal = e->type == TEV_SIGNAL,
		.context = e->context, .seqno = e->seqno,
	};
	return 0;
}

static int tev_cmp(const void *a, const void *b)
{
	const struct tev *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static int build(struct model *m, struct trace *t)
{
	qsort(t->ev, t->nev, sizeof(*t->ev), tev_cmp);
	if (t->nev) {
		m->t0 = t->ev[0].ts;
		m->t1 = t->ev[t->nev - 1].ts;
	}
	for (size_t i = 0; i < t->nev; i++) {
		const struct tev *e = &t->ev[i];
		struct job *j;
		size_t *slot;
		bool found;

		if (e->type == TEV_FENCE_SIGNALED)
			continue;
		j = job_of(m, e, e->type == TEV_SUBMIT);
		if (!j)
			return -ENOMEM;
		if (e->engine >= 0) {
			j->engine = e->engine;
			if (e->type != TEV_COMPLETE && e->type != TEV_FAIL)
				j->prio = e->prio;
		}
		switch (e->type) {
		case TEV_SUBMIT:
			j->seen_submit = true;
			break;
		case TEV_WAIT:
		case TEV_SIGNAL:
			if (add_point(m, (size_t)(j - m->jobs), e))
				return -ENOMEM;
			break;
		case TEV_RUNNABLE:
			j->seen_runnable = true;
			j->t_runnable = e->ts;
			break;
		case TEV_RELEASE:
			j->seen_release = true;
			j->t_release = e->ts;
			break;
		case TEV_COMPLETE:
		case TEV_FAIL:
		case TEV_TIMEOUT:
			j->end = e->type == TEV_COMPLETE ? END_COMPLETE :
				 e->type == TEV_FAIL ? END_FAIL : END_TIMEOUT;
			j->status = e->status;
			j->device_ns = e->device_ns;
			j->predicted_ns = e->predicted_ns;
			j->t_end = e->ts;
			slot = open_slot(m, j->client, j->id, &found);
			if (found)
				open_del(m, slot);
			break;
		default:
			break;
		}
	}
	for (size_t i = 0; i < m->njobs; i++)
		if (m->jobs[i].end == END_NONE)
			m->jobs[i].t_end = m->t1;
	/* Points by job, each job's in trace order (a counting sort). */
	m->first = calloc(m->njobs + 1, sizeof(*m->first));
	if (!m->first)
		return -ENOMEM;
	if (m->npts) {
		struct point *sorted = calloc(m->npts, sizeof(*sorted));
		size_t *next = calloc(m->njobs + 1, sizeof(*next));

		if (!sorted || !next) {
			free(sorted);
			free(next);
			return -ENOMEM;
		}
		for (size_t i = 0; i < m->npts; i++)
			m->first[m->pts[i].job + 1]++;
		for (size_t i = 0; i < m->njobs; i++)
			m->first[i + 1] += m->first[i];
		memcpy(next, m->first, (m->njobs + 1) * sizeof(*next));
		for (size_t i = 0; i < m->npts; i++)
			sorted[next[m->pts[i].job]++] = m->pts[i];
		free(m->pts);
		free(next);
		m->pts = sorted;
		m->cappts = m->npts;
	}
	return 0;
}

/*
 * Lanes: interval partitioning of @idx's jobs (sorted by start) into the
 * fewest threads, the lowest free one first. Returns the number of lanes.
 */
struct span_ref {
	size_t job;
	uint64_t start, end;
	uint64_t group; /* lanes are per group */
};

static int span_cmp(const void *a, const void *b)
{
	const struct span_ref *x = a, *y = b;

	if (x->group != y->group)
		return x->group < y->group ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->job < y->job ? -1 : x->job > y->job;
}

/*
 * Assign lanes to @n spans, writing each job's qtid (or etid with
 * @engine); the first job of each lane goes to @firsts (n entries room),
 * their count to @nfirsts, for naming the lanes. Returns 0 or -ENOMEM.
 */
static int assign_lanes(struct span_ref *s, size_t n, struct model *m, bool engine,
			size_t *firsts, size_t *nfirsts)
{
	uint64_t *lane_end = NULL;
	size_t nlanes = 0, cap = 0;

	qsort(s, n, sizeof(*s), span_cmp);
	for (size_t i = 0; i < n; i++) {
		size_t l;

		if (i == 0 || s[i].group != s[i - 1].group)
			nlanes = 0;
		for (l = 0; l < nlanes; l++)
			if (lane_end[l] <= s[i].start)
				break;
		if (l == nlanes) {
			if (nlanes == cap) {
				uint64_t *g = xrealloc(lane_end, cap ? cap * 2 : 16, sizeof(*g));

				if (!g) {
					free(lane_end);
					return -ENOMEM;
				}
				lane_end = g;
				cap = cap ? cap * 2 : 16;
			}
			nlanes++;
			firsts[(*nfirsts)++] = s[i].job;
		}
		lane_end[l] = s[i].end;
		if (engine)
			m->jobs[s[i].job].etid = (int)l + 1;
		else
			m->jobs[s[i].job].qtid = (int)l;
	}
	free(lane_end);
	return 0;
}

/* ---- output ------------------------------------------------------------- */

/* Engines: pid 1 + index; clients: CLIENT_PID0 + their order; fences one more. */
#define CLIENT_PID0 1000
#define QUEUE_TID(queue, lane) \
	((int)((((uint32_t)(queue) & 0x7fff) << 16) | (((uint32_t)(lane) + 1) & 0xffff)))

static const char *const prio_names[] = { "high", "normal", "low" };

static const char *prio_name(uint32_t p)
{
	return p < 3 ? prio_names[p] : "?";
}

struct out {
	FILE *f;
	bool first;
	uint64_t *clients;
	size_t nclients;
};

static void ts_us(FILE *f, uint64_t ns)
{
	fprintf(f, "%" PRIu64 ".%03u", ns / 1000, (unsigned int)(ns % 1000));
}

static void ev_begin(struct out *o, const char *ph, const char *name,
		     const char *cat, int pid, int tid, uint64_t ts)
{
	fprintf(o->f, "%s\n{\"ph\":\"%s\",\"name\":", o->first ? "" : ",", ph);
	o->first = false;
	json_fstring(o->f, name);
	fprintf(o->f, ",\"cat\":\"%s\",\"pid\":%d,\"tid\":%d,\"ts\":", cat, pid, tid);
	ts_us(o->f, ts);
}

static void meta(struct out *o, const char *what, int pid, int tid,
		 const char *name)
{
	fprintf(o->f, "%s\n{\"ph\":\"M\",\"name\":\"%s\",\"pid\":%d,\"tid\":%d,\"args\":{\"name\":",
		o->first ? "" : ",", what, pid, tid);
	o->first = false;
	json_fstring(o->f, name);
	fputs("}}", o->f);
}

static void slice(struct out *o, const char *name, int pid, int tid,
		  uint64_t start, uint64_t end)
{
	ev_begin(o, "X", name, "job", pid, tid, start);
	fputs(",\"dur\":", o->f);
	ts_us(o->f, end > start ? end - start : 0);
}

static int client_pid(const struct out *o, uint64_t client)
{
	for (size_t i = 0; i < o->nclients; i++)
		if (o->clients[i] == client)
			return CLIENT_PID0 + (int)i;
	return CLIENT_PID0 - 1;
}

static const char *end_name(const struct job *j)
{
	switch (j->end) {
	case END_COMPLETE:
		return j->status ? "completed with an error" : "completed";
	case END_FAIL:
		return "failed";
	case END_TIMEOUT:
		return "timed out";
	default:
		return "unfinished";
	}
}

static const char *errname(int64_t e)
{
	const char *n = e < 0 && e > -4096 ? strerrorname_np((int)-e) : NULL;

	return n ? n : "?";
}

static void job_args(struct out *o, const struct model *m, const struct trace *t,
		     const struct job *j)
{
	fprintf(o->f, ",\"args\":{\"client\":%" PRIu64 ",\"queue\":%" PRIu32
		",\"job\":%" PRIu32 ",\"engine\":", j->client, j->queue, j->id);
	json_fstring(o->f, j->engine >= 0 ? t->engines[j->engine] : NULL);
	fputs(",\"priority\":", o->f);
	json_fstring(o->f, j->prio == PRIO_UNKNOWN ? NULL : prio_name(j->prio));
	fprintf(o->f, ",\"end\":\"%s\"", end_name(j));
	if (j->end == END_COMPLETE || j->end == END_FAIL)
		fprintf(o->f, ",\"status\":%" PRId64 ",\"status_name\":\"%s\"",
			j->status, j->status ? errname(j->status) : "0");
	if (j->end == END_COMPLETE) {
		fprintf(o->f, ",\"device_ns\":%" PRIu64, j->device_ns);
		if (j->predicted_ns)
			fprintf(o->f, ",\"predicted_ns\":%" PRIu64, j->predicted_ns);
	}
	if (!j->seen_submit)
		fputs(",\"submitted_before_trace\":true", o->f);
	for (int sig = 0; sig < 2; sig++) {
		bool first = true;

		size_t ji = (size_t)(j - m->jobs);

		fprintf(o->f, ",\"%s\":[", sig ? "signals" : "waits");
		for (size_t i = m->first[ji]; i < m->first[ji + 1]; i++) {
			const struct point *p = &m->pts[i];

			if (p->signal != sig)
				continue;
			fprintf(o->f, "%s\"%" PRIu64 ":%" PRIu64 "\"", first ? "" : ",",
				p->context, p->seqno);
			first = false;
		}
		fputc(']', o->f);
	}
	fputc('}', o->f);
}

static int u64_cmp(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return *x < *y ? -1 : *x > *y;
}

static int sig_cmp(const void *a, const void *b)
{
	const struct point *x = a, *y = b;

	if (x->context != y->context)
		return x->context < y->context ? -1 : 1;
	if (x->seqno != y->seqno)
		return x->seqno < y->seqno ? -1 : 1;
	return x->job < y->job ? -1 : x->job > y->job;
}

/*
 * The producer of wait @w: among the signals on its context, the smallest
 * point at or above it; of several promises of that point, the latest
 * submitted at or before the waiter (the one the waiter's submission saw).
 */
static const struct point *producer(const struct model *m, const struct point *sigs,
				    size_t nsigs, const struct point *w)
{
	const struct job *waiter = &m->jobs[w->job];
	size_t lo = 0, hi = nsigs;
	const struct point *best = NULL;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (sigs[mid].context < w->context ||
		    (sigs[mid].context == w->context && sigs[mid].seqno < w->seqno))
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < nsigs && sigs[i].context == w->context; i++) {
		const struct job *p = &m->jobs[sigs[i].job];

		if (best && sigs[i].seqno != best->seqno)
			break;
		if (sigs[i].job == w->job || p->t_submit > waiter->t_submit)
			continue;
		if (!best || p->t_submit >= m->jobs[best->job].t_submit)
			best = &sigs[i];
	}
	return best;
}

static int write_trace(FILE *f, struct model *m, const struct trace *t)
{
	struct out o = { .f = f, .first = true };
	size_t nsigs = 0, nflows = 0, nqfirst = 0, nefirst = 0, nctx = 0;
	size_t *qfirst, *efirst;
	struct span_ref *spans;
	uint64_t *ctxs = NULL;
	struct point *sigs;
	char name[256];
	int ret = -ENOMEM;

	spans = calloc(m->njobs ? m->njobs : 1, sizeof(*spans));
	sigs = calloc(m->npts ? m->npts : 1, sizeof(*sigs));
	ctxs = calloc(m->npts ? m->npts : 1, sizeof(*ctxs));
	qfirst = calloc(m->njobs ? m->njobs : 1, sizeof(*qfirst));
	efirst = calloc(m->njobs ? m->njobs : 1, sizeof(*efirst));
	o.clients = calloc(m->njobs ? m->njobs : 1, sizeof(*o.clients));
	if (!spans || !sigs || !ctxs || !qfirst || !efirst || !o.clients)
		goto out;
	/* Clients in order of id. */
	for (size_t i = 0; i < m->njobs; i++) {
		size_t k;

		for (k = 0; k < o.nclients && o.clients[k] != m->jobs[i].client; k++)
			;
		if (k == o.nclients)
			o.clients[o.nclients++] = m->jobs[i].client;
	}
	for (size_t i = 1; i < o.nclients; i++)
		for (size_t k = i; k > 0 && o.clients[k - 1] > o.clients[k]; k--) {
			uint64_t x = o.clients[k];

			o.clients[k] = o.clients[k - 1];
			o.clients[k - 1] = x;
		}

	/* Queue lanes: per (client, queue), over [submit, end]. */
	for (size_t i = 0; i < m->njobs; i++)
		spans[i] = (struct span_ref){
			.job = i, .start = m->jobs[i].t_submit, .end = m->jobs[i].t_end,
			.group = ((uint64_t)client_pid(&o, m->jobs[i].client) << 32) |
				 m->jobs[i].queue,
		};
	if (assign_lanes(spans, m->njobs, m, false, qfirst, &nqfirst) < 0)
		goto out;
	/* Engine lanes: per engine, over [release, end] of released jobs. */
	{
		size_t n = 0;

		for (size_t i = 0; i < m->njobs; i++)
			if (m->jobs[i].seen_release)
				spans[n++] = (struct span_ref){
					.job = i, .start = m->jobs[i].t_release,
					.end = m->jobs[i].t_end,
					.group = (uint64_t)(m->jobs[i].engine + 1),
				};
		if (assign_lanes(spans, n, m, true, efirst, &nefirst) < 0)
			goto out;
	}

	fputs("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"generator\":\"accelctl trace\",\"clock\":\"CLOCK_MONOTONIC\",\"source\":", f);
	json_fstring(f, t->source);
	fprintf(f, ",\"events\":%zu,\"lost_events\":%" PRIu64 ",\"jobs\":%zu},\n\"traceEvents\":[",
		t->nev, t->lost, m->njobs);

	/* Names: engines, their lanes; clients, their queues' lanes. */
	for (size_t e = 0; e < t->nengines; e++) {
		snprintf(name, sizeof(name), "engine %s", t->engines[e]);
		meta(&o, "process_name", (int)e + 1, 0, name);
	}
	for (size_t c = 0; c < o.nclients; c++) {
		snprintf(name, sizeof(name), "client %" PRIu64, o.clients[c]);
		meta(&o, "process_name", CLIENT_PID0 + (int)c, 0, name);
	}
	for (size_t i = 0; i < nqfirst; i++) {
		const struct job *j = &m->jobs[qfirst[i]];

		if (j->qtid)
			snprintf(name, sizeof(name), "queue %" PRIu32 " (%s) #%d",
				 j->queue, prio_name(j->prio), j->qtid + 1);
		else
			snprintf(name, sizeof(name), "queue %" PRIu32 " (%s)",
				 j->queue, prio_name(j->prio));
		meta(&o, "thread_name", client_pid(&o, j->client),
		     QUEUE_TID(j->queue, j->qtid), name);
	}
	for (size_t i = 0; i < nefirst; i++) {
		const struct job *j = &m->jobs[efirst[i]];

		snprintf(name, sizeof(name), "in flight #%d", j->etid);
		meta(&o, "thread_name", j->engine + 1, j->etid, name);
	}

	/* The jobs. */
	for (size_t i = 0; i < m->njobs; i++) {
		const struct job *j = &m->jobs[i];
		int pid = client_pid(&o, j->client), tid = QUEUE_TID(j->queue, j->qtid);
		uint64_t runnable = j->seen_runnable ? j->t_runnable :
				    j->seen_release ? j->t_release : j->t_end;

		if (j->end == END_COMPLETE && j->status)
			snprintf(name, sizeof(name), "job %" PRIu32 " (status %s)", j->id,
				 errname(j->status));
		else if (j->end == END_FAIL)
			snprintf(name, sizeof(name), "job %" PRIu32 " (failed: %s)", j->id,
				 errname(j->status));
		else if (j->end == END_TIMEOUT)
			snprintf(name, sizeof(name), "job %" PRIu32 " (timed out)", j->id);
		else
			snprintf(name, sizeof(name), "job %" PRIu32, j->id);
		slice(&o, name, pid, tid, j->t_submit, j->t_end);
		job_args(&o, m, t, j);
		fputc('}', f);
		if (runnable > j->t_submit) {
			slice(&o, "waiting", pid, tid, j->t_submit, runnable);
			fputc('}', f);
		}
		if (j->seen_runnable && j->t_release >= j->t_runnable && j->seen_release) {
			slice(&o, "runnable", pid, tid, j->t_runnable, j->t_release);
			fputc('}', f);
		} else if (j->seen_runnable && !j->seen_release) {
			slice(&o, "runnable", pid, tid, j->t_runnable, j->t_end);
			fputc('}', f);
		}
		if (j->seen_release) {
			slice(&o, "running", pid, tid, j->t_release, j->t_end);
			fputc('}', f);
			snprintf(name, sizeof(name), "client %" PRIu64 " queue %" PRIu32
				 " job %" PRIu32, j->client, j->queue, j->id);
			slice(&o, name, j->engine + 1, j->etid, j->t_release, j->t_end);
			job_args(&o, m, t, j);
			fputc('}', f);
		}
		if (j->end == END_FAIL || j->end == END_TIMEOUT) {
			snprintf(name, sizeof(name), j->end == END_FAIL ? "failed: %s" :
				 "timed out", errname(j->status));
			ev_begin(&o, "i", name, "job", pid, tid, j->t_end);
			fputs(",\"s\":\"t\"}", f);
		}
	}

	/* Dependencies: a flow from each wait's producer to the waiter. */
	for (size_t i = 0; i < m->npts; i++)
		if (m->pts[i].signal)
			sigs[nsigs++] = m->pts[i];
	qsort(sigs, nsigs, sizeof(*sigs), sig_cmp);
	for (size_t i = 0; i < m->npts; i++) {
		const struct point *w = &m->pts[i], *s;
		const struct job *j, *p;
		uint64_t ts_s, ts_f;

		if (w->signal || !(s = producer(m, sigs, nsigs, w)))
			continue;
		j = &m->jobs[w->job];
		p = &m->jobs[s->job];
		/* Arrive where the waiter became runnable (or ended). */
		ts_f = j->seen_runnable ? j->t_runnable : j->t_end;
		if (ts_f < j->t_submit)
			ts_f = j->t_submit;
		/* Leave from inside the producer, before the arrival. */
		ts_s = p->t_end > p->t_submit ? p->t_end - 1 : p->t_submit;
		if (ts_s > ts_f && ts_f > p->t_submit)
			ts_s = ts_f - 1;
		if (ts_s < p->t_submit)
			ts_s = p->t_submit;
		nflows++;
		snprintf(name, sizeof(name), "point %" PRIu64 ":%" PRIu64, w->context,
			 w->seqno);
		ev_begin(&o, "s", name, "dependency", client_pid(&o, p->client),
			 QUEUE_TID(p->queue, p->qtid), ts_s);
		fprintf(f, ",\"id\":%zu}", nflows);
		ev_begin(&o, "f", name, "dependency", client_pid(&o, j->client),
			 QUEUE_TID(j->queue, j->qtid), ts_f);
		fprintf(f, ",\"bp\":\"e\",\"id\":%zu}", nflows);
	}

	/*
	 * The kernel's own fence events, for the traced points' contexts
	 * (matched on their low 32 bits: the events' fields are 32-bit).
	 */
	for (size_t i = 0; i < m->npts; i++)
		ctxs[nctx++] = (uint32_t)m->pts[i].context;
	qsort(ctxs, nctx, sizeof(*ctxs), u64_cmp);
	{
		const int fpid = CLIENT_PID0 - 1;
		bool named = false;

		for (size_t i = 0; i < t->nev; i++) {
			const struct tev *e = &t->ev[i];
			uint64_t c32 = (uint32_t)e->context;
			int tid = (int)(e->context & 0x3fffffff);

			if (e->type != TEV_FENCE_SIGNALED ||
			    !bsearch(&c32, ctxs, nctx, sizeof(*ctxs), u64_cmp))
				continue;
			if (!named) {
				meta(&o, "process_name", fpid, 0, "dma_fence");
				named = true;
			}
			snprintf(name, sizeof(name), "context %" PRIu64, e->context);
			meta(&o, "thread_name", fpid, tid, name);
			snprintf(name, sizeof(name), "signaled %" PRIu64 ":%" PRIu64,
				 e->context, e->seqno);
			ev_begin(&o, "i", name, "dma_fence", fpid, tid, e->ts);
			fputs(",\"s\":\"t\"}", f);
		}
	}
	fputs("\n]}\n", f);
	ret = ferror(f) ? -EIO : 0;
out:
	free(spans);
	free(sigs);
	free(ctxs);
	free(qfirst);
	free(efirst);
	free(o.clients);
	return ret;
}

/* ---- the command -------------------------------------------------------- */

static void trace_usage(FILE *f)
{
	fprintf(f,
		"Usage: %s trace [-o FILE] [-d SECONDS] [--fences] [--buffer-kb KB]\n"
		"                  [--tracing DIR] [-- COMMAND [ARG...]]\n"
		"       %s trace --input TEXT [-o FILE]\n"
		"\n"
		"Record the accelsched module's tracepoints while COMMAND runs (or for\n"
		"SECONDS, default 5; Ctrl-C stops early) and write a trace that Perfetto\n"
		"(ui.perfetto.dev) and chrome://tracing open: a track per engine credit\n"
		"and per queue, each job's waiting, runnable and running spans, arrows\n"
		"along sync-point dependencies, failures marked. Needs root (tracefs).\n"
		"\n"
		"  -o, --output FILE  the trace (default accelsched-trace.json; - for stdout)\n"
		"  -d, --duration S   record for S seconds when no command is given\n"
		"                     (1..86400, default 5)\n"
		"      --fences       also record dma_fence:dma_fence_signaled\n"
		"      --buffer-kb KB the trace buffer per CPU (64..1048576, default 8192)\n"
		"      --tracing DIR  the tracefs mount (default: found)\n"
		"  -i, --input TEXT   convert a text trace instead (the tracefs 'trace'\n"
		"                     file or 'trace-cmd report' output; - for stdin)\n"
		"  -h, --help         print this help\n"
		"\n"
		"Exit status: COMMAND's when one is given (the trace is written anyway);\n"
		"otherwise 0; 1 when recording or writing fails; 2 on a usage error.\n",
		progname, progname);
}

int cmd_trace(int argc, char **argv)
{
	enum { OPT_OUTPUT = OPT_LONG, OPT_DURATION, OPT_FENCES, OPT_BUFFER_KB,
	       OPT_TRACING, OPT_INPUT, OPT_HELP };
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, OPT_OUTPUT },
		{ "duration", required_argument, NULL, OPT_DURATION },
		{ "fences", no_argument, NULL, OPT_FENCES },
		{ "buffer-kb", required_argument, NULL, OPT_BUFFER_KB },
		{ "tracing", required_argument, NULL, OPT_TRACING },
		{ "input", required_argument, NULL, OPT_INPUT },
		{ "help", no_argument, NULL, OPT_HELP },
		{ NULL, 0, NULL, 0 },
	};
	const char *output = "accelsched-trace.json", *input = NULL, *tracing = NULL;
	uint64_t seconds = 5, buffer_kb = 8192;
	bool duration_given = false, fences = false;
	bool output_given = false, buffer_given = false, tracing_given = false;
	bool input_given = false;
	struct trace t = { 0 };
	struct model m = { 0 };
	char instance[64] = "";
	int c, ret, status = 0;
	FILE *f;

	optind = 0;
	while ((c = getopt_long(argc, argv, "+:o:d:i:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
		case OPT_OUTPUT:
			if (option_once("trace", "-o/--output", &output_given))
				return EXIT_USAGE;
			output = optarg;
			break;
		case 'd':
		case OPT_DURATION:
			if (option_once("trace", "-d/--duration", &duration_given))
				return EXIT_USAGE;
			if (parse_u64(progname, "trace: -d", optarg, 1, 86400, &seconds))
				return EXIT_USAGE;
			break;
		case OPT_FENCES:
			fences = true;
			break;
		case OPT_BUFFER_KB:
			if (option_once("trace", "--buffer-kb", &buffer_given))
				return EXIT_USAGE;
			if (parse_u64(progname, "trace: --buffer-kb", optarg, 64,
				      1048576, &buffer_kb))
				return EXIT_USAGE;
			break;
		case OPT_TRACING:
			if (option_once("trace", "--tracing", &tracing_given))
				return EXIT_USAGE;
			tracing = optarg;
			break;
		case 'i':
		case OPT_INPUT:
			if (option_once("trace", "-i/--input", &input_given))
				return EXIT_USAGE;
			input = optarg;
			break;
		case 'h':
		case OPT_HELP:
			trace_usage(stdout);
			return EXIT_SUCCESS;
		default:
			return option_error("trace", c, argv, NULL);
		}
	}
	if (input && (optind < argc || duration_given || fences || tracing))
		return usage_error("trace: --input converts a recorded trace: it takes no command, -d, --fences or --tracing");
	if (optind < argc && duration_given)
		return usage_error("trace: give a command or -d SECONDS, not both (the command's run is the duration)");
	if (!*output)
		return usage_error("trace: -o needs a file name (or - for stdout)");

	if (input) {
		ret = read_text(&t, input);
		if (ret) {
			trace_free(&t);
			return EXIT_FAILURE;
		}
	} else {
#ifdef ACCELCTL_TRACEFS
		struct record_opts ro = {
			.tracing = tracing, .seconds = (unsigned int)seconds,
			.buffer_kb = (unsigned int)buffer_kb, .fences = fences,
			.cmd = optind < argc ? argv + optind : NULL,
		};

		ret = record(&t, &ro, instance, sizeof(instance));
		if (ret) {
			trace_free(&t);
			return EXIT_FAILURE;
		}
		status = ro.cmd_status;
		t.source = instance;
#else
		fprintf(stderr, "%s: trace: this accelctl was built without libtracefs, so it cannot record: rebuild with libtracefs-dev installed, or record with 'trace-cmd record -e accelsched' and convert with 'accelctl trace --input'\n",
			progname);
		trace_free(&t);
		return EXIT_FAILURE;
#endif
	}
	if (t.lost)
		fprintf(stderr, "%s: trace: the kernel dropped %" PRIu64 " events (its buffer was full): the trace misses them; record with a larger --buffer-kb\n",
			progname, t.lost);

	ret = build(&m, &t);
	f = ret ? NULL : strcmp(output, "-") ? fopen(output, "w") : stdout;
	if (!ret && !f) {
		fprintf(stderr, "%s: trace: cannot write %s: %s\n", progname, output,
			strerror(errno));
		ret = -errno;
	}
	if (!ret)
		ret = write_trace(f, &m, &t);
	if (f && f != stdout && fclose(f) && !ret)
		ret = -errno;
	if (ret)
		fprintf(stderr, "%s: trace: writing %s failed: %s\n", progname,
			output, strerror(-ret));
	else if (f != stdout)
		fprintf(stderr, "%s: trace: %zu jobs, %zu events in %s (open it in ui.perfetto.dev)\n",
			progname, m.njobs, t.nev, output);
	free(m.jobs);
	free(m.pts);
	free(m.open);
	free(m.first);
	trace_free(&t);
	if (ret)
		return EXIT_FAILURE;
	return status;
}
