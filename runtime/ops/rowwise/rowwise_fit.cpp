// SPDX-License-Identifier: Apache-2.0
#include "runtime/ops/rowwise/rowwise_fit.h"

#include <algorithm>

#include "kernel_sources/row_peel.cuh"
#include "runtime/ops/rowwise/rowwise_heuristics.h"
#include "runtime/ops/rowwise/rowwise_rules.h"

namespace kjit::rowwise {
namespace {

/// Whether a block of 16-bit words takes 256 to 512 threads rather than floats' 128 to 1024: once
/// 128 threads would hold more than 16 values each, fewer registers alone not being the aim.
bool narrows_word_blocks(const RowwiseProblem& p, int pack) {
  return holds_input_words(size_of(p.in_dtype), pack, 1024) && row_share_values(p.cols, pack, 128) > 16;
}

}  // namespace

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

int pow2_ceil(std::int64_t value) {
  int p = 1;
  while (p < value && p < (1 << 30)) p *= 2;
  return p;
}

bool is_pow2(int value) { return value > 0 && (value & (value - 1)) == 0; }

int target_values(const RowwiseProblem& p, int pack) {
  return std::max(kTargetBytesPerThread / size_of(p.in_dtype), pack);
}

std::int64_t held_registers_for(const RowwiseProblem& p, std::int64_t cols, int pack, int threads) {
  return share_registers(cols, size_of(p.in_dtype), pack, threads);
}

bool fits_registers(const RowwiseProblem& p, const KernelConfig& c, std::int64_t cols, int limit) {
  return held_registers_for(p, cols, c.pack, c.group) <= limit;
}

SplitFit split_fit(const RowwiseProblem& p, const DeviceProps& d, const KernelConfig& c) {
  SplitFit fit;
  fit.packs = split_thread_packs(share_cols(p, c), c.pack, c.threads);
  fit.held_registers = split_held_registers(share_cols(p, c), size_of(p.in_dtype), c.pack, c.threads, c.staged);
  const std::int64_t by_registers = split_blocks_by_registers(static_cast<int>(p.op), c.threads, fit.held_registers);
  const std::int64_t by_threads = d.max_threads_per_sm / c.threads;
  const std::int64_t block_smem = split_smem_bytes(p, c) + d.reserved_smem_per_block + kSplitStaticSmem;
  const std::int64_t by_smem = d.max_smem_per_sm / block_smem;
  fit.blocks_per_sm = std::min({by_registers, by_threads, by_smem});
  return fit;
}

KernelConfig fit_split(const RowwiseProblem& p, const DeviceProps& d, int pack, int threads) {
  KernelConfig best{Algorithm::kBlockSplit, pack, threads, threads, 1};
  std::int64_t best_blocks = 0;
  const std::int64_t packs = split_thread_packs(p.cols, pack, threads);
  for (std::int64_t staged = packs; staged >= 1; --staged) {
    KernelConfig c = best;
    c.staged = static_cast<int>(staged);
    const std::int64_t blocks = split_fit(p, d, c).blocks_per_sm;
    if (blocks > best_blocks) best_blocks = blocks, best.staged = c.staged;
  }
  if (best.staged == 0) best.staged = static_cast<int>(std::max<std::int64_t>(packs, 1));
  return best;
}

std::vector<KernelConfig> ranked_splits(const RowwiseProblem& p, const DeviceProps& d, int pack) {
  std::vector<KernelConfig> ranked;
  for (int threads : {256, 512, 1024}) ranked.push_back(fit_split(p, d, pack, threads));
  auto resident = [&](const KernelConfig& c) { return split_fit(p, d, c).blocks_per_sm * c.threads; };
  std::stable_sort(ranked.begin(), ranked.end(),
                   [&](const KernelConfig& a, const KernelConfig& b) { return resident(a) > resident(b); });
  return ranked;
}

KernelConfig fit_split(const RowwiseProblem& p, const DeviceProps& d, int pack) {
  return ranked_splits(p, d, pack).front();
}

bool fills_sm(const RowwiseProblem& p, const DeviceProps& d, const KernelConfig& c) {
  return split_fit(p, d, c).blocks_per_sm * c.threads >= d.max_threads_per_sm;
}

int smallest_cluster(std::int64_t row_bytes, std::int64_t max_slice_bytes) {
  int cluster = 1;
  while (cluster < kMaxClusterBlocks && ceil_div(row_bytes, cluster) > max_slice_bytes) cluster *= 2;
  return cluster;
}

int block_threads_for(const RowwiseProblem& p, std::int64_t values, int pack, int min_threads, int max_threads,
                      int target) {
  int threads = std::clamp(pow2_ceil(ceil_div(values, target)), min_threads, max_threads);
  while (threads < 1024 && held_registers_for(p, values, pack, threads) > kTargetHeldRegisters) threads *= 2;
  return threads;
}

int whole_row_group(const RowwiseProblem& p, int pack) { return std::min(32, pow2_ceil(ceil_div(p.cols, pack))); }

int warp_group(const RowwiseProblem& p, int pack) {
  const int whole = whole_row_group(p, pack);
  const std::int64_t packs = ceil_div(p.cols, pack);
  const std::int64_t in_bytes = pack * size_of(p.in_dtype);
  // A lane's share is bounded on the wider side: its registers and accesses are that side's.
  const std::int64_t wide_bytes = pack * std::max(size_of(p.in_dtype), size_of(p.out_dtype));
  const std::int64_t max_lane_bytes = wide_bytes == 4 ? kWarpGroupMaxWordLaneBytes : kWarpGroupMaxLaneBytes;
  const bool lanes_idle = packs % whole != 0;
  if (!lanes_idle && in_bytes == kMaxPackBytes && row_bytes(p) >= kWarpWholeGroupMinRowBytes) return whole;
  for (int group = 1; group < whole; group *= 2)
    if (group * in_bytes >= kWarpGroupMinSpanBytes && ceil_div(packs, group) * wide_bytes <= max_lane_bytes)
      return group;
  return whole;
}

KernelConfig fit_warp(const RowwiseProblem& p, int pack) {
  return {Algorithm::kWarp, pack, 128, warp_group(p, pack), 1};
}

KernelConfig fit_whole_row_warp(const RowwiseProblem& p, int pack) {
  return {Algorithm::kWarp, pack, 128, whole_row_group(p, pack), 1};
}

KernelConfig fit_block(Algorithm algorithm, const RowwiseProblem& p, int pack) {
  if (algorithm != Algorithm::kBlockRegs) return {algorithm, pack, 1024, 1024, 1};
  const bool narrow = narrows_word_blocks(p, pack);
  const int threads =
      block_threads_for(p, p.cols, pack, narrow ? 256 : 128, narrow ? 512 : 1024, target_values(p, pack));
  return {algorithm, pack, threads, threads, 1};
}

KernelConfig fit_cluster(const RowwiseProblem& p, const DeviceProps& d, int pack) {
  const int max_cluster = rows_past_wide_clusters(p, d) ? 8 : kMaxClusterBlocks;
  int cluster = 2;
  while (cluster < max_cluster) {
    const bool slice_small = pack_slice_cols(p.cols, pack, cluster) <= kMaxClusterThreads * target_values(p, pack);
    const bool fills_device = p.rows * cluster >= d.sm_count;
    if (slice_small && fills_device) break;
    cluster *= 2;
  }
  // Clusters of 16 hold one row an SM: 256 threads, more where the values would not fit.
  const int max_threads = cluster == kMaxClusterBlocks ? kOneRowAnSmThreads : kMaxClusterThreads;
  const int threads = block_threads_for(p, pack_slice_cols(p.cols, pack, cluster), pack, 128, max_threads,
                                        target_values(p, pack));
  return {Algorithm::kCluster, pack, threads, threads, cluster};
}

KernelConfig fit_smem(const RowwiseProblem& p, int pack, bool allow_cluster) {
  const int cluster = allow_cluster ? smallest_cluster(row_bytes(p), kTargetSliceBytes) : 1;
  const Algorithm algorithm = cluster == 1 ? Algorithm::kBlockSmem : Algorithm::kClusterSmem;
  return {algorithm, pack, 512, 512, cluster};
}

int stream_group(const RowwiseProblem& p, int pack) {
  return std::clamp(pow2_ceil(ceil_div(p.cols, pack)), 8, 32);
}

KernelConfig fit_stream(const RowwiseProblem& p, const DeviceProps& d, int pack) {
  const int in_bytes = size_of(p.in_dtype);
  if (row_bytes(p) <= kStreamShortRowBytes) {
    const int group = stream_group(p, pack);
    const std::int64_t slice_bytes = bulk_slice_cols(p.cols, in_bytes, 1) * in_bytes;
    int rows_per_tile = kStreamThreads / group;
    while (rows_per_tile * group > 32 && rows_per_tile * slice_bytes > kStreamTileBytes) rows_per_tile /= 2;
    return {Algorithm::kStream, pack, rows_per_tile * group, group, 1};
  }
  // Split while a slice is over the target or the rows leave SMs idle, as long as every thread
  // of the smaller slice still has a pack to work on.
  int cluster = 1;
  while (cluster < kMaxClusterBlocks &&
         (ceil_div(row_bytes(p), cluster) > kStreamSliceBytes || p.rows * cluster < d.sm_count) &&
         bulk_slice_cols(p.cols, in_bytes, cluster * 2) >= std::int64_t{kStreamThreads} * pack)
    cluster *= 2;
  return {Algorithm::kStream, pack, kStreamThreads, kStreamThreads, cluster};
}

namespace {

/// A ring config over the fewest blocks a row whose slices hold at most `max_slice_bytes`; peeled
/// (KernelConfig::peel) for rows off the 16-byte alignment whose outputs lie on their inputs' grid
/// (leads_match), whose slices' spans take a 16-byte unit more (slices round up to whole units:
/// two units of room keep the span within), and whose threads then hold fewer values than the most
/// (ring_max_values). Other rows off the alignment get the config unpeeled, which cannot run them.
/// On the H100: over one seed of the shape sweep, the ring's realigned stores ran 1.7-1.9x slower
/// than block_online's (reduce_scale bf16 436 x 67802, f16 391 x 109363); at the most values the
/// peeled kernels spilled (16-64 bytes) and ran 1.26-1.57x slower (`kjit tune --full`: fp32 256 x
/// 128257 in two groups, reduce_scale f16 391 x 109363).
KernelConfig ring_over(const RowwiseProblem& p, std::int64_t max_slice_bytes, int threads, int group) {
  const bool peel = misaligned_rows(p) && p.leads_match;
  const int cluster = smallest_cluster(row_bytes(p), max_slice_bytes - (peel ? 2 * kBulkUnitBytes : 0));
  KernelConfig ring{Algorithm::kRing, kBulkUnitBytes / size_of(p.in_dtype), threads, group, cluster};
  ring.peel = peel;
  if (peel) {
    const RingShape shape = ring_shape(p, ring);
    ring.peel = shape.values_per_thread < ring_max_values(shape.words);
  }
  return ring;
}

}  // namespace

KernelConfig ring_config(const RowwiseProblem& p) {
  return ring_over(p, kRingMaxSliceBytes, kRingThreads, kRingThreads);
}

KernelConfig ring_pick(const RowwiseProblem& p) {
  // fp32 rows in two groups of 256 measured ahead of one group of 512, or level; peeled, where
  // two groups hold the most values a thread, one group (ring_over).
  if (size_of(p.in_dtype) != 4) return ring_config(p);
  const KernelConfig two = ring_over(p, kRingMaxSliceBytes, kRingThreads, kRingGroupThreads);
  return two.peel || !misaligned_rows(p) ? two : ring_config(p);
}

KernelConfig two_group_ring(const RowwiseProblem& p) {
  return ring_over(p, kRingMaxChunkBytes, 2 * kRingGroupThreads, kRingGroupThreads);
}

bool ring_within(const RowwiseProblem& p, const DeviceProps& d, const KernelConfig& ring, int max_chunks) {
  return why_not_rowwise(p, d, ring).empty() && ring_shape(p, ring).chunks <= max_chunks;
}

KernelConfig online_config(const RowwiseProblem& p, int pack, int cluster) {
  // The slice as the kernel cuts it: starting on pack boundaries.
  const std::int64_t slice_bytes = pack_slice_cols(p.cols, pack, cluster) * size_of(p.in_dtype);
  const int threads = slice_bytes >= kOnlineFullBlockSliceBytes ? 1024 : 256;
  return {Algorithm::kBlockOnline, pack, threads, threads, cluster};
}

int online_cluster(const RowwiseProblem& p, const DeviceProps& d) {
  int cluster = 1;
  while (cluster < kMaxClusterBlocks &&
         (ceil_div(p.cols, cluster) > kOnlineMaxSliceCols || !fills_half_the_sms(p, d, cluster)))
    cluster *= 2;
  return cluster;
}

KernelConfig online_for(const RowwiseProblem& p, int cluster) {
  if (!peels_online(p)) return online_config(p, p.max_pack, cluster);
  KernelConfig online = online_config(p, widest_pack(p), cluster);
  online.peel = true;
  return online;
}

RowwiseProblem peeled_span(const RowwiseProblem& p, int pack) {
  RowwiseProblem span = p;
  span.cols = peeled_cols(p.cols, pack);
  return span;
}

bool share_realigns(const RowwiseProblem& p, const KernelConfig& c) {
  // The cluster kernel's threads share a slice's span; the others' a row's.
  const std::int64_t span = c.algorithm == Algorithm::kCluster ? cluster_share_cols(p.cols, c.pack, c.cluster, true)
                                                                : peeled_cols(p.cols, c.pack);
  return realigns_share(held_registers_for(p, span, c.pack, c.group),
                        holds_input_words(size_of(p.in_dtype), c.pack, c.group));
}

std::optional<KernelConfig> realigning_threads(const RowwiseProblem& p, KernelConfig c) {
  while (!share_realigns(p, c) && c.threads < 1024) {
    c.threads *= 2;
    c.group = c.threads;
  }
  if (!share_realigns(p, c)) return std::nullopt;
  return c;
}

std::optional<KernelConfig> fit_peeled(const RowwiseProblem& p, Algorithm algorithm) {
  const int pack = widest_pack(p);
  const RowwiseProblem span = peeled_span(p, pack);
  KernelConfig config =
      algorithm == Algorithm::kWarp ? fit_whole_row_warp(span, pack) : fit_block(algorithm, span, pack);
  if (!fits_registers(span, config, span.cols, kTargetHeldRegisters)) return std::nullopt;
  config.peel = true;
  return config;
}

}  // namespace kjit::rowwise
