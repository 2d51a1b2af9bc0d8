// SPDX-License-Identifier: MIT
/*
 * cuda and hip executables: *bundles* (the format is in gpu.h) of one
 * module image (PTX or a cubin for cuda, a code object for hip) and the
 * table of its entry points that the core needs: names, binding and
 * constant counts, workgroup sizes. drivers/gpu/gpupack.py writes them.
 *
 * gpu_bundle_parse() checks every field before anything is created (pure:
 * the unit tests run it); loading then loads the image as one module and
 * looks every entry point up in it, so a dispatch never fails to find its
 * kernel. A kernel takes one argument, the device address of its
 * parameter block (drivers/cuda/accel.cuh).
 *
 * The built-in kernels (fill, copy, scatter, and the cost model's
 * calibration kernels) are one module compiled into libaccel
 * (gpu_backend.builtins).
 *
 * The executable cache (src/exec_cache.h): where the device keeps one
 * (cuda, with the cuLink calls), a PTX image is not handed to
 * cuModuleLoadData, which would JIT-compile it at every load: it is
 * compiled once with cuLinkCreate / cuLinkAddData / cuLinkComplete into a
 * cubin for the device, which is loaded and stored under the image's key;
 * the next load loads the stored cubin. A stored cubin the driver refuses
 * is rejected and the PTX compiled again. Any failure of the cache path
 * falls back to cuModuleLoadData on the PTX, so the cache never changes
 * what loads, only how fast.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/error.h"
#include "src/exec_cache.h"
#include "gpu.h"


_Static_assert(sizeof(struct gpu_bundle_entry) == GPU_BUNDLE_ENTRY, "bundle entry layout");

static uint32_t rd32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static const char *format_name(uint32_t format)
{
	switch (format) {
	case GPU_IMAGE_PTX:
		return "PTX (cuda)";
	case GPU_IMAGE_CUBIN:
		return "a cubin (cuda)";
	case GPU_IMAGE_HSACO:
		return "an AMD GPU code object (hip)";
	}
	return "an unknown format";
}

static int check_entry(const struct gpu_bundle_entry *e, uint32_t i,
		       const char *fn, const char *what)
{
	if (!memchr(e->name, 0, sizeof(e->name)) || !e->name[0])
		return accel_fail(ENOEXEC, "%s: %s: entry %u has no name, or one of %d bytes or more",
				  fn, what, i, ACCEL_EXPORT_NAME_MAX);
	if (!e->workgroup_size[0] || !e->workgroup_size[1] || !e->workgroup_size[2])
		return accel_fail(ENOEXEC, "%s: %s: entry '%s' has a zero workgroup size",
				  fn, what, e->name);
	if (e->binding_count > ACCEL_DISPATCH_MAX_BINDINGS ||
	    e->constant_count > ACCEL_DISPATCH_MAX_CONSTANTS)
		return accel_fail(ENOEXEC,
			"%s: %s: entry '%s' has %u bindings and %u constants; the most is %u and %u",
			fn, what, e->name, e->binding_count, e->constant_count,
			ACCEL_DISPATCH_MAX_BINDINGS, ACCEL_DISPATCH_MAX_CONSTANTS);
	return accel_export_cost_check(&e->cost, fn, what, e->name);
}

static int check_header(const uint8_t *data, size_t size, uint32_t formats,
			const char *fn, const char *what, struct gpu_bundle *out)
{
	uint32_t offset;

	if (size < GPU_BUNDLE_HEADER || memcmp(data, GPU_BUNDLE_MAGIC, 8) != 0)
		return accel_fail(ENOEXEC,
			"%s: %s is not a cuda/hip executable (no \"ACCELGPU\" bundle header; build one with drivers/gpu/gpupack.py)",
			fn, what);
	if (rd32(data + 8) != 1 && rd32(data + 8) != GPU_BUNDLE_VERSION)
		return accel_fail(ENOEXEC,
			"%s: %s: bundle version %u, but this libaccel reads versions 1 and %u; rebuild it with this libaccel's gpupack.py",
			fn, what, rd32(data + 8), GPU_BUNDLE_VERSION);
	out->stride = rd32(data + 8) == 1 ? GPU_BUNDLE_ENTRY_V1 : GPU_BUNDLE_ENTRY;
	out->entry_count = rd32(data + 12);
	out->format = rd32(data + 16);
	offset = rd32(data + 20);
	out->image_size = rd32(data + 24);
	if (out->format >= 32 || !(formats & (1u << out->format)))
		return accel_fail(ENOEXEC, "%s: %s holds %s, which this driver cannot load",
				  fn, what, format_name(out->format));
	if (out->entry_count > (size - GPU_BUNDLE_HEADER) / out->stride)
		return accel_fail(ENOEXEC, "%s: %s: %u entries do not fit in its %zu bytes",
				  fn, what, out->entry_count, size);
	if (!out->image_size || offset > size || out->image_size > size - offset)
		return accel_fail(ENOEXEC,
			"%s: %s: its image (offset %u, %u bytes) is empty or outside the file (%zu bytes)",
			fn, what, offset, out->image_size, size);
	out->image = data + offset;
	return 0;
}

int gpu_bundle_parse(const uint8_t *data, size_t size, uint32_t formats,
		     const char *fn, const char *what, struct gpu_bundle *out)
{
	struct gpu_bundle_entry *e;
	uint32_t n;
	int err;

	memset(out, 0, sizeof(*out));
	err = check_header(data, size, formats, fn, what, out);
	if (err)
		return err;
	n = out->entry_count;
	e = calloc(n ? n : 1, sizeof(*e));
	if (!e)
		return accel_fail(ENOMEM, "%s: out of memory", fn);
	for (uint32_t i = 0; i < n; i++) /* a version 1 entry declares no cost */
		memcpy(&e[i], data + GPU_BUNDLE_HEADER + (size_t)i * out->stride, out->stride);
	for (uint32_t i = 0; i < n; i++) {
		err = check_entry(&e[i], i, fn, what);
		for (uint32_t j = 0; !err && j < i; j++)
			if (strcmp(e[j].name, e[i].name) == 0)
				err = accel_fail(ENOEXEC, "%s: %s: two entries are named '%s'",
						 fn, what, e[i].name);
		if (err) {
			free(e);
			return err;
		}
	}
	out->entries = e;
	return 0;
}

