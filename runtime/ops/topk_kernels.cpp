// SPDX-License-Identifier: Apache-2.0
#include "runtime/ops/topk_kernels.h"

#include <algorithm>

#include "kjit/error.hpp"

namespace kjit {
namespace {

// Static shared memory of the kernels besides the key buffer (their block state and the block
// reduction's scratch), rounded up.
constexpr int kStreamStaticSmemBytes = 6144;
constexpr int kResidentStaticSmemBytes = 18432;
// The most values a resident kernel's thread holds (32 registers of the row), and its block:
// 1024 threads have 64 registers each, and at 32 values ptxas moved the row to local memory.
constexpr int kResidentValuesPerThread = 32;
constexpr int kResidentValuesPerBlock = 16384;

const char* device_type(DType dtype) {
  switch (dtype) {
    case DType::kF32: return "float";
    case DType::kF16: return "kjit::f16";
    case DType::kBF16: return "kjit::bf16";
    case DType::kI32: return "int";
    case DType::kI64: return "long long";
  }
  throw Error(Status::kErrorInvalidArgument, "dtype has no kernel type");
}

int widest_pack(const TopkProblem& problem) {
  return std::min(problem.max_pack, 16 / size_of(problem.in_dtype));
}

std::int64_t slice_cols(const TopkProblem& problem, int cluster) {
  return (problem.cols + cluster - 1) / cluster;
}

bool is_resident(const TopkConfig& config) {
  return config.algorithm == TopkAlgorithm::kResident;
}

/// The stream kernel's buffer holds a tile and 4 k; the resident kernel's, the cluster's
/// candidates (2 k) and the block's own staged for sorting (2 k).
int buffer_keys(const TopkProblem& problem, const TopkConfig& config) {
  if (is_resident(config)) return 4 * topk_bucket(problem.k);
  return config.threads * config.pack * config.unroll + 4 * topk_bucket(problem.k);
}

std::int64_t buffer_bytes(const TopkProblem& problem, const TopkConfig& config) {
  return std::int64_t{buffer_keys(problem, config)} * 8 +
         (is_resident(config) ? kResidentStaticSmemBytes : kStreamStaticSmemBytes);
}

/// The most blocks a resident row may span: a cluster of 16 on sm_90, one block before.
int widest_resident_cluster(const DeviceProps& device) { return device.arch >= 90 ? 16 : 1; }

/// The fewest blocks (a power of two) whose threads hold a row in registers, or 0 if no
/// cluster the device runs can.
int resident_min_cluster(const TopkProblem& problem, const DeviceProps& device) {
  for (int cluster = 1; cluster <= widest_resident_cluster(device); cluster *= 2)
    if (slice_cols(problem, cluster) <= kResidentValuesPerBlock)
      return cluster;
  return 0;
}

/// Blocks per row: spread few rows over the SMs, while each block keeps a slice worth
/// streaming. At most 8: block 0 of a cluster gathers every block's candidates, and a single
/// row of 128256 columns took 13.7 us over 8 blocks, 15.5 over 16 (H100, k = 50).
int choose_cluster(const TopkProblem& problem, const DeviceProps& device) {
  if (device.arch < 90) return 1;
  constexpr int kWidest = 8;
  int cluster = 1;
  while (cluster < kWidest && problem.rows * cluster * 2 <= device.sm_count &&
         slice_cols(problem, cluster * 2) >= 2048)
    cluster *= 2;
  return cluster;
}

/// 512 threads, and 1024 with a large k where the block's cut and placing steps matter most:
/// a short slice (two tiles of 512 threads or less), or k buckets from 512 where every block
/// has an SM to itself in a cluster of at most 4. Measured on the H100 (fp32): 512 threads won
/// at every row count for k = 50 (256 rows of 128256: 58.8 us against 63.6 with two blocks of
/// 256) and at 256 rows for k = 1024 (137 against 166; 108 against 91 since); 1024 threads won
/// for one row at k = 256 (29.8 us) and for 64 rows of 128256 over clusters of 2 at k = 1024
/// (43.4 against 47.2), but not for 8 rows of 151936 over clusters of 8 (20.1 us at 512
/// threads, 20.9 at 1024).
int choose_threads(const TopkProblem& problem, const DeviceProps& device, int cluster) {
  constexpr std::int64_t kTile512 = 512 * 16;  // elements: 16 per thread
  constexpr int kWidestClusterFor1024 = 4;
  const int bucket = topk_bucket(problem.k);
  const bool short_slice = slice_cols(problem, cluster) <= 2 * kTile512;
  const bool own_sm = problem.rows * cluster <= device.sm_count;
  return (short_slice && bucket >= 256) ||
                 (own_sm && bucket >= 512 && cluster <= kWidestClusterFor1024)
             ? 1024
             : 512;
}

/// Columns of a resident block's slice, as the kernel rounds them: whole packs.
std::int64_t resident_slice(const TopkProblem& problem, int cluster, int pack) {
  return (slice_cols(problem, cluster) + pack - 1) / pack * pack;
}

/// Clusters of more than 8 blocks take one GPC each: an H100 runs 7 of them at once (measured
/// with cuOccupancyMaxActiveClusters for 10 to 16 blocks of 1024 threads; 15 of 8 blocks).
constexpr int kWidestClustersAtOnce = 7;
/// The most blocks of a cluster that two can share a GPC.
constexpr int kMostBlocksTwoAGpc = 8;

/// The threads of the resident kernel's widest block.
constexpr int kResidentMostThreads = 1024;

/// From k bucket 1024, a row that this many blocks hold at kMostLargeKSlice values a block or
/// fewer stays at this many (see choose_resident_cluster).
constexpr int kLargeKClusterBlocks = 8;

/// From this many blocks, a row takes the fewest blocks whose threads hold one pack each.
constexpr int kFewestOnePackBlocks = 8;

/// The fewest blocks (any count) whose kResidentMostThreads threads hold a row at one pack each.
int one_pack_cluster(const TopkProblem& problem) {
  const std::int64_t per_block = std::int64_t{kResidentMostThreads} * widest_pack(problem);
  return static_cast<int>((problem.cols + per_block - 1) / per_block);
}

/// Blocks per row of the resident kernel.
///
/// A row that 8 to 16 blocks of 1024 threads hold at one pack a thread takes the fewest such
/// blocks, a count that need not be a power of two, where every row's cluster runs at once:
/// more values a thread cost each step a pass over them, more blocks cost the cluster's
/// exchanges. H100 (fp32, kernel alone): one row of 50257 at k = 50, 7.9 us over 13 blocks, 8.5
/// over 16 and 8.7 over 8 of two packs; at k = 256, 10.4 against 11.2 over 16; at k = 1024, 12.0
/// against 13.1 over 16 and 12.5 over 8; one row of 32000 at k = 50, 7.8 us over 8 blocks
/// against 8.5 over 16.
///
/// Otherwise: enough blocks to hold the row, then more while every row's blocks still fit the
/// SMs at once and keep 1024 values or more, up to 16 (0 if no cluster holds the row). More
/// blocks a row split the select's counting and the candidates' sort: H100, 8 rows of 32000 at
/// k = 1024, 15.1 us over 4 blocks a row, 12.7 over 8; 8 rows of 50257, 18.3 and 13.7. Clusters
/// of 16 for more rows than run at once take two rounds (8 rows of 128256 at k = 1024: 27.8 us
/// over 16 blocks a row, 17.4 over 8). From k bucket 1024 a row that 8 blocks hold at 8192
/// values a block or fewer stays at 8 (where the one-pack rule does not apply): one row of
/// 32000 at k = 1024, 12.3 us over 8 blocks against 13.8 over 16, measured when only clusters
/// of up to 8 sorted the candidates in block 0.
int choose_resident_cluster(const TopkProblem& problem, const DeviceProps& device) {
  int cluster = resident_min_cluster(problem, device);
  if (cluster == 0) return 0;
  const auto fits = [&](int blocks) {
    return blocks <= widest_resident_cluster(device) &&
           problem.rows * blocks <= device.sm_count &&
           (blocks <= kMostBlocksTwoAGpc || problem.rows <= kWidestClustersAtOnce);
  };
  const int one_pack = one_pack_cluster(problem);
  if (one_pack >= kFewestOnePackBlocks && one_pack >= cluster && fits(one_pack)) return one_pack;
  constexpr std::int64_t kMostLargeKSlice = 8192;
  const bool stays_narrow =
      topk_bucket(problem.k) >= 1024 &&
      slice_cols(problem, kLargeKClusterBlocks) <= kMostLargeKSlice;
  const auto grows = [&](int blocks) {
    return fits(blocks) && slice_cols(problem, blocks) >= 1024 &&
           (!stays_narrow || blocks <= kLargeKClusterBlocks);
  };
  while (grows(cluster * 2)) cluster *= 2;
  return cluster;
}

/// Enough threads for about 4 values each, 128 to 1024: the select's steps cost per value, so
/// more threads with fewer values won in every table (one row of 32000 at k = 1024: 512 threads
/// of one pack 22.5 us, 128 of four 39.1).
int choose_resident_threads(const TopkProblem& problem, int cluster, int pack) {
  const std::int64_t slice = resident_slice(problem, cluster, pack);
  int threads = 128;
  while (threads < 1024 && std::int64_t{threads} * 4 < slice) threads *= 2;
  return threads;
}

int resident_packs(const TopkProblem& problem, const TopkConfig& config) {
  const std::int64_t per_pass = std::int64_t{config.threads} * config.pack;
  return static_cast<int>(
      (resident_slice(problem, config.cluster, config.pack) + per_pass - 1) / per_pass);
}

TopkConfig complete_resident_config(const TopkProblem& problem, const DeviceProps& device,
                                    TopkConfig config) {
  if (config.pack == 0) config.pack = widest_pack(problem);
  if (config.cluster == 0) config.cluster = std::max(1, choose_resident_cluster(problem, device));
  if (config.threads == 0)
    config.threads = choose_resident_threads(problem, config.cluster, config.pack);
  if (config.unroll == 0) config.unroll = resident_packs(problem, config);
  return config;
}

/// The resident kernel where every row's blocks are resident at once (rows x the fewest blocks
/// that hold a row <= the SMs), the stream kernel otherwise. Measured on the H100 (fp32, scratch
/// harness and tuner tables in bench/RESULTS.md): one row of 128256 at k = 50, resident 11.4 us
/// against stream 14.5; 8 rows at k = 50, 13.9 against 16.3; 64 rows of 32000 at k = 1024, 21-23
/// against 40. Where the rows' blocks take several rounds of the SMs, each round pays its
/// cluster barriers with nothing to overlap them, and streaming wins: 64 rows of 50257 at
/// k = 256, 45 against 27 us; 64 rows of 128256 at k = 1024, 94 against 61. Rows that need
/// clusters of 16, more of them than run at once, take two rounds: 8 rows of 151936, 27 us at
/// k = 50 where streaming takes 18.5, 28 at k = 256 where it takes 22.7, 32.7 at k = 1024 where
/// it takes 21.7 (32.9 before the stream kernel guessed its threshold, merged in copies of the
/// other blocks' lists and sorted only the keys above the cluster's bound).
TopkAlgorithm choose_topk_algorithm(const TopkProblem& problem, const DeviceProps& device) {
  constexpr int kWidestCluster = 16;
  const int cluster = resident_min_cluster(problem, device);
  if (cluster == 0 || problem.rows * cluster > device.sm_count) return TopkAlgorithm::kStream;
  if (cluster == kWidestCluster && problem.rows > kWidestClustersAtOnce)
    return TopkAlgorithm::kStream;
  return TopkAlgorithm::kResident;
}

}  // namespace

bool TopkConfig::operator==(const TopkConfig& other) const noexcept {
  return pack == other.pack && threads == other.threads && unroll == other.unroll &&
         cluster == other.cluster && algorithm == other.algorithm;
}

std::string TopkConfig::to_string() const {
  return std::string("topk ") + kjit::to_string(algorithm) + " pack=" + std::to_string(pack) +
         " threads=" + std::to_string(threads) +
         (algorithm == TopkAlgorithm::kResident ? " packs=" : " unroll=") +
         std::to_string(unroll) + " cluster=" + std::to_string(cluster);
}

TopkConfig complete_topk_config(const TopkProblem& problem, const DeviceProps& device,
                                TopkConfig config) {
  if (config.algorithm == TopkAlgorithm::kAuto)
    config.algorithm = choose_topk_algorithm(problem, device);
  if (is_resident(config)) return complete_resident_config(problem, device, config);
  if (config.pack == 0) config.pack = widest_pack(problem);
  const bool pick_unroll = config.unroll == 0, pick_threads = config.threads == 0;
  if (config.cluster == 0) config.cluster = choose_cluster(problem, device);
  // About 16 values per thread in flight at 512 threads (twice over with the prefetch), the
  // same bytes per block at 1024; half that for k buckets from 512 where blocks share an SM,
  // whose buffers then leave room for another (H100, k = 1024: 256 rows of 128256, 97 us at
  // unroll 2, 108 at 4; 64 rows over clusters of 2, one block an SM, 57.5 at 2, 54.2 at 4).
  if (pick_threads) config.threads = choose_threads(problem, device, config.cluster);
  if (pick_unroll) {
    const bool shares_sms = problem.rows * config.cluster > device.sm_count;
    const bool halve = topk_bucket(problem.k) >= 512 && shares_sms;
    const int per_thread = 16 * 512 / config.threads / (halve ? 2 : 1);
    config.unroll = std::min(8, std::max(1, per_thread / config.pack));
  }
  // A large k's buffer leaves less room for the tile: shrink what was left to choose.
  while (buffer_bytes(problem, config) > device.max_smem_per_block) {
    if (pick_unroll && config.unroll > 1) config.unroll /= 2;
    else if (pick_threads && config.threads > 128) config.threads /= 2;
    else break;
  }
  return config;
}

TopkConfig choose_topk_config(const TopkProblem& problem, const DeviceProps& device) {
  return complete_topk_config(problem, device, TopkConfig{});
}

std::string why_not_topk(const TopkProblem& problem, const DeviceProps& device,
                         const TopkConfig& config) {
  if (config.algorithm != TopkAlgorithm::kStream && config.algorithm != TopkAlgorithm::kResident)
    return "algorithm must be stream or resident";
  const int pack = config.pack;
  if (pack < 1 || (pack & (pack - 1)) != 0 || pack * size_of(problem.in_dtype) > 16)
    return "pack must be a power of two of at most 16 bytes";
  if (pack > problem.max_pack) return "the logits' alignment allows packs of at most " +
                                      std::to_string(problem.max_pack);
  if (config.threads < 64 || config.threads > 1024 || config.threads % 32 != 0)
    return "threads must be a multiple of 32 in [64, 1024]";
  if (config.cluster < 1 || config.cluster > 16) return "cluster must be in [1, 16]";
  if (config.cluster > 1 && device.arch < 90) return "clusters need sm_90 or newer";
  if (is_resident(config)) {
    if (config.unroll < 1 || config.unroll * pack > kResidentValuesPerThread)
      return "packs times pack must be in [1, " + std::to_string(kResidentValuesPerThread) + "]";
    if (config.threads * config.unroll * pack > kResidentValuesPerBlock)
      return "threads x packs x pack must be at most " + std::to_string(kResidentValuesPerBlock) +
             " (the register file)";
    if (std::int64_t{config.threads} * config.unroll * pack <
        resident_slice(problem, config.cluster, pack))
      return "threads x packs x pack must hold the row's share of " +
             std::to_string(resident_slice(problem, config.cluster, pack)) + " columns";
  } else if (config.unroll < 1 || config.unroll > 8) {
    return "unroll must be in [1, 8]";
  }
  const std::int64_t smem = buffer_bytes(problem, config);
  if (smem > device.max_smem_per_block)
    return "needs " + std::to_string(smem) + " bytes of shared memory; the device allows " +
           std::to_string(device.max_smem_per_block);
  return {};
}

namespace {

void add_if_valid(std::vector<TopkConfig>& candidates, const TopkProblem& problem,
                  const DeviceProps& device, const TopkConfig& config) {
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
  std::vector<TopkConfig> candidates{choose_topk_config(problem, device)};
  const int pack = widest_pack(problem);
  for (int cluster : {1, 2, 4, 8, 16})
    for (int threads : {256, 512, 1024})
      for (int unroll : {16 / pack / 2, 16 / pack})
        add_if_valid(candidates, problem, device,
                     {pack, threads, std::max(1, unroll), cluster, TopkAlgorithm::kStream});
  add_resident_candidates(candidates, problem, device, pack);
  return candidates;
}

KernelSpec topk_kernel_spec(const TopkProblem& p, const TopkConfig& c) {
  const bool resident = is_resident(c);
  return {resident ? "topk_resident.cuh" : "topk_softmax.cuh",
          std::string(resident ? "kjit::topk_resident<" : "kjit::topk_softmax<") +
              device_type(p.in_dtype) + ", " +
              device_type(p.idx_dtype) + ", " + std::to_string(p.cols) + ", " +
              std::to_string(topk_bucket(p.k)) + ", " + std::to_string(c.pack) + ", " +
              std::to_string(c.threads) + ", " + std::to_string(c.unroll) + ", " +
              std::to_string(c.cluster) + ">"};
}

LaunchShape topk_launch_shape(const TopkProblem& problem, const TopkConfig& config) {
  LaunchShape shape;
  shape.block = config.threads;
  shape.cluster = config.cluster;
  shape.dynamic_smem = buffer_keys(problem, config) * 8;
  return shape;
}

std::int64_t topk_rows_per_launch(const LaunchShape& shape) noexcept {
  return 0x7fffffff / shape.cluster;
}

unsigned topk_grid(const LaunchShape& shape, std::int64_t rows) noexcept {
  return static_cast<unsigned>(rows * shape.cluster);
}

}  // namespace kjit
