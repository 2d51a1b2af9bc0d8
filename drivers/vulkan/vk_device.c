// SPDX-License-Identifier: MIT
/*
 * The vulkan driver's devices and allocator.
 *
 * URIs: "vulkan://N" opens physical device N in the loader's order
 * (vulkan:// alone is device 0); "vulkan://?name=S" (or "vulkan://S" when
 * S does not start with a digit) opens the first device whose name
 * contains S, ignoring case (vulkan://llvmpipe). Options follow '?',
 * joined by '&': name=S, and cache=0|1 (the executable cache, on by
 * default: src/exec_cache.h), as in "vulkan://0?cache=0" or
 * "vulkan://?name=llvmpipe&cache=0". The URI of the open device is always
 * "vulkan://N".
 *
 * A device needs Vulkan 1.2 with bufferDeviceAddress, timelineSemaphore
 * and shaderInt64, and a queue family with compute; opening one that
 * lacks any fails with -ENODEV naming what is missing.
 *
 * Buffers: one VkBuffer and one VkDeviceMemory each (usable as storage,
 * transfer and indirect buffers, with a device address), sizes rounded up
 * to 16 bytes so that the built-in shaders may read whole 32-bit words.
 * A HOST_VISIBLE buffer gets a HOST_VISIBLE | HOST_COHERENT memory type
 * and stays mapped for its life, so accel_buffer_map() needs no driver
 * call and no flush; DEVICE_LOCAL prefers device-local types.
 *
 * Thread-safety: the device is thread-safe; its VkQueue and command pool
 * are each guarded by a mutex (vk.h).
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/error.h"
#include "src/exec_cache.h"
#include "vk.h"

#define VK_BUFFER_ALIGN 16

const char *vk_result_name(VkResult r)
{
	switch (r) {
#define R(x) case x: return #x;
	R(VK_SUCCESS) R(VK_NOT_READY) R(VK_TIMEOUT) R(VK_INCOMPLETE)
	R(VK_ERROR_OUT_OF_HOST_MEMORY) R(VK_ERROR_OUT_OF_DEVICE_MEMORY)
	R(VK_ERROR_INITIALIZATION_FAILED) R(VK_ERROR_DEVICE_LOST)
	R(VK_ERROR_MEMORY_MAP_FAILED) R(VK_ERROR_LAYER_NOT_PRESENT)
	R(VK_ERROR_EXTENSION_NOT_PRESENT) R(VK_ERROR_FEATURE_NOT_PRESENT)
	R(VK_ERROR_INCOMPATIBLE_DRIVER) R(VK_ERROR_TOO_MANY_OBJECTS)
	R(VK_ERROR_INVALID_SHADER_NV) R(VK_ERROR_UNKNOWN)
#undef R
	default:
		return "an unknown VkResult";
	}
}

int vk_errno(VkResult r)
{
	if (r == VK_ERROR_OUT_OF_HOST_MEMORY || r == VK_ERROR_OUT_OF_DEVICE_MEMORY ||
	    r == VK_ERROR_TOO_MANY_OBJECTS)
		return -ENOMEM;
	if (r == VK_ERROR_INCOMPATIBLE_DRIVER || r == VK_ERROR_INITIALIZATION_FAILED)
		return -ENODEV;
	return -EIO;
}

int vk_fail(VkResult r, const char *fn, const char *what)
{
	return accel_fail(-vk_errno(r), "%s: %s failed: %s (%d)", fn, what,
			  vk_result_name(r), (int)r);
}

/* ---- memory ----------------------------------------------------------- */

static int pick_type(const struct vk_device *dev, uint32_t bits,
		     VkMemoryPropertyFlags required,
		     VkMemoryPropertyFlags preferred)
{
	int best = -1, best_score = -1;

	for (uint32_t i = 0; i < dev->memory.memoryTypeCount; i++) {
		VkMemoryPropertyFlags f = dev->memory.memoryTypes[i].propertyFlags;
		int score;

		if (!(bits & (1u << i)) || (f & required) != required)
			continue;
		score = __builtin_popcount(f & preferred);
		if (score > best_score) {
			best = (int)i;
			best_score = score;
		}
	}
	return best;
}

