// SPDX-License-Identifier: Apache-2.0
// A kernel to compile: what the compiler, the cubin keys and the caches know of an op's config.
#pragma once

#include <string>

namespace kjit {

/// The kernel source file a kernel lives in and the instantiation to name.
struct KernelSpec {
  std::string header;           ///< e.g. "row_regs.cuh"
  std::string name_expression;  ///< e.g. "kjit::row_regs<0, kjit::Io<float, float>, 1024, 4, 32, 128>"
};

}  // namespace kjit
