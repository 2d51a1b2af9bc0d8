// SPDX-License-Identifier: MIT
/*
 * Check suite "exec-cache": the executable cache (src/exec_cache.h).
 *
 * The "layer" case runs everywhere: SHA-256 against the FIPS 180-4
 * examples, key derivation, where the directory is, entries stored and
 * read back, and every kind of file that must be ignored (short, damaged,
 * another format or key, too large, not a regular file), each removed and
 * noted. The "vulkan" case loads executables on vulkan://0 (lavapipe
 * here): a miss then a hit, a damaged or foreign (another pipelineCacheUUID)
 * entry ignored and replaced, an unwritable directory, the cache turned off
 * by the environment and by the URI, three threads loading at once. The
 * "cuda" case parses the URI option everywhere, and on cuda://0 checks a
 * miss then a hit (the stored cubin), a cubin the driver refuses replaced,
 * and cache=0. A device case prints SKIP where its device cannot be
 * opened.
 *
 * Each test has its own cache directory (ACCEL_CACHE_DIR) and removes it.
 */
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "test-util.h"

#include "../../drivers/gpu/gpu.h"
#include "src/core.h"
#include "src/exec_cache.h"
#include "src/sha256.h"

#define ENTRY_HEADER 88

/* VkPipelineCacheHeaderVersionOne, without needing the Vulkan headers. */
struct vk_header {
	uint32_t headerSize;
	uint32_t headerVersion;
	uint32_t vendorID;
	uint32_t deviceID;
	uint8_t pipelineCacheUUID[16];
};
#define VK_PIPELINE_CACHE_HEADER_VERSION_ONE 1

static char tmpdir[256];
static char cachedir[300];

static void setup(void)
{
	test_clear_env();
	unsetenv(ACCEL_CACHE_DISABLE_ENV);
	unsetenv(ACCEL_CACHE_DEBUG_ENV);
	test_make_tmpdir(tmpdir, sizeof(tmpdir));
	snprintf(cachedir, sizeof(cachedir), "%s/cache", tmpdir);
	setenv(ACCEL_CACHE_DIR_ENV, cachedir, 1);
}

static int rm_one(const char *path, const struct stat *st, int flag,
		  struct FTW *ftw)
{
	(void)st; (void)flag; (void)ftw;
	chmod(path, 0700);
	return remove(path);
}

static void teardown(void)
{
	nftw(tmpdir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* Files in the cache directory (-1 when it does not exist). */
static int count_files(const char *dir, int *tmp_files)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (tmp_files)
		*tmp_files = 0;
	if (!d)
		return -1;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (tmp_files && strstr(e->d_name, ".tmp."))
			(*tmp_files)++;
		n++;
	}
	closedir(d);
	return n;
}

static struct accel_exec_cache *cache_new(const char *id)
{
	struct accel_exec_cache *c = NULL;

	ASSERT_OK(accel_exec_cache_create("test", id, strlen(id),
					  ACCEL_CACHE_OPTION_UNSET, &c));
	ck_assert_ptr_nonnull(c);
	return c;
}

static void stats_eq(struct accel_exec_cache *c, uint64_t hits,
		     uint64_t misses, uint64_t rejected, uint64_t stored,
		     uint64_t failed)
{
	struct accel_exec_cache_stats s;

	accel_exec_cache_stats(c, &s);
	ck_assert_msg(s.hits == hits && s.misses == misses &&
		      s.rejected == rejected && s.stored == stored &&
		      s.failed == failed,
		      "stats hits %llu misses %llu rejected %llu stored %llu failed %llu, expected %llu %llu %llu %llu %llu",
		      (unsigned long long)s.hits, (unsigned long long)s.misses,
		      (unsigned long long)s.rejected, (unsigned long long)s.stored,
		      (unsigned long long)s.failed, (unsigned long long)hits,
		      (unsigned long long)misses, (unsigned long long)rejected,
		      (unsigned long long)stored, (unsigned long long)failed);
}

static void note_contains(struct accel_exec_cache *c, const char *needle)
{
	char note[512];

	accel_exec_cache_note(c, note, sizeof(note));
	ASSERT_CONTAINS("the cache's note", note, needle);
}

static void hex(const uint8_t *d, char *out)
{
	for (int i = 0; i < ACCEL_SHA256_SIZE; i++)
		sprintf(out + 2 * i, "%02x", d[i]);
}

/* ---- SHA-256 ------------------------------------------------------------ */

START_TEST(test_sha256_vectors)
{
	/* FIPS 180-4 examples (NIST CSRC "SHA256.pdf", "SHA2_Additional") */
	static const struct {
		const char *msg;
		const char *digest;
	} v[] = {
		{ "", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" },
		{ "abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" },
		{ "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
		  "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1" },
		{ "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
		  "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1" },
	};
	uint8_t d[ACCEL_SHA256_SIZE];
	char h[2 * ACCEL_SHA256_SIZE + 1];

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		accel_sha256(v[i].msg, strlen(v[i].msg), d);
		hex(d, h);
		ck_assert_str_eq(h, v[i].digest);
	}
}
END_TEST

