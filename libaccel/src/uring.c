// SPDX-License-Identifier: MIT
/*
 * The io_uring fast path: setting up a kernel scheduler's ring and proving it
 * works with one uring_cmd NOP.
 *
 * When io_uring cannot be used the kernel scheduler stays usable through
 * ioctls, so everything here reports why in words: the usual causes
 * (CONFIG_IO_URING=n, kernel.io_uring_disabled, a container's seccomp
 * profile, RLIMIT_MEMLOCK on kernels before 5.12) are otherwise an
 * unexplained ENOSYS, EPERM or ENOMEM.
 */
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include <accelsched.h>
#include <accel/scheduler.h>

#include "error.h"
#include "uring.h"

/* The SQE's command area is 16 bytes with normal 64-byte SQEs. */
#define ACCEL_URING_CMD_BYTES 16
_Static_assert(sizeof(struct accel_nop) <= ACCEL_URING_CMD_BYTES,
	       "struct accel_nop does not fit a 64-byte SQE");

unsigned int accel_uring_sqpoll_ms(char *note, size_t note_len)
{
	const char *env = secure_getenv(ACCEL_URING_SQPOLL_ENV);
	char *end;
	unsigned long v;

	note[0] = '\0';
	if (!env || !*env)
		return 0;
	errno = 0;
	v = strtoul(env, &end, 10);
	if (errno || *end || end == env || env[0] == '-' ||
	    v > ACCEL_URING_SQPOLL_MAX_MS) {
		accel_strfmt(note, note_len,
			     "%s='%s' ignored: give the polling thread's idle time in milliseconds, 1 to %d (0 for none)",
			     ACCEL_URING_SQPOLL_ENV, env, ACCEL_URING_SQPOLL_MAX_MS);
		return 0;
	}
	return (unsigned int)v;
}

/* user_data of a synchronous accel_uring_cmd(), to recognise its CQE. */
#define ACCEL_URING_SYNC_TAG 0xacce150000000001ULL

static const char *sysctl_value(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	char *nl;

	if (!f)
		return "absent";
	if (!fgets(buf, (int)len, f))
		accel_strfmt(buf, len, "unreadable");
	fclose(f);
	nl = strchr(buf, '\n');
	if (nl)
		*nl = '\0';
	return buf;
}

static const char *memlock_limit(char *buf, size_t len)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_MEMLOCK, &rl) != 0)
		return accel_strfmt(buf, len, "unknown (getrlimit: %s)",
				    strerror(errno));
	if (rl.rlim_cur == RLIM_INFINITY)
		return accel_strfmt(buf, len, "unlimited");
	return accel_strfmt(buf, len, "%llu bytes ('ulimit -l' says %llu)",
			    (unsigned long long)rl.rlim_cur,
			    (unsigned long long)rl.rlim_cur / 1024);
}

void accel_uring_explain_init(int err, char *why, size_t why_len)
{
	char value[64];

	switch (err) {
	case ENOMEM:
		accel_strfmt(why, why_len,
			"io_uring_queue_init(%d) failed with ENOMEM: the locked-memory limit RLIMIT_MEMLOCK is %s, and kernels before 5.12 charge io_uring rings to it; raise it with 'ulimit -l' or a memlock line in /etc/security/limits.conf",
			ACCEL_URING_ENTRIES, memlock_limit(value, sizeof(value)));
		break;
	case EPERM:
		accel_strfmt(why, why_len,
			"io_uring_queue_init(%d) failed with EPERM: io_uring is forbidden to this process, by the sysctl kernel.io_uring_disabled (now %s; 0 allows it, 1 allows only kernel.io_uring_group, 2 forbids it) or by a seccomp filter such as a container runtime's",
			ACCEL_URING_ENTRIES,
			sysctl_value("/proc/sys/kernel/io_uring_disabled",
				     value, sizeof(value)));
		break;
	case ENOSYS:
		accel_strfmt(why, why_len,
			"io_uring_queue_init(%d) failed with ENOSYS: this kernel has no io_uring (CONFIG_IO_URING=n) or a seccomp filter hides io_uring_setup",
			ACCEL_URING_ENTRIES);
		break;
	default:
		accel_strfmt(why, why_len,
			"io_uring_queue_init(%d) failed with %s (%s)",
			ACCEL_URING_ENTRIES, accel_errno_name(err),
			strerror(err));
		break;
	}
}

static int wait_tagged_cqe(struct io_uring *ring, unsigned int timeout_ms)
{
	struct __kernel_timespec ts = {
		.tv_sec = timeout_ms / 1000,
		.tv_nsec = (long long)(timeout_ms % 1000) * 1000000,
	};
	struct io_uring_cqe *cqe;
	int ret, res;

	for (;;) {
		ret = io_uring_wait_cqe_timeout(ring, &cqe, &ts);
		if (ret < 0)
			return ret;
		res = cqe->res;
		if (cqe->user_data == ACCEL_URING_SYNC_TAG) {
			io_uring_cqe_seen(ring, cqe);
			return res;
		}
		io_uring_cqe_seen(ring, cqe);
	}
}

