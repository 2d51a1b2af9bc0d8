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
#include <stdatomic.h>
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

static uint32_t queue_new(struct __test_metadata *_metadata, int fd,
			  const char *engine, uint32_t prio, uint32_t weight)
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
static struct accel_job_event next_release_any(struct __test_metadata *_metadata,
					       const int *fds, int n, int ms,
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

/*
 * Every test: skipped without the module, failed by a splat in the kernel
 * log (accel_test.h).
 */
FIXTURE(tenants) {};

FIXTURE_SETUP(tenants)
{
	accel_test_setup(_metadata, variant);
}

FIXTURE_TEARDOWN_PARENT(tenants)
{
	accel_test_teardown(_metadata, variant);
}

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

TEST_F(tenants, high_priority_needs_cap_sys_nice)
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

TEST_F(tenants, credits_belong_to_the_administrator)
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

TEST_F(tenants, raised_credits_release_at_once)
{
	int fd = accel_test_open(), which, fds[1];
	const char *e = engine_name("raise");
	char path[160];
	struct accel_job_event ev, none;
	struct accel_job_fetch f = { .events = (uintptr_t)&none, .max = 1 };
	uint32_t q;

	ASSERT_GE(fd, 0);
	fds[0] = fd;
	q = queue_new(_metadata, fd, e, ACCEL_PRIORITY_NORMAL, 1);
	engine_path(path, sizeof(path), e, "credits");
	ASSERT_EQ(0, write_file(path, "1"));
	ASSERT_GT(submit(fd, q, 1), 0);
	ASSERT_GT(submit(fd, q, 2), 0);
	ev = next_release_any(_metadata, fds, 1, 1000, &which);
	ASSERT_EQ(1, ev.user_data);
	usleep(20000);
	ASSERT_EQ(0, xioctl(fd, ACCEL_IOCTL_JOB_FETCH, &f));
	ASSERT_EQ(0, f.count); /* one credit: the second waits */
	ASSERT_EQ(0, write_file(path, "2"));
	ev = next_release_any(_metadata, fds, 1, 1000, &which);
	ASSERT_EQ(2, ev.user_data);
	engine_path(path, sizeof(path), e, "in_flight");
	ASSERT_EQ(2, read_num(path));
}

/*
 * Three threads on one engine: one submits, keeping at most 32 jobs out;
 * one fetches the releases and completes them; one rewrites the credit
 * limit (1, 3, 2, 4, ...) as fast as it can. Whatever changes the credits
 * or what is runnable releases what the credits allow before it lets the
 * engine go, and a submission whose job stays runnable checks that no
 * credit was left free under a runnable job (a kernel warning, which the
 * fixture counts as a failure). Every job must be released and completed,
 * the engine left with nothing in flight.
 */
struct credit_race {
	int fd;
	char path[160];
	atomic_int stop, completed, err;
};

static void *credit_race_writer(void *arg)
{
	static const char *const v[] = { "1", "3", "2", "4" };
	struct credit_race *r = arg;

	for (unsigned int i = 0; !atomic_load(&r->stop); i++)
		if (write_file(r->path, v[i % 4]))
			atomic_store(&r->err, 1);
	return NULL;
}

static void *credit_race_completer(void *arg)
{
	struct credit_race *r = arg;
	struct accel_job_event ev[32];

	while (!atomic_load(&r->stop)) {
		struct accel_job_fetch f = { .events = (uintptr_t)ev, .max = 32 };
		struct pollfd p = { .fd = r->fd, .events = POLLIN };

		if (xioctl(r->fd, ACCEL_IOCTL_JOB_FETCH, &f)) {
			atomic_store(&r->err, 2);
			return NULL;
		}
		for (uint32_t i = 0; i < f.count; i++) {
			if (ev[i].type != ACCEL_JOB_EVENT_RELEASED ||
			    complete(r->fd, ev[i].id, 1000))
				atomic_store(&r->err, 3);
			else
				atomic_fetch_add(&r->completed, 1);
		}
		if (!f.count)
			poll(&p, 1, 1);
	}
	return NULL;
}

TEST_F_TIMEOUT(tenants, credit_writes_race_submissions_and_completes, 120)
{
	struct credit_race r = { .fd = accel_test_open() };
	const char *e = engine_name("crace");
	uint64_t t0 = now_ns();
	pthread_t tw, tc;
	int submitted = 0;
	uint32_t q;

	ASSERT_GE(r.fd, 0);
	q = queue_new(_metadata, r.fd, e, ACCEL_PRIORITY_NORMAL, 1);
	engine_path(r.path, sizeof(r.path), e, "credits");
	ASSERT_EQ(0, write_file(r.path, "1"));
	ASSERT_EQ(0, pthread_create(&tw, NULL, credit_race_writer, &r));
	ASSERT_EQ(0, pthread_create(&tc, NULL, credit_race_completer, &r));
	/* 3000 jobs, or 5 s under TCG and KASAN. */
	while (submitted < 3000 && now_ns() - t0 < 5000000000ull &&
	       !atomic_load(&r.err)) {
		if (submitted - atomic_load(&r.completed) >= 32) {
			usleep(100);
			continue;
		}
		if (submit(r.fd, q, submitted + 1) <= 0) {
			atomic_store(&r.err, 4);
			break;
		}
		submitted++;
	}
	for (int w = 0; w < 10000 && atomic_load(&r.completed) < submitted; w++)
		usleep(1000);
	atomic_store(&r.stop, 1);
	pthread_join(tw, NULL);
	pthread_join(tc, NULL);
	TH_LOG("%d jobs submitted, %d completed, while the credits changed",
	       submitted, atomic_load(&r.completed));
	ASSERT_EQ(0, atomic_load(&r.err));
	ASSERT_GT(submitted, 100);
	ASSERT_EQ(submitted, atomic_load(&r.completed));
	engine_path(r.path, sizeof(r.path), e, "in_flight");
	ASSERT_EQ(0, read_num(r.path));
	close(r.fd);
}

TEST_F(tenants, configured_engine_outlives_its_queues)
{
	int fd = accel_test_open();
	const char *e = engine_name("pin");
	char path[160];

	ASSERT_GE(fd, 0);
	queue_new(_metadata, fd, e, ACCEL_PRIORITY_NORMAL, 1);
	engine_path(path, sizeof(path), e, "credits");
	ASSERT_EQ(0, write_file(path, "3"));
	close(fd);
	/* No queue names it now; the administrator's limit stays. */
	ASSERT_EQ(3, read_num(path));
	fd = accel_test_open();
	ASSERT_GE(fd, 0);
	queue_new(_metadata, fd, e, ACCEL_PRIORITY_NORMAL, 1);
	ASSERT_EQ(3, read_num(path));
}

/* ------------------------------------------------------------ fair share */

/*
 * Tenant A's jobs on @na files (@qa queues each), tenant B's on one queue,
 * one credit, equal job sizes unless told; B's share of engine time after
 * @jobs releases.
 */
static double run_share(struct __test_metadata *_metadata, int *fa, int na,
			int qa, int fb, const char *e, uint64_t ns_a,
			uint64_t ns_b, int jobs)
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
			qs[nq++] = queue_new(_metadata, fa[i], e, ACCEL_PRIORITY_NORMAL, 1);
		}
	}
	fds[na] = fb;
	qfd[nq] = na;
	qs[nq++] = queue_new(_metadata, fb, e, ACCEL_PRIORITY_NORMAL, 1);
	engine_path(path, sizeof(path), e, "credits");
	ASSERT_EQ(0, write_file(path, "1"));
	for (int k = 0; k < nq; k++)
		for (int d = 0; d < DEPTH; d++) {
			ASSERT_GT(submit(fds[qfd[k]], qs[k], k), 0);
		}
	for (int n = 0; n < jobs; n++) {
		struct accel_job_event ev = next_release_any(_metadata, fds, na + 1, 1000, &which);
		int k = (int)ev.user_data, b = which == na;
		uint64_t ns = b ? ns_b : ns_a;

		ASSERT_EQ(0, complete(fds[which], ev.id, ns));
		busy[b] += ns;
		ASSERT_GT(submit(fds[qfd[k]], qs[k], k), 0); /* keep it flooded */
	}
	return (double)busy[1] / (busy[0] + busy[1]);
}

