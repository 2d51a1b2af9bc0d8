// SPDX-License-Identifier: MIT
/*
 * The executable cache (exec_cache.h): keys, the directory, and the entry
 * files. An entry file, little-endian:
 *
 *   0   char magic[8] = "ACCELEXC"
 *   8   u32 version = 1
 *  12   u32 header_size = 88
 *  16   u8  key[32]             the key the file is named by
 *  48   u64 payload_size
 *  56   u8  payload_sha256[32]
 *  88   the payload (what the driver compiled), payload_size bytes
 *
 * The file is named by the key in hex. A reader checks every field and
 * the file's size against payload_size before it hashes the payload; a
 * writer writes "<name>.tmp.XXXXXX" in the same directory and renames it
 * over the name, so that readers see the old file or the new one, never
 * a part. It does not fsync: after a crash an entry may be empty or
 * short, which a reader tells from a good one (the size and the SHA-256)
 * and removes; durability is not worth a disk flush at every cold load of
 * a cache that can always be rebuilt (Mesa's shader cache makes the same
 * choice).
 *
 * The key is SHA-256 over a domain string, the cache format version,
 * libaccel's version, the driver's name, the device identity, and the
 * executable's bytes, each length-prefixed: a new libaccel, another
 * driver or device, or a changed executable each give another key, and
 * the stale entries are simply never read again.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "accel/version.h"
#include "core.h"
#include "error.h"
#include "exec_cache.h"

#define ENTRY_MAGIC "ACCELEXC"
#define ENTRY_VERSION 1u
#define ENTRY_HEADER 88u
#define KEY_DOMAIN "accelsched executable cache"

struct accel_exec_cache {
	struct accel_sha256 prefix; /* the key's hash up to the executable */
	char *dir;
	bool debug;
	atomic_uint_fast64_t hits, misses, rejected, stored, failed;
	pthread_mutex_t note_lock;
	char note[512];
};

static void wr32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void wr64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static uint64_t rd64(const uint8_t *p)
{
	return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32;
}

static bool env_on(const char *name)
{
	const char *v = secure_getenv(name);

	return v && *v && strcmp(v, "0") != 0;
}

static void note(struct accel_exec_cache *c, const char *fmt, ...)
	ACCEL_PRINTF(2, 3);

static void note(struct accel_exec_cache *c, const char *fmt, ...)
{
	char buf[sizeof(c->note)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&c->note_lock);
	memcpy(c->note, buf, sizeof(buf));
	pthread_mutex_unlock(&c->note_lock);
	if (c->debug)
		fprintf(stderr, "libaccel: cache: %s\n", buf);
}

int accel_exec_cache_option(const char *value, const char *scheme,
			    const char *device, int *on)
{
	if ((value[0] != '0' && value[0] != '1') ||
	    (value[1] && value[1] != '&'))
		return accel_fail(EINVAL,
			"accel_device_open: \"%s://%.64s\": the option cache= takes 0 (no executable cache) or 1",
			scheme, device);
	*on = value[0] == '1';
	return 0;
}

bool accel_uri_next_option(const char **p, char *key, size_t klen,
			   const char **value, size_t *vlen)
{
	const char *s = *p, *eq, *end;

	if (!s || !*s)
		return false;
	end = strchr(s, '&');
	if (!end)
		end = s + strlen(s);
	eq = memchr(s, '=', (size_t)(end - s));
	key[0] = 0;
	*value = end;
	*vlen = 0;
	if (eq && (size_t)(eq - s) < klen) {
		memcpy(key, s, (size_t)(eq - s));
		key[eq - s] = 0;
		*value = eq + 1;
		*vlen = (size_t)(end - eq - 1);
	}
	*p = *end ? end + 1 : end;
	return true;
}

/* The directory, malloc'd; NULL when none can be named (or no memory). */
static char *cache_dir(void)
{
	const char *v = secure_getenv(ACCEL_CACHE_DIR_ENV);
	char *dir = NULL;

	if (v && *v)
		return strdup(v);
	v = secure_getenv("XDG_CACHE_HOME");
	if (v && v[0] == '/') /* the XDG spec: relative ones are invalid */
		return asprintf(&dir, "%s/accelsched", v) < 0 ? NULL : dir;
	v = secure_getenv("HOME");
	if (v && *v)
		return asprintf(&dir, "%s/.cache/accelsched", v) < 0 ? NULL : dir;
	return NULL;
}

static void hash_field(struct accel_sha256 *s, const void *data, size_t len)
{
	uint8_t n[8];

	wr64(n, len);
	accel_sha256_update(s, n, sizeof(n));
	accel_sha256_update(s, data, len);
}

