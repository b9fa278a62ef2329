// SPDX-License-Identifier: Apache-2.0
// The tuner's candidates for an attention problem: warps a problem, problems a block and one or
// two stages, blocks of 8 warps down to 1.
#include <algorithm>
#include <vector>

#include "runtime/ops/attention/attention_heuristics.h"

namespace kjit {

std::vector<AttentionConfig> attention_candidates(const AttentionProblem& problem, const DeviceProps& device) {
  std::vector<AttentionConfig> candidates{choose_attention_config(problem, device)};
  for (int block_warps : {8, 4, 2, 1})
    for (int warps : {1, 2, 4, 8})
      for (int stages : {2, 1}) {
        if (warps > block_warps || static_cast<int>(candidates.size()) >= kMostAttentionCandidates) continue;
        const AttentionConfig config{warps, block_warps / warps, stages};
        if (why_not_attention(problem, device, config).empty() &&
            std::find(candidates.begin(), candidates.end(), config) == candidates.end())
          candidates.push_back(config);
      }
  return candidates;
}

}  // namespace kjit
