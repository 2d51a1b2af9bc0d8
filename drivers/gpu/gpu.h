/* SPDX-License-Identifier: MIT */
/*
 * The cuda and hip drivers: one implementation (drivers/gpu/), two
 * backends (drivers/cuda/cuda.c, drivers/hip/hip.c) that differ in their
 * symbol table and in the few places where the two driver APIs do.
 *
 * **Loading.** Nothing links against libcuda or libamdhip64, and no SDK
 * header is included: the driver-API functions the driver calls are
 * declared here, with neutral types, as the fields of struct gpu_api
 * (GPU_API_FUNCS). A backend names the library files to try and, for each
 * field, the exported symbol (cuMemAlloc_v2 / hipMalloc); the loader
 * dlopen()s the first library that loads and dlsym()s every name, once
 * per process. A missing library or symbol makes the driver unavailable,
 * and accel_driver_info() and accel_device_open() say which and what
 * would fix it. ACCEL_CUDA_LIBRARY / ACCEL_HIP_LIBRARY name a library
 * file to load instead.
 *
 * The neutral types rely on what both vendor ABIs guarantee on the 64-bit
 * Linux targets they support: every result is a C enum (int), devices
 * are int, handles (context, module, function, stream, event, graph,
 * node, exec) are pointers, and a device pointer is 64 bits, passed as
 * CUdeviceptr (unsigned long long) by CUDA and as void * by HIP: the same
 * register either way.
 *
 * **Differences** (struct gpu_backend): the symbol names; the kernel node
 * parameter struct (CUDA_KERNEL_NODE_PARAMS and hipKernelNodeParams order
 * their fields differently); the error name call (cuGetErrorName fills a
 * pointer, hipGetErrorName returns it); host functions (cuLaunchHostFunc;
 * ROCm 5.2, Debian's, has only hipStreamAddCallback); the built-in
 * kernels' image (PTX
 * for CUDA, a code object for HIP) and the executable formats accepted.
 *
 * Thread-safety: a device is thread-safe. Submissions to its stream are
 * serialised by @submit_lock; the event pool has its own lock; buffers
 * and executables are immutable after creation.
 */
#ifndef ACCEL_DRIVERS_GPU_H
#define ACCEL_DRIVERS_GPU_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "accel/status.h"
#include "src/core.h"
#include "gpu_program.h"

typedef void (*gpu_host_fn)(void *data);

/* A host function and its argument, as enqueued on a stream. */
struct gpu_host_call {
	gpu_host_fn fn;
	void *data;
};

/*
 * The driver API as the shared code calls it: X(field, return, args).
 * The comment after each group gives the CUDA names; hip.c the HIP ones.
 */
