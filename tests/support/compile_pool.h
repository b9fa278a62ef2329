// SPDX-License-Identifier: Apache-2.0
// Compiles a list of kernel variants with NVRTC on a pool of threads, for the compile suites.
#pragma once

#include <string>
#include <vector>

#include "kjit/error.hpp"
#include "runtime/compiler/kernel_compiler.h"
#include "runtime/parallel_for.h"

namespace kjit::test {

/// Fills each variant's `kernel`, or its `error` (the first 2000 characters of the message)
/// when NVRTC rejects it. `spec_of(variant)` names the kernel; `variant.arch` the target.
template <typename Variant, typename SpecOf>
void compile_variants(std::vector<Variant>& variants, int threads, SpecOf spec_of) {
  parallel_for(variants.size(), threads, [&](std::size_t i) {
    Variant& v = variants[i];
    try {
      v.kernel = compile_kernel(spec_of(v), v.arch);
    } catch (const Error& error) {
      v.error = std::string(error.what()).substr(0, 2000);
    }
  });
}

}  // namespace kjit::test