TEST_F_TIMEOUT(tenants, more_queues_gain_a_tenant_nothing, 120)
{
	struct cg a, b;
	int fa, fb;
	double share;

	NEED_CGROUPS(&a, &b);
	fa = open_in(&a);
	fb = open_in(&b);
	ASSERT_GE(fa, 0);
	ASSERT_GE(fb, 0);
	share = run_share(_metadata, &fa, 1, 8, fb, engine_name("q8"), 1000000, 1000000, 400);
	TH_LOG("tenant A with 8 queues, B with 1: B's share %.3f (ideal 0.500)", share);
	close(fa);
	close(fb);
	cg_remove(&a);
	cg_remove(&b);
	ASSERT_TRUE(share > 0.5 * 0.95 && share < 0.5 * 1.05);
}

TEST_F_TIMEOUT(tenants, more_files_gain_a_tenant_nothing, 120)
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
	share = run_share(_metadata, fa, 8, 1, fb, engine_name("f8"), 1000000, 1000000, 400);
	TH_LOG("tenant A with 8 files, B with 1: B's share %.3f (ideal 0.500)", share);
	for (int i = 0; i < 8; i++)
		close(fa[i]);
	close(fb);
	cg_remove(&a);
	cg_remove(&b);
	ASSERT_TRUE(share > 0.5 * 0.95 && share < 0.5 * 1.05);
}

TEST_F_TIMEOUT(tenants, tenants_split_by_their_weights, 120)
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
	share = run_share(_metadata, &fa, 1, 2, fb, engine_name("w13"), 1300000, 700000, 400);
	TH_LOG("tenant weights 1:3: B's share %.3f (ideal 0.750)", share);
	close(fa);
	close(fb);
	cg_remove(&a);
	cg_remove(&b);
	ASSERT_TRUE(share > 0.75 * 0.95 && share < 0.75 * 1.05);
}

TEST_F(tenants, bad_tenant_weights_change_nothing)
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

TEST_F(tenants, tenant_limits_span_its_files)
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
static int drm_usage_parse(struct __test_metadata *_metadata, char *buf,
			   const char *want_key, uint64_t *want)
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

TEST_F(tenants, fdinfo_is_drm_usage_stats)
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
	q = queue_new(_metadata, fd, e, ACCEL_PRIORITY_NORMAL, 1);
	engine_path(path, sizeof(path), e, "credits");
	ASSERT_EQ(0, write_file(path, "2"));
	id = submit(fd, q, 0);
	next_release_any(_metadata, fds, 1, 1000, &which);
	ASSERT_EQ(0, complete(fd, id, 5000));
	/* The queue goes; its time stays the file's. */
	d = (struct accel_queue_destroy){ .handle = q };
	ASSERT_EQ(0, xioctl(fd, ACCEL_IOCTL_QUEUE_DESTROY, &d));
	q = queue_new(_metadata, fd, e, ACCEL_PRIORITY_NORMAL, 1);
	id = submit(fd, q, 0);
	next_release_any(_metadata, fds, 1, 1000, &which);
	ASSERT_EQ(0, complete(fd, id, 2500));
	d = (struct accel_queue_destroy){ .handle = q };
	ASSERT_EQ(0, xioctl(fd, ACCEL_IOCTL_QUEUE_DESTROY, &d));

	ASSERT_EQ(0, fdinfo_read(fd, buf, sizeof(buf)));
	memcpy(copy, buf, sizeof(buf));
	ASSERT_NE(NULL, strstr(buf, "drm-driver:\t" ACCEL_DEVICE_NAME "\n"));
	if (drm_usage_parse(_metadata, copy, key, &ns) < 3)
		TH_LOG("fdinfo:\n%s", buf);
	memcpy(copy, buf, sizeof(buf));
	ASSERT_GE(drm_usage_parse(_metadata, copy, key, &ns), 4);
	ASSERT_EQ(7500, ns);
	memcpy(copy, buf, sizeof(buf));
	drm_usage_parse(_metadata, copy, ckey, &cap);
	ASSERT_EQ(2, cap);
	memcpy(copy, buf, sizeof(buf));
	drm_usage_parse(_metadata, copy, "drm-client-id", &cid);
	ASSERT_NE(0, cid);
}

/* --------------------------------------------------------- statistics */

/*
 * What `accelctl top` reads: per engine (sysfs), per cgroup tenant
 * (sysfs), per file and per queue (fdinfo), the engine time, the releases
 * and the released-job latency, runnable to released. Each load below has
 * known device times, so engine times are exact; a latency is bounded
 * below by the time a job was held back and above by the wall time around
 * it.
 */

