// SPDX-License-Identifier: Apache-2.0
// One kernel spec + one arch -> a cubin with its key and resource report. Needs no GPU.
#pragma once

#include <string>
#include <vector>

#include "runtime/compiler/resource_usage.h"
#include "runtime/compiler/kernel_spec.h"

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

/// The archs kjit compiles for: those of nvrtc_supported_archs() from sm_80 on.
std::vector<int> target_archs();

/// Throws Error(kErrorInvalidArgument) naming the supported archs unless `arch` is one of
/// target_archs(): every tool checks an arch here before planning anything for it.
void require_target_arch(int arch);

/// Compiles `spec` for sm_<arch> with NVRTC (always; caching is the caller's business).
/// Throws Error(kErrorInvalidArgument) for an arch require_target_arch refuses, and
/// Error(kErrorCompile) with the log when NVRTC rejects the source.
CompiledKernel compile_kernel(const KernelSpec& spec, int arch);

}  // namespace kjit