int vk_memory_alloc(struct vk_device *dev, uint64_t size,
		    VkMemoryPropertyFlags required,
		    VkMemoryPropertyFlags preferred, struct vk_memory *out,
		    const char *fn)
{
	const struct vk_funcs *f = &dev->f;
	VkBufferCreateInfo bci = {
		.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
		.size = size < VK_BUFFER_ALIGN ? VK_BUFFER_ALIGN :
			(size + VK_BUFFER_ALIGN - 1) & ~(uint64_t)(VK_BUFFER_ALIGN - 1),
		.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
			 VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
			 VK_BUFFER_USAGE_TRANSFER_DST_BIT |
			 VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT |
			 VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT,
		.sharingMode = VK_SHARING_MODE_EXCLUSIVE,
	};
	VkMemoryAllocateFlagsInfo flags = {
		.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO,
		.flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT,
	};
	VkMemoryAllocateInfo mai = {
		.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
		.pNext = &flags,
	};
	VkBufferDeviceAddressInfo dai = {
		.sType = VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO,
	};
	VkMemoryRequirements req;
	VkResult r;
	int type;

	memset(out, 0, sizeof(*out));
	r = f->vkCreateBuffer(dev->device, &bci, NULL, &out->buffer);
	if (r != VK_SUCCESS)
		return vk_fail(r, fn, "vkCreateBuffer");
	f->vkGetBufferMemoryRequirements(dev->device, out->buffer, &req);
	type = pick_type(dev, req.memoryTypeBits, required, preferred);
	if (type < 0) {
		f->vkDestroyBuffer(dev->device, out->buffer, NULL);
		return accel_fail(ENOMEM,
			"%s: %s has no memory type with property flags 0x%x for a buffer of %" PRIu64 " bytes",
			fn, dev->base.uri, (unsigned int)required, size);
	}
	mai.allocationSize = req.size;
	mai.memoryTypeIndex = (uint32_t)type;
	r = f->vkAllocateMemory(dev->device, &mai, NULL, &out->memory);
	if (r == VK_SUCCESS)
		r = f->vkBindBufferMemory(dev->device, out->buffer, out->memory, 0);
	if (r == VK_SUCCESS &&
	    (dev->memory.memoryTypes[type].propertyFlags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT))
		r = f->vkMapMemory(dev->device, out->memory, 0, VK_WHOLE_SIZE, 0, &out->host);
	if (r != VK_SUCCESS) {
		vk_memory_free(dev, out);
		if (r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY)
			return accel_fail(ENOMEM,
				"%s: out of memory allocating %" PRIu64 " bytes on %s (%s)",
				fn, size, dev->base.uri, vk_result_name(r));
		return vk_fail(r, fn, "vkAllocateMemory");
	}
	dai.buffer = out->buffer;
	out->address = f->vkGetBufferDeviceAddress(dev->device, &dai);
	return 0;
}

void vk_memory_free(struct vk_device *dev, struct vk_memory *m)
{
	if (m->buffer)
		dev->f.vkDestroyBuffer(dev->device, m->buffer, NULL);
	if (m->memory)
		dev->f.vkFreeMemory(dev->device, m->memory, NULL); /* unmaps */
	memset(m, 0, sizeof(*m));
}

struct vk_buffer {
	accel_buffer_t base;
	struct vk_memory mem;
};

static void vk_buffer_destroy(accel_buffer_t *b)
{
	struct vk_buffer *vb = (struct vk_buffer *)b;

	vk_memory_free((struct vk_device *)b->device, &vb->mem);
	accel_buffer_fini(b);
	free(vb);
}

static const struct accel_buffer_ops vk_buffer_ops = {
	.destroy = vk_buffer_destroy,
};

static int vk_buffer_allocate(accel_device_t *d,
			      const accel_buffer_params_t *params,
			      uint64_t size, accel_buffer_t **out)
{
	struct vk_device *dev = (struct vk_device *)d;
	VkMemoryPropertyFlags required = 0, preferred = 0;
	struct vk_buffer *b = calloc(1, sizeof(*b));
	int err;

	if (!b)
		return accel_fail(ENOMEM, "accel_allocator_allocate_buffer: out of memory");
	if (params->memory_type & (ACCEL_MEMORY_TYPE_HOST_VISIBLE | ACCEL_MEMORY_TYPE_HOST_COHERENT))
		required |= VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
			    VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
	if (params->memory_type & ACCEL_MEMORY_TYPE_DEVICE_LOCAL)
		preferred |= VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
	if (params->memory_type & ACCEL_MEMORY_TYPE_HOST_LOCAL)
		preferred |= VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
	err = vk_memory_alloc(dev, size, required, preferred, &b->mem,
			      "accel_allocator_allocate_buffer");
	if (err) {
		free(b);
		return err;
	}
	accel_buffer_init(&b->base, &vk_buffer_ops, d, params, size);
	b->base.address = b->mem.address;
	b->base.host = b->mem.host;
	*out = &b->base;
	return 0;
}

