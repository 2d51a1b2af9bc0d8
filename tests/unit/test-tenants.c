// SPDX-License-Identifier: MIT
/*
 * Check suite "tenants": who shares an engine, through libaccel.
 *
 * The unit of fair share above queues is the tenant. On the module a
 * tenant is the cgroup (v2) of the process that opened /dev/accelsched, or,
 * from the root cgroup, the open file itself; engine time is split by
 * tenant weight first, then among the tenant's queues by queue weight. On
 * the embedded scheduler a process is one tenant. So:
 *
 * - on both schedulers, the queues of one process share by their weights:
 *   eight queues of weight 1 get what one queue of weight 8 gets;
 * - on the module only (ACCEL_SCHEDULER=kernel, as root in the VM), with
 *   processes as tenants: a tenant with eight queues gets what a tenant
 *   with one gets, two cgroups split by the weights the administrator
 *   wrote, and a HIGH job of one tenant passes another tenant's LOW flood.
 *   On the embedded scheduler these print "SKIP:": it serves one process.
 *
 * Every test fills one engine behind a gate: a job that holds the engine's
 * only credit (ACCEL_ENGINE_CREDITS=1 embedded; on the module the engine's
 * sysfs limit, the administrator's, set to 1 and restored) until every
 * tenant has queued its jobs. Jobs then run one at a time, each for 500 us
 * of cpu, and record who they belong to in memory shared across fork(), so
 * the run order is the release order. Shares are counted over the first
 * 40 jobs, while every tenant still has work; the bounds are wide, since
 * device times are measured under a noisy VM, and no timing is asserted.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "test-accel.h"

#define TENANTS "/sys/kernel/accelsched/tenants"
#define CGROOT "/sys/fs/cgroup"
#define COUNTED 40
#define MAX_ORDER 512
#define HIGH_TAG 99

/* What the processes of a test share (MAP_SHARED, made before fork()). */
struct shared {
	atomic_int gate_open;    /* the gate job returns */
	atomic_int gate_entered; /* the gate job holds the credit */
	atomic_int queued;       /* tenants whose jobs are all submitted */
	atomic_int opened;       /* tenants whose device is open */
	atomic_int weights_set;  /* the administrator's weights are written */
	atomic_int warm;         /* tenants whose warm-up job ran */
	atomic_uint order_len;
	uint8_t order[MAX_ORDER]; /* the tag of each job, in run order */
};

static struct shared *sh;

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void gate_fn(const struct accel_cpu_dispatch *d)
{
	(void)d;
	atomic_store(&sh->gate_entered, 1);
	while (!atomic_load(&sh->gate_open))
		sched_yield();
}

/* Every job costs the same: 500 us of device time. constants[0]: its tag. */
static void record_fn(const struct accel_cpu_dispatch *d)
{
	unsigned int i = atomic_fetch_add(&sh->order_len, 1);
	int64_t end = now_ns() + 500000;

	while (now_ns() < end)
		;
	if (i < MAX_ORDER)
		sh->order[i] = (uint8_t)d->constants[0];
}

/* Touches what record_fn does, recording nothing. */
static void warm_fn(const struct accel_cpu_dispatch *d)
{
	int64_t end = now_ns() + 100000;

	(void)d;
	while (now_ns() < end)
		(void)atomic_load(&sh->order_len);
}

static const struct accel_cpu_entry entries[] = {
	{ "gate", 0, 0, { 1, 1, 1 }, gate_fn },
	{ "record", 0, 1, { 1, 1, 1 }, record_fn },
	{ "warm", 0, 0, { 1, 1, 1 }, warm_fn },
};
static const struct accel_cpu_executable table = {
	ACCEL_CPU_EXECUTABLE_ABI_VERSION, 3, entries, NULL,
};

/* ---- sysfs and cgroups ------------------------------------------------- */

