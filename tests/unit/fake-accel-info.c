// SPDX-License-Identifier: MIT
/*
 * fake-accel-info.so: an LD_PRELOAD shim that answers ACCEL_IOCTL_INFO on any
 * fd as accelsched 0.1.0 (ABI ACCEL_ABI_MAJOR.ACCEL_ABI_MINOR, both feature
 * bits, client id 17) and passes every other ioctl to the kernel. With
 * ACCEL_DEVICE=/dev/null (whose uring_cmd completes with 0 since Linux 6.0)
 * it lets the tools' tests see the kernel scheduler without the module.
 */
#include <accelsched.h>
#include <stdarg.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int ioctl(int fd, unsigned long request, ...)
{
	struct accel_info info = {
		.abi_major = ACCEL_ABI_MAJOR,
		.abi_minor = ACCEL_ABI_MINOR,
		.features = ACCEL_FEATURE_URING_CMD | ACCEL_FEATURE_URING_CANCEL,
		.client_id = 17,
		.version = "0.1.0",
		.kernel_release = "6.1.0-fake",
	};
	va_list ap;
	void *arg;

	va_start(ap, request);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (request != ACCEL_IOCTL_INFO)
		return (int)syscall(SYS_ioctl, fd, request, arg);
	memcpy(arg, &info, sizeof(info));
	return 0;
}
