// SPDX-License-Identifier: MIT
/*
 * The cuda backend of the shared GPU driver (drivers/gpu/gpu.h): the CUDA
 * driver API's symbol names, its kernel node parameters and error names,
 * and the built-in kernels (builtins.cu, compiled to PTX by nvcc at build
 * time and embedded: cuda_builtins.c, generated).
 *
 * The symbols are those of libcuda.so.1 from CUDA 11.4 on (the newest,
 * cuGraphInstantiateWithFlags, came then); the versioned names (_v2) are
 * the ones the CUDA headers map the plain names to, and libcuda keeps
 * exporting them for old binaries, so the table stays valid on newer
 * drivers. The embedded PTX needs a driver that reads the PTX version of
 * the nvcc that built it (Documentation/gpu.rst).
 */
#include "../gpu/gpu.h"

/* The generated image (cuda_builtins.c); size 0 without nvcc. */
extern const uint8_t accel_cuda_builtins[];
extern const uint32_t accel_cuda_builtins_size;

#define N(field, sym) [GPU_API_INDEX(field)] = sym,

static const char *const cuda_symbols[GPU_API_COUNT] = {
	N(init, "cuInit")
	N(device_count, "cuDeviceGetCount")
	N(device_get, "cuDeviceGet")
	N(device_name, "cuDeviceGetName")
	N(primary_ctx_retain, "cuDevicePrimaryCtxRetain")
	N(primary_ctx_release, "cuDevicePrimaryCtxRelease_v2")
	N(ctx_push, "cuCtxPushCurrent_v2")
	N(ctx_pop, "cuCtxPopCurrent_v2")
	N(mem_alloc, "cuMemAlloc_v2")
	N(mem_free, "cuMemFree_v2")
	N(host_alloc, "cuMemHostAlloc")
	N(host_free, "cuMemFreeHost")
	N(host_device_pointer, "cuMemHostGetDevicePointer_v2")
	N(memcpy_htod_async, "cuMemcpyHtoDAsync_v2")
	N(memcpy_dtoh, "cuMemcpyDtoH_v2")
	N(module_load, "cuModuleLoadData")
	N(module_unload, "cuModuleUnload")
	N(module_function, "cuModuleGetFunction")
	N(stream_create, "cuStreamCreate")
	N(stream_destroy, "cuStreamDestroy_v2")
	N(stream_synchronize, "cuStreamSynchronize")
	N(stream_wait_event, "cuStreamWaitEvent")
	N(event_create, "cuEventCreate")
	N(event_destroy, "cuEventDestroy_v2")
	N(event_record, "cuEventRecord")
	N(event_query, "cuEventQuery")
	N(event_elapsed, "cuEventElapsedTime")
	N(launch_kernel, "cuLaunchKernel")
	N(host_func, "cuLaunchHostFunc")
	N(graph_create, "cuGraphCreate")
	N(graph_destroy, "cuGraphDestroy")
	N(graph_add_empty_node, "cuGraphAddEmptyNode")
	N(graph_add_kernel_node, "cuGraphAddKernelNode")
	N(graph_instantiate, "cuGraphInstantiateWithFlags")
	N(graph_exec_destroy, "cuGraphExecDestroy")
	N(graph_launch, "cuGraphLaunch")
	N(error_name, "cuGetErrorName")
};

/* CUDA_KERNEL_NODE_PARAMS (the v1 layout cuGraphAddKernelNode takes). */
struct cuda_kernel_node_params {
	void *func;
	unsigned int grid[3];
	unsigned int block[3];
	unsigned int shared_mem_bytes;
	void **kernel_params;
	void **extra;
};

static int cuda_add_kernel_node(const struct gpu_api *api, void **node,
				void *graph, void *const *deps, size_t ndeps,
				void *fn, const uint32_t grid[3],
				const uint32_t block[3], void **args)
{
	struct cuda_kernel_node_params p = {
		.func = fn,
		.grid = { grid[0], grid[1], grid[2] },
		.block = { block[0], block[1], block[2] },
		.kernel_params = args,
	};

	return api->graph_add_kernel_node(node, graph, deps, ndeps, &p);
}

