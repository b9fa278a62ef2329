// SPDX-License-Identifier: Apache-2.0
// Work run on a thread of its own in the calling thread's CUDA context, beside the candidates'
// compiles (the reference kernel, the output check's kernel); finish() waits for it and
// rethrows what it threw.
#pragma once

#include <exception>
#include <thread>

#include "runtime/driver/context.h"
#include "runtime/driver/handles.h"

namespace kjit {

class SideCompile {
 public:
  template <typename Work>
  explicit SideCompile(Work work) : context_(current_or_primary_context()) {
    thread_ = std::thread([this, work] {
      try {
        KJIT_CU(cuCtxSetCurrent, context_);
        work();
      } catch (...) {
        failure_ = std::current_exception();
      }
    });
  }
  ~SideCompile() {
    if (thread_.joinable()) thread_.join();
  }
  SideCompile(const SideCompile&) = delete;
  SideCompile& operator=(const SideCompile&) = delete;

  void finish() {
    thread_.join();
    if (failure_) std::rethrow_exception(failure_);
  }

 private:
  CUcontext context_;
  std::exception_ptr failure_;
  std::thread thread_;
};

}  // namespace kjit
