// SPDX-License-Identifier: MIT
/*
 * accel-bench vkcache: what the executable cache saves at load on
 * vulkan://0. The same executable is loaded (accel_executable_load(), all
 * its pipelines created) with a cold cache, its directory emptied before
 * each load, and with a warm one, the entries the cold load stored still
 * there; rounds interleave the two, medians are kept.
 *
 * The executable: the unit tests' vulkan kernels (tests/unit/kernels/
 * vulkan/, nine entry points), built into accel-bench; or the bundles
 * that ACCEL_BENCH_VK_EXECUTABLES names (colon-separated), each loaded in
 * turn. The cache lives in a temporary directory (ACCEL_CACHE_DIR); the
 * drivers' own shader caches (Mesa's, NVIDIA's) are turned off unless the
 * environment already says otherwise, or "cold" would be warm there.
 *
 *	METRIC vulkan.executable_load_warm_vs_cold      warm load time over cold
 *	METRIC vulkan.executable_load_warm_vs_uncached  warm over cache=0
 *
 * A cold load compiles and then stores its entry (vkGetPipelineCacheData,
 * a write, a rename); an uncached load (a cache=0 device) only
 * compiles: the second figure is what the cache gains once warm, the
 * first what a program sees on its second run over its first.
 *
 * accel-bench cucache does the same on cuda://0 with the cuda bundles that
 * ACCEL_BENCH_CUDA_EXECUTABLES names (built from PTX: a cold load links
 * the PTX into a cubin and stores it, a warm one loads the cubin; the
 * driver's JIT cache is off, CUDA_CACHE_DISABLE=1), giving
 * cuda.executable_load_warm_vs_cold and _warm_vs_uncached.
 *
 * How far below 1 the figure goes is the driver's: the cache hands the
 * driver back what vkGetPipelineCacheData() gave it. Lavapipe's pipeline
 * cache data holds its header alone, so there it is about 1.
 */
#include <stdio.h>

#include "bench.h"

#ifndef ACCEL_BENCH_VULKAN
int bench_vkcache(const struct opts *o)
{
	(void)o;
	fprintf(notes, "# vkcache: skipped: accel-bench was built without Vulkan headers or glslc\n");
	return 0;
}

int bench_cucache(const struct opts *o)
{
	(void)o;
	fprintf(notes, "# cucache: skipped: accel-bench was built without Vulkan headers or glslc\n");
	return 0;
}
#else
#include <dirent.h>
#include <stdbool.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <accel/accel.h>

extern const uint8_t accel_bench_vk_kernels[];
extern const uint32_t accel_bench_vk_kernels_size;

#define MAX_FILES 16

/* Removes the files of @dir (the cache's entries), not @dir itself. */
static void empty_dir(const char *dir)
{
	char path[4096];
	struct dirent *e;
	DIR *d = opendir(dir);

	if (!d)
		return;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.') {
			snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
			unlink(path);
		}
	closedir(d);
}

/* Loads every file once; the time in ns, or -1. */
static double load_all(accel_device_t *dev, char **files, int n)
{
	double t0 = now_ns();

	for (int i = 0; i < n; i++) {
		accel_executable_t *e = NULL;

		if (accel_executable_load(dev, files[i], &e))
			return -1;
		accel_executable_release(e);
	}
	return now_ns() - t0;
}

int bench_write_vk_kernels(const char *path)
{
	FILE *f = fopen(path, "wb");
	size_t n;

	if (!f)
		return -1;
	n = fwrite(accel_bench_vk_kernels, 1, accel_bench_vk_kernels_size, f);
	if (fclose(f) || n != accel_bench_vk_kernels_size) {
		errno = errno ? errno : EIO;
		return -1;
	}
	return 0;
}