/* One million 'a', fed in uneven pieces: every path of update(). */
START_TEST(test_sha256_million_a_in_pieces)
{
	static const size_t pieces[] = { 1, 63, 64, 65, 127, 0, 1000, 3 };
	char *buf = malloc(1000000);
	struct accel_sha256 s;
	uint8_t d[ACCEL_SHA256_SIZE], one[ACCEL_SHA256_SIZE];
	char h[2 * ACCEL_SHA256_SIZE + 1];
	size_t done = 0;

	ck_assert_ptr_nonnull(buf);
	memset(buf, 'a', 1000000);
	accel_sha256_init(&s);
	for (size_t i = 0; done < 1000000; i++) {
		size_t n = pieces[i % 8];

		if (n > 1000000 - done)
			n = 1000000 - done;
		accel_sha256_update(&s, buf + done, n);
		done += n;
	}
	accel_sha256_final(&s, d);
	hex(d, h);
	ck_assert_str_eq(h, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
	accel_sha256(buf, 1000000, one);
	ck_assert_mem_eq(d, one, sizeof(d));
	/* 55, 56 and 64 bytes: the padding's edges */
	for (size_t n = 55; n <= 64; n++) {
		accel_sha256_init(&s);
		accel_sha256_update(&s, buf, n / 2);
		accel_sha256_update(&s, buf + n / 2, n - n / 2);
		accel_sha256_final(&s, d);
		accel_sha256(buf, n, one);
		ck_assert_mem_eq(d, one, sizeof(d));
	}
	free(buf);
}
END_TEST

/* ---- the layer ---------------------------------------------------------- */

START_TEST(test_key_derivation)
{
	struct accel_exec_cache *a = cache_new("device-a");
	struct accel_exec_cache *a2 = cache_new("device-a");
	struct accel_exec_cache *b = cache_new("device-b");
	struct accel_exec_cache *other = NULL;
	uint8_t k1[32], k2[32], k3[32], k4[32], k5[32];
	const char exe[] = "executable bytes", exe2[] = "executable byteS";

	accel_exec_cache_key(a, exe, sizeof(exe), k1);
	accel_exec_cache_key(a2, exe, sizeof(exe), k2);
	ck_assert_mem_eq(k1, k2, 32);                  /* stable */
	accel_exec_cache_key(b, exe, sizeof(exe), k3);
	ck_assert_mem_ne(k1, k3, 32);                  /* another device */
	accel_exec_cache_key(a, exe2, sizeof(exe2), k4);
	ck_assert_mem_ne(k1, k4, 32);                  /* another executable */
	ASSERT_OK(accel_exec_cache_create("test2", "device-a", 8,
					  ACCEL_CACHE_OPTION_UNSET, &other));
	accel_exec_cache_key(other, exe, sizeof(exe), k5);
	ck_assert_mem_ne(k1, k5, 32);                  /* another driver */
	/* the directory is not part of the key */
	setenv(ACCEL_CACHE_DIR_ENV, "/elsewhere", 1);
	accel_exec_cache_destroy(a2);
	a2 = cache_new("device-a");
	accel_exec_cache_key(a2, exe, sizeof(exe), k2);
	ck_assert_mem_eq(k1, k2, 32);
	/* the length is hashed: "ab"+"c" is not "a"+"bc" */
	accel_exec_cache_destroy(a2);
	a2 = cache_new("device-a");
	accel_exec_cache_key(a2, "", 0, k2);
	accel_exec_cache_key(a, "\0", 1, k3);
	ck_assert_mem_ne(k2, k3, 32);
	accel_exec_cache_destroy(a);
	accel_exec_cache_destroy(a2);
	accel_exec_cache_destroy(b);
	accel_exec_cache_destroy(other);
}
END_TEST

START_TEST(test_directory_choice)
{
	struct accel_exec_cache *c;

	c = cache_new("d");
	ck_assert_str_eq(accel_exec_cache_dir(c), cachedir);
	accel_exec_cache_destroy(c);
	unsetenv(ACCEL_CACHE_DIR_ENV);
	setenv("XDG_CACHE_HOME", "/x/cache", 1);
	setenv("HOME", "/home/u", 1);
	c = cache_new("d");
	ck_assert_str_eq(accel_exec_cache_dir(c), "/x/cache/accelsched");
	accel_exec_cache_destroy(c);
	setenv("XDG_CACHE_HOME", "relative", 1); /* invalid per the XDG spec */
	c = cache_new("d");
	ck_assert_str_eq(accel_exec_cache_dir(c), "/home/u/.cache/accelsched");
	accel_exec_cache_destroy(c);
	unsetenv("XDG_CACHE_HOME");
	unsetenv("HOME");
	c = TEST_NOT_NULL;
	ASSERT_OK(accel_exec_cache_create("test", "d", 1, ACCEL_CACHE_OPTION_UNSET, &c));
	ck_assert_ptr_null(c); /* nowhere to keep it: off */
}
END_TEST

START_TEST(test_disabled)
{
	struct accel_exec_cache *c = TEST_NOT_NULL;

	ASSERT_OK(accel_exec_cache_create("test", "d", 1, 0, &c));
	ck_assert_ptr_null(c);
	setenv(ACCEL_CACHE_DISABLE_ENV, "1", 1);
	c = TEST_NOT_NULL;
	ASSERT_OK(accel_exec_cache_create("test", "d", 1, 1, &c)); /* env wins */
	ck_assert_ptr_null(c);
	setenv(ACCEL_CACHE_DISABLE_ENV, "0", 1);
	c = cache_new("d");
	accel_exec_cache_destroy(c);
	setenv(ACCEL_CACHE_DISABLE_ENV, "", 1);
	c = cache_new("d");
	accel_exec_cache_destroy(c);
	ck_assert_int_eq(count_files(cachedir, NULL), -1); /* made lazily */
}
END_TEST

START_TEST(test_option_values)
{
	int on = -5;

	ASSERT_OK(accel_exec_cache_option("0", "vulkan", "0?cache=0", &on));
	ck_assert_int_eq(on, 0);
	ASSERT_OK(accel_exec_cache_option("1&name=x", "vulkan", "0?cache=1&name=x", &on));
	ck_assert_int_eq(on, 1);
	on = -5;
	ASSERT_ERRNO(accel_exec_cache_option("2", "vulkan", "0?cache=2", &on), EINVAL);
	ASSERT_MESSAGE_CONTAINS("accel_device_open: \"vulkan://0?cache=2\": the option cache= takes 0 (no executable cache) or 1");
	ck_assert_int_eq(on, -5);
	ASSERT_ERRNO(accel_exec_cache_option("", "cuda", "0?cache=", &on), EINVAL);
	ASSERT_ERRNO(accel_exec_cache_option("10", "cuda", "0?cache=10", &on), EINVAL);
	ASSERT_ERRNO(accel_exec_cache_option("yes", "x", "y", &on), EINVAL);
	ck_assert_int_eq(on, -5);
}
END_TEST

START_TEST(test_store_then_hit)
{
	struct accel_exec_cache *c = cache_new("d");
	uint8_t key[32], *p = TEST_NOT_NULL;
	char path[4096];
	struct stat st;
	size_t len = 0;

	accel_exec_cache_key(c, "exe", 3, key);
	ck_assert(!accel_exec_cache_lookup(c, key, &p, &len));
	ck_assert_ptr_eq(p, TEST_NOT_NULL);  /* untouched on a miss */
	stats_eq(c, 0, 1, 0, 0, 0);
	accel_exec_cache_store(c, key, "payload", 7);
	stats_eq(c, 0, 1, 0, 1, 0);
	ck_assert_int_eq(count_files(cachedir, NULL), 1);
	ck_assert_int_eq(stat(cachedir, &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0700);
	ck_assert_int_eq(stat(accel_exec_cache_path(c, key, path, sizeof(path)), &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0600);
	ck_assert_int_eq(st.st_size, ENTRY_HEADER + 7);
	ck_assert(accel_exec_cache_lookup(c, key, &p, &len));
	ck_assert_uint_eq(len, 7);
	ck_assert_mem_eq(p, "payload", 7);
	free(p);
	stats_eq(c, 1, 1, 0, 1, 0);
	/* overwriting is atomic and leaves one file */
	accel_exec_cache_store(c, key, "other", 5);
	ck_assert(accel_exec_cache_lookup(c, key, &p, &len));
	ck_assert_uint_eq(len, 5);
	free(p);
	ck_assert_int_eq(count_files(cachedir, NULL), 1);
	/* empty payloads are not stored */
	accel_exec_cache_key(c, "exe2", 4, key);
	accel_exec_cache_store(c, key, "", 0);
	ck_assert_int_eq(count_files(cachedir, NULL), 1);
	stats_eq(c, 2, 1, 0, 2, 0);
	accel_exec_cache_destroy(c);
}
END_TEST

/* Writes @len bytes as the file of @key. */
static void write_file(struct accel_exec_cache *c, const uint8_t *key,
		       const void *data, size_t len)
{
	char path[4096];
	FILE *f = fopen(accel_exec_cache_path(c, key, path, sizeof(path)), "wb");

	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(data, 1, len, f), len);
	fclose(f);
}

/* Reads the good entry of @key into @buf (at most @cap bytes). */
static size_t read_file(struct accel_exec_cache *c, const uint8_t *key,
			uint8_t *buf, size_t cap)
{
	char path[4096];
	FILE *f = fopen(accel_exec_cache_path(c, key, path, sizeof(path)), "rb");
	size_t n;

	ck_assert_ptr_nonnull(f);
	n = fread(buf, 1, cap, f);
	fclose(f);
	return n;
}

/* @bad as the entry of @key: a miss, counted, removed, noted. */
static void expect_ignored(struct accel_exec_cache *c, const uint8_t *key,
			   const void *bad, size_t len, const char *why,
			   uint64_t rejected)
{
	char path[4096];
	uint8_t *p = NULL;
	size_t n = 0;
	struct accel_exec_cache_stats s;

	write_file(c, key, bad, len);
	ck_assert(!accel_exec_cache_lookup(c, key, &p, &n));
	ck_assert_ptr_null(p);
	accel_exec_cache_stats(c, &s);
	ck_assert_uint_eq(s.rejected, rejected);
	ck_assert_int_eq(access(accel_exec_cache_path(c, key, path, sizeof(path)), F_OK), -1);
	note_contains(c, path);
	note_contains(c, why);
	note_contains(c, "it will be rewritten");
}

START_TEST(test_corrupt_files_ignored)
{
	struct accel_exec_cache *c = cache_new("d");
	uint8_t key[32], other[32], good[ENTRY_HEADER + 7], bad[ENTRY_HEADER + 8];
	uint8_t *p = NULL;
	uint64_t big;
	size_t n, len = 0;
	uint64_t r = 0;

	accel_exec_cache_key(c, "exe", 3, key);
	accel_exec_cache_key(c, "exe2", 4, other);
	accel_exec_cache_store(c, key, "payload", 7);
	n = read_file(c, key, good, sizeof(good));
	ck_assert_uint_eq(n, sizeof(good));

	expect_ignored(c, key, good, 0, "shorter than an entry's header", ++r);
	expect_ignored(c, key, good, ENTRY_HEADER - 1, "shorter than an entry's header", ++r);
	expect_ignored(c, key, good, sizeof(good) - 1, "payload size does not match", ++r);
	memcpy(bad, good, sizeof(good));
	bad[sizeof(good)] = 'x';                       /* one byte too many */
	expect_ignored(c, key, bad, sizeof(good) + 1, "payload size does not match", ++r);
	memcpy(bad, good, sizeof(good));
	bad[ENTRY_HEADER + 3] ^= 1;                    /* a flipped payload byte */
	expect_ignored(c, key, bad, sizeof(good), "damaged (SHA-256 mismatch)", ++r);
	memcpy(bad, good, sizeof(good));
	bad[0] = 'X';                                  /* wrong magic */
	expect_ignored(c, key, bad, sizeof(good), "bad magic", ++r);
	memcpy(bad, good, sizeof(good));
	bad[8] = 2;                                    /* wrong version */
	expect_ignored(c, key, bad, sizeof(good), "another format version", ++r);
	memcpy(bad, good, sizeof(good));
	bad[12] = 89;                                  /* wrong header size */
	expect_ignored(c, key, bad, sizeof(good), "another format version", ++r);
	/* a good entry of another key, under this key's name */
	expect_ignored(c, other, good, sizeof(good), "the entry of another key", ++r);
	/* payload sizes near 2^32 and 2^64, and 0 */
	for (int i = 0; i < 3; i++) {
		big = i == 0 ? UINT64_MAX : i == 1 ? (UINT64_C(1) << 32) + 7 : 0;
		memcpy(bad, good, sizeof(good));
		for (int b = 0; b < 8; b++)
			bad[48 + b] = (uint8_t)(big >> (8 * b));
		expect_ignored(c, key, bad, sizeof(good), "payload size does not match", ++r);
	}
	/* and a good one is read back after all that */
	accel_exec_cache_store(c, key, "payload", 7);
	ck_assert(accel_exec_cache_lookup(c, key, &p, &len));
	ck_assert_uint_eq(len, 7);
	free(p);
	stats_eq(c, 1, r, r, 2, 0);
	accel_exec_cache_destroy(c);
}
END_TEST

START_TEST(test_not_regular_files_ignored)
{
	struct accel_exec_cache *c = cache_new("d");
	uint8_t key[32], *p = NULL;
	char path[4096];
	size_t len;

	accel_exec_cache_key(c, "exe", 3, key);
	accel_exec_cache_store(c, key, "x", 1);
	accel_exec_cache_path(c, key, path, sizeof(path));
	ck_assert_int_eq(unlink(path), 0);
	ck_assert_int_eq(mkdir(path, 0700), 0);        /* a directory */
	ck_assert(!accel_exec_cache_lookup(c, key, &p, &len));
	note_contains(c, "not a regular file");
	note_contains(c, "could not remove it");
	ck_assert_int_eq(rmdir(path), 0);
	/* A FIFO: dropped at once, never waited on for a writer (it hung). */
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	ck_assert(!accel_exec_cache_lookup(c, key, &p, &len));
	note_contains(c, "not a regular file");
	ck_assert_int_eq(access(path, F_OK), -1); /* removed */
	ck_assert_int_eq(symlink("/etc/passwd", path), 0); /* a link: never followed */
	ck_assert(!accel_exec_cache_lookup(c, key, &p, &len));
	note_contains(c, "cannot read");
	note_contains(c, "ELOOP");
	ck_assert_ptr_null(p);
	accel_exec_cache_destroy(c);
}
END_TEST

START_TEST(test_unwritable_directory)
{
	struct accel_exec_cache *c;
	char file[300], dir[320];
	uint8_t key[32], *p = NULL;
	size_t len;
	FILE *f;

	/* a file where a directory should be: fails even for root */
	snprintf(file, sizeof(file), "%s/file", tmpdir);
	f = fopen(file, "w");
	ck_assert_ptr_nonnull(f);
	fclose(f);
	snprintf(dir, sizeof(dir), "%s/sub", file);
	setenv(ACCEL_CACHE_DIR_ENV, dir, 1);
	c = cache_new("d");
	accel_exec_cache_key(c, "exe", 3, key);
	ck_assert(!accel_exec_cache_lookup(c, key, &p, &len));
	accel_exec_cache_store(c, key, "payload", 7);
	note_contains(c, "cannot create the directory");
	note_contains(c, "ENOTDIR");
	ck_assert(!accel_exec_cache_lookup(c, key, &p, &len));
	ck_assert_ptr_null(p);
	stats_eq(c, 0, 2, 0, 0, 1);
	accel_exec_cache_destroy(c);
	/* the directory is that file */
	setenv(ACCEL_CACHE_DIR_ENV, file, 1);
	c = cache_new("d");
	accel_exec_cache_store(c, key, "payload", 7);
	note_contains(c, "ENOTDIR");
	stats_eq(c, 0, 0, 0, 0, 1);
	accel_exec_cache_destroy(c);
}
END_TEST

struct racer {
	struct accel_exec_cache *c;
	const char *exe;
	int ok;
};

static void *race_store(void *arg)
{
	struct racer *r = arg;
	uint8_t key[32], *p;
	size_t len;

	accel_exec_cache_key(r->c, r->exe, strlen(r->exe), key);
	for (int i = 0; i < 50; i++) {
		if (accel_exec_cache_lookup(r->c, key, &p, &len)) {
			r->ok += len == strlen(r->exe) && !memcmp(p, r->exe, len);
			free(p);
		} else {
			accel_exec_cache_store(r->c, key, r->exe, strlen(r->exe));
			r->ok++;
		}
	}
	return NULL;
}

START_TEST(test_three_threads_one_cache)
{
	struct accel_exec_cache *c = cache_new("d");
	struct racer r[3] = { { c, "same", 0 }, { c, "same", 0 }, { c, "same", 0 } };
	struct accel_exec_cache_stats s;
	pthread_t t[3];
	int tmp;

	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, race_store, &r[i]), 0);
	for (int i = 0; i < 3; i++) {
		pthread_join(t[i], NULL);
		ck_assert_int_eq(r[i].ok, 50); /* never a torn or foreign read */
	}
	accel_exec_cache_stats(c, &s);
	ck_assert_uint_eq(s.hits + s.misses, 150);
	ck_assert_uint_eq(s.rejected, 0);
	ck_assert_uint_eq(s.failed, 0);
	ck_assert_int_eq(count_files(cachedir, &tmp), 1);
	ck_assert_int_eq(tmp, 0);
	accel_exec_cache_destroy(c);
}
END_TEST

