// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>

#include <nanobind/nanobind.h>

namespace kjit::python {

/// A row-wise op on the default runtime from plain integers: op (0 softmax, 1 log_softmax,
/// 2 reduce_scale), pointers, strides, kjit_dtype codes, scale (0: none), stream, device.
void launch_rowwise_raw(int op, std::uintptr_t in, std::int64_t in_stride, std::uintptr_t out,
                        std::int64_t out_stride, std::int64_t rows, std::int64_t cols,
                        int in_dtype, int out_dtype, std::uintptr_t scale, std::uintptr_t stream,
                        int device);

/// Adds _launch_rowwise and _launch_topk (kjit/torch uses them).
void bind_raw_launch(nanobind::module_& m);

}  // namespace kjit::python
