// SPDX-License-Identifier: MIT
/*
 * Check suite "top": `accelctl top` against a known load on the module.
 *
 * Two files of this process are two tenants (each file opened from the
 * root cgroup is a tenant of its own). With raw ioctls they make queues on
 * an engine of their own, release jobs and complete them with explicit
 * device times, so that every engine time is exact, then hold four jobs in
 * flight (the engine's four credits) and one runnable behind them.
 * `accelctl top --once -J` must show exactly that for the engine, both
 * tenants, both clients and their queues, with the latencies the files'
 * own fdinfo says; the text form must print the values the JSON holds.
 * Another process that comes and goes while top runs must not disturb it.
 *
 * Runs where /dev/accelsched opens (the VM, through scripts/check.sh,
 * with accelctl-static beside it); elsewhere every test prints "SKIP:" and
 * passes. ACCEL_TEST_ACCELCTL names the accelctl to run (default:
 * accelctl-static, from PATH).
 */
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <sys/ioctl.h>
#include <sys/wait.h>

#include <accelsched.h>

#include "test-util.h"

#define DEV_PATH "/dev/" ACCEL_DEVICE_NAME
#define CREDITS 4
#define MS 1000000ull

/* ---- the load ------------------------------------------------------------ */

static int xioctl(int fd, unsigned long req, void *arg)
{
	return ioctl(fd, req, arg) ? -errno : 0;
}

static uint32_t queue_new(int fd, const char *engine, uint32_t prio,
			  uint32_t weight)
{
	struct accel_queue_create a = {
		.priority = prio, .weight = weight, .credits = CREDITS,
	};
	int ret;

	snprintf(a.engine, sizeof(a.engine), "%s", engine);
	ret = xioctl(fd, ACCEL_IOCTL_QUEUE_CREATE, &a);
	ck_assert_msg(ret == 0, "QUEUE_CREATE(%s, priority %u, weight %u) returned %d (%s)",
		      engine, prio, weight, ret, test_errname(ret));
	return a.handle;
}

/* One job on @queue, without waits or signals; its id. */
static uint32_t submit(int fd, uint32_t queue)
{
	struct accel_job j = { .queue = queue };
	struct accel_job_submit a = { .jobs = (uintptr_t)&j, .count = 1 };
	int ret = xioctl(fd, ACCEL_IOCTL_JOB_SUBMIT, &a);

	ck_assert_msg(ret == 0, "JOB_SUBMIT on queue %u returned %d (%s)",
		      queue, ret, test_errname(ret));
	return j.id;
}

/* Take @n RELEASED events of @fd, within 10 s. */
static void wait_releases(int fd, uint32_t n)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	struct accel_job_event ev[8];
	uint32_t got = 0;

	for (int i = 0; got < n && i < 10000; i++) {
		struct accel_job_fetch f = {
			.events = (uintptr_t)ev, .max = n - got < 8 ? n - got : 8,
		};

		ck_assert_int_eq(xioctl(fd, ACCEL_IOCTL_JOB_FETCH, &f), 0);
		for (uint32_t k = 0; k < f.count; k++)
			ck_assert_msg(ev[k].type == ACCEL_JOB_EVENT_RELEASED,
				      "job %u: event type %u, expected RELEASED",
				      ev[k].id, ev[k].type);
		got += f.count;
		if (got < n)
			poll(&p, 1, 1);
	}
	ck_assert_msg(got == n, "%u of %u jobs released within 10 s", got, n);
}

static void complete(int fd, uint32_t id, uint64_t device_ns)
{
	struct accel_job_complete c = { .id = id, .device_ns = device_ns };
	int ret = xioctl(fd, ACCEL_IOCTL_JOB_COMPLETE, &c);

	ck_assert_msg(ret == 0, "JOB_COMPLETE(job %u, %" PRIu64 " ns) returned %d (%s)",
		      id, device_ns, ret, test_errname(ret));
}

/* The number after "@key:\t" in /proc/self/fdinfo/@fd; fails without it. */
static uint64_t fdinfo_u64(int fd, const char *key)
{
	char path[64], line[512];
	size_t n = strlen(key);
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "re");
	ck_assert_msg(f != NULL, "fopen(%s): %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, key, n) == 0 && line[n] == ':' && line[n + 1] == '\t') {
			fclose(f);
			return strtoull(line + n + 2, NULL, 10);
		}
	}
	fclose(f);
	ck_abort_msg("%s has no line '%s:'", path, key);
	return 0;
}

