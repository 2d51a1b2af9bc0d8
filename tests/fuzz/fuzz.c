// SPDX-License-Identifier: MIT
/*
 * accel-fuzz: a structure-aware, stateful fuzzer of /dev/accelsched's ABI.
 *
 * Every ioctl and every uring_cmd of uapi/accelsched.h is an entry of one
 * table (ops[] below), with the fields of its struct and what each field is
 * (flags, padding, an output, a handle, a value, a pointer, a count, an fd).
 * A call is built valid from what the fuzzer holds (syncobj handles and their
 * last seen value, queues, released jobs, exported syncobj fds, sync_files,
 * eventfds, io_uring rings of 64- or 128-byte SQEs), then most often left
 * alone, else mutated once: a field set to an edge value (0, 1, 2^31±1,
 * 2^32±1, 2^63±1, 2^64-1, its valid value ±1), the pointer made NULL,
 * unmapped, read-only or crossing into an unmapped page, the size bits of
 * the ioctl number moved around the struct's size, the direction or number
 * bits changed, or the whole struct random. A few meta operations close
 * fds, reopen the device, set up and tear down rings with commands pending,
 * and poll.
 *
 * Several worker processes (--procs) each run several threads (--threads)
 * on shared device fds; a supervisor SIGKILLs a random worker every second
 * or two and starts another one, and a thread in each worker interrupts the
 * others' blocking calls with a signal. Executors complete released jobs
 * with random statuses and device times, fail them, or never complete them
 * (the job's timeout then fails them).
 *
 * Oracles (a subset of calls whose answer the ABI fixes): no -EFAULT when
 * every pointer was valid; -EINVAL for unknown flags or non-zero padding,
 * reserved or output fields; -EFAULT for a bad struct pointer; -ENOTTY for
 * a foreign ioctl number or wrong direction bits; -E2BIG for non-zero bytes
 * past the struct; a failure for calls the ABI says must fail (signalling
 * point 0, an error out of range, counts out of range); a NOP's exact
 * result; and never a kernel-internal errno (512..530) in userspace.
 *
 * Output: "seed: N" first, then one KTAP document with five results (no
 * oracle violation, no hang, all children reaped, the device still works,
 * the kernel log stays clean), per-op call counts and errno histograms, and
 * the total calls and calls/s. Exit status 0 pass, 1 fail (kselftest codes).
 *
 *   accel-fuzz [--seed N] [--seconds S] [--threads T] [--procs P]
 *              [--skip op,op] [--only op,op] [--no-kill] [--metric] [--list]
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <liburing.h>

#include "accelsched.h"
#include "splats.h"

#define PAGE 4096

/* ------------------------------------------------------------------ */
/* Randomness: one xorshift state per thread, derived from the seed.   */

struct rng {
	uint64_t s;
};

static uint64_t splitmix(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t r64(struct rng *r)
{
	return splitmix(&r->s);
}

/* A number in [0, n). */
static uint32_t rn(struct rng *r, uint32_t n)
{
	return n ? (uint32_t)(r64(r) % n) : 0;
}

static bool one_in(struct rng *r, uint32_t n)
{
	return rn(r, n) == 0;
}

static const uint64_t edges[] = {
	0, 1, 2, 3, 63, 64, 65, 255, 256, 257, 1023, 1024, 1025, 4095, 4096,
	10000, 10001, 65536, 65537,
	0x7ffffffeULL, 0x7fffffffULL, 0x80000000ULL, 0x80000001ULL,
	0xfffffffeULL, 0xffffffffULL, 0x100000000ULL, 0x100000001ULL,
	0x7ffffffffffffffeULL, 0x7fffffffffffffffULL, 0x8000000000000000ULL,
	0x8000000000000001ULL, 0xfffffffffffffffeULL, 0xffffffffffffffffULL,
	(uint64_t)-4095, (uint64_t)-4096, (uint64_t)-1,
};

/* An edge value near @cur, or a fixed edge, or random bits. */
static uint64_t edge(struct rng *r, uint64_t cur)
{
	switch (rn(r, 6)) {
	case 0: return cur + 1;
	case 1: return cur - 1;
	case 2: return r64(r);
	default: return edges[rn(r, sizeof(edges) / sizeof(edges[0]))];
	}
}

/* ------------------------------------------------------------------ */
/* The op table.                                                        */

enum fkind {
	FK_FLAGS,  /* bits outside the op's known mask: -EINVAL */
	FK_ZERO,   /* padding, reserved, or an output: non-zero is -EINVAL */
	FK_HANDLE, /* a handle or a job id */
	FK_VAL,    /* a value (point, deadline, status, ...) */
	FK_PTR,    /* a user pointer */
	FK_COUNT,  /* an element count of a pointer */
	FK_FD,     /* an fd */
	FK_BYTES,  /* a character array (the engine name) */
};

struct field {
	const char *name;
	uint16_t off, size;
	uint8_t kind;
};

#define FLD(s, m, k) { #m, offsetof(struct s, m), sizeof(((struct s *)0)->m), k }

enum op {
	OP_INFO, OP_NOP, OP_SO_CREATE, OP_SO_DESTROY, OP_SO_QUERY,
	OP_SO_SIGNAL, OP_SO_FAIL, OP_SO_WAIT, OP_SO_EXPORT, OP_SO_IMPORT,
	OP_SO_EXPORT_SF, OP_SO_IMPORT_SF, OP_SO_EVENTFD, OP_SO_CANCEL,
	OP_SO_SET_DEADLINE, OP_Q_CREATE, OP_Q_DESTROY, OP_JOB_SUBMIT, OP_JOB_COMPLETE, OP_JOB_FETCH,
	OP_JOB_COMPLETE_FETCH,
	OP_U_NOP, OP_U_SIGNAL, OP_U_WAIT, OP_U_SUBMIT, OP_U_SUBMIT_INLINE,
	OP_U_COMPLETE, OP_RAW_IOCTL, OP_RAW_URING, OP_RING_SETUP, OP_RING_EXIT, OP_CLOSE_FD,
	OP_REOPEN_DEV, OP_POLL,
	NOPS
};

enum okind { K_IOCTL, K_URING, K_META };

struct opdesc {
	const char *name;
	enum okind kind;
	unsigned int cmd;      /* ioctl number or cmd_op */
	unsigned int size;     /* the struct (or payload) size */
	uint64_t flags_known;  /* the FK_FLAGS field's valid bits */
	int weight;
	const struct field *f;
	int nf;
};

static const struct field f_info[] = {
	FLD(accel_info, abi_major, FK_ZERO), FLD(accel_info, features, FK_ZERO),
	FLD(accel_info, reserved, FK_ZERO),
};
static const struct field f_nop[] = {
	FLD(accel_nop, flags, FK_FLAGS), FLD(accel_nop, result, FK_VAL),
	FLD(accel_nop, cookie, FK_VAL),
};
static const struct field f_create[] = {
	FLD(accel_syncobj_create, initial, FK_VAL),
	FLD(accel_syncobj_create, flags, FK_FLAGS),
	FLD(accel_syncobj_create, handle, FK_ZERO),
};
static const struct field f_destroy[] = {
	FLD(accel_syncobj_destroy, handle, FK_HANDLE),
	FLD(accel_syncobj_destroy, pad, FK_ZERO),
};
static const struct field f_query[] = {
	FLD(accel_syncobj_query, handle, FK_HANDLE),
	FLD(accel_syncobj_query, flags, FK_FLAGS),
	FLD(accel_syncobj_query, value, FK_ZERO),
	FLD(accel_syncobj_query, submitted, FK_ZERO),
	FLD(accel_syncobj_query, error, FK_ZERO),
	FLD(accel_syncobj_query, pad, FK_ZERO),
};
static const struct field f_signal[] = {
	FLD(accel_syncobj_signal, handle, FK_HANDLE),
	FLD(accel_syncobj_signal, flags, FK_FLAGS),
	FLD(accel_syncobj_signal, value, FK_VAL),
};
static const struct field f_fail[] = {
	FLD(accel_syncobj_fail, handle, FK_HANDLE),
	FLD(accel_syncobj_fail, error, FK_VAL),
};
static const struct field f_wait[] = {
	FLD(accel_syncobj_wait, handles, FK_PTR),
	FLD(accel_syncobj_wait, points, FK_PTR),
	FLD(accel_syncobj_wait, deadline, FK_VAL),
	FLD(accel_syncobj_wait, count, FK_COUNT),
	FLD(accel_syncobj_wait, flags, FK_FLAGS),
	FLD(accel_syncobj_wait, index, FK_ZERO),
	FLD(accel_syncobj_wait, pad, FK_ZERO),
};
static const struct field f_export[] = {
	FLD(accel_syncobj_handle_fd, handle, FK_HANDLE),
	FLD(accel_syncobj_handle_fd, flags, FK_FLAGS),
	FLD(accel_syncobj_handle_fd, fd, FK_ZERO),
	FLD(accel_syncobj_handle_fd, pad, FK_ZERO),
};
static const struct field f_import[] = {
	FLD(accel_syncobj_handle_fd, handle, FK_ZERO),
	FLD(accel_syncobj_handle_fd, flags, FK_FLAGS),
	FLD(accel_syncobj_handle_fd, fd, FK_FD),
	FLD(accel_syncobj_handle_fd, pad, FK_ZERO),
};
static const struct field f_export_sf[] = {
	FLD(accel_syncobj_sync_file, handle, FK_HANDLE),
	FLD(accel_syncobj_sync_file, flags, FK_FLAGS),
	FLD(accel_syncobj_sync_file, point, FK_VAL),
	FLD(accel_syncobj_sync_file, fd, FK_ZERO),
	FLD(accel_syncobj_sync_file, pad, FK_ZERO),
};
static const struct field f_import_sf[] = {
	FLD(accel_syncobj_sync_file, handle, FK_HANDLE),
	FLD(accel_syncobj_sync_file, flags, FK_FLAGS),
	FLD(accel_syncobj_sync_file, point, FK_VAL),
	FLD(accel_syncobj_sync_file, fd, FK_FD),
	FLD(accel_syncobj_sync_file, pad, FK_ZERO),
};
static const struct field f_eventfd[] = {
	FLD(accel_syncobj_eventfd, handle, FK_HANDLE),
	FLD(accel_syncobj_eventfd, flags, FK_FLAGS),
	FLD(accel_syncobj_eventfd, point, FK_VAL),
	FLD(accel_syncobj_eventfd, fd, FK_FD),
	FLD(accel_syncobj_eventfd, pad, FK_ZERO),
};
static const struct field f_cancel[] = {
	FLD(accel_syncobj_cancel, handle, FK_HANDLE),
	FLD(accel_syncobj_cancel, flags, FK_FLAGS),
	FLD(accel_syncobj_cancel, point, FK_VAL),
	FLD(accel_syncobj_cancel, cancelled, FK_ZERO),
	FLD(accel_syncobj_cancel, pad, FK_ZERO),
};
static const struct field f_setdl[] = {
	FLD(accel_syncobj_deadline, handle, FK_HANDLE),
	FLD(accel_syncobj_deadline, flags, FK_FLAGS),
	FLD(accel_syncobj_deadline, point, FK_VAL),
	FLD(accel_syncobj_deadline, deadline_ns, FK_VAL),
};
static const struct field f_qcreate[] = {
	FLD(accel_queue_create, engine, FK_BYTES),
	FLD(accel_queue_create, priority, FK_VAL),
	FLD(accel_queue_create, weight, FK_VAL),
	FLD(accel_queue_create, credits, FK_VAL),
	FLD(accel_queue_create, flags, FK_FLAGS),
	FLD(accel_queue_create, handle, FK_ZERO),
	FLD(accel_queue_create, pad, FK_ZERO),
};
static const struct field f_qdestroy[] = {
	FLD(accel_queue_destroy, handle, FK_HANDLE),
	FLD(accel_queue_destroy, pad, FK_ZERO),
};
static const struct field f_submit[] = {
	FLD(accel_job_submit, jobs, FK_PTR),
	FLD(accel_job_submit, count, FK_COUNT),
	FLD(accel_job_submit, flags, FK_FLAGS),
	FLD(accel_job_submit, submitted, FK_ZERO),
	FLD(accel_job_submit, pad, FK_ZERO),
};
static const struct field f_complete[] = {
	FLD(accel_job_complete, id, FK_HANDLE),
	FLD(accel_job_complete, status, FK_VAL),
	FLD(accel_job_complete, device_ns, FK_VAL),
};
static const struct field f_fetch[] = {
	FLD(accel_job_fetch, events, FK_PTR),
	FLD(accel_job_fetch, max, FK_COUNT),
	FLD(accel_job_fetch, count, FK_ZERO),
	FLD(accel_job_fetch, flags, FK_FLAGS),
	FLD(accel_job_fetch, pad, FK_ZERO),
};
static const struct field f_cfetch[] = {
	FLD(accel_job_complete_fetch, id, FK_HANDLE),
	FLD(accel_job_complete_fetch, status, FK_VAL),
	FLD(accel_job_complete_fetch, device_ns, FK_VAL),
	FLD(accel_job_complete_fetch, events, FK_PTR),
	FLD(accel_job_complete_fetch, max, FK_COUNT),
	FLD(accel_job_complete_fetch, count, FK_ZERO),
	FLD(accel_job_complete_fetch, result, FK_ZERO),
	FLD(accel_job_complete_fetch, passed, FK_ZERO),
	FLD(accel_job_complete_fetch, flags, FK_FLAGS),
};
static const struct field f_uwait[] = {
	FLD(accel_uring_wait, point, FK_VAL),
	FLD(accel_uring_wait, handle, FK_HANDLE),
	FLD(accel_uring_wait, flags, FK_FLAGS),
};
static const struct field f_usubmit[] = {
	FLD(accel_uring_submit, job, FK_PTR),
	FLD(accel_uring_submit, reserved, FK_ZERO),
};
/* The whole job in an SQE128's command: no pointer, so never -EFAULT. */
#define FLDP(i, m, k) { "points[" #i "]." #m, \
	offsetof(struct accel_uring_job, points) + (i) * sizeof(struct accel_point) + \
	offsetof(struct accel_point, m), sizeof(((struct accel_point *)0)->m), k }