int accel_exec_cache_create(const char *driver, const void *identity,
			    size_t len, int option,
			    struct accel_exec_cache **out)
{
	struct accel_exec_cache *c;
	uint8_t version[4];

	*out = NULL;
	if (option == 0 || env_on(ACCEL_CACHE_DISABLE_ENV))
		return 0;
	c = calloc(1, sizeof(*c));
	if (!c)
		return accel_fail(ENOMEM, "accel_device_open: out of memory");
	c->dir = cache_dir();
	if (!c->dir) {
		free(c);
		return 0; /* nowhere to keep it: off, as documented */
	}
	c->debug = env_on(ACCEL_CACHE_DEBUG_ENV);
	pthread_mutex_init(&c->note_lock, NULL);
	wr32(version, ENTRY_VERSION);
	accel_sha256_init(&c->prefix);
	hash_field(&c->prefix, KEY_DOMAIN, sizeof(KEY_DOMAIN));
	hash_field(&c->prefix, version, sizeof(version));
	hash_field(&c->prefix, ACCEL_VERSION_STRING, sizeof(ACCEL_VERSION_STRING));
	hash_field(&c->prefix, driver, strlen(driver) + 1);
	hash_field(&c->prefix, identity, len);
	*out = c;
	return 0;
}

void accel_exec_cache_destroy(struct accel_exec_cache *c)
{
	if (!c)
		return;
	pthread_mutex_destroy(&c->note_lock);
	free(c->dir);
	free(c);
}

void accel_exec_cache_key(const struct accel_exec_cache *c, const void *exe,
			  size_t len, uint8_t key[ACCEL_SHA256_SIZE])
{
	struct accel_sha256 s = c->prefix;

	hash_field(&s, exe, len);
	accel_sha256_final(&s, key);
}

const char *accel_exec_cache_dir(const struct accel_exec_cache *c)
{
	return c->dir;
}

char *accel_exec_cache_path(const struct accel_exec_cache *c,
			    const uint8_t key[ACCEL_SHA256_SIZE], char *buf,
			    size_t len)
{
	char hex[2 * ACCEL_SHA256_SIZE + 1];

	for (int i = 0; i < ACCEL_SHA256_SIZE; i++)
		snprintf(hex + 2 * i, 3, "%02x", key[i]);
	return accel_strfmt(buf, len, "%s/%s", c->dir, hex);
}

/* Why @data (@size bytes) is not the entry of @key, or NULL. */
static const char *check_entry(const uint8_t *data, size_t size,
			       const uint8_t key[ACCEL_SHA256_SIZE])
{
	uint8_t digest[ACCEL_SHA256_SIZE];
	uint64_t payload;

	if (size < ENTRY_HEADER)
		return "shorter than an entry's header";
	if (memcmp(data, ENTRY_MAGIC, 8) != 0)
		return "not an executable cache entry (bad magic)";
	if (rd32(data + 8) != ENTRY_VERSION || rd32(data + 12) != ENTRY_HEADER)
		return "an entry of another format version";
	if (memcmp(data + 16, key, ACCEL_SHA256_SIZE) != 0)
		return "the entry of another key";
	payload = rd64(data + 48);
	if (payload == 0 || payload > ACCEL_CACHE_MAX_PAYLOAD ||
	    payload != size - ENTRY_HEADER)
		return "its payload size does not match the file's";
	accel_sha256(data + ENTRY_HEADER, (size_t)payload, digest);
	if (memcmp(data + 56, digest, ACCEL_SHA256_SIZE) != 0)
		return "its payload is damaged (SHA-256 mismatch)";
	return NULL;
}

static void drop(struct accel_exec_cache *c, const char *path,
		 const char *why)
{
	atomic_fetch_add(&c->rejected, 1);
	if (unlink(path) && errno != ENOENT)
		note(c, "ignored %s: %s (and could not remove it: %s)", path,
		     why, accel_errno_name(errno));
	else
		note(c, "ignored %s: %s; it will be rewritten", path, why);
}

