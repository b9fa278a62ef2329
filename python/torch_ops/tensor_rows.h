// SPDX-License-Identifier: Apache-2.0
// What the C++ kernels' fast path takes: CUDA tensors of a dtype kjit reads, stored as
// contiguous rows (the last dimension the columns). Anything else goes to the checked kernels.
#pragma once

#include <cstdint>

#include <ATen/core/Tensor.h>
#include <ATen/cuda/EmptyTensor.h>
#include <c10/cuda/CUDAStream.h>

namespace kjit::torch_ops {

/// kjit_dtype codes (kjit.h); -1 for a dtype kjit does not take there.
inline int float_code(at::ScalarType dtype) {
  switch (dtype) {
    case at::kFloat: return 0;
    case at::kHalf: return 1;
    case at::kBFloat16: return 2;
    default: return -1;
  }
}

inline int index_code(at::ScalarType dtype) {
  switch (dtype) {
    case at::kInt: return 3;
    case at::kLong: return 4;
    default: return -1;
  }
}

struct Rows {
  std::int64_t rows = 0, cols = 0;
};

/// `t` as contiguous rows on a CUDA device; false (off the fast path) for a CPU, 0-d, strided
/// or column-less tensor.
inline bool dense_rows(const at::Tensor& t, Rows* out) {
  if (!t.is_cuda() || t.dim() == 0 || !t.is_contiguous()) return false;
  out->cols = t.size(-1);
  if (out->cols == 0) return false;
  out->rows = t.numel() / out->cols;
  return true;
}

/// A contiguous CUDA tensor of `dtype` on `like`'s device: the fast path of an output.
inline bool dense_like(const at::Tensor& t, const at::Tensor& like, at::ScalarType dtype) {
  return t.scalar_type() == dtype && t.is_cuda() && t.device() == like.device() &&
         t.is_contiguous();
}

/// An uninitialized contiguous tensor on `like`'s device, allocated as torch's own CUDA kernels
/// allocate their outputs (no trip through the dispatcher); the fake kernels describe the same.
inline at::Tensor empty_on(const at::Tensor& like, at::IntArrayRef sizes, at::ScalarType dtype) {
  return at::Tensor(at::detail::empty_cuda(sizes, dtype, like.device(), std::nullopt));
}

/// torch's current stream on `t`'s device, as the raw handle kjit launches on.
inline void* current_stream(const at::Tensor& t) {
  return c10::cuda::getCurrentCUDAStream(t.get_device()).stream();
}

}  // namespace kjit::torch_ops
