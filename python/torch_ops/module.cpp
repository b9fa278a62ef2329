// SPDX-License-Identifier: Apache-2.0
// kjit._torch_ops: C++ CUDA kernels for torch.ops.kjit.*, so an eager call goes from torch's
// dispatcher straight to the launch, with no Python kernel in between. Built only where torch
// with CUDA was there at build time; kjit/torch/_library.py registers them through _register
// and keeps its Python kernels for the ops (and the fake kernels) otherwise. libkjit is reached
// through _kjit's launch table, so there is one runtime in the process and no kjit link here.
#include <memory>
#include <string>
#include <vector>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <torch/library.h>

#include "python/src/native_api.h"
#include "python/torch_ops/checked_kernels.h"
#include "python/torch_ops/kernels.h"
#include "python/torch_ops/launch_table.h"

namespace py = pybind11;

namespace kjit::torch_ops {
namespace {

const std::vector<std::string> kOps = {"softmax",      "softmax_out",      "log_softmax",
                                       "log_softmax_out", "reduce_scale", "reduce_scale_out",
                                       "softmax_topk", "softmax_topk_out"};

/// The registrations, kept (and so in force) for the process's life.
torch::Library* registered = nullptr;

/// Registers the C++ kernels of every op for the CUDA key, on the schemas kjit.torch defined,
/// calling `table` (_kjit's capsule) and, off their fast paths, `checked` ({op: Python kernel}).
/// Returns the ops' names. A failure (a schema that does not match) registers nothing.
std::vector<std::string> register_kernels(const py::capsule& table, const py::dict& checked) {
  if (registered != nullptr) return kOps;
  if (!PyCapsule_IsValid(table.ptr(), KJIT_NATIVE_API_CAPSULE))
    throw py::type_error("kjit._torch_ops: table is not _kjit's launch table capsule");
  for (const std::string& op : kOps)
    if (!checked.contains(op)) throw py::value_error("kjit._torch_ops: no checked kernel for " + op);
  set_launch_table(static_cast<const kjit_native_api*>(
      PyCapsule_GetPointer(table.ptr(), KJIT_NATIVE_API_CAPSULE)));
  set_checked_kernels(checked);
  auto library = std::make_unique<torch::Library>(torch::Library::IMPL, "kjit",
                                                  c10::DispatchKey::CUDA, __FILE__, __LINE__);
  register_rowwise_kernels(*library);
  register_topk_kernels(*library);
  registered = library.release();
  return kOps;
}

}  // namespace
}  // namespace kjit::torch_ops

PYBIND11_MODULE(_torch_ops, m) {
  m.doc() = "C++ CUDA kernels of torch.ops.kjit.* (registered by kjit.torch)";
  m.def("_register", &kjit::torch_ops::register_kernels, py::arg("table"), py::arg("checked"));
}
