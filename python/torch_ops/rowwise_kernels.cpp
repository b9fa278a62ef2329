// SPDX-License-Identifier: Apache-2.0
// softmax, log_softmax and reduce_scale (and their out variants) for CUDA tensors: contiguous
// rows of a float dtype launch straight from here on torch's current stream, in the tensor's
// device, with outputs allocated as the fake kernels allocate them (x's shape, contiguous);
// anything else runs the checked Python kernel, which names the argument at fault.
#include <cstdint>
#include <optional>
#include <tuple>
#include <vector>

#include <c10/cuda/CUDAGuard.h>

#include "python/torch_ops/checked_kernels.h"
#include "python/torch_ops/kernels.h"
#include "python/torch_ops/launch_table.h"
#include "python/torch_ops/tensor_rows.h"

namespace kjit::torch_ops {
namespace {

enum RowOp : int { kSoftmax = 0, kLogSoftmax = 1, kReduceScale = 2 };

void launch(RowOp op, const at::Tensor& x, const at::Tensor& out, float* scale, const Rows& r) {
  const int status = launch_table().rowwise(
      op, x.const_data_ptr(), r.cols, out.data_ptr(), r.cols, r.rows, r.cols,
      float_code(x.scalar_type()), float_code(out.scalar_type()), scale, current_stream(x),
      x.get_device());
  throw_if_failed(status);
}

/// The fast path's output dtype for x and out_dtype, or nullopt to take the checked way.
std::optional<at::ScalarType> fast_out_dtype(const at::Tensor& x,
                                             std::optional<at::ScalarType> out_dtype, Rows* r) {
  const at::ScalarType dtype = out_dtype.value_or(x.scalar_type());
  if (float_code(x.scalar_type()) < 0 || float_code(dtype) < 0 || !dense_rows(x, r))
    return std::nullopt;
  return dtype;
}

template <RowOp op>
at::Tensor rowwise(const at::Tensor& x, std::optional<at::ScalarType> out_dtype) {
  Rows r;
  const std::optional<at::ScalarType> dtype = fast_out_dtype(x, out_dtype, &r);
  if (!dtype)
    return call_checked<at::Tensor>(op == kSoftmax ? "softmax" : "log_softmax", x, out_dtype);
  const c10::cuda::CUDAGuard guard(x.device());
  at::Tensor out = empty_on(x, x.sizes(), *dtype);
  launch(op, x, out, nullptr, r);
  return out;
}

template <RowOp op>
void rowwise_out(const at::Tensor& x, const at::Tensor& out) {
  Rows r;
  if (float_code(x.scalar_type()) < 0 || float_code(out.scalar_type()) < 0 ||
      !dense_rows(x, &r) || !dense_like(out, x, out.scalar_type()) || out.sizes() != x.sizes())
    return call_checked<void>(op == kSoftmax ? "softmax_out" : "log_softmax_out", x, out);
  const c10::cuda::CUDAGuard guard(x.device());
  launch(op, x, out, nullptr, r);
}

/// x's shape without its last dimension, or (1,) for a 1-d x: the shape of reduce_scale's scale.
std::vector<std::int64_t> scale_shape(const at::Tensor& x) {
  if (x.dim() <= 1) return {1};
  return std::vector<std::int64_t>(x.sizes().begin(), x.sizes().end() - 1);
}

std::tuple<at::Tensor, at::Tensor> reduce_scale(const at::Tensor& x,
                                                std::optional<at::ScalarType> out_dtype) {
  Rows r;
  const std::optional<at::ScalarType> dtype = fast_out_dtype(x, out_dtype, &r);
  if (!dtype)
    return call_checked<std::tuple<at::Tensor, at::Tensor>>("reduce_scale", x, out_dtype);
  const c10::cuda::CUDAGuard guard(x.device());
  at::Tensor out = empty_on(x, x.sizes(), *dtype);
  at::Tensor scale = empty_on(x, scale_shape(x), at::kFloat);
  launch(kReduceScale, x, out, scale.data_ptr<float>(), r);
  return {out, scale};
}

void reduce_scale_out(const at::Tensor& x, const at::Tensor& out,
                      const std::optional<at::Tensor>& scale) {
  Rows r;
  const bool fast = float_code(x.scalar_type()) >= 0 && float_code(out.scalar_type()) >= 0 &&
                    dense_rows(x, &r) && dense_like(out, x, out.scalar_type()) &&
                    out.sizes() == x.sizes() &&
                    (!scale || (dense_like(*scale, x, at::kFloat) &&
                                scale->sizes() == at::IntArrayRef(scale_shape(x))));
  if (!fast) return call_checked<void>("reduce_scale_out", x, out, scale);
  const c10::cuda::CUDAGuard guard(x.device());
  launch(kReduceScale, x, out, scale ? scale->data_ptr<float>() : nullptr, r);
}

}  // namespace

void register_rowwise_kernels(torch::Library& library) {
  library.impl("softmax", &rowwise<kSoftmax>);
  library.impl("softmax_out", &rowwise_out<kSoftmax>);
  library.impl("log_softmax", &rowwise<kLogSoftmax>);
  library.impl("log_softmax_out", &rowwise_out<kLogSoftmax>);
  library.impl("reduce_scale", &reduce_scale);
  library.impl("reduce_scale_out", &reduce_scale_out);
}

}  // namespace kjit::torch_ops