bool accel_exec_cache_lookup(struct accel_exec_cache *c,
			     const uint8_t key[ACCEL_SHA256_SIZE],
			     uint8_t **payload, size_t *len)
{
	char path[4096];
	const char *why;
	uint8_t *data = NULL;
	struct stat st;
	int fd, err;

	accel_exec_cache_path(c, key, path, sizeof(path));
	/* Not blocking: a FIFO there is dropped, never waited on. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0) {
		if (errno != ENOENT && errno != ENOTDIR) { /* not a miss */
			atomic_fetch_add(&c->failed, 1);
			note(c, "cannot read %s: %s", path, accel_errno_name(errno));
		}
		atomic_fetch_add(&c->misses, 1);
		return false;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    (uint64_t)st.st_size > ENTRY_HEADER + ACCEL_CACHE_MAX_PAYLOAD) {
		close(fd);
		drop(c, path, "not a regular file of at most the largest entry's size");
		atomic_fetch_add(&c->misses, 1);
		return false;
	}
	err = accel_read_all(fd, (size_t)st.st_size, &data);
	close(fd);
	if (err) {
		atomic_fetch_add(&c->failed, 1);
		atomic_fetch_add(&c->misses, 1);
		note(c, "cannot read %s: %s", path, accel_errno_name(err));
		return false;
	}
	why = check_entry(data, (size_t)st.st_size, key);
	if (why) {
		free(data);
		drop(c, path, why);
		atomic_fetch_add(&c->misses, 1);
		return false;
	}
	*len = (size_t)st.st_size - ENTRY_HEADER;
	memmove(data, data + ENTRY_HEADER, *len);
	*payload = data;
	atomic_fetch_add(&c->hits, 1);
	return true;
}

void accel_exec_cache_reject(struct accel_exec_cache *c,
			     const uint8_t key[ACCEL_SHA256_SIZE],
			     const char *why)
{
	char path[4096];

	accel_exec_cache_path(c, key, path, sizeof(path));
	/* the lookup counted a hit: it was not one */
	atomic_fetch_sub(&c->hits, 1);
	atomic_fetch_add(&c->misses, 1);
	drop(c, path, why);
}

/* mkdir -p @dir, the new levels 0700. 0 or an errno. */
static int make_dir(char *dir)
{
	struct stat st;

	if (stat(dir, &st) == 0)
		return S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
	for (char *p = dir + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(dir, 0700) && errno != EEXIST) {
			int err = errno;

			*p = '/';
			return err;
		}
		*p = '/';
	}
	if (mkdir(dir, 0700) && errno != EEXIST)
		return errno;
	return 0;
}

static int write_all(int fd, const uint8_t *p, size_t len)
{
	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? errno : EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

void accel_exec_cache_store(struct accel_exec_cache *c,
			    const uint8_t key[ACCEL_SHA256_SIZE],
			    const void *payload, size_t len)
{
	char path[4096], tmp[4096 + 16], dir[4096];
	uint8_t header[ENTRY_HEADER];
	const char *what = "creating";
	int fd, err;

	if (!len || len > ACCEL_CACHE_MAX_PAYLOAD)
		return;
	accel_exec_cache_path(c, key, path, sizeof(path));
	accel_strfmt(tmp, sizeof(tmp), "%s.tmp.XXXXXX", path);
	accel_strfmt(dir, sizeof(dir), "%s", c->dir);
	err = make_dir(dir);
	if (err) {
		atomic_fetch_add(&c->failed, 1);
		note(c, "cannot create the directory %s: %s; executables load uncached",
		     c->dir, accel_errno_name(err));
		return;
	}
	memcpy(header, ENTRY_MAGIC, 8);
	wr32(header + 8, ENTRY_VERSION);
	wr32(header + 12, ENTRY_HEADER);
	memcpy(header + 16, key, ACCEL_SHA256_SIZE);
	wr64(header + 48, len);
	accel_sha256(payload, len, header + 56);
	fd = mkostemp(tmp, O_CLOEXEC); /* mode 0600 */
	if (fd < 0) {
		err = errno;
	} else {
		what = "writing";
		err = write_all(fd, header, sizeof(header));
		if (!err)
			err = write_all(fd, payload, len);
		if (close(fd) && !err)
			err = errno;
		if (!err) {
			what = "renaming";
			if (rename(tmp, path))
				err = errno;
		}
		if (err)
			unlink(tmp);
	}
	if (err) {
		atomic_fetch_add(&c->failed, 1);
		note(c, "%s %s failed: %s; the executable stays uncached", what,
		     path, accel_errno_name(err));
		return;
	}
	atomic_fetch_add(&c->stored, 1);
}

void accel_exec_cache_stats(struct accel_exec_cache *c,
			    struct accel_exec_cache_stats *out)
{
	out->hits = atomic_load(&c->hits);
	out->misses = atomic_load(&c->misses);
	out->rejected = atomic_load(&c->rejected);
	out->stored = atomic_load(&c->stored);
	out->failed = atomic_load(&c->failed);
}

void accel_exec_cache_note(struct accel_exec_cache *c, char *buf, size_t len)
{
	pthread_mutex_lock(&c->note_lock);
	accel_strfmt(buf, len, "%s", c->note);
	pthread_mutex_unlock(&c->note_lock);
}
