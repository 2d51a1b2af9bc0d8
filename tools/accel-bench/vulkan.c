// SPDX-License-Identifier: MIT
/*
 * accel-bench vulkan: the per-submission host cost of a REUSABLE command
 * buffer on vulkan://0 with a new binding table each time, through
 * libaccel (queue, scheduler, executor, the driver's slot upload, a
 * timeline semaphore), against a hand-written raw Vulkan program that
 * does the same work the cheapest way Vulkan allows: one prerecorded
 * VkCommandBuffer, re-submitted after rewriting the one address its
 * kernel reads (its "binding table"), waited on a timeline semaphore.
 *
 * The work: fill 4 KiB of the bound buffer (libaccel: a fill through slot
 * 0, the driver's built-in shader; raw: vk-raw-fill.comp, the same number
 * of invocations), alternating between two buffers. Both sides submit
 * SUBMITS times back to back and wait for the last: libaccel's executor
 * then overlaps the caller's submissions with the device's work, as an
 * application would. Rounds are interleaved; medians are kept.
 *
 *	METRIC vulkan.reuse_submit_vs_raw   libaccel ns/submit over raw's
 */
#include <stdio.h>

#include "bench.h"

#ifndef ACCEL_BENCH_VULKAN
int bench_vulkan(const struct opts *o)
{
	fprintf(notes, "# vulkan: skipped: accel-bench was built without Vulkan headers or glslc\n");
	return 0;
}
#else
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

#include <accel/accel.h>

#define FILL_BYTES 4096u

static const uint32_t raw_fill_spv[] = {
#include "vk-raw-fill.inc"
};

/* ---- libaccel ----------------------------------------------------------- */

struct lib {
	accel_device_t *dev;
	accel_queue_t *queue;
	accel_command_buffer_t *cb;
	accel_buffer_t *target[2];
	accel_semaphore_t *sem;
	uint64_t value;
};

static int lib_setup(struct lib *l)
{
	accel_buffer_params_t p = { ACCEL_MEMORY_TYPE_DEVICE_LOCAL, ACCEL_BUFFER_USAGE_ALL };
	uint32_t v = 0x5a5a5a5a;
	int err = accel_device_open("vulkan://0", NULL, &l->dev);

	if (err)
		return err;
	err = accel_queue_create(l->dev, 0, &l->queue);
	for (int i = 0; i < 2 && !err; i++)
		err = accel_allocator_allocate_buffer(accel_device_allocator(l->dev), &p,
						      FILL_BYTES, &l->target[i]);
	if (!err)
		err = accel_command_buffer_create(l->dev, ACCEL_COMMAND_BUFFER_REUSABLE, 1, &l->cb);
	if (!err)
		err = accel_command_buffer_begin(l->cb);
	if (!err)
		err = accel_command_buffer_fill(l->cb, accel_buffer_ref_indirect(0, 0, FILL_BYTES), &v, 4);
	if (!err)
		err = accel_command_buffer_end(l->cb);
	if (!err)
		err = accel_semaphore_create(accel_device_scheduler(l->dev), 0, &l->sem);
	return err;
}

static void lib_teardown(struct lib *l)
{
	accel_semaphore_release(l->sem);
	accel_command_buffer_release(l->cb);
	for (int i = 0; i < 2; i++)
		accel_buffer_release(l->target[i]);
	accel_queue_release(l->queue);
	accel_device_release(l->dev);
}

static double lib_round(struct lib *l, int submits)
{
	double t0 = now_ns();

	for (int i = 0; i < submits; i++) {
		accel_binding_t b = { l->target[i & 1], 0, ACCEL_WHOLE_BUFFER };
		accel_binding_table_t table = { 1, &b };
		accel_semaphore_t *s[1] = { l->sem };
		uint64_t v[1] = { ++l->value };
		accel_semaphore_list_t sig = { 1, s, v };

		if (accel_queue_execute(l->queue, NULL, &sig, l->cb, &table, 0))
			return -1;
	}
	if (accel_semaphore_wait(l->sem, l->value, 0, accel_deadline_after(INT64_C(60000000000))))
		return -1;
	return (now_ns() - t0) / submits;
}

/* ---- raw Vulkan ------------------------------------------------------- */

