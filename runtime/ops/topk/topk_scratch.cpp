// SPDX-License-Identifier: Apache-2.0
#include "runtime/ops/topk/topk_scratch.h"

#include "autotune/output_check.h"

namespace kjit {

TopkScratch::TopkScratch(const TopkProblem& problem, const DeviceProps& device, CUstream stream)
    : rows_(problem.rows),
      cols_(problem.cols),
      k_(problem.k),
      idx_dtype_(problem.idx_dtype),
      logits_(problem.in_dtype, DType::kF32, problem.rows, problem.cols,
              rotating_sets(static_cast<std::size_t>(problem.rows * problem.cols) *
                                size_of(problem.in_dtype),
                            device.l2_bytes),
              stream),
      probs_(allocate_device(slots() * sizeof(float))),
      indices_(allocate_device(slots() * size_of(problem.idx_dtype))) {}

TopkArgs TopkScratch::call(int set) const {
  TopkArgs args;
  args.logits = logits_.args(set).in;
  args.row_stride = cols_;
  args.rows = rows_;
  args.cols = cols_;
  args.in_dtype = logits_.args(set).in_dtype;
  args.k = k_;
  args.probs_out = reinterpret_cast<float*>(probs_.get());
  args.idx_out = reinterpret_cast<void*>(indices_.get());
  args.idx_dtype = idx_dtype_;
  return args;
}

void TopkScratch::download(std::vector<unsigned char>& probs,
                           std::vector<unsigned char>& indices) const {
  probs.resize(slots() * sizeof(float));
  indices.resize(slots() * size_of(idx_dtype_));
  KJIT_CU(cuMemcpyDtoH, probs.data(), probs_.get(), probs.size());
  KJIT_CU(cuMemcpyDtoH, indices.data(), indices_.get(), indices.size());
}

void TopkScratch::keep_reference(CUstream stream) {
  KJIT_CU(cuStreamSynchronize, stream);
  download(reference_probs_, reference_indices_);
}

void TopkScratch::poison(CUstream stream) const {
  KJIT_CU(cuMemsetD8Async, probs_.get(), 0xFF, slots() * sizeof(float), stream);
  KJIT_CU(cuMemsetD8Async, indices_.get(), 0xFF, slots() * size_of(idx_dtype_), stream);
}

void TopkScratch::sabotage(CUstream stream) const {
  KJIT_CU(cuMemsetD8Async, indices_.get(), 0x42, 4, stream);
}

std::string TopkScratch::check(CUstream stream) const {
  KJIT_CU(cuStreamSynchronize, stream);
  std::vector<unsigned char> probs, indices;
  download(probs, indices);
  if (indices != reference_indices_) {
    std::size_t i = 0;
    while (indices[i] == reference_indices_[i]) ++i;
    return "wrong: index byte " + std::to_string(i) + " differs from the reference kernel's";
  }
  return compare_outputs(probs, reference_probs_, DType::kF32);
}

}  // namespace kjit