/*
 * Compiles the NUL-terminated @ptx (@size bytes with the NUL) to a cubin
 * and loads it, storing it under @key; false (nothing loaded) on any
 * failure of the link, for the caller to load the PTX as before.
 */
static bool link_and_store(struct gpu_device *dev, uint8_t *ptx, size_t size,
			   const uint8_t *key, void **module)
{
	const struct gpu_jit_api *jit = dev->jit;
	void *state = NULL, *cubin = NULL;
	size_t cubin_size = 0;
	bool ok;

	if (jit->link_create(0, NULL, NULL, &state))
		return false;
	ok = !jit->link_add_data(state, GPU_JIT_INPUT_PTX, ptx, size, "accel",
				 0, NULL, NULL) &&
	     !jit->link_complete(state, &cubin, &cubin_size) &&
	     cubin && cubin_size && !dev->api->module_load(module, cubin);
	if (ok) /* cubin belongs to the link state: store before destroy */
		accel_exec_cache_store(dev->base.cache, key, cubin, cubin_size);
	jit->link_destroy(state);
	return ok;
}

/* PTX through the executable cache; false when it loaded nothing. */
static bool load_cached(struct gpu_device *dev, uint8_t *ptx, size_t size,
			void **module)
{
	struct accel_exec_cache *c = dev->base.cache;
	uint8_t key[ACCEL_SHA256_SIZE], *cubin = NULL;
	size_t len = 0;

	if (!c || !dev->jit)
		return false;
	accel_exec_cache_key(c, ptx, size, key);
	if (accel_exec_cache_lookup(c, key, &cubin, &len)) {
		int r = dev->api->module_load(module, cubin);

		free(cubin);
		if (!r)
			return true;
		accel_exec_cache_reject(c, key, "the driver refused the cached cubin");
	}
	return link_and_store(dev, ptx, size, key, module);
}