static const struct field f_uinline[] = {
	FLD(accel_uring_job, user_data, FK_VAL),
	FLD(accel_uring_job, timeout_ns, FK_VAL),
	FLD(accel_uring_job, queue, FK_HANDLE),
	FLD(accel_uring_job, nwaits, FK_VAL),
	FLD(accel_uring_job, nsignals, FK_VAL),
	FLD(accel_uring_job, flags, FK_FLAGS),
	FLDP(0, handle, FK_HANDLE), FLDP(0, flags, FK_VAL), FLDP(0, point, FK_VAL),
	FLDP(1, handle, FK_HANDLE), FLDP(1, flags, FK_VAL), FLDP(1, point, FK_VAL),
	FLDP(2, handle, FK_HANDLE), FLDP(2, flags, FK_VAL), FLDP(2, point, FK_VAL),
	FLD(accel_uring_job, predicted_us, FK_VAL),
	FLD(accel_uring_job, pad, FK_VAL), /* not read */
};
/* The nested job of JOB_SUBMIT and the uring SUBMIT (no oracle on these). */
static const struct field f_job[] = {
	FLD(accel_job, user_data, FK_VAL), FLD(accel_job, waits, FK_PTR),
	FLD(accel_job, signals, FK_PTR), FLD(accel_job, timeout_ns, FK_VAL),
	FLD(accel_job, nwaits, FK_COUNT), FLD(accel_job, nsignals, FK_COUNT),
	FLD(accel_job, queue, FK_HANDLE), FLD(accel_job, flags, FK_FLAGS),
	FLD(accel_job, id, FK_ZERO), FLD(accel_job, predicted_us, FK_VAL),
};

#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))
#define IOP(n, c, s, fk, w, f) { n, K_IOCTL, c, sizeof(struct s), fk, w, f, N(f) }
#define UOP(n, c, s, fk, w, f) { n, K_URING, c, sizeof(struct s), fk, w, f, N(f) }
#define MOP(n, w) { n, K_META, 0, 0, 0, w, NULL, 0 }

static const struct opdesc ops[NOPS] = {
	[OP_INFO] = IOP("info", ACCEL_IOCTL_INFO, accel_info, 0, 2, f_info),
	[OP_NOP] = IOP("nop", ACCEL_IOCTL_NOP, accel_nop, ACCEL_NOP_FLAGS_ALL, 4, f_nop),
	[OP_SO_CREATE] = IOP("syncobj_create", ACCEL_IOCTL_SYNCOBJ_CREATE, accel_syncobj_create, 0, 8, f_create),
	[OP_SO_DESTROY] = IOP("syncobj_destroy", ACCEL_IOCTL_SYNCOBJ_DESTROY, accel_syncobj_destroy, 0, 4, f_destroy),
	[OP_SO_QUERY] = IOP("syncobj_query", ACCEL_IOCTL_SYNCOBJ_QUERY, accel_syncobj_query, 0, 8, f_query),
	[OP_SO_SIGNAL] = IOP("syncobj_signal", ACCEL_IOCTL_SYNCOBJ_SIGNAL, accel_syncobj_signal, 0, 10, f_signal),
	[OP_SO_FAIL] = IOP("syncobj_fail", ACCEL_IOCTL_SYNCOBJ_FAIL, accel_syncobj_fail, 0, 3, f_fail),
	[OP_SO_WAIT] = IOP("syncobj_wait", ACCEL_IOCTL_SYNCOBJ_WAIT, accel_syncobj_wait, ACCEL_WAIT_FLAGS_ALL, 8, f_wait),
	[OP_SO_EXPORT] = IOP("syncobj_export", ACCEL_IOCTL_SYNCOBJ_EXPORT, accel_syncobj_handle_fd, 0, 3, f_export),
	[OP_SO_IMPORT] = IOP("syncobj_import", ACCEL_IOCTL_SYNCOBJ_IMPORT, accel_syncobj_handle_fd, 0, 3, f_import),
	[OP_SO_EXPORT_SF] = IOP("syncobj_export_sync_file", ACCEL_IOCTL_SYNCOBJ_EXPORT_SYNC_FILE, accel_syncobj_sync_file, 0, 4, f_export_sf),
	[OP_SO_IMPORT_SF] = IOP("syncobj_import_sync_file", ACCEL_IOCTL_SYNCOBJ_IMPORT_SYNC_FILE, accel_syncobj_sync_file, 0, 3, f_import_sf),
	[OP_SO_EVENTFD] = IOP("syncobj_eventfd", ACCEL_IOCTL_SYNCOBJ_EVENTFD, accel_syncobj_eventfd, ACCEL_WAIT_SUBMITTED, 4, f_eventfd),
	[OP_SO_CANCEL] = IOP("syncobj_cancel", ACCEL_IOCTL_SYNCOBJ_CANCEL, accel_syncobj_cancel, 0, 3, f_cancel),
	[OP_SO_SET_DEADLINE] = IOP("syncobj_set_deadline", ACCEL_IOCTL_SYNCOBJ_SET_DEADLINE, accel_syncobj_deadline, 0, 3, f_setdl),
	[OP_Q_CREATE] = IOP("queue_create", ACCEL_IOCTL_QUEUE_CREATE, accel_queue_create, 0, 3, f_qcreate),
	[OP_Q_DESTROY] = IOP("queue_destroy", ACCEL_IOCTL_QUEUE_DESTROY, accel_queue_destroy, 0, 1, f_qdestroy),
	[OP_JOB_SUBMIT] = IOP("job_submit", ACCEL_IOCTL_JOB_SUBMIT, accel_job_submit, 0, 10, f_submit),
	[OP_JOB_COMPLETE] = IOP("job_complete", ACCEL_IOCTL_JOB_COMPLETE, accel_job_complete, 0, 8, f_complete),
	[OP_JOB_FETCH] = IOP("job_fetch", ACCEL_IOCTL_JOB_FETCH, accel_job_fetch, 0, 8, f_fetch),
	[OP_JOB_COMPLETE_FETCH] = IOP("job_complete_fetch", ACCEL_IOCTL_JOB_COMPLETE_FETCH,
				      accel_job_complete_fetch, 0, 8, f_cfetch),
	[OP_U_NOP] = UOP("uring_nop", ACCEL_URING_CMD_NOP, accel_nop, ACCEL_NOP_FLAGS_ALL, 3, f_nop),
	[OP_U_SIGNAL] = UOP("uring_signal", ACCEL_URING_CMD_SYNCOBJ_SIGNAL, accel_syncobj_signal, 0, 6, f_signal),
	[OP_U_WAIT] = UOP("uring_wait", ACCEL_URING_CMD_SYNCOBJ_WAIT, accel_uring_wait, ACCEL_WAIT_SUBMITTED, 6, f_uwait),
	[OP_U_SUBMIT] = UOP("uring_submit", ACCEL_URING_CMD_JOB_SUBMIT, accel_uring_submit, 0, 8, f_usubmit),
	[OP_U_SUBMIT_INLINE] = UOP("uring_submit_inline", ACCEL_URING_CMD_JOB_SUBMIT_INLINE,
				   accel_uring_job, ACCEL_URING_JOB_FLAGS_ALL, 8, f_uinline),
	[OP_U_COMPLETE] = UOP("uring_complete", ACCEL_URING_CMD_JOB_COMPLETE, accel_job_complete, 0, 6, f_complete),
	[OP_RAW_IOCTL] = MOP("raw_ioctl", 2),
	[OP_RAW_URING] = MOP("raw_uring", 1),
	[OP_RING_SETUP] = MOP("ring_setup", 2),
	[OP_RING_EXIT] = MOP("ring_exit", 1),
	[OP_CLOSE_FD] = MOP("close_fd", 2),
	[OP_REOPEN_DEV] = MOP("reopen_dev", 1),
	[OP_POLL] = MOP("poll", 2),
};

static bool op_enabled[NOPS];

/* ------------------------------------------------------------------ */
/* Shared statistics: one mapping, written by every process.            */

#define NERR 600 /* histogram: 0 success, 1..598 errno, 599 anything else */
#define NVIOL_MSG 24

struct shared {
	uint64_t calls[NOPS];
	uint64_t hist[NOPS][NERR];
	uint64_t total;
	uint64_t violations;
	uint32_t nmsg;
	char msg[NVIOL_MSG][256];
	uint64_t workers_started, workers_killed, worker_failures;
};

static struct shared *sh;

static void viol(const char *fmt, ...)
{
	uint64_t n = __atomic_fetch_add(&sh->violations, 1, __ATOMIC_RELAXED);
	va_list ap;

	if (n >= NVIOL_MSG)
		return;
	va_start(ap, fmt);
	vsnprintf(sh->msg[n], sizeof(sh->msg[n]), fmt, ap);
	va_end(ap);
}

static void count_call(int op)
{
	__atomic_fetch_add(&sh->calls[op], 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&sh->total, 1, __ATOMIC_RELAXED);
}

static void count_result(int op, int err)
{
	int i = err < 0 || err >= NERR - 1 ? NERR - 1 : err;

	__atomic_fetch_add(&sh->hist[op][i], 1, __ATOMIC_RELAXED);
}

/* ------------------------------------------------------------------ */
/* Expectations and their judge.                                        */

enum exp {
	EXP_ANY,     /* only: no kernel-internal errno */
	EXP_NOFAULT, /* every pointer valid: no -EFAULT */
	EXP_EINVAL,
	EXP_FAIL,    /* any error, not success */
	EXP_EFAULT,
	EXP_ENOTTY,
	EXP_E2BIG,
	EXP_EQ,      /* exactly this errno (0: success) */
};

static const char *const exp_names[] = {
	"anything", "no EFAULT", "EINVAL", "a failure", "EFAULT", "ENOTTY",
	"E2BIG", "exactly",
};

static const char *ename(int err)
{
	static __thread char num[16];
	const char *s = err ? strerrorname_np(err) : "0";

	if (s)
		return s;
	snprintf(num, sizeof(num), "E%d", err);
	return num;
}

/*
 * The errno classes of the ops whose errors are the module's own (no error
 * the fuzzer failed a syncobj or a job with can come back from them): the
 * common ones, and a few per op. Anything else is a violation.
 */
static const int common_errnos[] = {
	EINVAL, ENOENT, EFAULT, E2BIG, ENOTTY, EBADF, ENOMEM, EMFILE, ENFILE,
	ENOSPC, EINTR, EAGAIN,
};

static const int class_extra[NOPS][4] = {
	[OP_Q_CREATE] = { EEXIST, EPERM, EBUSY },
	[OP_JOB_SUBMIT] = { EBUSY, ETIME },
	[OP_SO_SET_DEADLINE] = { ETIME },
	[OP_JOB_COMPLETE] = { ETIMEDOUT, EALREADY, ECANCELED },
	[OP_U_COMPLETE] = { ETIMEDOUT, EALREADY, ECANCELED },
};

