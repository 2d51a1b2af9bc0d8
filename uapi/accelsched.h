/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR MIT) */
/*
 * accelsched: the kernel <-> user ABI of /dev/accelsched.
 *
 * This header is the whole contract between accelsched.ko and userspace. It
 * compiles as C99 userspace and inside the kernel; it uses only fixed-width
 * __u8..__u64 types, pads every struct explicitly to a multiple of 8 bytes,
 * and passes pointers as __u64.
 *
 * Rules every command follows:
 *
 * - Unknown flags and non-zero padding or reserved fields are rejected with
 *   -EINVAL before anything else is looked at, and nothing changes.
 * - Structs may grow at their end in later ABI minors. The ioctl number
 *   encodes the size userspace was built with: the module copies what both
 *   sides know and zero-fills the rest, so old binaries keep working and new
 *   binaries on old modules see zeroes in the fields the module did not know.
 * - Timeouts are absolute CLOCK_MONOTONIC nanoseconds.
 *
 * Every command exists as an ioctl on the device fd. The io_uring fast path
 * uses IORING_OP_URING_CMD SQEs on the same fd with sqe->cmd_op set to one of
 * the ACCEL_URING_CMD_* values below and the command's payload in the first
 * 16 bytes of sqe->cmd (normal 64-byte SQEs suffice); the CQE's res is the
 * command's result, 0 or a negative errno.
 */
#ifndef _UAPI_ACCELSCHED_H
#define _UAPI_ACCELSCHED_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/ioctl.h>
#else
#include <linux/types.h>
#include <sys/ioctl.h>
#endif

#if defined(__cplusplus)
extern "C" {
#endif

/** ACCEL_DEVICE_NAME - the node's name under /dev. */
#define ACCEL_DEVICE_NAME "accelsched"

/*
 * ABI version. The major changes only for an incompatible change (userspace
 * built for another major must refuse to talk to the module); the minor grows
 * with every compatible addition (a command, a flag, a field at a struct's
 * end), which features bits also announce.
 */
#define ACCEL_ABI_MAJOR 1
#define ACCEL_ABI_MINOR 0

/* ioctl type letter; 0xAC is not assigned in ioctl-number.rst. */
#define ACCEL_IOCTL_BASE 0xAC

/* Feature bits reported by ACCEL_IOCTL_INFO. */
/** ACCEL_FEATURE_URING_CMD - IORING_OP_URING_CMD works on the device fd. */
#define ACCEL_FEATURE_URING_CMD (1ULL << 0)
/**
 * ACCEL_FEATURE_URING_CANCEL - pending uring_cmds are cancelable by ring
 * exit (kernels with io_uring_cmd_mark_cancelable(); 6.7 and later). Without
 * it the module bounds every pending command itself.
 */
#define ACCEL_FEATURE_URING_CANCEL (1ULL << 1)

/**
 * struct accel_info - what the module is: ACCEL_IOCTL_INFO.
 * @abi_major:      ACCEL_ABI_MAJOR of the module.
 * @abi_minor:      ACCEL_ABI_MINOR of the module.
 * @features:       ACCEL_FEATURE_* bits.
 * @client_id:      this open file's id, unique while the module is loaded;
 *                  the same id names the file in fdinfo, debugfs and traces.
 * @version:        the module's version, NUL-terminated ("0.1.0").
 * @kernel_release: the release of the kernel it runs on, NUL-terminated.
 * @reserved:       zero.
 *
 * All fields are outputs; the module never reads the struct.
 */
struct accel_info {
	__u32 abi_major;
	__u32 abi_minor;
	__u64 features;
	__u64 client_id;
	char version[32];
	char kernel_release[64];
	__u64 reserved[4];
};

/**
 * struct accel_nop - a command that does nothing: ACCEL_IOCTL_NOP and
 * ACCEL_URING_CMD_NOP. It measures the cost of the path itself.
 * @flags:  ACCEL_NOP_F_* bits.
 * @result: with ACCEL_NOP_F_RESULT, the result to return (0 or a negative
 *          errno in [-4095, 0]); must be zero otherwise.
 * @cookie: not looked at; lets a caller tag a request.
 */
struct accel_nop {
	__u32 flags;
	__s32 result;
	__u64 cookie;
};

/** ACCEL_NOP_F_RESULT - return @result instead of 0 (tests error paths). */
#define ACCEL_NOP_F_RESULT (1U << 0)
#define ACCEL_NOP_FLAGS_ALL (ACCEL_NOP_F_RESULT)

#define ACCEL_IOCTL_INFO _IOR(ACCEL_IOCTL_BASE, 0x00, struct accel_info)
#define ACCEL_IOCTL_NOP _IOW(ACCEL_IOCTL_BASE, 0x01, struct accel_nop)

/*
 * uring_cmd opcodes (sqe->cmd_op). They are encoded like ioctl numbers (as
 * ublk does), with the payload's size, and the payload sits in sqe->cmd.
 */
#define ACCEL_URING_CMD_NOP _IOW(ACCEL_IOCTL_BASE, 0x80, struct accel_nop)

#if defined(__cplusplus)
}
#endif

#endif /* _UAPI_ACCELSCHED_H */