static int cuda_add_host_func(const struct gpu_api *api, void *stream,
			      struct gpu_host_call *call)
{
	int (*launch)(void *, gpu_host_fn, void *) =
		(int (*)(void *, gpu_host_fn, void *))api->host_func;

	return launch(stream, call->fn, call->data);
}

static const char *cuda_result_name(const struct gpu_api *api, int result)
{
	int (*get)(int, const char **) = (int (*)(int, const char **))api->error_name;
	const char *name = NULL;

	/* the stub library and old drivers may not know every code */
	switch (result) {
	case 34:
		return "CUDA_ERROR_STUB_LIBRARY";
	case 35:
		return "CUDA_ERROR_INSUFFICIENT_DRIVER";
	case 100:
		return "CUDA_ERROR_NO_DEVICE";
	}
	if (get(result, &name) != 0)
		return NULL;
	return name;
}

#define J(field, sym) [offsetof(struct gpu_jit_api, field) / sizeof(void (*)(void))] = sym,

static const char *const cuda_jit_symbols[GPU_JIT_COUNT] = {
	J(link_create, "cuLinkCreate_v2")
	J(link_add_data, "cuLinkAddData_v2")
	J(link_complete, "cuLinkComplete")
	J(link_destroy, "cuLinkDestroy")
	J(device_attribute, "cuDeviceGetAttribute")
	J(driver_version, "cuDriverGetVersion")
};

static const char *const cuda_libraries[] = { "libcuda.so.1", NULL };

static struct gpu_loader cuda_loader = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
};

const struct gpu_backend gpu_backend_cuda = {
	.name = "cuda",
	.title = "CUDA",
	.libraries = cuda_libraries,
	.library_env = "ACCEL_CUDA_LIBRARY",
	.install = "install the NVIDIA driver (Debian: nvidia-driver, which provides libcuda1)",
	.symbols = cuda_symbols,
	.builtins = accel_cuda_builtins,
	.builtins_size = &accel_cuda_builtins_size,
	.builtins_format = GPU_IMAGE_PTX,
	.builtins_missing = "this libaccel was built without the cuda driver's built-in kernels (nvcc was not found at build time); install the CUDA toolkit and rebuild",
	.formats = (1u << GPU_IMAGE_PTX) | (1u << GPU_IMAGE_CUBIN),
	.error_no_device = 100,
	.error_invalid_device = 101,
	.error_stub = 34,
	.error_out_of_memory = 2,
	.no_device_hint = "check that the nvidia kernel module is loaded (nvidia-smi lists the GPU) and that CUDA_VISIBLE_DEVICES does not hide it",
	.loader = &cuda_loader,
	.add_kernel_node = cuda_add_kernel_node,
	.add_host_func = cuda_add_host_func,
	.result_name = cuda_result_name,
	.jit_symbols = cuda_jit_symbols,
};

static const char *cuda_probe(const struct accel_driver *drv)
{
	return gpu_probe(&gpu_backend_cuda);
}

static int cuda_enumerate(const struct accel_driver *drv,
			 accel_device_info_t *infos, uint32_t cap,
			 uint32_t *count)
{
	return gpu_enumerate(&gpu_backend_cuda, infos, cap, count);
}

static int cuda_device_open(const struct accel_driver *drv, const char *device,
			    accel_scheduler_t *s, accel_device_t **out)
{
	return gpu_device_open(&gpu_backend_cuda, drv, device, s, out);
}

const struct accel_driver accel_driver_cuda = {
	.name = "cuda",
	.uri_example = "cuda://0",
	.device_open = cuda_device_open,
	.probe = cuda_probe,
	.enumerate = cuda_enumerate,
};
