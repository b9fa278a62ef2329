// SPDX-License-Identifier: Apache-2.0
// Move-only owners of driver handles. Destructors never throw: a failed release during
// unwinding is ignored, since there is nothing better to do with it.
#pragma once

#include <cstddef>
#include <utility>

#include "runtime/driver/cuda_api.h"

namespace kjit {

/// A handle type H released by Release(H): move-only, noexcept destructor.
template <typename H, CUresult (*Release)(H) noexcept>
class UniqueHandle {
 public:
  UniqueHandle() = default;
  explicit UniqueHandle(H handle) : handle_(handle) {}
  ~UniqueHandle() { reset(); }
  UniqueHandle(UniqueHandle&& other) noexcept : handle_(std::exchange(other.handle_, H{})) {}
  UniqueHandle& operator=(UniqueHandle&& other) noexcept {
    if (this != &other) {
      reset();
      handle_ = std::exchange(other.handle_, H{});
    }
    return *this;
  }
  UniqueHandle(const UniqueHandle&) = delete;
  UniqueHandle& operator=(const UniqueHandle&) = delete;

  H get() const noexcept { return handle_; }
  explicit operator bool() const noexcept { return handle_ != H{}; }
  void reset() noexcept {
    if (handle_ != H{}) Release(handle_);
    handle_ = H{};
  }

 private:
  H handle_{};
};

namespace release {
inline CUresult module(CUmodule h) noexcept { return cuda().cuModuleUnload(h); }
inline CUresult memory(CUdeviceptr h) noexcept { return cuda().cuMemFree(h); }
inline CUresult stream(CUstream h) noexcept { return cuda().cuStreamDestroy(h); }
inline CUresult event(CUevent h) noexcept { return cuda().cuEventDestroy(h); }
inline CUresult graph(CUgraph h) noexcept { return cuda().cuGraphDestroy(h); }
inline CUresult graph_exec(CUgraphExec h) noexcept { return cuda().cuGraphExecDestroy(h); }
}  // namespace release

using Module = UniqueHandle<CUmodule, release::module>;
using DeviceMemory = UniqueHandle<CUdeviceptr, release::memory>;
using Stream = UniqueHandle<CUstream, release::stream>;
using Event = UniqueHandle<CUevent, release::event>;
using Graph = UniqueHandle<CUgraph, release::graph>;
using GraphExec = UniqueHandle<CUgraphExec, release::graph_exec>;

/// Loads a cubin into the current context.
Module load_module(const void* image);
/// Allocates `bytes` of device memory in the current context.
DeviceMemory allocate_device(std::size_t bytes);
/// A new non-blocking stream in the current context.
Stream create_stream();
/// A new event (timing enabled).
Event create_event();

}  // namespace kjit