#define GPU_API_FUNCS(X)                                                      \
	/* cuInit cuDeviceGetCount cuDeviceGet cuDeviceGetName */             \
	X(init, int, (unsigned int flags))                                    \
	X(device_count, int, (int *count))                                    \
	X(device_get, int, (int *device, int ordinal))                        \
	X(device_name, int, (char *name, int len, int device))                \
	/* cuDevicePrimaryCtxRetain/Release_v2 cuCtxPush/PopCurrent_v2 */     \
	X(primary_ctx_retain, int, (void **ctx, int device))                  \
	X(primary_ctx_release, int, (int device))                             \
	X(ctx_push, int, (void *ctx))                                         \
	X(ctx_pop, int, (void **ctx))                                         \
	/* cuMemAlloc_v2 cuMemFree_v2 cuMemHostAlloc cuMemFreeHost            \
	   cuMemHostGetDevicePointer_v2 */                                    \
	X(mem_alloc, int, (uint64_t *ptr, size_t size))                       \
	X(mem_free, int, (uint64_t ptr))                                      \
	X(host_alloc, int, (void **ptr, size_t size, unsigned int flags))     \
	X(host_free, int, (void *ptr))                                        \
	X(host_device_pointer, int, (uint64_t *dptr, void *ptr, unsigned int flags)) \
	/* cuMemcpyHtoDAsync_v2 cuMemcpyDtoH_v2 */                            \
	X(memcpy_htod_async, int, (uint64_t dst, const void *src, size_t size, void *stream)) \
	X(memcpy_dtoh, int, (void *dst, uint64_t src, size_t size))           \
	/* cuModuleLoadData cuModuleUnload cuModuleGetFunction */             \
	X(module_load, int, (void **module, const void *image))               \
	X(module_unload, int, (void *module))                                 \
	X(module_function, int, (void **fn, void *module, const char *name))  \
	/* cuStreamCreate cuStreamDestroy_v2 cuStreamSynchronize              \
	   cuStreamWaitEvent */                                               \
	X(stream_create, int, (void **stream, unsigned int flags))            \
	X(stream_destroy, int, (void *stream))                                \
	X(stream_synchronize, int, (void *stream))                            \
	X(stream_wait_event, int, (void *stream, void *event, unsigned int flags)) \
	/* cuEventCreate cuEventDestroy_v2 cuEventRecord cuEventQuery        \
	   cuEventElapsedTime */                                              \
	X(event_create, int, (void **event, unsigned int flags))              \
	X(event_destroy, int, (void *event))                                  \
	X(event_record, int, (void *event, void *stream))                     \
	X(event_query, int, (void *event))                                    \
	X(event_elapsed, int, (float *ms, void *start, void *end))            \
	/* cuLaunchKernel; cuLaunchHostFunc (hipStreamAddCallback: the        \
	   signature differs, see gpu_backend) */                             \
	X(launch_kernel, int, (void *fn, unsigned int gx, unsigned int gy,    \
			       unsigned int gz, unsigned int bx, unsigned int by, \
			       unsigned int bz, unsigned int shared, void *stream, \
			       void **args, void **extra))                    \
	X(host_func, void, (void))                                            \
	/* cuGraphCreate cuGraphDestroy cuGraphAddEmptyNode                   \
	   cuGraphAddKernelNode (params differ: see gpu_backend)              \
	   cuGraphInstantiateWithFlags cuGraphExecDestroy cuGraphLaunch */    \
	X(graph_create, int, (void **graph, unsigned int flags))              \
	X(graph_destroy, int, (void *graph))                                  \
	X(graph_add_empty_node, int, (void **node, void *graph,               \
				      void *const *deps, size_t ndeps))       \
	X(graph_add_kernel_node, int, (void **node, void *graph,              \
				       void *const *deps, size_t ndeps,       \
				       const void *params))                   \
	X(graph_instantiate, int, (void **exec, void *graph,                  \
				   unsigned long long flags))                 \
	X(graph_exec_destroy, int, (void *exec))                              \
	X(graph_launch, int, (void *exec, void *stream))                      \
	/* cuGetErrorName: the signature differs (see gpu_backend) */         \
	X(error_name, void, (void))

#define GPU_API_DECLARE(field, ret, args) ret (*field) args;

/* The symbol table of one backend, filled by gpu_loader_get(). */
struct gpu_api {
	GPU_API_FUNCS(GPU_API_DECLARE)
};

#define GPU_API_COUNT (sizeof(struct gpu_api) / sizeof(void (*)(void)))
/*
 * The optional calls of the executable cache (cuda: JIT-compiling PTX to a
 * cubin once, src/exec_cache.h): cuLinkCreate_v2, cuLinkAddData_v2,
 * cuLinkComplete, cuLinkDestroy, cuDeviceGetAttribute, cuDriverGetVersion.
 * Loaded apart from struct gpu_api: a library without them loads, uncached.
 */
#define GPU_JIT_FUNCS(X)                                                      \
	X(link_create, int, (unsigned int nopts, int *opts, void **vals,      \
			     void **state))                                   \
	X(link_add_data, int, (void *state, int type, void *data, size_t size, \
			       const char *name, unsigned int nopts, int *opts, \
			       void **vals))                                  \
	X(link_complete, int, (void *state, void **image, size_t *size))      \
	X(link_destroy, int, (void *state))                                   \
	X(device_attribute, int, (int *value, int attribute, int device))     \
	X(driver_version, int, (int *version))