/* Field @field of queue @handle's line in /proc/self/fdinfo/@fd. */
static uint64_t fdinfo_queue_u64(int fd, uint32_t handle, const char *field)
{
	char path[64], line[512], key[64];
	const char *p;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	snprintf(key, sizeof(key), "accel-queue-%u:\t", handle);
	f = fopen(path, "re");
	ck_assert_msg(f != NULL, "fopen(%s): %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, key, strlen(key)) != 0)
			continue;
		fclose(f);
		snprintf(key, sizeof(key), " %s=", field);
		p = strstr(line, key);
		ck_assert_msg(p != NULL, "%s: queue %u's line has no %s: %s", path,
			      handle, field, line);
		return strtoull(p + strlen(key), NULL, 10);
	}
	fclose(f);
	ck_abort_msg("%s has no line for queue %u", path, handle);
	return 0;
}

/* ---- running accelctl ---------------------------------------------------- */

static const char *accelctl(void)
{
	const char *p = getenv("ACCEL_TEST_ACCELCTL");

	return p && *p ? p : "accelctl-static";
}

/* `accelctl top @args`'s stdout; it must exit 0. */
static char *run_top(const char *args)
{
	char cmd[512], *out = NULL;
	size_t len = 0, n;
	FILE *f, *mem = open_memstream(&out, &len);
	char buf[4096];
	int status;

	snprintf(cmd, sizeof(cmd), "%s top %s 2>&1", accelctl(), args);
	f = popen(cmd, "r");
	ck_assert_msg(f != NULL, "popen(%s): %s", cmd, strerror(errno));
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		fwrite(buf, 1, n, mem);
	status = pclose(f);
	fclose(mem);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "`%s` exited with status 0x%x:\n%s", cmd, status, out);
	return out;
}

/* ---- a JSON reader, enough for top's lines ------------------------------- */

enum jtype { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ };

struct jval {
	enum jtype type;
	char *text;		/* a string's value, a number's or literal's text */
	size_t n;
	char **keys;		/* J_OBJ */
	struct jval **items;	/* J_ARR, J_OBJ */
};

static void jws(const char **p)
{
	*p += strspn(*p, " \t\r\n");
}

static char *jstring(const char **p)
{
	size_t n = 0, cap = 16;
	char *s = malloc(cap);

	ck_assert_ptr_nonnull(s);
	for ((*p)++; **p && **p != '"'; n++) {
		char c = *(*p)++;

		if (c == '\\') {
			unsigned int u = 0;

			c = *(*p)++;
			if (c == 'n')
				c = '\n';
			else if (c == 't')
				c = '\t';
			else if (c == 'u' && sscanf(*p, "%4x", &u) == 1)
				c = (char)u, *p += 4;
		}
		if (n + 2 > cap)
			s = realloc(s, cap *= 2);
		ck_assert_ptr_nonnull(s);
		s[n] = c;
	}
	ck_assert_msg(**p == '"', "JSON: a string does not end");
	(*p)++;
	s[n] = '\0';
	return s;
}

static struct jval *jparse(const char **p)
{
	struct jval *v = calloc(1, sizeof(*v));

	ck_assert_ptr_nonnull(v);
	jws(p);
	if (**p == '{' || **p == '[') {
		char close = **p == '{' ? '}' : ']';

		v->type = close == '}' ? J_OBJ : J_ARR;
		(*p)++;
		jws(p);
		while (**p != close) {
			v->items = realloc(v->items, (v->n + 1) * sizeof(*v->items));
			v->keys = realloc(v->keys, (v->n + 1) * sizeof(*v->keys));
			ck_assert(v->items && v->keys);
			v->keys[v->n] = NULL;
			if (v->type == J_OBJ) {
				ck_assert_msg(**p == '"', "JSON: a key expected at '%.30s'", *p);
				v->keys[v->n] = jstring(p);
				jws(p);
				ck_assert_msg(**p == ':', "JSON: ':' expected at '%.30s'", *p);
				(*p)++;
			}
			v->items[v->n++] = jparse(p);
			jws(p);
			if (**p == ',') {
				(*p)++;
				jws(p);
				continue;
			}
			ck_assert_msg(**p == close, "JSON: ',' or '%c' expected at '%.30s'",
				      close, *p);
		}
		(*p)++;
	} else if (**p == '"') {
		v->type = J_STR;
		v->text = jstring(p);
	} else {
		size_t len = strspn(*p, "-+.0123456789eEnulltruefals");

		ck_assert_msg(len > 0, "JSON: a value expected at '%.30s'", *p);
		v->text = strndup(*p, len);
		v->type = strcmp(v->text, "null") == 0 ? J_NULL :
			  strcmp(v->text, "true") == 0 || strcmp(v->text, "false") == 0 ?
			  J_BOOL : J_NUM;
		*p += len;
	}
	return v;
}

