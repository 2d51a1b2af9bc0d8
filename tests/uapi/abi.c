// SPDX-License-Identifier: MIT
/*
 * The ABI header's contract, checked at compile time: every struct's size
 * and every field's offset is fixed, 8-byte aligned sizes, no implicit
 * padding. Built as C99 (-std=c99 -pedantic) and as C++ by meson, so the
 * header is usable from both. A change here is an ABI change: it needs a new
 * ACCEL_ABI_MINOR (growth at a struct's end) or ACCEL_ABI_MAJOR (anything
 * else).
 */
#include <stddef.h>
#include <stdio.h>

#include <accelsched.h>

#ifdef __cplusplus
#define ABI_ASSERT(c, m) static_assert(c, m)
#else
#define ABI_ASSERT(c, m) _Static_assert(c, m)
#endif

#define SIZE(t, n) ABI_ASSERT(sizeof(struct t) == (n), #t " size changed")
#define OFF(t, f, n) ABI_ASSERT(offsetof(struct t, f) == (n), #t "." #f " moved")

SIZE(accel_info, 152);
OFF(accel_info, abi_major, 0);
OFF(accel_info, abi_minor, 4);
OFF(accel_info, features, 8);
OFF(accel_info, client_id, 16);
OFF(accel_info, version, 24);
OFF(accel_info, kernel_release, 56);
OFF(accel_info, reserved, 120);

SIZE(accel_nop, 16);
OFF(accel_nop, flags, 0);
OFF(accel_nop, result, 4);
OFF(accel_nop, cookie, 8);

/* A uring_cmd payload must fit a normal SQE's 16 command bytes. */
ABI_ASSERT(sizeof(struct accel_nop) <= 16, "NOP payload exceeds sqe->cmd");

/* ioctl numbers are ABI too. */
ABI_ASSERT(ACCEL_IOCTL_INFO == 0x8098ac00u, "ACCEL_IOCTL_INFO changed");
ABI_ASSERT(ACCEL_IOCTL_NOP == 0x4010ac01u, "ACCEL_IOCTL_NOP changed");
ABI_ASSERT(ACCEL_URING_CMD_NOP == 0x4010ac80u, "ACCEL_URING_CMD_NOP changed");

int main(void)
{
	printf("uapi: struct sizes, offsets and ioctl numbers as pinned\n");
	return 0;
}