/* The number after "@key:\t" in fdinfo @buf, and the line's unit in @unit. */
static int fdinfo_num(const char *buf, const char *key, uint64_t *v,
		      char *unit, size_t ulen)
{
	size_t n = strlen(key);

	for (const char *l = buf; l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		char *end;

		if (strncmp(l, key, n) || l[n] != ':' || l[n + 1] != '\t')
			continue;
		*v = strtoull(l + n + 2, &end, 10);
		if (unit) {
			size_t k = strcspn(end, "\n");

			snprintf(unit, ulen, "%.*s", (int)k, end);
		}
		return 0;
	}
	return -ENOENT;
}

struct qline {
	char engine[64];
	char priority[16];
	unsigned int weight, runnable, in_flight;
	unsigned long long released, busy_ns, latency_ns;
	unsigned long long predicted_ns, predicted_busy_ns;
	unsigned long long deadlines_met, deadlines_missed;
};

/* Parse one accel-queue line's fields (after the tab); 0 or -EINVAL. */
static int qline_parse(const char *l, struct qline *q)
{
	int n = -1;

	if (sscanf(l, "engine=%63s priority=%15s weight=%u runnable=%u in_flight=%u released=%llu busy_ns=%llu latency_ns=%llu predicted_ns=%llu predicted_busy_ns=%llu deadlines_met=%llu deadlines_missed=%llu%n",
		   q->engine, q->priority, &q->weight, &q->runnable,
		   &q->in_flight, &q->released, &q->busy_ns, &q->latency_ns,
		   &q->predicted_ns, &q->predicted_busy_ns, &q->deadlines_met,
		   &q->deadlines_missed, &n) != 12 || n < 0 || (l[n] && l[n] != '\n'))
		return -EINVAL;
	return 0;
}

/* Queue @handle's line in fdinfo @buf: 0, -ENOENT or -EINVAL. */
static int fdinfo_queue(const char *buf, uint32_t handle, struct qline *q)
{
	char key[32];
	const char *l;

	snprintf(key, sizeof(key), "\naccel-queue-%u:\t", handle);
	l = strstr(buf, key);
	if (!l)
		return -ENOENT;
	return qline_parse(l + strlen(key), q);
}

/*
 * Every accel-queue line of @buf parses, comes after accel-tenant, and the
 * handles rise: their count, or -1 (logged).
 */
static int fdinfo_queue_lines(struct __test_metadata *_metadata,
			      const char *buf)
{
	const char *tenant = strstr(buf, "\naccel-tenant:\t");
	unsigned int last = 0;
	int count = 0;

	for (const char *l = strstr(buf, "\naccel-queue-"); l;
	     l = strstr(l + 1, "\naccel-queue-")) {
		unsigned int h;
		int n = -1;
		struct qline q;

		if (sscanf(l + 1, "accel-queue-%u:\t%n", &h, &n) != 1 || n < 0 ||
		    qline_parse(l + 1 + n, &q) || h <= last || !tenant ||
		    l < tenant) {
			TH_LOG("bad queue line: '%.*s'", (int)strcspn(l + 1, "\n"),
			       l + 1);
			return -1;
		}
		last = h;
		count++;
	}
	return count;
}

static int submit_job(int fd, const struct accel_job *job)
{
	struct accel_job j = *job;
	struct accel_job_submit a = { .jobs = (uintptr_t)&j, .count = 1 };
	int ret = xioctl(fd, ACCEL_IOCTL_JOB_SUBMIT, &a);

	return ret ? ret : (int)j.id;
}

/* The next event of @fd within @ms. */
static struct accel_job_event next_event(struct __test_metadata *_metadata,
					 int fd, int ms)
{
	struct accel_job_event ev = { 0 };

	for (int t = 0; t < ms; t++) {
		struct accel_job_fetch f = { .events = (uintptr_t)&ev, .max = 1 };

		ASSERT_EQ(0, xioctl(fd, ACCEL_IOCTL_JOB_FETCH, &f));
		if (f.count == 1)
			return ev;
		usleep(1000);
	}
	TH_LOG("no event within %d ms", ms);
	ASSERT_TRUE(0);
	return ev;
}

static uint64_t read_u64(struct __test_metadata *_metadata, const char *path)
{
	char buf[64];

	ASSERT_EQ(0, read_file(path, buf, sizeof(buf)));
	return strtoull(buf, NULL, 10);
}

static uint64_t engine_stat(struct __test_metadata *_metadata,
			    const char *engine, const char *attr)
{
	char path[160];

	engine_path(path, sizeof(path), engine, attr);
	return read_u64(_metadata, path);
}

static uint64_t tenant_stat(struct __test_metadata *_metadata, uint64_t id,
			    const char *attr)
{
	char path[160];

	snprintf(path, sizeof(path), SYSFS "/tenants/%llu/%s",
		 (unsigned long long)id, attr);
	return read_u64(_metadata, path);
}

static int queue_destroy(int fd, uint32_t q)
{
	struct accel_queue_destroy d = { .handle = q };

	return xioctl(fd, ACCEL_IOCTL_QUEUE_DESTROY, &d);
}

#define HOLD_NS 20000000ull /* how long a test holds a job's only credit */

/*
 * Three jobs on a one-credit engine: the first is released, the other two
 * wait, each for the one before to complete. @lat_min and @lat_max bound
 * the sum of their latencies: job k was runnable from before its SUBMIT
 * returned and released within the COMPLETE of job k-1 (so the sum is at
 * least the hold before that COMPLETE), and waited no longer than from
 * before its SUBMIT to after its RELEASED event was fetched. Device times
 * 1000, 2000 and 4000 ns. @check, if set, runs while two jobs wait.
 */
static void three_held_jobs(struct __test_metadata *_metadata, int fd,
			    uint32_t q, uint64_t *lat_min, uint64_t *lat_max,
			    void (*check)(struct __test_metadata *, int fd,
					  uint32_t q))
{
	uint64_t t_sub[3], t_submitted[3], t_rel[3];
	const uint64_t dev[3] = { 1000, 2000, 4000 };
	int ids[3], fds[1] = { fd }, which;

	for (int i = 0; i < 3; i++) {
		t_sub[i] = now_ns();
		ids[i] = submit(fd, q, i);
		t_submitted[i] = now_ns();
		ASSERT_GT(ids[i], 0);
	}
	*lat_min = 0;
	*lat_max = 0;
	for (int i = 0; i < 3; i++) {
		struct accel_job_event ev = next_release_any(_metadata, fds, 1, 2000, &which);

		t_rel[i] = now_ns();
		ASSERT_EQ(i, ev.user_data);
		ASSERT_EQ(ids[i], ev.id);
		*lat_max += t_rel[i] - t_sub[i];
		if (!i && check)
			check(_metadata, fd, q);
		usleep(HOLD_NS / 1000);
		if (i < 2)
			*lat_min += now_ns() - t_submitted[i + 1];
		ASSERT_EQ(0, complete(fd, ids[i], dev[i]));
	}
}