/* Why the module's tests cannot run here, or NULL. */
static const char *kernel_skip(void)
{
	if (!test_kernel_mode())
		return "tenants are processes (their files, or their cgroups) on the module; the embedded scheduler serves one process, one tenant (ACCEL_SCHEDULER=kernel runs these in the VM)";
	if (geteuid() != 0)
		return "the engine's credit limit and tenant weights are the administrator's: run as root";
	if (!test_saved_credits[0])
		return "cannot read " TEST_ENGINE_CREDITS " nor " TEST_DEFAULT_CREDITS;
	return NULL;
}

/* cgroup2 at CGROOT, mounted if nothing is there; 0 or -errno. */
static int cgroup2_ready(void)
{
	if (!access(CGROOT "/cgroup.procs", F_OK))
		return 0;
	if (mount("none", CGROOT, "cgroup2", 0, NULL) && errno != EBUSY)
		return -errno;
	return access(CGROOT "/cgroup.procs", F_OK) ? -errno : 0;
}

/* ---- a tenant: one process, its device, its queues ---------------------- */

/*
 * What one tenant does. It opens its own device (a file of its own on the
 * module), makes @nqueues queues of @priority and @weight, submits @njobs
 * record jobs tagged @tag round-robin over them, and waits for them all.
 * @gate: it also holds the engine with the gate job first (on the module,
 * after writing the engine's credit limit of 1). @cgroup: it moves itself
 * there before it opens anything.
 */
struct tenant {
	uint32_t tag;
	uint32_t nqueues;
	uint32_t priority;
	uint32_t weight;
	uint32_t njobs;
	bool gate;
	const char *cgroup;
};

/* In a forked tenant: say what failed and exit 1 (the parent asserts 0). */
#define CHILD_CHECK(cond, ...) do {                                          \
	if (!(cond)) {                                                       \
		fprintf(stderr, "tenant, line %d: ", __LINE__);              \
		fprintf(stderr, __VA_ARGS__);                                \
		fprintf(stderr, " (%s)\n", accel_error_message());           \
		_exit(1);                                                    \
	}                                                                    \
} while (0)

static void wait_flag(atomic_int *flag, int value)
{
	int64_t end = now_ns() + 60 * (int64_t)1000000000;

	while (atomic_load(flag) < value) {
		CHILD_CHECK(now_ns() < end, "waited 60 s for the other tenants");
		usleep(1000);
	}
}

static accel_command_buffer_t *job_cb(accel_device_t *d, accel_executable_t *e,
				      uint32_t ordinal, uint32_t tag)
{
	static const uint32_t one[3] = { 1, 1, 1 };
	accel_command_buffer_t *cb = NULL;

	CHILD_CHECK(!accel_command_buffer_create(d, ACCEL_COMMAND_BUFFER_ONE_SHOT, 0, &cb) &&
		    !accel_command_buffer_begin(cb) &&
		    !accel_command_buffer_dispatch(cb, e, ordinal, one,
						   ordinal == 1 ? &tag : NULL,
						   ordinal == 1 ? 1 : 0, NULL, 0) &&
		    !accel_command_buffer_end(cb), "recording a job");
	return cb;
}

static accel_queue_t *queue_new(accel_device_t *d, uint32_t priority, uint32_t weight)
{
	accel_queue_options_t o = ACCEL_QUEUE_OPTIONS_INIT;
	accel_queue_t *q = NULL;

	o.priority = priority;
	o.weight = weight;
	CHILD_CHECK(!accel_queue_create_with_options(d, &o, &q),
		    "queue (priority %u, weight %u)", priority, weight);
	return q;
}

static void submit(accel_device_t *d, accel_executable_t *e, accel_queue_t *q,
		   uint32_t ordinal, uint32_t tag, accel_semaphore_t *done,
		   uint64_t value)
{
	accel_command_buffer_t *cb = job_cb(d, e, ordinal, tag);
	accel_semaphore_t *s[1] = { done };
	uint64_t v[1] = { value };
	accel_semaphore_list_t sig = { 1, s, v };

	CHILD_CHECK(!accel_queue_execute(q, NULL, done ? &sig : NULL, cb, NULL, 0),
		    "execute (tag %u)", tag);
	accel_command_buffer_release(cb);
}

