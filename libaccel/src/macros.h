/* SPDX-License-Identifier: MIT */
/*
 * Internal helpers every libaccel source file may use. Not installed.
 */
#ifndef ACCEL_SRC_MACROS_H
#define ACCEL_SRC_MACROS_H

#include <stddef.h>

/*
 * ACCEL_EXPORT - put a definition into the public ABI.
 *
 * libaccel is compiled with -fvisibility=hidden, so only definitions marked
 * with ACCEL_EXPORT are visible outside the shared library. libaccel.sym
 * (the linker version script) must list the same names, and the
 * libaccel-symbols test compares the exported set with libaccel.symbols.
 */
#define ACCEL_EXPORT __attribute__((visibility("default")))

/* ACCEL_PRINTF - let the compiler check a printf-style format. */
#define ACCEL_PRINTF(fmt_idx, first_arg) \
	__attribute__((format(printf, fmt_idx, first_arg)))

#define ACCEL_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* container_of - the struct of @type whose @member @ptr points to. */
#define container_of(ptr, type, member) \
	((type *)(void *)((char *)(ptr) - offsetof(type, member)))

#endif /* ACCEL_SRC_MACROS_H */
