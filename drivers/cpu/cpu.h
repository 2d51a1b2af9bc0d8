/* SPDX-License-Identifier: MIT */
/*
 * The cpu driver: devices, buffers in host memory, executables that are
 * shared objects (accel/cpu_executable.h), and the replay of recorded
 * command buffers through the binding plan.
 *
 * This first version runs every command on the queue's executor thread,
 * one after the other (which honours every barrier trivially); the
 * multi-threaded version splits dispatches across a pool by workgroup and
 * runs the commands between two barriers concurrently.
 */
#ifndef ACCEL_DRIVERS_CPU_H
#define ACCEL_DRIVERS_CPU_H

#include "src/core.h"

extern const struct accel_device_ops accel_cpu_device_ops;

int accel_cpu_executable_load(accel_device_t *d, const char *path,
			      accel_executable_t **out);
int accel_cpu_execute(accel_device_t *d, struct accel_cb_exec *x);

#endif /* ACCEL_DRIVERS_CPU_H */
