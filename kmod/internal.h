/* SPDX-License-Identifier: GPL-2.0 */
/*
 * accelsched: declarations shared by the module's files. Nothing here is
 * ABI; the ABI is uapi/accelsched.h.
 */
#ifndef _ACCEL_INTERNAL_H
#define _ACCEL_INTERNAL_H

#include <linux/atomic.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/types.h>

#include "compat.h"
#include <accelsched.h>

#define ACCEL_MODULE_VERSION "0.1.0"

/**
 * struct accel_device - the one /dev/accelsched instance.
 * @misc:           the misc device; its registration is the module's life.
 * @next_client_id: source of &accel_file.client_id values; never reused
 *                  while the module is loaded.
 */
struct accel_device {
	struct miscdevice misc;
	atomic64_t next_client_id;
};

/**
 * struct accel_file - the state of one open file of /dev/accelsched.
 * @adev:      the device it was opened on.
 * @client_id: unique id of this open file (fdinfo, debugfs, traces).
 *
 * Everything a process creates through the device hangs off its file, so
 * closing the file (or the process dying) releases it all.
 */
struct accel_file {
	struct accel_device *adev;
	u64 client_id;
};

extern struct accel_device accel_dev;

long accel_ioctl(struct file *file, unsigned int cmd, unsigned long arg);
int accel_uring_cmd(struct io_uring_cmd *cmd, unsigned int issue_flags);
int accel_nop(const struct accel_nop *nop);
void accel_fill_info(struct accel_file *afile, struct accel_info *info);

#endif /* _ACCEL_INTERNAL_H */
