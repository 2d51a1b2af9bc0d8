// SPDX-License-Identifier: MIT
//
// accel.cuh - the kernel ABI of libaccel's cuda and hip drivers.
//
// A kernel is an extern "C" __global__ function of one argument: the
// device address of its parameter block, which the binding plan built at
// record time (Documentation/gpu.rst). The block holds one resolved
// binding (device address, length in bytes) per buffer the dispatch
// passes, then its 32-bit constants:
//
//   #include "accel.cuh"
//
//   ACCEL_KERNEL(saxpy)   // 2 bindings, 1 constant
//   {
//       float *x = (float *)accel_binding(0);
//       float *y = (float *)accel_binding(1);
//       float a = __uint_as_float(accel_constant(2, 0));
//       unsigned long long i = blockIdx.x * blockDim.x + threadIdx.x;
//       if (i < accel_binding_length(0) / 4)
//           y[i] += a * x[i];
//   }
//
// The same source builds with nvcc (PTX or cubin, for cuda://) and hipcc
// (a code object, for hip://); drivers/gpu/gpupack.py makes the bundle
// that accel_executable_load() reads. Bindings that came from the binding
// table were resolved by the submission (the scatter built-in) before the
// kernel runs: a kernel never sees a slot.
#ifndef ACCEL_CUH
#define ACCEL_CUH

#if defined(__HIPCC__) || defined(__HIP_PLATFORM_AMD__)
#include <hip/hip_runtime.h>
#endif

struct accel_binding {
	unsigned long long address;
	unsigned long long length;
};

#define ACCEL_KERNEL(name) \
	extern "C" __global__ void name(const struct accel_binding *accel_params)

// The device address of binding @i, and its length in bytes.
#define accel_binding(i) ((void *)accel_params[(i)].address)
#define accel_binding_length(i) (accel_params[(i)].length)

// Constant @i of a kernel with @bindings bindings.
#define accel_constant(bindings, i) \
	(((const unsigned int *)(accel_params + (bindings)))[(i)])

#endif // ACCEL_CUH