static void two_waiting_one_released(struct __test_metadata *_metadata, int fd,
				     uint32_t q)
{
	char buf[8192];
	struct qline l;

	ASSERT_EQ(0, fdinfo_read(fd, buf, sizeof(buf)));
	ASSERT_EQ(0, fdinfo_queue(buf, q, &l));
	ASSERT_EQ(2, l.runnable);
	ASSERT_EQ(1, l.in_flight);
	ASSERT_EQ(1, l.released);
	ASSERT_EQ(0, l.busy_ns);
}

TEST_F(tenants, fdinfo_lists_each_queue)
{
	int fd = accel_test_open();
	char e[ACCEL_ENGINE_NAME_LEN], esc[64], key[256], unit[16];
	char path[160], buf[8192], copy[8192];
	const char *e2 = engine_name("qs2");
	uint64_t lat_min, lat_max, v;
	struct qline l, l2;
	uint32_t q1, q2;

	ASSERT_GE(fd, 0);
	/* A ':' in the engine name is escaped in the value too. */
	snprintf(e, sizeof(e), "tn:qs-%d", getpid());
	snprintf(esc, sizeof(esc), "tn%%3aqs-%d", getpid());
	q1 = queue_new(_metadata, fd, e, ACCEL_PRIORITY_LOW, 3);
	q2 = queue_new(_metadata, fd, e2, ACCEL_PRIORITY_HIGH, 7);
	engine_path(path, sizeof(path), e, "credits");
	ASSERT_EQ(0, write_file(path, "1"));

	ASSERT_EQ(0, fdinfo_read(fd, buf, sizeof(buf)));
	ASSERT_EQ(2, fdinfo_queue_lines(_metadata, buf));
	ASSERT_EQ(0, fdinfo_queue(buf, q1, &l));
	ASSERT_EQ(0, strcmp(esc, l.engine));
	ASSERT_EQ(0, strcmp("low", l.priority));
	ASSERT_EQ(3, l.weight);
	ASSERT_EQ(0, l.runnable + l.in_flight + l.released + l.busy_ns +
		     l.latency_ns);
	ASSERT_EQ(0, fdinfo_queue(buf, q2, &l2));
	ASSERT_EQ(0, strcmp(e2, l2.engine));
	ASSERT_EQ(0, strcmp("high", l2.priority));
	ASSERT_EQ(7, l2.weight);

	three_held_jobs(_metadata, fd, q1, &lat_min, &lat_max, two_waiting_one_released);
	ASSERT_EQ(0, fdinfo_read(fd, buf, sizeof(buf)));
	ASSERT_EQ(0, fdinfo_queue(buf, q1, &l));
	ASSERT_EQ(0, l.runnable);
	ASSERT_EQ(0, l.in_flight);
	ASSERT_EQ(3, l.released);
	ASSERT_EQ(7000, l.busy_ns);
	TH_LOG("latency %llu ns, bounds [%llu, %llu]", l.latency_ns,
	       (unsigned long long)lat_min, (unsigned long long)lat_max);
	ASSERT_GE(l.latency_ns, lat_min);
	ASSERT_LE(l.latency_ns, lat_max);
	ASSERT_GE(lat_min, 2 * HOLD_NS);
	/* The other queue saw nothing. */
	ASSERT_EQ(0, fdinfo_queue(buf, q2, &l2));
	ASSERT_EQ(0, l2.released + l2.busy_ns + l2.latency_ns);

	/* The queue goes: its line goes, the file's totals stay. */
	ASSERT_EQ(0, queue_destroy(fd, q1));
	ASSERT_EQ(0, fdinfo_read(fd, buf, sizeof(buf)));
	ASSERT_EQ(-ENOENT, fdinfo_queue(buf, q1, &l2));
	ASSERT_EQ(0, fdinfo_queue(buf, q2, &l2));
	ASSERT_EQ(1, fdinfo_queue_lines(_metadata, buf));
	snprintf(key, sizeof(key), "drm-engine-%s", esc);
	ASSERT_EQ(0, fdinfo_num(buf, key, &v, unit, sizeof(unit)));
	ASSERT_EQ(7000, v);
	snprintf(key, sizeof(key), "accel-released-%s", esc);
	ASSERT_EQ(0, fdinfo_num(buf, key, &v, unit, sizeof(unit)));
	ASSERT_EQ(3, v);
	ASSERT_EQ(0, strcmp("", unit));
	snprintf(key, sizeof(key), "accel-latency-%s", esc);
	ASSERT_EQ(0, fdinfo_num(buf, key, &v, unit, sizeof(unit)));
	ASSERT_EQ(l.latency_ns, v);
	ASSERT_EQ(0, strcmp(" ns", unit));
	snprintf(key, sizeof(key), "accel-released-%s", e2);
	ASSERT_EQ(0, fdinfo_num(buf, key, &v, NULL, 0));
	ASSERT_EQ(0, v);
	/* An engine's accel- lines follow its capacity line. */
	snprintf(key, sizeof(key),
		 "\ndrm-engine-capacity-%s:\t1\naccel-released-%s:\t3\naccel-latency-%s:\t",
		 esc, esc, esc);
	ASSERT_NE(NULL, strstr(buf, key));
	/* and the drm- keys still read as drm-usage-stats. */
	memcpy(copy, buf, sizeof(buf));
	ASSERT_EQ(6, drm_usage_parse(_metadata, copy, NULL, NULL));
	ASSERT_EQ(0, queue_destroy(fd, q2));
	ASSERT_EQ(0, fdinfo_read(fd, buf, sizeof(buf)));
	ASSERT_EQ(0, fdinfo_queue_lines(_metadata, buf));
	ASSERT_EQ(0, close(fd));
}

