// SPDX-License-Identifier: MIT
/*
 * trace-workload: a known pattern of jobs for the trace test (run under
 * `accelctl trace` in the test VM; tests/trace/check-trace.py --workload
 * then checks the trace), checking the debugfs jobs listing on the way.
 * Prints KTAP; exits 0 when every check held.
 *
 * On engine "trace-test", one queue, one file, by ioctl:
 *
 *   A  signals s:1                        completed
 *   B  waits s:1, signals s:2             completed
 *   C  waits s:2, signals s:3             completed
 *   D  waits f:1, signals s:10            failed: f fails with -ENOLINK
 *   E  signals t:1                        completed with -EIO
 *
 * While B, C and D wait, <debugfs>/accelsched/jobs lists the five with
 * their states and points: A and E released, B, C, D pending, B's wait on
 * the context of A's signal. Once all ended, the listing holds none.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "accelsched.h"

#define JOBS_LISTING "/sys/kernel/debug/accelsched/jobs"

static int nchecks, nfailed;

static void check(bool ok, const char *what)
{
	nchecks++;
	if (!ok)
		nfailed++;
	printf("%sok %d %s\n", ok ? "" : "not ", nchecks, what);
	fflush(stdout);
}

static void die(const char *what)
{
	printf("Bail out! %s: %s\n", what, strerror(errno));
	exit(1);
}

static uint32_t syncobj(int fd)
{
	struct accel_syncobj_create c = { 0 };

	if (ioctl(fd, ACCEL_IOCTL_SYNCOBJ_CREATE, &c))
		die("SYNCOBJ_CREATE");
	return c.handle;
}

/* This file's lines of the jobs listing, in @buf; their count. */
static int listing(uint64_t client, char *buf, size_t len)
{
	char line[1024], prefix[64];
	FILE *f = fopen(JOBS_LISTING, "r");
	size_t used = 0;
	int n = 0;

	if (!f)
		die("open " JOBS_LISTING);
	snprintf(prefix, sizeof(prefix), "job client %" PRIu64 " ", client);
	buf[0] = 0;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, prefix, strlen(prefix)))
			continue;
		n++;
		if (used + strlen(line) < len) {
			strcpy(buf + used, line);
			used += strlen(line);
		}
		printf("# %s", line);
	}
	fclose(f);
	return n;
}

/* The line of job @id in @buf (NUL-terminated copy in @out), or false. */
static bool job_line(const char *buf, uint32_t id, char *out, size_t len)
{
	char key[32];
	const char *p;

	snprintf(key, sizeof(key), " id %" PRIu32 " ", id);
	p = strstr(buf, key);
	if (!p)
		return false;
	while (p > buf && p[-1] != '\n')
		p--;
	snprintf(out, len, "%.*s", (int)strcspn(p, "\n"), p);
	return true;
}

/* The value after " <key> " in @line, up to the next space. */
static bool word_after(const char *line, const char *key, char *out, size_t len)
{
	char k[64];
	const char *p;

	snprintf(k, sizeof(k), " %s ", key);
	p = strstr(line, k);
	if (!p)
		return false;
	p += strlen(k);
	snprintf(out, len, "%.*s", (int)strcspn(p, " \n"), p);
	return true;
}

static void complete(int fd, uint32_t id, int status)
{
	struct accel_job_complete c = { .id = id, .status = status, .device_ns = 1000 };

	if (ioctl(fd, ACCEL_IOCTL_JOB_COMPLETE, &c))
		die("JOB_COMPLETE");
}

/* Take released events until @id's; complete the others met on the way. */
static void await_release(int fd, uint32_t id, uint32_t e_id, bool *e_done)
{
	for (;;) {
		struct accel_job_event ev[8];
		struct accel_job_fetch fe = { .events = (uintptr_t)ev, .max = 8 };
		struct pollfd p = { .fd = fd, .events = POLLIN };
		bool found = false;

		if (poll(&p, 1, 10000) != 1)
			die("poll: no release within 10 s");
		if (ioctl(fd, ACCEL_IOCTL_JOB_FETCH, &fe))
			die("JOB_FETCH");
		for (uint32_t i = 0; i < fe.count; i++) {
			if (ev[i].type != ACCEL_JOB_EVENT_RELEASED)
				continue;
			if (ev[i].id == id)
				found = true;
			else if (ev[i].id == e_id && !*e_done) {
				complete(fd, e_id, -EIO);
				*e_done = true;
			}
		}
		if (found)
			return;
	}
}

