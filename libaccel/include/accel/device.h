/* SPDX-License-Identifier: MIT */
/**
 * DOC: accel/device.h - the driver registry and devices
 *
 * A *driver* is one backend (``cpu``, ``vulkan``, ``cuda``, ``hip``); a
 * *device* is one instance of a driver, named by a URI whose scheme is the
 * driver's name: ``cpu://`` (or ``cpu://0``), ``vulkan://0``, ``cuda://0``,
 * ``hip://0``.
 *
 * The registry lists every driver this libaccel knows, available or not,
 * with the reason when it is not (accel_driver_info()). ``cpu`` is always
 * available. ``vulkan``, ``cuda`` and ``hip`` link against nothing: they
 * load their library at run time (the Vulkan loader libvulkan.so.1, the
 * CUDA driver's libcuda.so.1, ROCm's libamdhip64.so), so a dynamically
 * linked program opens them where that library is installed. A driver is
 * not available, and opening it fails with ``-ENODEV`` and "driver not
 * available: " followed by what is missing and what to install, when:
 *
 * - its library does not load (not installed; a static program cannot
 *   load libvulkan.so.1);
 * - this libaccel was built without it: vulkan needs vulkan/vulkan.h and
 *   glslc at build time;
 * - this libaccel was built without its built-in kernels: cuda needs nvcc,
 *   hip needs hipcc at build time.
 *
 * An available driver whose library finds no such device, or no device of
 * that index, also fails with ``-ENODEV``, with a message saying which
 * devices there are.
 *
 * Every device submits its work through one scheduler (accel/scheduler.h):
 * the one given to accel_device_open(), or a default one it opens itself
 * (which honours ``ACCEL_SCHEDULER``).
 *
 * Thread-safety: the registry functions are thread-safe. An accel_device_t
 * is thread-safe: it is immutable after accel_device_open() apart from its
 * atomic reference count.
 */
#ifndef ACCEL_DEVICE_H
#define ACCEL_DEVICE_H

#include <stdbool.h>
#include <stdint.h>

#include <accel/scheduler.h>

