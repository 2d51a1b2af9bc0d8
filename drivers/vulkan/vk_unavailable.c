// SPDX-License-Identifier: MIT
/*
 * The vulkan driver's registry entry when libaccel is built without it:
 * the build found no Vulkan headers (vulkan/vulkan.h) or no glslc to
 * compile the built-in shaders (drivers/meson.build).
 */
#include "src/core.h"

const struct accel_driver accel_driver_vulkan = {
	.name = "vulkan",
	.uri_example = "vulkan://0",
	.unavailable = "this libaccel was built without the vulkan driver (no vulkan/vulkan.h or no glslc at build time; Debian: libvulkan-dev and glslc)",
};
