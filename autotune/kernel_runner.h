// SPDX-License-Identifier: Apache-2.0
// What the tuner needs from the runtime: a family's kernels compiled and run with a given
// config. The runtime hands one in (runtime/dispatch/dispatcher.h), so the tuner never reaches back.
#pragma once

#include "runtime/driver/cuda_api.h"

namespace kjit {

template <typename Family>
class KernelRunner {
 public:
  virtual ~KernelRunner() = default;
  /// Compiles and loads the kernel of `config` for the call's problem, without launching it.
  /// Throws Error when the config cannot run it. Safe to call from many threads.
  virtual void prepare(const typename Family::Call& call, const typename Family::Config& config) = 0;
  /// Launches the call with `config` on `stream`.
  virtual void run(const typename Family::Call& call, const typename Family::Config& config,
                   CUstream stream) = 0;
};

}  // namespace kjit