#ifdef __cplusplus
extern "C" {
#endif

/** typedef accel_device_t - an open device (opaque, reference counted). */
typedef struct accel_device accel_device_t;
/** typedef accel_allocator_t - a device's buffer allocator (see accel/buffer.h). */
typedef struct accel_allocator accel_allocator_t;

/**
 * struct accel_driver_info - one entry of the driver registry.
 * @name:        the driver's name, also its URI scheme ("cpu").
 * @uri_example: a URI that opens its first device ("cpu://").
 * @available:   whether this libaccel can open its devices.
 * @reason:      why it is not available ("" when it is).
 *
 * The strings are static: valid for the life of the process.
 */
typedef struct accel_driver_info {
	const char *name;
	const char *uri_example;
	bool available;
	const char *reason;
} accel_driver_info_t;

/**
 * accel_driver_count() - how many drivers the registry lists.
 *
 * Return: the number of entries, available or not (at least 1, ``cpu``).
 *
 * Thread-safety: thread-safe.
 */
uint32_t accel_driver_count(void);

/**
 * accel_driver_info() - describe registry entry @index.
 * @index: 0 .. accel_driver_count() - 1.
 * @info:  filled on success; untouched on failure.
 *
 * Return: 0; -EINVAL if @info is NULL; -ERANGE if @index is not below
 * accel_driver_count().
 *
 * Thread-safety: thread-safe.
 */
int accel_driver_info(uint32_t index, accel_driver_info_t *info);

/**
 * accel_device_open() - open the device named by @uri.
 * @uri:       "<driver>://<device>", e.g. "cpu://". The cpu driver accepts
 *             an empty device part or "0", then optionally "?threads=N";
 *             vulkan, cuda and hip a device index ("cuda://1"; empty means
 *             0), and vulkan also a part of the device's name
 *             ("vulkan://llvmpipe", "vulkan://?name=...").
 * @scheduler: the scheduler its queues submit through and its semaphores
 *             live in; retained by the device. NULL opens a default one
 *             (accel_scheduler_open(NULL, ...)), owned by the device.
 * @out:       receives the device with one reference owned by the caller;
 *             set to NULL first and left NULL on failure.
 *
 * Return: 0, or a negative errno with a message:
 *
 * - -EINVAL: @uri or @out is NULL; @uri has no "://"; the device part is
 *   not one the driver knows.
 * - -ENOENT: no driver has that name (the message lists the known ones).
 * - -ENODEV: the driver is known but not available here ("driver not
 *   available", with the reason: see the DOC above); or it is available
 *   but finds no device, or none of that index (the message lists the
 *   devices there are), or a device it cannot use (the message names the
 *   missing feature).
 * - -ENOMEM; or any error of accel_scheduler_open() for a NULL @scheduler.
 *
 * Thread-safety: thread-safe.
 */
int accel_device_open(const char *uri, accel_scheduler_t *scheduler,
		      accel_device_t **out);

/**
 * accel_device_retain() - take one more reference to @device (NULL: no-op).
 * Thread-safety: thread-safe (atomic).
 */
void accel_device_retain(accel_device_t *device);

/**
 * accel_device_release() - drop one reference to @device (NULL: no-op).
 *
 * The last reference frees it. Buffers, executables, command buffers and
 * queues each hold a reference to their device, so it lives as long as any
 * of them does.
 *
 * Thread-safety: thread-safe (atomic).
 */
void accel_device_release(accel_device_t *device);

/**
 * accel_device_wait_idle() - wait until every submission made on any
 * queue of @device before the call has ended: accel_queue_wait_idle() over
 * all of them at once (IREE: iree_hal_device_wait_idle()).
 * @deadline_ns: absolute CLOCK_MONOTONIC ns; <= 0 polls;
 *               ACCEL_DEADLINE_INFINITE waits for good.
 *
 * Releasing a device (or its queues) does not wait: work in flight keeps
 * what it needs alive and ends on its own, and process exit waits for the
 * work already running (Documentation/libaccel.rst, "Drains"). A program
 * that wants its last results before it returns from main() waits on
 * their semaphores, or calls this.
 *
 * Return: 0 when idle; -ETIME when the deadline passed first (nothing
 * changes); -EINVAL: @device is NULL.
 * Thread-safety: thread-safe.
 */
int accel_device_wait_idle(accel_device_t *device, int64_t deadline_ns);

/**
 * accel_device_uri() - the URI @device was opened with, normalised
 * ("cpu://0").
 *
 * Return: a string owned by @device; "" for NULL (message set).
 * Thread-safety: thread-safe.
 */
const char *accel_device_uri(const accel_device_t *device);

/**
 * accel_device_scheduler() - the scheduler @device submits through.
 *
 * Return: a borrowed pointer, valid while @device is (retain it to keep it
 * longer); NULL for a NULL @device (message set).
 * Thread-safety: thread-safe.
 */
accel_scheduler_t *accel_device_scheduler(const accel_device_t *device);

/**
 * accel_device_allocator() - the buffer allocator of @device.
 *
 * Return: a borrowed pointer, valid while @device is; NULL for a NULL
 * @device (message set).
 * Thread-safety: thread-safe.
 */
accel_allocator_t *accel_device_allocator(accel_device_t *device);

/**
 * enum accel_device_kind - what kind of processor a device is.
 * @ACCEL_DEVICE_KIND_OTHER:          none of the below, or not known.
 * @ACCEL_DEVICE_KIND_CPU:            the host's CPUs (cpu, and Vulkan CPU
 *                                    implementations such as lavapipe).
 * @ACCEL_DEVICE_KIND_INTEGRATED_GPU: a GPU sharing the host's memory.
 * @ACCEL_DEVICE_KIND_DISCRETE_GPU:   a GPU with its own memory.
 * @ACCEL_DEVICE_KIND_VIRTUAL_GPU:    a GPU of a virtual machine.
 */
typedef enum accel_device_kind {
	ACCEL_DEVICE_KIND_OTHER = 0,
	ACCEL_DEVICE_KIND_CPU = 1,
	ACCEL_DEVICE_KIND_INTEGRATED_GPU = 2,
	ACCEL_DEVICE_KIND_DISCRETE_GPU = 3,
	ACCEL_DEVICE_KIND_VIRTUAL_GPU = 4,
} accel_device_kind_t;

/**
 * enum accel_queue_family_flags - what the queues of a family run.
 * @ACCEL_QUEUE_FAMILY_COMPUTE:  dispatches.
 * @ACCEL_QUEUE_FAMILY_TRANSFER: fills, updates and copies (a DMA engine).
 * @ACCEL_QUEUE_FAMILY_GRAPHICS: graphics work (Vulkan), which libaccel
 *                               does not use.
 */
enum accel_queue_family_flags {
	ACCEL_QUEUE_FAMILY_COMPUTE = 1u << 0,
	ACCEL_QUEUE_FAMILY_TRANSFER = 1u << 1,
	ACCEL_QUEUE_FAMILY_GRAPHICS = 1u << 2,
};

/** ACCEL_DEVICE_QUEUE_FAMILY_MAX - the most families an info lists. */
#define ACCEL_DEVICE_QUEUE_FAMILY_MAX 8

/**
 * struct accel_queue_family_info - one family of hardware queues.
 * @flags: enum accel_queue_family_flags.
 * @count: how many queues the family has.
 */
typedef struct accel_queue_family_info {
	uint32_t flags;
	uint32_t count;
} accel_queue_family_info_t;

/**
 * struct accel_device_info - one device a driver lists.
 * @size:               set by the caller to sizeof(accel_device_info_t)
 *                      before the call: a later libaccel that adds fields
 *                      at the end fills only the @size bytes the caller
 *                      knows, and an older one zeroes the fields it does
 *                      not know, so the struct grows without breaking the
 *                      ABI.
 * @kind:               enum accel_device_kind.
 * @vendor_id:          the PCI vendor id (Vulkan's vendorID: also Khronos
 *                      ids such as 0x10005, Mesa); 0 for cpu.
 * @device_id:          the vendor's device id; 0 for cpu.
 * @uri:                the normalised URI that opens it ("vulkan://1").
 * @name:               the device's name ("llvmpipe (LLVM 15.0.6, 256
 *                      bits)", the CPU's model name for cpu).
 * @vendor:             the vendor's name ("NVIDIA", "Mesa", "GenuineIntel"),
 *                      or its id in hex when unknown.
 * @device_local_bytes: the memory the device works in best: the sum of its
 *                      device-local heaps (cpu: the host's RAM).
 * @host_visible_bytes: the memory the host can map: the sum of the heaps
 *                      with a host-visible memory type (cpu: the host's
 *                      RAM).
 * @cpu_count:          cpu: the CPUs this process may run on
 *                      (sched_getaffinity()), which size its worker pool;
 *                      0 for the others.
 * @queue_family_count: entries of @queue_families used.
 * @queue_families:     its hardware queues by family (cpu: one family of
 *                      compute and transfer, one queue per CPU).
 *
 * Strings are NUL-terminated, cut to their array when longer.
 */
typedef struct accel_device_info {
	uint32_t size;
	uint32_t kind;
	uint32_t vendor_id;
	uint32_t device_id;
	char uri[64];
	char name[128];
	char vendor[64];
	uint64_t device_local_bytes;
	uint64_t host_visible_bytes;
	uint32_t cpu_count;
	uint32_t queue_family_count;
	accel_queue_family_info_t queue_families[ACCEL_DEVICE_QUEUE_FAMILY_MAX];
} accel_device_info_t;

/**
 * ACCEL_DEVICE_INFO_SIZE_0_2 - sizeof(accel_device_info_t) in libaccel 0.2,
 * the smallest @size accepted.
 */
#define ACCEL_DEVICE_INFO_SIZE_0_2 360u

/**
 * accel_driver_device_count() - how many devices driver @driver lists
 * (IREE: iree_hal_driver_query_available_devices()).
 * @driver: a driver's name ("cpu", "vulkan"; accel_driver_info()).
 * @count:  receives the number; untouched on failure.
 *
 * A driver whose library loads but finds no device has 0. Each call asks
 * the driver again (devices come and go): count, then ask for each index,
 * and expect -ERANGE when one went away in between.
 *
 * Return: 0, or a negative errno with a message:
 *
 * - -EINVAL: @driver or @count is NULL.
 * - -ENOENT: no driver has that name (the message lists the known ones).
 * - -ENODEV: the driver is not available here ("driver not available",
 *   with the reason), or its library cannot start (the message says why).
 * - -ENOMEM.
 *
 * Thread-safety: thread-safe.
 */
int accel_driver_device_count(const char *driver, uint32_t *count);

/**
 * accel_driver_device_info() - describe device @index of driver @driver.
 * @driver: a driver's name.
 * @index:  0 .. accel_driver_device_count() - 1.
 * @info:   @info->size set by the caller (see struct accel_device_info);
 *          filled on success, untouched on failure.
 *
 * Return: 0, or a negative errno with a message: the errors of
 * accel_driver_device_count(); -EINVAL also when @info is NULL or
 * @info->size is below ACCEL_DEVICE_INFO_SIZE_0_2; -E2BIG when it is
 * above ACCEL_OPTIONS_SIZE_MAX (queue.h; no struct grows that far, and
 * the bytes past the struct it knows would be zeroed); -ERANGE: @index is
 * not below the number of devices (the message gives it).
 *
 * Thread-safety: thread-safe.
 */
int accel_driver_device_info(const char *driver, uint32_t index,
			     accel_device_info_t *info);

/**
 * enum accel_device_query - what accel_device_query_i64() answers.
 * @ACCEL_DEVICE_QUERY_MAX_WORKGROUP_SIZE_X: the largest workgroup size
 *	in x an entry point may declare (Vulkan maxComputeWorkGroupSize).
 * @ACCEL_DEVICE_QUERY_MAX_WORKGROUP_SIZE_Y: ... in y.
 * @ACCEL_DEVICE_QUERY_MAX_WORKGROUP_SIZE_Z: ... in z.
 * @ACCEL_DEVICE_QUERY_MAX_WORKGROUP_INVOCATIONS: the largest product of
 *	the three (maxComputeWorkGroupInvocations).
 * @ACCEL_DEVICE_QUERY_MAX_WORKGROUP_COUNT_X: the most workgroups a
 *	dispatch may have in x: the smaller of ACCEL_WORKGROUP_COUNT_MAX
 *	and the device's own limit (maxComputeWorkGroupCount).
 * @ACCEL_DEVICE_QUERY_MAX_WORKGROUP_COUNT_Y: ... in y.
 * @ACCEL_DEVICE_QUERY_MAX_WORKGROUP_COUNT_Z: ... in z.
 * @ACCEL_DEVICE_QUERY_MAX_BINDINGS: the most bindings a dispatch takes
 *	(ACCEL_DISPATCH_MAX_BINDINGS).
 * @ACCEL_DEVICE_QUERY_MAX_CONSTANT_BYTES: the most bytes of constants a
 *	dispatch takes (ACCEL_DISPATCH_MAX_CONSTANTS 32-bit words).
 * @ACCEL_DEVICE_QUERY_MIN_BINDING_ALIGNMENT: the alignment, in bytes, of a
 *	dispatch binding's offset in its buffer (from the start of its root
 *	allocation). Recording a dispatch with a direct binding that is not
 *	aligned fails with -EINVAL; a binding table slot is checked when a
 *	submission supplies it. 1 on cpu; 4 on vulkan (its kernels address
 *	bindings as 32-bit words, drivers/vulkan/accel.glsl), cuda and hip.
 * @ACCEL_DEVICE_QUERY_TIMESTAMPS: 1 if the device can time its own work
 *	(Vulkan: a compute queue family with timestampValidBits and
 *	timestampComputeAndGraphics), else 0.
 * @ACCEL_DEVICE_QUERY_TIMESTAMP_PERIOD_PS: picoseconds per timestamp tick
 *	(cpu: 1000, CLOCK_MONOTONIC's ns); 0 without timestamps.
 * @ACCEL_DEVICE_QUERY_DISPATCH_INDIRECT: 1 if
 *	accel_command_buffer_dispatch_indirect() runs on it (every driver).
 * @ACCEL_DEVICE_QUERY_EXTERNAL_SEMAPHORE_FD: 1 if its semaphores can be
 *	shared as file descriptors (accel_semaphore_export_fd()): when its
 *	scheduler is the kernel one.
 * @ACCEL_DEVICE_QUERY_EXTERNAL_SEMAPHORE_SYNC_FILE: 1 if a semaphore point
 *	can be exported as a sync_file (accel_semaphore_export_sync_file()):
 *	likewise.
 * @ACCEL_DEVICE_QUERY_TRANSIENT_POOL: 1 if the device has a pool for
 *	transient, queue-ordered allocations (accel_queue_alloca(), IREE's
 *	queue_alloca); 1 on every driver of this libaccel.
 * @ACCEL_DEVICE_QUERY_MEMORY_DEVICE_LOCAL_BYTES: as
 *	accel_device_info_t.device_local_bytes.
 * @ACCEL_DEVICE_QUERY_MEMORY_HOST_VISIBLE_BYTES: as
 *	accel_device_info_t.host_visible_bytes.
 * @ACCEL_DEVICE_QUERY_COUNT: the number of keys (not a key).
 */
typedef enum accel_device_query {
	ACCEL_DEVICE_QUERY_MAX_WORKGROUP_SIZE_X = 0,
	ACCEL_DEVICE_QUERY_MAX_WORKGROUP_SIZE_Y = 1,
	ACCEL_DEVICE_QUERY_MAX_WORKGROUP_SIZE_Z = 2,
	ACCEL_DEVICE_QUERY_MAX_WORKGROUP_INVOCATIONS = 3,
	ACCEL_DEVICE_QUERY_MAX_WORKGROUP_COUNT_X = 4,
	ACCEL_DEVICE_QUERY_MAX_WORKGROUP_COUNT_Y = 5,
	ACCEL_DEVICE_QUERY_MAX_WORKGROUP_COUNT_Z = 6,
	ACCEL_DEVICE_QUERY_MAX_BINDINGS = 7,
	ACCEL_DEVICE_QUERY_MAX_CONSTANT_BYTES = 8,
	ACCEL_DEVICE_QUERY_MIN_BINDING_ALIGNMENT = 9,
	ACCEL_DEVICE_QUERY_TIMESTAMPS = 10,
	ACCEL_DEVICE_QUERY_TIMESTAMP_PERIOD_PS = 11,
	ACCEL_DEVICE_QUERY_DISPATCH_INDIRECT = 12,
	ACCEL_DEVICE_QUERY_EXTERNAL_SEMAPHORE_FD = 13,
	ACCEL_DEVICE_QUERY_EXTERNAL_SEMAPHORE_SYNC_FILE = 14,
	ACCEL_DEVICE_QUERY_TRANSIENT_POOL = 15,
	ACCEL_DEVICE_QUERY_MEMORY_DEVICE_LOCAL_BYTES = 16,
	ACCEL_DEVICE_QUERY_MEMORY_HOST_VISIBLE_BYTES = 17,
	ACCEL_DEVICE_QUERY_COUNT
} accel_device_query_t;

/**
 * accel_device_query_i64() - answer one limit or feature of @device
 * (IREE: iree_hal_device_query_i64(), whose category and key strings are
 * this enum).
 * @device: the device.
 * @key:    enum accel_device_query.
 * @out:    receives the answer; untouched on failure.
 *
 * Every key below ACCEL_DEVICE_QUERY_COUNT is answered on every device: a
 * feature as 1 or 0, a limit as a number.
 *
 * Return: 0; -EINVAL: @device or @out is NULL; -ENOENT: @key is not a key
 * this libaccel knows (the message gives its number).
 *
 * Thread-safety: thread-safe.
 */
int accel_device_query_i64(const accel_device_t *device,
			   accel_device_query_t key, int64_t *out);

/**
 * accel_device_query_name() - the name of query key @key, as accelctl and
 * messages print it ("max_workgroup_size_x").
 *
 * Return: a static string; NULL when @key is not a key (no message).
 * Thread-safety: thread-safe.
 */
const char *accel_device_query_name(accel_device_query_t key);

/**
 * accel_device_kind_name() - "cpu", "integrated-gpu", "discrete-gpu",
 * "virtual-gpu" or "other" (for any other value).
 * Thread-safety: thread-safe.
 */
const char *accel_device_kind_name(uint32_t kind);

#ifdef __cplusplus
}
#endif

#endif /* ACCEL_DEVICE_H */
