// SPDX-License-Identifier: MIT
/*
 * Regressions found from outside, through the documented ABI alone: a
 * use-after-free when a job is released and completed while its submission
 * is still arming it, fences pinned by polls, a present waiter that missed
 * a failure, job ids that came back, a queue's doomed job released on the
 * credit of its cancelled sibling, -ECANCELED where a dead producer must
 * give -EOWNERDEAD, and sync_file import cycles that kept the module
 * loaded. Each test is the user-visible behaviour, as an outside tester
 * would check it.
 */
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <stdatomic.h>

#include "syncobj_util.h"

static const char *engine_name(const char *tag)
{
	static char name[ACCEL_ENGINE_NAME_LEN];

	snprintf(name, sizeof(name), "r-%s-%d", tag, getpid());
	return name;
}

static uint32_t queue_new(struct __test_metadata *_metadata, int fd,
			  const char *engine, uint32_t prio, uint32_t credits)
{
	struct accel_queue_create a = {
		.priority = prio, .weight = 1, .credits = credits,
	};

	memcpy(a.engine, engine, strnlen(engine, sizeof(a.engine) - 1));
	ASSERT_EQ(0, xioctl(fd, ACCEL_IOCTL_QUEUE_CREATE, &a));
	return a.handle;
}

/* Submit one job by ioctl: a wait and a signal, either may be absent. */
static int submit(int fd, uint32_t q, uint32_t wh, uint64_t wp, uint32_t sh,
		  uint64_t sp, uint64_t ud)
{
	struct accel_point w = { .handle = wh, .point = wp };
	struct accel_point s = { .handle = sh, .point = sp };
	struct accel_job j = {
		.user_data = ud, .queue = q,
		.waits = (uintptr_t)&w, .nwaits = wh ? 1 : 0,
		.signals = (uintptr_t)&s, .nsignals = sh ? 1 : 0,
	};
	struct accel_job_submit a = { .jobs = (uintptr_t)&j, .count = 1 };
	int ret = xioctl(fd, ACCEL_IOCTL_JOB_SUBMIT, &a);

	return ret ? ret : (int)j.id;
}

static int complete(int fd, uint32_t id, int status)
{
	struct accel_job_complete c = { .id = id, .status = status };

	return xioctl(fd, ACCEL_IOCTL_JOB_COMPLETE, &c);
}

static int fetch(int fd, struct accel_job_event *ev, uint32_t max)
{
	struct accel_job_fetch f = { .events = (uintptr_t)ev, .max = max };

	if (xioctl(fd, ACCEL_IOCTL_JOB_FETCH, &f))
		return -1;
	return f.count;
}

static long read_long(const char *path)
{
	char buf[32] = { 0 };
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return n > 0 ? strtol(buf, NULL, 10) : -1;
}

static long module_refcnt(void)
{
	return read_long("/sys/module/" ACCEL_DEVICE_NAME "/refcnt");
}

static long point_fences(void)
{
	return read_long("/sys/kernel/debug/" ACCEL_DEVICE_NAME "/point_fences");
}

/* Wait up to @ms for the module's reference count to fall to @want. */
static long refcnt_settles(long want, int ms)
{
	long n = module_refcnt();

	for (int i = 0; i < ms && n != want; i++) {
		usleep(1000);
		n = module_refcnt();
	}
	return n;
}

/*
 * Every test: skipped without the module, failed by a splat in the kernel
 * log (accel_test.h).
 */
FIXTURE(robust) {};

FIXTURE_SETUP(robust)
{
	accel_test_setup(_metadata, variant);
}

FIXTURE_TEARDOWN_PARENT(robust)
{
	accel_test_teardown(_metadata, variant);
}

/*
 * Issue 1: three threads race one syncobj. One submits, by ioctl, jobs that
 * wait on X:i and announces i; one signals X up to each announced value at
 * once; one fetches and completes every release at once. A job is then
 * often released and completed while its submission is still arming it,
 * which freed it under the submitter (KASAN on the debug kernel, a lock-up
 * after). Every job must complete and every signal point be reached.
 */
struct race {
	int fd;
	uint32_t q, x, y;
	struct accel_point waits[ACCEL_JOB_MAX_POINTS];
	int n;
	atomic_int announced;
	atomic_int completed;
	atomic_int stop;
	int err;
};

static void *race_signaller(void *arg)
{
	struct race *r = arg;
	int done = 0;

	while (!atomic_load(&r->stop) && done < r->n) {
		int a = atomic_load(&r->announced);

		if (a > done) {
			if (so_signal(r->fd, r->x, a) && !r->err)
				r->err = 1;
			done = a;
		}
	}
	return NULL;
}

static void *race_executor(void *arg)
{
	struct race *r = arg;
	struct accel_job_event ev[64];

	while (!atomic_load(&r->stop) && atomic_load(&r->completed) < r->n) {
		int got = fetch(r->fd, ev, 64);

		for (int i = 0; i < got; i++) {
			if (ev[i].type != ACCEL_JOB_EVENT_RELEASED ||
			    complete(r->fd, ev[i].id, 0)) {
				if (!r->err)
					r->err = 2;
				continue;
			}
			atomic_fetch_add(&r->completed, 1);
		}
	}
	return NULL;
}

static int submit_waits(struct race *r, int i)
{
	struct accel_point sig = { .handle = r->y, .point = i };
	struct accel_job j = {
		.user_data = i, .queue = r->q,
		.waits = (uintptr_t)r->waits, .nwaits = ACCEL_JOB_MAX_POINTS,
		.signals = (uintptr_t)&sig, .nsignals = 1,
	};
	struct accel_job_submit a = { .jobs = (uintptr_t)&j, .count = 1 };
	int ret = xioctl(r->fd, ACCEL_IOCTL_JOB_SUBMIT, &a);

	return ret ? ret : (int)j.id;
}

TEST_F_TIMEOUT(robust, submit_races_release_and_complete, 120)
{
	struct race r = { .fd = accel_test_open(), .n = 4000 };
	pthread_t ts, te;
	uint64_t t0 = now_ns();
	int i;

	ASSERT_GE(r.fd, 0);
	r.q = queue_new(_metadata, r.fd, engine_name("race"), ACCEL_PRIORITY_NORMAL, 64);
	r.x = so_new(_metadata, r.fd, 0);
	r.y = so_new(_metadata, r.fd, 0);
	/*
	 * 63 waits already reached, then X:i: arming a job walks them all
	 * after its last callback is in, which widens the window in which
	 * the job can be released and completed under it.
	 */
	for (i = 0; i < ACCEL_JOB_MAX_POINTS - 1; i++)
		r.waits[i] = (struct accel_point){ .handle = so_new(_metadata, r.fd, 1), .point = 1 };
	r.waits[ACCEL_JOB_MAX_POINTS - 1].handle = r.x;
	ASSERT_EQ(0, pthread_create(&ts, NULL, race_signaller, &r));
	ASSERT_EQ(0, pthread_create(&te, NULL, race_executor, &r));
	for (i = 1; i <= r.n; i++) {
		int id;

		/* Bounded under TCG and KASAN. */
		if (now_ns() - t0 > 20ull * 1000000000ull)
			break;
		/* Announced first: X reaches i while the job is being armed. */
		atomic_store(&r.announced, i);
		r.waits[ACCEL_JOB_MAX_POINTS - 1].point = i;
		id = submit_waits(&r, i);
		if (id <= 0) {
			TH_LOG("submission %d: %d", i, id);
			break;
		}
	}
	r.n = i - 1;
	for (int w = 0; w < 20000 && atomic_load(&r.completed) < r.n; w++)
		usleep(1000);
	atomic_store(&r.stop, 1);
	pthread_join(ts, NULL);
	pthread_join(te, NULL);
	TH_LOG("%d jobs raced", r.n);
	ASSERT_GT(r.n, 100);
	ASSERT_EQ(0, r.err);
	ASSERT_EQ(r.n, atomic_load(&r.completed));
	ASSERT_EQ(0, so_wait1(r.fd, r.y, r.n, 0, in_ms(5000)));
	ASSERT_EQ(0, close(r.fd));
}

/*
 * Found by accel-fuzz: QUEUE_DESTROY on one thread while another submits
 * to the same queue freed the queue under the submission (KASAN on the
 * debug kernel, on the ioctl and io_uring paths). Every submission must
 * either be refused (-ENOENT, the queue is gone) or go in and then be
 * cancelled with the queue: a point it promised fails -ECANCELED, never
 * stays pending.
 */
struct qrace {
	int fd;
	atomic_uint handle;
	atomic_int stop;
};

static void *qrace_destroyer(void *arg)
{
	struct qrace *r = arg;

	while (!atomic_load(&r->stop)) {
		struct accel_queue_destroy d = { .handle = atomic_load(&r->handle) };

		ioctl(r->fd, ACCEL_IOCTL_QUEUE_DESTROY, &d);
	}
	return NULL;
}

TEST_F_TIMEOUT(robust, queue_destroy_races_submit, 120)
{
	struct qrace r = { .fd = accel_test_open() };
	int in = 0, refused = 0, err;
	uint64_t t0 = now_ns();
	pthread_t t;
	uint32_t y;

	ASSERT_GE(r.fd, 0);
	y = so_new(_metadata, r.fd, 0);
	ASSERT_EQ(0, pthread_create(&t, NULL, qrace_destroyer, &r));
	for (int i = 1; i <= 3000 && now_ns() - t0 < 10ull * 1000000000ull; i++) {
		uint32_t q = queue_new(_metadata, r.fd, engine_name("qrace"),
				       ACCEL_PRIORITY_NORMAL, 0);
		uint32_t sy = so_new(_metadata, r.fd, 0);
		int id;

		atomic_store(&r.handle, q);
		/* Waits on Y:1, never reached: it can only be cancelled. */
		id = submit(r.fd, q, y, 1, sy, 1, i);
		if (id == -ENOENT) {
			refused++;
		} else {
			ASSERT_GT(id, 0);
			in++;
			struct accel_queue_destroy d = { .handle = q };
			ioctl(r.fd, ACCEL_IOCTL_QUEUE_DESTROY, &d);
			ASSERT_EQ(-ECANCELED, so_wait1(r.fd, sy, 1, 0, in_ms(5000)));
		}
		ASSERT_EQ(0, so_query(r.fd, sy, NULL, NULL, &err));
		ASSERT_TRUE(err == 0 || err == -ECANCELED);
		ASSERT_EQ(0, so_destroy(r.fd, sy));
	}
	atomic_store(&r.stop, 1);
	pthread_join(t, NULL);
	TH_LOG("%d submissions went in, %d were refused", in, refused);
	ASSERT_GT(in + refused, 100);
	ASSERT_EQ(0, close(r.fd));
}

/*
 * A SUBMIT ready at once, on a queue with jobs waiting, while a signal
 * calls back, looks through the queue's waiting jobs and waits for the
 * fences of those whose waits are all reached (sched.c's
 * job_readied_by_a_signal_on_another_thread_goes_first). Here that look
 * races everything that takes jobs off the list: one thread signals, one
 * submits jobs waiting on points just ahead, one submits jobs ready at
 * once, and the main thread completes what is released and destroys the
 * queue for a new one every few milliseconds, cancelling what waits.
 * Every call answers one of its documented errors, nothing hangs, and the
 * debug kernel's KASAN, lockdep and kmemleak see nothing.
 */
