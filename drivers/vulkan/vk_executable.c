// SPDX-License-Identifier: MIT
/*
 * vulkan executables: *bundles* of SPIR-V modules, one compute shader per
 * entry point, with the table the core needs (Documentation/vulkan.rst):
 *
 *   offset 0   char magic[8] = "ACCELVK" "\0"
 *          8   u32 version = 2 (1 is read too)
 *         12   u32 entry_count
 *         16   entry_count entries of 112 bytes (96 in version 1):
 *                char name[64]        NUL-terminated, unique
 *                u32 binding_count    bindings a dispatch passes
 *                u32 constant_count   32-bit constants a dispatch passes
 *                u32 workgroup_size[3] the shader's LocalSize
 *                u32 spirv_offset     from the start of the file, 4-aligned
 *                u32 spirv_size       bytes, a multiple of 4
 *                u32 reserved         0
 *                u64 operations       per workgroup (version 2; 0: none)
 *                u64 bytes            read + written per workgroup (v2)
 *          ... the SPIR-V modules (entry point "main" each)
 *
 * All little-endian. drivers/vulkan/vkpack.py writes them from glslc's
 * output, reading the workgroup size from each module's LocalSize; the
 * binding and constant counts come from the build (they are the kernel's
 * ABI, which SPIR-V with buffer device addresses cannot tell). The loader
 * checks every field before it creates anything, and creates every
 * pipeline at load, so a dispatch never compiles.
 *
 * The built-in shaders (fill, copy, check_counts, and the cost model's
 * calibration kernels calibrate_ops and calibrate_stream) are a bundle
 * too, compiled into libaccel (vk_builtins.c, generated).
 *
 * The executable cache (src/exec_cache.h): each load, of a bundle or of
 * the built-ins, creates its pipelines through a VkPipelineCache. When the
 * device has a cache, that VkPipelineCache starts from the entry stored
 * under the bundle's key, once its header (VkPipelineCacheHeaderVersionOne:
 * vendor, device, pipelineCacheUUID) matches this device's; otherwise it
 * starts empty and, after the pipelines are made, its data
 * (vkGetPipelineCacheData) is stored under that key. An entry whose header
 * names another device or driver build is rejected, never passed to the
 * driver.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/error.h"
#include "src/exec_cache.h"
#include "vk.h"

#define BUNDLE_MAGIC "ACCELVK"
#define BUNDLE_VERSION 2u
#define BUNDLE_HEADER 16u
#define BUNDLE_ENTRY_V1 96u
#define BUNDLE_ENTRY 112u
#define SPIRV_MAGIC 0x07230203u

struct bundle_entry {
	char name[ACCEL_EXPORT_NAME_MAX];
	uint32_t binding_count;
	uint32_t constant_count;
	uint32_t workgroup_size[3];
	uint32_t spirv_offset;
	uint32_t spirv_size;
	uint32_t reserved;
	accel_export_cost_t cost;
};

_Static_assert(sizeof(struct bundle_entry) == BUNDLE_ENTRY, "bundle entry layout");

struct vk_executable {
	accel_executable_t base;
	uint32_t count;
	struct vk_entry *entries;
};

static uint32_t rd32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static int check_entry(const uint8_t *data, size_t size, uint32_t i,
		       const struct bundle_entry *e, const char *fn,
		       const char *what)
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
	if (e->spirv_offset % 4 || e->spirv_size % 4 || e->spirv_size < 20 ||
	    e->spirv_offset > size || e->spirv_size > size - e->spirv_offset)
		return accel_fail(ENOEXEC,
			"%s: %s: entry '%s': its SPIR-V (offset %u, %u bytes) is misaligned or outside the file (%zu bytes)",
			fn, what, e->name, e->spirv_offset, e->spirv_size, size);
	if (rd32(data + e->spirv_offset) != SPIRV_MAGIC)
		return accel_fail(ENOEXEC, "%s: %s: entry '%s' is not SPIR-V (bad magic number)",
				  fn, what, e->name);
	return accel_export_cost_check(&e->cost, fn, what, e->name);
}

/* Checks the whole bundle; 0 with *@entries pointing into @data. */
static int parse(const uint8_t *data, size_t size, const char *fn,
		 const char *what, uint32_t *count,
		 struct bundle_entry **entries)
{
	struct bundle_entry *e;
	uint32_t n, version, stride;
	int err;

