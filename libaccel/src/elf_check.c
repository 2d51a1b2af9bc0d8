// SPDX-License-Identifier: MIT
/* A truncated shared object, found before dlopen() maps it: elf_check.h. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core.h"
#include "elf_check.h"
#include "error.h"

static int truncated(char *why, size_t len, const char *what, uint64_t end,
		     uint64_t size)
{
	snprintf(why, len,
		 "it is truncated: its %s ends at byte %" PRIu64 " of a %" PRIu64 "-byte file",
		 what, end, size);
	return -ENOEXEC;
}

/* Reads @n bytes at @off; false on a short read. */
static bool read_at(int fd, void *buf, size_t n, uint64_t off)
{
	ssize_t got = pread(fd, buf, n, (off_t)off);

	return got >= 0 && (size_t)got == n;
}

/* The 64-bit case; the 32-bit one is the same with the other structs. */
#define CHECK_ELF(EHDR, PHDR)                                                 \
	do {                                                                  \
		EHDR eh;                                                      \
		uint64_t ph_end;                                              \
									      \
		if (!read_at(fd, &eh, sizeof(eh), 0))                         \
			return truncated(why, len, "ELF header", sizeof(eh),  \
					 size);                               \
		if (!eh.e_phnum)                                              \
			return 0;                                             \
		if (eh.e_phentsize != sizeof(PHDR))                           \
			return 0; /* not ours to judge: dlopen() refuses */   \
		ph_end = (uint64_t)eh.e_phoff + (uint64_t)eh.e_phnum * sizeof(PHDR); \
		if (ph_end > size)                                            \
			return truncated(why, len, "program header table",   \
					 ph_end, size);                       \
		for (uint32_t i = 0; i < eh.e_phnum; i++) {                   \
			PHDR ph;                                              \
			uint64_t end;                                         \
									      \
			if (!read_at(fd, &ph, sizeof(ph),                     \
				     eh.e_phoff + (uint64_t)i * sizeof(ph)))   \
				return truncated(why, len, "program header table", \
						 ph_end, size);               \
			if (ph.p_type != PT_LOAD)                             \
				continue;                                     \
			end = (uint64_t)ph.p_offset + (uint64_t)ph.p_filesz;  \
			if (end < ph.p_offset || end > size) {                \
				char seg[48];                                 \
									      \
				snprintf(seg, sizeof(seg), "loadable segment %u", i); \
				return truncated(why, len, seg, end, size);   \
			}                                                     \
		}                                                             \
		return 0;                                                     \
	} while (0)

static int check_fd(int fd, uint64_t size, char *why, size_t len)
{
	unsigned char ident[EI_NIDENT];

	if (!read_at(fd, ident, sizeof(ident), 0) ||
	    memcmp(ident, ELFMAG, SELFMAG) != 0)
		return 0; /* not ELF: dlopen() says so itself */
	if (ident[EI_CLASS] == ELFCLASS64)
		CHECK_ELF(Elf64_Ehdr, Elf64_Phdr);
	if (ident[EI_CLASS] == ELFCLASS32)
		CHECK_ELF(Elf32_Ehdr, Elf32_Phdr);
	return 0;
}

int accel_elf_check(const char *path, char *why, size_t len)
{
	struct stat st;
	int fd, ret;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		ret = -errno;
		snprintf(why, len, "cannot open it: %s", strerror(-ret));
		return ret;
	}
	if (fstat(fd, &st) != 0) {
		ret = -errno;
		snprintf(why, len, "cannot stat it: %s", strerror(-ret));
	} else if (!S_ISREG(st.st_mode)) {
		/* dlopen() would block on a FIFO until a writer came. */
		snprintf(why, len, "it is not a regular file (a %s)",
			 accel_file_type(st.st_mode));
		ret = -ENOEXEC;
	} else {
		ret = check_fd(fd, (uint64_t)st.st_size, why, len);
	}
	close(fd);
	return ret;
}