static const bool class_checked[NOPS] = {
	[OP_INFO] = true, [OP_SO_CREATE] = true, [OP_SO_DESTROY] = true,
	[OP_SO_QUERY] = true, [OP_SO_FAIL] = true, [OP_SO_EXPORT] = true,
	[OP_SO_IMPORT] = true, [OP_SO_EXPORT_SF] = true,
	[OP_SO_EVENTFD] = true, [OP_SO_CANCEL] = true, [OP_Q_CREATE] = true,
	[OP_SO_SET_DEADLINE] = true,
	[OP_Q_DESTROY] = true, [OP_JOB_SUBMIT] = true,
	[OP_JOB_COMPLETE] = true, [OP_JOB_FETCH] = true,
	[OP_JOB_COMPLETE_FETCH] = true, [OP_U_COMPLETE] = true,
};

static bool errno_in_class(int op, int err)
{
	for (size_t i = 0; i < sizeof(common_errnos) / sizeof(common_errnos[0]); i++)
		if (err == common_errnos[i])
			return true;
	for (int i = 0; i < 4; i++)
		if (class_extra[op][i] == err)
			return true;
	return false;
}

/*
 * Judge one result (@err: 0 or a positive errno). A concurrently closed fd
 * whose number went to another file answers EBADF, ENOTTY (ioctl) or
 * EOPNOTSUPP (uring_cmd): those never count against an expectation.
 */
static void judge(int op, int exp, int expv, int err, const char *what)
{
	bool bad = false;

	count_result(op, err);
	/* A NOP returns what it was asked to: any value is its own. */
	if (err >= 512 && err <= 530 && exp != EXP_EQ) {
		viol("%s (%s): kernel-internal errno %d reached userspace",
		     ops[op].name, what, err);
		return;
	}
	if (err == EBADF || err == EOPNOTSUPP ||
	    (err == ENOTTY && exp != EXP_ENOTTY))
		return;
	if (err && class_checked[op] && !errno_in_class(op, err)) {
		viol("%s (%s): errno %s is of no class this op returns",
		     ops[op].name, what, ename(err));
		return;
	}
	switch (exp) {
	case EXP_NOFAULT: bad = err == EFAULT; break;
	case EXP_EINVAL: bad = err != EINVAL; break;
	case EXP_FAIL: bad = err == 0; break;
	case EXP_EFAULT: bad = err != EFAULT; break;
	case EXP_ENOTTY: bad = err != ENOTTY; break;
	case EXP_E2BIG: bad = err != E2BIG; break;
	case EXP_EQ: bad = err != expv; break;
	default: break;
	}
	if (bad)
		viol("%s (%s): expected %s%s%s, got %s", ops[op].name, what,
		     exp_names[exp], exp == EXP_EQ ? " " : "",
		     exp == EXP_EQ ? ename(expv) : "", ename(err));
}

/* ------------------------------------------------------------------ */
/* Per-process state, shared by a worker's threads.                     */

#define NDEV 3
#define NSO 48
#define NQ 12
#define NREL 256
#define NFD 40

enum fdkind { FD_SYNCOBJ, FD_SYNC_FILE, FD_EVENTFD };

struct so_ent { int used, dev; uint32_t gen, handle; uint64_t val; };
struct q_ent { int used, dev; uint32_t gen, handle; };
struct rel_ent { int used, dev; uint32_t gen, id; };
struct fd_ent { int used, fd, kind; };

struct proc_state {
	pthread_mutex_t lock;
	int devfd[NDEV];
	uint32_t devgen[NDEV];
	struct so_ent so[NSO];
	struct q_ent q[NQ];
	struct rel_ent rel[NREL];
	struct fd_ent fds[NFD];
	volatile int stop;
};

static struct proc_state ps = { .lock = PTHREAD_MUTEX_INITIALIZER };

static const char *const engines[] = { "fz-a", "fz-b", "cpu", "fz.c:0" };

static int dev_open(void)
{
	return open("/dev/" ACCEL_DEVICE_NAME, O_RDWR | O_CLOEXEC);
}

/* A device slot and its fd now (the fd may be closed under the caller). */
static int pick_dev(struct rng *r, int *fd, uint32_t *gen)
{
	int d = rn(r, NDEV);

	pthread_mutex_lock(&ps.lock);
	*fd = ps.devfd[d];
	*gen = ps.devgen[d];
	pthread_mutex_unlock(&ps.lock);
	return d;
}

static int devfd_of(int d)
{
	return __atomic_load_n(&ps.devfd[d], __ATOMIC_RELAXED);
}

/* A syncobj of device slot @d (or any, for a stale handle now and then). */
static bool pick_so(struct rng *r, int d, struct so_ent *out)
{
	int start = rn(r, NSO), any = one_in(r, 16);

	pthread_mutex_lock(&ps.lock);
	for (int i = 0; i < NSO; i++) {
		struct so_ent *e = &ps.so[(start + i) % NSO];

		if (e->used && (any || (e->dev == d && e->gen == ps.devgen[d]))) {
			*out = *e;
			pthread_mutex_unlock(&ps.lock);
			return true;
		}
	}
	pthread_mutex_unlock(&ps.lock);
	return false;
}

static void so_add(int d, uint32_t gen, uint32_t handle, uint64_t val)
{
	pthread_mutex_lock(&ps.lock);
	for (int i = 0; i < NSO; i++) {
		if (!ps.so[i].used) {
			ps.so[i] = (struct so_ent){ 1, d, gen, handle, val };
			break;
		}
	}
	pthread_mutex_unlock(&ps.lock);
}

static void so_forget(int d, uint32_t handle)
{
	pthread_mutex_lock(&ps.lock);
	for (int i = 0; i < NSO; i++)
		if (ps.so[i].used && ps.so[i].dev == d && ps.so[i].handle == handle)
			ps.so[i].used = 0;
	pthread_mutex_unlock(&ps.lock);
}

static void so_saw(int d, uint32_t handle, uint64_t val)
{
	pthread_mutex_lock(&ps.lock);
	for (int i = 0; i < NSO; i++)
		if (ps.so[i].used && ps.so[i].dev == d &&
		    ps.so[i].handle == handle && ps.so[i].val < val)
			ps.so[i].val = val;
	pthread_mutex_unlock(&ps.lock);
}

static int so_count(void)
{
	int n = 0;

	for (int i = 0; i < NSO; i++)
		n += ps.so[i].used;
	return n;
}

static bool pick_q(struct rng *r, int d, struct q_ent *out)
{
	int start = rn(r, NQ);

	pthread_mutex_lock(&ps.lock);
	for (int i = 0; i < NQ; i++) {
		struct q_ent *e = &ps.q[(start + i) % NQ];

		if (e->used && e->dev == d && e->gen == ps.devgen[d]) {
			*out = *e;
			pthread_mutex_unlock(&ps.lock);
			return true;
		}
	}
	pthread_mutex_unlock(&ps.lock);
	return false;
}

static void q_add(int d, uint32_t gen, uint32_t handle)
{
	pthread_mutex_lock(&ps.lock);
	for (int i = 0; i < NQ; i++) {
		if (!ps.q[i].used) {
			ps.q[i] = (struct q_ent){ 1, d, gen, handle };
			break;
		}
	}
	pthread_mutex_unlock(&ps.lock);
}

static void rel_add(int d, uint32_t gen, uint32_t id)
{
	pthread_mutex_lock(&ps.lock);
	for (int i = 0; i < NREL; i++) {
		if (!ps.rel[i].used) {
			ps.rel[i] = (struct rel_ent){ 1, d, gen, id };
			break;
		}
	}
	pthread_mutex_unlock(&ps.lock);
}

/* Take a released job to complete (removed from the table). */
static bool rel_take(struct rng *r, struct rel_ent *out)
{
	int start = rn(r, NREL);

	pthread_mutex_lock(&ps.lock);
	for (int i = 0; i < NREL; i++) {
		struct rel_ent *e = &ps.rel[(start + i) % NREL];

		if (e->used) {
			*out = *e;
			e->used = 0;
			pthread_mutex_unlock(&ps.lock);
			return true;
		}
	}
	pthread_mutex_unlock(&ps.lock);
	return false;
}

/* Remember @fd; when the table is full, close a random one to make room. */
static void fd_add(struct rng *r, int fd, int kind)
{
	int victim = -1;

	pthread_mutex_lock(&ps.lock);
	for (int i = 0; i < NFD; i++) {
		if (!ps.fds[i].used) {
			ps.fds[i] = (struct fd_ent){ 1, fd, kind };
			fd = -1;
			break;
		}
	}
	if (fd >= 0) {
		int i = rn(r, NFD);

		victim = ps.fds[i].fd;
		ps.fds[i] = (struct fd_ent){ 1, fd, kind };
	}
	pthread_mutex_unlock(&ps.lock);
	if (victim >= 0)
		close(victim);
}

/* An fd of @kind (-1: any kind); -1 if there is none. */
static int pick_fd(struct rng *r, int kind)
{
	int start = rn(r, NFD), fd = -1;

	pthread_mutex_lock(&ps.lock);
	for (int i = 0; i < NFD; i++) {
		struct fd_ent *e = &ps.fds[(start + i) % NFD];

		if (e->used && (kind < 0 || e->kind == kind)) {
			fd = e->fd;
			break;
		}
	}
	pthread_mutex_unlock(&ps.lock);
	return fd;
}

/* ------------------------------------------------------------------ */
/* Per-thread state: memory to point at, and io_uring rings.            */

#define NRING 2
#define NSLOT 32
#define RING_ENTRIES 32

struct jslot {
	int used;
	struct accel_job job;
	struct accel_point pts[8]; /* waits 0..3, signals 4..7 */
};

struct ring {
	int live, cqe32, sqe128, pending;
	struct io_uring r;
	struct jslot slot[NSLOT];
};

/*
 * The arena: pages 0-3 hold the struct (zero past it, so a larger size
 * in the ioctl number reads zeroes), 4-5 the arrays it points to, 6 is
 * PROT_NONE, 7 is read-only.
 */
#define A_STRUCT 0
#define A_ARRAYS (4 * PAGE)
#define A_NONE (6 * PAGE)
#define A_RO (7 * PAGE)
#define A_SIZE (8 * PAGE)

struct thr {
	struct rng r;
	int idx;
	pthread_t tid;
	unsigned char *arena;
	struct ring ring[NRING];
	struct accel_job_event ev[ACCEL_JOB_SUBMIT_MAX];
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* A status for COMPLETE/FAIL: mostly 0, errors, and a few invalid ones. */
static int32_t pick_status(struct rng *r, bool allow_zero)
{
	static const int32_t errs[] = { -EIO, -ENODEV, -EPIPE, -ENOEXEC,
					-4095, -1, -ETIMEDOUT, -ECANCELED };
	int32_t e;

	if (allow_zero && !one_in(r, 3))
		return 0;
	if (one_in(r, 3)) {
		do
			e = -(int32_t)(1 + rn(r, ACCEL_MAX_ERRNO));
		while ((e <= -512 && e >= -530) || e == -EFAULT);
		return e;
	}
	return errs[rn(r, N(errs))];
}

/* A job's timeout: the module's default (0), or 1 ms to 1 s. */
static const uint64_t job_timeouts[] = { 0, 1000000, 5000000, 20000000,
					 200000000, 1000000000 };

/* Build a valid job into @j (arrays at @w/@s) on device slot @d. */
static bool build_job(struct thr *t, int d, struct accel_job *j,
		      struct accel_point *w, struct accel_point *s)
{
	struct q_ent q = { 0 };
	struct so_ent e;
	uint32_t nw = rn(&t->r, 4), ns = rn(&t->r, 3);