struct gpu_jit_api {
	GPU_JIT_FUNCS(GPU_API_DECLARE)
};

#define GPU_JIT_COUNT (sizeof(struct gpu_jit_api) / sizeof(void (*)(void)))

/* CUjitInputType's PTX; the compute capability's attributes. */
#define GPU_JIT_INPUT_PTX 1
#define GPU_ATTRIBUTE_CC_MAJOR 75
#define GPU_ATTRIBUTE_CC_MINOR 76

/* The index of a field, for the backends' name tables. */
#define GPU_API_INDEX(field) (offsetof(struct gpu_api, field) / sizeof(void (*)(void)))

/* The flag values both APIs share (CU_/hip*). */
#define GPU_HOST_ALLOC_PORTABLE 0x1u
#define GPU_HOST_ALLOC_DEVICEMAP 0x2u
#define GPU_STREAM_NON_BLOCKING 0x1u

/* The executable image formats (the bundle's format field). */
enum gpu_image_format {
	GPU_IMAGE_PTX = 1,   /* NUL-terminated PTX text */
	GPU_IMAGE_CUBIN = 2, /* a cubin or fatbin */
	GPU_IMAGE_HSACO = 3, /* an AMD GPU code object (or offload bundle) */
};

enum gpu_builtin {
	GPU_BUILTIN_FILL,
	GPU_BUILTIN_COPY,
	GPU_BUILTIN_SCATTER,
	GPU_BUILTIN_COUNT,
};

/* The loader's per-backend, per-process state (in the backend's file). */
struct gpu_loader {
	pthread_mutex_t lock;
	bool done;
	void *handle;
	const char *why;
	char msg[512];
	struct gpu_api api;
	struct gpu_jit_api jit;
	bool has_jit;
};

/*
 * struct gpu_backend - what makes cuda cuda and hip hip.
 * @name:           "cuda"; the URI scheme and the engine prefix.
 * @title:          "CUDA", for messages.
 * @libraries:      the library files to try, NULL-terminated.
 * @library_env:    names a library file to load instead.
 * @install:        what to install when no library loads.
 * @symbols:        the exported name of each struct gpu_api field.
 * @builtins:       the built-in kernels' image; @builtins_size 0 when the
 *                  build could not make it (@builtins_missing says why).
 * @formats:        bit (1 << format) per executable image format it loads.
 * @error_no_device, @error_invalid_device, @error_stub,
 * @error_out_of_memory: result codes (the first two from the init call
 *                  both mean "no usable GPU": ROCm's hipInit returns
 *                  hipErrorInvalidDevice where there is none).
 * @no_device_hint: what to check when the library finds no GPU.
 * @add_kernel_node: adds a kernel node launching @fn with @args.
 * @add_host_func:  enqueues @call->fn(@call->data) on @stream, after the
 *                  work before it; @call lives until it has run.
 * @result_name:    the name of a result code ("CUDA_ERROR_NO_DEVICE").
 * @jit_symbols:    the exported names of struct gpu_jit_api's fields, or
 *                  NULL: a backend whose images need no JIT (hip's code
 *                  objects), which then keeps no executable cache.
 */
struct gpu_backend {
	const char *name;
	const char *title;
	const char *const *libraries;
	const char *library_env;
	const char *install;
	const char *const *symbols;
	const uint8_t *builtins;
	const uint32_t *builtins_size;
	uint32_t builtins_format;
	const char *builtins_missing;
	uint32_t formats;
	int error_no_device;
	int error_invalid_device;
	int error_stub;
	int error_out_of_memory;
	const char *no_device_hint;
	struct gpu_loader *loader;
	int (*add_kernel_node)(const struct gpu_api *api, void **node, void *graph,
			       void *const *deps, size_t ndeps, void *fn,
			       const uint32_t grid[3], const uint32_t block[3],
			       void **args);
	int (*add_host_func)(const struct gpu_api *api, void *stream,
			     struct gpu_host_call *call);
	const char *(*result_name)(const struct gpu_api *api, int result);
	const char *const *jit_symbols;
};

