/* SPDX-License-Identifier: MIT */
/**
 * DOC: accel/accel.h - libaccel, the accelsched userspace library
 *
 * Include this one header to get the whole public API:
 *
 * - accel/version.h:   the library's version, at build and at run time;
 * - accel/status.h:    errors (negative errno) and the per-thread message;
 * - accel/scheduler.h: the scheduler every submission goes through, the
 *   accelsched kernel module's or the embedded in-process one;
 * - accel/device.h:    the driver registry and devices (``cpu://``);
 * - accel/buffer.h:    allocators, buffers, mapping, subspans;
 * - accel/executable.h: executables and their entry points
 *   (accel/cpu_executable.h: the cpu driver's shared-object format);
 * - accel/command_buffer.h: command buffers, buffer refs, binding tables;
 * - accel/semaphore.h: timeline semaphores;
 * - accel/queue.h:     queues and submissions;
 * - accel/transfer.h:  synchronous copies between host and device memory.
 *
 * Link with ``pkg-config --cflags --libs libaccel``. Every public name starts
 * with ``accel_`` (functions, types) or ``ACCEL_`` (macros, constants);
 * functions are named ``accel_<object>_<verb>``.
 *
 * Objects are reference counted (``accel_<object>_retain`` /
 * ``accel_<object>_release``); each header says whether its object is
 * thread-safe or thread-compatible.
 */
#ifndef ACCEL_ACCEL_H
#define ACCEL_ACCEL_H

#include <accel/version.h>
#include <accel/status.h>
#include <accel/scheduler.h>
#include <accel/device.h>
#include <accel/buffer.h>
#include <accel/executable.h>
#include <accel/command_buffer.h>
#include <accel/semaphore.h>
#include <accel/queue.h>
#include <accel/transfer.h>
#include <accel/cost.h>

#endif /* ACCEL_ACCEL_H */