	if (size < BUNDLE_HEADER || memcmp(data, BUNDLE_MAGIC, 8) != 0)
		return accel_fail(ENOEXEC,
			"%s: %s is not a vulkan executable (no \"ACCELVK\" bundle header; build one with drivers/vulkan/vkpack.py)",
			fn, what);
	version = rd32(data + 8);
	if (version != 1 && version != BUNDLE_VERSION)
		return accel_fail(ENOEXEC,
			"%s: %s: bundle version %u, but this libaccel reads versions 1 and %u; rebuild it with this libaccel's vkpack.py",
			fn, what, version, BUNDLE_VERSION);
	stride = version == 1 ? BUNDLE_ENTRY_V1 : BUNDLE_ENTRY;
	n = rd32(data + 12);
	if (n > (size - BUNDLE_HEADER) / stride)
		return accel_fail(ENOEXEC, "%s: %s: %u entries do not fit in its %zu bytes",
				  fn, what, n, size);
	e = calloc(n ? n : 1, sizeof(*e)); /* a version 1 entry declares no cost */
	if (!e)
		return accel_fail(ENOMEM, "%s: out of memory", fn);
	for (uint32_t i = 0; i < n; i++)
		memcpy(&e[i], data + BUNDLE_HEADER + (size_t)i * stride, stride);
	for (uint32_t i = 0; i < n; i++) {
		err = check_entry(data, size, i, &e[i], fn, what);
		for (uint32_t j = 0; !err && j < i; j++)
			if (strcmp(e[j].name, e[i].name) == 0)
				err = accel_fail(ENOEXEC, "%s: %s: two entries are named '%s'",
						 fn, what, e[i].name);
		if (err) {
			free(e);
			return err;
		}
	}
	*count = n;
	*entries = e;
	return 0;
}

/* The pipeline cache of one load, and the entry it came from or goes to. */
struct vk_pcache {
	VkPipelineCache cache;
	uint8_t key[ACCEL_SHA256_SIZE];
	bool hit;
};

/* Why @data is not a pipeline cache of @dev's, or NULL. */
static const char *foreign(const struct vk_device *dev, const uint8_t *data,
			   size_t len)
{
	VkPipelineCacheHeaderVersionOne h;

	if (len < sizeof(h))
		return "shorter than a VkPipelineCache header";
	memcpy(&h, data, sizeof(h));
	if (h.headerSize < sizeof(h) || h.headerSize > len ||
	    h.headerVersion != VK_PIPELINE_CACHE_HEADER_VERSION_ONE)
		return "not a VkPipelineCache of header version one";
	if (h.vendorID != dev->props.vendorID ||
	    h.deviceID != dev->props.deviceID ||
	    memcmp(h.pipelineCacheUUID, dev->props.pipelineCacheUUID,
		   VK_UUID_SIZE) != 0)
		return "the pipeline cache of another device or driver (its vendor, device or pipelineCacheUUID differ)";
	return NULL;
}

/*
 * Starts the pipeline cache of a load of @exe: from the cache's entry when
 * it suits the device, else empty. A failure leaves pc->cache null: the
 * pipelines are then made without one, as with the cache off.
 */
static void pcache_open(struct vk_device *dev, const uint8_t *exe,
			size_t size, struct vk_pcache *pc)
{
	struct accel_exec_cache *c = dev->base.cache;
	VkPipelineCacheCreateInfo ci = {
		.sType = VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO,
	};
	uint8_t *data = NULL;
	const char *why;
	size_t len = 0;
	VkResult r;

	memset(pc, 0, sizeof(*pc));
	if (!c)
		return;
	accel_exec_cache_key(c, exe, size, pc->key);
	if (accel_exec_cache_lookup(c, pc->key, &data, &len)) {
		why = foreign(dev, data, len);
		if (why) {
			accel_exec_cache_reject(c, pc->key, why);
		} else {
			ci.initialDataSize = len;
			ci.pInitialData = data;
			pc->hit = true;
		}
	}
	r = dev->f.vkCreatePipelineCache(dev->device, &ci, NULL, &pc->cache);
	if (r != VK_SUCCESS && pc->hit) {
		accel_exec_cache_reject(c, pc->key, "vkCreatePipelineCache refused it");
		pc->hit = false;
		ci.initialDataSize = 0;
		ci.pInitialData = NULL;
		r = dev->f.vkCreatePipelineCache(dev->device, &ci, NULL, &pc->cache);
	}
	if (r != VK_SUCCESS)
		pc->cache = VK_NULL_HANDLE;
	free(data);
}