static int run(const struct opts *o, const char *bench, const char *scheme,
	       const char *tmp, char **files, int n)
{
	int rounds = o->rounds < 9 ? 9 : o->rounds, first = 1, rc = 0;
	double *v = calloc(3 * (size_t)rounds, sizeof(double));
	char cache[4096], uri[64], name[96];
	accel_device_t *dev = NULL, *off = NULL;

	snprintf(cache, sizeof(cache), "%s/cache", tmp);
	setenv("ACCEL_CACHE_DIR", cache, 1);
	unsetenv("ACCEL_CACHE_DISABLE");
	snprintf(uri, sizeof(uri), "%s://0?cache=1", scheme);
	if (v && !accel_device_open(uri, NULL, &dev)) {
		snprintf(uri, sizeof(uri), "%s://0?cache=0", scheme);
		accel_device_open(uri, NULL, &off);
	}
	if (!v || !dev || !off) {
		fprintf(notes, "# %s: skipped: %s://0: %s\n", bench, scheme,
			v ? accel_error_message() : "out of memory");
		accel_device_release(dev);
		free(v);
		return 0;
	}
	for (int i = 0; !rc && i < rounds; i++) {
		empty_dir(cache);
		v[i] = load_all(dev, files, n);            /* cold: compiles, stores */
		v[rounds + i] = load_all(dev, files, n);   /* warm: the entries */
		v[2 * rounds + i] = load_all(off, files, n); /* no cache at all */
		if (v[i] < 0 || v[rounds + i] < 0 || v[2 * rounds + i] < 0) {
			fprintf(stderr, "accel-bench: %s: a load failed: %s\n",
				bench, accel_error_message());
			rc = 1;
		}
	}
	if (!rc) {
		double cold = median(v, rounds), warm = median(v + rounds, rounds);
		double none = median(v + 2 * rounds, rounds);

		if (o->json)
			printf("{\"bench\": \"%s\", \"executables\": %d, \"cold_load_ns\": %.0f, "
			       "\"warm_load_ns\": %.0f, \"uncached_load_ns\": %.0f, \"metrics\": {",
			       bench, n, cold, warm, none);
		else
			fprintf(notes, "# %s: loading %d executable(s) on %s: cold cache %.3f ms (compile and store), warm %.3f ms, no cache %.3f ms (medians of %d rounds)\n",
				bench, n, accel_device_uri(dev), cold / 1e6, warm / 1e6, none / 1e6, rounds);
		snprintf(name, sizeof(name), "%s.executable_load_warm_vs_cold", scheme);
		metric(o, name, warm / cold, &first);
		snprintf(name, sizeof(name), "%s.executable_load_warm_vs_uncached", scheme);
		metric(o, name, warm / none, &first);
		if (o->json)
			printf("}}\n");
	}
	empty_dir(cache);
	rmdir(cache);
	accel_device_release(off);
	accel_device_release(dev);
	free(v);
	return rc;
}

/* The files of @env (colon-separated), else the built-in bundle. */
static int bench_cache(const struct opts *o, const char *bench,
		       const char *scheme, const char *env_name, int driver,
		       bool builtin_ok)
{
	char tmp[2048], builtin[4096] = "";
	char *files[MAX_FILES], *list = NULL, *save = NULL;
	const char *env = getenv(env_name);
	accel_driver_info_t info;
	int n = 0, rc;

	if (accel_driver_info((uint32_t)driver, &info) || !info.available) {
		fprintf(notes, "# %s: skipped: %s\n", bench, info.reason);
		return 0;
	}
	if ((!env || !*env) && !builtin_ok) {
		fprintf(notes, "# %s: skipped: %s names no executable\n", bench, env_name);
		return 0;
	}
	/* the drivers' own caches off, so that a cold load compiles */
	setenv("MESA_SHADER_CACHE_DISABLE", "true", 0);
	setenv("__GL_SHADER_DISK_CACHE", "0", 0);
	setenv("CUDA_CACHE_DISABLE", "1", 0);
	snprintf(tmp, sizeof(tmp), "%s/accel-bench-cache-XXXXXX", bench_tmpdir());
	if (!mkdtemp(tmp)) {
		fprintf(stderr, "accel-bench: %s: cannot make a temporary directory\n", bench);
		return 1;
	}
	if (env && *env) {
		list = strdup(env);
		for (char *p = list ? strtok_r(list, ":", &save) : NULL;
		     p && n < MAX_FILES; p = strtok_r(NULL, ":", &save))
			files[n++] = p;
	} else if (snprintf(builtin, sizeof(builtin), "%s/test-kernels.vkexe", tmp),
		   bench_write_vk_kernels(builtin) == 0) {
		files[n++] = builtin;
	}
	if (!n) {
		fprintf(stderr, "accel-bench: %s: no executable to load\n", bench);
		rc = 1;
	} else {
		rc = run(o, bench, scheme, tmp, files, n);
	}
	if (builtin[0])
		unlink(builtin);
	rmdir(tmp);
	free(list);
	return rc;
}

int bench_vkcache(const struct opts *o)
{
	return bench_cache(o, "vkcache", "vulkan", "ACCEL_BENCH_VK_EXECUTABLES", 1, true);
}

int bench_cucache(const struct opts *o)
{
	return bench_cache(o, "cucache", "cuda", "ACCEL_BENCH_CUDA_EXECUTABLES", 2, false);
}
#endif