struct settle_race {
	int fd;
	uint32_t g;
	atomic_uint q;
	atomic_ullong gate;
	atomic_int stop, bad, waiting, ready, signals;
};

static void settle_bad(struct settle_race *r, int what)
{
	int none = 0;

	atomic_compare_exchange_strong(&r->bad, &none, what);
}

static void *settle_signaller(void *arg)
{
	struct settle_race *r = arg;

	while (!atomic_load(&r->stop)) {
		uint64_t v = atomic_fetch_add(&r->gate, 1) + 1;
		int ret = so_signal(r->fd, r->g, v);

		if (ret)
			settle_bad(r, 1000 + ret);
		atomic_fetch_add(&r->signals, 1);
	}
	return NULL;
}

static void *settle_waiting(void *arg)
{
	struct settle_race *r = arg;

	for (uint64_t i = 0; !atomic_load(&r->stop); i++) {
		uint64_t at = atomic_load(&r->gate) + 1 + i % 8;
		int id = submit(r->fd, atomic_load(&r->q), r->g, at, 0, 0, 1);

		if (id > 0)
			atomic_fetch_add(&r->waiting, 1);
		else if (id != -ENOENT && id != -ENOSPC)
			settle_bad(r, 2000 + id);
	}
	return NULL;
}

static void *settle_ready(void *arg)
{
	struct settle_race *r = arg;

	while (!atomic_load(&r->stop)) {
		int id = submit(r->fd, atomic_load(&r->q), 0, 0, 0, 0, 2);

		if (id > 0)
			atomic_fetch_add(&r->ready, 1);
		else if (id != -ENOENT && id != -ENOSPC)
			settle_bad(r, 3000 + id);
	}
	return NULL;
}

TEST_F_TIMEOUT(robust, settle_races_signals_submits_and_destroy, 120)
{
	struct settle_race r = { .fd = accel_test_open() };
	struct accel_job_event ev[64];
	pthread_t t[3];
	uint64_t t0;
	int destroys = 0;

	ASSERT_GE(r.fd, 0);
	r.g = so_new(_metadata, r.fd, 0);
	atomic_store(&r.q, queue_new(_metadata, r.fd, engine_name("settle"),
				     ACCEL_PRIORITY_NORMAL, 4));
	ASSERT_EQ(0, pthread_create(&t[0], NULL, settle_signaller, &r));
	ASSERT_EQ(0, pthread_create(&t[1], NULL, settle_waiting, &r));
	ASSERT_EQ(0, pthread_create(&t[2], NULL, settle_ready, &r));
	t0 = now_ns();
	while (now_ns() - t0 < 4ull * 1000000000ull && !atomic_load(&r.bad)) {
		for (int k = 0; k < 20; k++) {
			int n = fetch(r.fd, ev, 64);

			for (int i = 0; i < n; i++)
				if (ev[i].type == ACCEL_JOB_EVENT_RELEASED)
					complete(r.fd, ev[i].id, 0); /* or gone with its queue */
			usleep(200);
		}
		struct accel_queue_destroy d = { .handle = atomic_load(&r.q) };

		ASSERT_EQ(0, xioctl(r.fd, ACCEL_IOCTL_QUEUE_DESTROY, &d));
		atomic_store(&r.q, queue_new(_metadata, r.fd, engine_name("settle"),
					     ACCEL_PRIORITY_NORMAL, 4));
		destroys++;
	}
	atomic_store(&r.stop, 1);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	TH_LOG("%d signals, %d jobs waiting and %d ready at submission, %d queues destroyed",
	       atomic_load(&r.signals), atomic_load(&r.waiting),
	       atomic_load(&r.ready), destroys);
	ASSERT_EQ(0, atomic_load(&r.bad));
	ASSERT_GT(atomic_load(&r.waiting), 0);
	ASSERT_GT(atomic_load(&r.ready), 0);
	ASSERT_GT(destroys, 5);
	ASSERT_EQ(0, close(r.fd));
}

/*
 * The memory of a call, unmapped by another thread during it: SUBMIT's
 * struct, its jobs and their waits in one page, which a second thread
 * unmaps and maps again (the same memfd page) in a loop. Each call fails
 * with -EFAULT at whatever it was reading or writing, or goes through, or
 * finds the file's job limit; nothing is half done. Afterwards the file
 * counts no job it does not have: with its queue destroyed (cancelling
 * every job that went in) and the limit lowered to 64, exactly 64 new
 * jobs go in and the 65th is refused.
 */
struct unmap_race {
	char *page;
	int memfd;
	atomic_int stop, remaps;
};

static void *unmap_racer(void *arg)
{
	struct unmap_race *r = arg;

	while (!atomic_load(&r->stop)) {
		munmap(r->page, 4096);
		if (mmap(r->page, 4096, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_FIXED, r->memfd, 0) != r->page)
			break;
		atomic_fetch_add(&r->remaps, 1);
	}
	return NULL;
}

/* The race's page: one page of a memfd, mapped. */
static void unmap_race_map(struct __test_metadata *_metadata, struct unmap_race *r,
			   const char *name)
{
	r->memfd = memfd_create(name, MFD_CLOEXEC);
	ASSERT_GE(r->memfd, 0);
	ASSERT_EQ(0, ftruncate(r->memfd, 4096));
	r->page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, r->memfd, 0);
	ASSERT_NE(MAP_FAILED, r->page);
}

/*
 * After the race, with @fd's queue @q destroyed: the file counts no job it
 * does not have. With the limit lowered to 64, exactly 64 new jobs (each
 * waiting for @never's point 1, or for nothing if 0) go in on a new queue
 * of @engine, and the 65th is refused. Unmaps the race's page.
 */
static void unmap_race_end(struct __test_metadata *_metadata, struct unmap_race *r,
			   int fd, const char *engine, uint32_t never)
{
	long old = set_param("max_jobs", 64);
	uint32_t q;

	ASSERT_GT(old, 0);
	q = queue_new(_metadata, fd, engine_name(engine), ACCEL_PRIORITY_NORMAL, 4);
	for (int i = 0; i < 64; i++)
		if (submit(fd, q, never, never ? 1 : 0, 0, 0, i) <= 0) {
			set_param("max_jobs", old);
			TH_LOG("job %d of 64 refused after the race", i);
			ASSERT_TRUE(0);
		}
	EXPECT_EQ(-ENOSPC, submit(fd, q, never, never ? 1 : 0, 0, 0, 64));
	set_param("max_jobs", old);
	munmap(r->page, 4096);
	close(r->memfd);
}

TEST_F_TIMEOUT(robust, submit_memory_unmapped_during_the_call, 120)
{
	enum { JOBS = 4 };
	int fd = accel_test_open(), ok = 0, efault = 0, full = 0, other = 0;
	struct unmap_race r = { 0 };
	struct accel_job_submit *a;
	struct accel_point *w;
	struct accel_job *j;
	uint32_t q, never;
	uint64_t t0;
	pthread_t t;

	ASSERT_GE(fd, 0);
	unmap_race_map(_metadata, &r, "accel-unmap");
	q = queue_new(_metadata, fd, engine_name("unmap"), ACCEL_PRIORITY_NORMAL, 4);
	never = so_new(_metadata, fd, 0);
	a = (struct accel_job_submit *)r.page;
	j = (struct accel_job *)(r.page + 64);
	w = (struct accel_point *)(r.page + 2048);
	*w = (struct accel_point){ .handle = never, .point = 1 };
	for (int i = 0; i < JOBS; i++)
		j[i] = (struct accel_job){ .queue = q, .user_data = i,
					   .waits = (uintptr_t)w, .nwaits = 1 };
	ASSERT_EQ(0, pthread_create(&t, NULL, unmap_racer, &r));
	t0 = now_ns();
	while (now_ns() - t0 < 2ull * 1000000000ull) {
		/* The struct as the caller writes it, if the page is there. */
		struct accel_job_submit fresh = { .jobs = (uintptr_t)j, .count = JOBS };
		int ret;

		if (pwrite(r.memfd, &fresh, sizeof(fresh), 0) != sizeof(fresh))
			break;
		ret = ioctl(fd, ACCEL_IOCTL_JOB_SUBMIT, a) ? -errno : 0;
		if (ret == 0)
			ok++;
		else if (ret == -EFAULT)
			efault++;
		else if (ret == -ENOSPC)
			full++;
		else
			other = other ?: ret;
	}
	atomic_store(&r.stop, 1);
	pthread_join(t, NULL);
	TH_LOG("%d calls went through, %d faulted, %d found the limit; %d remaps",
	       ok, efault, full, atomic_load(&r.remaps));
	ASSERT_EQ(0, other);
	ASSERT_GT(ok + efault, 0);

	/* Every job that went in goes with its queue; none is still counted. */
	struct accel_queue_destroy d = { .handle = q };

	ASSERT_EQ(0, xioctl(fd, ACCEL_IOCTL_QUEUE_DESTROY, &d));
	unmap_race_end(_metadata, &r, fd, "unmap2", never);
	ASSERT_EQ(0, close(fd));
}

/*
 * The same race for a release answered by its SUBMIT (ACCEL_JOB_F_ANSWER):
 * the jobs array, whose ids the module writes back (the answer's second
 * write comes after the release), in a page another thread unmaps and maps
 * again. Each call goes through, or fails with -EFAULT saying in
 * @submitted how many jobs went in; a job whose answer could not be
 * written was released unseen and times out (20 ms). Answered jobs and
 * released events are completed as they come. Afterwards, as above, the
 * file counts no job it does not have, once the events of the jobs the
 * queue's end cancelled (FAILED) are fetched and the jobs that timed out
 * unseen are completed late (-ETIMEDOUT).
 */
struct answer_counts {
	int released, timedout, failed, bad, first_bad;
};

static void answer_bad(struct answer_counts *n, int what)
{
	if (!n->bad++)
		n->first_bad = what;
}

/*
 * Fetch what is queued: complete each release (0; -ETIMEDOUT if it timed
 * out meanwhile, -ENOENT once its queue is gone), complete late each job
 * that timed out (-ETIMEDOUT, or -ENOENT), count the failed (-ECANCELED,
 * by the queue's end). How many events it took.
 */
static int answer_drain(int fd, struct answer_counts *n)
{
	struct accel_job_event ev[16];
	int got = fetch(fd, ev, 16), c;

	for (int i = 0; i < got; i++) {
		switch (ev[i].type) {
		case ACCEL_JOB_EVENT_RELEASED:
			n->released++;
			c = complete(fd, ev[i].id, 0);
			if (c && c != -ETIMEDOUT && c != -ENOENT)
				answer_bad(n, c);
			break;
		case ACCEL_JOB_EVENT_TIMEDOUT:
			n->timedout++;
			c = complete(fd, ev[i].id, 0);
			if (c != -ETIMEDOUT && c != -ENOENT)
				answer_bad(n, 1000 + c);
			break;
		case ACCEL_JOB_EVENT_FAILED:
			n->failed++;
			if (ev[i].status != -ECANCELED)
				answer_bad(n, 2000 + ev[i].status);
			break;
		}
	}
	return got;
}