/* ---- on a device -------------------------------------------------------- */

static accel_device_t *open_or_skip(const char *uri, bool *skip)
{
	accel_device_t *d = NULL;
	int err = accel_device_open(uri, NULL, &d);

	*skip = err == -ENODEV;
	if (*skip) {
		printf("SKIP: %s: %s\n", uri, accel_error_message());
		return NULL;
	}
	ASSERT_OK(err);
	return d;
}

static const char *vk_kernels(void)
{
	const char *k = getenv("ACCEL_TEST_VK_KERNELS");

	return k && *k ? k : NULL;
}

static void dev_stats(accel_device_t *d, struct accel_exec_cache_stats *s)
{
	ck_assert_ptr_nonnull(d->cache);
	accel_exec_cache_stats(d->cache, s);
}

static void load_ok(accel_device_t *d, const char *path)
{
	accel_executable_t *e = NULL;
	accel_export_info_t info;

	ASSERT_OK(accel_executable_load(d, path, &e));
	ASSERT_OK(accel_executable_export_info(e, 0, &info));
	ck_assert_uint_gt(accel_executable_export_count(e), 0);
	accel_executable_release(e);
}

/* The key of the executable file @path on @d. */
static void file_key(accel_device_t *d, const char *path, uint8_t key[32])
{
	uint8_t *data;
	size_t size;

	ASSERT_OK(accel_executable_read(path, &data, &size));
	accel_exec_cache_key(d->cache, data, size, key);
	free(data);
}

