// SPDX-License-Identifier: MIT
/*
 * The ABI header's contract, checked at compile time: every struct's size
 * and every field's offset is fixed, 8-byte aligned sizes, no implicit
 * padding. Built as C99 (-std=c99 -pedantic) and as C++ by meson, so the
 * header is usable from both. A change here is an ABI change: it needs a new
 * ACCEL_ABI_MINOR (growth at a struct's end) or ACCEL_ABI_MAJOR (anything
 * else).
 */
#include <stddef.h>
#include <stdio.h>

#include <accelsched.h>

#ifdef __cplusplus
#define ABI_ASSERT(c, m) static_assert(c, m)
#else
#define ABI_ASSERT(c, m) _Static_assert(c, m)
#endif

#define SIZE(t, n) ABI_ASSERT(sizeof(struct t) == (n), #t " size changed")
#define OFF(t, f, n) ABI_ASSERT(offsetof(struct t, f) == (n), #t "." #f " moved")

SIZE(accel_info, 152);
OFF(accel_info, abi_major, 0);
OFF(accel_info, abi_minor, 4);
OFF(accel_info, features, 8);
OFF(accel_info, client_id, 16);
OFF(accel_info, version, 24);
OFF(accel_info, kernel_release, 56);
OFF(accel_info, reserved, 120);

SIZE(accel_nop, 16);
OFF(accel_nop, flags, 0);
OFF(accel_nop, result, 4);
OFF(accel_nop, cookie, 8);

SIZE(accel_syncobj_create, 16);
OFF(accel_syncobj_create, initial, 0);
OFF(accel_syncobj_create, handle, 12);
SIZE(accel_syncobj_destroy, 8);
SIZE(accel_syncobj_query, 32);
OFF(accel_syncobj_query, value, 8);
OFF(accel_syncobj_query, submitted, 16);
OFF(accel_syncobj_query, error, 24);
SIZE(accel_syncobj_signal, 16);
OFF(accel_syncobj_signal, value, 8);
SIZE(accel_syncobj_fail, 8);
SIZE(accel_syncobj_wait, 40);
OFF(accel_syncobj_wait, handles, 0);
OFF(accel_syncobj_wait, points, 8);
OFF(accel_syncobj_wait, deadline, 16);
OFF(accel_syncobj_wait, count, 24);
OFF(accel_syncobj_wait, flags, 28);
OFF(accel_syncobj_wait, index, 32);
SIZE(accel_syncobj_handle_fd, 16);
OFF(accel_syncobj_handle_fd, fd, 8);
SIZE(accel_syncobj_sync_file, 24);
OFF(accel_syncobj_sync_file, point, 8);
OFF(accel_syncobj_sync_file, fd, 16);
SIZE(accel_syncobj_eventfd, 24);
OFF(accel_syncobj_eventfd, fd, 16);
SIZE(accel_syncobj_cancel, 24);
OFF(accel_syncobj_cancel, cancelled, 16);
SIZE(accel_syncobj_deadline, 24);
OFF(accel_syncobj_deadline, point, 8);
OFF(accel_syncobj_deadline, deadline_ns, 16);
SIZE(accel_uring_wait, 16);
OFF(accel_uring_wait, point, 0);
OFF(accel_uring_wait, handle, 8);

SIZE(accel_queue_create, 56);
OFF(accel_queue_create, priority, 32);
OFF(accel_queue_create, handle, 48);
SIZE(accel_queue_destroy, 8);
SIZE(accel_point, 16);
OFF(accel_point, point, 8);
SIZE(accel_job, 56);
OFF(accel_job, waits, 8);
OFF(accel_job, signals, 16);
OFF(accel_job, timeout_ns, 24);
OFF(accel_job, nwaits, 32);
OFF(accel_job, queue, 40);
OFF(accel_job, id, 48);
OFF(accel_job, predicted_us, 52);
SIZE(accel_job_submit, 24);
OFF(accel_job_submit, submitted, 16);
SIZE(accel_uring_submit, 16);
SIZE(accel_uring_job, 80);
OFF(accel_uring_job, predicted_us, 72);
ABI_ASSERT(ACCEL_URING_JOB_SIZE_VER0 == 72, "the first inline job changed");
OFF(accel_uring_job, timeout_ns, 8);
OFF(accel_uring_job, queue, 16);
OFF(accel_uring_job, nwaits, 20);
OFF(accel_uring_job, nsignals, 21);
OFF(accel_uring_job, flags, 22);
OFF(accel_uring_job, points, 24);
SIZE(accel_job_complete, 16);
OFF(accel_job_complete, device_ns, 8);
SIZE(accel_job_event, 24);
OFF(accel_job_event, type, 12);
SIZE(accel_job_fetch, 24);
SIZE(accel_job_complete_fetch, 48);
OFF(accel_job_complete_fetch, device_ns, 8);
OFF(accel_job_complete_fetch, events, 16);
OFF(accel_job_complete_fetch, max, 24);
OFF(accel_job_complete_fetch, count, 28);
OFF(accel_job_complete_fetch, result, 32);
OFF(accel_job_complete_fetch, flags, 36);
OFF(accel_job_complete_fetch, passed, 40);
ABI_ASSERT(ACCEL_IOCTL_JOB_COMPLETE_FETCH == 0xc030ac25u, "JOB_COMPLETE_FETCH changed");
ABI_ASSERT(ACCEL_JOB_F_EVENTS == 1 && ACCEL_URING_JOB_F_EVENTS == 2 &&
	   ACCEL_JOB_EVENT_FAILED == 3 && ACCEL_FEATURE_JOB_EVENTS == 1ULL << 10,
	   "job events (ABI 1.8) changed");
