/* SPDX-License-Identifier: MIT */
/*
 * Internal: setting the calling thread's error message, and formatting the
 * explanations that become messages and reasons.
 */
#ifndef ACCEL_SRC_ERROR_H
#define ACCEL_SRC_ERROR_H

#include <stddef.h>
#include <sys/types.h>

#include "macros.h"

/* Size of the per-thread message buffer, NUL included. */
#define ACCEL_ERROR_MAX 2048

/*
 * accel_fail() - record why the current call fails and return -@err.
 * @err: a positive errno.
 *
 * Public entry points end a failure with "return accel_fail(EINVAL, ...)".
 * The message should start with the public function's name and say which
 * argument, limit or path was wrong and what would fix it.
 */
int accel_fail(int err, const char *fmt, ...) ACCEL_PRINTF(2, 3);

/*
 * accel_fail_at() - name where in its arguments the current failure of
 * @fn lies: the message "fn: text" becomes "fn: @where: text". Returns
 * -@err.
 */
int accel_fail_at(int err, const char *fn, const char *where);

/*
 * accel_error_save() / accel_error_restore() - keep the calling thread's
 * message across an internal call that may set it, in a call that
 * succeeds (a success leaves the message alone). @saved holds
 * ACCEL_ERROR_MAX bytes.
 */
void accel_error_save(char *saved);
void accel_error_restore(const char *saved);

/*
 * accel_strfmt() - snprintf() into @buf of @len bytes; the text is silently
 * truncated to fit. Returns @buf, so that a caller can format an argument.
 */
char *accel_strfmt(char *buf, size_t len, const char *fmt, ...)
	ACCEL_PRINTF(3, 4);

/*
 * accel_errno_name() - "ENOENT" for ENOENT; "errno <n>" (in a thread-local
 * buffer, valid until the thread's next call) for values glibc cannot name.
 */
const char *accel_errno_name(int err);

/*
 * accel_file_type() - what a file's st_mode says it is, as a noun without
 * its article: "regular file", "directory", "FIFO", "character device"...
 */
const char *accel_file_type(mode_t mode);

#endif /* ACCEL_SRC_ERROR_H */
