// SPDX-License-Identifier: Apache-2.0
#include "runtime/driver/cuda_api.h"

#include <dlfcn.h>

#include <string>

#include "kjit/error.hpp"

namespace kjit {
namespace {

struct LoadResult {
  CudaApi api;
  std::string failure;  // empty when the driver is usable
};

// The symbol a cuda.h name stands for (cuMemAlloc -> "cuMemAlloc_v2"): dlsym of exactly that
// symbol gives the ABI the header declared. cuGetProcAddress would instead hand out the newest
// variant for a CUDA version, which for some names (cuCtxGetDevice -> cuCtxGetDevice_v2 in
// CUDA 13) takes other arguments than the header's declaration.
#define KJIT_SYMBOL_NAME_OF(name) #name
#define KJIT_SYMBOL_NAME(name) KJIT_SYMBOL_NAME_OF(name)

LoadResult load_driver() {
  LoadResult result;
  // RTLD_NODELETE: the handle lives as long as the process; unloading libcuda while contexts
  // exist is never safe.
  void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (library == nullptr) {
    const char* reason = dlerror();
    result.failure = std::string("no CUDA driver: cannot load libcuda.so.1 (") +
                     (reason ? reason : "unknown reason") + ")";
    return result;
  }
#define KJIT_RESOLVE(name)                                                                  \
  {                                                                                         \
    void* fn = dlsym(library, KJIT_SYMBOL_NAME(name));                                      \
    if (fn == nullptr) {                                                                    \
      result.failure = "no CUDA driver: libcuda.so.1 lacks " KJIT_SYMBOL_NAME(name)         \
                       " (driver older than the CUDA 12 this build needs?)";                \
      return result;                                                                        \
    }                                                                                       \
    result.api.name = reinterpret_cast<decltype(result.api.name)>(fn);                      \
  }
  KJIT_CUDA_FUNCTIONS(KJIT_RESOLVE)
#undef KJIT_RESOLVE
  CUresult init = result.api.cuInit(0);
  if (init != CUDA_SUCCESS) {
    const char* name = nullptr;
    result.api.cuGetErrorName(init, &name);
    result.failure = std::string("no usable CUDA device: cuInit failed with ") +
                     (name ? name : "an unknown error");
  }
  return result;
}

const LoadResult& loaded() {
  static const LoadResult result = load_driver();
  return result;
}

}  // namespace

const CudaApi& cuda() {
  const LoadResult& result = loaded();
  if (!result.failure.empty()) throw Error(Status::kErrorNoDriver, result.failure);
  return result.api;
}

bool driver_available() noexcept { return loaded().failure.empty(); }

void check_cuda(CUresult result, const char* what) {
  if (result == CUDA_SUCCESS) return;
  const char* name = nullptr;
  const char* text = nullptr;
  cuda().cuGetErrorName(result, &name);
  cuda().cuGetErrorString(result, &text);
  std::string message = std::string(what) + " failed: " + (name ? name : "?") + " (" +
                        (text ? text : "no description") + ")";
  Status status = result == CUDA_ERROR_OUT_OF_MEMORY ? Status::kErrorOutOfResources
                  : result == CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES ? Status::kErrorOutOfResources
                                                                 : Status::kErrorDriver;
  throw Error(status, message);
}

}  // namespace kjit