extern const struct gpu_backend gpu_backend_cuda;
extern const struct gpu_backend gpu_backend_hip;

/*
 * gpu_loader_open() - dlopen @path (NULL: the backend's own list, or its
 * environment variable) and resolve every symbol into @api. Uncached: the
 * tests call it; the driver goes through gpu_loader_get().
 *
 * Return: the handle, or NULL with @why (of @len bytes) saying what is
 * missing and what would fix it.
 */
void *gpu_loader_open(const struct gpu_backend *be, const char *path,
		      struct gpu_api *api, char *why, size_t len);

/* The process's table (loaded on first use); NULL with *@why set. */
const struct gpu_api *gpu_loader_get(const struct gpu_backend *be,
				     const char **why);
/* The JIT calls, once gpu_loader_get() succeeded; NULL when absent. */
const struct gpu_jit_api *gpu_loader_jit(const struct gpu_backend *be);

/* The driver's probe: the library, then the built-ins. */
const char *gpu_probe(const struct gpu_backend *be);

/* The name of @result, never NULL. */
const char *gpu_result_name(const struct gpu_backend *be,
			    const struct gpu_api *api, int result);

/* A pool of events (completion markers), guarded by its lock. */
struct gpu_event_pool {
	pthread_mutex_t lock;
	void **free;
	uint32_t count;
	uint32_t cap;
};

/*
 * struct gpu_device - a cuda or hip device.
 * @ctx:          the device's primary context, pushed around driver calls.
 * @stream:       every submission's work, in submission order.
 * @done_stream:  host functions that complete submissions (they wait
 *                on an event of @stream, so they never hold @stream up).
 * @submit_lock:  serialises enqueueing on @stream.
 * @completer:    the thread that completes submissions (gpu_flight.c).
 * @jit:          the JIT calls when the device keeps an executable cache
 *                (base.cache set), else NULL.
 */
struct gpu_completer;

struct gpu_device {
	accel_device_t base;
	const struct gpu_backend *be;
	const struct gpu_api *api;
	const struct gpu_jit_api *jit;
	int device;
	void *ctx;
	void *stream;
	void *done_stream;
	pthread_mutex_t submit_lock;
	struct gpu_completer *completer; /* gpu_flight.c */
	uint64_t flight_seq;             /* flights enqueued (submit_lock) */
	struct gpu_event_pool events;
	void *builtin_module;
	void *builtin[GPU_BUILTIN_COUNT];
	char name[128];
	/* Enumeration and queries: the answers of accel_device_query_i64(). */
	struct gpu_limits {
		uint32_t workgroup_size[3];
		uint32_t workgroup_invocations;
		uint32_t workgroup_count[3];
		uint64_t device_local_bytes;
		uint64_t host_visible_bytes;
	} limits;
};

/*
 * struct gpu_flight - one submission in flight (gpu_flight.c).
 * @complete:  called once on the completion thread when the work ended,
 *             with 0 or -errno and what failed; may free the flight.
 * @submitted: optional: called once the work is on the stream, with a
 *             token that grows with each flight, before @complete can be.
 */
struct gpu_flight {
	struct gpu_flight *next;
	struct gpu_device *dev;
	struct gpu_host_call call;
	bool done;
	void *start;       /* recorded before the work: its device time */
	void *event;       /* recorded after it */
	uint64_t device_ns; /* from @start to @event, once complete; 0: unknown */
	void (*complete)(struct gpu_flight *f, int status, const char *msg);
	void (*submitted)(struct gpu_flight *f, uint64_t token);
};

int gpu_completer_init(struct gpu_device *dev);
/* With no flight left: stops the thread (or detaches it, when on it). */
void gpu_completer_fini(struct gpu_device *dev);
/*
 * gpu_flight_enqueue() - with @submit_lock held and the work on @stream:
 * its completion is enqueued and ->complete follows on the completion
 * thread. 0, or -errno with the message set and nothing enqueued.
 */
