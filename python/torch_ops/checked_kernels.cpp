// SPDX-License-Identifier: Apache-2.0
#include "python/torch_ops/checked_kernels.h"

#include <stdexcept>

namespace py = pybind11;

namespace kjit::torch_ops {
namespace {

/// Never freed: a kernel may run until the interpreter is gone.
py::dict* kernels = nullptr;

}  // namespace

void set_checked_kernels(const py::dict& given) {
  if (kernels == nullptr) kernels = new py::dict();
  for (auto item : given) {
    if (!PyCallable_Check(item.second.ptr()))
      throw py::type_error("kjit._torch_ops: the checked kernel of " +
                           py::str(item.first).cast<std::string>() + " is not callable");
    (*kernels)[item.first] = item.second;
  }
}

py::object checked_kernel(const char* op) {
  if (kernels == nullptr || !kernels->contains(op))
    throw std::logic_error(std::string("kjit._torch_ops: no checked kernel for ") + op);
  return (*kernels)[op];
}

}  // namespace kjit::torch_ops