/* ---- the device --------------------------------------------------------- */

static void vk_device_destroy(accel_device_t *d)
{
	struct vk_device *dev = (struct vk_device *)d;
	const struct vk_funcs *f = &dev->f;

	vk_flights_fini(dev); /* none in flight: each holds a reference */
	if (dev->device && f->vkWaitSemaphores) { /* all loaded (the last) */
		f->vkDeviceWaitIdle(dev->device);
		vk_builtins_destroy(dev);
		if (dev->pool)
			f->vkDestroyCommandPool(dev->device, dev->pool, NULL);
		if (dev->timeline)
			f->vkDestroySemaphore(dev->device, dev->timeline, NULL);
		if (dev->layout)
			f->vkDestroyPipelineLayout(dev->device, dev->layout, NULL);
	}
	if (dev->device && f->vkDestroyDevice)
		f->vkDestroyDevice(dev->device, NULL);
	if (dev->instance && f->vkDestroyInstance)
		f->vkDestroyInstance(dev->instance, NULL);
	pthread_mutex_destroy(&dev->queue_lock);
	pthread_mutex_destroy(&dev->pool_lock);
	accel_device_fini(d);
	free(dev);
}

/* ---- enumeration and queries ---------------------------------------------- */

/* The sums of the device-local heaps and of the host-visible ones. */
static void heap_sizes(const VkPhysicalDeviceMemoryProperties *m,
		       uint64_t *local, uint64_t *visible)
{
	uint32_t visible_heaps = 0;

	*local = 0;
	*visible = 0;
	for (uint32_t t = 0; t < m->memoryTypeCount && t < VK_MAX_MEMORY_TYPES; t++)
		if (m->memoryTypes[t].propertyFlags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT)
			visible_heaps |= 1u << m->memoryTypes[t].heapIndex;
	for (uint32_t h = 0; h < m->memoryHeapCount && h < VK_MAX_MEMORY_HEAPS; h++) {
		if (m->memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT)
			*local += m->memoryHeaps[h].size;
		if (visible_heaps & (1u << h))
			*visible += m->memoryHeaps[h].size;
	}
}

static int vk_query_i64(const accel_device_t *d, accel_device_query_t key,
			int64_t *out)
{
	const struct vk_device *dev = (const struct vk_device *)d;
	const VkPhysicalDeviceLimits *l = &dev->limits;
	uint64_t local, visible;
	int64_t v;

	switch (key) {
	case ACCEL_DEVICE_QUERY_MAX_WORKGROUP_SIZE_X:
	case ACCEL_DEVICE_QUERY_MAX_WORKGROUP_SIZE_Y:
	case ACCEL_DEVICE_QUERY_MAX_WORKGROUP_SIZE_Z:
		v = l->maxComputeWorkGroupSize[key - ACCEL_DEVICE_QUERY_MAX_WORKGROUP_SIZE_X];
		break;
	case ACCEL_DEVICE_QUERY_MAX_WORKGROUP_INVOCATIONS:
		v = l->maxComputeWorkGroupInvocations;
		break;
	case ACCEL_DEVICE_QUERY_MAX_WORKGROUP_COUNT_X:
	case ACCEL_DEVICE_QUERY_MAX_WORKGROUP_COUNT_Y:
	case ACCEL_DEVICE_QUERY_MAX_WORKGROUP_COUNT_Z:
		v = l->maxComputeWorkGroupCount[key - ACCEL_DEVICE_QUERY_MAX_WORKGROUP_COUNT_X];
		if (v > ACCEL_WORKGROUP_COUNT_MAX)
			v = ACCEL_WORKGROUP_COUNT_MAX;
		break;
	case ACCEL_DEVICE_QUERY_TIMESTAMPS:
		v = dev->timestamp_bits > 0;
		break;
	case ACCEL_DEVICE_QUERY_TIMESTAMP_PERIOD_PS:
		v = dev->timestamp_bits ? (int64_t)(l->timestampPeriod * 1000.0f + 0.5f) : 0;
		break;
	case ACCEL_DEVICE_QUERY_MEMORY_DEVICE_LOCAL_BYTES:
	case ACCEL_DEVICE_QUERY_MEMORY_HOST_VISIBLE_BYTES:
		heap_sizes(&dev->memory, &local, &visible);
		v = (int64_t)(key == ACCEL_DEVICE_QUERY_MEMORY_DEVICE_LOCAL_BYTES ?
			      local : visible);
		break;
	default:
		return -ENOENT;
	}
	*out = v;
	return 0;
}