#define VK_SETUP(d) \
	bool skip_; \
	accel_device_t *d; \
	if (!vk_kernels()) \
		TEST_SKIP("ACCEL_TEST_VK_KERNELS is not set (a build without Vulkan)"); \
	d = open_or_skip("vulkan://0", &skip_); \
	if (skip_) \
		return

START_TEST(test_vk_miss_then_hit)
{
	struct accel_exec_cache_stats s0, s;
	VK_SETUP(d);
	uint8_t key[32];
	char path[4096];
	int files;

	dev_stats(d, &s0); /* the built-ins: one entry already */
	ck_assert_uint_eq(s0.hits + s0.misses, 1);
	files = count_files(cachedir, NULL);
	load_ok(d, vk_kernels());
	dev_stats(d, &s);
	ck_assert_uint_eq(s.misses, s0.misses + 1);
	ck_assert_uint_eq(s.stored, s0.stored + 1);
	ck_assert_uint_eq(s.hits, s0.hits);
	ck_assert_int_eq(count_files(cachedir, NULL), files + 1);
	file_key(d, vk_kernels(), key);
	ck_assert_int_eq(access(accel_exec_cache_path(d->cache, key, path, sizeof(path)), R_OK), 0);
	load_ok(d, vk_kernels());
	dev_stats(d, &s);
	ck_assert_uint_eq(s.hits, s0.hits + 1);     /* the second load hits */
	ck_assert_uint_eq(s.misses, s0.misses + 1);
	ck_assert_uint_eq(s.stored, s0.stored + 1); /* and stores nothing */
	ck_assert_uint_eq(s.rejected, 0);
	accel_device_release(d);
	/* another device object of the same device: the built-ins hit too */
	d = open_or_skip("vulkan://0", &skip_);
	dev_stats(d, &s);
	ck_assert_uint_eq(s.hits, 1);
	ck_assert_uint_eq(s.misses, 0);
	load_ok(d, vk_kernels());
	dev_stats(d, &s);
	ck_assert_uint_eq(s.hits, 2);
	accel_device_release(d);
}
END_TEST