TEST_F_TIMEOUT(robust, answer_written_back_into_memory_unmapped, 120)
{
	struct answer_counts n = { 0 };
	enum { JOBS = 4 };
	int fd = accel_test_open(), ok = 0, efault = 0, other = 0, answered = 0;
	int unseen_max = 0, completes_bad = 0;
	struct unmap_race r = { 0 };
	struct accel_job jobs[JOBS], back[JOBS];
	uint64_t t0;
	uint32_t q;
	pthread_t t;

	ASSERT_GE(fd, 0);
	unmap_race_map(_metadata, &r, "accel-unmap-ans");
	q = queue_new(_metadata, fd, engine_name("unmapa"), ACCEL_PRIORITY_NORMAL, 4);
	for (int i = 0; i < JOBS; i++)
		jobs[i] = (struct accel_job){
			.queue = q, .user_data = i, .timeout_ns = 20 * 1000 * 1000,
			.flags = ACCEL_JOB_F_EVENTS | ACCEL_JOB_F_ANSWER,
		};
	ASSERT_EQ(0, pthread_create(&t, NULL, unmap_racer, &r));
	t0 = now_ns();
	while (now_ns() - t0 < 2ull * 1000000000ull) {
		struct accel_job_submit a = { .jobs = (uintptr_t)r.page, .count = JOBS };
		int ret;

		/* The jobs as the caller writes them, if the page is there. */
		if (pwrite(r.memfd, jobs, sizeof(jobs), 0) != sizeof(jobs))
			break;
		ret = ioctl(fd, ACCEL_IOCTL_JOB_SUBMIT, &a) ? -errno : 0;
		if (ret == 0) {
			ok++;
			if (a.submitted != JOBS)
				other = other ?: -1000 - (int)a.submitted;
		} else if (ret == -EFAULT) {
			efault++;
			unseen_max = a.submitted > (uint32_t)unseen_max ?
				     (int)a.submitted : unseen_max;
		} else if (ret != -ENOSPC) {
			other = other ?: ret;
		}
		/* What the module wrote back, read past the racing mapping. */
		if (pread(r.memfd, back, sizeof(back), 0) != sizeof(back))
			break;
		for (uint32_t i = 0; i < a.submitted && i < JOBS; i++) {
			int c;

			if (!(back[i].id & ACCEL_JOB_ID_RELEASED))
				continue;
			answered++;
			c = complete(fd, back[i].id & ACCEL_JOB_RES_ID_MASK, 0);
			if (c && c != -ETIMEDOUT)
				completes_bad++;
		}
		/* Releases that came as events, and the timeouts. */
		answer_drain(fd, &n);
	}
	atomic_store(&r.stop, 1);
	pthread_join(t, NULL);
	TH_LOG("%d calls went through, %d faulted (at most %d jobs in), %d answered; %d remaps",
	       ok, efault, unseen_max, answered, atomic_load(&r.remaps));
	ASSERT_EQ(0, other);
	ASSERT_EQ(0, completes_bad);
	ASSERT_GT(ok + efault, 0);

	struct accel_queue_destroy d = { .handle = q };

	ASSERT_EQ(0, xioctl(fd, ACCEL_IOCTL_QUEUE_DESTROY, &d));
	for (int quiet = 0; quiet < 100; quiet++)
		if (answer_drain(fd, &n))
			quiet = 0;
		else
			usleep(1000);
	TH_LOG("events: %d released, %d timed out, %d cancelled by the queue's end; %d unexpected (first %d)",
	       n.released, n.timedout, n.failed, n.bad, n.first_bad);
	ASSERT_EQ(0, n.bad);
	unmap_race_end(_metadata, &r, fd, "unmapa2", 0);
	ASSERT_EQ(0, close(fd));
}

/*
 * COMPLETE of a released job while QUEUE_DESTROY cancels it: the job is
 * completed (0) or gone (-ENOENT), whichever came first. A COMPLETE that
 * came between the cancel's marking the job done and its leaving the id
 * table got -EINVAL, the answer for a job not released yet or completed
 * twice, so an executor took its own correct call for a bug (an outside
 * test found it: 7 in 32000 COMPLETEs on 6.12, 229 on the debug kernel).
 */
struct qdc_race {
	int fd, n;
	uint32_t ids[32];
	int res[32];
	atomic_int go;
};

static void *qdc_completer(void *arg)
{
	struct qdc_race *r = arg;

	while (!atomic_load(&r->go))
		;
	for (int i = 0; i < r->n; i++)
		r->res[i] = complete(r->fd, r->ids[i], 0);
	return NULL;
}

TEST_F_TIMEOUT(robust, complete_racing_queue_destroy_is_done_or_gone, 120)
{
	int fd = accel_test_open(), done = 0, gone = 0, wrong = 0, first = 0;
	uint64_t t0 = now_ns();

	ASSERT_GE(fd, 0);
	for (int it = 0; it < 1000 && now_ns() - t0 < 30ull * 1000000000ull; it++) {
		uint32_t q = queue_new(_metadata, fd, engine_name("qdc"),
				       ACCEL_PRIORITY_NORMAL, 64);
		struct accel_queue_destroy d = { .handle = q };
		struct qdc_race r = { .fd = fd };
		struct accel_job_event ev[32];
		pthread_t t;

		for (int i = 0; i < 32; i++)
			ASSERT_GT(submit(fd, q, 0, 0, 0, 0, i), 0);
		for (int k = 0; k < 5000 && r.n < 32; k++) {
			int m = fetch(fd, ev, 32 - r.n);

			ASSERT_GE(m, 0);
			for (int i = 0; i < m; i++)
				r.ids[r.n++] = ev[i].id;
			if (!m)
				usleep(1000);
		}
		ASSERT_EQ(32, r.n);
		ASSERT_EQ(0, pthread_create(&t, NULL, qdc_completer, &r));
		atomic_store(&r.go, 1);
		usleep(it % 7 * 20);
		ASSERT_EQ(0, xioctl(fd, ACCEL_IOCTL_QUEUE_DESTROY, &d));
		pthread_join(t, NULL);
		for (int i = 0; i < 32; i++) {
			done += r.res[i] == 0;
			gone += r.res[i] == -ENOENT;
			if (r.res[i] && r.res[i] != -ENOENT && !wrong++)
				first = r.res[i];
		}
	}
	TH_LOG("%d COMPLETEs went first, %d found the job gone, %d neither (first %d)",
	       done, gone, wrong, first);
	ASSERT_GT(done, 0);
	ASSERT_GT(gone, 0);
	ASSERT_EQ(0, wrong);
	ASSERT_EQ(0, close(fd));
}

/*
 * A job's points are looked up by handle under RCU, without the file's
 * table lock. Three threads race one handle: one destroys it and creates
 * the next (which may get the same number back), two submit jobs that
 * signal it and complete them, one waits on it. Each submission names the
 * old syncobj or the new one or none (-ENOENT; -EINVAL for a point that
 * another job's completion passed); never a freed one, which the debug
 * kernel's KASAN would report, and nothing leaks (kmemleak at rmmod).
 */
struct srace {
	int fd;
	uint32_t q;
	atomic_uint handle;
	atomic_ullong point;
	atomic_int stop, in, refused, waited;
	atomic_int bad; /* the first result outside the expected ones */
};

static void srace_bad(struct srace *r, int what)
{
	int none = 0;

	atomic_compare_exchange_strong(&r->bad, &none, what);
}

static void *srace_submitter(void *arg)
{
	struct srace *r = arg;

	while (!atomic_load(&r->stop)) {
		uint32_t h = atomic_load(&r->handle);
		uint64_t p = atomic_fetch_add(&r->point, 1) + 1;
		int id = submit(r->fd, r->q, 0, 0, h, p, p);

		if (id > 0) {
			int c = complete(r->fd, id, 0);

			atomic_fetch_add(&r->in, 1);
			if (c)
				srace_bad(r, 1000 + c);
		} else if (id == -ENOENT || id == -EINVAL) {
			atomic_fetch_add(&r->refused, 1);
		} else {
			srace_bad(r, id);
		}
	}
	return NULL;
}

static void *srace_waiter(void *arg)
{
	struct srace *r = arg;

	while (!atomic_load(&r->stop)) {
		int ret = so_wait1(r->fd, atomic_load(&r->handle),
				   atomic_load(&r->point), 0, in_ms(1));

		if (ret == 0 || ret == -ETIME || ret == -ENOENT)
			atomic_fetch_add(&r->waited, 1);
		else
			srace_bad(r, 2000 + ret);
	}
	return NULL;
}

TEST_F_TIMEOUT(robust, syncobj_destroy_races_submits_naming_it, 120)
{
	struct srace r = { .fd = accel_test_open() };
	struct accel_job_event ev[64];
	uint64_t t0 = now_ns();
	pthread_t t[3];
	int cycles = 0;
	uint32_t h;

	ASSERT_GE(r.fd, 0);
	r.q = queue_new(_metadata, r.fd, engine_name("srace"),
			ACCEL_PRIORITY_NORMAL, ACCEL_CREDITS_MAX);
	atomic_store(&r.handle, so_new(_metadata, r.fd, 0));
	ASSERT_EQ(0, pthread_create(&t[0], NULL, srace_submitter, &r));
	ASSERT_EQ(0, pthread_create(&t[1], NULL, srace_submitter, &r));
	ASSERT_EQ(0, pthread_create(&t[2], NULL, srace_waiter, &r));
	while (cycles < 5000 && now_ns() - t0 < 10ull * 1000000000ull) {
		ASSERT_EQ(0, so_create(r.fd, 0, &h));
		ASSERT_EQ(0, so_destroy(r.fd, atomic_exchange(&r.handle, h)));
		cycles++;
		/* The RELEASED events, so that they do not pile up. */
		while (fetch(r.fd, ev, 64) > 0)
			;
	}
	atomic_store(&r.stop, 1);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	TH_LOG("%d handles destroyed; %d jobs went in, %d refused; %d waits",
	       cycles, atomic_load(&r.in), atomic_load(&r.refused),
	       atomic_load(&r.waited));
	ASSERT_EQ(0, atomic_load(&r.bad));
	ASSERT_GT(cycles, 100);
	ASSERT_GT(atomic_load(&r.in), 100);
	ASSERT_EQ(0, so_destroy(r.fd, atomic_load(&r.handle)));
	ASSERT_EQ(0, close(r.fd));
}

/*
 * A COMPLETE drops its job's events not yet fetched. An event holds its
 * job until fetched, and the file's job limit counts jobs only until they
 * complete: an executor that completes what it submitted without fetching
 * (it knows the ids from SUBMIT) kept one job's memory per submission, as
 * many as it liked. The events of a job not completed stay; a job that
 * timed out and is completed late leaves no TIMEDOUT event either.
 */