static uint32_t device_kind(VkPhysicalDeviceType t)
{
	switch (t) {
	case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
		return ACCEL_DEVICE_KIND_INTEGRATED_GPU;
	case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
		return ACCEL_DEVICE_KIND_DISCRETE_GPU;
	case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
		return ACCEL_DEVICE_KIND_VIRTUAL_GPU;
	case VK_PHYSICAL_DEVICE_TYPE_CPU:
		return ACCEL_DEVICE_KIND_CPU;
	default:
		return ACCEL_DEVICE_KIND_OTHER;
	}
}

static const char *vendor_name(uint32_t id)
{
	switch (id) {
	case 0x1002: return "AMD";
	case 0x1010: return "Imagination";
	case 0x10de: return "NVIDIA";
	case 0x13b5: return "ARM";
	case 0x5143: return "Qualcomm";
	case 0x8086: return "Intel";
	case 0x106b: return "Apple";
	case 0x10005: return "Mesa"; /* VK_VENDOR_ID_MESA: lavapipe */
	default: return NULL;
	}
}

/* Fills @i from the physical device @pd, number @index. */
static void fill_info(PFN_vkGetInstanceProcAddr gipa, VkInstance inst,
		      VkPhysicalDevice pd, uint32_t index,
		      accel_device_info_t *i)
{
	PFN_vkGetPhysicalDeviceProperties props = (PFN_vkGetPhysicalDeviceProperties)
		gipa(inst, "vkGetPhysicalDeviceProperties");
	PFN_vkGetPhysicalDeviceMemoryProperties memprops = (PFN_vkGetPhysicalDeviceMemoryProperties)
		gipa(inst, "vkGetPhysicalDeviceMemoryProperties");
	PFN_vkGetPhysicalDeviceQueueFamilyProperties qprops = (PFN_vkGetPhysicalDeviceQueueFamilyProperties)
		gipa(inst, "vkGetPhysicalDeviceQueueFamilyProperties");
	VkQueueFamilyProperties q[ACCEL_DEVICE_QUEUE_FAMILY_MAX];
	uint32_t nq = ACCEL_DEVICE_QUEUE_FAMILY_MAX;
	VkPhysicalDeviceMemoryProperties m;
	VkPhysicalDeviceProperties p;
	const char *vendor;

	props(pd, &p);
	memprops(pd, &m);
	qprops(pd, &nq, q);
	i->kind = device_kind(p.deviceType);
	i->vendor_id = p.vendorID;
	i->device_id = p.deviceID;
	accel_strfmt(i->uri, sizeof(i->uri), "vulkan://%u", index);
	accel_strfmt(i->name, sizeof(i->name), "%s", p.deviceName);
	vendor = vendor_name(p.vendorID);
	if (vendor)
		accel_strfmt(i->vendor, sizeof(i->vendor), "%s", vendor);
	else
		accel_strfmt(i->vendor, sizeof(i->vendor), "0x%04x", p.vendorID);
	heap_sizes(&m, &i->device_local_bytes, &i->host_visible_bytes);
	i->queue_family_count = nq;
	for (uint32_t f = 0; f < nq; f++) {
		VkQueueFlags fl = q[f].queueFlags;

		i->queue_families[f].count = q[f].queueCount;
		i->queue_families[f].flags =
			(fl & VK_QUEUE_COMPUTE_BIT ? ACCEL_QUEUE_FAMILY_COMPUTE : 0) |
			/* compute and graphics queues transfer too */
			(fl & (VK_QUEUE_TRANSFER_BIT | VK_QUEUE_COMPUTE_BIT |
			       VK_QUEUE_GRAPHICS_BIT) ? ACCEL_QUEUE_FAMILY_TRANSFER : 0) |
			(fl & VK_QUEUE_GRAPHICS_BIT ? ACCEL_QUEUE_FAMILY_GRAPHICS : 0);
	}
}