	memset(j, 0, sizeof(*j));
	if (!pick_q(&t->r, d, &q))
		q.handle = 1 + rn(&t->r, 4);
	j->queue = q.handle;
	j->user_data = r64(&t->r);
	j->timeout_ns = job_timeouts[rn(&t->r, N(job_timeouts))];
	/*
	 * Outcomes as events, half the time (ABI 1.8), a third of those
	 * with the release answered by the SUBMIT (ABI 1.9); now and then
	 * an answer asked without events, which is refused.
	 */
	if (one_in(&t->r, 2))
		j->flags = ACCEL_JOB_F_EVENTS;
	if (one_in(&t->r, j->flags ? 3 : 16))
		j->flags |= ACCEL_JOB_F_ANSWER;
	/* A prediction now and then (ABI 1.6), within its bound. */
	if (one_in(&t->r, 3))
		j->predicted_us = (uint32_t)(r64(&t->r) % (ACCEL_JOB_PREDICTION_MAX_US + 1ULL));
	for (uint32_t i = 0; i < nw; i++) {
		if (!pick_so(&t->r, d, &e))
			break;
		w[j->nwaits++] = (struct accel_point){ .handle = e.handle,
			.point = e.val + rn(&t->r, 4) };
	}
	for (uint32_t i = 0; i < ns; i++) {
		if (!pick_so(&t->r, d, &e))
			break;
		s[j->nsignals++] = (struct accel_point){ .handle = e.handle,
			.point = e.val + 1 + rn(&t->r, 4) };
	}
	/* A deadline now and then (ABI 1.7): from a millisecond to 10 s on. */
	if (one_in(&t->r, 4))
		s[j->nsignals++] = (struct accel_point){ .flags = ACCEL_POINT_F_DEADLINE,
			.point = (uint64_t)now_ns() + 1000000ULL * (1 + rn(&t->r, 10000)) };
	j->waits = (uintptr_t)w;
	j->signals = (uintptr_t)s;
	/* Now and then one nested field at an edge (no oracle on these). */
	if (one_in(&t->r, 12)) {
		const struct field *f = &f_job[rn(&t->r, N(f_job))];
		uint64_t v = edge(&t->r, 0);

		memcpy((char *)j + f->off, &v, f->size);
		return f->kind != FK_PTR && f->kind != FK_COUNT;
	}
	return true;
}

/*
 * Build an inline job (ACCEL_URING_CMD_JOB_SUBMIT_INLINE) into @u on device
 * slot @d: build_job()'s, its waits and then its signals (the deadline
 * included) in the three entries the SQE has, the unread predicted_us and
 * pad filled now and then.
 */
static void build_inline_job(struct thr *t, int d, struct accel_uring_job *u)
{
	struct accel_point w[4] = { 0 }, s[4] = { 0 };
	struct accel_job j;
	uint32_t nw, ns, n = 0;

	build_job(t, d, &j, w, s);
	nw = j.nwaits < 4 ? j.nwaits : 4; /* build_job() may set a count at an edge */
	ns = j.nsignals < 4 ? j.nsignals : 4;
	memset(u, 0, sizeof(*u));
	u->queue = j.queue;
	u->user_data = j.user_data;
	u->timeout_ns = j.timeout_ns;
	if (j.flags & ACCEL_JOB_F_EVENTS)
		u->flags |= ACCEL_URING_JOB_F_EVENTS;
	if (j.flags & ACCEL_JOB_F_ANSWER)
		u->flags |= ACCEL_URING_JOB_F_ANSWER;
	if (j.predicted_us) {
		u->flags |= ACCEL_URING_JOB_F_PREDICTED;
		u->predicted_us = j.predicted_us;
	} else if (one_in(&t->r, 4)) {
		u->predicted_us = (uint32_t)r64(&t->r); /* not read */
	}
	if (one_in(&t->r, 4))
		u->pad = (uint32_t)r64(&t->r); /* not read */
	for (uint32_t i = 0; i < nw && n < ACCEL_URING_JOB_POINTS; i++, u->nwaits++)
		u->points[n++] = w[i];
	for (uint32_t i = 0; i < ns && n < ACCEL_URING_JOB_POINTS; i++, u->nsignals++)
		u->points[n++] = s[i];
}

/* ------------------------------------------------------------------ */
/* Building a call.                                                      */

struct call {
	int op, d, fd;
	uint32_t gen;
	unsigned char buf[256];
	int exp, expv;
	bool ptr_ok;     /* every pointer (top and nested) valid */
	const char *what;
	struct so_ent so; /* the syncobj the call names, if any */
	bool has_so;
};

static bool so_for(struct thr *t, struct call *c)
{
	c->has_so = pick_so(&t->r, c->d, &c->so);
	if (!c->has_so)
		c->so = (struct so_ent){ .handle = one_in(&t->r, 2) ? 0 : 1 + rn(&t->r, 64) };
	return c->has_so;
}

static int32_t pick_fd_for(struct thr *t, int kind)
{
	int fd = pick_fd(&t->r, kind);

	if (fd < 0 || one_in(&t->r, 10))
		fd = (int)edge(&t->r, 0);
	return fd;
}

/*
 * The id of a job some fetch saw released, on the file that released it
 * (unless reopened since), for a COMPLETE; else a small random id.
 */
static uint32_t pick_released(struct thr *t, struct call *c)
{
	struct rel_ent e = { 0 };

	if (!rel_take(&t->r, &e))
		return rn(&t->r, 64);
	c->d = e.dev;
	c->fd = devfd_of(e.dev);
	return e.id;
}

static void build(struct thr *t, struct call *c)
{
	unsigned char *arr = t->arena + A_ARRAYS;
	void *b = c->buf;

	memset(c->buf, 0, sizeof(c->buf));
	switch (c->op) {
	case OP_INFO:
		break;
	case OP_NOP:
	case OP_U_NOP: {
		struct accel_nop *a = b;

		if (one_in(&t->r, 2)) {
			a->flags = ACCEL_NOP_F_RESULT;
			a->result = one_in(&t->r, 3) ? 0 : -(int32_t)rn(&t->r, 4096);
		}
		a->cookie = r64(&t->r);
		break;
	}
	case OP_SO_CREATE: {
		struct accel_syncobj_create *a = b;

		a->initial = one_in(&t->r, 2) ? 0 : edge(&t->r, 0);
		break;
	}
	case OP_SO_DESTROY:
		so_for(t, c);
		((struct accel_syncobj_destroy *)b)->handle = c->so.handle;
		break;
	case OP_SO_QUERY:
		so_for(t, c);
		((struct accel_syncobj_query *)b)->handle = c->so.handle;
		break;
	case OP_SO_SIGNAL:
	case OP_U_SIGNAL: {
		struct accel_syncobj_signal *a = b;

		so_for(t, c);
		a->handle = c->so.handle;
		a->value = c->so.val + 1 + (one_in(&t->r, 4) ? rn(&t->r, 8) : 0);
		break;
	}
	case OP_SO_FAIL: {
		struct accel_syncobj_fail *a = b;

		so_for(t, c);
		a->handle = c->so.handle;
		a->error = pick_status(&t->r, false);
		break;
	}
	case OP_SO_WAIT: {
		struct accel_syncobj_wait *a = b;
		uint32_t *h = (uint32_t *)arr;
		uint64_t *p = (uint64_t *)(arr + 2048);
		uint32_t n = rn(&t->r, 5);
		struct so_ent e;

		for (uint32_t i = 0; i < n; i++) {
			if (!pick_so(&t->r, c->d, &e))
				e = (struct so_ent){ .handle = 1 + rn(&t->r, 64) };
			h[i] = e.handle;
			p[i] = e.val + (one_in(&t->r, 2) ? 0 : rn(&t->r, 3));
		}
		a->handles = (uintptr_t)h;
		a->points = (uintptr_t)p;
		a->count = n;
		a->flags = rn(&t->r, 4);
		a->deadline = one_in(&t->r, 3) ? 0 :
			(int64_t)(now_ns() + rn(&t->r, 5000000));
		break;
	}
	case OP_SO_EXPORT:
		so_for(t, c);
		((struct accel_syncobj_handle_fd *)b)->handle = c->so.handle;
		break;
	case OP_SO_IMPORT:
		((struct accel_syncobj_handle_fd *)b)->fd = pick_fd_for(t, FD_SYNCOBJ);
		break;
	case OP_SO_EXPORT_SF:
	case OP_SO_IMPORT_SF: {
		struct accel_syncobj_sync_file *a = b;

		so_for(t, c);
		a->handle = c->so.handle;
		a->point = c->so.val + rn(&t->r, 3) + (c->op == OP_SO_IMPORT_SF);
		if (c->op == OP_SO_IMPORT_SF)
			a->fd = pick_fd_for(t, FD_SYNC_FILE);
		break;
	}
	case OP_SO_EVENTFD: {
		struct accel_syncobj_eventfd *a = b;

		so_for(t, c);
		a->handle = c->so.handle;
		a->point = c->so.val + rn(&t->r, 3);
		a->flags = one_in(&t->r, 3) ? ACCEL_WAIT_SUBMITTED : 0;
		a->fd = pick_fd_for(t, FD_EVENTFD);
		break;
	}
	case OP_SO_CANCEL: {
		struct accel_syncobj_cancel *a = b;

		so_for(t, c);
		a->handle = c->so.handle;
		a->point = c->so.val + rn(&t->r, 3);
		break;
	}
	case OP_SO_SET_DEADLINE: {
		struct accel_syncobj_deadline *a = b;

		so_for(t, c);
		a->handle = c->so.handle;
		a->point = c->so.val + rn(&t->r, 3);
		/* Mostly near or soon; now and then past or at an edge. */
		a->deadline_ns = one_in(&t->r, 8) ? edge(&t->r, 0) :
				 (uint64_t)now_ns() + 1000000ULL * (1 + rn(&t->r, 1000));
		break;
	}
	case OP_Q_CREATE: {
		struct accel_queue_create *a = b;

		strcpy(a->engine, engines[rn(&t->r, N(engines))]);
		a->priority = rn(&t->r, ACCEL_PRIORITY_COUNT);
		a->weight = 1 + rn(&t->r, 100);
		a->credits = one_in(&t->r, 2) ? 0 : 1 + rn(&t->r, 4);
		break;
	}
	case OP_Q_DESTROY: {
		struct q_ent q;

		((struct accel_queue_destroy *)b)->handle =
			pick_q(&t->r, c->d, &q) ? q.handle : rn(&t->r, 16);
		break;
	}
	case OP_JOB_SUBMIT: {
		struct accel_job_submit *a = b;
		struct accel_job *j = (struct accel_job *)arr;
		struct accel_point *pts = (struct accel_point *)(arr + 4096);
		uint32_t n = 1 + (one_in(&t->r, 4) ? rn(&t->r, 8) : 0);

		for (uint32_t i = 0; i < n; i++)
			if (!build_job(t, c->d, &j[i], &pts[i * 8], &pts[i * 8 + 4]))
				c->ptr_ok = false;
		a->jobs = (uintptr_t)j;
		a->count = n;
		break;
	}
	case OP_JOB_COMPLETE:
	case OP_U_COMPLETE: {
		struct accel_job_complete *a = b;

		a->id = pick_released(t, c);
		a->status = pick_status(&t->r, true);
		if (one_in(&t->r, 20))
			a->status = (int32_t)edge(&t->r, 0);
		a->device_ns = one_in(&t->r, 2) ? 0 : edge(&t->r, 1000);
		break;
	}
	case OP_JOB_FETCH: {
		struct accel_job_fetch *a = b;

		a->events = (uintptr_t)arr;
		a->max = 1 + rn(&t->r, 16);
		break;
	}
	case OP_JOB_COMPLETE_FETCH: {
		struct accel_job_complete_fetch *a = b;

		a->id = pick_released(t, c);
		a->status = pick_status(&t->r, true);
		a->device_ns = one_in(&t->r, 2) ? 0 : edge(&t->r, 1000);
		a->events = (uintptr_t)arr;
		a->max = 1 + rn(&t->r, 16);
		break;
	}
	case OP_U_SUBMIT_INLINE:
		build_inline_job(t, c->d, b);
		break;
	case OP_U_WAIT: {
		struct accel_uring_wait *a = b;

		so_for(t, c);
		a->handle = c->so.handle;
		a->point = c->so.val + rn(&t->r, 3);
		a->flags = one_in(&t->r, 4) ? ACCEL_WAIT_SUBMITTED : 0;
		break;
	}
	default:
		break;
	}
}

static uint64_t fget(const void *b, const struct field *f)
{
	uint64_t v = 0;

	memcpy(&v, (const char *)b + f->off, f->size > 8 ? 8 : f->size);
	return v;
}

/* What the ABI says about the struct in c->buf as it stands. */
static void content_oracle(struct call *c)
{
	const struct opdesc *o = &ops[c->op];
	const void *b = c->buf;

	if (c->op == OP_INFO)
		return; /* the module never reads it */
	for (int i = 0; i < o->nf; i++) {
		const struct field *f = &o->f[i];
		uint64_t v = fget(b, f);

		if ((f->kind == FK_ZERO && v) ||
		    (f->kind == FK_FLAGS && (v & ~o->flags_known))) {
			c->exp = EXP_EINVAL;
			c->what = f->name;
			return;
		}
	}
	switch (c->op) {
	case OP_NOP:
	case OP_U_NOP: {
		const struct accel_nop *a = b;

		if (a->flags & ACCEL_NOP_F_RESULT) {
			if (a->result > 0 || a->result < -4095) {
				c->exp = EXP_EINVAL;
			} else {
				c->exp = EXP_EQ;
				c->expv = -a->result;
			}
		} else if (a->result) {
			c->exp = EXP_EINVAL;
		}
		c->what = "result";
		break;
	}
	case OP_SO_SIGNAL:
	case OP_U_SIGNAL:
		if (!((const struct accel_syncobj_signal *)b)->value ||
		    !((const struct accel_syncobj_signal *)b)->handle)
			c->exp = EXP_FAIL, c->what = "value 0 or handle 0";
		break;
	case OP_SO_DESTROY:
	case OP_SO_QUERY:
	case OP_SO_EXPORT:
	case OP_SO_EXPORT_SF:
	case OP_SO_CANCEL:
	case OP_Q_DESTROY:
		if (!*(const uint32_t *)b)
			c->exp = EXP_FAIL, c->what = "handle 0";
		break;
	case OP_SO_SET_DEADLINE: {
		const struct accel_syncobj_deadline *a = b;

		if (!a->handle || !a->deadline_ns || a->deadline_ns > INT64_MAX ||
		    a->deadline_ns <= (uint64_t)now_ns())
			c->exp = EXP_FAIL, c->what = "handle 0, or deadline 0, past or > S64_MAX";
		break;
	}
	case OP_SO_FAIL: {
		const struct accel_syncobj_fail *a = b;

		if (a->error >= 0 || a->error < -ACCEL_MAX_ERRNO || !a->handle)
			c->exp = EXP_FAIL, c->what = "error out of range";
		break;
	}
	case OP_SO_WAIT:
		if (((const struct accel_syncobj_wait *)b)->count > ACCEL_WAIT_MAX_COUNT)
			c->exp = EXP_FAIL, c->what = "count > max";
		break;
	case OP_SO_IMPORT_SF:
		if (!((const struct accel_syncobj_sync_file *)b)->point)
			c->exp = EXP_FAIL, c->what = "point 0";
		break;
	case OP_Q_CREATE: {
		const struct accel_queue_create *a = b;

		if (a->priority >= ACCEL_PRIORITY_COUNT ||
		    a->weight < ACCEL_WEIGHT_MIN || a->weight > ACCEL_WEIGHT_MAX ||
		    a->credits > ACCEL_CREDITS_MAX || !a->engine[0] ||
		    !memchr(a->engine, 0, sizeof(a->engine)))
			c->exp = EXP_FAIL, c->what = "priority/weight/credits/engine";
		break;
	}
	case OP_JOB_SUBMIT: {
		uint32_t n = ((const struct accel_job_submit *)b)->count;

		if (!n || n > ACCEL_JOB_SUBMIT_MAX)
			c->exp = EXP_EINVAL, c->what = "count";
		break;
	}
	case OP_JOB_FETCH: {
		uint32_t n = ((const struct accel_job_fetch *)b)->max;

		if (!n || n > ACCEL_JOB_SUBMIT_MAX)
			c->exp = EXP_EINVAL, c->what = "max";
		break;
	}
	case OP_JOB_COMPLETE_FETCH: {
		const struct accel_job_complete_fetch *a = b;

		/* A bad status is the COMPLETE's, in @result: not the call's. */
		if (!a->max || a->max > ACCEL_JOB_SUBMIT_MAX || a->events & 7)
			c->exp = EXP_EINVAL, c->what = "max/misaligned events";
		break;
	}
	case OP_JOB_COMPLETE:
	case OP_U_COMPLETE: {
		int32_t s = ((const struct accel_job_complete *)b)->status;

		if (s > 0 || s < -ACCEL_MAX_ERRNO)
			c->exp = EXP_FAIL, c->what = "status out of range";
		break;
	}
	case OP_U_SUBMIT:
		if (((const struct accel_uring_submit *)b)->job & 7)
			c->exp = EXP_EINVAL, c->what = "misaligned job";
		break;
	case OP_U_SUBMIT_INLINE: {
		const struct accel_uring_job *u = b;

		/* Refused before anything is looked up (flags: above). */
		if (u->nwaits + u->nsignals > ACCEL_URING_JOB_POINTS)
			c->exp = EXP_EINVAL, c->what = "nwaits + nsignals";
		else if ((u->flags & ACCEL_URING_JOB_F_PREDICTED) &&
			 u->predicted_us > ACCEL_JOB_PREDICTION_MAX_US)
			c->exp = EXP_EINVAL, c->what = "predicted_us";
		else if ((u->flags & ACCEL_URING_JOB_F_ANSWER) &&
			 !(u->flags & ACCEL_URING_JOB_F_EVENTS))
			c->exp = EXP_EINVAL, c->what = "answer without events";
		else if (u->timeout_ns > 3600ULL * 1000000000ULL)
			c->exp = EXP_EINVAL, c->what = "timeout_ns";
		break;
	}
	default:
		break;
	}
}

/*
 * Keep the errors the fuzzer injects (FAIL, COMPLETE) out of the kernel's
 * internal range (512..530) and off EFAULT, so that one seen later
 * anywhere (a WAIT or SIGNAL answers with a failed syncobj's error) is the
 * module's own.
 */
static void no_internal_errno(struct call *c)
{
	int32_t *e = NULL;

	if (c->op == OP_SO_FAIL)
		e = &((struct accel_syncobj_fail *)c->buf)->error;
	else if (c->op == OP_NOP || c->op == OP_U_NOP)
		e = &((struct accel_nop *)c->buf)->result;
	else if (c->op == OP_JOB_COMPLETE || c->op == OP_U_COMPLETE)
		e = &((struct accel_job_complete *)c->buf)->status;
	if (e && *e <= -512 && *e >= -530)
		*e = -511;
	if (e && *e == -EFAULT && c->op != OP_NOP && c->op != OP_U_NOP)
		*e = -EIO;
}

/* Mutate one field of c->buf to an edge value. */
static void mutate_field(struct thr *t, struct call *c)
{
	const struct opdesc *o = &ops[c->op];
	const struct field *f = &o->f[rn(&t->r, o->nf)];
	char *p = (char *)c->buf + f->off;

	if (f->kind == FK_BYTES) {
		if (one_in(&t->r, 2))
			memset(p, 'a' + rn(&t->r, 26), f->size); /* no NUL */
		else
			p[rn(&t->r, f->size)] = (char)r64(&t->r);
	} else if (f->kind == FK_FLAGS && one_in(&t->r, 2)) {
		uint64_t v = fget(c->buf, f) | (1ULL << rn(&t->r, f->size * 8));

		memcpy(p, &v, f->size);
	} else {
		uint64_t v = edge(&t->r, fget(c->buf, f));

		memcpy(p, &v, f->size);
	}
	if (f->kind == FK_PTR || f->kind == FK_COUNT)
		c->ptr_ok = false;
}

/* ------------------------------------------------------------------ */
/* Running a call: ioctl.                                                */

static int do_ioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) < 0 ? errno : 0;
}