/* Loads @image as a module; PTX gets the NUL its loader wants. */
static int load_module(struct gpu_device *dev, const uint8_t *image,
		       uint32_t size, uint32_t format, const char *fn,
		       void **module)
{
	uint8_t *copy = NULL;
	int r;

	if (format == GPU_IMAGE_PTX) {
		copy = malloc((size_t)size + 1);
		if (!copy)
			return accel_fail(ENOMEM, "%s: out of memory", fn);
		memcpy(copy, image, size);
		copy[size] = 0;
		if (load_cached(dev, copy, (size_t)size + 1, module)) {
			free(copy);
			return 0;
		}
	}
	r = dev->api->module_load(module, copy ? (const void *)copy : image);
	free(copy); /* the driver has made its own copy */
	if (r) {
		*module = NULL;
		return gpu_fail(dev, r, fn, "loading the module");
	}
	return 0;
}

struct gpu_executable {
	accel_executable_t base;
	void *module;
	uint32_t count;
	struct gpu_entry *entries;
};

static void gpu_executable_destroy(accel_executable_t *e)
{
	struct gpu_executable *ge = (struct gpu_executable *)e;
	struct gpu_device *dev = (struct gpu_device *)e->device;

	if (ge->module && !gpu_enter(dev, "accel_executable_release")) {
		dev->api->module_unload(ge->module);
		gpu_leave(dev);
	}
	free(ge->entries);
	accel_executable_fini(e);
	free(ge);
}

static const struct accel_executable_ops gpu_executable_ops = {
	.destroy = gpu_executable_destroy,
};

/*
 * @ge's exports: the @count entries @be, each looked up in @module (the
 * context is current). @what names the image in a message.
 */
static int bind_entries(struct gpu_device *dev, struct gpu_executable *ge,
			void *module, const struct gpu_bundle_entry *be,
			uint32_t count, const char *fn, const char *what)
{
	ge->base.exports = calloc(count ? count : 1, sizeof(*ge->base.exports));
	ge->entries = calloc(count ? count : 1, sizeof(*ge->entries));
	if (!ge->base.exports || !ge->entries)
		return accel_fail(ENOMEM, "%s: out of memory", fn);
	ge->base.export_count = ge->count = count;
	for (uint32_t i = 0; i < count; i++) {
		struct accel_export *x = &ge->base.exports[i];
		int r = dev->api->module_function(&ge->entries[i].function, module, be[i].name);

		if (r)
			return accel_fail(ENOEXEC,
				"%s: %s: entry '%s' is not a kernel of its image (%s); %s",
				fn, what, be[i].name, gpu_result_name(dev->be, dev->api, r),
				module == dev->builtin_module ?
				"libaccel's own kernels are incomplete: rebuild libaccel" :
				"is it declared extern \"C\" __global__?");
		accel_strfmt(x->info.name, sizeof(x->info.name), "%s", be[i].name);
		x->info.binding_count = be[i].binding_count;
		x->info.constant_count = be[i].constant_count;
		memcpy(x->info.workgroup_size, be[i].workgroup_size, sizeof(x->info.workgroup_size));
		x->cost = be[i].cost;
		x->fn = &ge->entries[i];
	}
	return 0;
}

static int build(struct gpu_device *dev, struct gpu_executable *ge,
		 const struct gpu_bundle *b, const char *fn, const char *what)
{
	int err = load_module(dev, b->image, b->image_size, b->format, fn, &ge->module);

	return err ? err : bind_entries(dev, ge, ge->module, b->entries,
					b->entry_count, fn, what);
}

