// SPDX-License-Identifier: MIT
/*
 * The hip backend of the shared GPU driver (drivers/gpu/gpu.h): the HIP
 * API's symbol names (libamdhip64, ROCm 5.2 and later: Debian bookworm's
 * libamdhip64-5 has every one), its kernel node parameters, host
 * callbacks and error names, and the built-in kernels (builtins.cu, the
 * same source as cuda's, compiled to a code object by hipcc when the build
 * finds one: hip_builtins.c, generated; without hipcc the driver says so).
 *
 * What differs from CUDA besides the names:
 * - hipKernelNodeParams orders its fields otherwise;
 * - ROCm 5.2 has no hipLaunchHostFunc: completions go through
 *   hipStreamAddCallback, whose callback also gets the stream's status;
 * - HIP has no device-side launch, so a dispatch-indirect always takes the
 *   host read-back path (the shared one: gpu_program.h, steps).
 */
#include "../gpu/gpu.h"

extern const uint8_t accel_hip_builtins[];
extern const uint32_t accel_hip_builtins_size;

#define N(field, sym) [GPU_API_INDEX(field)] = sym,

static const char *const hip_symbols[GPU_API_COUNT] = {
	N(init, "hipInit")
	N(device_count, "hipGetDeviceCount")
	N(device_get, "hipDeviceGet")
	N(device_name, "hipDeviceGetName")
	N(primary_ctx_retain, "hipDevicePrimaryCtxRetain")
	N(primary_ctx_release, "hipDevicePrimaryCtxRelease")
	N(ctx_push, "hipCtxPushCurrent")
	N(ctx_pop, "hipCtxPopCurrent")
	N(mem_alloc, "hipMalloc")
	N(mem_free, "hipFree")
	N(host_alloc, "hipHostMalloc")
	N(host_free, "hipHostFree")
	N(host_device_pointer, "hipHostGetDevicePointer")
	N(memcpy_htod_async, "hipMemcpyHtoDAsync")
	N(memcpy_dtoh, "hipMemcpyDtoH")
	N(module_load, "hipModuleLoadData")
	N(module_unload, "hipModuleUnload")
	N(module_function, "hipModuleGetFunction")
	N(stream_create, "hipStreamCreateWithFlags")
	N(stream_destroy, "hipStreamDestroy")
	N(stream_synchronize, "hipStreamSynchronize")
	N(stream_wait_event, "hipStreamWaitEvent")
	N(event_create, "hipEventCreateWithFlags")
	N(event_destroy, "hipEventDestroy")
	N(event_record, "hipEventRecord")
	N(event_query, "hipEventQuery")
	N(event_elapsed, "hipEventElapsedTime")
	N(launch_kernel, "hipModuleLaunchKernel")
	N(host_func, "hipStreamAddCallback")
	N(graph_create, "hipGraphCreate")
	N(graph_destroy, "hipGraphDestroy")
	N(graph_add_empty_node, "hipGraphAddEmptyNode")
	N(graph_add_kernel_node, "hipGraphAddKernelNode")
	N(graph_instantiate, "hipGraphInstantiateWithFlags")
	N(graph_exec_destroy, "hipGraphExecDestroy")
	N(graph_launch, "hipGraphLaunch")
	N(error_name, "hipGetErrorName")
};

/* hipKernelNodeParams. */
struct hip_kernel_node_params {
	unsigned int block[3];
	void **extra;
	void *func;
	unsigned int grid[3];
	void **kernel_params;
	unsigned int shared_mem_bytes;
};

static int hip_add_kernel_node(const struct gpu_api *api, void **node,
			       void *graph, void *const *deps, size_t ndeps,
			       void *fn, const uint32_t grid[3],
			       const uint32_t block[3], void **args)
{
	struct hip_kernel_node_params p = {
		.block = { block[0], block[1], block[2] },
		.func = fn,
		.grid = { grid[0], grid[1], grid[2] },
		.kernel_params = args,
	};

	return api->graph_add_kernel_node(node, graph, deps, ndeps, &p);
}

/* hipStreamCallback_t: (stream, status, user data). */
static void hip_callback(void *stream, int status, void *data)
{
	struct gpu_host_call *call = data;

	call->fn(call->data);
}

static int hip_add_host_func(const struct gpu_api *api, void *stream,
			     struct gpu_host_call *call)
{
	int (*add)(void *, void (*)(void *, int, void *), void *, unsigned int) =
		(int (*)(void *, void (*)(void *, int, void *), void *, unsigned int))api->host_func;

	return add(stream, hip_callback, call, 0);
}

static const char *hip_result_name(const struct gpu_api *api, int result)
{
	const char *(*get)(int) = (const char *(*)(int))api->error_name;

	return get(result);
}

static const char *const hip_libraries[] = {
	"libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.5", NULL,
};

static struct gpu_loader hip_loader = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
};

const struct gpu_backend gpu_backend_hip = {
	.name = "hip",
	.title = "HIP",
	.libraries = hip_libraries,
	.library_env = "ACCEL_HIP_LIBRARY",
	.install = "install ROCm's HIP runtime (Debian: libamdhip64-5)",
	.symbols = hip_symbols,
	.builtins = accel_hip_builtins,
	.builtins_size = &accel_hip_builtins_size,
	.builtins_format = GPU_IMAGE_HSACO,
	.builtins_missing = "this libaccel was built without the hip driver's built-in kernels (hipcc was not found at build time); install hipcc (Debian: hipcc) and rebuild",
	.formats = 1u << GPU_IMAGE_HSACO,
	.error_no_device = 100,
	.error_invalid_device = 101,
	.error_stub = -1,
	.error_out_of_memory = 2,
	.no_device_hint = "check that the amdgpu kernel driver is loaded, that this user may open /dev/kfd and /dev/dri/renderD* (groups render and video), and that HIP_VISIBLE_DEVICES does not hide it",
	.loader = &hip_loader,
	.add_kernel_node = hip_add_kernel_node,
	.add_host_func = hip_add_host_func,
	.result_name = hip_result_name,
};

static const char *hip_probe(const struct accel_driver *drv)
{
	return gpu_probe(&gpu_backend_hip);
}

static int hip_enumerate(const struct accel_driver *drv,
			 accel_device_info_t *infos, uint32_t cap,
			 uint32_t *count)
{
	return gpu_enumerate(&gpu_backend_hip, infos, cap, count);
}

static int hip_device_open(const struct accel_driver *drv, const char *device,
			   accel_scheduler_t *s, accel_device_t **out)
{
	return gpu_device_open(&gpu_backend_hip, drv, device, s, out);
}

const struct accel_driver accel_driver_hip = {
	.name = "hip",
	.uri_example = "hip://0",
	.device_open = hip_device_open,
	.probe = hip_probe,
	.enumerate = hip_enumerate,
};
