/* SPDX-License-Identifier: MIT */
/*
 * The vulkan driver: real Vulkan through the loader (libvulkan.so.1, loaded
 * with dlopen through one symbol table, so libaccel builds and runs without
 * it), one VkDevice and one compute VkQueue per accel device.
 *
 * The kernel ABI (Documentation/vulkan.rst has the full picture):
 *
 * - every buffer is a VkBuffer with a buffer device address; struct
 *   accel_buffer.address is that address, so the core's binding plan
 *   (plan.h) resolves refs to device addresses;
 * - at accel_command_buffer_end() the plan's parameter region (every
 *   command's block of struct accel_plan_ref and constants), its update
 *   payloads and the driver's own blocks are uploaded, once, into the
 *   command buffer's *program* buffer; then the commands are recorded once
 *   into a VkCommandBuffer: each dispatch pushes two 64-bit push constants,
 *   the address of its parameter block and the address of the *exec block*;
 * - the exec block (one per recorded VkCommandBuffer, host-visible) holds a
 *   status word, then the submission's slot table (struct accel_plan_slot
 *   per slot: base address and length), then the workgroup counts of the
 *   dispatch-indirects. Submitting writes the status word and copies the
 *   captured slots into it: the one small upload of a submission;
 * - a kernel resolves binding i as accel_plan_ref_resolve() does: a direct
 *   ref's address, or slots[slot].address + offset (drivers/vulkan/accel.glsl).
 *
 * Transfers (fill, update, copy) run as built-in compute shaders that
 * resolve their refs the same way; dispatch-indirect counts are checked and
 * copied into the exec block by a built-in shader at the start of their
 * segment, then consumed by vkCmdDispatchIndirect. A count above
 * ACCEL_WORKGROUP_COUNT_MAX sets the status word to the command's index:
 * every later shader of the submission sees it and does nothing, so the
 * segment and everything after it are skipped, as on cpu.
 *
 * Several submissions of one command buffer may execute at once (from
 * several queues): each needs its own exec block, hence its own recorded
 * VkCommandBuffer (the exec address is a push constant). A command buffer
 * keeps a free list of such *instances*: the first is recorded at end, a
 * further one only when that many submissions run at the same moment; a
 * submission never records in steady state.
 */
#ifndef ACCEL_DRIVERS_VK_H
#define ACCEL_DRIVERS_VK_H

#include <pthread.h>
#include <stdbool.h>

#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

#include "accel/status.h"
#include "src/core.h"

/* The Vulkan functions the driver calls, by how they are loaded. */
#define VK_GLOBAL_FUNCS(X)                                                    \
	X(vkCreateInstance)                                                   \
	X(vkEnumerateInstanceVersion)

#define VK_INSTANCE_FUNCS(X)                                                  \
	X(vkDestroyInstance)                                                  \
	X(vkEnumeratePhysicalDevices)                                         \
	X(vkGetPhysicalDeviceProperties)                                      \
	X(vkGetPhysicalDeviceFeatures2)                                       \
	X(vkGetPhysicalDeviceQueueFamilyProperties)                           \
	X(vkGetPhysicalDeviceMemoryProperties)                                \
	X(vkCreateDevice)                                                     \
	X(vkGetDeviceProcAddr)

