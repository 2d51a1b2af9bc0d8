// SPDX-License-Identifier: MIT
/*
 * Tenants: who shares an engine and who may claim what. A tenant is the
 * cgroup (v2) its file was opened from; engine time goes to tenants by
 * their weights first, then to a tenant's queues by theirs, so more queues
 * or more files gain a tenant nothing. HIGH needs CAP_SYS_NICE; credit
 * limits and tenant weights are the administrator's, in
 * /sys/kernel/accelsched/. fdinfo follows drm-usage-stats.
 *
 * A file's tenant is fixed when it is opened, so one process opens the
 * files of two tenants by moving itself between two cgroups, and then
 * executes every job itself: the shares come from the device time it
 * reports, and do not depend on the machine's speed.
 */
#include <ctype.h>
#include <linux/capability.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "syncobj_util.h"

#define SYSFS "/sys/kernel/accelsched"
#define PARAMS "/sys/module/accelsched/parameters"
#define CGROOT "/sys/fs/cgroup"

/* An engine name no other test uses. */
static const char *engine_name(const char *tag)
{
	static char name[ACCEL_ENGINE_NAME_LEN];

	snprintf(name, sizeof(name), "tn-%s-%d", tag, getpid());
	return name;
}

static int queue_create(int fd, const char *engine, uint32_t prio,
			uint32_t weight, uint32_t credits, uint32_t *q)
{
	struct accel_queue_create a = {
		.priority = prio, .weight = weight, .credits = credits,
	};
	int ret;

	memcpy(a.engine, engine, strnlen(engine, sizeof(a.engine) - 1));
	ret = xioctl(fd, ACCEL_IOCTL_QUEUE_CREATE, &a);
	if (q)
		*q = a.handle;
	return ret;
}

static uint32_t queue_new(int fd, const char *engine, uint32_t prio,
			  uint32_t weight)
{
	uint32_t q = 0;

	ASSERT_EQ(0, queue_create(fd, engine, prio, weight, 0, &q));
	ASSERT_NE(0, q);
	return q;
}

static int submit(int fd, uint32_t queue, uint64_t user_data)
{
	struct accel_job j = { .user_data = user_data, .queue = queue };
	struct accel_job_submit a = { .jobs = (uintptr_t)&j, .count = 1 };
	int ret = xioctl(fd, ACCEL_IOCTL_JOB_SUBMIT, &a);

	return ret ? ret : (int)j.id;
}

static int complete(int fd, uint32_t id, uint64_t device_ns)
{
	struct accel_job_complete c = { .id = id, .device_ns = device_ns };

	return xioctl(fd, ACCEL_IOCTL_JOB_COMPLETE, &c);
}

/* The next RELEASED event on any of @fds within @ms; *@which its index. */
static struct accel_job_event next_release_any(const int *fds, int n, int ms,
					       int *which)
{
	struct accel_job_event ev = { 0 };

	for (int t = 0; t < ms; t++) {
		for (int i = 0; i < n; i++) {
			struct accel_job_fetch f = { .events = (uintptr_t)&ev, .max = 1 };

			ASSERT_EQ(0, xioctl(fds[i], ACCEL_IOCTL_JOB_FETCH, &f));
			if (f.count == 1) {
				ASSERT_EQ(ACCEL_JOB_EVENT_RELEASED, ev.type);
				*which = i;
				return ev;
			}
		}
		usleep(1000);
	}
	TH_LOG("no job released within %d ms", ms);
	ASSERT_TRUE(0);
	return ev;
}

/* Write @val to @path; 0 or -errno. */
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

/* Read @path into @buf (NUL-terminated, trailing newline dropped). */
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
	if (n && buf[n - 1] == '\n')
		buf[n - 1] = 0;
	return 0;
}

static long read_num(const char *path)
{
	char buf[64];

	if (read_file(path, buf, sizeof(buf)))
		return -1;
	return strtol(buf, NULL, 10);
}

static void engine_path(char *buf, size_t len, const char *engine,
			const char *attr)
{
	snprintf(buf, len, SYSFS "/engines/%s/%s", engine, attr);
}

/* Drop @caps (a mask of CAP_* bits) from every set of this process. */
static int drop_caps(uint64_t caps)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		return -errno;
	for (int i = 0; i < 2; i++) {
		uint32_t m = (uint32_t)(caps >> (32 * i));

		d[i].effective &= ~m;
		d[i].permitted &= ~m;
		d[i].inheritable &= ~m;
	}
	return syscall(SYS_capset, &h, d) ? -errno : 0;
}

