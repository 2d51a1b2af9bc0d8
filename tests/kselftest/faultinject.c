// SPDX-License-Identifier: MIT
/*
 * Allocation failure on every allocating entry point of the module.
 *
 * For each entry point, a variant of the fixture below (one KTAP test
 * each, faultinject.<entry point>.allocation_failures_are_clean), and for
 * N = 1, 2, ... until the call succeeds without a fault having been
 * injected, it:
 *
 *  1. sets up what the call needs (an open fd, a ring, a syncobj...) and
 *     takes a snapshot of the state the call could change;
 *  2. writes N to /proc/thread-self/fail-nth, so that the Nth fault-injection
 *     point this thread hits fails (with failslab: the Nth slab allocation,
 *     ours or the kernel's on the way to us), makes the call, and reads
 *     fail-nth back (0: the fault was injected);
 *  3. if the fault was injected and the call failed, requires an errno the
 *     entry allows (-ENOMEM; io_uring's -EAGAIN where io_uring could not
 *     allocate a request) and a snapshot identical to the one before;
 *  4. tears the set-up down.
 *
 * Leaks are not looked for here: every iteration's would show in the
 * kmemleak scan the VM's /init makes at the end of the run (debug6.12 only).
 * Lockdep, KASAN and the other checkers run all the while, and the harness
 * fails a test whose kernel log shows a splat.
 *
 * It needs CONFIG_FAULT_INJECTION (fail-nth), CONFIG_FAILSLAB and
 * CONFIG_FAULT_INJECTION_DEBUG_FS (failslab's knobs: GFP_KERNEL allocations
 * are only failable with ignore-gfp-wait off). The Debian kernels have none
 * of them: there every test skips, saying so.
 *
 * Adding an entry point is one FIXTURE_VARIANT_ADD(): a name, a set-up,
 * the call (0 or -errno), a snapshot and a clean-up, most of them shared.
 */
#include <dirent.h>
#include <stdbool.h>

#include <sys/eventfd.h>

#include "accel_test.h"

#define FI_FAIL_NTH "/proc/thread-self/fail-nth"
#define FI_FAILSLAB "/sys/kernel/debug/failslab"
/* No entry point comes anywhere near this many allocations. */
#define FI_MAX_N 1000
#define FI_TIMEOUT_S 120

/* ---- state snapshots --------------------------------------------------- */

#define FI_STATE_MAX 96

/**
 * struct fi_state - a snapshot: named values, compared as strings, so that a
 * snapshot can hold counts, a syncobj's QUERY, a line of fdinfo alike.
 * fi_put() adds one; two snapshots must hold the same keys with the same
 * values, in the same order.
 */
struct fi_state {
	unsigned int n;
	bool overflow;
	struct {
		char key[48];
		char val[160];
	} kv[FI_STATE_MAX];
};