/* The instance libaccel makes, for enumeration and for each device. */
static VkResult instance_new(const struct vk_loader *vk, VkInstance *out)
{
	VkApplicationInfo app = {
		.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
		.pEngineName = "libaccel",
		.apiVersion = VK_API_VERSION_1_2,
	};
	VkInstanceCreateInfo ici = {
		.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
		.pApplicationInfo = &app,
	};

	return vk->vkCreateInstance(&ici, NULL, out);
}

int vk_enumerate(const struct accel_driver *drv, accel_device_info_t *infos,
		 uint32_t cap, uint32_t *count)
{
	static const char fn[] = "accel_driver_device_count";
	const char *why;
	const struct vk_loader *vk = vk_loader_get(&why);
	PFN_vkEnumeratePhysicalDevices enumerate;
	PFN_vkDestroyInstance destroy;
	VkPhysicalDevice list[64];
	VkInstance inst;
	uint32_t n = 64;
	VkResult r;

	if (!vk)
		return accel_fail(ENODEV, "%s: \"vulkan\": driver not available: %s", fn, why);
	r = instance_new(vk, &inst);
	if (r == VK_ERROR_INCOMPATIBLE_DRIVER) {
		*count = 0; /* a loader and no driver: no device */
		return 0;
	}
	if (r != VK_SUCCESS)
		return vk_fail(r, fn, "vkCreateInstance");
	enumerate = (PFN_vkEnumeratePhysicalDevices)
		vk->vkGetInstanceProcAddr(inst, "vkEnumeratePhysicalDevices");
	destroy = (PFN_vkDestroyInstance)vk->vkGetInstanceProcAddr(inst, "vkDestroyInstance");
	r = enumerate ? enumerate(inst, &n, list) : VK_ERROR_INITIALIZATION_FAILED;
	if (r != VK_SUCCESS && r != VK_INCOMPLETE) {
		if (destroy)
			destroy(inst, NULL);
		return vk_fail(r, fn, "vkEnumeratePhysicalDevices");
	}
	*count = n;
	for (uint32_t i = 0; i < n && i < cap; i++)
		fill_info(vk->vkGetInstanceProcAddr, inst, list[i], i, &infos[i]);
	if (destroy)
		destroy(inst, NULL);
	return 0;
}

static const struct accel_device_ops vk_device_ops = {
	.destroy = vk_device_destroy,
	.buffer_allocate = vk_buffer_allocate,
	.executable_load = vk_executable_load,
	.calibration_executable = vk_calibration_executable,
	.execute = vk_execute,
	.command_buffer_end = vk_command_buffer_end,
	.command_buffer_destroy = vk_command_buffer_destroy,
	.query_i64 = vk_query_i64,
};

/* What the URI asks for: an index, or a name substring; the options. */
struct selector {
	long index;        /* -1: by name */
	char name[64];
	int cache;         /* the option cache=, or ACCEL_CACHE_OPTION_UNSET */
};

static int bad_uri(const char *device)
{
	return accel_fail(EINVAL,
		"accel_device_open: \"vulkan://%.64s\": the vulkan driver takes \"vulkan://N\" or \"vulkan://?name=NAME\", then the options \"name=NAME\" and \"cache=0|1\" (as \"vulkan://0?cache=0\", joined by '&')",
		device);
}

/* The options after '?': name=S, cache=0|1. */
static int parse_options(const char *device, const char *opts,
			 struct selector *sel)
{
	const char *value;
	char key[16];
	size_t vlen;
	int err;

	while (accel_uri_next_option(&opts, key, sizeof(key), &value, &vlen)) {
		if (strcmp(key, "name") == 0 && vlen && sel->index == 0 &&
		    vlen < sizeof(sel->name)) {
			sel->index = -1;
			memcpy(sel->name, value, vlen);
			sel->name[vlen] = 0;
		} else if (strcmp(key, "cache") == 0) {
			err = accel_exec_cache_option(value, "vulkan", device,
						      &sel->cache);
			if (err)
				return err;
		} else {
			return bad_uri(device);
		}
	}
	return 0;
}

