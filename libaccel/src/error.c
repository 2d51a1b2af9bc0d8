// SPDX-License-Identifier: MIT
/*
 * Errors: the per-thread message behind accel_error_message().
 *
 * Functions return -errno; the message explains it to a person. The buffer is
 * thread-local, so threads never see each other's messages and no lock is
 * needed. A failure overwrites it; a success leaves it alone (like errno).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "accel/status.h"
#include "error.h"

static _Thread_local char accel_error_buf[ACCEL_ERROR_MAX];

ACCEL_EXPORT const char *accel_error_message(void)
{
	return accel_error_buf;
}

int accel_fail(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(accel_error_buf, sizeof(accel_error_buf), fmt, ap);
	va_end(ap);
	return -err;
}

void accel_error_save(char *saved)
{
	memcpy(saved, accel_error_buf, strlen(accel_error_buf) + 1);
}

void accel_error_restore(const char *saved)
{
	memcpy(accel_error_buf, saved, strlen(saved) + 1);
}

int accel_fail_at(int err, const char *fn, const char *where)
{
	char text[ACCEL_ERROR_MAX];
	size_t n = strlen(fn);
	const char *rest = accel_error_buf;

	if (!strncmp(rest, fn, n) && !strncmp(rest + n, ": ", 2))
		rest += n + 2;
	snprintf(text, sizeof(text), "%s", rest);
	return accel_fail(err, "%s: %s: %s", fn, where, text);
}

char *accel_strfmt(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	return buf;
}

const char *accel_errno_name(int err)
{
	static _Thread_local char unknown[32];
	const char *name = strerrorname_np(err);

	if (name)
		return name;
	return accel_strfmt(unknown, sizeof(unknown), "errno %d", err);
}

const char *accel_file_type(mode_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG:
		return "regular file";
	case S_IFDIR:
		return "directory";
	case S_IFSOCK:
		return "socket";
	case S_IFIFO:
		return "FIFO";
	case S_IFBLK:
		return "block device";
	case S_IFLNK:
		return "symbolic link";
	case S_IFCHR:
		return "character device";
	}
	return "file of unknown type";
}
