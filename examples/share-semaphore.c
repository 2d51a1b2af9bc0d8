// SPDX-License-Identifier: MIT
/*
 * share-semaphore: one semaphore, two processes.
 *
 * A producer creates a semaphore and forks a consumer. It exports the
 * semaphore as an fd (accel_semaphore_export_fd()) and sends the fd over a
 * unix socketpair with SCM_RIGHTS, as it would to any other program;
 * holding the fd is the permission. The consumer opens its own scheduler,
 * imports the fd (accel_semaphore_import_fd()) and waits for value 1 the
 * way an event loop would: it polls the fd of that point
 * (accel_semaphore_notify_fd()). The producer signals 1; the consumer
 * wakes, and signals 2 back through its own semaphore object, which the
 * producer waits for.
 *
 * Sharing needs the kernel scheduler (the accelsched module and
 * /dev/accelsched). On the embedded scheduler the export answers
 * -EOPNOTSUPP with a message saying so; the example prints it and a
 * "skipped" line and exits 0.
 *
 * Build: cc share-semaphore.c $(pkg-config --cflags --libs libaccel)
 * Run:   ./share-semaphore          (ACCEL_SCHEDULER=kernel to insist)
 */
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <accel/accel.h>

#define SEC UINT64_C(1000000000)

static bool skipped;

static int send_fd(int sock, int fd)
{
	char byte = 's', cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { &byte, 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);

	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	return sendmsg(sock, &msg, 0) == 1 ? 0 : -errno;
}

/* The fd received, -1 at end of file (the producer gave up). */
static int recv_fd(int sock)
{
	char byte, cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { &byte, 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c;
	int fd;

	if (recvmsg(sock, &msg, MSG_CMSG_CLOEXEC) != 1)
		return -1;
	c = CMSG_FIRSTHDR(&msg);
	if (!c || c->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

static int fail(const char *who, const char *what, int err)
{
	fprintf(stderr, "%s: %s failed: %s (%s)\n", who, what,
		accel_error_message(), strerror(-err));
	return EXIT_FAILURE;
}

/* Waits for point 1 through poll(), then signals 2. */
static int consume(accel_semaphore_t *sem)
{
	struct pollfd p = { .events = POLLIN };
	uint64_t value;
	int err, error;

	err = accel_semaphore_notify_fd(sem, 1, &p.fd);
	if (err)
		return fail("consumer", "accel_semaphore_notify_fd", err);
	printf("consumer: polling the fd of point 1\n");
	fflush(stdout);
	if (poll(&p, 1, 10000) != 1) {
		fprintf(stderr, "consumer: point 1 did not come within 10 s\n");
		close(p.fd);
		return EXIT_FAILURE;
	}
	close(p.fd);
	accel_semaphore_query(sem, &value, &error);
	if (error) {
		fprintf(stderr, "consumer: the semaphore failed with %s\n",
			strerror(-error));
		return EXIT_FAILURE;
	}
	printf("consumer: woke up, the semaphore is at %llu; signalling 2\n",
	       (unsigned long long)value);
	fflush(stdout);
	err = accel_semaphore_signal(sem, 2);
	return err ? fail("consumer", "accel_semaphore_signal", err) : 0;
}

static int consumer(int sock)
{
	accel_scheduler_t *sched;
	accel_semaphore_t *sem;
	int fd, err, ret;

	fd = recv_fd(sock);
	if (fd < 0)
		return 0; /* the producer could not share: it says why */
	err = accel_scheduler_open(NULL, &sched);
	if (err) {
		close(fd);
		return fail("consumer", "accel_scheduler_open", err);
	}
	err = accel_semaphore_import_fd(sched, fd, &sem);
	close(fd); /* the semaphore holds the timeline now */
	if (err) {
		accel_scheduler_release(sched);
		return fail("consumer", "accel_semaphore_import_fd", err);
	}
	printf("consumer: imported the semaphore (pid %d)\n", (int)getpid());
	ret = consume(sem);
	accel_semaphore_release(sem);
	accel_scheduler_release(sched);
	return ret;
}

static int produce(accel_semaphore_t *sem, int sock)
{
	struct timespec pause = { 0, 200 * 1000 * 1000 };
	int fd, err;

	err = accel_semaphore_export_fd(sem, &fd);
	if (err == -EOPNOTSUPP) {
		printf("producer: %s\n", accel_error_message());
		printf("skipped: needs the accelsched module (the kernel scheduler)\n");
		skipped = true;
		return 0;
	}
	if (err)
		return fail("producer", "accel_semaphore_export_fd", err);
	err = send_fd(sock, fd);
	close(fd); /* sent: the consumer has its own copy */
	if (err) {
		fprintf(stderr, "producer: sendmsg: %s\n", strerror(-err));
		return EXIT_FAILURE;
	}
	printf("producer: sent the semaphore's fd to the consumer\n");
	nanosleep(&pause, NULL); /* let it go to sleep first */
	printf("producer: signalling 1\n");
	fflush(stdout);
	err = accel_semaphore_signal(sem, 1);
	if (err)
		return fail("producer", "accel_semaphore_signal", err);
	err = accel_semaphore_wait(sem, 2, 0, accel_deadline_after(10 * SEC));
	if (err)
		return fail("producer", "waiting for the consumer's 2", err);
	printf("producer: the consumer signalled 2\n");
	return 0;
}

int main(void)
{
	accel_scheduler_t *sched;
	accel_semaphore_t *sem;
	int sv[2], err, ret, status;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
		perror("share-semaphore: socketpair");
		return EXIT_FAILURE;
	}
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		perror("share-semaphore: fork");
		return EXIT_FAILURE;
	}
	if (pid == 0) {
		close(sv[0]);
		ret = consumer(sv[1]);
		fflush(stdout);
		_exit(ret);
	}
	close(sv[1]);
	err = accel_scheduler_open(NULL, &sched);
	if (err)
		return fail("producer", "accel_scheduler_open", err);
	printf("producer: %s scheduler (%s)\n",
	       accel_scheduler_kind_name(accel_scheduler_kind(sched)),
	       accel_scheduler_reason(sched));
	err = accel_semaphore_create(sched, 0, &sem);
	if (err)
		return fail("producer", "accel_semaphore_create", err);
	ret = produce(sem, sv[0]);
	close(sv[0]); /* a consumer still waiting for an fd sees the end */
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status)) {
		fprintf(stderr, "producer: the consumer failed (status 0x%x)\n", status);
		ret = EXIT_FAILURE;
	}
	accel_semaphore_release(sem);
	accel_scheduler_release(sched);
	if (!ret && !skipped)
		printf("share-semaphore: done\n");
	return ret;
}