#define RAW_FUNCS(X)                                                           \
	X(vkDestroyInstance) X(vkEnumeratePhysicalDevices) X(vkCreateDevice)   \
	X(vkGetPhysicalDeviceQueueFamilyProperties)                            \
	X(vkGetPhysicalDeviceMemoryProperties) X(vkDestroyDevice)              \
	X(vkGetDeviceQueue) X(vkCreateBuffer) X(vkDestroyBuffer)               \
	X(vkGetBufferMemoryRequirements) X(vkAllocateMemory) X(vkFreeMemory)   \
	X(vkBindBufferMemory) X(vkMapMemory) X(vkGetBufferDeviceAddress)       \
	X(vkCreateShaderModule) X(vkDestroyShaderModule)                       \
	X(vkCreatePipelineLayout) X(vkDestroyPipelineLayout)                   \
	X(vkCreateComputePipelines) X(vkDestroyPipeline)                       \
	X(vkCreateCommandPool) X(vkDestroyCommandPool)                         \
	X(vkAllocateCommandBuffers) X(vkBeginCommandBuffer)                    \
	X(vkEndCommandBuffer) X(vkCmdBindPipeline) X(vkCmdPushConstants)       \
	X(vkCmdDispatch) X(vkCmdPipelineBarrier) X(vkQueueSubmit)              \
	X(vkCreateSemaphore) X(vkDestroySemaphore) X(vkWaitSemaphores)         \
	X(vkDeviceWaitIdle)

struct raw_mem {
	VkBuffer buffer;
	VkDeviceMemory memory;
	VkDeviceAddress address;
	void *host;
};

struct raw {
	void *lib;
#define RAW_DECLARE(name) PFN_##name name;
	RAW_FUNCS(RAW_DECLARE)
	VkInstance instance;
	VkPhysicalDevice phys;
	VkDevice dev;
	VkQueue queue;
	VkPipelineLayout layout;
	VkPipeline pipeline;
	VkCommandPool pool;
	VkCommandBuffer cmd;
	VkSemaphore timeline;
	uint64_t value;
	struct raw_mem table, target[2];
};

static int raw_alloc(struct raw *r, VkDeviceSize size, struct raw_mem *m)
{
	VkBufferCreateInfo bci = {
		.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, .size = size,
		.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT,
	};
	VkMemoryAllocateFlagsInfo fl = {
		.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO,
		.flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT,
	};
	VkMemoryAllocateInfo mai = { .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, .pNext = &fl };
	VkBufferDeviceAddressInfo dai = { .sType = VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO };
	VkPhysicalDeviceMemoryProperties mp;
	VkMemoryPropertyFlags want = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
				     VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
	VkMemoryRequirements req;

	if (r->vkCreateBuffer(r->dev, &bci, NULL, &m->buffer))
		return -1;
	r->vkGetBufferMemoryRequirements(r->dev, m->buffer, &req);
	r->vkGetPhysicalDeviceMemoryProperties(r->phys, &mp);
	mai.allocationSize = req.size;
	mai.memoryTypeIndex = UINT32_MAX;
	for (uint32_t i = 0; i < mp.memoryTypeCount && mai.memoryTypeIndex == UINT32_MAX; i++)
		if ((req.memoryTypeBits & (1u << i)) &&
		    (mp.memoryTypes[i].propertyFlags & want) == want)
			mai.memoryTypeIndex = i;
	if (mai.memoryTypeIndex == UINT32_MAX ||
	    r->vkAllocateMemory(r->dev, &mai, NULL, &m->memory) ||
	    r->vkBindBufferMemory(r->dev, m->buffer, m->memory, 0) ||
	    r->vkMapMemory(r->dev, m->memory, 0, VK_WHOLE_SIZE, 0, &m->host))
		return -1;
	dai.buffer = m->buffer;
	m->address = r->vkGetBufferDeviceAddress(r->dev, &dai);
	return 0;
}

static int raw_device(struct raw *r)
{
	PFN_vkGetInstanceProcAddr gipa;
	PFN_vkCreateInstance create;
	VkApplicationInfo app = { .sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
				  .apiVersion = VK_API_VERSION_1_2 };
	VkInstanceCreateInfo ici = { .sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
				     .pApplicationInfo = &app };
	VkPhysicalDeviceVulkan12Features f12 = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
		.bufferDeviceAddress = VK_TRUE, .timelineSemaphore = VK_TRUE,
	};
	VkPhysicalDeviceFeatures2 f2 = { .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
					 .pNext = &f12, .features.shaderInt64 = VK_TRUE };
	float prio = 1.0f;
	VkDeviceQueueCreateInfo qci = { .sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
					.queueCount = 1, .pQueuePriorities = &prio };
	VkDeviceCreateInfo dci = { .sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, .pNext = &f2,
				   .queueCreateInfoCount = 1, .pQueueCreateInfos = &qci };
	VkQueueFamilyProperties qf[16];
	uint32_t n = 1, nq = 16;

	r->lib = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!r->lib)
		return -1;
	gipa = (PFN_vkGetInstanceProcAddr)dlsym(r->lib, "vkGetInstanceProcAddr");
	create = gipa ? (PFN_vkCreateInstance)gipa(NULL, "vkCreateInstance") : NULL;
	if (!create || create(&ici, NULL, &r->instance))
		return -1;