START_TEST(test_vk_damaged_entry_replaced)
{
	struct accel_exec_cache_stats s;
	VK_SETUP(d);
	uint8_t key[32], *p = NULL;
	char path[4096];
	size_t len;
	int fd;

	load_ok(d, vk_kernels());
	file_key(d, vk_kernels(), key);
	accel_exec_cache_path(d->cache, key, path, sizeof(path));
	fd = open(path, O_WRONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pwrite(fd, "\xff", 1, ENTRY_HEADER + 20), 1);
	close(fd);
	load_ok(d, vk_kernels());                    /* still loads */
	dev_stats(d, &s);
	ck_assert_uint_eq(s.rejected, 1);
	note_contains(d->cache, "damaged");
	ck_assert(accel_exec_cache_lookup(d->cache, key, &p, &len)); /* rewritten */
	free(p);
	/* truncated to nothing */
	ck_assert_int_eq(truncate(path, 10), 0);
	load_ok(d, vk_kernels());
	dev_stats(d, &s);
	ck_assert_uint_eq(s.rejected, 2);
	ck_assert(accel_exec_cache_lookup(d->cache, key, &p, &len));
	free(p);
	accel_device_release(d);
}
END_TEST

START_TEST(test_vk_foreign_uuid_replaced)
{
	struct accel_exec_cache_stats s0, s;
	struct vk_header h;
	VK_SETUP(d);
	uint8_t key[32], *p = NULL, foreign[64];
	size_t len = 0;

	load_ok(d, vk_kernels());
	file_key(d, vk_kernels(), key);
	ck_assert(accel_exec_cache_lookup(d->cache, key, &p, &len));
	ck_assert_uint_ge(len, sizeof(h));
	/* the same entry, as another device's: its UUID differs */
	memset(foreign, 0, sizeof(foreign));
	memcpy(foreign, p, sizeof(h));
	free(p);
	memcpy(&h, foreign, sizeof(h));
	h.pipelineCacheUUID[0] ^= 0x5a;
	memcpy(foreign, &h, sizeof(h));
	accel_exec_cache_store(d->cache, key, foreign, sizeof(foreign));
	dev_stats(d, &s0);
	load_ok(d, vk_kernels());
	dev_stats(d, &s);
	ck_assert_uint_eq(s.rejected, s0.rejected + 1);
	ck_assert_uint_eq(s.hits, s0.hits);           /* not counted as a hit */
	ck_assert_uint_eq(s.misses, s0.misses + 1);
	ck_assert_uint_eq(s.stored, s0.stored + 1);   /* replaced */
	note_contains(d->cache, "pipelineCacheUUID");
	ck_assert(accel_exec_cache_lookup(d->cache, key, &p, &len));
	memcpy(&h, p, sizeof(h));
	free(p);
	ck_assert_uint_eq(h.pipelineCacheUUID[0] ^ foreign[16], 0x5a);
	/* a header too short, and another header version */
	accel_exec_cache_store(d->cache, key, foreign, 8);
	load_ok(d, vk_kernels());
	note_contains(d->cache, "shorter than a VkPipelineCache header");
	h.headerVersion = 7;
	memcpy(foreign, &h, sizeof(h));
	accel_exec_cache_store(d->cache, key, foreign, sizeof(foreign));
	load_ok(d, vk_kernels());
	note_contains(d->cache, "not a VkPipelineCache of header version one");
	h.headerVersion = VK_PIPELINE_CACHE_HEADER_VERSION_ONE;
	h.headerSize = 4000; /* beyond the payload */
	memcpy(foreign, &h, sizeof(h));
	accel_exec_cache_store(d->cache, key, foreign, sizeof(foreign));
	load_ok(d, vk_kernels());
	note_contains(d->cache, "not a VkPipelineCache of header version one");
	dev_stats(d, &s);
	ck_assert_uint_eq(s.rejected, s0.rejected + 4);
	accel_device_release(d);
}
END_TEST