/* Note what a successful call created or changed. */
static void after_ioctl(struct thr *t, struct call *c, void *arg)
{
	switch (c->op) {
	case OP_SO_CREATE: {
		struct accel_syncobj_create *a = arg;

		if (so_count() > NSO - 4) {
			struct accel_syncobj_destroy dd;
			struct so_ent e;

			if (pick_so(&t->r, c->d, &e)) {
				dd = (struct accel_syncobj_destroy){ e.handle, 0 };
				so_forget(c->d, e.handle);
				ioctl(c->fd, ACCEL_IOCTL_SYNCOBJ_DESTROY, &dd);
			}
		}
		so_add(c->d, c->gen, a->handle, a->initial);
		break;
	}
	case OP_SO_DESTROY:
		so_forget(c->d, ((struct accel_syncobj_destroy *)arg)->handle);
		break;
	case OP_SO_QUERY: {
		struct accel_syncobj_query *a = arg;

		if (a->value > a->submitted)
			viol("syncobj_query: value %" PRIu64 " > submitted %" PRIu64,
			     (uint64_t)a->value, (uint64_t)a->submitted);
		if (a->error > 0 || a->error < -ACCEL_MAX_ERRNO)
			viol("syncobj_query: error %d out of range", a->error);
		so_saw(c->d, a->handle, a->value);
		break;
	}
	case OP_SO_SIGNAL:
		so_saw(c->d, ((struct accel_syncobj_signal *)arg)->handle,
		       ((struct accel_syncobj_signal *)arg)->value);
		break;
	case OP_SO_EXPORT:
		fd_add(&t->r, ((struct accel_syncobj_handle_fd *)arg)->fd, FD_SYNCOBJ);
		break;
	case OP_SO_IMPORT:
		so_add(c->d, c->gen, ((struct accel_syncobj_handle_fd *)arg)->handle, 0);
		break;
	case OP_SO_EXPORT_SF:
		fd_add(&t->r, ((struct accel_syncobj_sync_file *)arg)->fd, FD_SYNC_FILE);
		break;
	case OP_Q_CREATE:
		q_add(c->d, c->gen, ((struct accel_queue_create *)arg)->handle);
		break;
	case OP_JOB_SUBMIT: {
		/* Jobs the module read: a release answered is to complete. */
		struct accel_job_submit *a = arg;
		const struct accel_job *j = (const void *)(uintptr_t)a->jobs;

		for (uint32_t i = 0; c->ptr_ok && i < a->submitted && i < a->count; i++) {
			if (!(j[i].id & ACCEL_JOB_ID_RELEASED))
				continue;
			if (!(j[i].flags & ACCEL_JOB_F_ANSWER))
				viol("job_submit: job %u answered without ACCEL_JOB_F_ANSWER", i);
			rel_add(c->d, c->gen, j[i].id & ACCEL_JOB_RES_ID_MASK);
		}
		break;
	}
	case OP_JOB_FETCH: {
		struct accel_job_fetch *a = arg;
		struct accel_job_event *ev = (void *)(uintptr_t)a->events;

		if (a->count > a->max)
			viol("job_fetch: count %u > max %u", a->count, a->max);
		for (uint32_t i = 0; i < a->count && i < a->max; i++)
			if (ev[i].type == ACCEL_JOB_EVENT_RELEASED && !one_in(&t->r, 10))
				rel_add(c->d, c->gen, ev[i].id);
		break;
	}
	case OP_JOB_COMPLETE_FETCH: {
		struct accel_job_complete_fetch *a = arg;
		struct accel_job_event *ev = (void *)(uintptr_t)a->events;
		int res = a->result;

		if (a->count > a->max)
			viol("job_complete_fetch: count %u > max %u", a->count, a->max);
		if (res && res != -EINVAL && res != -ENOENT && res != -ETIMEDOUT)
			viol("job_complete_fetch: result %s", ename(-res));
		for (uint32_t i = 0; i < a->count && i < a->max; i++)
			if (ev[i].type == ACCEL_JOB_EVENT_RELEASED && !one_in(&t->r, 10))
				rel_add(c->d, c->gen, ev[i].id);
		break;
	}
	default:
		break;
	}
}

