// SPDX-License-Identifier: Apache-2.0
// The buffers the tuner runs attention candidates on (autotune/tuner.h, "Scratch"): rotating sets
// of random Q, K, V (and bias and mask where the class has them) as contiguous
// [batch, heads, tokens, dim] tensors, and an output a set. Every config computes each query
// strip by the same sequence of operations, so a candidate must match the reference config to
// the output's rounding.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "autotune/scratch_rows.h"
#include "runtime/ops/attention/attention_family.h"

namespace kjit {

class AttentionScratch {
 public:
  AttentionScratch(const AttentionProblem& problem, const DeviceProps& device, CUstream stream);

  int sets() const { return q_.sets(); }
  AttentionArgs call(int set) const;

  void prepare_check(const DeviceProps&) {}
  void keep_reference(CUstream stream);
  void poison(CUstream stream) const;
  void sabotage(CUstream stream) const;
  std::string check(CUstream stream) const;

 private:
  AttentionProblem problem_;
  ScratchRows q_, k_, v_, o_;  ///< o_'s outputs are O; its inputs are not read
  std::optional<ScratchRows> bias_, mask_;
  std::vector<unsigned char> reference_;
};

}  // namespace kjit