START_TEST(test_vk_unwritable_dir_still_loads)
{
	char file[300], dir[320];
	struct accel_exec_cache_stats s;
	bool skip;
	accel_device_t *d;
	FILE *f;

	if (!vk_kernels())
		TEST_SKIP("ACCEL_TEST_VK_KERNELS is not set (a build without Vulkan)");
	snprintf(file, sizeof(file), "%s/file", tmpdir);
	f = fopen(file, "w");
	ck_assert_ptr_nonnull(f);
	fclose(f);
	snprintf(dir, sizeof(dir), "%s/sub", file);
	setenv(ACCEL_CACHE_DIR_ENV, dir, 1);
	d = open_or_skip("vulkan://0", &skip);
	if (skip)
		return;
	load_ok(d, vk_kernels());
	load_ok(d, vk_kernels());
	dev_stats(d, &s);
	ck_assert_uint_eq(s.hits, 0);
	ck_assert_uint_eq(s.failed, 3); /* built-ins, then two loads */
	note_contains(d->cache, "cannot create the directory");
	accel_device_release(d);
}
END_TEST

START_TEST(test_vk_disabled_no_files)
{
	static const char *const uris[] = {
		"vulkan://0?cache=0", "vulkan://?cache=0", "vulkan://0",
	};
	bool skip;
	accel_device_t *d;

	if (!vk_kernels())
		TEST_SKIP("ACCEL_TEST_VK_KERNELS is not set (a build without Vulkan)");
	for (int i = 0; i < 3; i++) {
		if (i == 2)
			setenv(ACCEL_CACHE_DISABLE_ENV, "1", 1);
		d = open_or_skip(uris[i], &skip);
		if (skip)
			return;
		ck_assert_str_eq(accel_device_uri(d), "vulkan://0");
		ck_assert_ptr_null(d->cache);
		load_ok(d, vk_kernels());
		accel_device_release(d);
		ck_assert_int_eq(count_files(cachedir, NULL), -1);
	}
	/* ACCEL_CACHE_DISABLE wins over cache=1 */
	d = open_or_skip("vulkan://0?cache=1", &skip);
	ck_assert_ptr_null(d->cache);
	accel_device_release(d);
	unsetenv(ACCEL_CACHE_DISABLE_ENV);
	d = open_or_skip("vulkan://0?cache=1", &skip);
	ck_assert_ptr_nonnull(d->cache);
	accel_device_release(d);
	ck_assert_int_eq(count_files(cachedir, NULL), 1); /* the built-ins */
}
END_TEST

