// SPDX-License-Identifier: Apache-2.0
// softmax_topk and softmax_topk_out for CUDA tensors: contiguous logits of a float dtype, a k
// and temperature in range, and outputs as the fake kernels allocate them launch straight from
// here; anything else runs the checked Python kernel, which names the argument at fault.
#include <cmath>
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

constexpr std::int64_t kMaxK = 4096;  // softmax_topk's limit (kjit.h)

struct TopkCall {
  Rows r;
  std::vector<std::int64_t> out_shape;  // logits' shape with k last
};

/// Whether the inputs take the fast path; fills `call` when they do.
bool fast_inputs(const at::Tensor& logits, std::int64_t k, double temperature,
                 const std::optional<at::Tensor>& k_per_row, TopkCall* call) {
  if (float_code(logits.scalar_type()) < 0 || !dense_rows(logits, &call->r)) return false;
  if (k < 1 || k > call->r.cols || k > kMaxK || !(temperature > 0.0) || std::isinf(temperature))
    return false;
  if (k_per_row && (!dense_like(*k_per_row, logits, at::kInt) ||
                    k_per_row->numel() != call->r.rows))
    return false;
  call->out_shape.assign(logits.sizes().begin(), logits.sizes().end());
  call->out_shape.back() = k;
  return true;
}

void launch(const at::Tensor& logits, std::int64_t k, double temperature,
            const std::optional<at::Tensor>& k_per_row, bool logprobs, bool renorm,
            const at::Tensor& probs, const at::Tensor& indices, const Rows& r) {
  const unsigned flags = (logprobs ? 1u : 0u) | (renorm ? 2u : 0u);
  const int status = launch_table().softmax_topk(
      logits.const_data_ptr(), r.cols, r.rows, r.cols, float_code(logits.scalar_type()),
      static_cast<int>(k), k_per_row ? k_per_row->const_data_ptr<std::int32_t>() : nullptr,
      static_cast<float>(temperature), flags, probs.data_ptr<float>(), indices.data_ptr(),
      index_code(indices.scalar_type()), current_stream(logits), logits.get_device());
  throw_if_failed(status);
}

std::tuple<at::Tensor, at::Tensor> softmax_topk(const at::Tensor& logits, std::int64_t k,
                                                double temperature,
                                                const std::optional<at::Tensor>& k_per_row,
                                                bool logprobs, bool renorm,
                                                std::optional<at::ScalarType> index_dtype) {
  TopkCall call;
  const at::ScalarType idx_dtype = index_dtype.value_or(at::kLong);
  if (index_code(idx_dtype) < 0 || !fast_inputs(logits, k, temperature, k_per_row, &call))
    return call_checked<std::tuple<at::Tensor, at::Tensor>>(
        "softmax_topk", logits, k, temperature, k_per_row, logprobs, renorm, index_dtype);
  const c10::cuda::CUDAGuard guard(logits.device());
  at::Tensor probs = empty_on(logits, call.out_shape, at::kFloat);
  at::Tensor indices = empty_on(logits, call.out_shape, idx_dtype);
  launch(logits, k, temperature, k_per_row, logprobs, renorm, probs, indices, call.r);
  return {probs, indices};
}

void softmax_topk_out(const at::Tensor& logits, std::int64_t k, double temperature,
                      const std::optional<at::Tensor>& k_per_row, bool logprobs, bool renorm,
                      const at::Tensor& probs, const at::Tensor& indices) {
  TopkCall call;
  const bool fast = fast_inputs(logits, k, temperature, k_per_row, &call) &&
                    dense_like(probs, logits, at::kFloat) &&
                    probs.sizes() == at::IntArrayRef(call.out_shape) &&
                    index_code(indices.scalar_type()) >= 0 &&
                    dense_like(indices, logits, indices.scalar_type()) &&
                    indices.sizes() == at::IntArrayRef(call.out_shape);
  if (!fast)
    return call_checked<void>("softmax_topk_out", logits, k, temperature, k_per_row, logprobs,
                              renorm, probs, indices);
  const c10::cuda::CUDAGuard guard(logits.device());
  launch(logits, k, temperature, k_per_row, logprobs, renorm, probs, indices, call.r);
}

}  // namespace

void register_topk_kernels(torch::Library& library) {
  library.impl("softmax_topk", &softmax_topk);
  library.impl("softmax_topk_out", &softmax_topk_out);
}

}  // namespace kjit::torch_ops
