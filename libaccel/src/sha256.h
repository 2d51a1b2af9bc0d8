/* SPDX-License-Identifier: MIT */
/*
 * Internal: SHA-256 (FIPS 180-4), for the executable cache's keys and
 * payload checks (exec_cache.c). Not a security boundary on its own: the
 * cache never trusts what it reads, it only tells stale or damaged files
 * from good ones.
 */
#ifndef ACCEL_SRC_SHA256_H
#define ACCEL_SRC_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define ACCEL_SHA256_SIZE 32

struct accel_sha256 {
	uint32_t h[8];
	uint64_t length; /* bytes hashed so far */
	uint8_t block[64];
	uint32_t used;   /* bytes of @block filled */
};

void accel_sha256_init(struct accel_sha256 *s);
void accel_sha256_update(struct accel_sha256 *s, const void *data, size_t len);
void accel_sha256_final(struct accel_sha256 *s, uint8_t out[ACCEL_SHA256_SIZE]);

/* The digest of @len bytes at @data, in one call. */
void accel_sha256(const void *data, size_t len, uint8_t out[ACCEL_SHA256_SIZE]);

#endif /* ACCEL_SRC_SHA256_H */