TEST_F(tenants, engine_sysfs_counts_jobs)
{
	int fd = accel_test_open(), fds[1], which, a, b, c, d, x;
	const char *e = engine_name("est");
	const char *zero[] = { "released", "completed", "failed", "timedout",
			       "busy_ns", "latency_ns", "in_flight" };
	struct accel_job j = { .timeout_ns = 1000000, .user_data = 3 };
	struct accel_job_event ev;
	uint64_t lat_max, t0, t1, t_hold, lat;
	char path[160];
	uint32_t q;

	ASSERT_GE(fd, 0);
	fds[0] = fd;
	q = queue_new(_metadata, fd, e, ACCEL_PRIORITY_NORMAL, 1);
	engine_path(path, sizeof(path), e, "credits");
	ASSERT_EQ(0, write_file(path, "1")); /* and pins it past the queue */
	for (unsigned int i = 0; i < sizeof(zero) / sizeof(zero[0]); i++) {
		ASSERT_EQ(0, engine_stat(_metadata, e, zero[i]));
	}

	/* A completes, B waits for it and fails with its executor's status. */
	t0 = now_ns();
	a = submit(fd, q, 1);
	b = submit(fd, q, 2);
	t_hold = now_ns();
	ASSERT_GT(a, 0);
	ASSERT_GT(b, 0);
	ASSERT_EQ(a, next_release_any(_metadata, fds, 1, 2000, &which).id);
	ASSERT_EQ(1, engine_stat(_metadata, e, "in_flight"));
	ASSERT_EQ(1, engine_stat(_metadata, e, "released"));
	usleep(HOLD_NS / 1000);
	t_hold = now_ns() - t_hold;
	ASSERT_EQ(0, complete(fd, a, 1500));
	ASSERT_EQ(b, next_release_any(_metadata, fds, 1, 2000, &which).id);
	t1 = now_ns();
	lat_max = 2 * (t1 - t0);
	struct accel_job_complete cb = { .id = b, .status = -EIO, .device_ns = 500 };
	ASSERT_EQ(0, xioctl(fd, ACCEL_IOCTL_JOB_COMPLETE, &cb));

	/* C times out. */
	j.queue = q;
	t0 = now_ns();
	c = submit_job(fd, &j);
	ASSERT_GT(c, 0);
	ev = next_event(_metadata, fd, 2000);
	ASSERT_EQ(ACCEL_JOB_EVENT_RELEASED, ev.type);
	ev = next_event(_metadata, fd, 5000);
	ASSERT_EQ(ACCEL_JOB_EVENT_TIMEDOUT, ev.type);
	ASSERT_EQ(c, ev.id);
	lat_max += now_ns() - t0;

	/* D is released and X waits when their queue goes: both cancelled. */
	t0 = now_ns();
	d = submit(fd, q, 4);
	x = submit(fd, q, 5);
	ASSERT_GT(d, 0);
	ASSERT_GT(x, 0);
	ASSERT_EQ(d, next_release_any(_metadata, fds, 1, 2000, &which).id);
	lat_max += now_ns() - t0;
	ASSERT_EQ(0, queue_destroy(fd, q));

	ASSERT_EQ(4, engine_stat(_metadata, e, "released"));
	ASSERT_EQ(1, engine_stat(_metadata, e, "completed"));
	ASSERT_EQ(3, engine_stat(_metadata, e, "failed"));
	ASSERT_EQ(1, engine_stat(_metadata, e, "timedout"));
	ASSERT_EQ(2000, engine_stat(_metadata, e, "busy_ns"));
	ASSERT_EQ(0, engine_stat(_metadata, e, "in_flight"));
	lat = engine_stat(_metadata, e, "latency_ns");
	TH_LOG("latency %llu ns, bounds [%llu, %llu]", (unsigned long long)lat,
	       (unsigned long long)t_hold, (unsigned long long)lat_max);
	ASSERT_GE(lat, t_hold);
	ASSERT_LE(lat, lat_max);
	/* Read-only, to everyone. */
	engine_path(path, sizeof(path), e, "released");
	ASSERT_EQ(-EACCES, write_file(path, "0"));
	ASSERT_EQ(0, close(fd));
}

/*
 * A pipelined job is runnable (and released) before its waits are reached:
 * its latency counts from then, so it is small, never "negative" (a huge
 * sum), and its queue's counts come back to zero when both complete.
 */
TEST_F(tenants, pipelined_job_latency_is_bounded)
{
	int fd = accel_test_open(), a, b;
	const char *e = engine_name("pipe");
	struct accel_point sig, wait;
	struct accel_job ja = { .user_data = 1 }, jb = { .user_data = 2 };
	struct accel_job_event ev;
	char path[160], buf[8192];
	uint64_t t0, bound;
	struct qline l;
	uint32_t q, h;

	ASSERT_GE(fd, 0);
	q = queue_new(_metadata, fd, e, ACCEL_PRIORITY_NORMAL, 1);
	engine_path(path, sizeof(path), e, "credits");
	ASSERT_EQ(0, write_file(path, "2"));
	h = so_new(_metadata, fd, 0);
	sig = (struct accel_point){ .handle = h, .point = 1 };
	wait = sig;
	ja.queue = jb.queue = q;
	ja.signals = (uintptr_t)&sig;
	ja.nsignals = 1;
	jb.waits = (uintptr_t)&wait;
	jb.nwaits = 1;
	t0 = now_ns();
	a = submit_job(fd, &ja);
	ASSERT_GT(a, 0);
	ev = next_event(_metadata, fd, 2000);
	ASSERT_EQ(a, ev.id);
	b = submit_job(fd, &jb);
	ASSERT_GT(b, 0);
	ev = next_event(_metadata, fd, 2000);
	bound = 2 * (now_ns() - t0);
	ASSERT_EQ(ACCEL_JOB_EVENT_RELEASED, ev.type);
	ASSERT_EQ(b, ev.id);
	ASSERT_NE(0, ev.flags & ACCEL_JOB_RES_PIPELINED);
	/* B completes first: it finishes once A's point is reached. */
	ASSERT_EQ(0, complete(fd, b, 300));
	ASSERT_EQ(0, complete(fd, a, 700));
	ASSERT_EQ(0, fdinfo_read(fd, buf, sizeof(buf)));
	ASSERT_EQ(0, fdinfo_queue(buf, q, &l));
	ASSERT_EQ(2, l.released);
	ASSERT_EQ(0, l.in_flight);
	ASSERT_EQ(0, l.runnable);
	ASSERT_EQ(1000, l.busy_ns);
	ASSERT_LE(l.latency_ns, bound);
	ASSERT_LE(engine_stat(_metadata, e, "latency_ns"), bound);
	ASSERT_EQ(0, close(fd));
}

/*
 * A file opened from the root cgroup is a tenant of its own (fdinfo's
 * accel-tenant 0); with the module parameter root_tenant_per_file=N,
 * read at open, the root cgroup is one tenant like any other: its files
 * share it (its cgroup id, with a directory in sysfs).
 */
