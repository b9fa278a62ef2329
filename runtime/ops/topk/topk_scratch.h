// SPDX-License-Identifier: Apache-2.0
// The buffers the tuner runs softmax_topk candidates on (autotune/tuner.h, "Scratch"): rotating
// sets of random logits and one pair of outputs; a candidate must give the reference's indices
// byte for byte (keys are distinct, so every correct kernel picks and orders them alike) and its
// probabilities to fp32 rounding (sums may be taken in another order).
#pragma once

#include <string>
#include <vector>

#include "autotune/scratch_rows.h"
#include "runtime/ops/topk/topk_family.h"

namespace kjit {

class TopkScratch {
 public:
  TopkScratch(const TopkProblem& problem, const DeviceProps& device, CUstream stream);

  int sets() const { return logits_.sets(); }
  TopkArgs call(int set) const;

  void prepare_check(const DeviceProps&) {}
  void keep_reference(CUstream stream);
  void poison(CUstream stream) const;
  void sabotage(CUstream stream) const;
  std::string check(CUstream stream) const;

 private:
  std::size_t slots() const { return static_cast<std::size_t>(rows_ * k_); }
  /// Probabilities then indices, as raw bytes.
  void download(std::vector<unsigned char>& probs, std::vector<unsigned char>& indices) const;

  std::int64_t rows_, cols_;
  int k_;
  DType idx_dtype_;
  ScratchRows logits_;
  DeviceMemory probs_, indices_;
  std::vector<unsigned char> reference_probs_, reference_indices_;
};

}  // namespace kjit
