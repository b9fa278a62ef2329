// SPDX-License-Identifier: Apache-2.0
// The heuristic's pick for a fused softmax + top-K problem, and the completion of partial
// configs: which kernel, how many blocks a row, threads, and packs in flight or held.
#include <algorithm>
#include <cstdint>

#include "runtime/ops/topk/topk_fit.h"
#include "runtime/ops/topk/topk_heuristics.h"

namespace kjit {
namespace {

using namespace topk;

/// The stream kernel's blocks per row: spread few rows over the SMs, while each block keeps a
/// slice worth streaming. At most 8: block 0 of a cluster gathers every block's candidates.
int choose_cluster(const TopkProblem& problem, const DeviceProps& device) {
  if (device.arch < 90) return 1;
  constexpr int kWidest = 8;
  int cluster = 1;
  while (cluster < kWidest && problem.rows * cluster * 2 <= device.sm_count &&
         slice_cols(problem, cluster * 2) >= 2048)
    cluster *= 2;
  return cluster;
}

/// The stream kernel's threads: 512, and 1024 with a large k where the block's cut and placing
/// steps matter most: a short slice (two tiles of 512 threads or less), or k buckets from 512
/// where every block has an SM to itself in a cluster of at most 4.
int choose_threads(const TopkProblem& problem, const DeviceProps& device, int cluster) {
  constexpr std::int64_t kTile512 = 512 * 16;  // elements: 16 per thread
  constexpr int kWidestClusterFor1024 = 4;
  const int bucket = topk_bucket(problem.k);
  const bool short_slice = slice_cols(problem, cluster) <= 2 * kTile512;
  const bool own_sm = problem.rows * cluster <= device.sm_count;
  return (short_slice && bucket >= 256) || (own_sm && bucket >= 512 && cluster <= kWidestClusterFor1024) ? 1024
                                                                                                       : 512;
}

/// From this many blocks, a row takes the fewest blocks whose threads hold one pack each.
constexpr int kFewestOnePackBlocks = 8;
/// From k bucket 1024, a row that this many blocks hold at kMostLargeKSlice values a block or
/// fewer stays at this many.
constexpr int kLargeKClusterBlocks = 8;
constexpr std::int64_t kMostLargeKSlice = 8192;

/// Blocks per row of the resident kernel.
///
/// A row that 8 to 16 blocks of 1024 threads hold at one pack a thread takes the fewest such
/// blocks, a count that need not be a power of two, where every row's cluster runs at once:
/// more values a thread cost each step a pass over them, more blocks cost the cluster's
/// exchanges.
///
/// Otherwise: enough blocks to hold the row, then more while every row's blocks still fit the
/// SMs at once and keep 1024 values or more, up to 16 (0 if no cluster holds the row): more
/// blocks a row split the select's counting and the candidates' sort. Clusters wider than two a
/// GPC take a GPC each, so only as many rows as such clusters run at once take them. From k
/// bucket 1024 a row that 8 blocks hold at 8192 values a block or fewer stays at 8.
int choose_resident_cluster(const TopkProblem& problem, const DeviceProps& device) {
  int cluster = resident_min_cluster(problem, device);
  if (cluster == 0) return 0;
  const auto fits = [&](int blocks) {
    return blocks <= widest_resident_cluster(device) && problem.rows * blocks <= device.sm_count &&
           (blocks <= kMostBlocksTwoAGpc || problem.rows <= device.clusters_of_16_at_once);
  };
  const int one_pack = one_pack_cluster(problem);
  if (one_pack >= kFewestOnePackBlocks && one_pack >= cluster && fits(one_pack)) return one_pack;
  const bool stays_narrow =
      topk_bucket(problem.k) >= 1024 && slice_cols(problem, kLargeKClusterBlocks) <= kMostLargeKSlice;
  const auto grows = [&](int blocks) {
    return fits(blocks) && slice_cols(problem, blocks) >= 1024 && (!stays_narrow || blocks <= kLargeKClusterBlocks);
  };
  while (grows(cluster * 2)) cluster *= 2;
  return cluster;
}

/// Enough threads for about 4 values each, 128 to 1024: the select's steps cost per value, so
/// more threads with fewer values win.
int choose_resident_threads(const TopkProblem& problem, int cluster, int pack) {
  const std::int64_t slice = resident_slice(problem, cluster, pack);
  int threads = 128;
  while (threads < 1024 && std::int64_t{threads} * 4 < slice) threads *= 2;
  return threads;
}

TopkConfig complete_resident_config(const TopkProblem& problem, const DeviceProps& device, TopkConfig config) {
  if (config.pack == 0) config.pack = widest_pack(problem);
  if (config.cluster == 0) config.cluster = std::max(1, choose_resident_cluster(problem, device));
  if (config.threads == 0) config.threads = choose_resident_threads(problem, config.cluster, config.pack);
  if (config.unroll == 0) config.unroll = resident_packs(problem, config);
  return config;
}

/// The resident kernel where every row's blocks are resident at once (rows x the fewest blocks
/// that hold a row <= the SMs), the stream kernel otherwise: where the rows' blocks take
/// several rounds of the SMs, each round pays its cluster barriers with nothing to overlap
/// them. Rows that need clusters of 16, more of them than run at once, take two rounds too.
TopkAlgorithm choose_topk_algorithm(const TopkProblem& problem, const DeviceProps& device) {
  const int cluster = resident_min_cluster(problem, device);
  if (cluster == 0 || problem.rows * cluster > device.sm_count) return TopkAlgorithm::kStream;
  if (cluster == kMaxClusterBlocks && problem.rows > device.clusters_of_16_at_once) return TopkAlgorithm::kStream;
  return TopkAlgorithm::kResident;
}

}  // namespace

TopkConfig complete_topk_config(const TopkProblem& problem, const DeviceProps& device, TopkConfig config) {
  if (config.algorithm == TopkAlgorithm::kAuto) config.algorithm = choose_topk_algorithm(problem, device);
  if (is_resident(config)) return complete_resident_config(problem, device, config);
  if (config.pack == 0) config.pack = stream_pack(problem);
  const bool pick_unroll = config.unroll == 0, pick_threads = config.threads == 0;
  if (config.cluster == 0) config.cluster = choose_cluster(problem, device);
  if (pick_threads) config.threads = choose_threads(problem, device, config.cluster);
  // About 16 values per thread in flight at 512 threads (twice over with the prefetch), the
  // same bytes per block at 1024; half that for k buckets from 512 where blocks share an SM,
  // whose buffers then leave room for another.
  if (pick_unroll) {
    const bool shares_sms = problem.rows * config.cluster > device.sm_count;
    const bool halve = topk_bucket(problem.k) >= 512 && shares_sms;
    const int per_thread = kStreamValuesInFlight * 512 / config.threads / (halve ? 2 : 1);
    config.unroll = std::min(8, std::max(1, per_thread / config.pack));
  }
  // A large k's buffer leaves less room for the tile: shrink what was left to choose.
  while (buffer_bytes(problem, config) > device.max_smem_per_block) {
    if (pick_unroll && config.unroll > 1)
      config.unroll /= 2;
    else if (pick_threads && config.threads > 128)
      config.threads /= 2;
    else
      break;
  }
  return config;
}

TopkConfig choose_topk_config(const TopkProblem& problem, const DeviceProps& device) {
  return complete_topk_config(problem, device, TopkConfig{});
}

}  // namespace kjit
