/* SPDX-License-Identifier: MIT */
/*
 * Internal: the io_uring fast path to the accelsched device.
 *
 * liburing 2.3 (Debian bookworm) has no io_uring_prep_uring_cmd(), so the
 * SQE is filled by hand: IORING_OP_URING_CMD on the device fd, the opcode in
 * sqe->cmd_op and the 16-byte payload in sqe->cmd.
 */
#ifndef ACCEL_SRC_URING_H
#define ACCEL_SRC_URING_H

#include <liburing.h>
#include <stddef.h>
#include <stdint.h>

/* Entries of the ring each kernel scheduler sets up (its SUBMIT batches). */
#define ACCEL_URING_ENTRIES 64
/* How long the NOP probe waits for its completion, in milliseconds. */
#define ACCEL_URING_PROBE_TIMEOUT_MS 2000

/*
 * accel_uring_setup() - set up @ring and send one ACCEL_URING_CMD_NOP on @fd.
 * @features: the module's ACCEL_FEATURE_* bits; without URING_CMD no ring
 *            is made. With URING_SEQ the ring has big CQEs
 *            (IORING_SETUP_CQE32), whose second word orders releases; with
 *            URING_INLINE_JOB big SQEs (IORING_SETUP_SQE128), which carry a
 *            whole job.
 *
 * Returns 0 with @ring live (free it with io_uring_queue_exit()), or a
 * negative errno with @ring torn down and @why saying what failed and how to
 * fix it.
 */
int accel_uring_setup(struct io_uring *ring, int fd, uint64_t features,
		      unsigned int *sqpoll_ms, char *why, size_t why_len);

/* ACCEL_URING_SQPOLL's largest idle time, in milliseconds. */
#define ACCEL_URING_SQPOLL_MAX_MS 10000

/*
 * accel_uring_sqpoll_ms() - the submission-queue polling asked for by
 * ACCEL_URING_SQPOLL: its idle time in milliseconds, or 0 for none (unset,
 * "0", or a value that is not 1..ACCEL_URING_SQPOLL_MAX_MS, which @note
 * then explains; @note is "" otherwise).
 */
unsigned int accel_uring_sqpoll_ms(char *note, size_t note_len);

/*
 * accel_uring_explain_init() - why io_uring_queue_init() failed with -@err,
 * naming the sysctl, seccomp or RLIMIT_MEMLOCK (with its current value)
 * behind it.
 */
void accel_uring_explain_init(int err, char *why, size_t why_len);

/*
 * accel_uring_cmd() - submit one uring_cmd and wait for its completion.
 * @payload: at most 16 bytes, copied into sqe->cmd.
 *
 * Returns the CQE's res (the command's result), -ETIME when no completion
 * came within @timeout_ms, or the negative errno of the submission.
 */
int accel_uring_cmd(struct io_uring *ring, int fd, uint32_t cmd_op,
		    const void *payload, size_t size, unsigned int timeout_ms);

#endif /* ACCEL_SRC_URING_H */