static int parse_uri(const char *device, struct selector *sel)
{
	const char *q = strchr(device, '?');
	size_t id_len = q ? (size_t)(q - device) : strlen(device);
	char id[64], *end;

	sel->index = 0;
	sel->name[0] = 0;
	sel->cache = ACCEL_CACHE_OPTION_UNSET;
	if (id_len >= sizeof(id))
		return bad_uri(device);
	memcpy(id, device, id_len);
	id[id_len] = 0;
	if (q && !q[1])
		return bad_uri(device);
	if (id_len && !isdigit((unsigned char)id[0])) {
		sel->index = -1;
		accel_strfmt(sel->name, sizeof(sel->name), "%s", id);
	} else if (id_len) {
		errno = 0;
		sel->index = strtol(id, &end, 10);
		if (errno || *end || sel->index > 1024)
			return accel_fail(EINVAL,
				"accel_device_open: \"vulkan://%.64s\" is not a device index; write vulkan://0, vulkan://1, ... or vulkan://?name=NAME",
				device);
	}
	if (!q)
		return 0;
	if (id_len && strstr(q, "name=")) /* a device named twice */
		return bad_uri(device);
	return parse_options(device, q + 1, sel);
}

static bool name_matches(const char *name, const char *want)
{
	size_t n = strlen(want);

	for (const char *p = name; *p; p++)
		if (strncasecmp(p, want, n) == 0)
			return true;
	return false;
}

static int create_instance(struct vk_device *dev)
{
	VkResult r = instance_new(dev->vk, &dev->instance);

	if (r != VK_SUCCESS) {
		dev->instance = VK_NULL_HANDLE;
		if (r == VK_ERROR_INCOMPATIBLE_DRIVER)
			return accel_fail(ENODEV,
				"accel_device_open: no Vulkan driver is installed (vkCreateInstance: VK_ERROR_INCOMPATIBLE_DRIVER); install one, such as mesa-vulkan-drivers (lavapipe)");
		return vk_fail(r, "accel_device_open", "vkCreateInstance");
	}
#define VK_LOAD_INSTANCE(name) \
	dev->f.name = (PFN_##name)dev->vk->vkGetInstanceProcAddr(dev->instance, #name); \
	if (!dev->f.name) \
		return accel_fail(ENODEV, "accel_device_open: the Vulkan loader lacks " #name);
	VK_INSTANCE_FUNCS(VK_LOAD_INSTANCE)
#undef VK_LOAD_INSTANCE
	return 0;
}

static int select_physical(struct vk_device *dev, const struct selector *sel,
			   uint32_t *index)
{
	VkPhysicalDevice list[64];
	uint32_t n = 64;
	VkResult r = dev->f.vkEnumeratePhysicalDevices(dev->instance, &n, list);
	char names[512] = "";
	size_t used = 0;

	if (r != VK_SUCCESS && r != VK_INCOMPLETE)
		return vk_fail(r, "accel_device_open", "vkEnumeratePhysicalDevices");
	if (n == 0)
		return accel_fail(ENODEV,
			"accel_device_open: no Vulkan device: the loader found none (install a Vulkan driver such as mesa-vulkan-drivers, or check VK_ICD_FILENAMES / VK_DRIVER_FILES)");
	for (uint32_t i = 0; i < n; i++) {
		VkPhysicalDeviceProperties p;

		dev->f.vkGetPhysicalDeviceProperties(list[i], &p);
		if ((sel->index < 0 && name_matches(p.deviceName, sel->name)) ||
		    sel->index == (long)i) {
			dev->physical = list[i];
			dev->props = p;
			accel_strfmt(dev->name, sizeof(dev->name), "%s", p.deviceName);
			*index = i;
			return 0;
		}
		if (used < sizeof(names))
			used += (size_t)snprintf(names + used, sizeof(names) - used,
						 "%s%u: %s", i ? ", " : "", i, p.deviceName);
	}
	if (sel->index >= 0)
		return accel_fail(ENODEV,
			"accel_device_open: there is no Vulkan device %ld; the devices are %s",
			sel->index, names);
	return accel_fail(ENODEV,
		"accel_device_open: no Vulkan device's name contains \"%s\"; the devices are %s",
		sel->name, names);
}

/* -ENODEV naming the first missing requirement of the physical device. */
static int check_features(struct vk_device *dev)
{
	VkPhysicalDeviceVulkan12Features f12 = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
	};
	VkPhysicalDeviceFeatures2 f2 = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
		.pNext = &f12,
	};
	VkPhysicalDeviceProperties p;
	const char *missing = NULL;

	dev->f.vkGetPhysicalDeviceProperties(dev->physical, &p);
	if (p.apiVersion < VK_API_VERSION_1_2)
		return accel_fail(ENODEV,
			"accel_device_open: Vulkan device \"%s\" supports Vulkan %u.%u; the vulkan driver needs 1.2",
			dev->name, VK_API_VERSION_MAJOR(p.apiVersion),
			VK_API_VERSION_MINOR(p.apiVersion));
	dev->limits = p.limits;
	dev->f.vkGetPhysicalDeviceFeatures2(dev->physical, &f2);
	if (!f12.bufferDeviceAddress)
		missing = "bufferDeviceAddress (kernels reach their buffers through buffer device addresses)";
	else if (!f12.timelineSemaphore)
		missing = "timelineSemaphore (submissions complete through a timeline semaphore)";
	else if (!f2.features.shaderInt64)
		missing = "shaderInt64 (kernels compute with 64-bit addresses)";
	if (missing)
		return accel_fail(ENODEV,
			"accel_device_open: Vulkan device \"%s\" lacks the feature %s, which the vulkan driver needs",
			dev->name, missing);
	return 0;
}

