// SPDX-License-Identifier: Apache-2.0
// A libcuda.so.1 with every entry point kjit resolves, each failing: cuInit reports no device.
// Put first on the library path, it gives a suite the no-driver path on any machine, the way a
// container without a GPU gives it (the loader's dlopen takes the first libcuda.so.1 it finds).
#include "runtime/driver/cuda_api.h"

#define KJIT_FAKE_SYMBOL_OF(name) #name
#define KJIT_FAKE_SYMBOL(name) KJIT_FAKE_SYMBOL_OF(name)
// Each entry point under the symbol cuda.h gives its name (cuMemAlloc -> cuMemAlloc_v2); the C++
// name differs so that it does not clash with cuda.h's declaration of the real one.
#define KJIT_FAKE_ENTRY(name)                                               \
  extern "C" CUresult kjit_fake_##name() __asm__(KJIT_FAKE_SYMBOL(name));   \
  extern "C" __attribute__((visibility("default"))) CUresult kjit_fake_##name() { \
    return CUDA_ERROR_NO_DEVICE;                                            \
  }
KJIT_CUDA_FUNCTIONS(KJIT_FAKE_ENTRY)