START_TEST(test_vk_uri_options)
{
	accel_device_t *d = TEST_NOT_NULL;
	accel_driver_info_t info;
	bool skip;

	if (!vk_kernels())
		TEST_SKIP("ACCEL_TEST_VK_KERNELS is not set (a build without Vulkan)");
	/* The options are the driver's: one that cannot load answers ENODEV. */
	ASSERT_OK(accel_driver_info(1, &info));
	ck_assert_str_eq(info.name, "vulkan");
	if (!info.available)
		TEST_SKIP("the vulkan driver is not available here: %s", info.reason);
	ASSERT_ERRNO(accel_device_open("vulkan://0?cache=2", NULL, &d), EINVAL);
	ASSERT_MESSAGE_CONTAINS("\"vulkan://0?cache=2\": the option cache= takes 0 (no executable cache) or 1");
	ck_assert_ptr_null(d);
	ck_assert_int_eq(count_files(cachedir, NULL), -1);
	ASSERT_ERRNO(accel_device_open("vulkan://0?cache=", NULL, &d), EINVAL);
	ASSERT_ERRNO(accel_device_open("vulkan://0?cache=1&bogus=1", NULL, &d), EINVAL);
	ASSERT_MESSAGE_CONTAINS("\"cache=0|1\"");
	ASSERT_ERRNO(accel_device_open("vulkan://0?", NULL, &d), EINVAL);
	ASSERT_ERRNO(accel_device_open("vulkan://0?name=x", NULL, &d), EINVAL);
	ASSERT_ERRNO(accel_device_open("vulkan://0?cache", NULL, &d), EINVAL);
	/* "name=" with no name is no option */
	ASSERT_ERRNO(accel_device_open("vulkan://?cache=1&name=", NULL, &d), EINVAL);
	ASSERT_ERRNO(accel_device_open("vulkan://llvmpipe?name=x", NULL, &d), EINVAL);
	d = open_or_skip("vulkan://0?cache=1", &skip);
	if (skip)
		return;
	ck_assert_str_eq(accel_device_uri(d), "vulkan://0");
	accel_device_release(d);
}
END_TEST

struct loader {
	accel_device_t *d;
	int err;
};

static void *race_load(void *arg)
{
	struct loader *l = arg;

	for (int i = 0; i < 5 && !l->err; i++) {
		accel_executable_t *e = NULL;

		l->err = accel_executable_load(l->d, vk_kernels(), &e);
		accel_executable_release(e);
	}
	return NULL;
}

START_TEST(test_vk_three_threads_load)
{
	struct accel_exec_cache_stats s;
	struct loader l[3];
	pthread_t t[3];
	VK_SETUP(d);
	int tmp;

	for (int i = 0; i < 3; i++) {
		l[i].d = d;
		l[i].err = 0;
		ck_assert_int_eq(pthread_create(&t[i], NULL, race_load, &l[i]), 0);
	}
	for (int i = 0; i < 3; i++) {
		pthread_join(t[i], NULL);
		ck_assert_int_eq(l[i].err, 0);
	}
	dev_stats(d, &s);
	ck_assert_uint_eq(s.hits + s.misses, 16); /* 15 loads, the built-ins */
	ck_assert_uint_ge(s.hits, 12 - 1);        /* at most 3 racing misses */
	ck_assert_uint_eq(s.rejected, 0);
	ck_assert_uint_eq(s.failed, 0);
	ck_assert_int_eq(count_files(cachedir, &tmp), 2);
	ck_assert_int_eq(tmp, 0);
	accel_device_release(d);
}
END_TEST

/* ---- cuda ----------------------------------------------------------------- */

/*
 * The URI option is parsed before the device is looked for: runs wherever
 * the CUDA library loads, the toolkit's stub library included.
 */
START_TEST(test_gpu_uri_options)
{
	static const char *const bad[] = { "cuda://0?cache=2", "cuda://?cache=yes" };
	const char *stub = getenv("ACCEL_TEST_CUDA_STUB");
	accel_driver_info_t info;
	accel_device_t *d = TEST_NOT_NULL;

	if (stub && *stub)
		setenv("ACCEL_CUDA_LIBRARY", stub, 1);
	ASSERT_OK(accel_driver_info(2, &info));
	ck_assert_str_eq(info.name, "cuda");
	if (!info.available)
		TEST_SKIP("the cuda driver is not available here: %s", info.reason);
	for (int i = 0; i < 2; i++) {
		ASSERT_ERRNO(accel_device_open(bad[i], NULL, &d), EINVAL);
		ck_assert_ptr_null(d);
		ASSERT_MESSAGE_CONTAINS("the option cache= takes 0 (no executable cache) or 1");
		ASSERT_MESSAGE_CONTAINS(bad[i]);
	}
	ASSERT_ERRNO(accel_device_open("cuda://0?threads=2", NULL, &d), EINVAL);
	ASSERT_MESSAGE_CONTAINS("is not a device index; write cuda://0, cuda://1, ... (optionally with the option ?cache=0)");
	ASSERT_ERRNO(accel_device_open("cuda://0?", NULL, &d), EINVAL);
	ASSERT_ERRNO(accel_device_open("cuda://0?cache=1&cache", NULL, &d), EINVAL);
	ck_assert_int_eq(count_files(cachedir, NULL), -1);
}
END_TEST

static const char *cuda_kernels(void)
{
	const char *k = getenv("ACCEL_TEST_CUDA_KERNELS");

	return k && *k ? k : NULL;
}

#define CUDA_SETUP(d) \
	bool skip_; \
	accel_device_t *d; \
	if (!cuda_kernels()) \
		TEST_SKIP("ACCEL_TEST_CUDA_KERNELS is not set (a build without nvcc)"); \
	setenv("CUDA_CACHE_DISABLE", "1", 1); /* the driver's own JIT cache */ \
	d = open_or_skip("cuda://0", &skip_); \
	if (skip_) \
		return; \
	if (!d->cache) { \
		accel_device_release(d); \
		TEST_SKIP("cuda://0 keeps no cache: its library lacks the cuLink calls"); \
	}