static struct jval *jget(const struct jval *o, const char *key)
{
	ck_assert_msg(o && o->type == J_OBJ, "JSON: no object to find '%s' in", key);
	for (size_t i = 0; i < o->n; i++)
		if (strcmp(o->keys[i], key) == 0)
			return o->items[i];
	ck_abort_msg("JSON: no key '%s'", key);
	return NULL;
}

/* Member @key as printed: a number's digits, a string, "null" as "-". */
static const char *jtext(const struct jval *o, const char *key)
{
	const struct jval *v = jget(o, key);

	return v->type == J_NULL ? "-" : v->text;
}

static uint64_t ju64(const struct jval *o, const char *key)
{
	const struct jval *v = jget(o, key);

	ck_assert_msg(v->type == J_NUM, "JSON: '%s' is not a number", key);
	return strtoull(v->text, NULL, 10);
}

static bool jnull(const struct jval *o, const char *key)
{
	return jget(o, key)->type == J_NULL;
}

/* The element of array @a whose @key prints as @value, or NULL. */
static struct jval *jfind(const struct jval *a, const char *key, const char *value)
{
	ck_assert_msg(a && a->type == J_ARR, "JSON: no array to search");
	for (size_t i = 0; i < a->n; i++)
		if (strcmp(jtext(a->items[i], key), value) == 0)
			return a->items[i];
	return NULL;
}

static void jfree(struct jval *v)
{
	for (size_t i = 0; i < v->n; i++) {
		free(v->keys[i]);
		jfree(v->items[i]);
	}
	free(v->keys);
	free(v->items);
	free(v->text);
	free(v);
}

/* ---- the test ------------------------------------------------------------ */

struct load {
	char engine[ACCEL_ENGINE_NAME_LEN];
	int fd[2];		/* A, B */
	uint64_t id[2];		/* their drm-client-id */
	uint32_t qa1, qa2, qb1;
	uint64_t lat[2];	/* accel-latency-<engine> of A and B */
	char comm[32];
};