/* Stores what a miss compiled (when @ok), and destroys the cache. */
static void pcache_close(struct vk_device *dev, struct vk_pcache *pc, bool ok)
{
	uint8_t *data;
	size_t len = 0;

	if (!pc->cache)
		return;
	if (ok && !pc->hit &&
	    dev->f.vkGetPipelineCacheData(dev->device, pc->cache, &len, NULL) == VK_SUCCESS &&
	    len && len <= ACCEL_CACHE_MAX_PAYLOAD && (data = malloc(len))) {
		if (dev->f.vkGetPipelineCacheData(dev->device, pc->cache, &len,
						  data) == VK_SUCCESS)
			accel_exec_cache_store(dev->base.cache, pc->key, data, len);
		free(data);
	}
	dev->f.vkDestroyPipelineCache(dev->device, pc->cache, NULL);
	pc->cache = VK_NULL_HANDLE;
}

static int create_pipeline(struct vk_device *dev, const uint8_t *data,
			   const struct bundle_entry *e, VkPipelineCache pc,
			   const char *fn, const char *what, VkPipeline *out)
{
	const struct vk_funcs *f = &dev->f;
	VkShaderModuleCreateInfo mci = {
		.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
		.codeSize = e->spirv_size,
		.pCode = (const uint32_t *)(const void *)(data + e->spirv_offset),
	};
	VkComputePipelineCreateInfo pci = {
		.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
		.stage = {
			.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
			.stage = VK_SHADER_STAGE_COMPUTE_BIT,
			.pName = "main",
		},
		.layout = dev->layout,
	};
	char msg[192];
	VkResult r;

	r = f->vkCreateShaderModule(dev->device, &mci, NULL, &pci.stage.module);
	if (r == VK_SUCCESS) {
		r = f->vkCreateComputePipelines(dev->device, pc, 1, &pci,
						NULL, out);
		f->vkDestroyShaderModule(dev->device, pci.stage.module, NULL);
	}
	if (r == VK_SUCCESS)
		return 0;
	*out = VK_NULL_HANDLE;
	snprintf(msg, sizeof(msg), "%.64s: creating the pipeline of entry '%s'",
		 what, e->name);
	return vk_fail(r, fn, msg);
}

static void vk_executable_destroy(accel_executable_t *e)
{
	struct vk_executable *ve = (struct vk_executable *)e;
	struct vk_device *dev = (struct vk_device *)e->device;

	for (uint32_t i = 0; i < ve->count; i++)
		if (ve->entries[i].pipeline)
			dev->f.vkDestroyPipeline(dev->device, ve->entries[i].pipeline, NULL);
	free(ve->entries);
	accel_executable_fini(e);
	free(ve);
}

static const struct accel_executable_ops vk_executable_ops = {
	.destroy = vk_executable_destroy,
};

static int build(struct vk_device *dev, struct vk_executable *ve,
		 const uint8_t *data, const struct bundle_entry *be,
		 VkPipelineCache pc, const char *fn, const char *what)
{
	ve->base.exports = calloc(ve->count ? ve->count : 1, sizeof(*ve->base.exports));
	ve->entries = calloc(ve->count ? ve->count : 1, sizeof(*ve->entries));
	if (!ve->base.exports || !ve->entries)
		return accel_fail(ENOMEM, "%s: out of memory", fn);
	ve->base.export_count = ve->count;
	for (uint32_t i = 0; i < ve->count; i++) {
		struct accel_export *x = &ve->base.exports[i];
		int err = create_pipeline(dev, data, &be[i], pc, fn, what,
					  &ve->entries[i].pipeline);

		if (err)
			return err;
		accel_strfmt(x->info.name, sizeof(x->info.name), "%s", be[i].name);
		x->info.binding_count = be[i].binding_count;
		x->info.constant_count = be[i].constant_count;
		memcpy(x->info.workgroup_size, be[i].workgroup_size,
		       sizeof(x->info.workgroup_size));
		x->cost = be[i].cost;
		x->fn = &ve->entries[i];
	}
	return 0;
}