TEST_F_TIMEOUT(robust, completed_jobs_leave_no_events_behind, 120)
{
	int fd = accel_test_open(), id;
	struct accel_job_event ev[4];
	struct pollfd pfd;
	uint32_t q;

	ASSERT_GE(fd, 0);
	q = queue_new(_metadata, fd, engine_name("evd"), ACCEL_PRIORITY_NORMAL, 1);
	for (int i = 0; i < 3000; i++) {
		id = submit(fd, q, 0, 0, 0, 0, i);
		ASSERT_GT(id, 0);
		ASSERT_EQ(0, complete(fd, id, 0));
	}
	ASSERT_EQ(0, fetch(fd, ev, 4));

	/* Released, not completed: its event waits to be fetched. */
	id = submit(fd, q, 0, 0, 0, 0, 7);
	ASSERT_GT(id, 0);
	ASSERT_EQ(1, fetch(fd, ev, 4));
	ASSERT_EQ(id, ev[0].id);
	ASSERT_EQ(ACCEL_JOB_EVENT_RELEASED, ev[0].type);
	ASSERT_EQ(0, complete(fd, id, 0));

	/* Timed out (its TIMEDOUT queued), completed late: nothing stays. */
	struct accel_job j = { .queue = q, .user_data = 8, .timeout_ns = 1000000 };
	struct accel_job_submit a = { .jobs = (uintptr_t)&j, .count = 1 };

	ASSERT_EQ(0, xioctl(fd, ACCEL_IOCTL_JOB_SUBMIT, &a));
	ASSERT_EQ(1, fetch(fd, ev, 4));
	ASSERT_EQ(ACCEL_JOB_EVENT_RELEASED, ev[0].type);
	pfd = (struct pollfd){ .fd = fd, .events = POLLIN };
	ASSERT_EQ(1, poll(&pfd, 1, 10000)); /* the TIMEDOUT event */
	ASSERT_EQ(-ETIMEDOUT, complete(fd, j.id, 0));
	ASSERT_EQ(0, fetch(fd, ev, 4));
	ASSERT_EQ(0, close(fd));
}

/*
 * The timeout work fails a timed-out job's points and only then queues its
 * TIMEDOUT event. A late COMPLETE that comes in between, once the first
 * point has failed, found no event to drop, and the event queued after it
 * then held the job until fetched: one job's memory per such race, past
 * the file's job limit. Here the job signals 64 points, the first and the
 * last its own, and the COMPLETE goes in as soon as the first has failed:
 * nothing may be left to fetch once the last has failed too.
 *
 * And the -ETIMEDOUT it gets says the job's points failed already (the
 * ABI's words): the last one too, at once, though the timeout work may
 * not have reached it yet. It had not, in 30 to 170 rounds of 200, before
 * the COMPLETE failed them itself.
 */
TEST_F_TIMEOUT(robust, late_complete_overtaking_its_timedout_event, 120)
{
	struct accel_point sig[ACCEL_JOB_MAX_POINTS] = { 0 };
	int fd = accel_test_open(), rounds = 0, err;
	struct accel_job_event ev[4];
	uint64_t t0 = now_ns();
	uint32_t q;

	ASSERT_GE(fd, 0);
	q = queue_new(_metadata, fd, engine_name("late"), ACCEL_PRIORITY_NORMAL, 1);
	for (int i = 1; i < ACCEL_JOB_MAX_POINTS - 1; i++)
		sig[i].handle = so_new(_metadata, fd, 0);
	for (; rounds < 200 && now_ns() - t0 < 20ull * 1000000000ull; rounds++) {
		struct accel_job j = {
			.queue = q, .user_data = rounds, .timeout_ns = 1000000,
			.signals = (uintptr_t)sig, .nsignals = ACCEL_JOB_MAX_POINTS,
		};
		struct accel_job_submit a = { .jobs = (uintptr_t)&j, .count = 1 };
		uint32_t first = so_new(_metadata, fd, 0);
		uint32_t last = so_new(_metadata, fd, 0);
		int c, n;

		for (int i = 0; i < ACCEL_JOB_MAX_POINTS; i++)
			sig[i].point = rounds + 1;
		sig[0].handle = first;
		sig[ACCEL_JOB_MAX_POINTS - 1].handle = last;
		ASSERT_EQ(0, xioctl(fd, ACCEL_IOCTL_JOB_SUBMIT, &a));
		/*
		 * Its RELEASED, alone: its TIMEDOUT may be queued behind it
		 * already, 1 ms on (it was once, on the debug kernel), and the
		 * COMPLETE below drops it.
		 */
		ASSERT_EQ(1, fetch(fd, ev, 1));
		ASSERT_EQ(ACCEL_JOB_EVENT_RELEASED, ev[0].type);
		/* Its 1 ms timeout fires; ten seconds is ample even under KASAN. */
		for (uint64_t t = now_ns(); ; ) {
			ASSERT_EQ(0, so_query(fd, first, NULL, NULL, &err));
			if (err || now_ns() - t > 10ull * 1000000000ull)
				break;
		}
		ASSERT_EQ(-ETIMEDOUT, err);
		c = complete(fd, j.id, 0);
		ASSERT_EQ(-ETIMEDOUT, c);
		ASSERT_EQ(0, so_query(fd, last, NULL, NULL, &err));
		if (err != -ETIMEDOUT)
			TH_LOG("round %d: the last point's error is %d after the late COMPLETE's -ETIMEDOUT",
			       rounds, err);
		ASSERT_EQ(-ETIMEDOUT, err);
		usleep(2000); /* past the queueing of the event, if any */
		n = fetch(fd, ev, 4);
		if (n)
			TH_LOG("round %d: %d event(s) left, type %u", rounds, n, ev[0].type);
		ASSERT_EQ(0, n);
		ASSERT_EQ(0, so_destroy(fd, first));
		ASSERT_EQ(0, so_destroy(fd, last));
	}
	TH_LOG("%d rounds", rounds);
	ASSERT_GT(rounds, 20);
	ASSERT_EQ(0, close(fd));
}

/*
 * A pipelined job (released while its wait is not reached: its executor
 * orders it on the device) completed while its wait is being reached on
 * another thread, by its producer's COMPLETE. Two outcomes are right:
 * the COMPLETE finds the wait reached and reaches the job's point itself,
 * or it finds it not yet reached and leaves the point to the wait, which
 * reaches it when it comes. Two were wrong: the COMPLETE found the wait
 * reached while the wait's callback had yet to take its reference on the
 * job, and freed the job under it (a use-after-free: a refcount warning,
 * KASAN on the debug kernel); or it left the point to the wait and then,
 * the job become DONE meanwhile, reached it a second time, reporting the
 * point passed (COMPLETE_FETCH's @passed must be 0: nothing else signals
 * it). Thousands of rounds, each a race of the two COMPLETEs.
 */
struct pipe_race {
	int fd;
	atomic_uint go, gone;
	uint32_t producer;
	int ret;
};

static void *pipe_race_producer(void *arg)
{
	struct pipe_race *r = arg;

	for (unsigned int round = 1;; round++) {
		while (atomic_load(&r->go) < round)
			;
		if (atomic_load(&r->go) == UINT_MAX)
			return NULL;
		r->ret = complete(r->fd, r->producer, 0);
		atomic_store(&r->gone, round);
	}
}

TEST_F_TIMEOUT(robust, pipelined_complete_races_its_wait_being_reached, 120)
{
	struct pipe_race r = { .fd = accel_test_open() };
	uint64_t t0 = now_ns();
	unsigned int round;
	pthread_t th;
	uint32_t q, x, y;
	int err;

	ASSERT_GE(r.fd, 0);
	q = queue_new(_metadata, r.fd, engine_name("piperace"), ACCEL_PRIORITY_NORMAL, 2);
	x = so_new(_metadata, r.fd, 0);
	y = so_new(_metadata, r.fd, 0);
	ASSERT_EQ(0, pthread_create(&th, NULL, pipe_race_producer, &r));
	for (round = 1; round <= 3000 && now_ns() - t0 < 8ull * 1000000000ull; round++) {
		struct accel_job_event ev[4];
		struct accel_job_complete_fetch cf = {
			.events = (uintptr_t)ev, .max = 4,
		};
		int a, b;

		a = submit(r.fd, q, 0, 0, x, round, 'a');
		ASSERT_LT(0, a);
		b = submit(r.fd, q, x, round, y, round, 'b');
		ASSERT_LT(0, b);
		ASSERT_EQ(2, fetch(r.fd, ev, 4));
		ASSERT_EQ(ACCEL_JOB_EVENT_RELEASED, ev[1].type);
		ASSERT_EQ('b', ev[1].user_data);
		ASSERT_EQ(ACCEL_JOB_RES_PIPELINED, ev[1].flags);
		r.producer = (uint32_t)a;
		cf.id = (uint32_t)b;
		atomic_store(&r.go, round);
		/*
		 * A delay that sweeps, round by round, where this COMPLETE
		 * falls in the producer's: the windows are a few instructions.
		 */
		for (volatile unsigned int spin = (round * 2654435761u) >> 21; spin; spin--)
			;
		ASSERT_EQ(0, xioctl(r.fd, ACCEL_IOCTL_JOB_COMPLETE_FETCH, &cf));
		while (atomic_load(&r.gone) < round)
			;
		ASSERT_EQ(0, r.ret);
		ASSERT_EQ(0, cf.result);
		if (cf.passed)
			TH_LOG("round %u: the COMPLETE found its point passed (%#llx): reached twice",
			       round, (unsigned long long)cf.passed);
		ASSERT_EQ(0, cf.passed);
		ASSERT_EQ(0, so_wait1(r.fd, y, round, 0, in_ms(10000)));
		ASSERT_EQ(0, so_query(r.fd, y, NULL, NULL, &err));
		ASSERT_EQ(0, err);
		ASSERT_EQ(round, so_value(_metadata, r.fd, y));
		/* Both ids are gone: each job was completed once. */
		ASSERT_EQ(-ENOENT, complete(r.fd, b, 0));
		ASSERT_EQ(-ENOENT, complete(r.fd, a, 0));
	}
	atomic_store(&r.go, UINT_MAX);
	ASSERT_EQ(0, pthread_join(th, NULL));
	TH_LOG("%u rounds", round - 1);
	ASSERT_GT(round, 200);
	ASSERT_EQ(0, close(r.fd));
}

struct fetch_race {
	int fd;
	atomic_int stop;
	long fetched;
};

static void *fetch_racer(void *arg)
{
	struct fetch_race *r = arg;
	struct accel_job_event ev[64];

	while (!atomic_load(&r->stop)) {
		int n = fetch(r->fd, ev, 64);

		if (n > 0)
			r->fetched += n;
	}
	return NULL;
}

/*
 * The same, with a second thread fetching the file's events while the
 * first submits and completes: a COMPLETE's look at its job's events (no
 * lock when none is queued) races the fetch that takes them. Each event is
 * taken once, by one of the two (KASAN and kmemleak on the debug kernel
 * see a reference dropped twice or never), and none is left.
 */
TEST_F_TIMEOUT(robust, fetch_races_complete_of_unfetched_events, 120)
{
	struct fetch_race r = { .fd = accel_test_open() };
	struct accel_job_event ev[4];
	pthread_t t;
	uint32_t q;
	int id;

	ASSERT_GE(r.fd, 0);
	q = queue_new(_metadata, r.fd, engine_name("evr"), ACCEL_PRIORITY_NORMAL, 64);
	ASSERT_EQ(0, pthread_create(&t, NULL, fetch_racer, &r));
	for (int i = 0; i < 5000; i++) {
		id = submit(r.fd, q, 0, 0, 0, 0, i);
		ASSERT_GT(id, 0);
		ASSERT_EQ(0, complete(r.fd, id, 0));
	}
	atomic_store(&r.stop, 1);
	pthread_join(t, NULL);
	TH_LOG("the racer fetched %ld of 5000 events", r.fetched);
	ASSERT_EQ(0, fetch(r.fd, ev, 4));
	ASSERT_EQ(0, close(r.fd));
}