#define VK_DEVICE_FUNCS(X)                                                    \
	X(vkDestroyDevice)                                                    \
	X(vkGetDeviceQueue)                                                   \
	X(vkDeviceWaitIdle)                                                   \
	X(vkCreateBuffer)                                                     \
	X(vkDestroyBuffer)                                                    \
	X(vkGetBufferMemoryRequirements)                                      \
	X(vkAllocateMemory)                                                   \
	X(vkFreeMemory)                                                       \
	X(vkBindBufferMemory)                                                 \
	X(vkMapMemory)                                                        \
	X(vkGetBufferDeviceAddress)                                           \
	X(vkCreateShaderModule)                                               \
	X(vkDestroyShaderModule)                                              \
	X(vkCreatePipelineLayout)                                             \
	X(vkDestroyPipelineLayout)                                            \
	X(vkCreateComputePipelines)                                           \
	X(vkCreatePipelineCache)                                              \
	X(vkDestroyPipelineCache)                                             \
	X(vkGetPipelineCacheData)                                             \
	X(vkDestroyPipeline)                                                  \
	X(vkCreateCommandPool)                                                \
	X(vkDestroyCommandPool)                                               \
	X(vkAllocateCommandBuffers)                                           \
	X(vkFreeCommandBuffers)                                               \
	X(vkBeginCommandBuffer)                                               \
	X(vkEndCommandBuffer)                                                 \
	X(vkCmdBindPipeline)                                                  \
	X(vkCmdPushConstants)                                                 \
	X(vkCmdDispatch)                                                      \
	X(vkCmdDispatchIndirect)                                              \
	X(vkCmdPipelineBarrier)                                               \
	X(vkQueueSubmit)                                                      \
	X(vkCreateSemaphore)                                                  \
	X(vkDestroySemaphore)                                                 \
	X(vkGetSemaphoreCounterValue)                                         \
	X(vkWaitSemaphores)

#define VK_DECLARE(name) PFN_##name name;

/* The process-wide loader table: libvulkan's handle and global functions. */
struct vk_loader {
	void *handle;
	PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr;
	VK_GLOBAL_FUNCS(VK_DECLARE)
};

/* Per device: functions loaded for its VkInstance and its VkDevice. */
struct vk_funcs {
	VK_INSTANCE_FUNCS(VK_DECLARE)
	VK_DEVICE_FUNCS(VK_DECLARE)
};

/*
 * The loader, loaded once per process; NULL with *@why set when it cannot
 * be (no libvulkan.so.1, a static program, a loader without Vulkan 1.2).
 */
const struct vk_loader *vk_loader_get(const char **why);

/*
 * vk_enumerate() - the registry's enumerate (struct accel_driver): every
 * physical device the loader lists, in its order (vk_device.c).
 */
int vk_enumerate(const struct accel_driver *drv, accel_device_info_t *infos,
		 uint32_t cap, uint32_t *count);

/* The push constants of every pipeline (kernels use the first two). */
struct vk_push {
	uint64_t params;  /* kernels: the parameter block; built-ins: a ref */
	uint64_t exec;    /* the exec block */
	uint64_t arg;     /* built-ins: second ref / check list */
	uint32_t word;    /* built-ins: fill pattern / check entries / copy mode */
	uint32_t scratch; /* copy: its scratch space, from the exec block */
};

/* The modes of the built-in copy (shaders/copy.comp). */
#define VK_COPY_DIRECT 0u
#define VK_COPY_PASS1 1u
#define VK_COPY_PASS2 2u

/* The exec block: a header, then the slots, then the indirect counts. */
#define VK_EXEC_HEADER 16u
#define VK_STATUS_OK UINT32_MAX

/* The built-in shaders (vk_builtins.c, generated from shaders/). */
enum vk_builtin {
	VK_BUILTIN_FILL,
	VK_BUILTIN_COPY,
	VK_BUILTIN_CHECK_COUNTS,
	VK_BUILTIN_COUNT,
};

extern const uint8_t accel_vk_builtins[];
extern const uint32_t accel_vk_builtins_size;

/* One entry point: its pipeline (accel_export.fn points here). */
struct vk_entry {
	VkPipeline pipeline;
};

/*
 * struct vk_device - a vulkan device.
 * @queue_lock: serialises vkQueueSubmit (a VkQueue is externally
 *              synchronised) and orders the timeline values it signals.
 * @pool_lock:  serialises the command pool (allocation and recording).
 * @timeline:   signalled by every submission, to @last_value.
 * @waiter:     the submissions in flight and the thread that completes
 *              them (vk_flight.c).
 * @builtin:    the pipelines of the built-in shaders.
 * @props:      the physical device's properties (the pipeline cache UUID
 *              that the executable cache checks entries against).
 */
