// SPDX-License-Identifier: Apache-2.0
// One kernel spec + one arch -> a cubin with its key and resource report. Needs no GPU.
#pragma once

#include <string>
#include <vector>

#include "runtime/compiler/resource_usage.h"
#include "runtime/ops/rowwise/rowwise_kernels.h"

namespace kjit {

/// A compiled kernel, ready to load on any device of its arch.
struct CompiledKernel {
  KernelSpec spec;
  int arch = 0;
  std::string key_text;
  std::string key_digest;
  std::vector<char> cubin;
  std::string lowered_name;
  ResourceUsage usage;
  double compile_ms = 0.0;  ///< 0 when it came from a cache
};

/// Compiles `spec` for sm_<arch> with NVRTC (always; caching is the caller's business).
/// Throws Error(kErrorCompile) with the log when NVRTC rejects it.
CompiledKernel compile_kernel(const KernelSpec& spec, int arch);

}  // namespace kjit