/*
 * Issue 3: polls on ever new unreached points leave nothing behind, and
 * timed waits that give up leave at most about twice what is live.
 */
TEST_F(robust, polls_and_expired_waits_pin_no_fences)
{
	enum { N = 1024 };
	static uint32_t hs[N];
	static uint64_t pts[N];
	int fd = accel_test_open();
	long before, after;
	uint32_t x;

	ASSERT_GE(fd, 0);
	before = point_fences();
	if (before < 0)
		SKIP(return, "no debugfs point_fences gauge (debugfs not mounted)");
	x = so_new(_metadata, fd, 0);
	for (int i = 0; i < N; i++)
		hs[i] = x;
	for (int round = 0; round < 200; round++) {
		for (int i = 0; i < N; i++)
			pts[i] = 1 + (uint64_t)round * N + i;
		ASSERT_EQ(-ETIME, so_wait(fd, hs, pts, N, ACCEL_WAIT_ALL, 0, NULL));
		ASSERT_EQ(-ETIME, so_wait(fd, hs, pts, N, 0, 0, NULL));
	}
	after = point_fences();
	TH_LOG("point fences: %ld before, %ld after 400 polls of %d points",
	       before, after, N);
	ASSERT_LE(after - before, 0);
	for (int round = 0; round < 20; round++) {
		for (int i = 0; i < N; i++)
			pts[i] = 1000000 + (uint64_t)round * N + i;
		ASSERT_EQ(-ETIME, so_wait(fd, hs, pts, N, 0, in_ms(1), NULL));
	}
	after = point_fences();
	TH_LOG("point fences: %ld after 20 timed waits of %d points", after, N);
	/* At most about twice one wait's worth stays, never 20 waits' worth. */
	ASSERT_LE(after - before, 2 * N + 64);
	ASSERT_EQ(0, so_destroy(fd, x));
	ASSERT_EQ(before, point_fences());
	/* A point a wait still holds is never swept: it still wakes. */
	x = so_new(_metadata, fd, 0);
	ASSERT_EQ(0, so_signal(fd, x, 1));
	ASSERT_EQ(0, so_wait1(fd, x, 1, 0, 0));
	close(fd);
}

static long fence_pool(void)
{
	return read_long("/sys/kernel/debug/" ACCEL_DEVICE_NAME "/point_fence_pool");
}

/* The pool's count once it holds still for 200 ms (RCU recycling done). */
static long fence_pool_settled(void)
{
	long n = fence_pool(), was = -2;

	for (int i = 0; i < 100 && n != was; i++) {
		was = n;
		usleep(200000);
		n = fence_pool();
	}
	return n;
}

/*
 * Whether the running kernel was built with KASAN (its report function is
 * in /proc/kallsyms): 1 or 0, -1 if that cannot be read.
 */
static int kernel_has_kasan(void)
{
	static const char sym[] = " kasan_report";
	FILE *f = fopen("/proc/kallsyms", "re");
	char line[512];
	int found = 0;

	if (!f)
		return -1;
	while (!found && fgets(line, sizeof(line), f)) {
		size_t n = strcspn(line, "\n");

		found = n >= sizeof(sym) - 1 &&
			!memcmp(line + n - (sizeof(sym) - 1), sym, sizeof(sym) - 1);
	}
	fclose(f);
	return found;
}

struct pool_waiter {
	int fd;
	uint32_t h[1024];
	uint64_t p[1024];
	int ret;
};

static void *pool_waiter_thread(void *arg)
{
	struct pool_waiter *w = arg;

	w->ret = so_wait(w->fd, w->h, w->p, 1024, ACCEL_WAIT_ALL, in_ms(20000), NULL);
	return NULL;
}

/*
 * Point fences are recycled only after a grace period, so under a stream
 * of waits the pool would run dry and each fence come from the slab (a
 * new page every 24 on the waiting path). When the pool runs low, a work
 * fills it with new fences: here 2048 fences stay alive (two waits of 1024
 * points), more than the pool can hold, so none comes back through a
 * grace period, and the pool must still be filled again. A KASAN kernel's
 * module keeps no pool (no point_fence_pool gauge, which any other kernel
 * must show): there the fences all come from the slab, and the waits must
 * still be served.
 */
TEST_F(robust, fence_pool_is_filled_while_fences_live)
{
	static struct pool_waiter w[2];
	long before, pool, live;
	bool pooled;
	int kasan;
	pthread_t t[2];
	uint32_t x;
	int fd = accel_test_open();

	ASSERT_GE(fd, 0);
	before = point_fences();
	if (before < 0)
		SKIP(return, "no debugfs point fence gauges (debugfs not mounted)");
	pooled = fence_pool() >= 0;
	kasan = kernel_has_kasan();
	if (kasan >= 0) /* the pool is there exactly when KASAN is not */
		ASSERT_EQ(!kasan, pooled);
	if (!pooled)
		TH_LOG("no point fence pool (a KASAN kernel): fences from the slab");
	x = so_new(_metadata, fd, 0);
	pool = pooled ? fence_pool_settled() : 0;
	ASSERT_LE(pool, 1024);
	for (int k = 0; k < 2; k++) {
		w[k].fd = fd;
		for (int i = 0; i < 1024; i++) {
			w[k].h[i] = x;
			w[k].p[i] = 1 + (uint64_t)k * 1024 + i;
		}
		ASSERT_EQ(0, pthread_create(&t[k], NULL, pool_waiter_thread, &w[k]));
	}
	/* Both waits armed: every fence they need is alive. */
	live = point_fences();
	for (int i = 0; i < 5000 && live < before + 2048; i++) {
		usleep(1000);
		live = point_fences();
	}
	ASSERT_GE(live, before + 2048);
	if (pooled) {
		pool = fence_pool();
		for (int i = 0; i < 2000 && pool < 64; i++) {
			usleep(1000);
			pool = fence_pool();
		}
		TH_LOG("point fences alive %ld (%ld before), pool %ld", live, before, pool);
		ASSERT_GE(pool, 64);
		ASSERT_LE(pool, 1024);
	}
	ASSERT_EQ(0, so_signal(fd, x, 2048));
	for (int k = 0; k < 2; k++) {
		ASSERT_EQ(0, pthread_join(t[k], NULL));
		ASSERT_EQ(0, w[k].ret);
	}
	ASSERT_EQ(0, so_destroy(fd, x));
	close(fd);
}

/*
 * Issue 7: a thread blocked in an ALL wait on [A:1 reached, B:5 pending]
 * gets A's failure at once, not -ETIME at its deadline.
 */
struct waiter {
	int fd;
	uint32_t h[2];
	uint64_t p[2];
	uint32_t index;
	int ret;
	atomic_int started;
};

static void *waiter_thread(void *arg)
{
	struct waiter *w = arg;

	atomic_store(&w->started, 1);
	w->ret = so_wait(w->fd, w->h, w->p, 2, ACCEL_WAIT_ALL, in_ms(20000),
			 &w->index);
	return NULL;
}

TEST_F(robust, present_waiter_gets_a_failure)
{
	struct waiter w = { .fd = accel_test_open(), .p = { 1, 5 } };
	pthread_t t;

	ASSERT_GE(w.fd, 0);
	w.h[0] = so_new(_metadata, w.fd, 1);
	w.h[1] = so_new(_metadata, w.fd, 0);
	ASSERT_EQ(0, pthread_create(&t, NULL, waiter_thread, &w));
	while (!atomic_load(&w.started))
		usleep(1000);
	usleep(50000); /* blocked by now */
	ASSERT_EQ(0, so_fail(w.fd, w.h[0], -EIO));
	ASSERT_EQ(0, pthread_join(t, NULL));
	ASSERT_EQ(-EIO, w.ret);
	ASSERT_EQ(0, w.index);
	/* A later wait on the reached point sees it too. */
	ASSERT_EQ(-EIO, so_wait1(w.fd, w.h[0], 1, 0, 0));
	/* And the same wait is satisfied, not failed, if nothing fails. */
	w.h[0] = so_new(_metadata, w.fd, 1);
	atomic_store(&w.started, 0);
	ASSERT_EQ(0, pthread_create(&t, NULL, waiter_thread, &w));
	while (!atomic_load(&w.started))
		usleep(1000);
	usleep(20000);
	ASSERT_EQ(0, so_signal(w.fd, w.h[1], 5));
	ASSERT_EQ(0, pthread_join(t, NULL));
	ASSERT_EQ(0, w.ret);
	/* A reached point's syncobj that goes during the wait fails nothing. */
	w.h[1] = so_new(_metadata, w.fd, 0);
	atomic_store(&w.started, 0);
	ASSERT_EQ(0, pthread_create(&t, NULL, waiter_thread, &w));
	while (!atomic_load(&w.started))
		usleep(1000);
	usleep(200000); /* its handles looked up by now, even under TCG */
	ASSERT_EQ(0, so_destroy(w.fd, w.h[0]));
	usleep(20000);
	ASSERT_EQ(0, so_signal(w.fd, w.h[1], 5));
	ASSERT_EQ(0, pthread_join(t, NULL));
	ASSERT_EQ(0, w.ret);
	close(w.fd);
}

/*
 * Issue 6: ids do not come back after 16,384 jobs; a stale COMPLETE of an
 * old id finds nothing and leaves the new job alone.
 */
TEST_F_TIMEOUT(robust, job_ids_do_not_come_back, 300)
{
	int fd = accel_test_open(), first, id = 0;
	struct accel_job_event ev;
	uint32_t q, y;

	ASSERT_GE(fd, 0);
	q = queue_new(_metadata, fd, engine_name("ids"), ACCEL_PRIORITY_NORMAL, 1);
	y = so_new(_metadata, fd, 0);
	first = submit(fd, q, 0, 0, 0, 0, 0);
	ASSERT_GT(first, 0);
	ASSERT_EQ(1, fetch(fd, &ev, 1));
	ASSERT_EQ(0, complete(fd, first, 0));
	for (int i = 0; i < 16384 + 64; i++) {
		id = submit(fd, q, 0, 0, 0, 0, 0);
		ASSERT_GT(id, 0);
		ASSERT_NE(first, id);
		ASSERT_EQ(1, fetch(fd, &ev, 1));
		ASSERT_EQ(id, ev.id);
		ASSERT_EQ(0, complete(fd, id, 0));
	}
	/* A job in flight; a stale COMPLETE of the first id misses it. */
	id = submit(fd, q, 0, 0, y, 1, 0);
	ASSERT_GT(id, 0);
	ASSERT_EQ(1, fetch(fd, &ev, 1));
	ASSERT_EQ(-ENOENT, complete(fd, first, -EIO));
	ASSERT_EQ(-ETIME, so_wait1(fd, y, 1, 0, 0));
	ASSERT_EQ(0, complete(fd, id, 0));
	ASSERT_EQ(0, so_wait1(fd, y, 1, 0, 0));
	close(fd);
}

/*
 * Ids stay unique while the file's id table grows and its cursor wraps
 * around jobs that stay in flight: 600 jobs in flight at once (the table
 * doubles several times), then, with every tenth of them still in flight,
 * 3,000 more submitted and completed one by one. Each id is new among the
 * live ones, a COMPLETE finds exactly its job, and a repeated one none.
 */