static int pick_queue_family(struct vk_device *dev)
{
	VkQueueFamilyProperties q[32];
	uint32_t n = 32;

	dev->f.vkGetPhysicalDeviceQueueFamilyProperties(dev->physical, &n, q);
	for (uint32_t i = 0; i < n; i++)
		if (q[i].queueFlags & VK_QUEUE_COMPUTE_BIT) {
			dev->queue_family = i;
			dev->timestamp_bits = q[i].timestampValidBits;
			return 0;
		}
	return accel_fail(ENODEV,
		"accel_device_open: Vulkan device \"%s\" has no queue family with VK_QUEUE_COMPUTE_BIT",
		dev->name);
}

static int create_device(struct vk_device *dev)
{
	float priority = 1.0f;
	VkDeviceQueueCreateInfo qci = {
		.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
		.queueFamilyIndex = dev->queue_family,
		.queueCount = 1,
		.pQueuePriorities = &priority,
	};
	VkPhysicalDeviceVulkan12Features f12 = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
		.bufferDeviceAddress = VK_TRUE,
		.timelineSemaphore = VK_TRUE,
	};
	VkPhysicalDeviceFeatures2 f2 = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
		.pNext = &f12,
		.features.shaderInt64 = VK_TRUE,
	};
	VkDeviceCreateInfo dci = {
		.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
		.pNext = &f2,
		.queueCreateInfoCount = 1,
		.pQueueCreateInfos = &qci,
	};
	VkResult r = dev->f.vkCreateDevice(dev->physical, &dci, NULL, &dev->device);

	if (r != VK_SUCCESS) {
		dev->device = VK_NULL_HANDLE;
		return vk_fail(r, "accel_device_open", "vkCreateDevice");
	}
