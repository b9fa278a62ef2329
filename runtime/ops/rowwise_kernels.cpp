// SPDX-License-Identifier: Apache-2.0
#include "runtime/ops/rowwise_kernels.h"

#include <algorithm>

#include "kjit/error.hpp"

namespace kjit {
namespace {

const char* device_type(DType dtype) {
  switch (dtype) {
    case DType::kF32: return "float";
    case DType::kF16: return "kjit::f16";
    case DType::kBF16: return "kjit::bf16";
    default: throw Error(Status::kErrorInvalidArgument, "dtype has no row-wise kernel type");
  }
}

std::string join_arguments(const RowwiseProblem& problem, std::initializer_list<long long> ints) {
  std::string text = std::to_string(static_cast<int>(problem.op)) + ", kjit::Io<" +
                     device_type(problem.in_dtype) + ", " + device_type(problem.out_dtype) + ">";
  for (long long value : ints) text += ", " + std::to_string(value);
  return text;
}

}  // namespace

KernelSpec rowwise_kernel_spec(const RowwiseProblem& p, const KernelConfig& c) {
  switch (c.algorithm) {
    case Algorithm::kWarp:
    case Algorithm::kBlockRegs:
      return {"row_regs.cuh",
              "kjit::row_regs<" + join_arguments(p, {p.cols, c.pack, c.group, c.threads}) + ">"};
    case Algorithm::kBlockSmem:
    case Algorithm::kClusterSmem:
      return {"block_smem.cuh", "kjit::block_smem<" +
                                    join_arguments(p, {p.cols, c.pack, c.threads, c.cluster}) +
                                    ">"};
    case Algorithm::kBlockOnline:
      return {"block_online.cuh",
              "kjit::block_online<" + join_arguments(p, {p.cols, c.pack, c.threads, c.cluster}) +
                  ">"};
    case Algorithm::kCluster:
      return {"cluster_regs.cuh", "kjit::cluster_regs<" +
                                      join_arguments(p, {p.cols, c.pack, c.threads, c.cluster}) +
                                      ">"};
    case Algorithm::kStream:
      return {"row_stream.cuh",
              "kjit::row_stream<" +
                  join_arguments(p, {p.cols, c.pack, c.threads, c.group, c.cluster}) + ">"};
    case Algorithm::kRing:
      return {"row_ring.cuh",
              "kjit::row_ring<" + join_arguments(p, {p.cols, c.threads, c.cluster, c.group}) + ">"};
    case Algorithm::kBlockSplit:
      return {"block_split.cuh",
              "kjit::block_split<" + join_arguments(p, {p.cols, c.pack, c.threads, c.staged}) + ">"};
    case Algorithm::kAuto: break;
  }
  throw Error(Status::kErrorInvalidConfig, "a kernel spec needs a concrete algorithm");
}

LaunchShape rowwise_launch_shape(const RowwiseProblem& problem, const KernelConfig& config,
                                 int sm_count) {
  LaunchShape shape;
  shape.block = config.algorithm == Algorithm::kRing ? config.threads + kRingProducerThreads : config.threads;
  shape.rows_per_block = takes_row_groups(config.algorithm) ? config.threads / config.group : 1;
  shape.cluster = takes_cluster_size(config.algorithm) ? config.cluster : 1;
  shape.persistent = config.algorithm == Algorithm::kStream || config.algorithm == Algorithm::kBlockOnline ||
                     config.algorithm == Algorithm::kRing ||
                     (takes_cluster_grid(config.algorithm) && config.cluster_grid == ClusterGrid::kResident);
  // About two resident blocks per SM: enough to overlap one block's barriers with another's
  // loads. Loading the kernel replaces this with the occupancy the driver reports.
  shape.max_clusters = std::max(1, 2 * sm_count / shape.cluster);
  if (config.algorithm == Algorithm::kBlockSmem || config.algorithm == Algorithm::kClusterSmem)
    shape.dynamic_smem = static_cast<int>(smem_slice_cols(problem.cols, config.pack, shape.cluster) *
                                          size_of(problem.in_dtype));
  if (config.algorithm == Algorithm::kStream)
    shape.dynamic_smem = static_cast<int>(stream_smem_bytes(problem, config));
  if (config.algorithm == Algorithm::kRing)
    shape.dynamic_smem = static_cast<int>(ring_shape(problem, config).ring_bytes);
  shape.dependent_past_one_round = config.algorithm == Algorithm::kRing && ring_two_groups(config);
  if (config.algorithm == Algorithm::kBlockSplit)
    shape.dynamic_smem = static_cast<int>(split_smem_bytes(problem, config));
  return shape;
}

std::int64_t split_thread_packs(std::int64_t cols, int pack, int threads) noexcept {
  // As block_split.cuh's SplitShape: whole packs, the last thread's share padded.
  const std::int64_t per_round = std::int64_t{threads} * pack;
  return threads > 0 && pack > 0 ? (cols + per_round - 1) / per_round : 0;
}

std::int64_t split_smem_bytes(const RowwiseProblem& problem, const KernelConfig& config) noexcept {
  return std::int64_t{config.staged} * config.threads * config.pack * size_of(problem.in_dtype);
}

std::int64_t stream_slice_cols(std::int64_t cols, DType in_dtype, int cluster) noexcept {
  // As in row_stream.cuh: slices rounded up to 16 bytes, where bulk copies may start.
  const std::int64_t align = 16 / size_of(in_dtype);
  return ((cols + cluster - 1) / cluster + align - 1) / align * align;
}

std::int64_t stream_smem_bytes(const RowwiseProblem& problem, const KernelConfig& config) noexcept {
  constexpr std::int64_t kStages = 2;  // row_stream.cuh's double buffer
  const std::int64_t rows_per_tile = config.group > 0 ? config.threads / config.group : 1;
  return kStages * rows_per_tile * stream_slice_cols(problem.cols, problem.in_dtype, config.cluster) *
         size_of(problem.in_dtype);
}

RingShape ring_shape(const RowwiseProblem& problem, const KernelConfig& config) noexcept {
  // As in row_ring.cuh's RingLayout: slices rounded up to whole 16-byte packs, as the stream
  // kernel's are; chunks of at most 32 KB, each as small as its share of the slice allows in
  // whole packs for every consumer thread.
  RingShape shape;
  const std::int64_t size = size_of(problem.in_dtype);
  const std::int64_t pack = 16 / size;
  shape.slice_cols = stream_slice_cols(problem.cols, problem.in_dtype, std::max(config.cluster, 1));
  const std::int64_t slice_bytes = shape.slice_cols * size;
  // Bulk-stored outputs (4-byte types; two consumer groups, but for 16-bit log-softmax over
  // slices under 28 KB) hold their chunk longer: 224 KB.
  const bool bulk_stores =
      size == 4 || (ring_two_groups(config) &&
                    (problem.op != RowOp::kLogSoftmax || slice_bytes >= kRingLogSoftmaxBulkSliceBytes));
  shape.ring_bytes = (bulk_stores ? 7 : 6) * kRingChunkBytes;
  shape.chunks = (slice_bytes + kRingChunkBytes - 1) / kRingChunkBytes;
  if (config.group <= 0 || shape.chunks == 0) return shape;
  const std::int64_t unit = 16 * std::int64_t{config.group};
  shape.chunk_bytes = ((slice_bytes + shape.chunks - 1) / shape.chunks + unit - 1) / unit * unit;
  // A consumer group of `group` threads holds a row slice.
  shape.values_per_thread = shape.chunks * (shape.chunk_bytes / unit) * pack;
  return shape;
}

std::int64_t smem_slice_cols(std::int64_t cols, int pack, int cluster) noexcept {
  // As in block_smem.cuh: slices of the row rounded up to whole packs.
  return ((cols + cluster - 1) / cluster + pack - 1) / pack * pack;
}

std::int64_t rowwise_grid(const LaunchShape& shape, std::int64_t rows) noexcept {
  constexpr std::int64_t kMaxGrid = 0x7fffffff;
  if (shape.persistent) {
    // As few resident groups as finish the tiles in the same number of rounds: 64 rows on 30
    // resident clusters take 3 rounds either way, and 22 clusters do it with fewer rows in
    // flight at once (block_online, 64x262144 f32, clusters of 8 on the H100: 60 vs 69 us).
    const std::int64_t tiles = (rows + shape.rows_per_block - 1) / shape.rows_per_block;
    const std::int64_t resident = std::max(1, shape.max_clusters);
    const std::int64_t rounds = std::max<std::int64_t>(1, (tiles + resident - 1) / resident);
    return (tiles + rounds - 1) / rounds * shape.cluster;
  }
  const std::int64_t blocks = (rows + shape.rows_per_block - 1) / shape.rows_per_block * shape.cluster;
  return std::min(blocks, kMaxGrid);
}

}  // namespace kjit