static void fi_put(struct fi_state *st, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void fi_put(struct fi_state *st, const char *key, const char *fmt, ...)
{
	va_list ap;

	if (st->n == FI_STATE_MAX) {
		st->overflow = true;
		return;
	}
	snprintf(st->kv[st->n].key, sizeof(st->kv[0].key), "%s", key);
	va_start(ap, fmt);
	vsnprintf(st->kv[st->n].val, sizeof(st->kv[0].val), fmt, ap);
	va_end(ap);
	st->n++;
}

/* Print every difference; return how many there are. */
static int fi_state_diff(const struct fi_state *a, const struct fi_state *b)
{
	unsigned int n = a->n > b->n ? a->n : b->n;
	int diffs = 0;

	for (unsigned int i = 0; i < n; i++) {
		const char *ka = i < a->n ? a->kv[i].key : "(none)";
		const char *va = i < a->n ? a->kv[i].val : "";
		const char *kb = i < b->n ? b->kv[i].key : "(none)";
		const char *vb = i < b->n ? b->kv[i].val : "";

		if (!strcmp(ka, kb) && !strcmp(va, vb))
			continue;
		if (!strcmp(ka, kb))
			printf("#   %s: '%s' before, '%s' after\n", ka, va, vb);
		else
			printf("#   %s='%s' before, %s='%s' after\n", ka, va, kb, vb);
		diffs++;
	}
	return diffs;
}

/* ---- what an entry point works on -------------------------------------- */

/**
 * struct fi_ctx - the state one iteration sets up, calls and cleans up.
 * @fd:         the device fd the set-up opened, or -1.
 * @aux_fd:     another fd the set-up made (an eventfd, a sync_file to
 *              import), or -1.
 * @new_fd:     an fd the call created (open(), an export), or -1.
 * @ring:       an io_uring, valid when @have_ring.
 * @have_ring:  @ring was set up.
 * @handle:     a syncobj the set-up created, or 0.
 * @new_handle: a syncobj handle the call created, or 0; destroyed by clean-up.
 */
struct fi_ctx {
	int fd;
	int aux_fd;
	int new_fd;
	struct io_uring ring;
	bool have_ring;
	__u32 handle;
	__u32 new_handle;
};

FIXTURE(faultinject) {};

/**
 * FIXTURE_VARIANT(faultinject) - one allocating entry point; the variant's
 * name is the entry point's in KTAP.
 * @setup:    creates what @call needs; 0 or -errno (fails the test).
 * @call:     the entry point, run with fail-nth armed; 0 or -errno.
 * @snapshot: adds to a snapshot what @call could change (the runner always
 *            adds this process's fd count and the module's reference count).
 * @cleanup:  undoes @setup and whatever a successful @call created
 *            (fi_cleanup does it for every field of struct fi_ctx).
 * @also_ok:  an errno besides ENOMEM that a failed allocation may give, or 0.
 */
FIXTURE_VARIANT(faultinject) {
	int (*setup)(struct fi_ctx *c);
	int (*call)(struct fi_ctx *c);
	void (*snapshot)(struct fi_ctx *c, struct fi_state *st);
	void (*cleanup)(struct fi_ctx *c);
	int also_ok;
};

/* Set-ups and clean-ups. */

static int fi_setup_none(struct fi_ctx *c)
{
	(void)c;
	return 0;
}

static int fi_setup_dev(struct fi_ctx *c)
{
	c->fd = open(ACCEL_DEV_PATH, O_RDWR | O_CLOEXEC);
	return c->fd < 0 ? -errno : 0;
}

static int fi_setup_ring(struct fi_ctx *c)
{
	int ret = fi_setup_dev(c);

	if (ret)
		return ret;
	ret = io_uring_queue_init(4, &c->ring, 0);
	if (ret)
		return ret;
	c->have_ring = true;
	return 0;
}

static void fi_cleanup(struct fi_ctx *c)
{
#ifdef ACCEL_IOCTL_SYNCOBJ_DESTROY
	struct accel_syncobj_destroy d = { 0 };

	if (c->new_handle) {
		d.handle = c->new_handle;
		ioctl(c->fd, ACCEL_IOCTL_SYNCOBJ_DESTROY, &d);
	}
	if (c->handle) {
		d.handle = c->handle;
		ioctl(c->fd, ACCEL_IOCTL_SYNCOBJ_DESTROY, &d);
	}
#endif
	if (c->have_ring)
		io_uring_queue_exit(&c->ring);
	if (c->new_fd >= 0)
		close(c->new_fd);
	if (c->aux_fd >= 0)
		close(c->aux_fd);
	if (c->fd >= 0)
		close(c->fd);
}

/* Snapshots. */

static void fi_snap_none(struct fi_ctx *c, struct fi_state *st)
{
	(void)c;
	(void)st;
}

/* Every line of the device fd's fdinfo (the client's own state). */
static void fi_snap_fdinfo(struct fi_ctx *c, struct fi_state *st)
{
	char path[64], line[256];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", c->fd);
	f = fopen(path, "re");
	if (!f) {
		fi_put(st, "fdinfo", "unreadable: %s", strerror(errno));
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		char *tab = strchr(line, '\t'), *nl = strchr(line, '\n');

		if (nl)
			*nl = 0;
		if (tab)
			*tab++ = 0;
		fi_put(st, line, "%s", tab ? tab : "");
	}
	fclose(f);
}

#ifdef ACCEL_IOCTL_SYNCOBJ_QUERY
/* Handles are small and dense: probing this many finds every live one. */
#define FI_MAX_HANDLE 64

/*
 * The syncobjs of the device fd: how many handles are live, and each one's
 * QUERY (value, submitted, error). A failed CREATE or IMPORT must leave no
 * handle behind; a failed SIGNAL, WAIT or export must move no value.
 */
static void fi_snap_syncobjs(struct fi_ctx *c,
						     struct fi_state *st)
{
	unsigned int live = 0;

	fi_snap_fdinfo(c, st);
	for (__u32 h = 1; h <= FI_MAX_HANDLE; h++) {
		struct accel_syncobj_query q = { .handle = h };
		char key[32];

		if (ioctl(c->fd, ACCEL_IOCTL_SYNCOBJ_QUERY, &q) < 0) {
			if (errno != ENOENT)
				fi_put(st, "query", "handle %u: %s", h,
				       strerror(errno));
			continue;
		}
		live++;
		snprintf(key, sizeof(key), "syncobj %u", h);
		fi_put(st, key, "value %llu submitted %llu error %d",
		       (unsigned long long)q.value,
		       (unsigned long long)q.submitted, q.error);
	}
	fi_put(st, "live syncobjs", "%u", live);
}

/* A device fd with one syncobj at value 1, in c->handle. */
static int fi_setup_syncobj(struct fi_ctx *c)
{
	struct accel_syncobj_create cr = { .initial = 1 };
	int ret = fi_setup_dev(c);

	if (ret)
		return ret;
	if (ioctl(c->fd, ACCEL_IOCTL_SYNCOBJ_CREATE, &cr) < 0)
		return -errno;
	c->handle = cr.handle;
	return 0;
}
#endif

/* The calls. */

static int fi_call_open(struct fi_ctx *c)
{
	c->new_fd = open(ACCEL_DEV_PATH, O_RDWR | O_CLOEXEC);
	return c->new_fd < 0 ? -errno : 0;
}

static int fi_call_info(struct fi_ctx *c)
{
	struct accel_info info;

	return ioctl(c->fd, ACCEL_IOCTL_INFO, &info) < 0 ? -errno : 0;
}

static int fi_call_nop(struct fi_ctx *c)
{
	struct accel_nop nop = { .cookie = 1 };

	return ioctl(c->fd, ACCEL_IOCTL_NOP, &nop) < 0 ? -errno : 0;
}

/*
 * One uring_cmd through io_uring_enter: the submission's error (io_uring
 * could not allocate a request: -EAGAIN or -ENOMEM), or the CQE's result.
 */
static int fi_uring_cmd(struct fi_ctx *c, __u32 op, const void *payload,
			size_t len)
{
	struct io_uring_cqe *cqe;
	int ret;

	accel_prep_uring_cmd(io_uring_get_sqe(&c->ring), c->fd, op, payload,
			     len);
	ret = io_uring_submit_and_wait(&c->ring, 1);
	if (ret < 0)
		return ret;
	if (ret == 0)
		return -EAGAIN;
	ret = io_uring_peek_cqe(&c->ring, &cqe);
	if (ret)
		return ret;
	ret = cqe->res;
	io_uring_cqe_seen(&c->ring, cqe);
	return ret;
}

static int fi_call_uring_nop(struct fi_ctx *c)
{
	struct accel_nop nop = { .cookie = 2 };

	return fi_uring_cmd(c, ACCEL_URING_CMD_NOP, &nop, sizeof(nop));
}

/* ---- syncobj and scheduler entry points -------------------------------- */

static int fi_call_syncobj_create(struct fi_ctx *c)
{
	struct accel_syncobj_create cr = { .initial = 3 };

	if (ioctl(c->fd, ACCEL_IOCTL_SYNCOBJ_CREATE, &cr) < 0)
		return -errno;
	c->new_handle = cr.handle;
	return 0;
}

static int fi_call_syncobj_export(struct fi_ctx *c)
{
	struct accel_syncobj_handle_fd a = { .handle = c->handle };

	if (ioctl(c->fd, ACCEL_IOCTL_SYNCOBJ_EXPORT, &a) < 0)
		return -errno;
	c->new_fd = a.fd;
	return 0;
}

/* A wait on two reached points: copies both arrays, allocates its entries. */
static int fi_call_syncobj_wait(struct fi_ctx *c)
{
	__u32 h[2] = { c->handle, c->handle };
	__u64 p[2] = { 1, 0 };
	struct accel_syncobj_wait w = {
		.handles = (uintptr_t)h, .points = (uintptr_t)p, .count = 2,
	};

	return ioctl(c->fd, ACCEL_IOCTL_SYNCOBJ_WAIT, &w) < 0 ? -errno : 0;
}

/* An eventfd on a reached point: registered and delivered at once. */
static int fi_setup_syncobj_eventfd(struct fi_ctx *c)
{
	int ret = fi_setup_syncobj(c);

	if (ret)
		return ret;
	c->aux_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	return c->aux_fd < 0 ? -errno : 0;
}

static int fi_call_syncobj_eventfd(struct fi_ctx *c)
{
	struct accel_syncobj_eventfd a = {
		.handle = c->handle, .point = 1, .fd = c->aux_fd,
	};

	return ioctl(c->fd, ACCEL_IOCTL_SYNCOBJ_EVENTFD, &a) < 0 ? -errno : 0;
}

static int fi_call_queue_create(struct fi_ctx *c)
{
	struct accel_queue_create q = { .priority = ACCEL_PRIORITY_NORMAL,
					.weight = 1, .engine = "fi-engine" };

	return ioctl(c->fd, ACCEL_IOCTL_QUEUE_CREATE, &q) < 0 ? -errno : 0;
}

/* A syncobj (c->handle) and a queue, whose handle is 1 in a fresh file. */
static int fi_setup_queue(struct fi_ctx *c)
{
	int ret = fi_setup_syncobj(c);

	if (ret)
		return ret;
	return fi_call_queue_create(c);
}

/* A job that waits on a reached point and promises point 2. */
static int fi_call_job_submit(struct fi_ctx *c)
{
	struct accel_point w = { .handle = c->handle, .point = 1 };
	struct accel_point sig = { .handle = c->handle, .point = 2 };
	struct accel_job j = {
		.queue = 1, .waits = (uintptr_t)&w, .nwaits = 1,
		.signals = (uintptr_t)&sig, .nsignals = 1,
	};
	struct accel_job_submit s = { .jobs = (uintptr_t)&j, .count = 1 };

	return ioctl(c->fd, ACCEL_IOCTL_JOB_SUBMIT, &s) < 0 ? -errno : 0;
}

/*
 * FI_ENTRY(name, setup, snapshot): the variant @name, which calls
 * fi_call_<name>() after fi_setup_<setup>() and compares
 * fi_snap_<snapshot>() around each injected failure.
 */
#define FI_ENTRY(_name, _setup, _snap)                                       \
	FIXTURE_VARIANT_ADD(faultinject, _name) {                            \
		.setup = fi_setup_##_setup,                                  \
		.call = fi_call_##_name,                                     \
		.snapshot = fi_snap_##_snap,                                 \
		.cleanup = fi_cleanup,                                       \
	}

/*
 * The entry points, one variant each: name, set-up, call, snapshot,
 * clean-up, and an errno besides ENOMEM that a failed allocation may give.
 */
FI_ENTRY(open, none, none);

FIXTURE_VARIANT_ADD(faultinject, ioctl_info) {
	.setup = fi_setup_dev,
	.call = fi_call_info,
	.snapshot = fi_snap_fdinfo,
	.cleanup = fi_cleanup,
};

FIXTURE_VARIANT_ADD(faultinject, ioctl_nop) {
	.setup = fi_setup_dev,
	.call = fi_call_nop,
	.snapshot = fi_snap_fdinfo,
	.cleanup = fi_cleanup,
};

FIXTURE_VARIANT_ADD(faultinject, uring_nop) {
	.setup = fi_setup_ring,
	.call = fi_call_uring_nop,
	.snapshot = fi_snap_fdinfo,
	.cleanup = fi_cleanup,
	.also_ok = EAGAIN,
};

/*
 * The syncobj and scheduler entry points. They set up with
 * fi_setup_syncobj (a device fd and one syncobj, c->handle) or a variant
 * of it, and compare fi_snap_syncobjs (every live handle's QUERY and their
 * count). A call that creates a handle stores it in c->new_handle, one
 * that creates an fd (EXPORT) in c->new_fd, and fi_cleanup undoes them; an
 * eventfd or a sync_file to import goes in c->aux_fd, made by the set-up,
 * not the call. A new one is FI_ENTRY(name, setup, snapshot) with its
 * fi_call_<name>().
 *
 * EXPORT_SYNC_FILE is not listed: when sync_file_create() fails, the
 * point's fence stays cached in the syncobj (and holds a module
 * reference) until the syncobj goes. Invisible to the ABI, but a
 * change; see Documentation/syncobj.rst.
 */
FI_ENTRY(syncobj_create, dev, syncobjs);

FI_ENTRY(syncobj_export, syncobj, syncobjs);

FI_ENTRY(syncobj_wait, syncobj, syncobjs);

FI_ENTRY(syncobj_eventfd, syncobj_eventfd, syncobjs);

FI_ENTRY(queue_create, dev, fdinfo);

FI_ENTRY(job_submit, queue, syncobjs);

/* ---- the runner -------------------------------------------------------- */

/* The state every entry point shares: this process's fds, the module's users. */
static void fi_snapshot(const FIXTURE_VARIANT(faultinject) *e,
			struct fi_ctx *c, struct fi_state *st)
{
	unsigned int fds = 0;
	struct dirent *d;
	char buf[32] = "";
	DIR *dir;
	FILE *f;

	memset(st, 0, sizeof(*st));
	dir = opendir("/proc/self/fd");
	if (dir) {
		while ((d = readdir(dir)))
			fds += d->d_name[0] != '.';
		closedir(dir);
	}
	fi_put(st, "open fds", "%u", fds);
	f = fopen("/sys/module/accelsched/refcnt", "re");
	if (f) {
		if (!fgets(buf, sizeof(buf), f))
			buf[0] = 0;
		buf[strcspn(buf, "\n")] = 0;
		fclose(f);
	}
	fi_put(st, "module refcnt", "%s", buf);
	e->snapshot(c, st);
}

/* Write @val to @path; return 0 or -errno. */
static int fi_write(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, val, strlen(val)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

/* Arm fail-nth for the Nth fault point from now. */
static void fi_arm(struct __test_metadata *_metadata, int nth_fd, int n)
{
	char buf[16];
	int len = snprintf(buf, sizeof(buf), "%d", n);

	ASSERT_EQ(len, pwrite(nth_fd, buf, len, 0));
}

/*
 * Disarm fail-nth and say whether the fault was injected. Nothing may touch
 * the kernel between the call and this: a pending count would go on
 * counting in whatever came next.
 */
static bool fi_disarm(struct __test_metadata *_metadata, int nth_fd)
{
	char buf[16] = "";
	ssize_t got = pread(nth_fd, buf, sizeof(buf) - 1, 0);

	ASSERT_GT(got, 0);
	ASSERT_EQ(1, pwrite(nth_fd, "0", 1, 0));
	return atoi(buf) == 0;
}

/*
 * Skipped without fault injection or without the module, and failed by a
 * splat in the kernel log (accel_test.h).
 */
FIXTURE_SETUP(faultinject)
{
	if (access(FI_FAIL_NTH, F_OK))
		SKIP(return, "%s is absent: this kernel has no fault injection (CONFIG_FAULT_INJECTION); the debug kernel debug6.12 runs this test",
		     FI_FAIL_NTH);
	if (access(FI_FAILSLAB, F_OK))
		SKIP(return, "%s is absent: this kernel has no failslab in debugfs (CONFIG_FAILSLAB, CONFIG_FAULT_INJECTION_DEBUG_FS)",
		     FI_FAILSLAB);
	accel_test_setup(_metadata, variant);
}

FIXTURE_TEARDOWN_PARENT(faultinject)
{
	accel_test_teardown(_metadata, variant);
}

TEST_F_TIMEOUT(faultinject, allocation_failures_are_clean, FI_TIMEOUT_S)
{
	const FIXTURE_VARIANT(faultinject) *e = variant;
	int nth_fd, injected_ok = 0, recovered = 0, n;
	struct fi_state before, after;

	/*
	 * failslab spares allocations that may sleep (GFP_KERNEL) unless told
	 * otherwise; verbose=1 logs each injected failure in one line (2
	 * would add a stack trace, which the splat scan would take for one).
	 */
	ASSERT_EQ(0, fi_write(FI_FAILSLAB "/ignore-gfp-wait", "N"));
	ASSERT_EQ(0, fi_write(FI_FAILSLAB "/verbose", "1"));
	nth_fd = open(FI_FAIL_NTH, O_RDWR | O_CLOEXEC);
	ASSERT_GE(nth_fd, 0);

	for (n = 1; n <= FI_MAX_N; n++) {
		struct fi_ctx c = { .fd = -1, .aux_fd = -1, .new_fd = -1 };
		bool injected;
		int ret, diffs;

		ret = e->setup(&c);
		if (ret) {
			TH_LOG("set-up failed: %s", strerror(-ret));
			ASSERT_EQ(0, ret);
		}
		fi_snapshot(e, &c, &before);
		fi_arm(_metadata, nth_fd, n);
		ret = e->call(&c);
		injected = fi_disarm(_metadata, nth_fd);

		if (!injected) {
			/* The call hit fewer than N fault points: all done. */
			if (ret)
				TH_LOG("failed with %s (%d) although no fault was injected (N=%d)",
				       strerrorname_np(-ret) ?: "?", ret, n);
			ASSERT_EQ(0, ret);
			e->cleanup(&c);
			break;
		}
		if (ret == 0) {
			/* The kernel got over the failure (a fallback). */
			recovered++;
			e->cleanup(&c);
			continue;
		}
		if (ret != -ENOMEM && (!e->also_ok || ret != -e->also_ok)) {
			TH_LOG("fault point %d failed and the call returned %s (%d); want ENOMEM%s%s",
			       n, strerrorname_np(-ret) ?: "?", ret,
			       e->also_ok ? " or " : "",
			       e->also_ok ? strerrorname_np(e->also_ok) : "");
			ASSERT_EQ(-ENOMEM, ret);
		}
		fi_snapshot(e, &c, &after);
		ASSERT_FALSE(before.overflow || after.overflow);
		diffs = fi_state_diff(&before, &after);
		if (diffs)
			TH_LOG("fault point %d failed (%s) and the state changed (above)",
			       n, strerrorname_np(-ret));
		ASSERT_EQ(0, diffs);
		injected_ok++;
		e->cleanup(&c);
	}
	close(nth_fd);
	if (n > FI_MAX_N)
		TH_LOG("still failing after %d injected faults", FI_MAX_N);
	ASSERT_LE(n, FI_MAX_N);
	TH_LOG("%d fault point(s): %d failed cleanly, %d recovered by the kernel",
	       n - 1, injected_ok, recovered);
}

ACCEL_TEST_MAIN
