// SPDX-License-Identifier: Apache-2.0
#include "python/torch_ops/launch_table.h"

#include <stdexcept>
#include <string>

#include <pybind11/pybind11.h>

namespace py = pybind11;

namespace kjit::torch_ops {
namespace {

const kjit_native_api* table = nullptr;

}  // namespace

void set_launch_table(const kjit_native_api* given) {
  if (given == nullptr || given->size < sizeof(kjit_native_api))
    throw std::invalid_argument("kjit._torch_ops: _kjit's launch table is older than this module");
  table = given;
}

const kjit_native_api& launch_table() noexcept { return *table; }

void throw_if_failed(int status) {
  if (status == 0) return;
  py::gil_scoped_acquire gil;
  if (PyErr_Occurred() == nullptr)
    throw std::runtime_error("kjit: a launch failed with status " + std::to_string(status));
  // torch's bindings restore it when the op returns to Python: kjit.Error's subclass arrives.
  throw py::error_already_set();
}

}  // namespace kjit::torch_ops
