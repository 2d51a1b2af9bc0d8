/* SPDX-License-Identifier: MIT */
/*
 * Internal: the public headers restate a few values of the kernel ABI
 * (uapi/accelsched.h) so that programs need not include the uapi header.
 * This keeps the two in step at compile time.
 */
#ifndef ACCEL_SRC_UAPI_CHECK_H
#define ACCEL_SRC_UAPI_CHECK_H

#include <accelsched.h>

#include "accel/scheduler.h"
#include "accel/semaphore.h"

_Static_assert(ACCEL_SCHEDULER_FEATURE_URING_CMD == ACCEL_FEATURE_URING_CMD,
	       "feature bit differs from the ABI");
_Static_assert(ACCEL_SCHEDULER_FEATURE_URING_CANCEL ==
	       ACCEL_FEATURE_URING_CANCEL,
	       "feature bit differs from the ABI");
_Static_assert(ACCEL_SCHEDULER_FEATURE_JOB_DEADLINE == ACCEL_FEATURE_JOB_DEADLINE,
	       "feature bit differs from the ABI");
_Static_assert(sizeof(((accel_scheduler_info_t *)0)->module_version) >=
	       sizeof(((struct accel_info *)0)->version),
	       "module_version is shorter than the ABI's version");
_Static_assert(sizeof(((accel_scheduler_info_t *)0)->kernel_release) >=
	       sizeof(((struct accel_info *)0)->kernel_release),
	       "kernel_release is shorter than the ABI's");

_Static_assert(ACCEL_SEMAPHORE_WAIT_ALL == ACCEL_WAIT_ALL &&
	       ACCEL_SEMAPHORE_WAIT_SUBMITTED == ACCEL_WAIT_SUBMITTED,
	       "wait flags differ from the ABI");
_Static_assert(ACCEL_SEMAPHORE_LIST_MAX == ACCEL_WAIT_MAX_COUNT,
	       "list limit differs from the ABI");
_Static_assert(ACCEL_SEMAPHORE_MAX_ERROR == ACCEL_MAX_ERRNO,
	       "error range differs from the ABI");

#endif /* ACCEL_SRC_UAPI_CHECK_H */
