// SPDX-License-Identifier: Apache-2.0
// A kernel to compile: what the compiler, the cubin keys and the caches know of an op's config.
#pragma once

#include <string>

namespace kjit {

/// The kernel source file a kernel lives in and the instantiation to name.
struct KernelSpec {
  std::string header;           ///< e.g. "warp.cuh"
  std::string name_expression;  ///< e.g. "kjit::warp<0, kjit::Io<float, float>, 1024, 4, 128, 32>"
};

}  // namespace kjit
