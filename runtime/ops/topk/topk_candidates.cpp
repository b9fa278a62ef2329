// SPDX-License-Identifier: Apache-2.0
// The tuner's candidates for a top-K problem: the stream kernel over clusters, threads and two
// depths of loads in flight, and the resident kernel over the clusters that hold the row.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "runtime/ops/topk/topk_fit.h"
#include "runtime/ops/topk/topk_heuristics.h"

namespace kjit {
namespace {

using namespace topk;

void add_if_valid(std::vector<TopkConfig>& candidates, const TopkProblem& problem, const DeviceProps& device,
                  const TopkConfig& config) {
  if (why_not_topk(problem, device, config).empty() &&
      std::find(candidates.begin(), candidates.end(), config) == candidates.end())
    candidates.push_back(config);
}

/// Resident configs, over clusters of powers of two and of the fewest blocks that hold the row
/// at one pack a thread, hold the slice with as few packs as the threads allow; thread counts
/// that leave whole packs of every thread empty are left out, but for 128 threads, so that a
/// short slice has a candidate.
void add_resident_candidates(std::vector<TopkConfig>& candidates, const TopkProblem& problem,
                             const DeviceProps& device, int pack) {
  for (int cluster : {1, 2, 4, 8, 16, one_pack_cluster(problem)})
    for (int threads : {128, 256, 512, 1024}) {
      TopkConfig config{pack, threads, 0, cluster, TopkAlgorithm::kResident};
      config.unroll = resident_packs(problem, config);
      const std::int64_t slice = resident_slice(problem, cluster, pack);
      const bool idle_packs = std::int64_t{threads / 2} * config.unroll * pack >= slice;
      if (!idle_packs || threads == 128) add_if_valid(candidates, problem, device, config);
    }
}

}  // namespace

std::vector<TopkConfig> topk_candidates(const TopkProblem& problem, const DeviceProps& device) {
  const TopkConfig pick = choose_topk_config(problem, device);
  std::vector<TopkConfig> candidates{pick};
  const int pack = stream_pack(problem);
  for (int cluster : {1, 2, 4, 8, 16})
    for (int threads : {256, 512, 1024})
      for (int unroll : {kStreamValuesInFlight / pack / 2, kStreamValuesInFlight / pack})
        add_if_valid(candidates, problem, device,
                     {pack, threads, std::max(1, unroll), cluster, TopkAlgorithm::kStream});
  // Rows off the alignment: also the stream kernel's other pack (shifted, or the logits' own),
  // with the blocks and threads of the pick's stream config.
  if (const int other = other_stream_pack(problem); other != 0 && !is_resident(pick))
    for (int unroll : {kStreamValuesInFlight / other / 2, kStreamValuesInFlight / other})
      add_if_valid(candidates, problem, device,
                   {other, pick.threads, std::min(8, std::max(1, unroll)), pick.cluster, TopkAlgorithm::kStream});
  add_resident_candidates(candidates, problem, device, widest_pack(problem));
  return candidates;
}

}  // namespace kjit
