// SPDX-License-Identifier: Apache-2.0
// The Python kernels of kjit/torch/_library.py, which check every argument: a C++ kernel hands
// them any call off its fast path (another dtype, strided rows, a mismatched output), so every
// argument error is raised, and worded, in one place.
#pragma once

#include <string>
#include <type_traits>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <torch/csrc/utils/pybind.h>

namespace kjit::torch_ops {

/// Keeps {op name: Python kernel} for the process's life (call with the GIL).
void set_checked_kernels(const pybind11::dict& kernels);

/// The Python kernel of `op` (call with the GIL); throws if it was not handed over.
pybind11::object checked_kernel(const char* op);

/// Runs `op`'s Python kernel on the same arguments, taking the GIL; its exception propagates.
template <typename Result, typename... Args>
Result call_checked(const char* op, const Args&... args) {
  pybind11::gil_scoped_acquire gil;
  pybind11::object result = checked_kernel(op)(args...);
  if constexpr (!std::is_void_v<Result>) return result.cast<Result>();
}

}  // namespace kjit::torch_ops
