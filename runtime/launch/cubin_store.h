// SPDX-License-Identifier: Apache-2.0
// Where cubins come from: memory, then the disk caches, then NVRTC (each key compiled once per
// process, and once across processes when they share a disk cache).
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "runtime/compiler/kernel_compiler.h"
#include "runtime/env.h"
#include "runtime/once_map.h"

namespace kjit {
namespace cache {
class LayeredCache;
}

/// Process-wide cubins by kernel key. Thread-safe.
class CubinStore {
 public:
  explicit CubinStore(const EnvSettings& settings);
  ~CubinStore();

  /// The cubin for `spec` on sm_<arch>.
  std::shared_ptr<const CompiledKernel> get(const KernelSpec& spec, int arch);

  /// NVRTC compiles done by this store (tests count them).
  long compiles() const noexcept { return compiles_.load(); }

 private:
  std::shared_ptr<const CompiledKernel> load_or_compile(const KernelSpec& spec, int arch,
                                                        const std::string& key_text);

  bool jit_;
  std::unique_ptr<cache::LayeredCache> disk_;
  OnceMap<std::string, CompiledKernel> memory_;
  std::atomic<long> compiles_{0};
};

}  // namespace kjit