#define VK_LOAD_DEVICE(name) \
	dev->f.name = (PFN_##name)dev->f.vkGetDeviceProcAddr(dev->device, #name); \
	if (!dev->f.name) \
		return accel_fail(ENODEV, "accel_device_open: the Vulkan device lacks " #name);
	VK_DEVICE_FUNCS(VK_LOAD_DEVICE)
#undef VK_LOAD_DEVICE
	dev->f.vkGetDeviceQueue(dev->device, dev->queue_family, 0, &dev->queue);
	dev->f.vkGetPhysicalDeviceMemoryProperties(dev->physical, &dev->memory);
	return 0;
}

/* The pipeline layout, timeline semaphore, command pool and built-ins. */
static int create_objects(struct vk_device *dev)
{
	const struct vk_funcs *f = &dev->f;
	VkPushConstantRange range = {
		.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT,
		.size = sizeof(struct vk_push),
	};
	VkPipelineLayoutCreateInfo lci = {
		.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
		.pushConstantRangeCount = 1,
		.pPushConstantRanges = &range,
	};
	VkSemaphoreTypeCreateInfo tci = {
		.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO,
		.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE,
	};
	VkSemaphoreCreateInfo sci = {
		.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO,
		.pNext = &tci,
	};
	VkCommandPoolCreateInfo pci = {
		.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
		.queueFamilyIndex = dev->queue_family,
	};
	VkResult r;

	r = f->vkCreatePipelineLayout(dev->device, &lci, NULL, &dev->layout);
	if (r != VK_SUCCESS)
		return vk_fail(r, "accel_device_open", "vkCreatePipelineLayout");
	r = f->vkCreateSemaphore(dev->device, &sci, NULL, &dev->timeline);
	if (r != VK_SUCCESS)
		return vk_fail(r, "accel_device_open", "vkCreateSemaphore (timeline)");
	r = f->vkCreateCommandPool(dev->device, &pci, NULL, &dev->pool);
	if (r != VK_SUCCESS)
		return vk_fail(r, "accel_device_open", "vkCreateCommandPool");
	r = vk_flights_init(dev);
	return r ? r : vk_builtins_create(dev);
}

/*
 * The executable cache of the device: keyed by what makes a pipeline cache
 * of one device differ from another's (Documentation/libaccel.rst).
 */
static int create_cache(struct vk_device *dev, int option)
{
	struct {
		uint8_t uuid[VK_UUID_SIZE];
		uint32_t vendor, device, driver, api;
		char name[VK_MAX_PHYSICAL_DEVICE_NAME_SIZE];
	} id;

	memset(&id, 0, sizeof(id));
	memcpy(id.uuid, dev->props.pipelineCacheUUID, VK_UUID_SIZE);
	id.vendor = dev->props.vendorID;
	id.device = dev->props.deviceID;
	id.driver = dev->props.driverVersion;
	id.api = dev->props.apiVersion;
	accel_strfmt(id.name, sizeof(id.name), "%s", dev->props.deviceName);
	return accel_exec_cache_create("vulkan", &id, sizeof(id), option,
				       &dev->base.cache);
}

/*
 * The cost model's key (src/core.h): the device and the driver build, as
 * for the executable cache, so a new driver is calibrated anew.
 */
static void set_identity(struct vk_device *dev)
{
	char uuid[2 * VK_UUID_SIZE + 1];

	for (unsigned int i = 0; i < VK_UUID_SIZE; i++)
		snprintf(uuid + 2 * i, 3, "%02x", dev->props.pipelineCacheUUID[i]);
	accel_strfmt(dev->base.identity, sizeof(dev->base.identity),
		     "%.128s; vendor %04x device %04x; driver %u; api %u; cache %s",
		     dev->props.deviceName, dev->props.vendorID, dev->props.deviceID,
		     dev->props.driverVersion, dev->props.apiVersion, uuid);
}

static int vk_device_open(const struct accel_driver *drv, const char *device,
			  accel_scheduler_t *s, accel_device_t **out)
{
	struct selector sel;
	struct vk_device *dev;
	const char *why;
	char uri[32];
	uint32_t index = 0;
	int err = parse_uri(device, &sel);

	if (err)
		return err;
	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return accel_fail(ENOMEM, "accel_device_open: out of memory");
	pthread_mutex_init(&dev->queue_lock, NULL);
	pthread_mutex_init(&dev->pool_lock, NULL);
	dev->vk = vk_loader_get(&why);
	err = create_instance(dev);
	if (!err)
		err = select_physical(dev, &sel, &index);
	if (!err)
		err = check_features(dev);
	if (!err)
		err = pick_queue_family(dev);
	if (!err)
		err = create_device(dev);
	snprintf(uri, sizeof(uri), "vulkan://%u", index);
	accel_device_init(&dev->base, &vk_device_ops, drv, s, uri);
	dev->base.device_waits = true; /* vk_flight.c: one timeline, one queue */
	/* Kernels address bindings as 32-bit words (accel.glsl's ACCEL_BUFFER). */
	dev->base.binding_alignment = 4;
	if (!err)
		err = create_cache(dev, sel.cache);
	if (!err)
		set_identity(dev);
	if (!err)
		err = create_objects(dev);
	if (err) {
		char msg[ACCEL_ERROR_MAX];

		accel_strfmt(msg, sizeof(msg), "%s", accel_error_message());
		vk_device_destroy(&dev->base);
		return accel_fail(-err, "%s", msg);
	}
	*out = &dev->base;
	return 0;
}

static const char *vk_probe(const struct accel_driver *drv)
{
	const char *why;

	vk_loader_get(&why);
	return why;
}

const struct accel_driver accel_driver_vulkan = {
	.name = "vulkan",
	.uri_example = "vulkan://0",
	.device_open = vk_device_open,
	.probe = vk_probe,
	.enumerate = vk_enumerate,
};
