// SPDX-License-Identifier: MIT
/*
 * Loading a vendor library (libcuda.so.1, libamdhip64.so.5) and its
 * symbol table: dlopen() the first library of the backend's list that
 * loads (or the file its environment variable names), then dlsym() every
 * symbol of struct gpu_api. All or nothing: a library that lacks one of
 * them (a driver older than the API the driver needs) is closed again and
 * the reason names the symbol.
 *
 * gpu_loader_get() does it once per process and backend, under the
 * backend's loader lock; the table is never unloaded (as with libvulkan,
 * unloading a GPU driver library at exit is more trouble than it saves).
 *
 * A statically linked program cannot dlopen() a vendor library (glibc
 * loads a second libc into it): such a program has no _DYNAMIC section,
 * and the reason says so instead of crashing later.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu.h"
#include "src/elf_check.h"

extern const char _DYNAMIC[] __attribute__((weak));

/*
 * A file named by a path (not a library name the loader searches for) is
 * looked at first: a truncated one would be mapped anyway, and SIGBUS in
 * dlopen() would take the whole program down, not just this backend.
 */
static bool unloadable(const char *file, const char *named_by, char *why,
		       size_t len)
{
	char what[160];

	if (!strchr(file, '/') || !accel_elf_check(file, what, sizeof(what)))
		return false;
	if (named_by)
		snprintf(why, len, "cannot load %s (named by %s): %s", file,
			 named_by, what);
	else
		snprintf(why, len, "cannot load %s: %s", file, what);
	return true;
}

static void *open_library(const struct gpu_backend *be, const char *path,
			  char *why, size_t len)
{
	const char *env = getenv(be->library_env);
	char tried[128] = "";
	size_t used = 0;
	void *h;

	if (!path && env && *env) {
		if (unloadable(env, be->library_env, why, len))
			return NULL;
		h = dlopen(env, RTLD_NOW | RTLD_LOCAL);
		if (!h)
			snprintf(why, len, "cannot load %s (named by %s): %s",
				 env, be->library_env, dlerror());
		return h;
	}
	if (path) {
		if (unloadable(path, NULL, why, len))
			return NULL;
		h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		if (!h)
			snprintf(why, len, "cannot load %s: %s", path, dlerror());
		return h;
	}
	for (const char *const *lib = be->libraries; *lib; lib++) {
		h = dlopen(*lib, RTLD_NOW | RTLD_LOCAL);
		if (h)
			return h;
		if (used < sizeof(tried))
			used += (size_t)snprintf(tried + used, sizeof(tried) - used,
						 "%s%s", used ? ", " : "", *lib);
	}
	snprintf(why, len, "cannot load the %s library (tried %s): %s; %s",
		 be->title, tried, dlerror(), be->install);
	return NULL;
}

void *gpu_loader_open(const struct gpu_backend *be, const char *path,
		      struct gpu_api *api, char *why, size_t len)
{
	void *h;

	memset(api, 0, sizeof(*api));
	if (!_DYNAMIC) {
		snprintf(why, len,
			 "this program is statically linked, and a static program cannot load the %s library (glibc); link it dynamically",
			 be->title);
		return NULL;
	}
	h = open_library(be, path, why, len);
	if (!h)
		return NULL;
	for (size_t i = 0; i < GPU_API_COUNT; i++) {
		void *sym = dlsym(h, be->symbols[i]);

		if (!sym) {
			snprintf(why, len,
				 "the %s library lacks %s; it is older than the driver API this libaccel needs (%s)",
				 be->title, be->symbols[i], be->install);
			dlclose(h);
			memset(api, 0, sizeof(*api));
			return NULL;
		}
		/* a table of function pointers, filled slot by slot */
		memcpy((char *)api + i * sizeof(void (*)(void)), &sym, sizeof(sym));
	}
	return h;
}

const struct gpu_api *gpu_loader_get(const struct gpu_backend *be,
				     const char **why)
{
	struct gpu_loader *l = be->loader;

	pthread_mutex_lock(&l->lock);
	if (!l->done) {
		l->handle = gpu_loader_open(be, NULL, &l->api, l->msg, sizeof(l->msg));
		l->why = l->handle ? NULL : l->msg;
		l->has_jit = l->handle && be->jit_symbols;
		for (size_t i = 0; l->has_jit && i < GPU_JIT_COUNT; i++) {
			void *sym = dlsym(l->handle, be->jit_symbols[i]);

			l->has_jit = sym != NULL;
			memcpy((char *)&l->jit + i * sizeof(void (*)(void)), &sym,
			       sizeof(sym));
		}
		l->done = true;
	}
	pthread_mutex_unlock(&l->lock);
	*why = l->why;
	return l->why ? NULL : &l->api;
}

const struct gpu_jit_api *gpu_loader_jit(const struct gpu_backend *be)
{
	struct gpu_loader *l = be->loader;
	bool has;

	pthread_mutex_lock(&l->lock);
	has = l->done && l->has_jit;
	pthread_mutex_unlock(&l->lock);
	return has ? &l->jit : NULL;
}

const char *gpu_probe(const struct gpu_backend *be)
{
	const char *why;

	if (!gpu_loader_get(be, &why))
		return why;
	if (!*be->builtins_size)
		return be->builtins_missing;
	return NULL;
}

const char *gpu_result_name(const struct gpu_backend *be,
			    const struct gpu_api *api, int result)
{
	const char *name = api ? be->result_name(api, result) : NULL;

	return name ? name : "an unknown result";
}