/* Skips (false) where the device does not open. */
static bool load_make(struct load *l)
{
	uint32_t j[3];
	char key[96];
	FILE *f;

	l->fd[0] = open(DEV_PATH, O_RDWR | O_CLOEXEC);
	if (l->fd[0] < 0 && errno == ENOENT)
		return false;
	ck_assert_msg(l->fd[0] >= 0, "open(%s): %s", DEV_PATH, strerror(errno));
	l->fd[1] = open(DEV_PATH, O_RDWR | O_CLOEXEC);
	ck_assert_msg(l->fd[1] >= 0, "open(%s): %s", DEV_PATH, strerror(errno));
	snprintf(l->engine, sizeof(l->engine), "top-%d", (int)getpid());
	for (int i = 0; i < 2; i++) {
		l->id[i] = fdinfo_u64(l->fd[i], "drm-client-id");
		ck_assert_msg(fdinfo_u64(l->fd[i], "accel-tenant") == 0,
			      "file %d is not a tenant of its own: run this test in the root cgroup", i);
	}
	l->qa1 = queue_new(l->fd[0], l->engine, ACCEL_PRIORITY_NORMAL, 1);
	l->qa2 = queue_new(l->fd[0], l->engine, ACCEL_PRIORITY_LOW, 3);
	l->qb1 = queue_new(l->fd[1], l->engine, ACCEL_PRIORITY_NORMAL, 2);

	/* Done: A 1 + 2 + 3 ms on qa1, B 5 + 5 ms on qb1. */
	for (int i = 0; i < 3; i++)
		j[i] = submit(l->fd[0], l->qa1);
	wait_releases(l->fd[0], 3);
	for (int i = 0; i < 3; i++)
		complete(l->fd[0], j[i], (uint64_t)(i + 1) * MS);
	for (int i = 0; i < 2; i++)
		j[i] = submit(l->fd[1], l->qb1);
	wait_releases(l->fd[1], 2);
	for (int i = 0; i < 2; i++)
		complete(l->fd[1], j[i], 5 * MS);

	/* Held: one on qa2, two on qb1, one on qa1 (4 credits), one runnable. */
	submit(l->fd[0], l->qa2);
	submit(l->fd[1], l->qb1);
	submit(l->fd[1], l->qb1);
	wait_releases(l->fd[1], 2);
	submit(l->fd[0], l->qa1);
	submit(l->fd[0], l->qa1);
	wait_releases(l->fd[0], 2);
	ck_assert_int_eq(fdinfo_queue_u64(l->fd[0], l->qa1, "runnable"), 1);

	snprintf(key, sizeof(key), "accel-latency-%s", l->engine);
	for (int i = 0; i < 2; i++)
		l->lat[i] = fdinfo_u64(l->fd[i], key);
	f = fopen("/proc/self/comm", "re");
	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(fgets(l->comm, sizeof(l->comm), f));
	fclose(f);
	l->comm[strcspn(l->comm, "\n")] = '\0';
	return true;
}

static void expect_u64(const struct jval *o, const char *what, const char *key,
		       uint64_t want)
{
	uint64_t got = ju64(o, key);

	ck_assert_msg(got == want, "top -J: %s %s is %" PRIu64 ", expected %" PRIu64,
		      what, key, got, want);
}

static void expect_text(const struct jval *o, const char *what, const char *key,
			const char *want)
{
	const char *got = jtext(o, key);

	ck_assert_msg(strcmp(got, want) == 0, "top -J: %s %s is '%s', expected '%s'",
		      what, key, got, want);
}

static void expect_totals(const struct jval *o, const char *what, uint64_t busy,
			  uint64_t released, uint64_t latency)
{
	const struct jval *t = jget(o, "total");

	expect_u64(t, what, "busy_ns", busy);
	expect_u64(t, what, "released", released);
	expect_u64(t, what, "latency_ns", latency);
}

static struct jval *find(const struct jval *frame, const char *array,
			 const char *key, const char *value)
{
	struct jval *v = jfind(jget(frame, array), key, value);

	ck_assert_msg(v != NULL, "top -J: no %s with %s %s", array, key, value);
	return v;
}

static void check_engine(const struct jval *frame, const struct load *l)
{
	const struct jval *e = find(frame, "engines", "name", l->engine);
	const struct jval *t = jget(e, "total");

	expect_u64(e, "the engine", "credits", CREDITS);
	expect_u64(e, "the engine", "in_flight", 4);
	expect_u64(t, "the engine", "busy_ns", 16 * MS);
	expect_u64(t, "the engine", "released", 9);
	expect_u64(t, "the engine", "completed", 5);
	expect_u64(t, "the engine", "failed", 0);
	expect_u64(t, "the engine", "timedout", 0);
	expect_u64(t, "the engine", "latency_ns", l->lat[0] + l->lat[1]);
	/* Nothing grew between the two samples. */
	expect_u64(jget(e, "interval"), "the engine", "busy_ns", 0);
	expect_text(e, "the engine", "busy_pct", "0.0");
	expect_text(e, "the engine", "latency_mean_ms", "-");
}