/* The gate: the engine's only credit, held until the parent opens it. */
static void close_gate(accel_device_t *d, accel_executable_t *e)
{
	accel_queue_t *g = queue_new(d, ACCEL_QUEUE_PRIORITY_NORMAL, 1);
	int err;

	if (test_kernel_mode()) {
		err = test_file_io(TEST_ENGINE_CREDITS, NULL, 0, "1");
		CHILD_CHECK(!err, "writing 1 to " TEST_ENGINE_CREDITS ": %s", strerror(-err));
	}
	submit(d, e, g, 0, 0, NULL, 0);
	while (!atomic_load(&sh->gate_entered))
		sched_yield();
	accel_queue_release(g); /* the job holds it */
}

/*
 * A process's first job pays for what is cold (page faults in the replay
 * path and in this file's code: milliseconds on a debug kernel), and a
 * scheduler charges measured device time: run one first, on a queue of
 * its own class (NORMAL), so that the LOW queues compared start even.
 */
static void warm_up(accel_device_t *d, accel_executable_t *e)
{
	accel_queue_t *w = queue_new(d, ACCEL_QUEUE_PRIORITY_NORMAL, 1);
	accel_semaphore_t *done;
	int err;

	CHILD_CHECK(!accel_semaphore_create(accel_device_scheduler(d), 0, &done), "semaphore");
	submit(d, e, w, 2, 0, done, 1);
	err = accel_semaphore_wait(done, 1, 0, accel_deadline_after(60 * (uint64_t)1000000000));
	CHILD_CHECK(!err, "the warm-up job: %d", err);
	accel_semaphore_release(done);
	accel_queue_release(w);
}

static void run_tenant(const struct tenant *t, int ntenants)
{
	accel_device_t *d;
	accel_executable_t *e;
	accel_queue_t *q[8];
	accel_semaphore_t *done[8];
	uint64_t last[8] = { 0 };
	int err;

	CHILD_CHECK(t->nqueues >= 1 && t->nqueues <= 8, "nqueues %u", t->nqueues);
	if (t->cgroup) {
		char path[256];

		snprintf(path, sizeof(path), "%s/cgroup.procs", t->cgroup);
		err = test_file_io(path, NULL, 0, "0");
		CHILD_CHECK(!err, "joining %s: %s", t->cgroup, strerror(-err));
	}
	CHILD_CHECK(!accel_device_open("cpu://", NULL, &d), "accel_device_open");
	CHILD_CHECK(!accel_cpu_executable_create(d, &table, &e), "executable");
	atomic_fetch_add(&sh->opened, 1);
	if (t->cgroup)
		wait_flag(&sh->weights_set, 1);
	warm_up(d, e);
	atomic_fetch_add(&sh->warm, 1);
	if (t->gate) {
		wait_flag(&sh->warm, ntenants); /* the gate would hold them */
		close_gate(d, e);
	}
	else
		wait_flag(&sh->gate_entered, 1);
	for (uint32_t i = 0; i < t->nqueues; i++) {
		q[i] = queue_new(d, t->priority, t->weight);
		CHILD_CHECK(!accel_semaphore_create(accel_device_scheduler(d), 0, &done[i]),
			    "semaphore");
	}
	for (uint32_t j = 0; j < t->njobs; j++) {
		uint32_t i = j % t->nqueues;

		submit(d, e, q[i], 1, t->tag, done[i], ++last[i]);
	}
	atomic_fetch_add(&sh->queued, 1);
	for (uint32_t i = 0; i < t->nqueues; i++) {
		err = accel_semaphore_wait(done[i], last[i], 0,
					   accel_deadline_after(120 * (uint64_t)1000000000));
		CHILD_CHECK(!err, "waiting for queue %u's %" PRIu64 " jobs: %d", i, last[i], err);
		accel_semaphore_release(done[i]);
		accel_queue_release(q[i]);
	}
	accel_executable_release(e);
	accel_device_release(d);
	_exit(0);
}