ABI_ASSERT(ACCEL_JOB_F_ANSWER == 2 && ACCEL_URING_JOB_F_ANSWER == 4 &&
	   ACCEL_JOB_ID_RELEASED == 1U << 31 && ACCEL_FEATURE_JOB_ANSWER == 1ULL << 11,
	   "job answers (ABI 1.9) changed");
ABI_ASSERT(sizeof(struct accel_uring_submit) <= 16, "SUBMIT payload exceeds sqe->cmd");
ABI_ASSERT(sizeof(struct accel_job_complete) <= 16, "COMPLETE payload exceeds sqe->cmd");
ABI_ASSERT(ACCEL_IOCTL_JOB_SUBMIT == 0xc018ac22u, "JOB_SUBMIT changed");
ABI_ASSERT(ACCEL_URING_CMD_JOB_SUBMIT == 0x4010ac83u, "URING_CMD_JOB_SUBMIT changed");
/* The inline job fits the 80 command bytes of an IORING_SETUP_SQE128 SQE. */
ABI_ASSERT(sizeof(struct accel_uring_job) <= 80, "inline job exceeds a 128-byte sqe->cmd");
ABI_ASSERT(ACCEL_URING_CMD_JOB_SUBMIT_INLINE == 0x4048ac85u, "URING_CMD_JOB_SUBMIT_INLINE changed");

ABI_ASSERT(sizeof(struct accel_syncobj_signal) <= 16, "SIGNAL payload exceeds sqe->cmd");
ABI_ASSERT(sizeof(struct accel_uring_wait) <= 16, "WAIT payload exceeds sqe->cmd");

/* A uring_cmd payload must fit a normal SQE's 16 command bytes. */
ABI_ASSERT(sizeof(struct accel_nop) <= 16, "NOP payload exceeds sqe->cmd");

/* ioctl numbers are ABI too. */
ABI_ASSERT(ACCEL_IOCTL_INFO == 0x8098ac00u, "ACCEL_IOCTL_INFO changed");
ABI_ASSERT(ACCEL_IOCTL_NOP == 0x4010ac01u, "ACCEL_IOCTL_NOP changed");
ABI_ASSERT(ACCEL_URING_CMD_NOP == 0x4010ac80u, "ACCEL_URING_CMD_NOP changed");
ABI_ASSERT(ACCEL_IOCTL_SYNCOBJ_CREATE == 0xc010ac10u, "SYNCOBJ_CREATE changed");
ABI_ASSERT(ACCEL_IOCTL_SYNCOBJ_WAIT == 0xc028ac15u, "SYNCOBJ_WAIT changed");
ABI_ASSERT(ACCEL_IOCTL_SYNCOBJ_CANCEL == 0xc018ac1bu, "SYNCOBJ_CANCEL changed");
ABI_ASSERT(ACCEL_IOCTL_SYNCOBJ_SET_DEADLINE == 0x4018ac1cu, "SYNCOBJ_SET_DEADLINE changed");
ABI_ASSERT(ACCEL_URING_CMD_SYNCOBJ_WAIT == 0x4010ac82u, "URING_CMD_SYNCOBJ_WAIT changed");

int main(void)
{
	printf("uapi: struct sizes, offsets and ioctl numbers as pinned\n");
	return 0;
}
