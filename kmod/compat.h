/* SPDX-License-Identifier: GPL-2.0 */
/*
 * DOC: kernel compatibility
 *
 * Every difference between the kernels accelsched builds on lives in this
 * file and nowhere else. The ACCEL_HAVE_* answers come from compile probes
 * (scripts/conftest.sh) run against the target kernel's headers, never from
 * LINUX_VERSION_CODE: distribution kernels carry backports, and Debian's 6.1
 * already has interfaces that mainline got in 6.3.
 *
 * The rest of the module uses only the accel_* wrappers below.
 */
#ifndef _ACCEL_COMPAT_H
#define _ACCEL_COMPAT_H

#include "compat-probed.h"

#include <linux/io_uring.h>
#include <linux/io_uring_types.h>
#include <linux/percpu-refcount.h>
#include <linux/sched/signal.h>
#ifdef ACCEL_HAVE_IO_URING_CMD_H
#include <linux/io_uring/cmd.h>
#endif

/**
 * accel_uring_cmd_payload() - the command area of a uring_cmd's SQE.
 * @cmd: the command.
 *
 * Return: a pointer to sqe->cmd. It points into the submission ring, which
 * userspace can still write: read each field once (READ_ONCE or a copy).
 */
static inline const void *accel_uring_cmd_payload(const struct io_uring_cmd *cmd)
{
#ifdef ACCEL_HAVE_IO_URING_CMD_SQE
	return io_uring_sqe_cmd(cmd->sqe);
#else
	return cmd->cmd;
#endif
}

/* ACCEL_URING_RES2 - a uring_cmd's CQE can carry a second word (res2). */
#if defined(ACCEL_HAVE_IO_URING_CMD_DONE_RES2) || defined(ACCEL_HAVE_IO_URING_CMD_DONE32)
#define ACCEL_URING_RES2 1
#else
#define ACCEL_URING_RES2 0
#endif

/**
 * accel_uring_cmd_done() - post the CQE of an asynchronously completed
 * uring_cmd.
 * @cmd:         the command.
 * @ret:         the CQE's res: 0 or a negative errno.
 * @res2:        the second word of a big CQE (IORING_SETUP_CQE32 rings;
 *               other rings drop it).
 * @issue_flags: the flags io_uring passed to the callback we run in.
 */
static inline void accel_uring_cmd_done(struct io_uring_cmd *cmd, ssize_t ret,
					u64 res2, unsigned int issue_flags)
{
#if defined(ACCEL_HAVE_IO_URING_CMD_DONE_RES2)
	io_uring_cmd_done(cmd, ret, res2, issue_flags);
#elif defined(ACCEL_HAVE_IO_URING_CMD_DONE32)
	io_uring_cmd_done32(cmd, ret, res2, issue_flags);
#else
	/* No res2 at all: release CQEs then carry no sequence (it reads 0). */
	io_uring_cmd_done(cmd, ret, issue_flags);
#endif
}

/*
 * ACCEL_URING_CANCELABLE - ring exit cancels pending commands through
 * IO_URING_F_CANCEL. Without it (6.1), the module must complete every
 * pending command by itself before the submitter's exit can finish.
 */
#ifdef ACCEL_HAVE_IO_URING_CMD_CANCELABLE
#define ACCEL_URING_CANCELABLE 1
#define ACCEL_IO_URING_F_CANCEL IO_URING_F_CANCEL
static inline void accel_uring_cmd_mark_cancelable(struct io_uring_cmd *cmd,
						   unsigned int issue_flags)
{
	io_uring_cmd_mark_cancelable(cmd, issue_flags);
}
#else
#define ACCEL_URING_CANCELABLE 0
#define ACCEL_IO_URING_F_CANCEL 0
static inline void accel_uring_cmd_mark_cancelable(struct io_uring_cmd *cmd,
						   unsigned int issue_flags)
{
}
#endif

/*
 * accel_uring_cmd_pdu() - the 32 bytes of per-command private space.
 */
#define accel_uring_cmd_pdu(cmd, type)                                        \
	({                                                                    \
		BUILD_BUG_ON(sizeof(type) > sizeof_field(struct io_uring_cmd, pdu)); \
		(type *)&(cmd)->pdu;                                          \
	})

#ifndef ACCEL_HAVE_IO_URING_TW_ISSUE_FLAGS
#error "accelsched needs io_uring task-work callbacks that take issue_flags (Linux 6.3+, or a kernel with that backport)"
#endif

