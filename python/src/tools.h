// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <nanobind/nanobind.h>

namespace kjit::python {

/// Adds _explain, _compile, _precompile, _info and version().
void bind_tools(nanobind::module_& m);

}  // namespace kjit::python