/* The key of the PTX of the bundle at @path, as the driver derives it. */
static void cuda_key(accel_device_t *d, const char *path, uint8_t key[32])
{
	struct gpu_bundle b;
	uint8_t *data, *ptx;
	size_t size;

	ASSERT_OK(accel_executable_read(path, &data, &size));
	ASSERT_OK(gpu_bundle_parse(data, size, 1u << GPU_IMAGE_PTX, "test", path, &b));
	ptx = malloc((size_t)b.image_size + 1);
	ck_assert_ptr_nonnull(ptx);
	memcpy(ptx, b.image, b.image_size);
	ptx[b.image_size] = 0;
	accel_exec_cache_key(d->cache, ptx, (size_t)b.image_size + 1, key);
	free(ptx);
	free(b.entries);
	free(data);
}

START_TEST(test_cuda_miss_then_hit)
{
	struct accel_exec_cache_stats s0, s;
	uint8_t key[32], *p = NULL;
	size_t len = 0;
	CUDA_SETUP(d);

	dev_stats(d, &s0); /* the built-ins' PTX */
	ck_assert_uint_eq(s0.hits + s0.misses, 1);
	load_ok(d, cuda_kernels());
	dev_stats(d, &s);
	ck_assert_uint_eq(s.misses, s0.misses + 1);
	ck_assert_uint_eq(s.stored, s0.stored + 1);
	cuda_key(d, cuda_kernels(), key);
	ck_assert(accel_exec_cache_lookup(d->cache, key, &p, &len));
	ck_assert_uint_ge(len, 4);
	ck_assert_mem_eq(p, "\177ELF", 4); /* a cubin is an ELF file */
	free(p);
	load_ok(d, cuda_kernels());
	dev_stats(d, &s);
	ck_assert_uint_eq(s.hits, s0.hits + 2); /* the lookup above, the load */
	ck_assert_uint_eq(s.stored, s0.stored + 1);
	accel_device_release(d);
	d = open_or_skip("cuda://0", &skip_);
	dev_stats(d, &s);
	ck_assert_uint_eq(s.hits, 1); /* the built-ins, from the cache */
	accel_device_release(d);
}
END_TEST

START_TEST(test_cuda_refused_cubin_replaced)
{
	struct accel_exec_cache_stats s0, s;
	uint8_t key[32], *p = NULL;
	size_t len = 0;
	CUDA_SETUP(d);

	cuda_key(d, cuda_kernels(), key);
	/* a well-formed entry whose cubin is garbage */
	accel_exec_cache_store(d->cache, key, "\177ELF garbage", 12);
	dev_stats(d, &s0);
	load_ok(d, cuda_kernels());
	dev_stats(d, &s);
	ck_assert_uint_eq(s.rejected, s0.rejected + 1);
	ck_assert_uint_eq(s.stored, s0.stored + 1);
	note_contains(d->cache, "the driver refused the cached cubin");
	ck_assert(accel_exec_cache_lookup(d->cache, key, &p, &len));
	ck_assert_uint_gt(len, 12);
	free(p);
	accel_device_release(d);
}
END_TEST

START_TEST(test_cuda_disabled_no_files)
{
	accel_device_t *d;
	bool skip;

	if (!cuda_kernels())
		TEST_SKIP("ACCEL_TEST_CUDA_KERNELS is not set (a build without nvcc)");
	d = open_or_skip("cuda://0?cache=0", &skip);
	if (skip)
		return;
	ck_assert_ptr_null(d->cache);
	load_ok(d, cuda_kernels());
	accel_device_release(d);
	ck_assert_int_eq(count_files(cachedir, NULL), -1);
}
END_TEST

static Suite *exec_cache_suite(void)
{
	Suite *suite = suite_create("exec-cache");
	TCase *tc = tcase_create("layer");
	TCase *vk = tcase_create("vulkan");
	TCase *cu = tcase_create("cuda");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_sha256_vectors);
	tcase_add_test(tc, test_sha256_million_a_in_pieces);
	tcase_add_test(tc, test_key_derivation);
	tcase_add_test(tc, test_directory_choice);
	tcase_add_test(tc, test_disabled);
	tcase_add_test(tc, test_option_values);
	tcase_add_test(tc, test_store_then_hit);
	tcase_add_test(tc, test_corrupt_files_ignored);
	tcase_add_test(tc, test_not_regular_files_ignored);
	tcase_add_test(tc, test_unwritable_directory);
	tcase_add_test(tc, test_three_threads_one_cache);
	suite_add_tcase(suite, tc);

	tcase_add_checked_fixture(vk, setup, teardown);
	tcase_add_test(vk, test_vk_miss_then_hit);
	tcase_add_test(vk, test_vk_damaged_entry_replaced);
	tcase_add_test(vk, test_vk_foreign_uuid_replaced);
	tcase_add_test(vk, test_vk_unwritable_dir_still_loads);
	tcase_add_test(vk, test_vk_disabled_no_files);
	tcase_add_test(vk, test_vk_uri_options);
	tcase_add_test(vk, test_vk_three_threads_load);
	suite_add_tcase(suite, vk);

	tcase_add_checked_fixture(cu, setup, teardown);
	tcase_add_test(cu, test_gpu_uri_options);
	tcase_add_test(cu, test_cuda_miss_then_hit);
	tcase_add_test(cu, test_cuda_refused_cubin_replaced);
	tcase_add_test(cu, test_cuda_disabled_no_files);
	suite_add_tcase(suite, cu);
	return suite;
}

int main(void)
{
	return test_run_suite(exec_cache_suite());
}
