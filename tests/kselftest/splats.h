/* SPDX-License-Identifier: MIT */
/*
 * The kernel log lines that fail a kernel test however it ended: one list
 * for the kselftests (accel_test.h) and the uapi fuzzer (tests/fuzz).
 * tests/qemu/ktap.py's SPLAT_RE judges the whole VM's log alike.
 */
#ifndef ACCEL_TEST_SPLATS_H
#define ACCEL_TEST_SPLATS_H

static const char *const accel_test_splats[] = {
	"BUG:", "WARNING:", "Oops", "KASAN", "UBSAN", "kernel BUG",
	"possible circular locking", "inconsistent lock state",
	"suspicious RCU usage", "possible recursive locking",
	"sleeping function called from invalid context", "hung task",
	"blocked for more than", "refcount_t:", "general protection fault",
	"Call Trace:", "list_add corruption", "list_del corruption",
	"unreferenced object",
};

#endif /* ACCEL_TEST_SPLATS_H */