int vk_executable_load(accel_device_t *d, const char *path,
		       accel_executable_t **out)
{
	static const char fn[] = "accel_executable_load";
	struct vk_device *dev = (struct vk_device *)d;
	struct bundle_entry *be = NULL;
	struct vk_executable *ve;
	struct vk_pcache pc;
	uint8_t *data = NULL;
	size_t size = 0;
	uint32_t count;
	int err = accel_executable_read(path, &data, &size);

	if (!err)
		err = parse(data, size, fn, path, &count, &be);
	if (err) {
		free(data);
		return err;
	}
	ve = calloc(1, sizeof(*ve));
	if (!ve) {
		free(be);
		free(data);
		return accel_fail(ENOMEM, "%s: out of memory", fn);
	}
	accel_executable_init(&ve->base, &vk_executable_ops, d);
	ve->count = count;
	pcache_open(dev, data, size, &pc);
	err = build(dev, ve, data, be, pc.cache, fn, path);
	pcache_close(dev, &pc, !err);
	free(be);
	free(data);
	if (err) {
		vk_executable_destroy(&ve->base);
		return err;
	}
	*out = &ve->base;
	return 0;
}

/*
 * The cost model's calibration kernels (core.h): the built-in
 * calibrate_ops and calibrate_stream, next to each other in the bundle.
 */
int vk_calibration_executable(accel_device_t *d, accel_executable_t **out)
{
	static const char fn[] = "accel_device_calibrate", what[] = "the built-in shaders";
	struct vk_device *dev = (struct vk_device *)d;
	struct bundle_entry *be;
	struct vk_executable *ve;
	uint32_t count, i = 0;
	bool found;
	int err = parse(accel_vk_builtins, accel_vk_builtins_size, fn, what,
			&count, &be);

	if (err)
		return err;
	while (i < count && strcmp(be[i].name, "calibrate_ops") != 0)
		i++;
	found = i + 1 < count && strcmp(be[i + 1].name, "calibrate_stream") == 0;
	ve = found ? calloc(1, sizeof(*ve)) : NULL;
	if (!ve) {
		free(be);
		return found ? accel_fail(ENOMEM, "%s: out of memory", fn) :
			       accel_fail(ENOEXEC, "%s: %s lack 'calibrate_ops' and 'calibrate_stream'",
					  fn, what);
	}
	accel_executable_init(&ve->base, &vk_executable_ops, d);
	ve->count = 2;
	err = build(dev, ve, accel_vk_builtins, &be[i], VK_NULL_HANDLE, fn, what);
	free(be);
	if (err) {
		vk_executable_destroy(&ve->base);
		return err;
	}
	*out = &ve->base;
	return 0;
}

int vk_builtins_create(struct vk_device *dev)
{
	static const char *const names[VK_BUILTIN_COUNT] = {
		[VK_BUILTIN_FILL] = "fill",
		[VK_BUILTIN_COPY] = "copy",
		[VK_BUILTIN_CHECK_COUNTS] = "check_counts",
	};
	static const char fn[] = "accel_device_open", what[] = "the built-in shaders";
	struct bundle_entry *be;
	struct vk_pcache pc;
	uint32_t count;
	int err = parse(accel_vk_builtins, accel_vk_builtins_size, fn, what,
			&count, &be);

	if (err)
		return err;
	pcache_open(dev, accel_vk_builtins, accel_vk_builtins_size, &pc);
	for (int k = 0; !err && k < VK_BUILTIN_COUNT; k++) {
		uint32_t i = 0;

		while (i < count && strcmp(be[i].name, names[k]) != 0)
			i++;
		err = i < count ? create_pipeline(dev, accel_vk_builtins, &be[i],
						  pc.cache, fn, what,
						  &dev->builtin[k]) :
				  accel_fail(ENOEXEC, "%s: %s lack '%s'", fn, what, names[k]);
	}
	pcache_close(dev, &pc, !err);
	free(be);
	return err;
}

void vk_builtins_destroy(struct vk_device *dev)
{
	for (int k = 0; k < VK_BUILTIN_COUNT; k++)
		if (dev->builtin[k])
			dev->f.vkDestroyPipeline(dev->device, dev->builtin[k], NULL);
}
