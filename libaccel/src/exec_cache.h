/* SPDX-License-Identifier: MIT */
/*
 * Internal: the executable cache (Documentation/libaccel.rst, "Executable
 * cache"). A driver that compiles at load (vulkan: pipelines from SPIR-V;
 * cuda: PTX to a cubin) keeps what it compiled, per device, in files
 * named by a key that hashes the executable's bytes together with the
 * driver and the device's identity, so that the next load of the same
 * executable on the same kind of device skips the compile.
 *
 * Where: $ACCEL_CACHE_DIR, else $XDG_CACHE_HOME/accelsched, else
 * $HOME/.cache/accelsched (made 0700 at the first store). Off when
 * ACCEL_CACHE_DISABLE is set to anything but "" or "0", or when the
 * device URI says "cache=0".
 *
 * Nothing read is trusted. An entry is a file of its own format (see
 * exec_cache.c) whose header repeats the key and the payload's SHA-256;
 * a file that does not check out (short, another format, another key, a
 * damaged payload) is a miss: it is removed, counted as rejected and
 * noted, and the driver stores a fresh entry. The driver checks the
 * payload's own header too (vulkan: the pipeline cache UUID) and calls
 * accel_exec_cache_reject() when it belongs to another device. Failing
 * to read or write the cache never fails a load: it is noted and the
 * load goes on uncached.
 *
 * Notes: the last one is kept (accel_exec_cache_note()); with
 * ACCEL_CACHE_DEBUG set to anything but "" or "0" each is also printed to
 * stderr, "libaccel: cache: ...".
 *
 * Thread-safety: a cache is thread-safe; loads of one executable racing on
 * several threads each store, and the last rename wins (each file is
 * written whole to a temporary file first, so a reader never sees half a
 * file).
 */
#ifndef ACCEL_SRC_EXEC_CACHE_H
#define ACCEL_SRC_EXEC_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "macros.h"
#include "sha256.h"

#define ACCEL_CACHE_DIR_ENV "ACCEL_CACHE_DIR"
#define ACCEL_CACHE_DISABLE_ENV "ACCEL_CACHE_DISABLE"
#define ACCEL_CACHE_DEBUG_ENV "ACCEL_CACHE_DEBUG"

/* The largest payload stored or read back. */
#define ACCEL_CACHE_MAX_PAYLOAD (UINT64_C(256) << 20)

/* The URI option, when the URI does not give it. */
#define ACCEL_CACHE_OPTION_UNSET (-1)

struct accel_exec_cache;

/* What a cache did since it was made; each counter only grows. */
struct accel_exec_cache_stats {
	uint64_t hits;     /* lookups that returned a payload */
	uint64_t misses;   /* lookups that did not (rejected ones included) */
	uint64_t rejected; /* files ignored and removed: damaged or foreign */
	uint64_t stored;   /* entries written */
	uint64_t failed;   /* reads or writes that failed (I/O, no space) */
};

/*
 * accel_exec_cache_option() - parse the value of a device URI's "cache="
 * option: "0" or "1" (ended by NUL or '&') into *@on. @scheme and
 * @device (the URI after "scheme://") name the URI in the message.
 * 0, or -EINVAL with the message set.
 */
int accel_exec_cache_option(const char *value, const char *scheme,
			    const char *device, int *on);

/*
 * accel_uri_next_option() - split the next "key=value" of a URI's
 * options ("a=1&b=2"), from *@p: copies the key into @key (at most @klen
 * bytes, NUL included) and points *@value at its value, NUL- or
 * '&'-terminated (*@vlen bytes). Advances *@p. false at the end.
 * A key that does not fit, or an option without '=', gives an empty key.
 */
bool accel_uri_next_option(const char **p, char *key, size_t klen,
			   const char **value, size_t *vlen);

/*
 * accel_exec_cache_create() - the cache of a device of @driver whose
 * identity (what makes compiled code for it differ from another's: a
 * pipeline cache UUID, a compute capability, driver versions) is the
 * @len bytes at @identity. @option is the URI's "cache=" value or
 * ACCEL_CACHE_OPTION_UNSET.
 *
 * Return: 0 with *@out NULL when the cache is off (the environment, the
 * option, or no directory can be named: no $HOME), else 0 with *@out
 * set; -ENOMEM with the message set.
 */
int accel_exec_cache_create(const char *driver, const void *identity,
			    size_t len, int option,
			    struct accel_exec_cache **out);
void accel_exec_cache_destroy(struct accel_exec_cache *c);

/* The key of the executable of @len bytes at @exe on @c's device. */
void accel_exec_cache_key(const struct accel_exec_cache *c, const void *exe,
			  size_t len, uint8_t key[ACCEL_SHA256_SIZE]);

/*
 * accel_exec_cache_lookup() - the payload stored under @key: true with
 * *@payload (malloc'd, free() it) and *@len set, after checking the file
 * whole; false on a miss, with anything found there and not checking out
 * removed and noted. Never sets the error message.
 */
bool accel_exec_cache_lookup(struct accel_exec_cache *c,
			     const uint8_t key[ACCEL_SHA256_SIZE],
			     uint8_t **payload, size_t *len);

/*
 * accel_exec_cache_reject() - the payload a lookup returned under @key
 * does not suit the device (@why says how): removes the file, counts it
 * as rejected and a miss (not a hit) and notes it.
 */
void accel_exec_cache_reject(struct accel_exec_cache *c,
			     const uint8_t key[ACCEL_SHA256_SIZE],
			     const char *why);

/*
 * accel_exec_cache_store() - write @len bytes at @payload under @key,
 * atomically (a temporary file, renamed). Failures are noted, not
 * returned. A @len of 0 or above ACCEL_CACHE_MAX_PAYLOAD stores nothing.
 */
void accel_exec_cache_store(struct accel_exec_cache *c,
			    const uint8_t key[ACCEL_SHA256_SIZE],
			    const void *payload, size_t len);

void accel_exec_cache_stats(struct accel_exec_cache *c,
			    struct accel_exec_cache_stats *out);
/* The directory (absolute or as the environment gave it). */
const char *accel_exec_cache_dir(const struct accel_exec_cache *c);
/* The file an entry of @key has (in @buf of @len bytes); @buf. */
char *accel_exec_cache_path(const struct accel_exec_cache *c,
			    const uint8_t key[ACCEL_SHA256_SIZE], char *buf,
			    size_t len);
/* Copies the last note ("" if none) into @buf of @len bytes. */
void accel_exec_cache_note(struct accel_exec_cache *c, char *buf, size_t len);

#endif /* ACCEL_SRC_EXEC_CACHE_H */