static void run_ioctl(struct thr *t, struct call *c)
{
	const struct opdesc *o = &ops[c->op];
	unsigned long cmd = o->cmd;
	unsigned int size = o->size;
	unsigned char *arg = t->arena + A_STRUCT + 8 * rn(&t->r, 8);
	uint32_t m = rn(&t->r, 100);
	int err;

	c->exp = EXP_NOFAULT;
	c->ptr_ok = true;
	c->what = "valid";
	build(t, c);

	if (m < 55) {
		/* valid */
	} else if (m < 80) {
		mutate_field(t, c);
		c->what = "field";
	} else if (m < 84) {
		for (unsigned int i = 0; i < size; i++)
			c->buf[i] = (unsigned char)r64(&t->r);
		c->ptr_ok = false;
		c->what = "random struct";
	}
	no_internal_errno(c);
	content_oracle(c);
	if (!c->ptr_ok && c->exp == EXP_NOFAULT)
		c->exp = EXP_ANY;

	if (m >= 84 && m < 92) {
		/* A bad pointer, with the struct as built. */
		switch (rn(&t->r, 5)) {
		case 0: arg = NULL; c->exp = EXP_EFAULT; c->what = "NULL"; break;
		case 1: arg = t->arena + A_NONE; c->exp = EXP_EFAULT; c->what = "unmapped"; break;
		case 2: /* crossing into the unmapped page */
			arg = t->arena + A_NONE - size / 2;
			c->exp = EXP_EFAULT;
			c->what = "crossing";
			break;
		case 3: /* read-only: the kernel cannot write the output */
			arg = t->arena + A_RO;
			mprotect(arg, PAGE, PROT_READ | PROT_WRITE);
			memcpy(arg, c->buf, size);
			mprotect(arg, PAGE, PROT_READ);
			if (_IOC_DIR(cmd) & _IOC_READ)
				c->exp = c->exp == EXP_EINVAL ? EXP_EINVAL : EXP_FAIL;
			c->what = "read-only";
			goto call;
		default: /* misaligned but valid */
			arg = t->arena + A_STRUCT + 1 + rn(&t->r, 7);
			c->what = "misaligned";
			break;
		}
	} else if (m >= 92) {
		/* The ioctl number's size, direction, number or type. */
		uint32_t k = rn(&t->r, 8);

		if (k < 4) {
			arg = t->arena + A_STRUCT; /* zeroes up to 16 KiB past it */
			static const int d[] = { -8, -1, 1, 8, 64 };
			int ns = k == 0 ? 0 : k == 1 ? (int)(16383 & r64(&t->r)) :
				(int)size + d[rn(&t->r, N(d))];

			if (ns < 0)
				ns = 0;
			ns &= _IOC_SIZEMASK;
			cmd = _IOC(_IOC_DIR(cmd), _IOC_TYPE(cmd), _IOC_NR(cmd), ns);
			c->ptr_ok = false;
			c->exp = EXP_ANY;
			c->what = "size";
			if ((unsigned int)ns > size && (_IOC_DIR(cmd) & _IOC_WRITE) &&
			    one_in(&t->r, 2)) {
				arg[size + rn(&t->r, ns - size)] = 1 + rn(&t->r, 255);
				c->exp = EXP_E2BIG;
				c->what = "non-zero tail";
			} else if ((unsigned int)ns > size && c->exp != EXP_EINVAL) {
				content_oracle(c); /* zeroes past it: the same call */
				if (c->exp == EXP_NOFAULT)
					c->exp = EXP_ANY;
			}
		} else if (k < 6) {
			unsigned int dir = _IOC_DIR(cmd);
			unsigned int nd;

			do
				nd = rn(&t->r, 4);
			while (nd == dir);
			cmd = _IOC(nd, _IOC_TYPE(cmd), _IOC_NR(cmd), _IOC_SIZE(cmd));
			c->exp = EXP_ENOTTY;
			c->what = "direction";
		} else if (k == 6) {
			cmd = _IOC(_IOC_DIR(cmd), 0xAB + 2 * rn(&t->r, 2), _IOC_NR(cmd), _IOC_SIZE(cmd));
			c->exp = EXP_ENOTTY;
			c->what = "type";
		} else {
			cmd = _IOC(_IOC_DIR(cmd), _IOC_TYPE(cmd), 0x26 + rn(&t->r, 0xda), _IOC_SIZE(cmd));
			c->exp = EXP_ENOTTY;
			c->what = "number";
		}
	}
	if (arg && arg != t->arena + A_NONE)
		memcpy(arg, c->buf, arg == t->arena + A_NONE - size / 2 ? size / 2 : size);
call:
	count_call(c->op);
	err = do_ioctl(c->fd, cmd, arg);
	judge(c->op, c->exp, c->expv, err, c->what);
	if (!err && arg && cmd == o->cmd && arg != t->arena + A_RO)
		after_ioctl(t, c, arg);
	/* Zero what the call may have left past the struct. */
	memset(t->arena + A_STRUCT, 0, 4 * PAGE);
}

/* ------------------------------------------------------------------ */
/* Running a call: uring_cmd.                                            */

/* user_data: op | exp << 8 | (slot + 1) << 12 | ring << 20 | dev << 24 | expv << 32 */
static uint64_t ud_make(int op, int exp, int slot, int ring, int d, int expv)
{
	return (uint64_t)op | (uint64_t)exp << 8 | (uint64_t)(slot + 1) << 12 |
	       (uint64_t)ring << 20 | (uint64_t)d << 24 | (uint64_t)(uint32_t)expv << 32;
}

static void reap_ring(struct thr *t, int ri)
{
	struct ring *rg = &t->ring[ri];
	struct io_uring_cqe *cqe;

	if (!rg->live)
		return;
	while (io_uring_peek_cqe(&rg->r, &cqe) == 0) {
		uint64_t ud = cqe->user_data;
		int op = ud & 0xff, exp = (ud >> 8) & 0xf;
		int slot = (int)((ud >> 12) & 0xff) - 1, d = (ud >> 24) & 0xff;
		int expv = (int)(ud >> 32), res = cqe->res;

		io_uring_cqe_seen(&rg->r, cqe);
		rg->pending--;
		if (op >= NOPS)
			continue;
		if (slot >= 0 && slot < NSLOT)
			rg->slot[slot].used = 0;
		judge(op, exp, expv, res < 0 ? -res : 0, "cqe");
		if ((op == OP_U_SUBMIT || op == OP_U_SUBMIT_INLINE) && res >= 0 &&
		    d < NDEV && !one_in(&t->r, 10))
			rel_add(d, ps.devgen[d], res & ACCEL_JOB_RES_ID_MASK);
	}
}

static void reap_all(struct thr *t)
{
	for (int i = 0; i < NRING; i++)
		reap_ring(t, i);
}

static void ring_exit(struct ring *rg)
{
	if (!rg->live)
		return;
	io_uring_queue_exit(&rg->r);
	rg->live = 0;
	rg->pending = 0;
	memset(rg->slot, 0, sizeof(rg->slot));
}

static void ring_setup(struct thr *t)
{
	for (int i = 0; i < NRING; i++) {
		struct ring *rg = &t->ring[i];
		unsigned int flags = one_in(&t->r, 2) ? IORING_SETUP_CQE32 : 0;
		int ret;

		if (rg->live)
			continue;
		/* 128-byte SQEs, which an inline SUBMIT needs, half the time. */
		if (one_in(&t->r, 2))
			flags |= IORING_SETUP_SQE128;
		count_call(OP_RING_SETUP);
		ret = io_uring_queue_init(RING_ENTRIES, &rg->r, flags);
		count_result(OP_RING_SETUP, ret < 0 ? -ret : 0);
		if (ret == 0) {
			rg->live = 1;
			rg->cqe32 = !!(flags & IORING_SETUP_CQE32);
			rg->sqe128 = !!(flags & IORING_SETUP_SQE128);
		}
		return;
	}
}

static void run_uring(struct thr *t, struct call *c)
{
	const struct opdesc *o = &ops[c->op];
	int ri = rn(&t->r, NRING), slot = -1;
	struct ring *rg = &t->ring[ri];
	struct io_uring_sqe *sqe;
	uint32_t cmd_op = o->cmd, m = rn(&t->r, 100);
	/* The command's bytes: the inline job's 80 on a 128-byte SQE. */
	unsigned int len = c->op == OP_U_SUBMIT_INLINE && rg->sqe128 ?
			   sizeof(struct accel_uring_job) : 16;
	int ret;

	if (rg->live && rg->pending >= 2 * RING_ENTRIES - 4) {
		/* Full of commands that wait: tear it down with them. */
		count_call(OP_RING_EXIT);
		count_result(OP_RING_EXIT, 0);
		ring_exit(rg);
	}
	if (!rg->live) {
		ring_setup(t);
		return;
	}
	c->exp = EXP_NOFAULT;
	c->ptr_ok = true;
	c->what = "valid";
	build(t, c);
	if (c->op == OP_U_SUBMIT) {
		for (int i = 0; i < NSLOT; i++)
			if (!rg->slot[i].used) {
				slot = i;
				break;
			}
		if (slot < 0) {
			reap_ring(t, ri);
			return;
		}
		struct jslot *js = &rg->slot[slot];

		js->used = 1;
		if (!build_job(t, c->d, &js->job, &js->pts[0], &js->pts[4]))
			c->ptr_ok = false;
		((struct accel_uring_submit *)c->buf)->job = (uintptr_t)&js->job;
	}
	if (m < 60) {
		/* valid */
	} else if (m < 85) {
		mutate_field(t, c);
		c->what = "field";
	} else if (m < 90) {
		for (unsigned int i = 0; i < len; i++)
			c->buf[i] = (unsigned char)r64(&t->r);
		/* The inline job holds no pointer: never -EFAULT. */
		c->ptr_ok = c->op == OP_U_SUBMIT_INLINE;
		c->what = "random payload";
	}
	no_internal_errno(c);
	content_oracle(c);
	if (!c->ptr_ok && c->exp == EXP_NOFAULT)
		c->exp = EXP_ANY;
	/* A 64-byte SQE has 16 bytes of command: no room for the job. */
	if (c->op == OP_U_SUBMIT_INLINE && !rg->sqe128) {
		c->exp = EXP_EINVAL;
		c->what = "inline job on a ring of 64-byte SQEs";
	}
	if (m >= 90 && c->op == OP_U_SUBMIT && m < 95) {
		uint64_t bad[] = { 0, (uintptr_t)(t->arena + A_NONE),
				   (uintptr_t)(t->arena + A_NONE - 40) };
		((struct accel_uring_submit *)c->buf)->job = bad[rn(&t->r, 3)];
		c->exp = EXP_EFAULT;
		c->what = "bad job pointer";
	} else if (m >= 95) {
		uint32_t k = rn(&t->r, 3);

		if (k == 0)
			cmd_op = _IOC(_IOC_DIR(cmd_op), _IOC_TYPE(cmd_op), _IOC_NR(cmd_op),
				      _IOC_SIZE(cmd_op) + 1 + rn(&t->r, 16));
		else if (k == 1)
			cmd_op = _IOC(_IOC_READ | _IOC_WRITE, _IOC_TYPE(cmd_op),
				      _IOC_NR(cmd_op), _IOC_SIZE(cmd_op));
		else /* a number past the last command's (0x85) */
			cmd_op = _IOC(_IOC_DIR(cmd_op), _IOC_TYPE(cmd_op),
				      0x86 + rn(&t->r, 0x7a), _IOC_SIZE(cmd_op));
		c->exp = EXP_FAIL;
		c->what = "cmd_op";
	}
	sqe = io_uring_get_sqe(&rg->r);
	if (!sqe) {
		if (slot >= 0)
			rg->slot[slot].used = 0;
		io_uring_submit(&rg->r);
		return;
	}
	io_uring_prep_rw(IORING_OP_URING_CMD, sqe, c->fd, NULL, 0, 0);
	sqe->cmd_op = cmd_op;
	memcpy(sqe->cmd, c->buf, len);
	if (one_in(&t->r, 8))
		sqe->flags |= IOSQE_ASYNC;
	sqe->user_data = ud_make(c->op, c->exp, slot, ri, c->d, c->expv);
	count_call(c->op);
	ret = io_uring_submit(&rg->r);
	if (ret < 0) {
		judge(c->op, EXP_ANY, 0, -ret, "io_uring_submit");
		if (slot >= 0)
			rg->slot[slot].used = 0;
	} else {
		rg->pending += ret;
	}
	reap_all(t);
}

/* ------------------------------------------------------------------ */
/* Meta operations.                                                      */

static void run_raw_ioctl(struct thr *t, int fd)
{
	unsigned long cmd;
	void *arg;
	int err;

	if (one_in(&t->r, 4))
		cmd = _IOC(rn(&t->r, 4), 0xAB + 2 * rn(&t->r, 2), rn(&t->r, 256),
			   rn(&t->r, _IOC_SIZEMASK + 1));
	else
		cmd = _IOC(rn(&t->r, 4), ACCEL_IOCTL_BASE, rn(&t->r, 0x40),
			   rn(&t->r, 4) ? rn(&t->r, 256) : rn(&t->r, _IOC_SIZEMASK + 1));
	switch (rn(&t->r, 4)) {
	case 0: arg = NULL; break;
	case 1: arg = (void *)(uintptr_t)r64(&t->r); break;
	case 2: arg = t->arena + A_NONE - rn(&t->r, 64); break;
	default:
		arg = t->arena + A_STRUCT;
		for (int i = 0; i < 256; i++)
			t->arena[A_STRUCT + i] = one_in(&t->r, 3) ? (unsigned char)r64(&t->r) : 0;
		break;
	}
	count_call(OP_RAW_IOCTL);
	err = do_ioctl(fd, cmd, arg);
	/* Any other type letter is not ours. */
	judge(OP_RAW_IOCTL, _IOC_TYPE(cmd) != ACCEL_IOCTL_BASE ? EXP_ENOTTY : EXP_ANY,
	      0, err, "raw");
	if (!err && _IOC_TYPE(cmd) == ACCEL_IOCTL_BASE) {
		/* A create or an export that succeeded by chance: forget it. */
		if (_IOC_NR(cmd) == _IOC_NR(ACCEL_IOCTL_SYNCOBJ_EXPORT) ||
		    _IOC_NR(cmd) == _IOC_NR(ACCEL_IOCTL_SYNCOBJ_EXPORT_SYNC_FILE)) {
			/* the fd leaks until exit; bounded by the rate */
		}
	}
	memset(t->arena + A_STRUCT, 0, 4 * PAGE);
}

