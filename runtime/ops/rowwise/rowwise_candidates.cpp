// SPDX-License-Identifier: Apache-2.0
// The tuner's candidates: per algorithm, the few configs that measured runs (H100, H200) show
// can win, so that tuning a shape stays near a second. Packs come in two sizes because 8-byte
// accesses often beat 16-byte ones on wide rows (fewer bank conflicts, more loads per thread).
#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "runtime/ops/rowwise/rowwise_fit.h"
#include "runtime/ops/rowwise/rowwise_flat_tile.h"
#include "runtime/ops/rowwise/rowwise_heuristics.h"
#include "runtime/ops/rowwise/rowwise_rules.h"

namespace kjit {
namespace {

using namespace rowwise;

/// cluster_smem slices from 32 KB (smaller ones ran far behind) to 96 KB (two blocks an SM).
constexpr std::int64_t kClusterSmemMinSliceBytes = 32 * 1024;
constexpr std::int64_t kClusterSmemMaxSliceBytes = 96 * 1024;
/// Stream slices of long rows up to 96 KB: two stages still fit an SM's shared memory.
constexpr std::int64_t kStreamMaxSliceBytes = 96 * 1024;

std::vector<int> candidate_packs(const RowwiseProblem& p) {
  if (p.max_pack >= 2) return {p.max_pack, p.max_pack / 2};
  return {p.max_pack};
}

/// Threads whose share of the row (or slice) is at least 8 values in at most 32 registers:
/// enough loads in flight, no spills.
std::vector<int> register_threads(const RowwiseProblem& p, std::int64_t cols, int pack) {
  std::vector<int> threads;
  for (int t : {128, 256, 512, 1024}) {
    const bool enough = row_share_values(cols, pack, t) >= 8 || t == 128;
    if (enough && held_registers_for(p, cols, pack, t) <= kTargetHeldRegisters) threads.push_back(t);
  }
  return threads;
}

/// Warps that hold two rows or more at once (groups under a whole row's lanes, 256 threads),
/// within twice warp_group's bounds: each lane's loads hold more of the row, and fewer lanes sit
/// idle past a row of few packs.
void add_narrow_group_candidates(const RowwiseProblem& p, KernelConfig warp, std::vector<KernelConfig>& out) {
  const std::int64_t packs = ceil_div(p.cols, warp.pack);
  const std::int64_t pack_bytes = warp.pack * size_of(p.in_dtype);
  warp.threads = 256;
  for (warp.group /= 2; warp.group >= 2; warp.group /= 2) {
    const bool spans = 2 * warp.group * pack_bytes >= kWarpGroupMinSpanBytes;
    if (spans && ceil_div(packs, warp.group) * pack_bytes <= 2 * kWarpGroupMaxLaneBytes) out.push_back(warp);
  }
}

void add_register_candidates(const RowwiseProblem& p, int pack, std::vector<KernelConfig>& out) {
  if (KernelConfig warp = fit_whole_row_warp(p, pack); fits_registers(p, warp, p.cols, kTargetHeldRegisters)) {
    out.push_back(warp);
    out.push_back({Algorithm::kWarp, pack, 256, warp.group, 1});
    add_narrow_group_candidates(p, warp, out);
  }
  if (p.cols <= 32 * pack) return;  // narrower rows leave most of a block idle
  for (int threads : register_threads(p, p.cols, pack))
    out.push_back({Algorithm::kBlockRegs, pack, threads, threads, 1});
  // Up to 64 floats a thread at 256 threads: three blocks an SM still fit (80 registers).
  const std::int64_t registers = held_registers_for(p, p.cols, pack, 256);
  if (!holds_input_words(size_of(p.in_dtype), pack, 256) && registers > kTargetHeldRegisters &&
      registers <= kMaxHeldRegisters)
    out.push_back({Algorithm::kBlockRegs, pack, 256, 256, 1});
}

/// Rows off the alignment: the register kernels on each row's own vector grid at the widest
/// pack (KernelConfig::peel), where a warp, or a block for rows wider than a warp's packs, holds
/// the row's span at its worst shift; block_split as its candidates take it, at the thread count
/// that keeps the most threads resident.
void add_peeled_candidates(const RowwiseProblem& p, const DeviceProps& d, std::vector<KernelConfig>& out) {
  if (!misaligned_rows(p)) return;
  if (std::optional<KernelConfig> warp = fit_peeled(p, Algorithm::kWarp)) out.push_back(*warp);
  if (p.cols <= 32 * widest_pack(p)) return;  // narrower rows leave most of a block idle
  if (std::optional<KernelConfig> block = fit_peeled(p, Algorithm::kBlockRegs)) out.push_back(*block);
  if (row_bytes(p) < kSplitMinRowBytes) return;
  const int pack = widest_pack(p);
  const RowwiseProblem span = peeled_span(p, pack);
  for (KernelConfig c : ranked_splits(span, d, pack))
    if (split_fit(span, d, c).blocks_per_sm >= 2) {
      c.peel = true;
      out.push_back(c);
      return;
    }
}

/// With more rows than SMs, cluster kernels at the widest pack go on both grids (the second
/// runs the same compiled kernel, so it costs a timing, not a compile): which grid wins varies
/// with the shape. With fewer, the resident clusters take the rows in one or two rounds and the
/// grids hardly differ.
void add_cluster_candidates(const RowwiseProblem& p, const DeviceProps& d, int pack,
                            std::vector<KernelConfig>& out) {
  auto add_both_grids = [&](KernelConfig config) {
    out.push_back(config);
    if (pack != p.max_pack || p.rows <= d.sm_count) return;
    config.cluster_grid = ClusterGrid::kPerRow;
    out.push_back(config);
  };
  for (int cluster : {2, 4, 8, 16}) {
    // Clusters of 16 fit the device a few at a time: behind with more rows than SMs.
    if (cluster == kMaxClusterBlocks && p.rows > d.sm_count) break;
    const std::int64_t slice = pack_slice_cols(p.cols, pack, cluster);
    for (int threads : register_threads(p, slice, pack)) {  // the fewest threads that hold it
      add_both_grids({Algorithm::kCluster, pack, threads, threads, cluster});
      break;
    }
    const std::int64_t slice_bytes = row_bytes(p) / cluster;
    if (slice_bytes >= kClusterSmemMinSliceBytes && slice_bytes <= kClusterSmemMaxSliceBytes)
      add_both_grids({Algorithm::kClusterSmem, pack, 256, 256, cluster});
  }
}

/// Rows off the alignment that clusters share: the cluster kernels peeled at the widest pack, each
/// slice on its own vector grid, at the cluster sizes add_cluster_candidates takes.
void add_peeled_cluster_candidates(const RowwiseProblem& p, const DeviceProps& d, std::vector<KernelConfig>& out) {
  const int pack = widest_pack(p);
  for (int cluster : {2, 4, 8, 16}) {
    if (cluster == kMaxClusterBlocks && p.rows > d.sm_count) break;
    for (int threads : register_threads(p, cluster_share_cols(p.cols, pack, cluster, true), pack)) {
      KernelConfig regs{Algorithm::kCluster, pack, threads, threads, cluster};
      regs.peel = true;
      out.push_back(regs);
      break;
    }
    // Rows that clusters of 16 still cut into slices over kClusterSmemMaxSliceBytes: one block an SM.
    const std::int64_t slice_bytes = row_bytes(p) / cluster;
    const bool widest_cluster = cluster == kMaxClusterBlocks || (cluster == 8 && p.rows > d.sm_count);
    if (slice_bytes < kClusterSmemMinSliceBytes || (slice_bytes > kClusterSmemMaxSliceBytes && !widest_cluster))
      continue;
    for (int threads : {256, 512}) {
      KernelConfig smem{Algorithm::kClusterSmem, pack, threads, threads, cluster};
      smem.peel = true;
      out.push_back(smem);
      // With more rows than SMs, a cluster a row too (as add_cluster_candidates).
      if (p.rows <= d.sm_count) continue;
      smem.cluster_grid = ClusterGrid::kPerRow;
      out.push_back(smem);
    }
  }
}

void add_stream_candidates(const RowwiseProblem& p, int pack, std::vector<KernelConfig>& out) {
  if (row_bytes(p) <= kStreamShortRowBytes) {
    const int group = stream_group(p, pack);
    for (int threads : {128, 256}) out.push_back({Algorithm::kStream, pack, threads, group, 1});
    return;
  }
  // The smallest cluster whose slice fits two stages in an SM's shared memory, and twice that.
  const int cluster = smallest_cluster(row_bytes(p), kStreamMaxSliceBytes);
  for (int c : {cluster, cluster * 2})
    if (c <= kMaxClusterBlocks) out.push_back({Algorithm::kStream, pack, 256, 256, c});
}

/// The ring kernel over the fewest blocks per row whose slices fit two chunks, where it runs
/// ahead or level (ring_ahead) and its blocks fill half the SMs: the pick's layout and the other
/// one (over fp32 rows one group and two). Twice as many blocks a row always ran behind.
///
/// 16-bit rows no more than twice the SMs get the two groups of 256 taking turns, over blocks
/// whose slices are one chunk (two_group_ring): a single group waits on every row's exchange
/// there. Where those need clusters of 16, the nearly full clusters whose slices still fit one
/// chunk are candidates too (kNearlyFullClusters).
void add_ring_candidates(const RowwiseProblem& p, const DeviceProps& d, std::vector<KernelConfig>& out) {
  if (row_bytes(p) < kOnlineMinRowBytes) return;
  const KernelConfig ring = ring_config(p);
  if (fills_half_the_sms(p, d, ring.cluster) && ring_ahead(p, d)) {
    out.push_back(ring_pick(p));
    out.push_back(ring);  // one group, where the pick has two
  }
  if (size_of(p.in_dtype) != 2 || many_rows(p, d)) return;
  const KernelConfig two_groups = two_group_ring(p);
  if (!fills_half_the_sms(p, d, two_groups.cluster)) return;
  out.push_back(two_groups);
  if (two_groups.cluster != kMaxClusterBlocks) return;
  for (int cluster : kNearlyFullClusters) {
    KernelConfig narrower = two_groups;
    narrower.cluster = cluster;
    if (ring_within(p, d, narrower, 1)) out.push_back(narrower);
  }
}

/// block_split at the two thread counts that keep the most threads resident (fit_split), for
/// rows wider than a small block holds in registers. One block an SM never paid: its barriers
/// leave the SM without loads in flight.
void add_split_candidates(const RowwiseProblem& p, const DeviceProps& d, std::vector<KernelConfig>& out) {
  if (row_bytes(p) < kSplitMinRowBytes) return;
  int added = 0;
  for (const KernelConfig& c : ranked_splits(p, d, p.max_pack))
    if (added < 2 && split_fit(p, d, c).blocks_per_sm >= 2) out.push_back(c), ++added;
}

/// Rows read twice, the second time from L2: a block per row and, where the pick takes more
/// (online_cluster), clusters of the pick's blocks a row and of twice that (half as many ran 7-20%
/// slower wherever measured: kOnlineMaxSliceCols) whose slices keep kOnlineMinSliceBytes;
/// online_for peels where peels_online, and the block's threads follow the slice (online_config).
/// Rows off the alignment that the pick does not peel have a peeled block a row too.
void add_online_candidates(const RowwiseProblem& p, const DeviceProps& d, std::vector<KernelConfig>& out) {
  if (row_bytes(p) < kOnlineMinRowBytes) return;
  out.push_back(online_for(p, 1));
  if (misaligned_rows(p) && !peels_online(p)) {
    KernelConfig peeled = online_config(p, widest_pack(p), 1);
    peeled.peel = true;
    out.push_back(peeled);
  }
  const int picked = has_clusters(d) ? online_cluster(p, d) : 1;
  if (picked == 1) return;
  for (int cluster : {picked, picked * 2})
    if (cluster <= kMaxClusterBlocks && row_bytes(p) / cluster >= kOnlineMinSliceBytes)
      out.push_back(online_for(p, cluster));
}

}  // namespace

std::vector<KernelConfig> rowwise_candidates(const RowwiseProblem& p, const DeviceProps& d) {
  // The heuristic's pick always comes first; the rest in a fixed order, invalid ones dropped.
  std::vector<KernelConfig> candidates;
  auto consider = [&](const KernelConfig& c) {
    if (why_not_rowwise(p, d, c).empty() && std::find(candidates.begin(), candidates.end(), c) == candidates.end())
      candidates.push_back(c);
  };
  consider(choose_rowwise_config(p, d));
  const bool fits_one_block = held_registers_for(p, p.cols, p.max_pack, 1024) <= kTargetHeldRegisters;
  const bool clusters = has_clusters(d);
  std::vector<KernelConfig> configs;
  for (int pack : candidate_packs(p)) {
    add_register_candidates(p, pack, configs);
    if (clusters && p.cols >= kClusterMinCols && (!fits_one_block || few_rows(p, d)))
      add_cluster_candidates(p, d, pack, configs);
    // The stream kernel overlaps one tile's loads with the last one's work: with fewer rows
    // than SMs there is no next tile.
    if (clusters && p.rows >= d.sm_count) add_stream_candidates(p, pack, configs);
  }
  add_peeled_candidates(p, d, configs);
  if (clusters && misaligned_rows(p) && p.cols >= kClusterMinCols) {
    const bool peeled_fits_one_block =
        held_registers_for(p, peeled_cols(p.cols, widest_pack(p)), widest_pack(p), 1024) <= kTargetHeldRegisters;
    if (!peeled_fits_one_block || few_rows(p, d)) add_peeled_cluster_candidates(p, d, configs);
  }
  add_flat_tile_candidates(p, configs);
  add_split_candidates(p, d, configs);
  add_online_candidates(p, d, configs);
  if (clusters) add_ring_candidates(p, d, configs);
  // Without clusters, a row in shared memory is the other way to hold rows too wide for one
  // block's registers (with clusters it ran far behind the cluster kernels).
  if (!fits_one_block && !clusters) configs.push_back({Algorithm::kBlockSmem, p.max_pack, 512, 512, 1});
  for (const KernelConfig& c : configs) consider(c);
  return candidates;
}

}  // namespace kjit
