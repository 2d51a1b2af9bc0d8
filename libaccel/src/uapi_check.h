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

_Static_assert(ACCEL_SCHEDULER_FEATURE_URING_CMD == ACCEL_FEATURE_URING_CMD,
	       "feature bit differs from the ABI");
_Static_assert(ACCEL_SCHEDULER_FEATURE_URING_CANCEL ==
	       ACCEL_FEATURE_URING_CANCEL,
	       "feature bit differs from the ABI");
_Static_assert(sizeof(((accel_scheduler_info_t *)0)->module_version) >=
	       sizeof(((struct accel_info *)0)->version),
	       "module_version is shorter than the ABI's version");
_Static_assert(sizeof(((accel_scheduler_info_t *)0)->kernel_release) >=
	       sizeof(((struct accel_info *)0)->kernel_release),
	       "kernel_release is shorter than the ABI's");

#endif /* ACCEL_SRC_UAPI_CHECK_H */
