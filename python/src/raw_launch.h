// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <nanobind/nanobind.h>

namespace kjit::python {

/// Adds _launch_rowwise and _launch_topk (kjit/torch uses them).
void bind_raw_launch(nanobind::module_& m);

}  // namespace kjit::python
