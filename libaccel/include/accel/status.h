/* SPDX-License-Identifier: MIT */
/**
 * DOC: accel/status.h - how libaccel reports errors
 *
 * Every libaccel function that can fail returns ``0`` on success or a
 * negative errno (``-EINVAL``, ``-ENOENT``, ...) on failure, and then changes
 * nothing: a creator that fails leaves ``*out == NULL`` and leaks nothing.
 *
 * The errno tells a program what class of failure happened; it is what code
 * should branch on. A person needs more, so every failure also leaves a
 * precise, human-readable message in a buffer private to the calling thread:
 * it names the function, the argument, limit, environment variable or path
 * that was wrong, the value seen, and what would fix it. Read it with
 * accel_error_message() right after the failing call.
 *
 * The message works like ``errno``: a failure overwrites it, a success leaves
 * it alone, so it is only meaningful right after a call that returned a
 * negative value. Messages of different threads never mix.
 */
#ifndef ACCEL_STATUS_H
#define ACCEL_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

/**
 * accel_error_message() - the message of the calling thread's last failure.
 *
 * Return: a NUL-terminated string in a buffer owned by libaccel and private
 * to the calling thread; ``""`` if no libaccel call has failed in this thread
 * yet. The pointer stays valid for the thread's lifetime, but the text is
 * overwritten by the thread's next failing call: copy it to keep it.
 *
 * Thread-safety: thread-safe; every thread has its own message.
 */
const char *accel_error_message(void);

#ifdef __cplusplus
}
#endif

#endif /* ACCEL_STATUS_H */