TEST_F_TIMEOUT(robust, job_ids_unique_as_the_table_grows, 300)
{
	int fd = accel_test_open(), ids[600], id, n = 0;
	struct accel_job_event ev[64];
	uint32_t q;

	ASSERT_GE(fd, 0);
	q = queue_new(_metadata, fd, engine_name("idgrow"), ACCEL_PRIORITY_NORMAL, 4096);
	for (int i = 0; i < 600; i++) {
		ids[i] = submit(fd, q, 0, 0, 0, 0, i);
		ASSERT_GT(ids[i], 0);
		for (int j = 0; j < i; j++) {
			ASSERT_NE(ids[j], ids[i]);
		}
	}
	while (n < 600) {
		int got = fetch(fd, ev, 64);

		ASSERT_GT(got, 0);
		for (int k = 0; k < got; k++) {
			ASSERT_EQ(ids[ev[k].user_data], (int)ev[k].id);
		}
		n += got;
	}
	for (int i = 0; i < 600; i++)
		if (i % 10) {
			ASSERT_EQ(0, complete(fd, ids[i], 0));
		}
	for (int k = 0; k < 3000; k++) {
		id = submit(fd, q, 0, 0, 0, 0, 1000 + k);
		ASSERT_GT(id, 0);
		for (int j = 0; j < 600; j += 10) {
			ASSERT_NE(ids[j], id);
		}
		ASSERT_EQ(1, fetch(fd, ev, 1));
		ASSERT_EQ(id, (int)ev[0].id);
		ASSERT_EQ(1000 + k, ev[0].user_data);
		ASSERT_EQ(0, complete(fd, id, 0));
		ASSERT_EQ(-ENOENT, complete(fd, id, 0));
	}
	for (int j = 0; j < 600; j += 10) {
		ASSERT_EQ(0, complete(fd, ids[j], 0));
		ASSERT_EQ(-ENOENT, complete(fd, ids[j], 0));
	}
	close(fd);
}

/*
 * Issue 5: engine of one credit; queue q has a job released, one pending,
 * one runnable; q2 one runnable. Destroying q gives the credit to q2's
 * job, never to q's runnable one about to be cancelled.
 */
TEST_F(robust, queue_destroy_gives_the_credit_elsewhere)
{
	int fd = accel_test_open(), err, j1, j4;
	const char *eng = engine_name("qd");
	struct accel_queue_destroy d;
	struct accel_job_event ev[8];
	uint32_t q, q2, x, y1, y2, y3, y4;

	ASSERT_GE(fd, 0);
	q = queue_new(_metadata, fd, eng, ACCEL_PRIORITY_NORMAL, 1);
	q2 = queue_new(_metadata, fd, eng, ACCEL_PRIORITY_NORMAL, 0);
	x = so_new(_metadata, fd, 0);
	y1 = so_new(_metadata, fd, 0);
	y2 = so_new(_metadata, fd, 0);
	y3 = so_new(_metadata, fd, 0);
	y4 = so_new(_metadata, fd, 0);
	j1 = submit(fd, q, 0, 0, y1, 1, 1);                /* released */
	ASSERT_GT(j1, 0);
	ASSERT_EQ(1, fetch(fd, ev, 8));
	ASSERT_EQ(j1, ev[0].id);
	ASSERT_GT(submit(fd, q, x, 1, y2, 1, 2), 0);       /* pending */
	ASSERT_GT(submit(fd, q, 0, 0, y3, 1, 3), 0);       /* runnable */
	j4 = submit(fd, q2, 0, 0, y4, 1, 4);               /* runnable */
	ASSERT_GT(j4, 0);
	ASSERT_EQ(0, fetch(fd, ev, 8));
	d = (struct accel_queue_destroy){ .handle = q };
	ASSERT_EQ(0, xioctl(fd, ACCEL_IOCTL_QUEUE_DESTROY, &d));
	/* The only release: q2's job. */
	ASSERT_EQ(1, fetch(fd, ev, 8));
	ASSERT_EQ(ACCEL_JOB_EVENT_RELEASED, ev[0].type);
	ASSERT_EQ(4, ev[0].user_data);
	ASSERT_EQ(j4, ev[0].id);
	for (uint32_t h = y1; h <= y3; h++) {
		ASSERT_EQ(0, so_query(fd, h, NULL, NULL, &err));
		ASSERT_EQ(-ECANCELED, err);
	}
	ASSERT_EQ(-ENOENT, complete(fd, j1, 0));
	ASSERT_EQ(0, complete(fd, j4, 0));
	ASSERT_EQ(0, so_wait1(fd, y4, 1, 0, 0));
	close(fd);
}

/*
 * Issue 4: a process that submitted through io_uring a job still waiting
 * on an unreached point, and one waiting for a credit, is killed: their
 * promised points fail with -EOWNERDEAD, as on every producer-death path.
 */
TEST_F(robust, uring_pending_jobs_of_a_killed_process_fail_ownerdead)
{
	int fd = accel_test_open(), sv[2], status, sfd, err;
	uint32_t x, y, z;
	pid_t pid;
	char c;

	ASSERT_GE(fd, 0);
	x = so_new(_metadata, fd, 0);
	y = so_new(_metadata, fd, 0);
	z = so_new(_metadata, fd, 0);
	ASSERT_EQ(0, pipe(sv));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		int cfd = open(ACCEL_DEV_PATH, O_RDWR), efd;
		struct accel_point wx = { .point = 1 }, sy = { .point = 1 };
		struct accel_point sz = { .point = 1 };
		struct accel_job j[3] = { 0 };
		struct accel_uring_submit us[3];
		struct accel_queue_create qc = { .weight = 1, .credits = 1,
						 .priority = ACCEL_PRIORITY_NORMAL };
		struct io_uring ring;

		snprintf(qc.engine, sizeof(qc.engine), "r-kill-%d", getpid());
		if (cfd < 0 || io_uring_queue_init(8, &ring, 0) ||
		    ioctl(cfd, ACCEL_IOCTL_QUEUE_CREATE, &qc))
			_exit(10);
		for (int i = 0; i < 3; i++) {
			uint32_t h = i == 0 ? x : i == 1 ? y : z;

			if (so_export(fd, h, &efd) || so_import(cfd, efd, &h))
				_exit(11);
			close(efd);
			if (i == 0)
				wx.handle = h;
			else if (i == 1)
				sy.handle = h;
			else
				sz.handle = h;
		}
		/* j0 takes the credit; j1 waits on X:1; j2 waits for a credit. */
		j[0].queue = j[1].queue = j[2].queue = qc.handle;
		j[1].waits = (uintptr_t)&wx;
		j[1].nwaits = 1;
		j[1].signals = (uintptr_t)&sy;
		j[1].nsignals = 1;
		j[2].signals = (uintptr_t)&sz;
		j[2].nsignals = 1;
		for (int i = 0; i < 3; i++) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);

			us[i] = (struct accel_uring_submit){ .job = (uintptr_t)&j[i] };
			accel_prep_uring_cmd(sqe, cfd, ACCEL_URING_CMD_JOB_SUBMIT,
					     &us[i], sizeof(us[i]));
		}
		if (io_uring_submit(&ring) != 3)
			_exit(12);
		if (write(sv[1], "r", 1) != 1)
			_exit(13);
		pause();
		_exit(0);
	}
	(void)sfd;
	ASSERT_EQ(1, read(sv[0], &c, 1));
	usleep(20000);
	ASSERT_EQ(0, kill(pid, SIGKILL));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFSIGNALED(status));
	ASSERT_EQ(-EOWNERDEAD, so_wait1(fd, y, 1, 0, in_ms(5000)));
	ASSERT_EQ(-EOWNERDEAD, so_wait1(fd, z, 1, 0, in_ms(5000)));
	ASSERT_EQ(0, so_query(fd, y, NULL, NULL, &err));
	ASSERT_EQ(-EOWNERDEAD, err);
	ASSERT_EQ(0, so_query(fd, z, NULL, NULL, &err));
	ASSERT_EQ(-EOWNERDEAD, err);
	/* Nothing waited on X went wrong: it is not failed. */
	ASSERT_EQ(0, so_query(fd, x, NULL, NULL, &err));
	ASSERT_EQ(0, err);
	close(fd);
}

/*
 * io_uring SUBMITs pending behind a one-credit queue, released one after
 * another by COMPLETEs for two seconds. Where io_uring cannot cancel a
 * uring_cmd itself (6.1), the module's monitor looks at each pending
 * SUBMIT every 50 ms, on another CPU, to answer those whose process or
 * ring is going; it read the SUBMIT's command again after its lock
 * section, when a release could have answered it meanwhile, and then
 * followed a NULL or completed request into its ring (an oops). Each
 * SUBMIT is answered once, with a job that can be completed.
 */
TEST_F_TIMEOUT(robust, pending_submits_released_under_the_monitor, 120)
{
	int fd = accel_test_open();
	struct accel_job j = { 0 };
	struct accel_uring_submit us = { .job = (uintptr_t)&j };
	long submitted = 0, answered = 0;
	uint64_t t0 = now_ns();
	struct io_uring ring;
	bool more = true;

	ASSERT_GE(fd, 0);
	j.queue = queue_new(_metadata, fd, engine_name("monitor"), ACCEL_PRIORITY_NORMAL, 1);
	ASSERT_EQ(0, io_uring_queue_init(128, &ring, 0));
	while (more || answered < submitted) {
		struct io_uring_cqe *cqe;
		uint32_t id;

		more = now_ns() - t0 < 2ull * 1000000000ull && answered < 100000;
		/* 64 pending for the monitor to look at; read at submission. */
		while (more && submitted - answered < 64) {
			accel_prep_uring_cmd(io_uring_get_sqe(&ring), fd,
					     ACCEL_URING_CMD_JOB_SUBMIT, &us, sizeof(us));
			submitted++;
		}
		ASSERT_LE(0, io_uring_submit(&ring));
		ASSERT_EQ(0, io_uring_wait_cqe(&ring, &cqe));
		if (cqe->res <= 0)
			TH_LOG("SUBMIT %ld answered %d", answered, cqe->res);
		ASSERT_LT(0, cqe->res);
		id = (uint32_t)cqe->res & ACCEL_JOB_RES_ID_MASK;
		io_uring_cqe_seen(&ring, cqe);
		answered++;
		ASSERT_EQ(0, complete(fd, id, 0));
	}
	TH_LOG("%ld SUBMITs answered", answered);
	ASSERT_GT(answered, 500);
	io_uring_queue_exit(&ring);
	ASSERT_EQ(0, close(fd));
}

/*
 * Issue 8: import cycles through sync_files, S:3 into S at 3 and A:1 into
 * B at 1 with B:1 into A at 1: once everything is closed the module's
 * reference count falls back, so it can be unloaded.
 */
