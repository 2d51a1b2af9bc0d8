/* SPDX-License-Identifier: MIT */
/*
 * A look at a shared object before dlopen() maps it. The dynamic loader
 * maps each loadable segment where the file's program headers say; a
 * segment that runs past the end of a truncated file is mapped anyway,
 * and the first touch of its missing pages kills the process with SIGBUS
 * inside dlopen(). No error path of dlopen() catches that, so a file named
 * by the user (an executable's path, a vendor library in an environment
 * variable) is checked here first.
 */
#ifndef ACCEL_ELF_CHECK_H
#define ACCEL_ELF_CHECK_H

#include <stddef.h>

/*
 * 0 when @path is a regular file that is an ELF file whose header,
 * program headers and loadable segments all lie within it, or that is not
 * ELF at all (dlopen() then refuses it cleanly). -ENOEXEC, with @why
 * saying what is wrong, for a truncated ELF file or one that is not a
 * regular file (dlopen() would block on a FIFO); the errno of open() or
 * fstat() otherwise (@why says).
 */
int accel_elf_check(const char *path, char *why, size_t len);

#endif /* ACCEL_ELF_CHECK_H */