/*
 * Runs each tenant in a process of its own; opens the gate once all have
 * queued their jobs; returns once all exited well. @weights: for tenants
 * in cgroups, the weight to write for each (once each has its device
 * open), else NULL.
 */
static void run_tenants(const struct tenant *t, int n, const char *const *weights)
{
	pid_t pid[4];

	ck_assert_int_le(n, 4);
	for (int i = 0; i < n; i++) {
		pid[i] = fork();
		ck_assert_int_ge(pid[i], 0);
		if (pid[i] == 0)
			run_tenant(&t[i], n);
	}
	if (weights) {
		for (int64_t end = now_ns() + 60 * (int64_t)1000000000;
		     atomic_load(&sh->opened) < n && now_ns() < end;)
			usleep(1000);
		ck_assert_int_eq(atomic_load(&sh->opened), n);
		for (int i = 0; i < n; i++) {
			char path[256];
			struct stat st;
			int err = -ENOENT;

			ck_assert_int_eq(stat(t[i].cgroup, &st), 0);
			/* The tenant's directory: its cgroup's id, the inode. */
			snprintf(path, sizeof(path), TENANTS "/%llu/weight",
				 (unsigned long long)st.st_ino);
			for (int k = 0; k < 10000 && err == -ENOENT; k++) {
				err = test_file_io(path, NULL, 0, weights[i]);
				if (err == -ENOENT)
					usleep(1000);
			}
			ck_assert_msg(!err, "writing %s to %s: %s", weights[i],
				      path, strerror(-err));
		}
		atomic_store(&sh->weights_set, 1);
	}
	for (int64_t end = now_ns() + 60 * (int64_t)1000000000;
	     atomic_load(&sh->queued) < n && now_ns() < end;)
		usleep(1000);
	atomic_store(&sh->gate_open, 1);
	for (int i = 0; i < n; i++) {
		int status;

		ck_assert_int_eq(waitpid(pid[i], &status, 0), pid[i]);
		ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
			      "tenant %d failed (status 0x%x); its stderr says where",
			      i, status);
	}
}

/* How many of the first COUNTED jobs carried @tag; the order as text. */
static uint32_t count_tag(uint8_t tag, char *seen)
{
	uint32_t n = 0;

	for (int i = 0; i < COUNTED; i++) {
		n += sh->order[i] == tag;
		seen[i] = (char)('0' + sh->order[i] % 10);
	}
	seen[COUNTED] = 0;
	return n;
}

static void setup(void)
{
	bool kernel = test_kernel_mode();

	test_clear_env();
	setenv(ACCEL_SCHEDULER_ENV, kernel ? "kernel" : "embedded", 1);
	setenv("ACCEL_ENGINE_CREDITS", "1", 1); /* the embedded engine's limit */
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(sh, MAP_FAILED);
}

static void teardown(void)
{
	test_credits_restore();
	munmap(sh, sizeof(*sh));
}

/* ---- the tests ----------------------------------------------------------- */

/*
 * Device times are measured, and a job that loses its cpu for a while in
 * a busy VM costs its queue as much as ten: the arbiter then rightly
 * gives it less for a while, and one window of 40 jobs can fall outside
 * the bounds. A share test so gets three attempts, each from scratch; a
 * broken arbiter fails all three.
 */
#define ATTEMPTS 3

typedef uint32_t (*share_fn)(const void *arg);

