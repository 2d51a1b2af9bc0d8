// SPDX-License-Identifier: MIT
/*
 * Loading the Vulkan loader: dlopen("libvulkan.so.1") once per process,
 * then every global function through vkGetInstanceProcAddr. Nothing links
 * against libvulkan, so libaccel builds and runs without it; the driver
 * then says why it is not available (accel_driver_info(), and the message
 * of accel_device_open()).
 *
 * A statically linked program cannot load libvulkan: glibc's dlopen() in
 * a static program loads a second libc for the library, which crashes
 * the Vulkan ICDs. Such a program has no _DYNAMIC section, so the driver
 * checks for that first and says so instead of crashing.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#include "vk.h"

extern const char _DYNAMIC[] __attribute__((weak));

static struct vk_loader loader;
static const char *loader_why;
static char loader_msg[512];
static pthread_once_t loader_once = PTHREAD_ONCE_INIT;

static void loader_init(void)
{
	uint32_t version = VK_API_VERSION_1_0;

	if (!_DYNAMIC) {
		loader_why = "this program is statically linked, and a static program cannot load libvulkan.so.1 (glibc); link it dynamically";
		return;
	}
	loader.handle = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!loader.handle) {
		snprintf(loader_msg, sizeof(loader_msg),
			 "cannot load the Vulkan loader: %s; install it (Debian: libvulkan1) and a Vulkan driver (mesa-vulkan-drivers)",
			 dlerror());
		loader_why = loader_msg;
		return;
	}
	loader.vkGetInstanceProcAddr =
		(PFN_vkGetInstanceProcAddr)dlsym(loader.handle, "vkGetInstanceProcAddr");
#define VK_LOAD_GLOBAL(name) \
	if (loader.vkGetInstanceProcAddr) \
		loader.name = (PFN_##name)loader.vkGetInstanceProcAddr(NULL, #name);
	VK_GLOBAL_FUNCS(VK_LOAD_GLOBAL)
#undef VK_LOAD_GLOBAL
	if (!loader.vkGetInstanceProcAddr || !loader.vkCreateInstance ||
	    !loader.vkEnumerateInstanceVersion ||
	    loader.vkEnumerateInstanceVersion(&version) != VK_SUCCESS ||
	    version < VK_API_VERSION_1_2) {
		snprintf(loader_msg, sizeof(loader_msg),
			 "libvulkan.so.1 is a Vulkan %u.%u loader; the vulkan driver needs Vulkan 1.2 (buffer device addresses, timeline semaphores)",
			 VK_API_VERSION_MAJOR(version), VK_API_VERSION_MINOR(version));
		loader_why = loader_msg;
		dlclose(loader.handle);
		loader.handle = NULL;
	}
}

const struct vk_loader *vk_loader_get(const char **why)
{
	pthread_once(&loader_once, loader_init);
	*why = loader_why;
	return loader_why ? NULL : &loader;
}