static void check_client(const struct jval *frame, const struct load *l, int i)
{
	static const uint64_t busy[2] = { 6 * MS, 10 * MS }, released[2] = { 5, 4 };
	char id[32], tenant[48];
	const struct jval *c, *t, *u;

	snprintf(id, sizeof(id), "%" PRIu64, l->id[i]);
	snprintf(tenant, sizeof(tenant), "file %s", id);
	c = find(frame, "clients", "client_id", id);
	expect_u64(c, tenant, "pid", (uint64_t)getpid());
	expect_text(c, tenant, "comm", l->comm);
	expect_text(c, tenant, "tenant", tenant);
	ck_assert(jnull(c, "cgroup_id"));
	ck_assert_msg(jget(c, "engines")->n == 1, "top -J: %s has %zu engines, expected 1",
		      tenant, jget(c, "engines")->n);
	u = find(c, "engines", "name", l->engine);
	expect_u64(u, tenant, "capacity", CREDITS);
	expect_totals(u, tenant, busy[i], released[i], l->lat[i]);

	t = find(frame, "tenants", "tenant", tenant);
	expect_u64(t, tenant, "weight", 100);
	expect_u64(t, tenant, "queues", i ? 1 : 2);
	ck_assert(jnull(t, "jobs") && jnull(t, "cgroup_id"));
	expect_u64(t, tenant, "client_id", l->id[i]);
	expect_totals(t, tenant, busy[i], released[i], l->lat[i]);
	u = find(t, "engines", "name", l->engine);
	expect_u64(jget(u, "total"), tenant, "busy_ns", busy[i]);
	expect_text(u, tenant, "share_pct", "-");
}

/* Queue @h of client @i: what its fdinfo line says, as top -J shows it. */
static void check_queue(const struct jval *frame, const struct load *l, int i,
			uint32_t h, const char *prio, uint64_t weight,
			uint64_t runnable, uint64_t in_flight, uint64_t released,
			uint64_t busy)
{
	char id[32], what[64];
	const struct jval *c, *q;

	snprintf(id, sizeof(id), "%" PRIu64, l->id[i]);
	snprintf(what, sizeof(what), "client %s queue %u", id, h);
	c = find(frame, "clients", "client_id", id);
	snprintf(id, sizeof(id), "%u", h);
	q = find(c, "queues", "handle", id);
	expect_text(q, what, "engine", l->engine);
	expect_text(q, what, "priority", prio);
	expect_u64(q, what, "weight", weight);
	expect_u64(q, what, "runnable", runnable);
	expect_u64(q, what, "in_flight", in_flight);
	expect_totals(q, what, busy, released,
		      fdinfo_queue_u64(l->fd[i], h, "latency_ns"));
}

/* @text, its runs of blanks made one space, trailing ones dropped. */
static char *squeeze(const char *text)
{
	char *s = strdup(text), *o = s;

	ck_assert_ptr_nonnull(s);
	for (const char *p = text; *p; p++) {
		if (*p == ' ' && (o == s || o[-1] == ' ' || o[-1] == '\n'))
			continue;
		if (*p == '\n' && o > s && o[-1] == ' ')
			o--;
		*o++ = *p;
	}
	*o = '\0';
	return s;
}