int gpu_flight_enqueue(struct gpu_device *dev, struct gpu_flight *f);
/* The event pool (gpu_command_buffer.c); the context is current. */
int gpu_event_get(struct gpu_device *dev, void **ev);
void gpu_event_put(struct gpu_device *dev, void *ev);

/* Pushes / pops the device's context on the calling thread. */
int gpu_enter(struct gpu_device *dev, const char *fn);
void gpu_leave(struct gpu_device *dev);

/* -EIO (or -ENOMEM) for @result, message "@fn: @what on @dev: NAME (n)". */
int gpu_fail(struct gpu_device *dev, int result, const char *fn,
	     const char *what);

int gpu_device_open(const struct gpu_backend *be,
		    const struct accel_driver *drv, const char *device,
		    accel_scheduler_t *s, accel_device_t **out);

/*
 * gpu_enumerate() - the registry's enumerate for @be: the devices the
 * driver API counts (none where the library loads but finds no GPU).
 */
int gpu_enumerate(const struct gpu_backend *be, accel_device_info_t *infos,
		  uint32_t cap, uint32_t *count);

/*
 * gpu_device_check() - initialise the driver API and check that device
 * @ordinal exists: 0, or -ENODEV (no device, the stub library, a driver too
 * old) with the message set. Called by open; the tests call it directly.
 */
int gpu_device_check(const struct gpu_backend *be, const struct gpu_api *api,
		     long ordinal, const char *uri);

/*
 * The executable bundle (drivers/gpu/gpupack.py writes it), little-endian:
 *
 *   0   char magic[8] = "ACCELGPU"
 *   8   u32 version = 2 (1 is read too)
 *  12   u32 entry_count
 *  16   u32 format (enum gpu_image_format)
 *  20   u32 image_offset (from the start of the file)
 *  24   u32 image_size
 *  28   u32 reserved = 0
 *  32   entry_count entries of 112 bytes (96 in version 1):
 *         char name[64]   the kernel's name in the image (extern "C")
 *         u32 binding_count, constant_count, workgroup_size[3]
 *         u32 reserved[3] = 0
 *         u64 operations, bytes   the declared cost per workgroup
 *                                 (version 2; 0, 0: none)
 */
#define GPU_BUNDLE_MAGIC "ACCELGPU"
#define GPU_BUNDLE_VERSION 2u
#define GPU_BUNDLE_HEADER 32u
#define GPU_BUNDLE_ENTRY_V1 96u
#define GPU_BUNDLE_ENTRY 112u

struct gpu_bundle_entry {
	char name[ACCEL_EXPORT_NAME_MAX];
	uint32_t binding_count;
	uint32_t constant_count;
	uint32_t workgroup_size[3];
	uint32_t reserved[3];
	accel_export_cost_t cost;
};

struct gpu_bundle {
	uint32_t format;
	uint32_t entry_count;
	uint32_t stride; /* bytes per entry in the file: 96 (version 1), 112 */
	const uint8_t *image;
	uint32_t image_size;
	struct gpu_bundle_entry *entries; /* owned */
};

/* Checks @data (pure); 0, or -ENOEXEC / -ENOMEM with the message set. */
int gpu_bundle_parse(const uint8_t *data, size_t size, uint32_t formats,
		     const char *fn, const char *what, struct gpu_bundle *out);

int gpu_executable_load(accel_device_t *d, const char *path,
			accel_executable_t **out);
int gpu_calibration_executable(accel_device_t *d, accel_executable_t **out);
int gpu_builtins_load(struct gpu_device *dev);
void gpu_builtins_unload(struct gpu_device *dev);

int gpu_command_buffer_end(accel_device_t *d, accel_command_buffer_t *cb);
void gpu_command_buffer_destroy(accel_device_t *d, accel_command_buffer_t *cb);
int gpu_execute(accel_device_t *d, struct accel_cb_exec *x);

/* The kernel handle of an executable's entry point (accel_export.fn). */
struct gpu_entry {
	void *function;
};

#endif /* ACCEL_DRIVERS_GPU_H */