TEST_F(tenants, root_tenant_per_file_off_makes_the_root_one_tenant)
{
	char buf[8192], path[160];
	uint64_t t1 = 99, t2 = 99, t3 = 99;
	int f1, f2, f3, old, r = cgroup2_ready();

	if (r)
		SKIP(return, "cgroup2 unavailable: %s", strerror(-r));
	ASSERT_EQ(0, cg_enter(NULL)); /* the root cgroup */
	old = set_bool_param("root_tenant_per_file", 0);
	if (old < 0)
		SKIP(return, "cannot set the module parameter root_tenant_per_file");
	f1 = accel_test_open();
	f2 = accel_test_open();
	set_bool_param("root_tenant_per_file", old);
	f3 = accel_test_open();
	ASSERT_GE(f1, 0);
	ASSERT_GE(f2, 0);
	ASSERT_GE(f3, 0);
	ASSERT_EQ(0, fdinfo_read(f1, buf, sizeof(buf)));
	ASSERT_EQ(0, fdinfo_num(buf, "accel-tenant", &t1, NULL, 0));
	ASSERT_EQ(0, fdinfo_read(f2, buf, sizeof(buf)));
	ASSERT_EQ(0, fdinfo_num(buf, "accel-tenant", &t2, NULL, 0));
	ASSERT_EQ(0, fdinfo_read(f3, buf, sizeof(buf)));
	ASSERT_EQ(0, fdinfo_num(buf, "accel-tenant", &t3, NULL, 0));
	ASSERT_NE(0, t1); /* the root cgroup's id */
	ASSERT_EQ(t1, t2);
	ASSERT_EQ(0, t3); /* the default again: a tenant of its own */
	snprintf(path, sizeof(path), SYSFS "/tenants/%llu/weight",
		 (unsigned long long)t1);
	ASSERT_EQ(0, access(path, F_OK));
	ASSERT_EQ(0, close(f1));
	ASSERT_EQ(0, close(f2));
	ASSERT_EQ(0, close(f3));
}

/*
 * A pipelined job completed before its waits are reached ends later: when
 * they are (completed, or failed if one failed) or when its queue goes
 * (failed). Each ends counted once on its engine: released is completed
 * plus failed at every step. The module once counted it completed at its
 * COMPLETE and failed again when its queue was destroyed before its wait
 * was reached, and completed when that wait then failed.
 */
TEST_F(tenants, engine_counts_a_pipelined_job_once)
{
	int fd, a, b;
	const char *e = engine_name("pcnt");
	struct accel_point sig, wait, bsig;
	struct accel_job ja = { .user_data = 1 }, jb = { .user_data = 2 };
	struct accel_job_complete fail = { .status = -EIO, .device_ns = 1 };
	struct accel_job_event ev;
	uint64_t completed = 0, failed = 0;
	char path[160];
	uint32_t q, h, y;

	for (int round = 0; round < 3; round++) {
		/* A, then B pipelined on A's point, on two credits. */
		fd = accel_test_open(); /* a file a round: no event left over */
		ASSERT_GE(fd, 0);
		q = queue_new(_metadata, fd, e, ACCEL_PRIORITY_NORMAL, 1);
		if (round == 0) {
			engine_path(path, sizeof(path), e, "credits");
			ASSERT_EQ(0, write_file(path, "2"));
		}
		h = so_new(_metadata, fd, 0);
		y = so_new(_metadata, fd, 0);
		sig = (struct accel_point){ .handle = h, .point = 1 };
		wait = sig;
		bsig = (struct accel_point){ .handle = y, .point = 1 };
		ja.queue = jb.queue = q;
		ja.signals = (uintptr_t)&sig;
		ja.nsignals = 1;
		jb.waits = (uintptr_t)&wait;
		jb.nwaits = 1;
		jb.signals = (uintptr_t)&bsig;
		jb.nsignals = 1;
		a = submit_job(fd, &ja);
		ASSERT_GT(a, 0);
		ev = next_event(_metadata, fd, 2000);
		ASSERT_EQ(a, ev.id);
		b = submit_job(fd, &jb);
		ASSERT_GT(b, 0);
		ev = next_event(_metadata, fd, 2000);
		ASSERT_EQ(b, ev.id);
		ASSERT_NE(0, ev.flags & ACCEL_JOB_RES_PIPELINED);
		/*
		 * B completes first, status 0: not counted until it ends,
		 * which its point y:1 tells (the engine's kick finishes it).
		 */
		ASSERT_EQ(0, complete(fd, b, 1));
		ASSERT_EQ(completed, engine_stat(_metadata, e, "completed"));
		ASSERT_EQ(failed, engine_stat(_metadata, e, "failed"));
		switch (round) {
		case 0: /* A completes: B's wait is reached, B completed. */
			ASSERT_EQ(0, complete(fd, a, 1));
			ASSERT_EQ(0, so_wait1(fd, y, 1, 0, in_ms(5000)));
			completed += 2;
			break;
		case 1: /* A fails: B's wait fails, B failed. */
			fail.id = a;
			ASSERT_EQ(0, xioctl(fd, ACCEL_IOCTL_JOB_COMPLETE, &fail));
			ASSERT_EQ(-EIO, so_wait1(fd, y, 1, 0, in_ms(5000)));
			failed += 2;
			break;
		case 2: /* The queue goes first: A and B cancelled. */
			failed += 2;
			break;
		}
		ASSERT_EQ(0, queue_destroy(fd, q));
		ASSERT_EQ(0, so_destroy(fd, h));
		ASSERT_EQ(0, so_destroy(fd, y));
		ASSERT_EQ(completed, engine_stat(_metadata, e, "completed"));
		ASSERT_EQ(failed, engine_stat(_metadata, e, "failed"));
		ASSERT_EQ(completed + failed, engine_stat(_metadata, e, "released"));
		ASSERT_EQ(0, engine_stat(_metadata, e, "timedout"));
		ASSERT_EQ(0, engine_stat(_metadata, e, "in_flight"));
		ASSERT_EQ(0, close(fd));
	}
}

