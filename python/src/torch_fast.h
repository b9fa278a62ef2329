// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <nanobind/nanobind.h>

namespace kjit::python {

/// Adds _torch_setup and the CUDA kernels of kjit.torch's softmax and log_softmax ops.
void bind_torch_fast(nanobind::module_& m);

}  // namespace kjit::python
