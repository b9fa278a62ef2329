// SPDX-License-Identifier: Apache-2.0
// The CUDA driver API, loaded from libcuda.so.1 (dlopen + dlsym) at run time and never linked, so the library,
// the CLI and the tests run where there is no driver; there, the first GPU call fails with
// Status::kErrorNoDriver.
#pragma once

#include <cuda.h>

namespace kjit {

// Every entry point kjit uses. The cuda.h macros (cuMemAlloc -> cuMemAlloc_v2, ...) apply to
// both the member names and their types, so the pointers always match the versioned ABI.
#define KJIT_CUDA_FUNCTIONS(X)                                                              \
  X(cuInit) X(cuDriverGetVersion) X(cuGetErrorName) X(cuGetErrorString)                     \
  X(cuDeviceGetCount) X(cuDeviceGet) X(cuDeviceGetName) X(cuDeviceGetAttribute)             \
  X(cuDeviceTotalMem) X(cuDevicePrimaryCtxRetain) X(cuDevicePrimaryCtxRelease)              \
  X(cuCtxGetCurrent) X(cuCtxSetCurrent) X(cuCtxGetDevice) X(cuCtxSynchronize)               \
  X(cuCtxResetPersistingL2Cache)                                                            \
  X(cuModuleLoadData) X(cuModuleUnload) X(cuModuleGetFunction)                              \
  X(cuFuncGetAttribute) X(cuFuncSetAttribute) X(cuLaunchKernel) X(cuLaunchKernelEx)         \
  X(cuOccupancyMaxActiveBlocksPerMultiprocessor) X(cuOccupancyMaxActiveClusters)            \
  X(cuMemAlloc) X(cuMemFree) X(cuMemGetInfo) X(cuMemcpyHtoD) X(cuMemcpyDtoH)                \
  X(cuMemcpyDtoDAsync) X(cuMemsetD8Async) X(cuMemsetD32Async)                               \
  X(cuStreamCreate) X(cuStreamDestroy) X(cuStreamSynchronize) X(cuStreamIsCapturing)       \
  X(cuStreamGetId)                                                                          \
  X(cuStreamBeginCapture) X(cuStreamEndCapture) X(cuGraphInstantiateWithFlags)              \
  X(cuGraphLaunch) X(cuGraphDestroy) X(cuGraphExecDestroy)                                  \
  X(cuEventCreate) X(cuEventDestroy) X(cuEventRecord) X(cuEventSynchronize)                 \
  X(cuEventElapsedTime)

/// Function pointers into libcuda, filled once.
struct CudaApi {
#define KJIT_DECLARE_POINTER(name) decltype(&::name) name = nullptr;
  KJIT_CUDA_FUNCTIONS(KJIT_DECLARE_POINTER)
#undef KJIT_DECLARE_POINTER
};

/// The loaded driver API (cuInit done). Throws Error(kErrorNoDriver) when libcuda.so.1 cannot be
/// loaded or initialized; the answer is remembered, so later calls fail as fast.
const CudaApi& cuda();

/// True when a driver can be loaded and initialized (never throws).
bool driver_available() noexcept;

/// Throws Error (kErrorDriver, or kErrorOutOfResources for out-of-memory) naming `what` and the
/// driver's error name when `result` is not CUDA_SUCCESS.
void check_cuda(CUresult result, const char* what);

}  // namespace kjit

/// Calls a driver function through kjit::cuda() and checks its result, naming the call.
#define KJIT_CU(call_name, ...) ::kjit::check_cuda(::kjit::cuda().call_name(__VA_ARGS__), #call_name)