#define CAPBIT(c) (1ULL << (c))

/* Run @fn in a child; its exit status (0 means every check held). */
static int in_child(int (*fn)(void *), void *arg)
{
	int status;
	pid_t pid = fork();

	if (pid == 0)
		_exit(fn(arg));
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/* ------------------------------------------------------------- cgroups */

/* cgroup2 mounted at CGROOT (mounting it if needed); 0 or -errno. */
static int cgroup2_ready(void)
{
	char probe[] = CGROOT "/cgroup.procs";

	if (!access(probe, W_OK))
		return 0;
	mkdir(CGROOT, 0755);
	if (mount("none", CGROOT, "cgroup2", 0, NULL) && errno != EBUSY)
		return -errno;
	return access(probe, W_OK) ? -errno : 0;
}

struct cg {
	char path[128];
	uint64_t id;
};

static int cg_make(struct cg *c, const char *tag)
{
	struct stat st;

	snprintf(c->path, sizeof(c->path), CGROOT "/accel-%s-%d", tag, getpid());
	if (mkdir(c->path, 0755) && errno != EEXIST)
		return -errno;
	if (stat(c->path, &st))
		return -errno;
	c->id = st.st_ino; /* the cgroup id, on 64-bit */
	return 0;
}

/* Move this process into @c (NULL: the root). */
static int cg_enter(const struct cg *c)
{
	char path[160], pid[32];

	snprintf(path, sizeof(path), "%s/cgroup.procs", c ? c->path : CGROOT);
	snprintf(pid, sizeof(pid), "%d", getpid());
	return write_file(path, pid);
}

static void cg_remove(struct cg *c)
{
	cg_enter(NULL);
	rmdir(c->path);
}

/* Open the device from within @c: the file's tenant is @c. */
static int open_in(const struct cg *c)
{
	int fd;

	if (cg_enter(c))
		return -1;
	fd = open(ACCEL_DEV_PATH, O_RDWR | O_CLOEXEC);
	cg_enter(NULL);
	return fd;
}

static void tenant_weight_path(char *buf, size_t len, uint64_t id)
{
	snprintf(buf, len, SYSFS "/tenants/%llu/weight", (unsigned long long)id);
}

#define NEED_CGROUPS(a, b)                                                  \
	do {                                                                \
		int _r = cgroup2_ready();                                   \
		if (_r)                                                     \
			SKIP(return, "cgroup2 unavailable: %s", strerror(-_r)); \
		ASSERT_EQ(0, cg_make(a, "a"));                              \
		ASSERT_EQ(0, cg_make(b, "b"));                              \
	} while (0)

/* ------------------------------------------------------------ privilege */

static int high_without_nice(void *arg)
{
	int fd = open(ACCEL_DEV_PATH, O_RDWR | O_CLOEXEC);
	const char *e = arg;
	uint32_t q;

	if (fd < 0 || drop_caps(CAPBIT(CAP_SYS_NICE)))
		return 10;
	if (queue_create(fd, e, ACCEL_PRIORITY_HIGH, 1, 0, &q) != -EACCES)
		return 11;
	/* Refused, it made nothing: the next queue is the file's first. */
	if (queue_create(fd, e, ACCEL_PRIORITY_NORMAL, 1, 0, &q) || q != 1)
		return 12;
	if (queue_create(fd, e, ACCEL_PRIORITY_LOW, 1, 0, &q) || !q)
		return 13;
	return 0;
}

TEST(high_priority_needs_cap_sys_nice)
{
	int fd = accel_test_open();
	const char *e = engine_name("nice");
	uint32_t q;

	ASSERT_GE(fd, 0);
	ASSERT_EQ(0, queue_create(fd, e, ACCEL_PRIORITY_HIGH, 1, 0, &q));
	ASSERT_EQ(1, q);
	ASSERT_EQ(0, in_child(high_without_nice, (void *)e));
}

/* ------------------------------------------------------------- credits */

struct unpriv_args {
	const char *engine;
	char path[160];
};

static int credits_unprivileged(void *arg)
{
	struct unpriv_args *a = arg;
	int fd = open(ACCEL_DEV_PATH, O_RDWR | O_CLOEXEC);
	uint32_t q;

	if (fd < 0 || drop_caps(CAPBIT(CAP_SYS_ADMIN)))
		return 10;
	/* A new engine named with a limit: the default, not 5. */
	if (queue_create(fd, a->engine, ACCEL_PRIORITY_NORMAL, 1, 5, &q))
		return 11;
	if (read_num(a->path) != read_num(PARAMS "/default_credits"))
		return 12;
	/* Nor may it write the limit. */
	if (write_file(a->path, "5") != -EPERM)
		return 13;
	if (read_num(a->path) == 5)
		return 14;
	return 0;
}

TEST(credits_belong_to_the_administrator)
{
	int fd = accel_test_open();
	struct unpriv_args a = { .engine = engine_name("cred") };
	const char *bad[] = { "0", "65537", "abc", "-1", "\n", "2x", "99999999999" };
	const int bad_err[] = { -EINVAL, -EINVAL, -EINVAL, -EINVAL, -EINVAL,
				-EINVAL, -ERANGE };
	uint32_t q;

	ASSERT_GE(fd, 0);
	engine_path(a.path, sizeof(a.path), a.engine, "credits");
	ASSERT_EQ(0, in_child(credits_unprivileged, &a));
	/*
	 * The child's engine went with its queue. An administrator
	 * (CAP_SYS_ADMIN) creating an engine may give its first limit...
	 */
	ASSERT_EQ(0, queue_create(fd, a.engine, ACCEL_PRIORITY_NORMAL, 1, 9, &q));
	ASSERT_EQ(9, read_num(a.path));
	/* ...but naming an existing one with another limit changes nothing. */
	ASSERT_EQ(0, queue_create(fd, a.engine, ACCEL_PRIORITY_NORMAL, 1, 7, &q));
	ASSERT_EQ(9, read_num(a.path));
	/* The administrator sets it. */
	ASSERT_EQ(0, write_file(a.path, "4"));
	ASSERT_EQ(4, read_num(a.path));
	for (unsigned int i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		EXPECT_EQ(bad_err[i], write_file(a.path, bad[i]));
		ASSERT_EQ(4, read_num(a.path));
	}
	ASSERT_EQ(-EINVAL, queue_create(fd, a.engine, ACCEL_PRIORITY_NORMAL, 1,
					ACCEL_CREDITS_MAX + 1, &q));
	ASSERT_EQ(4, read_num(a.path));
}

TEST(raised_credits_release_at_once)
{
	int fd = accel_test_open(), which, fds[1];
	const char *e = engine_name("raise");
	char path[160];
	struct accel_job_event ev, none;
	struct accel_job_fetch f = { .events = (uintptr_t)&none, .max = 1 };
	uint32_t q;

	ASSERT_GE(fd, 0);
	fds[0] = fd;
	q = queue_new(fd, e, ACCEL_PRIORITY_NORMAL, 1);
	engine_path(path, sizeof(path), e, "credits");
	ASSERT_EQ(0, write_file(path, "1"));
	ASSERT_GT(submit(fd, q, 1), 0);
	ASSERT_GT(submit(fd, q, 2), 0);
	ev = next_release_any(fds, 1, 1000, &which);
	ASSERT_EQ(1, ev.user_data);
	usleep(20000);
	ASSERT_EQ(0, xioctl(fd, ACCEL_IOCTL_JOB_FETCH, &f));
	ASSERT_EQ(0, f.count); /* one credit: the second waits */
	ASSERT_EQ(0, write_file(path, "2"));
	ev = next_release_any(fds, 1, 1000, &which);
	ASSERT_EQ(2, ev.user_data);
	engine_path(path, sizeof(path), e, "in_flight");
	ASSERT_EQ(2, read_num(path));
}

TEST(configured_engine_outlives_its_queues)
{
	int fd = accel_test_open();
	const char *e = engine_name("pin");
	char path[160];

	ASSERT_GE(fd, 0);
	queue_new(fd, e, ACCEL_PRIORITY_NORMAL, 1);
	engine_path(path, sizeof(path), e, "credits");
	ASSERT_EQ(0, write_file(path, "3"));
	close(fd);
	/* No queue names it now; the administrator's limit stays. */
	ASSERT_EQ(3, read_num(path));
	fd = accel_test_open();
	ASSERT_GE(fd, 0);
	queue_new(fd, e, ACCEL_PRIORITY_NORMAL, 1);
	ASSERT_EQ(3, read_num(path));
}

/* ------------------------------------------------------------ fair share */

/*
 * Tenant A's jobs on @na files (@qa queues each), tenant B's on one queue,
 * one credit, equal job sizes unless told; B's share of engine time after
 * @jobs releases.
 */
static double run_share(int *fa, int na, int qa, int fb, const char *e,
			uint64_t ns_a, uint64_t ns_b, int jobs)
{
	enum { DEPTH = 4 };
	int fds[9], nq = 0, which;
	uint32_t qs[72];
	int qfd[72];
	uint64_t busy[2] = { 0, 0 };
	char path[160];

	ASSERT_LE(na, 8);
	for (int i = 0; i < na; i++) {
		fds[i] = fa[i];
		for (int k = 0; k < qa; k++) {
			qfd[nq] = i;
			qs[nq++] = queue_new(fa[i], e, ACCEL_PRIORITY_NORMAL, 1);
		}
	}
	fds[na] = fb;
	qfd[nq] = na;
	qs[nq++] = queue_new(fb, e, ACCEL_PRIORITY_NORMAL, 1);
	engine_path(path, sizeof(path), e, "credits");
	ASSERT_EQ(0, write_file(path, "1"));
	for (int k = 0; k < nq; k++)
		for (int d = 0; d < DEPTH; d++)
			ASSERT_GT(submit(fds[qfd[k]], qs[k], k), 0);
	for (int n = 0; n < jobs; n++) {
		struct accel_job_event ev = next_release_any(fds, na + 1, 1000, &which);
		int k = (int)ev.user_data, b = which == na;
		uint64_t ns = b ? ns_b : ns_a;

		ASSERT_EQ(0, complete(fds[which], ev.id, ns));
		busy[b] += ns;
		ASSERT_GT(submit(fds[qfd[k]], qs[k], k), 0); /* keep it flooded */
	}
	return (double)busy[1] / (busy[0] + busy[1]);
}

TEST_TIMEOUT(more_queues_gain_a_tenant_nothing, 120)
{
	struct cg a, b;
	int fa, fb;
	double share;

	NEED_CGROUPS(&a, &b);
	fa = open_in(&a);
	fb = open_in(&b);
	ASSERT_GE(fa, 0);
	ASSERT_GE(fb, 0);
	share = run_share(&fa, 1, 8, fb, engine_name("q8"), 1000000, 1000000, 400);
	TH_LOG("tenant A with 8 queues, B with 1: B's share %.3f (ideal 0.500)", share);
	close(fa);
	close(fb);
	cg_remove(&a);
	cg_remove(&b);
	ASSERT_TRUE(share > 0.5 * 0.95 && share < 0.5 * 1.05);
}

TEST_TIMEOUT(more_files_gain_a_tenant_nothing, 120)
{
	struct cg a, b;
	int fa[8], fb;
	double share;

	NEED_CGROUPS(&a, &b);
	for (int i = 0; i < 8; i++) {
		fa[i] = open_in(&a);
		ASSERT_GE(fa[i], 0);
	}
	fb = open_in(&b);
	ASSERT_GE(fb, 0);
	share = run_share(fa, 8, 1, fb, engine_name("f8"), 1000000, 1000000, 400);
	TH_LOG("tenant A with 8 files, B with 1: B's share %.3f (ideal 0.500)", share);
	for (int i = 0; i < 8; i++)
		close(fa[i]);
	close(fb);
	cg_remove(&a);
	cg_remove(&b);
	ASSERT_TRUE(share > 0.5 * 0.95 && share < 0.5 * 1.05);
}

TEST_TIMEOUT(tenants_split_by_their_weights, 120)
{
	struct cg a, b;
	int fa, fb;
	char pa[160], pb[160];
	double share;

	NEED_CGROUPS(&a, &b);
	fa = open_in(&a);
	fb = open_in(&b);
	ASSERT_GE(fa, 0);
	ASSERT_GE(fb, 0);
	tenant_weight_path(pa, sizeof(pa), a.id);
	tenant_weight_path(pb, sizeof(pb), b.id);
	ASSERT_EQ(100, read_num(pa)); /* the default, as cgroup cpu.weight */
	ASSERT_EQ(0, write_file(pa, "100"));
	ASSERT_EQ(0, write_file(pb, "300"));
	/* Jobs of different lengths: shares are of time, not counts. */
	share = run_share(&fa, 1, 2, fb, engine_name("w13"), 1300000, 700000, 400);
	TH_LOG("tenant weights 1:3: B's share %.3f (ideal 0.750)", share);
	close(fa);
	close(fb);
	cg_remove(&a);
	cg_remove(&b);
	ASSERT_TRUE(share > 0.75 * 0.95 && share < 0.75 * 1.05);
}

TEST(bad_tenant_weights_change_nothing)
{
	struct cg a, b;
	const char *bad[] = { "0", "10001", "abc", "-5", "\n", "1.5", "99999999999" };
	const int bad_err[] = { -EINVAL, -EINVAL, -EINVAL, -EINVAL, -EINVAL,
				-EINVAL, -ERANGE };
	char path[160];
	int fa;

	NEED_CGROUPS(&a, &b);
	fa = open_in(&a);
	ASSERT_GE(fa, 0);
	tenant_weight_path(path, sizeof(path), a.id);
	ASSERT_EQ(0, write_file(path, "250"));
	for (unsigned int i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		EXPECT_EQ(bad_err[i], write_file(path, bad[i]));
		ASSERT_EQ(250, read_num(path));
	}
	ASSERT_EQ(0, write_file(path, "1"));
	ASSERT_EQ(0, write_file(path, "10000"));
	ASSERT_EQ(10000, read_num(path));
	close(fa);
	/* Configured: it stays after its last file. */
	ASSERT_EQ(10000, read_num(path));
	cg_remove(&a);
	cg_remove(&b);
}

/* ------------------------------------------------------------- limits */

struct limit_args {
	struct cg *c;
	const char *engine;
};

static int tenant_limits(void *arg)
{
	struct limit_args *a = arg;
	int f1 = open_in(a->c), f2 = open_in(a->c);
	uint32_t q1, q2, q;

	if (f1 < 0 || f2 < 0)
		return 10;
	/* tenant_max_queues = 3 over both files. */
	if (queue_create(f1, a->engine, ACCEL_PRIORITY_NORMAL, 1, 0, &q1) ||
	    queue_create(f1, a->engine, ACCEL_PRIORITY_NORMAL, 1, 0, &q) ||
	    queue_create(f2, a->engine, ACCEL_PRIORITY_NORMAL, 1, 0, &q2))
		return 11;
	if (queue_create(f2, a->engine, ACCEL_PRIORITY_NORMAL, 1, 0, &q) != -EMFILE)
		return 12;
	/* tenant_max_jobs = 4 over both files. */
	for (int i = 0; i < 2; i++)
		if (submit(f1, q1, i) <= 0 || submit(f2, q2, i) <= 0)
			return 13;
	if (submit(f2, q2, 9) != -ENOSPC || submit(f1, q1, 9) != -ENOSPC)
		return 14;
	return 0;
}

TEST(tenant_limits_span_its_files)
{
	struct cg a, b;
	char oq[32], oj[32];
	struct limit_args la = { .c = &a, .engine = engine_name("lim") };
	int ret;

	NEED_CGROUPS(&a, &b);
	ASSERT_EQ(0, read_file(PARAMS "/tenant_max_queues", oq, sizeof(oq)));
	ASSERT_EQ(0, read_file(PARAMS "/tenant_max_jobs", oj, sizeof(oj)));
	ASSERT_EQ(0, write_file(PARAMS "/tenant_max_queues", "3"));
	ASSERT_EQ(0, write_file(PARAMS "/tenant_max_jobs", "4"));
	ret = in_child(tenant_limits, &la);
	write_file(PARAMS "/tenant_max_queues", oq);
	write_file(PARAMS "/tenant_max_jobs", oj);
	cg_remove(&a);
	cg_remove(&b);
	ASSERT_EQ(0, ret);
}

/* -------------------------------------------------------------- fdinfo */

/*
 * A strict drm-usage-stats reader: every drm- key is ^drm-[^:\s]+$, split
 * at the first ':', and its value a number with an optional unit (ns, KiB,
 * MiB), but for drm-driver and drm-pdev. Returns the number of drm- keys,
 * or -1 at the first line that breaks a rule (logged).
 */
static int drm_usage_parse(char *buf, const char *want_key, uint64_t *want)
{
	int keys = 0;

	for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
		char *colon = strchr(line, ':'), *v, *end;
		unsigned long long n;

		if (strncmp(line, "drm-", 4))
			continue;
		if (!colon || colon == line + 4) {
			TH_LOG("fdinfo line without a key: '%s'", line);
			return -1;
		}
		*colon = 0;
		for (char *c = line; *c; c++)
			if (isspace((unsigned char)*c)) {
				TH_LOG("fdinfo key with a space: '%s'", line);
				return -1;
			}
		for (v = colon + 1; *v == ' ' || *v == '\t'; v++)
			;
		keys++;
		if (!strcmp(line, "drm-driver") || !strcmp(line, "drm-pdev")) {
			if (!*v)
				return -1;
			continue;
		}
		errno = 0;
		n = strtoull(v, &end, 10);
		if (end == v || errno) {
			TH_LOG("fdinfo %s: not a number: '%s'", line, v);
			return -1;
		}
		if (*end && strcmp(end, " ns") && strcmp(end, " KiB") &&
		    strcmp(end, " MiB")) {
			TH_LOG("fdinfo %s: bad unit '%s'", line, end);
			return -1;
		}
		if (strchr(colon + 1, ':')) {
			TH_LOG("fdinfo %s: a ':' in its value: the key was cut", line);
			return -1;
		}
		if (want_key && !strcmp(line, want_key))
			*want = n;
	}
	return keys;
}

