// SPDX-License-Identifier: MIT
/*
 * vulkan executables: *bundles* of SPIR-V modules, one compute shader per
 * entry point, with the table the core needs (Documentation/vulkan.rst):
 *
 *   offset 0   char magic[8] = "ACCELVK" "\0"
 *          8   u32 version = 1
 *         12   u32 entry_count
 *         16   entry_count entries of 96 bytes:
 *                char name[64]        NUL-terminated, unique
 *                u32 binding_count    bindings a dispatch passes
 *                u32 constant_count   32-bit constants a dispatch passes
 *                u32 workgroup_size[3] the shader's LocalSize
 *                u32 spirv_offset     from the start of the file, 4-aligned
 *                u32 spirv_size       bytes, a multiple of 4
 *                u32 reserved         0
 *          ... the SPIR-V modules (entry point "main" each)
 *
 * All little-endian. drivers/vulkan/vkpack.py writes them from glslc's
 * output, reading the workgroup size from each module's LocalSize; the
 * binding and constant counts come from the build (they are the kernel's
 * ABI, which SPIR-V with buffer device addresses cannot tell). The loader
 * checks every field before it creates anything, and creates every
 * pipeline at load, so a dispatch never compiles.
 *
 * The built-in shaders (fill, copy, check_counts) are a bundle too,
 * compiled into libaccel (vk_builtins.c, generated).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/error.h"
#include "vk.h"

#define BUNDLE_MAGIC "ACCELVK"
#define BUNDLE_VERSION 1u
#define BUNDLE_HEADER 16u
#define BUNDLE_ENTRY 96u
#define SPIRV_MAGIC 0x07230203u

struct bundle_entry {
	char name[ACCEL_EXPORT_NAME_MAX];
	uint32_t binding_count;
	uint32_t constant_count;
	uint32_t workgroup_size[3];
	uint32_t spirv_offset;
	uint32_t spirv_size;
	uint32_t reserved;
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
	return 0;
}

/* Checks the whole bundle; 0 with *@entries pointing into @data. */
static int parse(const uint8_t *data, size_t size, const char *fn,
		 const char *what, uint32_t *count,
		 struct bundle_entry **entries)
{
	struct bundle_entry *e;
	uint32_t n;
	int err;

	if (size < BUNDLE_HEADER || memcmp(data, BUNDLE_MAGIC, 8) != 0)
		return accel_fail(ENOEXEC,
			"%s: %s is not a vulkan executable (no \"ACCELVK\" bundle header; build one with drivers/vulkan/vkpack.py)",
			fn, what);
	if (rd32(data + 8) != BUNDLE_VERSION)
		return accel_fail(ENOEXEC,
			"%s: %s: bundle version %u, but this libaccel reads version %u; rebuild it with this libaccel's vkpack.py",
			fn, what, rd32(data + 8), BUNDLE_VERSION);
	n = rd32(data + 12);
	if (n > (size - BUNDLE_HEADER) / BUNDLE_ENTRY)
		return accel_fail(ENOEXEC, "%s: %s: %u entries do not fit in its %zu bytes",
				  fn, what, n, size);
	e = calloc(n ? n : 1, sizeof(*e));
	if (!e)
		return accel_fail(ENOMEM, "%s: out of memory", fn);
	memcpy(e, data + BUNDLE_HEADER, (size_t)n * BUNDLE_ENTRY);
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

static int create_pipeline(struct vk_device *dev, const uint8_t *data,
			   const struct bundle_entry *e, const char *fn,
			   const char *what, VkPipeline *out)
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
		r = f->vkCreateComputePipelines(dev->device, VK_NULL_HANDLE, 1, &pci,
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
		 const char *fn, const char *what)
{
	ve->base.exports = calloc(ve->count ? ve->count : 1, sizeof(*ve->base.exports));
	ve->entries = calloc(ve->count ? ve->count : 1, sizeof(*ve->entries));
	if (!ve->base.exports || !ve->entries)
		return accel_fail(ENOMEM, "%s: out of memory", fn);
	ve->base.export_count = ve->count;
	for (uint32_t i = 0; i < ve->count; i++) {
		struct accel_export *x = &ve->base.exports[i];
		int err = create_pipeline(dev, data, &be[i], fn, what,
					  &ve->entries[i].pipeline);

		if (err)
			return err;
		accel_strfmt(x->info.name, sizeof(x->info.name), "%s", be[i].name);
		x->info.binding_count = be[i].binding_count;
		x->info.constant_count = be[i].constant_count;
		memcpy(x->info.workgroup_size, be[i].workgroup_size,
		       sizeof(x->info.workgroup_size));
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
	err = build(dev, ve, data, be, fn, path);
	free(be);
	free(data);
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
	uint32_t count;
	int err = parse(accel_vk_builtins, accel_vk_builtins_size, fn, what,
			&count, &be);

	if (err)
		return err;
	for (int k = 0; !err && k < VK_BUILTIN_COUNT; k++) {
		uint32_t i = 0;

		while (i < count && strcmp(be[i].name, names[k]) != 0)
			i++;
		err = i < count ? create_pipeline(dev, accel_vk_builtins, &be[i], fn,
						  what, &dev->builtin[k]) :
				  accel_fail(ENOEXEC, "%s: %s lack '%s'", fn, what, names[k]);
	}
	free(be);
	return err;
}

void vk_builtins_destroy(struct vk_device *dev)
{
	for (int k = 0; k < VK_BUILTIN_COUNT; k++)
		if (dev->builtin[k])
			dev->f.vkDestroyPipeline(dev->device, dev->builtin[k], NULL);
}