int gpu_executable_load(accel_device_t *d, const char *path,
			accel_executable_t **out)
{
	static const char fn[] = "accel_executable_load";
	struct gpu_device *dev = (struct gpu_device *)d;
	struct gpu_executable *ge;
	struct gpu_bundle b;
	uint8_t *data = NULL;
	size_t size = 0;
	int err = accel_executable_read(path, &data, &size);

	if (!err)
		err = gpu_bundle_parse(data, size, dev->be->formats, fn, path, &b);
	if (err) {
		free(data);
		return err;
	}
	ge = calloc(1, sizeof(*ge));
	if (!ge) {
		free(b.entries);
		free(data);
		return accel_fail(ENOMEM, "%s: out of memory", fn);
	}
	accel_executable_init(&ge->base, &gpu_executable_ops, d);
	err = gpu_enter(dev, fn);
	if (!err) {
		err = build(dev, ge, &b, fn, path);
		gpu_leave(dev);
	}
	free(b.entries);
	free(data);
	if (err) {
		gpu_executable_destroy(&ge->base);
		return err;
	}
	*out = &ge->base;
	return 0;
}

/*
 * The cost model's calibration kernels (core.h, calibration_executable):
 * accel_calibrate_ops and accel_calibrate_stream of the built-in module,
 * which the device keeps loaded as long as it lives; the executable only
 * looks them up (its module stays NULL: nothing of its own to unload).
 */
int gpu_calibration_executable(accel_device_t *d, accel_executable_t **out)
{
	static const char fn[] = "accel_device_calibrate";
	static const struct gpu_bundle_entry k[2] = {
		{ .name = "accel_calibrate_ops", .binding_count = 1,
		  .constant_count = 1, .workgroup_size = { ACCEL_COST_CALIBRATE_WG, 1, 1 } },
		{ .name = "accel_calibrate_stream", .binding_count = 2,
		  .workgroup_size = { ACCEL_COST_CALIBRATE_WG, 1, 1 } },
	};
	struct gpu_device *dev = (struct gpu_device *)d;
	struct gpu_executable *ge = calloc(1, sizeof(*ge));
	int err;

	if (!ge)
		return accel_fail(ENOMEM, "%s: out of memory", fn);
	accel_executable_init(&ge->base, &gpu_executable_ops, d);
	err = gpu_enter(dev, fn);
	if (!err) {
		err = bind_entries(dev, ge, dev->builtin_module, k, 2, fn,
				   "the built-in kernels");
		gpu_leave(dev);
	}
	if (err) {
		gpu_executable_destroy(&ge->base);
		return err;
	}
	*out = &ge->base;
	return 0;
}

/* The context is current. */
int gpu_builtins_load(struct gpu_device *dev)
{
	static const char *const names[GPU_BUILTIN_COUNT] = {
		[GPU_BUILTIN_FILL] = "accel_fill",
		[GPU_BUILTIN_COPY] = "accel_copy",
		[GPU_BUILTIN_SCATTER] = "accel_scatter",
	};
	static const char fn[] = "accel_device_open";
	const struct gpu_backend *be = dev->be;
	int err = load_module(dev, be->builtins, *be->builtins_size,
			      be->builtins_format, fn, &dev->builtin_module);

	for (int k = 0; !err && k < GPU_BUILTIN_COUNT; k++) {
		int r = dev->api->module_function(&dev->builtin[k], dev->builtin_module, names[k]);

		if (r)
			err = gpu_fail(dev, r, fn, names[k]);
	}
	return err;
}

/* The context is current. */
void gpu_builtins_unload(struct gpu_device *dev)
{
	if (dev->builtin_module)
		dev->api->module_unload(dev->builtin_module);
	dev->builtin_module = NULL;
}
