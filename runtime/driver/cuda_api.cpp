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

using GetProcAddress = CUresult (*)(const char*, void**, int, cuuint64_t,
                                    CUdriverProcAddressQueryResult*);

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
  auto get_proc = reinterpret_cast<GetProcAddress>(dlsym(library, "cuGetProcAddress_v2"));
  if (get_proc == nullptr) {
    result.failure = "no CUDA driver: libcuda.so.1 is older than CUDA 12 (no cuGetProcAddress_v2)";
    return result;
  }
  // Ask for each entry point as of the toolkit we were built with, so the driver hands out the
  // ABI version that cuda.h declared.
#define KJIT_RESOLVE(name)                                                                  \
  {                                                                                         \
    void* fn = nullptr;                                                                     \
    CUdriverProcAddressQueryResult found{};                                                 \
    if (get_proc(#name, &fn, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &found) !=          \
            CUDA_SUCCESS || fn == nullptr) {                                                \
      result.failure = "no CUDA driver: libcuda.so.1 lacks " #name " (driver too old?)";    \
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