#define RAW_LOAD(name) r->name = (PFN_##name)gipa(r->instance, #name); if (!r->name) return -1;
	RAW_FUNCS(RAW_LOAD)
	if (r->vkEnumeratePhysicalDevices(r->instance, &n, &r->phys) < 0 || n < 1)
		return -1;
	r->vkGetPhysicalDeviceQueueFamilyProperties(r->phys, &nq, qf);
	while (qci.queueFamilyIndex < nq && !(qf[qci.queueFamilyIndex].queueFlags & VK_QUEUE_COMPUTE_BIT))
		qci.queueFamilyIndex++;
	if (qci.queueFamilyIndex == nq || r->vkCreateDevice(r->phys, &dci, NULL, &r->dev))
		return -1;
	r->vkGetDeviceQueue(r->dev, qci.queueFamilyIndex, 0, &r->queue);
	return (int)qci.queueFamilyIndex;
}

static int raw_pipeline(struct raw *r)
{
	VkPushConstantRange pr = { VK_SHADER_STAGE_COMPUTE_BIT, 0, 16 };
	VkPipelineLayoutCreateInfo lci = {
		.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
		.pushConstantRangeCount = 1, .pPushConstantRanges = &pr,
	};
	VkShaderModuleCreateInfo mci = { .sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
					 .codeSize = sizeof(raw_fill_spv), .pCode = raw_fill_spv };
	VkComputePipelineCreateInfo pci = {
		.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
		.stage = { .sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
			   .stage = VK_SHADER_STAGE_COMPUTE_BIT, .pName = "main" },
	};
	int err;

	if (r->vkCreatePipelineLayout(r->dev, &lci, NULL, &r->layout) ||
	    r->vkCreateShaderModule(r->dev, &mci, NULL, &pci.stage.module))
		return -1;
	pci.layout = r->layout;
	err = r->vkCreateComputePipelines(r->dev, VK_NULL_HANDLE, 1, &pci, NULL, &r->pipeline);
	r->vkDestroyShaderModule(r->dev, pci.stage.module, NULL);
	return err ? -1 : 0;
}

/* Records the one command buffer: the fill, then a barrier to the host. */
static int raw_record(struct raw *r, uint32_t family)
{
	VkCommandPoolCreateInfo pci = { .sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
					.queueFamilyIndex = family };
	VkCommandBufferAllocateInfo ai = { .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
					   .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
					   .commandBufferCount = 1 };
	VkCommandBufferBeginInfo bi = { .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO };
	VkMemoryBarrier mb = { .sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
			       .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT,
			       .dstAccessMask = VK_ACCESS_HOST_READ_BIT };
	struct { uint64_t table; uint32_t value, pad; } push = { r->table.address, 0x5a5a5a5a, 0 };

	if (r->vkCreateCommandPool(r->dev, &pci, NULL, &r->pool))
		return -1;
	ai.commandPool = r->pool;
	if (r->vkAllocateCommandBuffers(r->dev, &ai, &r->cmd) ||
	    r->vkBeginCommandBuffer(r->cmd, &bi))
		return -1;
	r->vkCmdBindPipeline(r->cmd, VK_PIPELINE_BIND_POINT_COMPUTE, r->pipeline);
	r->vkCmdPushConstants(r->cmd, r->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, 16, &push);
	r->vkCmdDispatch(r->cmd, FILL_BYTES / 4 / 64, 1, 1);
	r->vkCmdPipelineBarrier(r->cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
				VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, NULL, 0, NULL);
	return r->vkEndCommandBuffer(r->cmd) ? -1 : 0;
}

static int raw_setup(struct raw *r)
{
	VkSemaphoreTypeCreateInfo tci = { .sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO,
					  .semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE };
	VkSemaphoreCreateInfo sci = { .sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO,
				      .pNext = &tci };
	int family = raw_device(r);

	if (family < 0 || raw_pipeline(r) || raw_alloc(r, 16, &r->table) ||
	    raw_alloc(r, FILL_BYTES, &r->target[0]) || raw_alloc(r, FILL_BYTES, &r->target[1]) ||
	    raw_record(r, (uint32_t)family))
		return -1;
	return r->vkCreateSemaphore(r->dev, &sci, NULL, &r->timeline) ? -1 : 0;
}