static void run_raw_uring(struct thr *t, int fd)
{
	struct ring *rg = &t->ring[0];
	struct io_uring_sqe *sqe;
	int ret;

	if (!rg->live || rg->pending >= 2 * RING_ENTRIES - 4) {
		ring_setup(t);
		return;
	}
	sqe = io_uring_get_sqe(&rg->r);
	if (!sqe)
		return;
	io_uring_prep_rw(IORING_OP_URING_CMD, sqe, fd, NULL, 0, 0);
	sqe->cmd_op = one_in(&t->r, 4) ? (uint32_t)r64(&t->r) :
		_IOC(rn(&t->r, 4), ACCEL_IOCTL_BASE, 0x80 + rn(&t->r, 8), rn(&t->r, 64));
	for (int i = 0; i < 16; i++)
		sqe->cmd[i] = one_in(&t->r, 3) ? (uint8_t)r64(&t->r) : 0;
	sqe->user_data = ud_make(OP_RAW_URING, EXP_ANY, -1, 0, 0, 0);
	count_call(OP_RAW_URING);
	ret = io_uring_submit(&rg->r);
	if (ret > 0)
		rg->pending += ret;
	reap_all(t);
}

static void run_close_fd(struct thr *t)
{
	int i = rn(&t->r, NFD), fd = -1;

	pthread_mutex_lock(&ps.lock);
	if (ps.fds[i].used) {
		fd = ps.fds[i].fd;
		ps.fds[i].used = 0;
	}
	pthread_mutex_unlock(&ps.lock);
	if (fd < 0) {
		/* Make an eventfd to use instead. */
		int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);

		count_call(OP_CLOSE_FD);
		count_result(OP_CLOSE_FD, efd < 0 ? errno : 0);
		if (efd >= 0)
			fd_add(&t->r, efd, FD_EVENTFD);
		return;
	}
	count_call(OP_CLOSE_FD);
	count_result(OP_CLOSE_FD, close(fd) ? errno : 0);
}

/* Close a device fd under the other threads and open a new one. */
static void run_reopen_dev(struct thr *t)
{
	int d = rn(&t->r, NDEV), nfd = dev_open(), old;

	count_call(OP_REOPEN_DEV);
	count_result(OP_REOPEN_DEV, nfd < 0 ? errno : 0);
	if (nfd < 0)
		return;
	pthread_mutex_lock(&ps.lock);
	old = ps.devfd[d];
	ps.devfd[d] = nfd;
	ps.devgen[d]++;
	for (int i = 0; i < NSO; i++)
		if (ps.so[i].dev == d)
			ps.so[i].used &= one_in(&t->r, 4); /* keep a few stale */
	for (int i = 0; i < NQ; i++)
		if (ps.q[i].dev == d)
			ps.q[i].used = 0;
	pthread_mutex_unlock(&ps.lock);
	close(old);
}

static void run_poll(struct thr *t)
{
	struct pollfd p[4];
	int n = 0;

	for (int d = 0; d < 2; d++)
		p[n++] = (struct pollfd){ .fd = devfd_of(rn(&t->r, NDEV)), .events = POLLIN };
	p[n++] = (struct pollfd){ .fd = pick_fd(&t->r, FD_SYNC_FILE), .events = POLLIN };
	p[n++] = (struct pollfd){ .fd = pick_fd(&t->r, FD_EVENTFD), .events = POLLIN };
	count_call(OP_POLL);
	int ret = poll(p, n, 0);

	count_result(OP_POLL, ret < 0 ? errno : 0);
	if (ret > 0 && p[3].fd >= 0 && (p[3].revents & POLLIN)) {
		uint64_t v;

		if (read(p[3].fd, &v, sizeof(v)) < 0) {
			/* Closed or drained under us: fine. */
		}
	}
}

/* ------------------------------------------------------------------ */
/* A worker: threads on shared device fds.                              */

static int total_weight;
static int op_pick[1024];
static int nop_pick;

static void build_pick_table(void)
{
	nop_pick = 0;
	for (int i = 0; i < NOPS; i++)
		if (op_enabled[i])
			for (int w = 0; w < ops[i].weight && nop_pick < 1024; w++)
				op_pick[nop_pick++] = i;
	total_weight = nop_pick;
}

static void *thread_main(void *arg)
{
	struct thr *t = arg;

	while (!ps.stop) {
		struct call c = { .op = op_pick[rn(&t->r, nop_pick)] };

		if (ops[c.op].kind != K_META) {
			c.d = pick_dev(&t->r, &c.fd, &c.gen);
			if (ops[c.op].kind == K_IOCTL)
				run_ioctl(t, &c);
			else
				run_uring(t, &c);
			continue;
		}
		switch (c.op) {
		case OP_RAW_IOCTL: run_raw_ioctl(t, devfd_of(rn(&t->r, NDEV))); break;
		case OP_RAW_URING: run_raw_uring(t, devfd_of(rn(&t->r, NDEV))); break;
		case OP_RING_SETUP: ring_setup(t); break;
		case OP_RING_EXIT: {
			struct ring *rg = &t->ring[rn(&t->r, NRING)];

			if (rg->live) {
				count_call(OP_RING_EXIT);
				count_result(OP_RING_EXIT, 0);
				ring_exit(rg); /* with whatever is pending */
			}
			break;
		}
		case OP_CLOSE_FD: run_close_fd(t); break;
		case OP_REOPEN_DEV: run_reopen_dev(t); break;
		case OP_POLL: run_poll(t); break;
		}
		reap_all(t);
	}
	reap_all(t);
	if (t->idx & 1) {
		/* Half the threads leave their rings to the exit path. */
		for (int i = 0; i < NRING; i++)
			ring_exit(&t->ring[i]);
	}
	return NULL;
}

static void on_kick(int sig)
{
	(void)sig;
}

/* Exit status of a worker: 0 ok, 3 a thread did not stop (hang). */
static int worker(uint64_t seed, int nthreads, double deadline)
{
	struct thr *th = calloc(nthreads, sizeof(*th));
	struct sigaction sa = { .sa_handler = on_kick };
	struct rng r = { seed };
	int stuck = 0;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	sigaction(SIGUSR1, &sa, NULL); /* no SA_RESTART: waits see EINTR */
	for (int d = 0; d < NDEV; d++) {
		ps.devfd[d] = dev_open();
		if (ps.devfd[d] < 0) {
			printf("# worker: open /dev/%s: %s\n", ACCEL_DEVICE_NAME, strerror(errno));
			return 2;
		}
	}
	for (int i = 0; i < nthreads; i++) {
		struct thr *t = &th[i];

		t->r.s = r64(&r);
		t->idx = i;
		t->arena = mmap(NULL, A_SIZE, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (t->arena == MAP_FAILED)
			return 2;
		mprotect(t->arena + A_NONE, PAGE, PROT_NONE);
		mprotect(t->arena + A_RO, PAGE, PROT_READ);
		pthread_create(&t->tid, NULL, thread_main, t);
	}
	/* Kick the threads out of blocking calls now and then. */
	while ((double)now_ns() / 1e9 < deadline) {
		usleep(20000 + rn(&r, 100000));
		pthread_kill(th[rn(&r, nthreads)].tid, SIGUSR1);
	}
	ps.stop = 1;
	for (int i = 0; i < nthreads; i++) {
		int tries = 0;

		/* Kick it out of a blocking call every 100 ms, for 20 s. */
		for (;;) {
			struct timespec ts;

			pthread_kill(th[i].tid, SIGUSR1);
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_nsec += 100000000;
			if (ts.tv_nsec >= 1000000000) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000;
			}
			if (pthread_timedjoin_np(th[i].tid, NULL, &ts) != ETIMEDOUT)
				break;
			if (++tries == 200) {
				printf("# worker %d: thread %d did not stop in 20 s\n",
				       getpid(), i);
				stuck = 1;
				break;
			}
		}
	}
	/* Released jobs left uncompleted: the file's close cancels them. */
	fflush(stdout);
	return stuck ? 3 : 0;
}

/* ------------------------------------------------------------------ */
/* After the fuzz: does the device still work?                           */

static int check(const char *what, int ok)
{
	if (!ok)
		printf("# device check failed: %s (errno %s)\n", what, ename(errno));
	return ok;
}

static bool device_works(void)
{
	int fd = dev_open();
	struct accel_syncobj_create cr = { .initial = 0 };
	struct accel_syncobj_signal sg;
	struct accel_queue_create qc = { .engine = "fz-check", .weight = 1 };
	struct accel_point sig;
	struct accel_job job = { 0 };
	struct accel_job_submit sub = { .jobs = (uintptr_t)&job, .count = 1 };
	struct accel_job_event ev[4];
	struct accel_job_fetch fe = { .events = (uintptr_t)ev, .max = 4 };
	struct accel_job_complete co = { 0 };
	struct io_uring ring;
	struct io_uring_cqe *cqe;
	uint32_t h;
	uint64_t pt = 7;
	bool ok = true;

	if (!check("open", fd >= 0))
		return false;
	ok &= check("create", !ioctl(fd, ACCEL_IOCTL_SYNCOBJ_CREATE, &cr));
	h = cr.handle;
	sg = (struct accel_syncobj_signal){ .handle = h, .value = 5 };
	ok &= check("signal", !ioctl(fd, ACCEL_IOCTL_SYNCOBJ_SIGNAL, &sg));
	if (check("io_uring setup", !io_uring_queue_init(4, &ring, 0))) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);

		sg.value = 6;
		io_uring_prep_rw(IORING_OP_URING_CMD, sqe, fd, NULL, 0, 0);
		sqe->cmd_op = ACCEL_URING_CMD_SYNCOBJ_SIGNAL;
		memset(sqe->cmd, 0, 16);
		memcpy(sqe->cmd, &sg, sizeof(sg));
		ok &= check("uring signal submit", io_uring_submit_and_wait(&ring, 1) == 1);
		if (io_uring_peek_cqe(&ring, &cqe) == 0) {
			ok &= check("uring signal result", cqe->res == 0);
			io_uring_cqe_seen(&ring, cqe);
		} else {
			ok = check("uring signal cqe", 0);
		}
		io_uring_queue_exit(&ring);
	} else {
		ok = false;
	}
	pt = 6;
	struct accel_syncobj_wait w = { .handles = (uintptr_t)&h, .points = (uintptr_t)&pt,
		.count = 1, .flags = ACCEL_WAIT_ALL, .deadline = (int64_t)(now_ns() + 5000000000ULL) };
	ok &= check("wait 6", !ioctl(fd, ACCEL_IOCTL_SYNCOBJ_WAIT, &w));
	ok &= check("queue create", !ioctl(fd, ACCEL_IOCTL_QUEUE_CREATE, &qc));
	sig = (struct accel_point){ .handle = h, .point = 7 };
	job.queue = qc.handle;
	job.signals = (uintptr_t)&sig;
	job.nsignals = 1;
	ok &= check("job submit", !ioctl(fd, ACCEL_IOCTL_JOB_SUBMIT, &sub) && sub.submitted == 1);
	for (int i = 0; i < 500 && ok; i++) {
		struct pollfd p = { .fd = fd, .events = POLLIN };

		poll(&p, 1, 10);
		fe.count = 0;
		if (ioctl(fd, ACCEL_IOCTL_JOB_FETCH, &fe) == 0 && fe.count)
			break;
	}
	ok &= check("job released", fe.count == 1 && ev[0].id == job.id &&
		    ev[0].type == ACCEL_JOB_EVENT_RELEASED);
	co.id = job.id;
	ok &= check("job complete", !ioctl(fd, ACCEL_IOCTL_JOB_COMPLETE, &co));
	pt = 7;
	w.deadline = (int64_t)(now_ns() + 5000000000ULL);
	ok &= check("wait 7", !ioctl(fd, ACCEL_IOCTL_SYNCOBJ_WAIT, &w));
	struct accel_syncobj_destroy ds = { .handle = h };

	ok &= check("destroy", !ioctl(fd, ACCEL_IOCTL_SYNCOBJ_DESTROY, &ds));
	close(fd);
	return ok;
}