static int fdinfo_read(int fd, char *buf, size_t len)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	return read_file(path, buf, len);
}

TEST(fdinfo_is_drm_usage_stats)
{
	int fd = accel_test_open(), id, fds[1], which;
	char e[ACCEL_ENGINE_NAME_LEN], key[96], ckey[96], buf[8192], copy[8192];
	char path[160];
	uint64_t ns = 0, cap = 0, cid = 0;
	uint32_t q;
	struct accel_queue_destroy d;

	ASSERT_GE(fd, 0);
	fds[0] = fd;
	/* An engine name with ':' (allowed) must still give a clean key. */
	snprintf(e, sizeof(e), "tn:fd-%d", getpid());
	snprintf(key, sizeof(key), "drm-engine-tn%%3afd-%d", getpid());
	snprintf(ckey, sizeof(ckey), "drm-engine-capacity-tn%%3afd-%d", getpid());
	q = queue_new(fd, e, ACCEL_PRIORITY_NORMAL, 1);
	engine_path(path, sizeof(path), e, "credits");
	ASSERT_EQ(0, write_file(path, "2"));
	id = submit(fd, q, 0);
	next_release_any(fds, 1, 1000, &which);
	ASSERT_EQ(0, complete(fd, id, 5000));
	/* The queue goes; its time stays the file's. */
	d = (struct accel_queue_destroy){ .handle = q };
	ASSERT_EQ(0, xioctl(fd, ACCEL_IOCTL_QUEUE_DESTROY, &d));
	q = queue_new(fd, e, ACCEL_PRIORITY_NORMAL, 1);
	id = submit(fd, q, 0);
	next_release_any(fds, 1, 1000, &which);
	ASSERT_EQ(0, complete(fd, id, 2500));
	d = (struct accel_queue_destroy){ .handle = q };
	ASSERT_EQ(0, xioctl(fd, ACCEL_IOCTL_QUEUE_DESTROY, &d));

	ASSERT_EQ(0, fdinfo_read(fd, buf, sizeof(buf)));
	memcpy(copy, buf, sizeof(buf));
	ASSERT_NE(NULL, strstr(buf, "drm-driver:\t" ACCEL_DEVICE_NAME "\n"));
	if (drm_usage_parse(copy, key, &ns) < 3)
		TH_LOG("fdinfo:\n%s", buf);
	memcpy(copy, buf, sizeof(buf));
	ASSERT_GE(drm_usage_parse(copy, key, &ns), 4);
	ASSERT_EQ(7500, ns);
	memcpy(copy, buf, sizeof(buf));
	drm_usage_parse(copy, ckey, &cap);
	ASSERT_EQ(2, cap);
	memcpy(copy, buf, sizeof(buf));
	drm_usage_parse(copy, "drm-client-id", &cid);
	ASSERT_NE(0, cid);
}

TEST_HARNESS_MAIN