TEST_F(robust, sync_file_import_cycles_are_freed)
{
	long base = module_refcnt();
	int fd, sf, sf2;
	uint32_t s, a, b;

	if (base < 0)
		SKIP(return, "no /sys/module/" ACCEL_DEVICE_NAME "/refcnt");
	fd = accel_test_open();
	ASSERT_GE(fd, 0);
	s = so_new(_metadata, fd, 0);
	ASSERT_EQ(0, so_export_sync_file(fd, s, 3, &sf));
	ASSERT_EQ(0, so_import_sync_file(fd, s, 3, sf));
	close(sf);
	a = so_new(_metadata, fd, 0);
	b = so_new(_metadata, fd, 0);
	ASSERT_EQ(0, so_export_sync_file(fd, a, 1, &sf));
	ASSERT_EQ(0, so_export_sync_file(fd, b, 1, &sf2));
	ASSERT_EQ(0, so_import_sync_file(fd, b, 1, sf));
	ASSERT_EQ(0, so_import_sync_file(fd, a, 1, sf2));
	close(sf);
	close(sf2);
	/* A cycle still open waits, as it must. */
	ASSERT_EQ(-ETIME, so_wait1(fd, a, 1, 0, in_ms(20)));
	ASSERT_EQ(0, close(fd));
	ASSERT_EQ(base, refcnt_settles(base, 5000));

	/* An import of a point of ours still reaches its point. */
	fd = accel_test_open();
	ASSERT_GE(fd, 0);
	a = so_new(_metadata, fd, 0);
	b = so_new(_metadata, fd, 0);
	ASSERT_EQ(0, so_export_sync_file(fd, a, 2, &sf));
	ASSERT_EQ(0, so_import_sync_file(fd, b, 7, sf));
	close(sf);
	ASSERT_EQ(0, so_signal(fd, a, 2));
	ASSERT_EQ(0, so_wait1(fd, b, 7, 0, in_ms(5000)));
	/* One whose importer goes first: its source is untouched. */
	ASSERT_EQ(0, so_export_sync_file(fd, a, 9, &sf));
	ASSERT_EQ(0, so_import_sync_file(fd, b, 8, sf));
	close(sf);
	ASSERT_EQ(0, so_destroy(fd, b));
	ASSERT_EQ(0, so_signal(fd, a, 9));
	ASSERT_EQ(9, so_value(_metadata, fd, a));
	ASSERT_EQ(0, close(fd));
	ASSERT_EQ(base, refcnt_settles(base, 5000));
}

/*
 * Imports stay until their fence signals, which may be never: a file may
 * have at most max_pending_imports pending; past it -ENOSPC, and nothing
 * changes. Once they are done the room comes back.
 */
TEST_F(robust, pending_imports_are_bounded)
{
	int fd = accel_test_open(), sf;
	uint64_t sub;
	uint32_t a, b;
	long old;

	ASSERT_GE(fd, 0);
	old = set_param("max_pending_imports", 4);
	ASSERT_GE(old, 0);
	a = so_new(_metadata, fd, 0);
	b = so_new(_metadata, fd, 0);
	ASSERT_EQ(0, so_export_sync_file(fd, a, 1, &sf));
	for (int i = 1; i <= 4; i++) {
		ASSERT_EQ(0, so_import_sync_file(fd, b, i, sf));
	}
	ASSERT_EQ(-ENOSPC, so_import_sync_file(fd, b, 5, sf));
	ASSERT_EQ(0, so_query(fd, b, NULL, &sub, NULL));
	ASSERT_EQ(4, sub);
	/*
	 * A fence signalled already is no pending import: taken at the
	 * limit, and applied by the import itself (it was -ENOSPC). One
	 * signalled with an error fails the syncobj at once.
	 */
	{
		uint32_t c = so_new(_metadata, fd, 0), d = so_new(_metadata, fd, 1);
		uint32_t f = so_new(_metadata, fd, 0), g = so_new(_metadata, fd, 0);
		int done, failed, err;

		ASSERT_EQ(0, so_export_sync_file(fd, d, 1, &done));
		ASSERT_EQ(0, so_import_sync_file(fd, c, UINT64_MAX, done));
		ASSERT_EQ(UINT64_MAX, so_value(_metadata, fd, c));
		ASSERT_EQ(-EINVAL, so_import_sync_file(fd, c, UINT64_MAX, done));
		ASSERT_EQ(0, so_fail(fd, f, -ENOLINK));
		ASSERT_EQ(0, so_export_sync_file(fd, f, 1, &failed));
		ASSERT_EQ(0, so_import_sync_file(fd, g, 1ull << 32, failed));
		ASSERT_EQ(0, so_query(fd, g, NULL, NULL, &err));
		ASSERT_EQ(-ENOLINK, err);
		ASSERT_EQ(-ENOLINK, so_import_sync_file(fd, g, 1ull << 33, failed));
		ASSERT_EQ(-ENOSPC, so_import_sync_file(fd, b, 5, sf));
		close(done);
		close(failed);
	}
	ASSERT_EQ(0, so_signal(fd, a, 1));
	ASSERT_EQ(0, so_wait1(fd, b, 4, 0, in_ms(5000)));
	/* Done, so the room is back (the work that ends them may lag). */
	for (int i = 0; i < 500 && so_import_sync_file(fd, b, 5, sf); i++)
		usleep(1000);
	ASSERT_EQ(0, so_query(fd, b, NULL, &sub, NULL));
	ASSERT_EQ(5, sub);
	set_param("max_pending_imports", old);
	close(sf);
	close(fd);
}

/*
 * Found by accel-fuzz: the kernel's internal codes (-512..-530) were taken
 * as a syncobj's failure, a job's status or a NOP's result; a syncobj
 * failed with -ERESTARTSYS would make every waiter's syscall restart, and
 * the ioctl NOP handed errno 517 to userspace. Each is -EINVAL now and
 * changes nothing; the edges of the range still work.
 */
TEST_F(robust, kernel_internal_errnos_are_refused)
{
	int fd = accel_test_open(), err, id;
	struct accel_job_event ev;
	struct accel_nop nop = { .flags = ACCEL_NOP_F_RESULT };
	uint32_t h, q, y;

	ASSERT_GE(fd, 0);
	h = so_new(_metadata, fd, 0);
	for (int e = 512; e <= 530; e++) {
		ASSERT_EQ(-EINVAL, so_fail(fd, h, -e));
		nop.result = -e;
		ASSERT_ERRNO(ioctl(fd, ACCEL_IOCTL_NOP, &nop), EINVAL);
	}
	ASSERT_EQ(0, so_query(fd, h, NULL, NULL, &err));
	ASSERT_EQ(0, err);
	nop.result = -511;
	ASSERT_ERRNO(ioctl(fd, ACCEL_IOCTL_NOP, &nop), 511);
	nop.result = -531;
	ASSERT_ERRNO(ioctl(fd, ACCEL_IOCTL_NOP, &nop), 531);

	q = queue_new(_metadata, fd, engine_name("errno"), ACCEL_PRIORITY_NORMAL, 0);
	y = so_new(_metadata, fd, 0);
	id = submit(fd, q, 0, 0, y, 1, 0);
	ASSERT_GT(id, 0);
	ASSERT_EQ(1, fetch(fd, &ev, 1));
	ASSERT_EQ(-EINVAL, complete(fd, id, -512));
	ASSERT_EQ(-EINVAL, complete(fd, id, -530));
	ASSERT_EQ(-ETIME, so_wait1(fd, y, 1, 0, 0)); /* still in flight */
	ASSERT_EQ(0, complete(fd, id, -531));
	ASSERT_EQ(-531, so_wait1(fd, y, 1, 0, 0));
	ASSERT_EQ(0, so_fail(fd, h, -511));
	ASSERT_EQ(-511, so_wait1(fd, h, 1, 0, 0));
	close(fd);
}

/*
 * Found by accel-fuzz: an engine whose last queue went kept its sysfs
 * directory a moment after it left the engine list, so a queue naming the
 * same engine then made a second directory of that name (-EEXIST, and a
 * sysfs warning in the kernel log). Two threads create and destroy queues
 * on one engine name: every creation must succeed.
 */
struct churn {
	int fd;
	int failed;
};

static void *churn_main(void *arg)
{
	struct churn *c = arg;

	for (int i = 0; i < 300; i++) {
		struct accel_queue_create a = { .weight = 1 };
		struct accel_queue_destroy d;

		snprintf(a.engine, sizeof(a.engine), "r-churn-%d", getpid());
		if (ioctl(c->fd, ACCEL_IOCTL_QUEUE_CREATE, &a)) {
			c->failed = errno;
			break;
		}
		d = (struct accel_queue_destroy){ .handle = a.handle };
		ioctl(c->fd, ACCEL_IOCTL_QUEUE_DESTROY, &d);
	}
	return NULL;
}

TEST_F(robust, engine_name_reused_while_it_goes)
{
	struct churn c[2] = { { .fd = accel_test_open() }, { .fd = accel_test_open() } };
	pthread_t t[2];

	ASSERT_GE(c[0].fd, 0);
	ASSERT_GE(c[1].fd, 0);
	for (int i = 0; i < 2; i++) {
		ASSERT_EQ(0, pthread_create(&t[i], NULL, churn_main, &c[i]));
	}
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	ASSERT_EQ(0, c[0].failed);
	ASSERT_EQ(0, c[1].failed);
	close(c[0].fd);
	close(c[1].fd);
}

/*
 * A wait's registration racing its fence's signal on another CPU. The
 * fence callback used to try PENDING -> DONE and then REGISTERING ->
 * FIRED; when the registering thread moved REGISTERING -> PENDING
 * between the two, nobody delivered: an io_uring WAIT whose point was
 * reached never got its CQE (about one run in ten of accel-bench's
 * ping-pong on deb6.12). Here pairs of threads ping-pong through io_uring
 * WAITs and eventfd notifications on two syncobjs for PP_SECONDS, each
 * wait bounded: one not answered within 5 s while its point is reached is
 * a lost completion. The window is a few instructions wide, so a clean
 * run says little; a failure says exactly what was lost.
 */
#define PP_PAIRS 2
#define PP_SECONDS 6

struct pp_side {
	int fd;
	uint32_t mine, other;
	int use_eventfd;
	int starts;
	int64_t until;
	atomic_long *stop; /* the pair's last round, set by the starter */
	long rounds;
	char why[160];
};

static int pp_wait(struct pp_side *w, struct io_uring *ring, uint64_t v)
{
	int res;

	if (w->use_eventfd) {
		int efd = eventfd(0, EFD_CLOEXEC), ready = 0;
		struct pollfd p = { .fd = efd, .events = POLLIN };

		if (efd < 0 || so_eventfd(w->fd, w->other, v, 0, efd))
			return -1;
		ready = poll(&p, 1, 5000);
		close(efd);
		res = ready == 1 ? 0 : 1000;
	} else {
		uring_wait_prep(ring, w->fd, w->other, v, 0, v);
		if (io_uring_submit(ring) != 1)
			return -1;
		res = uring_reap1(ring, 5000, NULL);
	}
	if (res == 1000) {
		/* A thread may not assert: the test asserts on w->why. */
		uint64_t value = ~0ull;
		int err = so_query(w->fd, w->other, &value, NULL, NULL);

		snprintf(w->why, sizeof(w->why),
			 "%s wait for point %llu not answered in 5 s; the value is %llu%s%s",
			 w->use_eventfd ? "eventfd" : "io_uring",
			 (unsigned long long)v, (unsigned long long)value,
			 err ? ", QUERY failed: " : "", err ? strerror(-err) : "");
	}
	return res;
}