/* ------------------------------------------------------------------ */
/* The kernel log.                                                       */


static int kmsg_scan(int fd)
{
	char rec[8192];
	int n = 0;

	if (fd < 0)
		return 0;
	for (;;) {
		ssize_t len = read(fd, rec, sizeof(rec) - 1);

		if (len < 0 && errno == EPIPE)
			continue;
		if (len <= 0)
			break;
		rec[len] = 0;
		char *msg = strchr(rec, ';');

		msg = msg ? msg + 1 : rec;
		for (int i = 0; i < N(accel_test_splats); i++) {
			if (strstr(msg, accel_test_splats[i])) {
				char *nl = strchr(msg, '\n');

				if (nl)
					*nl = 0;
				if (n < 60)
					printf("# kernel: %s\n", msg);
				n++;
				break;
			}
		}
	}
	return n;
}

/* ------------------------------------------------------------------ */
/* The supervisor.                                                       */

struct opts {
	uint64_t seed;
	double seconds;
	int threads, procs, kill, metric;
};

static double now_s(void)
{
	return (double)now_ns() / 1e9;
}

static pid_t spawn(uint64_t seed, int threads, double deadline)
{
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0)
		_exit(worker(seed, threads, deadline));
	if (pid > 0)
		__atomic_fetch_add(&sh->workers_started, 1, __ATOMIC_RELAXED);
	return pid;
}

/* Wait for @pid up to @secs; true if it was reaped. */
static bool reap_within(pid_t pid, double secs, int *status)
{
	double end = now_s() + secs;

	while (now_s() < end) {
		pid_t w = waitpid(pid, status, WNOHANG);

		if (w == pid)
			return true;
		if (w < 0 && errno == ECHILD)
			return true;
		usleep(10000);
	}
	return false;
}

static void show_stuck(pid_t pid)
{
	char path[64], buf[4096];
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/stack", pid);
	fd = open(path, O_RDONLY);
	if (fd >= 0) {
		n = read(fd, buf, sizeof(buf) - 1);
		if (n > 0) {
			buf[n] = 0;
			printf("# stack of %d:\n", pid);
			for (char *s = strtok(buf, "\n"); s; s = strtok(NULL, "\n"))
				printf("#   %s\n", s);
		}
		close(fd);
	}
	snprintf(path, sizeof(path), "/proc/%d/wchan", pid);
	fd = open(path, O_RDONLY);
	if (fd >= 0) {
		n = read(fd, buf, sizeof(buf) - 1);
		if (n > 0) {
			buf[n] = 0;
			printf("# %d waits in %s\n", pid, buf);
		}
		close(fd);
	}
}

static void on_alarm(int sig)
{
	static const char m[] = "# watchdog: the fuzzer itself hung; giving up\n";

	(void)sig;
	if (write(1, m, sizeof(m) - 1) < 0) {
		/* nothing more to do */
	}
	kill(0, SIGKILL);
	_exit(1);
}

static void print_summary(double elapsed)
{
	uint64_t total = sh->total;
	int icov = 0, itot = 0, ucov = 0, utot = 0;

	printf("# %-26s %10s  %s\n", "op", "calls", "results (errno: count)");
	for (int i = 0; i < NOPS; i++) {
		char line[1024];
		int len = 0;

		if (ops[i].kind == K_IOCTL && op_enabled[i]) {
			itot++;
			icov += sh->calls[i] > 0;
		} else if (ops[i].kind == K_URING && op_enabled[i]) {
			utot++;
			ucov += sh->calls[i] > 0;
		}
		line[0] = 0;
		for (int e = 0; e < NERR && len < (int)sizeof(line) - 40; e++) {
			if (!sh->hist[i][e])
				continue;
			len += snprintf(line + len, sizeof(line) - len, " %s:%" PRIu64,
					e == 0 ? "ok" : e == NERR - 1 ? "other" : ename(e),
					sh->hist[i][e]);
		}
		printf("# %-26s %10" PRIu64 " %s%s\n", ops[i].name, sh->calls[i],
		       op_enabled[i] ? "" : "(skipped)", line);
	}
	printf("# coverage: %d/%d ioctls, %d/%d uring_cmds called (of those not skipped)\n",
	       icov, itot, ucov, utot);
	printf("# workers: %" PRIu64 " started, %" PRIu64 " killed mid-run\n",
	       sh->workers_started, sh->workers_killed);
	printf("# total calls: %" PRIu64 " in %.1f s, %.0f calls/s\n", total,
	       elapsed, elapsed > 0 ? total / elapsed : 0.0);
}

static int parse_ops(char *list, bool val)
{
	for (char *s = strtok(list, ","); s; s = strtok(NULL, ",")) {
		int found = 0;

		for (int i = 0; i < NOPS; i++)
			if (!strcmp(ops[i].name, s)) {
				op_enabled[i] = val;
				found = 1;
			}
		if (!found) {
			fprintf(stderr, "accel-fuzz: no op '%s' (--list)\n", s);
			return -1;
		}
	}
	return 0;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: accel-fuzz [--seed N] [--seconds S] [--threads T] [--procs P]\n"
		"                  [--skip op,op] [--only op,op] [--no-kill] [--metric] [--list]\n");
}

int main(int argc, char **argv)
{
	struct opts o = { .seconds = 30, .threads = 2, .procs = 2, .kill = 1 };
	bool seeded = false;
	char *scale_s = getenv("ACCEL_TEST_TIMEOUT_SCALE");
	int scale = scale_s && atoi(scale_s) > 0 ? atoi(scale_s) : 1;

	for (int i = 0; i < NOPS; i++)
		op_enabled[i] = true;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--seed") && v) {
			o.seed = strtoull(v, NULL, 0), seeded = true, i++;
		} else if (!strcmp(a, "--seconds") && v) {
			o.seconds = atof(v), i++;
		} else if (!strcmp(a, "--threads") && v) {
			o.threads = atoi(v), i++;
		} else if (!strcmp(a, "--procs") && v) {
			o.procs = atoi(v), i++;
		} else if (!strcmp(a, "--skip") && v) {
			if (parse_ops(v, false))
				return 1;
			i++;
		} else if (!strcmp(a, "--only") && v) {
			for (int k = 0; k < NOPS; k++)
				op_enabled[k] = false;
			if (parse_ops(v, true))
				return 1;
			i++;
		} else if (!strcmp(a, "--no-kill")) {
			o.kill = 0;
		} else if (!strcmp(a, "--metric")) {
			o.metric = 1;
		} else if (!strcmp(a, "--list")) {
			for (int k = 0; k < NOPS; k++)
				printf("%s\n", ops[k].name);
			return 0;
		} else {
			usage();
			return 1;
		}
	}
	if (o.threads < 1)
		o.threads = 1;
	if (o.procs < 1)
		o.procs = 1;
	if (!seeded)
		o.seed = now_ns() ^ ((uint64_t)getpid() << 32);
	build_pick_table();
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("seed: %" PRIu64 "\n", o.seed);
	printf("KTAP version 1\n1..5\n");
	printf("# accel-fuzz: %.0f s, %d procs x %d threads, kills %s; replay: "
	       "--seed %" PRIu64 " --seconds %.0f --threads %d --procs %d\n",
	       o.seconds, o.procs, o.threads, o.kill ? "on" : "off", o.seed,
	       o.seconds, o.threads, o.procs);
	if (!nop_pick) {
		printf("# no op enabled\n");
		return 1;
	}
	if (access("/dev/" ACCEL_DEVICE_NAME, F_OK)) {
		printf("# /dev/%s is missing\n", ACCEL_DEVICE_NAME);
		for (int i = 1; i <= 5; i++)
			printf("not ok %d fuzz # no device\n", i);
		return 1;
	}

	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return 1;
	int kfd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (kfd >= 0)
		lseek(kfd, 0, SEEK_END);
	signal(SIGALRM, on_alarm);
	alarm((unsigned int)o.seconds + 120 * scale);
	setpgid(0, 0);

	struct rng r = { o.seed };
	pid_t *pids = calloc(o.procs, sizeof(pid_t));
	uint64_t gen = 0;
	double t0 = now_s(), deadline = t0 + o.seconds, next_kill;
	bool hang = false, crashed = false;
	int status;

	for (int i = 0; i < o.procs; i++)
		pids[i] = spawn(splitmix(&(uint64_t){ o.seed + ++gen }), o.threads, deadline);
	next_kill = now_s() + 0.5 + rn(&r, 1500) / 1000.0;
	double next_report = t0 + 5;

	while (now_s() < deadline) {
		usleep(20000);
		/* A rate so far, should the kernel not let the run end. */
		if (now_s() >= next_report) {
			printf("# progress: %.0f s, %" PRIu64 " calls, %.0f calls/s\n",
			       now_s() - t0, sh->total, sh->total / (now_s() - t0));
			next_report += 5;
		}
		for (int i = 0; i < o.procs; i++) {
			pid_t w = waitpid(pids[i], &status, WNOHANG);

			if (w != pids[i])
				continue;
			if (!WIFEXITED(status) || WEXITSTATUS(status)) {
				printf("# worker %d ended early: %s %d\n", w,
				       WIFSIGNALED(status) ? "signal" : "status",
				       WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
				crashed = true;
			}
			pids[i] = spawn(splitmix(&(uint64_t){ o.seed + ++gen }), o.threads, deadline);
		}
		if (o.kill && now_s() >= next_kill && now_s() < deadline - 1) {
			int i = rn(&r, o.procs);

			kill(pids[i], SIGKILL);
			__atomic_fetch_add(&sh->workers_killed, 1, __ATOMIC_RELAXED);
			if (!reap_within(pids[i], 20.0 * scale, &status)) {
				printf("# worker %d did not die of SIGKILL in %d s\n",
				       pids[i], 20 * scale);
				show_stuck(pids[i]);
				hang = true;
				break;
			}
			pids[i] = spawn(splitmix(&(uint64_t){ o.seed + ++gen }), o.threads, deadline);
			next_kill = now_s() + 0.5 + rn(&r, 1500) / 1000.0;
		}
	}
	/* The workers stop on their own at the deadline. */
	for (int i = 0; i < o.procs && !hang; i++) {
		if (!reap_within(pids[i], 30.0 * scale, &status)) {
			printf("# worker %d did not stop in %d s; SIGKILL\n", pids[i], 30 * scale);
			show_stuck(pids[i]);
			kill(pids[i], SIGKILL);
			if (!reap_within(pids[i], 20.0 * scale, &status)) {
				printf("# worker %d did not die of SIGKILL\n", pids[i]);
				hang = true;
			}
			continue;
		}
		if (WIFEXITED(status) && WEXITSTATUS(status) == 3)
			hang = true;
		else if (!WIFEXITED(status) || WEXITSTATUS(status)) {
			printf("# worker %d: %s %d\n", pids[i],
			       WIFSIGNALED(status) ? "signal" : "status",
			       WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
			crashed = true;
		}
	}
	double elapsed = now_s() - t0;

	if (hang) {
		for (int i = 0; i < o.procs; i++)
			kill(pids[i], SIGKILL);
	}
	bool reaped = waitpid(-1, &status, WNOHANG) < 0 && errno == ECHILD;
	alarm(60 * scale);
	bool works = device_works();

	usleep(200000);
	int nsplat = kmsg_scan(kfd);

	print_summary(elapsed);
	uint64_t nv = sh->violations;

	for (uint64_t i = 0; i < nv && i < NVIOL_MSG; i++)
		printf("# violation: %s\n", sh->msg[i]);
	if (crashed)
		printf("# a worker crashed (the fuzzer's own bug, or a kernel one)\n");
	printf("%s 1 fuzz_no_unexpected_errno\n", nv || crashed ? "not ok" : "ok");
	printf("%s 2 fuzz_no_hang\n", hang ? "not ok" : "ok");
	printf("%s 3 fuzz_children_reaped\n", reaped ? "ok" : "not ok");
	printf("%s 4 fuzz_device_works\n", works ? "ok" : "not ok");
	printf("%s 5 fuzz_kernel_log_clean\n", nsplat ? "not ok" : "ok");
	int fails = !!(nv || crashed) + hang + !reaped + !works + !!nsplat;

	printf("# Totals: pass:%d fail:%d xfail:0 xpass:0 skip:0 error:0\n",
	       5 - fails, fails);
	if (o.metric)
		printf("METRIC fuzz.calls_per_s %.0f\n",
		       elapsed > 0 ? sh->total / elapsed : 0.0);
	printf("# seed: %" PRIu64 "\n", o.seed);
	return fails ? 1 : 0;
}
