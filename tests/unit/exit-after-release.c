// SPDX-License-Identifier: MIT
/*
 * exit-after-release: the program of item 12 of the acceptance report,
 * run as a test. It submits a barrier that waits on a point and signals
 * nothing, releases the queue and the device, signals the point and
 * returns from main() at once, so that process exit (atexit handlers,
 * library destructors, the unloading of the Vulkan driver) runs while
 * libaccel may still be completing the barrier and tearing the device
 * down. That must never crash nor hang: exit status 0 every time.
 *
 * Usage: exit-after-release [URI [RUNS]]
 * URI defaults to ACCEL_TEST_DEVICE, else cpu://. With RUNS, the program
 * runs itself RUNS times (the crash it guards against was rare) and fails
 * naming the first run that did not exit 0. Exits 77 (skip) when the
 * device cannot be opened here.
 */
#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <accel/accel.h>

static int fail(const char *call, int err)
{
	fprintf(stderr, "exit-after-release: %s returned %d: %s\n", call, err,
		accel_error_message());
	return 1;
}

extern char **environ;

/* Runs this program on @uri @runs times; 0, 77 (all skipped) or 1. */
static int run_many(const char *self, const char *uri, long runs)
{
	char *argv[] = { (char *)self, (char *)uri, NULL };

	for (long i = 0; i < runs; i++) {
		pid_t pid;
		int status, err = posix_spawn(&pid, self, NULL, NULL, argv, environ);

		if (err) {
			fprintf(stderr, "exit-after-release: posix_spawn %s: %s\n",
				self, strerror(err));
			return 1;
		}
		if (waitpid(pid, &status, 0) < 0) {
			perror("exit-after-release: waitpid");
			return 1;
		}
		if (WIFEXITED(status) && WEXITSTATUS(status) == 77)
			return 77;
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			fprintf(stderr, "exit-after-release: run %ld of %ld on %s: %s %d, expected exit status 0\n",
				i + 1, runs, uri,
				WIFSIGNALED(status) ? "killed by signal" : "exit status",
				WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
			return 1;
		}
	}
	printf("%ld runs on %s exited 0\n", runs, uri);
	return 0;
}

int main(int argc, char **argv)
{
	const char *uri = argc > 1 ? argv[1] : getenv("ACCEL_TEST_DEVICE");
	accel_device_t *dev;
	accel_queue_t *queue;
	accel_semaphore_t *sem;
	uint64_t one = 1;
	accel_semaphore_list_t waits = { 1, &sem, &one };
	int err;

	if (!uri || !*uri)
		uri = "cpu://";
	if (argc > 2)
		return run_many(argv[0], uri, strtol(argv[2], NULL, 10));
	err = accel_device_open(uri, NULL, &dev);
	if (err) {
		printf("SKIP: cannot open %s: %s\n", uri, accel_error_message());
		return 77;
	}
	err = accel_queue_create(dev, 0, &queue);
	if (err)
		return fail("accel_queue_create", err);
	err = accel_semaphore_create(accel_device_scheduler(dev), 0, &sem);
	if (err)
		return fail("accel_semaphore_create", err);
	err = accel_queue_barrier(queue, &waits, NULL, 0);
	if (err)
		return fail("accel_queue_barrier", err);
	accel_queue_release(queue);
	accel_device_release(dev);
	err = accel_semaphore_signal(sem, 1);
	if (err)
		return fail("accel_semaphore_signal", err);
	accel_semaphore_release(sem);
	return 0;
}
