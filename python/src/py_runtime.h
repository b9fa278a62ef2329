// SPDX-License-Identifier: Apache-2.0
// kjit.Runtime: a kjit::Runtime with the options it was made with, and the process's default.
#pragma once

#include <memory>

#include <nanobind/nanobind.h>

#include "kjit/options.hpp"
#include "kjit/runtime.hpp"

namespace kjit::python {

struct PyRuntime {
  RuntimeOptions options;
  std::unique_ptr<Runtime> runtime;

  explicit PyRuntime(const RuntimeOptions& given)
      : options(given), runtime(std::make_unique<Runtime>(given)) {}
};

/// The process's default runtime (options from the environment), made on first use and kept
/// until the process ends.
PyRuntime& default_runtime();

/// Options from the environment with the keyword arguments given over them; an unknown name or
/// a value of the wrong kind is an error naming it.
RuntimeOptions options_from_kwargs(const nanobind::kwargs& kwargs);

/// The options as a dict, under the keyword names Runtime(**options) takes.
nanobind::dict options_dict(const RuntimeOptions& options);

/// Adds the Runtime class (its constructor, options, tools) and default_runtime().
void bind_runtime(nanobind::module_& m);
/// Adds the array ops to the Runtime class (array_ops.cpp).
void bind_array_ops(nanobind::class_<PyRuntime>& runtime);
/// Adds _attention to the Runtime class (attention_op.cpp).
void bind_attention_op(nanobind::class_<PyRuntime>& runtime);

}  // namespace kjit::python