int main(void)
{
	struct accel_info info = { 0 };
	struct accel_queue_create qc = { .engine = "trace-test",
					 .priority = ACCEL_PRIORITY_NORMAL, .weight = 1 };
	struct accel_point p[5][2];
	struct accel_job jobs[5];
	struct accel_job_submit sub = { .jobs = (uintptr_t)jobs, .count = 5 };
	char buf[8192], line[1024], w[128], a_sig[128];
	uint32_t s, f, t;
	bool e_done = false;
	int fd, n;

	printf("KTAP version 1\n1..10\n");
	fd = open("/dev/accelsched", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		die("open /dev/accelsched");
	if (ioctl(fd, ACCEL_IOCTL_INFO, &info))
		die("INFO");
	printf("# client %" PRIu64 "\n", (uint64_t)info.client_id);
	if (ioctl(fd, ACCEL_IOCTL_QUEUE_CREATE, &qc))
		die("QUEUE_CREATE");
	s = syncobj(fd);
	f = syncobj(fd);
	t = syncobj(fd);

	memset(jobs, 0, sizeof(jobs));
	memset(p, 0, sizeof(p));
	/* A: signal s:1 */
	p[0][1] = (struct accel_point){ .handle = s, .point = 1 };
	/* B: wait s:1, signal s:2 */
	p[1][0] = (struct accel_point){ .handle = s, .point = 1 };
	p[1][1] = (struct accel_point){ .handle = s, .point = 2 };
	/* C: wait s:2, signal s:3 */
	p[2][0] = (struct accel_point){ .handle = s, .point = 2 };
	p[2][1] = (struct accel_point){ .handle = s, .point = 3 };
	/* D: wait f:1, signal s:10 */
	p[3][0] = (struct accel_point){ .handle = f, .point = 1 };
	p[3][1] = (struct accel_point){ .handle = s, .point = 10 };
	/* E: signal t:1 */
	p[4][1] = (struct accel_point){ .handle = t, .point = 1 };
	for (int i = 0; i < 5; i++) {
		jobs[i].queue = qc.handle;
		jobs[i].user_data = (uint64_t)i;
		jobs[i].signals = (uintptr_t)&p[i][1];
		jobs[i].nsignals = 1;
		if (p[i][0].handle) {
			jobs[i].waits = (uintptr_t)&p[i][0];
			jobs[i].nwaits = 1;
		}
	}
	if (ioctl(fd, ACCEL_IOCTL_JOB_SUBMIT, &sub) || sub.submitted != 5)
		die("JOB_SUBMIT");
	for (int i = 0; i < 5; i++)
		printf("# job %c id %" PRIu32 "\n", 'A' + i, jobs[i].id);

	/* The listing while B, C and D wait (A and E have no wait). */
	n = listing(info.client_id, buf, sizeof(buf));
	check(n == 5, "the jobs listing shows the file's 5 jobs");
	check(job_line(buf, jobs[1].id, line, sizeof(line)) &&
	      strstr(line, " state pending ") && strstr(line, " engine trace-test "),
	      "B is listed pending on engine trace-test");
	check(job_line(buf, jobs[0].id, line, sizeof(line)) &&
	      (strstr(line, " state released ") || strstr(line, " state runnable ")) &&
	      word_after(line, "signals", a_sig, sizeof(a_sig)) &&
	      strstr(a_sig, ":1") && strstr(line, " waits signals "),
	      "A is listed released (or runnable) with its signal <ctx>:1");
	check(job_line(buf, jobs[1].id, line, sizeof(line)) &&
	      word_after(line, "waits", w, sizeof(w)) && strcmp(w, a_sig) == 0,
	      "B waits on the fence A's signal reaches (same context:seqno)");
	check(job_line(buf, jobs[3].id, line, sizeof(line)) &&
	      word_after(line, "waits", w, sizeof(w)) && strcmp(w, a_sig) != 0 &&
	      w[strlen(w) - 1] != '+',
	      "D waits on another syncobj's point, not reached");

	/* Run the chain: A, then B, then C (E completes with -EIO on the way). */
	await_release(fd, jobs[0].id, jobs[4].id, &e_done);
	complete(fd, jobs[0].id, 0);
	await_release(fd, jobs[1].id, jobs[4].id, &e_done);
	n = listing(info.client_id, buf, sizeof(buf));
	check(job_line(buf, jobs[1].id, line, sizeof(line)) &&
	      strstr(line, " state released ") && strstr(line, " for_ns ") &&
	      word_after(line, "waits", w, sizeof(w)) && w[strlen(w) - 1] == '+',
	      "B is listed released, its wait marked reached (+)");
	complete(fd, jobs[1].id, 0);
	await_release(fd, jobs[2].id, jobs[4].id, &e_done);
	complete(fd, jobs[2].id, 0);
	/*
	 * With one credit E may come last: a COMPLETE hands its credit to
	 * what its points made runnable (B, then C), and B and C come
	 * before E in their queue's submission order.
	 */
	if (!e_done) {
		await_release(fd, jobs[4].id, 0, &e_done);
		complete(fd, jobs[4].id, -EIO);
		e_done = true;
	}
	check(e_done, "E was released and completed with -EIO");

	/* D fails with f. */
	{
		struct accel_syncobj_fail fl = { .handle = f, .error = -ENOLINK };

		if (ioctl(fd, ACCEL_IOCTL_SYNCOBJ_FAIL, &fl))
			die("SYNCOBJ_FAIL");
	}
	{
		struct accel_syncobj_query q = { .handle = s };

		/* D's failure fails s (its promise of s:10). */
		for (int i = 0; i < 1000; i++) {
			/* Its outputs must be zero going in. */
			q = (struct accel_syncobj_query){ .handle = s };
			if (ioctl(fd, ACCEL_IOCTL_SYNCOBJ_QUERY, &q))
				die("SYNCOBJ_QUERY");
			if (q.error)
				break;
			usleep(10000);
		}
		check(q.error == -ENOLINK && q.value == 3,
		      "D failed with f's -ENOLINK, failing s at 3");
	}
	n = listing(info.client_id, buf, sizeof(buf));
	check(n == 0, "once every job ended the listing holds none of the file's");
	check(access(JOBS_LISTING, R_OK) == 0, "the listing is still readable");
	close(fd);
	printf("# Totals: pass:%d fail:%d xfail:0 xpass:0 skip:0 error:0\n",
	       nchecks - nfailed, nfailed);
	return nfailed ? 1 : 0;
}