/**
 * accel_uring_cmd_ring_dying() - the ring of a pending command is being
 * torn down. Only needed where io_uring cannot cancel uring_cmds itself
 * (!ACCEL_URING_CANCELABLE): there, ring exit would wait for the command
 * forever, so the module's monitor completes it.
 */
static inline bool accel_uring_cmd_ring_dying(struct io_uring_cmd *cmd)
{
#if !ACCEL_URING_CANCELABLE && defined(ACCEL_HAVE_IO_URING_CTX_REFS)
	return percpu_ref_is_dying(&cmd_to_io_kiocb(cmd)->ctx->refs);
#else
	return false;
#endif
}

/**
 * accel_uring_cmd_abandoned() - the pending command @cmd, issued by @t, has
 * no one left to reap it: @t's process is going (a fatal signal, a group
 * exit, its last thread exiting), @t is exec'ing, or the ring is being torn
 * down. Only needed where io_uring cannot cancel uring_cmds itself
 * (!ACCEL_URING_CANCELABLE), and the kernels that can cancel them do it on
 * just these events: an exec (io_uring_task_cancel() cancels all of the
 * task's requests) and the ring's exit. One thread exiting is none of
 * them: io_uring leaves that thread's uring_cmds pending (it waits only for
 * its tracked requests, which uring_cmds are not) and the ring's other
 * users reap their completions. So PF_EXITING alone means nothing here;
 * taken for the owner's death, it failed every pending job a thread had
 * submitted before it exited while its process went on.
 *
 * @t is held by the caller, so t->signal is valid.
 */
static inline bool accel_uring_cmd_abandoned(struct task_struct *t,
					     struct io_uring_cmd *cmd)
{
	if (fatal_signal_pending(t) ||
	    (READ_ONCE(t->signal->flags) & SIGNAL_GROUP_EXIT) ||
	    ((t->flags & PF_EXITING) && !atomic_read(&t->signal->live)) ||
	    t->in_execve)
		return true;
	return accel_uring_cmd_ring_dying(cmd);
}

/* eventfd_signal() lost its count argument in 6.8. */
#include <linux/eventfd.h>
static inline void accel_eventfd_signal(struct eventfd_ctx *ctx)
{
#ifdef ACCEL_HAVE_EVENTFD_SIGNAL_1ARG
	eventfd_signal(ctx);
#else
	eventfd_signal(ctx, 1);
#endif
}

/* Tracepoints: __assign_str() lost its source argument in 6.10. */
#ifdef ACCEL_HAVE_ASSIGN_STR_1ARG
#define __assign_str_compat(dst, src) __assign_str(dst)
#else
#define __assign_str_compat(dst, src) __assign_str(dst, src)
#endif

/*
 * Point fences carry 64-bit points: their seqnos must be compared on 64
 * bits (sync_file merges, dma_resv, every driver's is_later), declared by
 * an ops field (6.1, 6.12) or a fence flag (later kernels).
 */
#include <linux/dma-fence.h>
#if defined(ACCEL_HAVE_FENCE_OPS_64BIT_SEQNO)
#define ACCEL_FENCE_OPS_SEQNO64 .use_64bit_seqno = true,
static inline void accel_fence_set_seqno64(struct dma_fence *f) { }
#elif defined(ACCEL_HAVE_FENCE_FLAG_SEQNO64)
#define ACCEL_FENCE_OPS_SEQNO64
static inline void accel_fence_set_seqno64(struct dma_fence *f)
{
	__set_bit(DMA_FENCE_FLAG_SEQNO64_BIT, &f->flags);
}
#else
#error "accelsched: this kernel's dma_fence has no 64-bit seqno; points would compare on 32 bits"
#endif

/*
 * Fence deadlines (dma_fence_set_deadline(), 6.3+): a consumer's deadline on
 * a point's fence reaches the job that promised the point. Without them the
 * ops have no such member and nothing calls it; ACCEL_IOCTL_SYNCOBJ_SET_DEADLINE
 * still works.
 */
#ifdef ACCEL_HAVE_FENCE_SET_DEADLINE
#define ACCEL_FENCE_DEADLINE 1
#define ACCEL_FENCE_OPS_DEADLINE(fn) .set_deadline = (fn),
#else
#define ACCEL_FENCE_DEADLINE 0
#define ACCEL_FENCE_OPS_DEADLINE(fn)
#endif

#endif /* _ACCEL_COMPAT_H */
