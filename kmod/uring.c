// SPDX-License-Identifier: GPL-2.0
/*
 * DOC: io_uring commands
 *
 * ``IORING_OP_URING_CMD`` on the device fd is the fast path. ``sqe->cmd_op``
 * is one of the ``ACCEL_URING_CMD_*`` values, which are encoded like ioctl
 * numbers and carry the payload's size; the payload is the first bytes of
 * ``sqe->cmd`` (16 bytes in a normal 64-byte SQE, so no SQE128 ring is
 * needed), except for ACCEL_URING_CMD_JOB_SUBMIT_INLINE, whose payload is a
 * whole job and needs the 80 command bytes of an IORING_SETUP_SQE128 ring
 * (on a ring of 64-byte SQEs it is refused with -EINVAL, since the bytes past
 * the 16th would be the next SQE's). The payload is copied once out of the
 * submission ring, which userspace may still be writing, before anything
 * looks at it.
 *
 * A command that completes at once returns its result and io_uring posts it
 * as the CQE's ``res``; only a command that truly waits returns
 * ``-EIOCBQUEUED`` and completes later. An unknown opcode is ``-ENOTTY``, as
 * for ioctls.
 */
#include <linux/string.h>

#include "internal.h"

/*
 * The payload commands: each copies its payload out of the SQE into a local
 * of its own, here, so that accel_uring_cmd() has no local whose address is
 * taken. Such a local gives it a stack frame and a stack-protector canary
 * on every command, a SUBMIT (a tail call with none) included.
 */
static noinline int accel_uring_nop(const struct io_uring_cmd *cmd)
{
	struct accel_nop nop;

	memcpy(&nop, accel_uring_cmd_payload(cmd), sizeof(nop));
	return accel_nop(&nop);
}

static noinline int accel_uring_signal(struct accel_file *afile,
				       const struct io_uring_cmd *cmd)
{
	struct accel_syncobj_signal sig;

	memcpy(&sig, accel_uring_cmd_payload(cmd), sizeof(sig));
	return accel_syncobj_do_signal(afile, &sig);
}

/**
 * accel_uring_cmd() - the device's uring_cmd file operation.
 * @cmd:         the command.
 * @issue_flags: io_uring's issue flags.
 *
 * Context: process context (the submitter, or an io-wq worker).
 * Return: the command's result, or -EIOCBQUEUED when it completes later.
 */
int accel_uring_cmd(struct io_uring_cmd *cmd, unsigned int issue_flags)
{
	struct accel_file *afile = cmd->file->private_data;
	u32 op = cmd->cmd_op;

	/* The hot command first: one compare on the submission path. */
	if (likely(op == ACCEL_URING_CMD_JOB_SUBMIT_INLINE &&
		   !(issue_flags & ACCEL_IO_URING_F_CANCEL)))
		return accel_uring_job_submit_inline(afile, cmd, issue_flags);

	/*
	 * io_uring cancelling a pending command at ring or task exit: only
	 * WAITs and SUBMITs are ever left pending (and marked cancelable).
	 */
	if (issue_flags & ACCEL_IO_URING_F_CANCEL) {
		if (op == ACCEL_URING_CMD_SYNCOBJ_WAIT)
			accel_uring_wait_cancel(cmd, issue_flags);
		else if (op == ACCEL_URING_CMD_JOB_SUBMIT ||
			 op == ACCEL_URING_CMD_JOB_SUBMIT_INLINE)
			accel_uring_job_cancel(cmd, issue_flags);
		return 0;
	}

	switch (op) {
	case ACCEL_URING_CMD_NOP:
		return accel_uring_nop(cmd);
	case ACCEL_URING_CMD_SYNCOBJ_SIGNAL:
		return accel_uring_signal(afile, cmd);
	case ACCEL_URING_CMD_SYNCOBJ_WAIT:
		return accel_uring_wait(afile, cmd, issue_flags);
	case ACCEL_URING_CMD_JOB_SUBMIT:
		return accel_uring_job_submit(afile, cmd, issue_flags);
	case ACCEL_URING_CMD_JOB_COMPLETE:
		return accel_uring_job_complete(afile, cmd);
	default:
		return -ENOTTY;
	}
}