static void expect_share(share_fn fn, const void *arg, uint8_t tag,
			 uint32_t lo, uint32_t hi, const char *what)
{
	char seen[ATTEMPTS][COUNTED + 1];
	uint32_t got[ATTEMPTS];

	for (int a = 0; a < ATTEMPTS; a++) {
		memset(sh, 0, sizeof(*sh));
		fn(arg);
		got[a] = count_tag(tag, seen[a]);
		if (got[a] >= lo && got[a] <= hi) {
			printf("# %s: %u of the first %d jobs (%u..%u expected)\n",
			       what, got[a], COUNTED, lo, hi);
			return;
		}
		printf("# %s: attempt %d: %u of the first %d jobs (%u..%u expected); run order by tag: %s\n",
		       what, a + 1, got[a], COUNTED, lo, hi, seen[a]);
	}
	ck_abort_msg("%s ran %u, %u and %u of the first %d jobs in three attempts; expected %u..%u; run orders by tag: %s %s %s",
		     what, got[0], got[1], got[2], COUNTED, lo, hi, seen[0],
		     seen[1], seen[2]);
}

/* One process, nine queues: eight of weight 1 (tag 1), one of weight 8 (tag 2). */
static uint32_t nine_queues(const void *arg)
{
	accel_device_t *d;
	accel_executable_t *e;
	accel_queue_t *q[9];
	accel_semaphore_t *done[9];

	(void)arg;
	ASSERT_OK(accel_device_open("cpu://", NULL, &d));
	ASSERT_OK(accel_cpu_executable_create(d, &table, &e));
	warm_up(d, e);
	close_gate(d, e);
	for (int i = 0; i < 9; i++) {
		q[i] = queue_new(d, ACCEL_QUEUE_PRIORITY_LOW, i < 8 ? 1 : 8);
		ASSERT_OK(accel_semaphore_create(accel_device_scheduler(d), 0, &done[i]));
	}
	for (uint32_t j = 0; j < 64; j++) {
		submit(d, e, q[j % 8], 1, 1, NULL, 0);
		submit(d, e, q[8], 1, 2, NULL, 0);
	}
	atomic_store(&sh->gate_open, 1);
	/* Each queue runs in submission order: a barrier after its jobs. */
	for (int i = 0; i < 9; i++) {
		accel_semaphore_t *s[1] = { done[i] };
		uint64_t v[1] = { 1 };
		accel_semaphore_list_t sig = { 1, s, v };

		ASSERT_OK(accel_queue_barrier(q[i], NULL, &sig, 0));
	}
	for (int i = 0; i < 9; i++) {
		ASSERT_OK(accel_semaphore_wait(done[i], 1, 0,
					       accel_deadline_after(120 * (uint64_t)1000000000)));
		accel_semaphore_release(done[i]);
		accel_queue_release(q[i]);
	}
	accel_executable_release(e);
	accel_device_release(d);
	ck_assert_uint_eq(atomic_load(&sh->order_len), 128);
	return 0;
}

/*
 * One tenant, nine queues: the eight of weight 1 together get what the
 * one of weight 8 gets. Both schedulers; on the embedded one this is the
 * process's only tenant.
 */
START_TEST(test_queues_share_by_weight_within_a_tenant)
{
	if (test_kernel_mode() && kernel_skip())
		TEST_SKIP("%s", kernel_skip());
	expect_share(nine_queues, NULL, 1, 12, 28,
		     "eight queues of weight 1 against one of weight 8");
}
END_TEST

static uint32_t two_tenants(const void *arg)
{
	run_tenants(arg, 2, NULL);
	return 0;
}

/*
 * Two tenants, equal weights: one with eight queues, one with one. Opening
 * more queues gains a tenant nothing.
 */
START_TEST(test_more_queues_gain_a_tenant_nothing)
{
	static const struct tenant t[2] = {
		{ .tag = 1, .nqueues = 8, .priority = ACCEL_QUEUE_PRIORITY_LOW,
		  .weight = 1, .njobs = 64, .gate = true },
		{ .tag = 2, .nqueues = 1, .priority = ACCEL_QUEUE_PRIORITY_LOW,
		  .weight = 1, .njobs = 64 },
	};

	if (kernel_skip())
		TEST_SKIP("%s", kernel_skip());
	expect_share(two_tenants, t, 1, 12, 28,
		     "a tenant with eight queues against a tenant with one");
}
END_TEST

