// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>

#include <nanobind/nanobind.h>

namespace kjit::python {

/// A row-wise op on the default runtime from plain integers: op (0 softmax, 1 log_softmax,
/// 2 reduce_scale), pointers, strides, kjit_dtype codes, scale (0: none), stream, device.
/// Throws Error; forwards no log lines (the callers do, holding the GIL).
void run_rowwise(int op, std::uintptr_t in, std::int64_t in_stride, std::uintptr_t out,
                 std::int64_t out_stride, std::int64_t rows, std::int64_t cols, int in_dtype,
                 int out_dtype, std::uintptr_t scale, std::uintptr_t stream, int device);

/// softmax_topk on the default runtime from plain integers (flags: 1 logprobs, 2 renorm);
/// throws Error, forwards no log lines.
void run_topk(std::uintptr_t logits, std::int64_t row_stride, std::int64_t rows,
              std::int64_t cols, int in_dtype, int k, std::uintptr_t k_per_row,
              double temperature, unsigned flags, std::uintptr_t probs, std::uintptr_t indices,
              int index_dtype, std::uintptr_t stream, int device);

/// run_rowwise from Python (the GIL held): kjit's log lines reach Python when it returns.
void launch_rowwise_raw(int op, std::uintptr_t in, std::int64_t in_stride, std::uintptr_t out,
                        std::int64_t out_stride, std::int64_t rows, std::int64_t cols,
                        int in_dtype, int out_dtype, std::uintptr_t scale, std::uintptr_t stream,
                        int device);

/// Adds _launch_rowwise, _launch_topk and _launch_attention (kjit/torch uses them).
void bind_raw_launch(nanobind::module_& m);

}  // namespace kjit::python