static void *pp_thread(void *arg)
{
	struct pp_side *w = arg;
	struct io_uring ring;
	uint64_t i;

	if (io_uring_queue_init(4, &ring, 0)) {
		snprintf(w->why, sizeof(w->why), "io_uring_queue_init failed");
		return NULL;
	}
	/*
	 * The starter ends the run: after its round i it stores i in *stop
	 * and reaches i + 1 anyway, so that a partner already waiting for
	 * i + 1 wakes, sees the stop and leaves too.
	 */
	for (i = 1;; i++) {
		long stop = atomic_load(w->stop);

		if (stop && (long)i > stop)
			break;
		if (w->starts && so_signal(w->fd, w->mine, i))
			break;
		if (pp_wait(w, &ring, i))
			break;
		if (!w->starts) {
			stop = atomic_load(w->stop);
			if (stop && (long)i > stop)
				break; /* the starter's last wake */
			if (so_signal(w->fd, w->mine, i))
				break;
		}
		w->rounds = i;
		if (w->starts && (int64_t)now_ns() >= w->until) {
			atomic_store(w->stop, (long)i);
			so_signal(w->fd, w->mine, i + 1);
			break;
		}
	}
	io_uring_queue_exit(&ring);
	return NULL;
}

TEST_F_TIMEOUT(robust, waits_racing_their_signal_are_answered, 120)
{
	int fd = accel_test_open();
	struct pp_side side[PP_PAIRS * 2][2];
	pthread_t t[PP_PAIRS * 2][2];
	atomic_long stop[PP_PAIRS * 2] = { 0 };
	int64_t until = now_ns() + PP_SECONDS * 1000000000ll;

	ASSERT_GE(fd, 0);
	for (int p = 0; p < PP_PAIRS * 2; p++) {
		uint32_t x = so_new(_metadata, fd, 0), y = so_new(_metadata, fd, 0);

		for (int k = 0; k < 2; k++) {
			side[p][k] = (struct pp_side){
				.fd = fd, .mine = k ? y : x, .other = k ? x : y,
				.use_eventfd = p >= PP_PAIRS, .starts = !k,
				.until = until, .stop = &stop[p],
			};
			ASSERT_EQ(0, pthread_create(&t[p][k], NULL, pp_thread, &side[p][k]));
		}
	}
	for (int p = 0; p < PP_PAIRS * 2; p++)
		for (int k = 0; k < 2; k++)
			pthread_join(t[p][k], NULL);
	for (int p = 0; p < PP_PAIRS * 2; p++) {
		TH_LOG("pair %d (%s): %ld round trips", p,
		       p >= PP_PAIRS ? "eventfd" : "io_uring", side[p][0].rounds);
		for (int k = 0; k < 2; k++)
			if (side[p][k].why[0])
				TH_LOG("pair %d, thread %d: %s", p, k, side[p][k].why);
		EXPECT_EQ(0, side[p][0].why[0] | side[p][1].why[0]);
		EXPECT_EQ(side[p][0].rounds, side[p][1].rounds);
		EXPECT_GT(side[p][0].rounds, 100);
	}
}

ACCEL_TEST_MAIN

/* A read-only page holding a copy of @len bytes at @src. */
static void *ro_copy(struct __test_metadata *_metadata, const void *src, size_t len)
{
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	EXPECT_NE(MAP_FAILED, p);
	memcpy(p, src, len);
	EXPECT_EQ(0, mprotect(p, 4096, PROT_READ));
	return p;
}

/*
 * A copy of @len bytes at @src across a page boundary, with one end of it
 * on a read-only page: its last byte alone (@ro_tail), or its first byte
 * alone, the rest on a writable page. Whether the module can write the
 * struct back depends on both pages.
 */
static void *straddle_copy(struct __test_metadata *_metadata, const void *src,
			   size_t len, bool ro_tail)
{
	char *p = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *at = p + 4096 - (ro_tail ? len - 1 : 1);

	EXPECT_NE(MAP_FAILED, p);
	memcpy(at, src, len);
	EXPECT_EQ(0, mprotect(ro_tail ? p + 4096 : p, 4096, PROT_READ));
	return at;
}

/* The lowest free fd: what the next open would get. */
static int next_fd(void)
{
	int d = dup(0);

	close(d);
	return d;
}

/* Of handles 1 to 64, how many name a syncobj of @fd. */
static int live_handles(int fd)
{
	int n = 0;

	for (uint32_t h = 1; h <= 64; h++)
		n += so_query(fd, h, NULL, NULL, NULL) == 0;
	return n;
}

/* The "accel-queue-" lines of @fd's fdinfo: its queues. */
static int fdinfo_queues(int fd)
{
	char buf[8192];
	int c = 0;

	if (fdinfo_read(fd, buf, sizeof(buf)))
		return -1;
	for (char *s = buf; (s = strstr(s, "accel-queue-")); s++)
		c++;
	return c;
}

/*
 * A command whose struct the module cannot write back (read-only memory)
 * fails with -EFAULT and changes nothing (uapi.rst): no syncobj or queue
 * is created, no fd installed, no job submitted, completed or fetched.
 * An outside test found each of them done before the write-back failed:
 * handles and queues left in the file (filling its limits), fds the
 * caller was never told of, a COMPLETE performed, events consumed.
 */
TEST_F(robust, unwritable_output_changes_nothing)
{
	int fd = accel_test_open(), sfd, efd, before;
	const char *e = engine_name("ro");
	struct accel_job_event ev[4];
	uint64_t v, submitted;
	uint32_t x, y, q, id;

	ASSERT_GE(fd, 0);
	x = so_new(_metadata, fd, 0);

	/* CREATE and IMPORT: no handle. */
	{
		struct accel_syncobj_create c = { 0 };
		struct accel_syncobj_handle_fd im = { 0 };
		void *ro = ro_copy(_metadata, &c, sizeof(c));

		ASSERT_EQ(-EFAULT, xioctl(fd, ACCEL_IOCTL_SYNCOBJ_CREATE, ro));
		ASSERT_EQ(0, so_export(fd, x, &sfd));
		im.fd = sfd;
		ro = ro_copy(_metadata, &im, sizeof(im));
		ASSERT_EQ(-EFAULT, xioctl(fd, ACCEL_IOCTL_SYNCOBJ_IMPORT, ro));
		ASSERT_EQ(1, live_handles(fd));
		close(sfd);
	}
	/* EXPORT and EXPORT_SYNC_FILE: no fd. */
	{
		struct accel_syncobj_handle_fd ex = { .handle = x };
		struct accel_syncobj_sync_file sf = { .handle = x, .point = 1 };

		before = next_fd();
		ASSERT_EQ(-EFAULT, xioctl(fd, ACCEL_IOCTL_SYNCOBJ_EXPORT,
					  ro_copy(_metadata, &ex, sizeof(ex))));
		ASSERT_EQ(-EFAULT, xioctl(fd, ACCEL_IOCTL_SYNCOBJ_EXPORT_SYNC_FILE,
					  ro_copy(_metadata, &sf, sizeof(sf))));
		ASSERT_EQ(before, next_fd());
		ASSERT_EQ(-EFAULT, xioctl(fd, ACCEL_IOCTL_SYNCOBJ_EXPORT, (void *)4096));
		ASSERT_EQ(before, next_fd());
	}
	/* QUEUE_CREATE: no queue. */
	{
		struct accel_queue_create c = { .priority = ACCEL_PRIORITY_NORMAL, .weight = 1 };

		memcpy(c.engine, e, strlen(e));
		ASSERT_EQ(-EFAULT, xioctl(fd, ACCEL_IOCTL_QUEUE_CREATE,
					  ro_copy(_metadata, &c, sizeof(c))));
		ASSERT_EQ(0, fdinfo_queues(fd));
	}
	q = queue_new(_metadata, fd, e, ACCEL_PRIORITY_NORMAL, 1);
	ASSERT_EQ(1, fdinfo_queues(fd));
	/* JOB_SUBMIT: no job, no promise. */
	{
		struct accel_point s = { .handle = x, .point = 1 };
		struct accel_job j = {
			.queue = q, .signals = (uintptr_t)&s, .nsignals = 1,
			.flags = ACCEL_JOB_F_EVENTS,
		};
		struct accel_job_submit a = { .jobs = (uintptr_t)&j, .count = 1 };

		ASSERT_EQ(-EFAULT, xioctl(fd, ACCEL_IOCTL_JOB_SUBMIT,
					  ro_copy(_metadata, &a, sizeof(a))));
		/* Read-only at either end only: the same. */
		for (int tail = 0; tail < 2; tail++)
			ASSERT_EQ(-EFAULT, xioctl(fd, ACCEL_IOCTL_JOB_SUBMIT,
						  straddle_copy(_metadata, &a, sizeof(a), tail)));
		ASSERT_EQ(0, j.id);
		ASSERT_EQ(0, so_query(fd, x, NULL, &submitted, NULL));
		ASSERT_EQ(0, submitted);
		ASSERT_EQ(0, fetch(fd, ev, 4));
		/* The same job for real: released at once, an event. */
		ASSERT_EQ(0, xioctl(fd, ACCEL_IOCTL_JOB_SUBMIT, &a));
		id = j.id;
	}
	/* FETCH: the event stays. */
	{
		struct accel_job_fetch f = { .events = (uintptr_t)ev, .max = 4 };

		ASSERT_EQ(-EFAULT, xioctl(fd, ACCEL_IOCTL_JOB_FETCH,
					  ro_copy(_metadata, &f, sizeof(f))));
		ASSERT_EQ(1, fetch(fd, ev, 4));
		ASSERT_EQ(id, ev[0].id);
	}
	/* COMPLETE_FETCH: no COMPLETE. */
	{
		struct accel_job_complete_fetch cf = {
			.id = id, .events = (uintptr_t)ev, .max = 4,
		};

		ASSERT_EQ(-EFAULT, xioctl(fd, ACCEL_IOCTL_JOB_COMPLETE_FETCH,
					  ro_copy(_metadata, &cf, sizeof(cf))));
		for (int tail = 0; tail < 2; tail++)
			ASSERT_EQ(-EFAULT, xioctl(fd, ACCEL_IOCTL_JOB_COMPLETE_FETCH,
						  straddle_copy(_metadata, &cf, sizeof(cf), tail)));
		ASSERT_EQ(0, so_value(_metadata, fd, x));
		ASSERT_EQ(0, complete(fd, id, 0));
		ASSERT_EQ(1, so_value(_metadata, fd, x));
	}
	/* CANCEL: the eventfd stays armed. */
	{
		struct accel_syncobj_cancel c = { .handle = x, .point = 2 };

		efd = eventfd(0, EFD_NONBLOCK);
		ASSERT_GE(efd, 0);
		ASSERT_EQ(0, so_eventfd(fd, x, 2, 0, efd));
		ASSERT_EQ(-EFAULT, xioctl(fd, ACCEL_IOCTL_SYNCOBJ_CANCEL,
					  ro_copy(_metadata, &c, sizeof(c))));
		ASSERT_EQ(0, so_signal(fd, x, 2));
		ASSERT_EQ(sizeof(v), read(efd, &v, sizeof(v)));
		close(efd);
	}
	y = so_new(_metadata, fd, 0);
	ASSERT_EQ(2, y); /* handles 1 and 2: none was taken meanwhile */
	close(fd);
}