static void raw_teardown(struct raw *r)
{
	if (r->dev) {
		r->vkDeviceWaitIdle(r->dev);
		if (r->timeline)
			r->vkDestroySemaphore(r->dev, r->timeline, NULL);
		if (r->pool)
			r->vkDestroyCommandPool(r->dev, r->pool, NULL);
		if (r->pipeline)
			r->vkDestroyPipeline(r->dev, r->pipeline, NULL);
		if (r->layout)
			r->vkDestroyPipelineLayout(r->dev, r->layout, NULL);
		for (int i = 0; i < 3; i++) {
			struct raw_mem *m = i ? &r->target[i - 1] : &r->table;

			if (m->buffer)
				r->vkDestroyBuffer(r->dev, m->buffer, NULL);
			if (m->memory)
				r->vkFreeMemory(r->dev, m->memory, NULL);
		}
		r->vkDestroyDevice(r->dev, NULL);
	}
	if (r->instance)
		r->vkDestroyInstance(r->instance, NULL);
	if (r->lib)
		dlclose(r->lib);
}

/* One submission: the new table (one address), submit, wait. */
static int raw_submit(struct raw *r, int i)
{
	uint64_t value = ++r->value;
	VkTimelineSemaphoreSubmitInfo ts = {
		.sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO,
		.signalSemaphoreValueCount = 1, .pSignalSemaphoreValues = &value,
	};
	VkSubmitInfo si = { .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .pNext = &ts,
			    .commandBufferCount = 1, .pCommandBuffers = &r->cmd,
			    .signalSemaphoreCount = 1, .pSignalSemaphores = &r->timeline };
	VkSemaphoreWaitInfo wi = { .sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO,
				   .semaphoreCount = 1, .pSemaphores = &r->timeline,
				   .pValues = &value };

	*(volatile uint64_t *)r->table.host = r->target[i & 1].address;
	if (r->vkQueueSubmit(r->queue, 1, &si, VK_NULL_HANDLE))
		return -1;
	return r->vkWaitSemaphores(r->dev, &wi, UINT64_MAX) ? -1 : 0;
}

static double raw_round(struct raw *r, int submits)
{
	double t0 = now_ns();

	for (int i = 0; i < submits; i++)
		if (raw_submit(r, i))
			return -1;
	return (now_ns() - t0) / submits;
}

/* ---- the benchmark ------------------------------------------------------ */

static int report(const struct opts *o, double lib_ns, double raw_ns, int submits)
{
	int first = 1;

	if (o->json)
		printf("{\"bench\": \"vulkan\", \"submits_per_round\": %d, "
		       "\"libaccel_submit_ns\": %.0f, \"raw_submit_ns\": %.0f, \"metrics\": {",
		       submits, lib_ns, raw_ns);
	else
		fprintf(notes, "# vulkan: REUSABLE fill of %u bytes, a new binding table per submit: "
		       "libaccel %.2f us/submit, raw Vulkan %.2f us/submit (%d submits per round)\n",
		       FILL_BYTES, lib_ns / 1e3, raw_ns / 1e3, submits);
	metric(o, "vulkan.reuse_submit_vs_raw", lib_ns / raw_ns, &first);
	if (o->json)
		printf("}}\n");
	return 0;
}

int bench_vulkan(const struct opts *o)
{
	accel_driver_info_t info;
	struct lib l = { 0 };
	struct raw r = { 0 };
	/*
	 * A round takes about 0.1 s, and lavapipe's thread wake-ups make single
	 * rounds noisy: at least 15 rounds for a steady median.
	 */
	int submits = (int)(o->ops / 40), rounds = o->rounds < 15 ? 15 : o->rounds, rc = 0;
	double *v = calloc(2 * (size_t)rounds, sizeof(double));

	if (accel_driver_info(1, &info) || !info.available) {
		fprintf(notes, "# vulkan: skipped: %s\n", info.reason);
		free(v);
		return 0;
	}
	if (!v || lib_setup(&l)) {
		fprintf(notes, "# vulkan: skipped: vulkan://0: %s\n", accel_error_message());
		lib_teardown(&l);
		free(v);
		return 0;
	}
	if (raw_setup(&r)) {
		fprintf(stderr, "accel-bench: vulkan: cannot set up the raw Vulkan baseline\n");
		rc = 1;
	}
	lib_round(&l, submits / 4 + 1); /* warm up: instances, threads */
	raw_round(&r, submits / 4 + 1);
	for (int i = 0; !rc && i < rounds; i++) {
		v[i] = lib_round(&l, submits);
		v[rounds + i] = raw_round(&r, submits);
		if (v[i] < 0 || v[rounds + i] < 0) {
			fprintf(stderr, "accel-bench: vulkan: a submission failed: %s\n",
				accel_error_message());
			rc = 1;
		}
	}
	if (!rc)
		report(o, median(v, rounds), median(v + rounds, rounds), submits);
	raw_teardown(&r);
	lib_teardown(&l);
	free(v);
	return rc;
}
#endif /* ACCEL_BENCH_VULKAN */