TEST_F(tenants, tenant_sysfs_counts_its_jobs_over_engines)
{
	struct cg a, b;
	const char *e1 = engine_name("ts1");
	char e2[ACCEL_ENGINE_NAME_LEN], path[160];
	uint64_t busy0, rel0, lat0, lat_min, lat_max, t0, lat;
	int f1, f2, fb, id, fds[1], which;
	uint32_t q1, q2;

	NEED_CGROUPS(&a, &b);
	snprintf(e2, sizeof(e2), "tn-ts2-%d", getpid());
	/* Two files of tenant A, one of B. */
	f1 = open_in(&a);
	f2 = open_in(&a);
	fb = open_in(&b);
	ASSERT_GE(f1, 0);
	ASSERT_GE(f2, 0);
	ASSERT_GE(fb, 0);
	busy0 = tenant_stat(_metadata, a.id, "busy_ns");
	rel0 = tenant_stat(_metadata, a.id, "released");
	lat0 = tenant_stat(_metadata, a.id, "latency_ns");
	q1 = queue_new(_metadata, f1, e1, ACCEL_PRIORITY_NORMAL, 1);
	q2 = queue_new(_metadata, f2, e2, ACCEL_PRIORITY_NORMAL, 1);
	queue_new(_metadata, fb, e1, ACCEL_PRIORITY_NORMAL, 1);
	engine_path(path, sizeof(path), e1, "credits");
	ASSERT_EQ(0, write_file(path, "1"));

	three_held_jobs(_metadata, f1, q1, &lat_min, &lat_max, NULL);
	fds[0] = f2;
	t0 = now_ns();
	id = submit(f2, q2, 9);
	ASSERT_GT(id, 0);
	ASSERT_EQ(id, next_release_any(_metadata, fds, 1, 2000, &which).id);
	lat_max += now_ns() - t0;
	ASSERT_EQ(0, complete(f2, id, 5000));

	ASSERT_EQ(12000, tenant_stat(_metadata, a.id, "busy_ns") - busy0);
	ASSERT_EQ(4, tenant_stat(_metadata, a.id, "released") - rel0);
	lat = tenant_stat(_metadata, a.id, "latency_ns") - lat0;
	TH_LOG("latency %llu ns, bounds [%llu, %llu]", (unsigned long long)lat,
	       (unsigned long long)lat_min, (unsigned long long)lat_max);
	ASSERT_GE(lat, lat_min);
	ASSERT_LE(lat, lat_max);
	/* B ran nothing. */
	ASSERT_EQ(0, tenant_stat(_metadata, b.id, "busy_ns"));
	ASSERT_EQ(0, tenant_stat(_metadata, b.id, "released"));
	ASSERT_EQ(0, tenant_stat(_metadata, b.id, "latency_ns"));
	close(f1);
	close(f2);
	close(fb);
	cg_remove(&a);
	cg_remove(&b);
}

/*
 * fdinfo's queue line sums the predictions its completed jobs carried
 * (ABI 1.6) and the engine time those jobs took: by ioctl, capped at the
 * job's timeout, and inline with ACCEL_URING_JOB_F_PREDICTED. A job with
 * no prediction counts in neither, nor does an inline job whose last SQE
 * bytes hold anything without the flag (a caller from before ABI 1.6).
 */
TEST_F(tenants, fdinfo_shows_predictions)
{
	static const struct {
		uint32_t predicted_us;
		uint64_t timeout_ns, device_ns;
	} byioctl[] = {
		{ 10000, 0, 8000000 },                          /* 10 ms, took 8 */
		{ ACCEL_JOB_PREDICTION_MAX_US, 1000000000, 500000000 }, /* capped: 1 s */
		{ 0, 0, 7000000 },                              /* none */
	};
	int fd = accel_test_open(), id;
	struct io_uring ring;
	char buf[8192];
	struct qline l;
	uint32_t q;

	ASSERT_GE(fd, 0);
	ASSERT_EQ(0, io_uring_queue_init(8, &ring, IORING_SETUP_SQE128));
	q = queue_new(_metadata, fd, engine_name("pred"), ACCEL_PRIORITY_NORMAL, 1);
	for (size_t i = 0; i < sizeof(byioctl) / sizeof(byioctl[0]); i++) {
		struct accel_job j = { .queue = q,
				       .predicted_us = byioctl[i].predicted_us,
				       .timeout_ns = byioctl[i].timeout_ns };

		id = submit_job(fd, &j);
		ASSERT_GT(id, 0);
		ASSERT_EQ(id, (int)next_event(_metadata, fd, 2000).id);
		ASSERT_EQ(0, complete(fd, id, byioctl[i].device_ns));
	}
	for (int flagged = 0; flagged < 2; flagged++) {
		struct accel_uring_job ij = { .queue = q };
		struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
		uint32_t garbage = 0xdeadbeef;

		io_uring_prep_rw(IORING_OP_URING_CMD, sqe, fd, NULL, 0, 0);
		sqe->cmd_op = ACCEL_URING_CMD_JOB_SUBMIT_INLINE;
		if (flagged) {
			ij.flags = ACCEL_URING_JOB_F_PREDICTED;
			ij.predicted_us = 2000;
		}
		memcpy(sqe->cmd, &ij, sizeof(ij));
		if (!flagged) /* what an ABI 1.5 caller may leave there */
			memcpy(sqe->cmd + offsetof(struct accel_uring_job, predicted_us),
			       &garbage, sizeof(garbage));
		ASSERT_EQ(1, io_uring_submit(&ring));
		id = uring_reap1(&ring, 5000, NULL);
		ASSERT_GT(id, 0);
		ASSERT_EQ(0, complete(fd, id & ACCEL_JOB_RES_ID_MASK,
				      flagged ? 3000000 : 1000000));
	}
	ASSERT_EQ(0, fdinfo_read(fd, buf, sizeof(buf)));
	ASSERT_EQ(0, fdinfo_queue(buf, q, &l));
	ASSERT_EQ(5, l.released);
	ASSERT_EQ(8000000ULL + 500000000 + 7000000 + 1000000 + 3000000, l.busy_ns);
	ASSERT_EQ(10000000ULL + 1000000000 + 2000000, l.predicted_ns);
	ASSERT_EQ(8000000ULL + 500000000 + 3000000, l.predicted_busy_ns);
	io_uring_queue_exit(&ring);
	close(fd);
}

/*
 * A COMPLETE's device_ns is charged only up to the job's timeout: no job
 * runs longer, and 2^63 ns or more, taken as is, wrapped the charge
 * negative and turned the queue's vruntime back, so that a queue could
 * report its way ahead of the others.
 */