struct vk_device {
	accel_device_t base;
	const struct vk_loader *vk;
	struct vk_funcs f;
	VkInstance instance;
	VkPhysicalDevice physical;
	VkDevice device;
	VkQueue queue;
	uint32_t queue_family;
	VkPhysicalDeviceMemoryProperties memory;
	VkPipelineLayout layout;
	pthread_mutex_t queue_lock;
	VkSemaphore timeline;
	uint64_t last_value;
	struct vk_waiter *waiter;
	pthread_mutex_t pool_lock;
	VkCommandPool pool;
	VkPipeline builtin[VK_BUILTIN_COUNT];
	VkPhysicalDeviceProperties props;
	char name[VK_MAX_PHYSICAL_DEVICE_NAME_SIZE];
	/* Enumeration and queries: what accel_device_query_i64() answers. */
	VkPhysicalDeviceLimits limits;
	uint32_t timestamp_bits; /* of @queue_family; 0: no timestamps */
};

/*
 * A device memory allocation bound to one VkBuffer, with its address and,
 * when host-visible, its persistent mapping.
 */
struct vk_memory {
	VkBuffer buffer;
	VkDeviceMemory memory;
	VkDeviceAddress address;
	void *host;
};

/* Memory property flags wanted: required, then preferred. */
int vk_memory_alloc(struct vk_device *dev, uint64_t size,
		    VkMemoryPropertyFlags required,
		    VkMemoryPropertyFlags preferred, struct vk_memory *out,
		    const char *fn);
void vk_memory_free(struct vk_device *dev, struct vk_memory *m);

/* The -errno a VkResult error stands for: -ENOMEM, -ENODEV or -EIO. */
int vk_errno(VkResult r);
/* -errno for @r, with the message "@fn: @what failed: VK_ERROR_...". */
int vk_fail(VkResult r, const char *fn, const char *what);
const char *vk_result_name(VkResult r);

int vk_executable_load(accel_device_t *d, const char *path,
		       accel_executable_t **out);
/* The built-in shaders' pipelines (dev->builtin), from accel_vk_builtins. */
int vk_builtins_create(struct vk_device *dev);
/* The cost model's calibration kernel (device ops, src/core.h). */
int vk_calibration_executable(accel_device_t *d, accel_executable_t **out);
void vk_builtins_destroy(struct vk_device *dev);

/*
 * struct vk_flight - one submission in flight (vk_flight.c).
 * @cmd:       what to submit (the caller fills it).
 * @complete:  called once on the waiter thread when the device finished
 *             it (@status 0, or -errno with @msg saying why).
 * @device_ns: set before ->complete: the device time it took.
 * The rest is vk_flight.c's.
 */
struct vk_flight {
	VkCommandBuffer cmd;
	void (*complete)(struct vk_flight *f, int status, const char *msg);
	/*
	 * Optional: called once vkQueueSubmit took it, with @value set,
	 * before ->complete can run (the device-side promise of its job).
	 */
	void (*submitted)(struct vk_flight *f);
	/* In: a value of the device's timeline to wait for first (0: none). */
	uint64_t wait_value;
	uint64_t device_ns;
	uint64_t value;
	int64_t submit_ns;
	struct vk_flight *next;
};

int vk_flights_init(struct vk_device *dev);
/* With no flight left: stops the waiter (or detaches it, when on it). */
void vk_flights_fini(struct vk_device *dev);
/*
 * vk_flight_submit() - submit @f->cmd and return; ->complete follows.
 * Waits first while VK_FLIGHTS_MAX are in flight. With @f->wait_value,
 * the device starts it only once its timeline reached that value. 0, or
 * -errno with @msg set and nothing in flight.
 */
int vk_flight_submit(struct vk_device *dev, struct vk_flight *f, char *msg,
		     size_t len);

int vk_command_buffer_end(accel_device_t *d, accel_command_buffer_t *cb);
void vk_command_buffer_destroy(accel_device_t *d, accel_command_buffer_t *cb);
int vk_execute(accel_device_t *d, struct accel_cb_exec *x);

#endif /* ACCEL_DRIVERS_VK_H */