struct cg_pair {
	struct tenant t[2];
	const char *weights[2];
};

static uint32_t cgroup_tenants(const void *arg)
{
	const struct cg_pair *c = arg;

	ck_assert_int_eq(mkdir(c->t[0].cgroup, 0755), 0);
	ck_assert_int_eq(mkdir(c->t[1].cgroup, 0755), 0);
	run_tenants(c->t, 2, c->weights);
	ck_assert_int_eq(rmdir(c->t[0].cgroup), 0);
	ck_assert_int_eq(rmdir(c->t[1].cgroup), 0);
	return 0;
}

/*
 * Two tenants in two cgroups, tenant weights 100 and 300 written by the
 * administrator in sysfs: the second gets about three quarters.
 */
START_TEST(test_cgroup_tenants_split_by_weight)
{
	char a[64], b[64];
	struct cg_pair c = {
		.t = {
			{ .tag = 1, .nqueues = 1, .priority = ACCEL_QUEUE_PRIORITY_LOW,
			  .weight = 1, .njobs = 60, .gate = true, .cgroup = a },
			{ .tag = 3, .nqueues = 1, .priority = ACCEL_QUEUE_PRIORITY_LOW,
			  .weight = 1, .njobs = 60, .cgroup = b },
		},
		.weights = { "100", "300" },
	};
	int err;

	if (kernel_skip())
		TEST_SKIP("%s", kernel_skip());
	err = cgroup2_ready();
	if (err)
		TEST_SKIP("cgroup2 cannot be mounted at " CGROOT ": %s", strerror(-err));
	snprintf(a, sizeof(a), CGROOT "/accel-tt-%d-a", getpid());
	snprintf(b, sizeof(b), CGROOT "/accel-tt-%d-b", getpid());
	expect_share(cgroup_tenants, &c, 3, 24, 36,
		     "the tenant of weight 300 against one of weight 100");
}
END_TEST

/*
 * A HIGH job of one tenant, queued behind the gate with another tenant's
 * LOW flood, runs first (the process is root: it has CAP_SYS_NICE).
 */
START_TEST(test_high_passes_another_tenants_flood)
{
	const struct tenant t[2] = {
		{ .tag = 1, .nqueues = 2, .priority = ACCEL_QUEUE_PRIORITY_LOW,
		  .weight = 1, .njobs = 20, .gate = true },
		{ .tag = HIGH_TAG, .nqueues = 1, .priority = ACCEL_QUEUE_PRIORITY_HIGH,
		  .weight = 1, .njobs = 1 },
	};
	char seen[COUNTED + 1];

	if (kernel_skip())
		TEST_SKIP("%s", kernel_skip());
	run_tenants(t, 2, NULL);
	ck_assert_uint_eq(atomic_load(&sh->order_len), 21);
	count_tag(1, seen);
	ck_assert_msg(sh->order[0] == HIGH_TAG,
		      "the first job to run was tag %u, not the HIGH tenant's (%u); run order: %.21s",
		      sh->order[0], HIGH_TAG, seen);
}
END_TEST

static Suite *tenants_suite(void)
{
	Suite *suite = suite_create("tenants");
	TCase *tc = tcase_create("share");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_unchecked_fixture(tc, test_credits_save, test_credits_restore);
	tcase_set_timeout(tc, 180);
	tcase_add_test(tc, test_queues_share_by_weight_within_a_tenant);
	tcase_add_test(tc, test_more_queues_gain_a_tenant_nothing);
	tcase_add_test(tc, test_cgroup_tenants_split_by_weight);
	tcase_add_test(tc, test_high_passes_another_tenants_flood);
	suite_add_tcase(suite, tc);
	return suite;
}

int main(void)
{
	return test_run_suite(tenants_suite());
}