TEST_F(tenants, device_ns_is_charged_up_to_the_timeout)
{
	static const uint64_t reported[] = {
		1000000001ULL, (1ULL << 63) - 1, 1ULL << 63, UINT64_MAX,
	};
	const uint64_t timeout = 1000000000ULL;
	const char *e = engine_name("cap");
	int fd = accel_test_open(), held, a2, b1, id;
	char path[160], buf[8192];
	struct qline l;
	uint32_t qa, qb;

	ASSERT_GE(fd, 0);
	qa = queue_new(_metadata, fd, e, ACCEL_PRIORITY_NORMAL, 1);
	qb = queue_new(_metadata, fd, e, ACCEL_PRIORITY_NORMAL, 1);
	for (size_t i = 0; i < sizeof(reported) / sizeof(reported[0]); i++) {
		struct accel_job j = { .queue = qa, .timeout_ns = timeout };

		id = submit_job(fd, &j);
		ASSERT_GT(id, 0);
		ASSERT_EQ(id, (int)next_event(_metadata, fd, 2000).id);
		ASSERT_EQ(0, complete(fd, id, reported[i]));
	}
	ASSERT_EQ(0, fdinfo_read(fd, buf, sizeof(buf)));
	ASSERT_EQ(0, fdinfo_queue(buf, qa, &l));
	ASSERT_EQ(4, l.released);
	ASSERT_EQ(4 * timeout, l.busy_ns);

	/* B consumed a little; A, whatever it reported, far more. */
	id = submit(fd, qb, 0);
	ASSERT_GT(id, 0);
	ASSERT_EQ(id, (int)next_event(_metadata, fd, 2000).id);
	ASSERT_EQ(0, complete(fd, id, 1000));
	engine_path(path, sizeof(path), e, "credits");
	ASSERT_EQ(0, write_file(path, "1"));
	held = submit(fd, qa, 0);
	ASSERT_GT(held, 0);
	ASSERT_EQ(held, (int)next_event(_metadata, fd, 2000).id);
	a2 = submit(fd, qa, 0);
	b1 = submit(fd, qb, 0);
	ASSERT_GT(a2, 0);
	ASSERT_GT(b1, 0);
	ASSERT_EQ(0, complete(fd, held, UINT64_MAX - 1));
	/* The credit goes to B, the queue that consumed least. */
	ASSERT_EQ(b1, (int)next_event(_metadata, fd, 2000).id);
	ASSERT_EQ(0, complete(fd, b1, 1000));
	ASSERT_EQ(a2, (int)next_event(_metadata, fd, 2000).id);
	ASSERT_EQ(0, complete(fd, a2, 1000));
	close(fd);
}

/*
 * fdinfo read in a loop while two threads create queues, submit to them
 * and destroy them with jobs waiting and in flight, and another completes
 * what is released: every read parses, and nothing is touched
 * after it is freed (KASAN on the debug kernel).
 */
struct fdrace {
	struct __test_metadata *metadata; /* for TH_LOG() in the threads */
	int fd;
	atomic_int stop;
	atomic_int reads, bad, churned;
	uint64_t max_read_ns; /* the reader's */
	char engines[2][ACCEL_ENGINE_NAME_LEN];
};

static void *fdrace_reader(void *arg)
{
	struct fdrace *r = arg;
	struct __test_metadata *_metadata = r->metadata;
	static char buf[16384];

	while (!atomic_load(&r->stop)) {
		uint64_t t0 = now_ns();
		int ret = fdinfo_read(r->fd, buf, sizeof(buf));
		uint64_t dt = now_ns() - t0;

		if (dt > r->max_read_ns)
			r->max_read_ns = dt;
		if (ret || fdinfo_queue_lines(_metadata, buf) < 0 ||
		    drm_usage_parse(_metadata, buf, NULL, NULL) < 2)
			atomic_fetch_add(&r->bad, 1);
		atomic_fetch_add(&r->reads, 1);
	}
	return NULL;
}

/*
 * Queues made in fours and destroyed in the order made, so that a read
 * finds several, one of them going: jobs waiting and in flight.
 */
static void *fdrace_churn(void *arg)
{
	struct fdrace *r = arg;

	for (int i = 0; !atomic_load(&r->stop); i++) {
		uint32_t q[4];
		int n = 0;

		for (int k = 0; k < 4; k++)
			if (!queue_create(r->fd, r->engines[(i + k) & 1],
					  k % 3 ? ACCEL_PRIORITY_NORMAL :
					  ACCEL_PRIORITY_LOW, 1 + k, 0, &q[n]))
				submit(r->fd, q[n++], k);
		for (int k = 0; k < n; k++) {
			submit(r->fd, q[k], 9);
			queue_destroy(r->fd, q[k]);
			atomic_fetch_add(&r->churned, 1);
		}
	}
	return NULL;
}

TEST_F_TIMEOUT(tenants, fdinfo_races_queue_destroy, 60)
{
	struct fdrace r = { .metadata = _metadata, .fd = accel_test_open() };
	uint64_t t0 = now_ns();
	pthread_t tr, tc[2];
	char path[160];
	int completed = 0;

	ASSERT_GE(r.fd, 0);
	snprintf(r.engines[0], sizeof(r.engines[0]), "tn-race0-%d", getpid());
	snprintf(r.engines[1], sizeof(r.engines[1]), "tn:race1-%d", getpid());
	/* One long-lived queue keeps the engines and their limits. */
	for (int i = 0; i < 2; i++) {
		queue_new(_metadata, r.fd, r.engines[i], ACCEL_PRIORITY_NORMAL, 1);
		engine_path(path, sizeof(path), r.engines[i], "credits");
		ASSERT_EQ(0, write_file(path, "2"));
	}
	ASSERT_EQ(0, pthread_create(&tr, NULL, fdrace_reader, &r));
	for (int i = 0; i < 2; i++) {
		ASSERT_EQ(0, pthread_create(&tc[i], NULL, fdrace_churn, &r));
	}
	/* Three seconds, and enough of each side on a slow (debug) kernel. */
	while (now_ns() - t0 < 3000000000ull ||
	       ((atomic_load(&r.reads) < 300 || atomic_load(&r.churned) < 300) &&
		now_ns() - t0 < 30000000000ull)) {
		struct accel_job_event ev[16];
		struct accel_job_fetch f = { .events = (uintptr_t)ev, .max = 16 };

		ASSERT_EQ(0, xioctl(r.fd, ACCEL_IOCTL_JOB_FETCH, &f));
		/* A job cancelled meanwhile is refused: fine. */
		for (unsigned int i = 0; i < f.count; i++)
			completed += !complete(r.fd, ev[i].id, 1000);
		if (!f.count)
			usleep(200);
	}
	atomic_store(&r.stop, 1);
	pthread_join(tr, NULL);
	for (int i = 0; i < 2; i++)
		pthread_join(tc[i], NULL);
	TH_LOG("%d fdinfo reads (the longest %.3f ms), %d queues made and destroyed, %d jobs completed",
	       atomic_load(&r.reads), r.max_read_ns / 1e6,
	       atomic_load(&r.churned), completed);
	ASSERT_EQ(0, atomic_load(&r.bad));
	ASSERT_GE(atomic_load(&r.reads), 300);
	ASSERT_GE(atomic_load(&r.churned), 300);
	ASSERT_EQ(0, close(r.fd));
}

ACCEL_TEST_MAIN