static void expect_line(const char *text, const char *what, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* The squeezed @text must hold the line @fmt makes from the JSON's values. */
static void expect_line(const char *text, const char *what, const char *fmt, ...)
{
	char line[512], needle[520];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	snprintf(needle, sizeof(needle), "\n%s\n", line);
	ck_assert_msg(strstr(text, needle) != NULL,
		      "top's text has no %s line \"%s\" (from its JSON):\n%s",
		      what, line, text);
}

/* The text must print, row by row, the values the JSON holds. */
static void check_text(const char *out, const struct jval *frame, const struct load *l)
{
	const struct jval *e = find(frame, "engines", "name", l->engine);
	char *text = squeeze(out);

	expect_line(text, "engine", "%s %s %s %s %s %s", l->engine,
		    jtext(e, "credits"), jtext(e, "in_flight"), jtext(e, "busy_pct"),
		    jtext(e, "released_per_s"), jtext(e, "latency_mean_ms"));
	for (int i = 0; i < 2; i++) {
		char id[32], tenant[48];
		const struct jval *t, *c, *u, *qs;

		snprintf(id, sizeof(id), "%" PRIu64, l->id[i]);
		snprintf(tenant, sizeof(tenant), "file %s", id);
		t = find(frame, "tenants", "tenant", tenant);
		u = find(t, "engines", "name", l->engine);
		expect_line(text, "tenant", "%s %s %s %s %s %s %s %s", tenant,
			    jtext(t, "weight"), jtext(t, "queues"), jtext(t, "jobs"),
			    jtext(t, "released_per_s"), jtext(t, "latency_mean_ms"),
			    l->engine, jtext(u, "share_pct"));
		c = find(frame, "clients", "client_id", id);
		qs = jget(c, "queues");
		for (size_t k = 0; k < qs->n; k++) {
			const struct jval *q = qs->items[k];

			expect_line(text, "queue", "%s %s %s %s %s %s %s %s %s %s %s %s %s %s %s",
				    jtext(c, "pid"), id, tenant, jtext(q, "handle"),
				    jtext(q, "engine"), jtext(q, "priority"),
				    jtext(q, "weight"), jtext(q, "runnable"),
				    jtext(q, "in_flight"), jtext(q, "share_pct"),
				    jtext(q, "released_per_s"),
				    jtext(q, "latency_mean_ms"),
				    jtext(q, "predicted_pct"),
				    jtext(q, "missed_pct"), jtext(c, "comm"));
		}
	}
	free(text);
}

static struct jval *top_json(const char *args)
{
	char *out = run_top(args);
	const char *p = out;
	struct jval *frame;

	ck_assert_msg(strchr(out, '\n') == out + strlen(out) - 1,
		      "top %s printed more than one line:\n%s", args, out);
	frame = jparse(&p);
	jws(&p);
	ck_assert_msg(*p == '\0', "top %s: text after the JSON object: %s", args, p);
	free(out);
	return frame;
}

static void load_free(struct load *l)
{
	close(l->fd[0]);
	close(l->fd[1]);
}

START_TEST(test_top_known_load)
{
	struct load l;
	struct jval *frame;
	char *text;

	if (!load_make(&l))
		TEST_SKIP("%s does not exist: the module is not loaded", DEV_PATH);
	frame = top_json("--once -J -d 0.2");
	check_engine(frame, &l);
	for (int i = 0; i < 2; i++)
		check_client(frame, &l, i);
	check_queue(frame, &l, 0, l.qa1, "normal", 1, 1, 1, 4, 6 * MS);
	check_queue(frame, &l, 0, l.qa2, "low", 3, 0, 1, 1, 0);
	check_queue(frame, &l, 1, l.qb1, "normal", 2, 0, 2, 4, 10 * MS);
	/* Nothing changes between the runs: the text shows the same values. */
	text = run_top("--once -d 0.2");
	check_text(text, frame, &l);
	free(text);
	jfree(frame);
	load_free(&l);
}
END_TEST

/* A process that opens the device and goes while top samples. */
START_TEST(test_top_client_goes)
{
	struct load l;
	struct jval *frame;
	int p[2];
	pid_t pid;
	char c;

	if (!load_make(&l))
		TEST_SKIP("%s does not exist: the module is not loaded", DEV_PATH);
	ck_assert_int_eq(pipe(p), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		char engine[ACCEL_ENGINE_NAME_LEN];
		uint32_t j;
		int fd;

		load_free(&l);	/* the parent's files are the parent's */
		fd = open(DEV_PATH, O_RDWR | O_CLOEXEC);
		snprintf(engine, sizeof(engine), "top-%d", (int)getpid());
		j = submit(fd, queue_new(fd, engine, ACCEL_PRIORITY_NORMAL, 1));
		wait_releases(fd, 1);
		complete(fd, j, MS);
		submit(fd, queue_new(fd, engine, ACCEL_PRIORITY_NORMAL, 1));
		if (write(p[1], "x", 1) != 1)
			_exit(1);
		usleep(300 * 1000);
		_exit(0);	/* the file goes with a job in flight */
	}
	close(p[1]);
	ck_assert_int_eq(read(p[0], &c, 1), 1);
	close(p[0]);
	frame = top_json("--once -J -d 0.6");
	check_engine(frame, &l);
	for (int i = 0; i < 2; i++)
		check_client(frame, &l, i);
	ck_assert_int_eq(waitpid(pid, NULL, 0), pid);
	jfree(frame);
	load_free(&l);
}
END_TEST

static Suite *top_suite(void)
{
	Suite *suite = suite_create("top");
	TCase *tc = tcase_create("module");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_top_known_load);
	tcase_add_test(tc, test_top_client_goes);
	suite_add_tcase(suite, tc);
	return suite;
}

int main(void)
{
	return test_run_suite(top_suite());
}