int accel_uring_cmd(struct io_uring *ring, int fd, uint32_t cmd_op,
		    const void *payload, size_t size, unsigned int timeout_ms)
{
	struct io_uring_sqe *sqe;
	int ret;

	if (size > ACCEL_URING_CMD_BYTES)
		return -EINVAL;
	sqe = io_uring_get_sqe(ring);
	if (!sqe)
		return -EBUSY;
	io_uring_prep_rw(IORING_OP_URING_CMD, sqe, fd, NULL, 0, 0);
	sqe->cmd_op = cmd_op;
	memset(sqe->cmd, 0, ACCEL_URING_CMD_BYTES);
	memcpy(sqe->cmd, payload, size);
	io_uring_sqe_set_data64(sqe, ACCEL_URING_SYNC_TAG);
	ret = io_uring_submit(ring);
	if (ret < 0)
		return ret;
	if (ret != 1)
		return -EAGAIN;
	return wait_tagged_cqe(ring, timeout_ms);
}

static void explain_nop(int err, char *why, size_t why_len)
{
	if (err == ETIME) {
		accel_strfmt(why, why_len,
			"the ACCEL_URING_CMD_NOP probe got no completion within %d ms",
			ACCEL_URING_PROBE_TIMEOUT_MS);
		return;
	}
	const char *hint = "";

	if (err == EINVAL)
		hint = ": this kernel's io_uring lacks IORING_OP_URING_CMD (it came in Linux 5.19), or the module rejected the NOP";
	else if (err == EOPNOTSUPP)
		hint = ": the device's driver does not implement uring_cmd";
	accel_strfmt(why, why_len,
		"the ACCEL_URING_CMD_NOP probe failed with %s (%s)%s",
		accel_errno_name(err), strerror(err), hint);
}

int accel_uring_setup(struct io_uring *ring, int fd, uint64_t features,
		      unsigned int *sqpoll_ms, char *why, size_t why_len)
{
	struct accel_nop nop = { .flags = 0, .result = 0, .cookie = 0 };
	unsigned int want = *sqpoll_ms;
	int ret;

	why[0] = '\0';
	*sqpoll_ms = 0; /* what the ring got: none until it is made polled */
	if (!(features & ACCEL_FEATURE_URING_CMD)) {
		accel_strfmt(why, why_len,
			     "the module does not announce ACCEL_FEATURE_URING_CMD");
		return -EOPNOTSUPP;
	}
	const char *env = secure_getenv(ACCEL_URING_ENV);

	if (env && strcmp(env, "0") == 0) {
		accel_strfmt(why, why_len, "turned off by %s=0", ACCEL_URING_ENV);
		return -ECANCELED;
	}
	/*
	 * Big CQEs carry the release order; big SQEs carry a whole job
	 * (ACCEL_URING_CMD_JOB_SUBMIT_INLINE), so the module copies nothing
	 * from this process's memory to take it.
	 */
	struct io_uring_params p = {
		.flags = (features & ACCEL_FEATURE_URING_SEQ ? IORING_SETUP_CQE32 : 0) |
			 (features & ACCEL_FEATURE_URING_INLINE_JOB ? IORING_SETUP_SQE128 : 0),
	};

	/*
	 * With polling, a kernel thread takes the SQEs: submitting is a
	 * store to the ring, no system call while the thread is awake.
	 */
	if (want) {
		p.flags |= IORING_SETUP_SQPOLL;
		p.sq_thread_idle = want;
	}
	ret = io_uring_queue_init_params(ACCEL_URING_ENTRIES, ring, &p);
	if (ret < 0 && want) {
		char sq_why[128];

		accel_uring_explain_init(-ret, sq_why, sizeof(sq_why));
		p.flags &= ~IORING_SETUP_SQPOLL;
		p.sq_thread_idle = 0;
		ret = io_uring_queue_init_params(ACCEL_URING_ENTRIES, ring, &p);
		if (ret == 0)
			accel_strfmt(why, why_len,
				     "%s was refused (%s), so submissions enter the ring themselves",
				     ACCEL_URING_SQPOLL_ENV, sq_why);
	}
	if (ret < 0) {
		accel_uring_explain_init(-ret, why, why_len);
		return ret;
	}
	ret = accel_uring_cmd(ring, fd, ACCEL_URING_CMD_NOP, &nop, sizeof(nop),
			      ACCEL_URING_PROBE_TIMEOUT_MS);
	if (ret < 0) {
		explain_nop(-ret, why, why_len);
		io_uring_queue_exit(ring);
		return ret;
	}
	if (p.flags & IORING_SETUP_SQPOLL)
		*sqpoll_ms = want;
	return 0;
}
