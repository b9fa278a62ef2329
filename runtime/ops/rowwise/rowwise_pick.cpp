// SPDX-License-Identifier: Apache-2.0
// The heuristic's pick for a row-wise problem, and the completion of partial configs. The pick
// is a chain of named rules, tried in order; each returns the first valid config it fits.
#include <algorithm>
#include <cstdint>
#include <optional>

#include "runtime/ops/rowwise/rowwise_fit.h"
#include "runtime/ops/rowwise/rowwise_flat_tile.h"
#include "runtime/ops/rowwise/rowwise_heuristics.h"
#include "runtime/ops/rowwise/rowwise_kernels.h"
#include "runtime/ops/rowwise/rowwise_rules.h"

namespace kjit {
namespace {

using namespace rowwise;

/// The ring for rows few enough for the cluster kernel, where it measured ahead of it. The
/// dispatcher plans a call for the top of its rows bucket, so a rule on planned rows covers the
/// bucket. The ring's resident clusters walk two or more rows each, overlapping one row's writes
/// with the next rows' reads, where the cluster kernel takes its rows in rounds that read, then
/// write. Over fp32 rows the ring's pick (two groups, slices of up to two chunks), over 16-bit
/// rows two groups over slices of one chunk: for rows wider than 128 KB planned as 32 or more,
/// and for fp32 rows that need clusters of 16 planned as 16 or more (16-bit rows planned as 16
/// keep the cluster kernel).
std::optional<KernelConfig> few_rows_ring(const RowwiseProblem& p, const DeviceProps& d) {
  const bool fp32 = size_of(p.in_dtype) == 4;
  const KernelConfig ring = fp32 ? ring_pick(p) : two_group_ring(p);
  if (!ring_within(p, d, ring, fp32 ? 2 : 1)) return std::nullopt;
  if (p.rows >= 32 && row_bytes(p) > kFewRowsRingMinRowBytes) return ring;
  if (fp32 && ring.cluster == kMaxClusterBlocks && p.rows >= 16) return ring;
  return std::nullopt;
}

/// Clusters of 16 fit the device a few at a time (one a GPC): rows past them go to clusters of 8
/// where two of its blocks still share an SM's shared memory. On the H200 (`kjit tune --full`), fp32
/// 4096 x 151936 took 1437 us over clusters of 8 against 2242 over clusters of 16, 2048 x 200003
/// 1023 against 1192; slices one block an SM holds alone ran slower than clusters of 16 (1024 x
/// 256000: 837 us against 671).
KernelConfig within_gpc_clusters(const RowwiseProblem& p, const DeviceProps& d, KernelConfig smem) {
  if (smem.cluster < kMaxClusterBlocks || !rows_past_wide_clusters(p, d)) return smem;
  KernelConfig eight = smem;
  eight.cluster = 8;
  const std::int64_t block_smem = smem_slice_bytes(p, eight) + kSmemReserve + d.reserved_smem_per_block;
  return 2 * block_smem <= d.max_smem_per_sm && why_not_rowwise(p, d, eight).empty() ? eight : smem;
}

/// Rows too wide for one block's registers, on sm_90:
///  - where the ring runs ahead (ring_ahead), the ring;
///  - fewer 16-bit rows: the ring's two consumer groups over slices of one chunk where their
///    blocks fill half the SMs;
///  - other 16-bit rows, and fp32 rows up to twice the SMs: two passes (the second read from L2)
///    over slices of at most kOnlineMaxSliceCols, enough blocks a row to fill half the SMs
///    (online_cluster);
///  - more fp32 rows still: slices of up to 64 KB in shared memory over a cluster of 512-thread
///    blocks, a cluster a row; off the alignment, peeled at the widest pack (on the H100, `kjit
///    tune --full`: reduce_scale fp32 1381 x 174389 711 us against 876 at pack 1, fp32 -> f16
///    1700 x 95401 350 against 408).
KernelConfig wide_row_config(const RowwiseProblem& p, const DeviceProps& d, int pack) {
  const KernelConfig ring = ring_pick(p);
  if (ring_ahead(p, d) && ring_within(p, d, ring, 2)) return ring;
  if (half_input(p)) {
    const KernelConfig two_groups = two_group_ring(p);
    if (!many_rows(p, d) && ring_within(p, d, two_groups, 1) && fills_half_the_sms(p, d, two_groups.cluster))
      return two_groups;
    return online_for(p, online_cluster(p, d));
  }
  if (!many_rows(p, d)) return online_for(p, online_cluster(p, d));
  const int cluster = std::max(2, smallest_cluster(row_bytes(p), kTargetSliceBytes));
  KernelConfig smem{Algorithm::kClusterSmem, pack, 512, 512, cluster, ClusterGrid::kPerRow};
  if (misaligned_rows(p)) {
    smem.pack = widest_pack(p);
    smem.peel = true;
  }
  return within_gpc_clusters(p, d, smem);
}

/// Aligned 16-bit rows to fp32 of cluster_rows_to_fp32: the cluster kernel's blocks of
/// kMaxClusterThreads over the fewest blocks a row whose slices they hold within
/// kTargetHeldRegisters, a cluster a row (the per-row grid).
std::optional<KernelConfig> aligned_cluster_rows(const RowwiseProblem& p, const DeviceProps& d) {
  for (int cluster = 2; cluster <= kMaxClusterBlocks; cluster *= 2) {
    const KernelConfig c{Algorithm::kCluster, p.max_pack, kMaxClusterThreads, kMaxClusterThreads, cluster,
                         ClusterGrid::kPerRow};
    if (fits_registers(p, c, pack_slice_cols(p.cols, c.pack, cluster), kTargetHeldRegisters))
      return why_not_rowwise(p, d, c).empty() ? std::optional<KernelConfig>(c) : std::nullopt;
  }
  return std::nullopt;
}

/// 16-bit rows to fp32, more than twice the SMs, too wide for a block's registers: the cluster
/// kernel (one read, where block_online reads twice). Off the alignment, peeled at the widest pack,
/// its threads doubled until their shares store realigned (realigning_threads): on the H100, over
/// one seed of the shape sweep, 5 such calls of 264-1112 rows (55793-170130 columns, padded and odd
/// strides) ran 6-18 points of copy faster than peeled block_online; at 2052 rows (planned as
/// 4096), where block_online holds a row a block, 16 points slower, so rows past
/// kOnlineRowABlockRows keep it. Aligned (aligned_cluster_rows): on the H200 (`kjit tune --full`),
/// f16 -> fp32 1024 x 100000 took 169 us against block_online's 193, 1024 x 200000 353 against
/// 399, bf16 -> fp32 1024 x 131072 208 against 237. Over same-size 16-bit rows the peeled cluster
/// kernel ran behind block_online (H100, `kjit tune --full`: bf16 538 x 390573, f16 391 x 109363).
std::optional<KernelConfig> cluster_rows_to_fp32(const RowwiseProblem& p, const DeviceProps& d) {
  if (!has_clusters(d) || !half_input(p) || size_of(p.out_dtype) != 4 || !many_rows(p, d)) return std::nullopt;
  if (p.rows > kOnlineRowABlockRows * d.sm_count && online_cluster(p, d) == 1) return std::nullopt;
  if (!misaligned_rows(p)) return aligned_cluster_rows(p, d);
  KernelConfig fitted = fit_cluster(p, d, widest_pack(p));
  fitted.peel = true;
  const std::optional<KernelConfig> cluster = realigning_threads(p, fitted);
  if (!cluster || !why_not_rowwise(p, d, *cluster).empty()) return std::nullopt;
  return cluster;
}

/// Dense rows off the alignment on their own vector grids at the widest pack, in a block's
/// registers: on the H100, 4096 x 50257 and 8192 x 32001 bf16 ran 2.2-2.6x faster peeled, at 99%
/// of copy. Rows a warp holds keep their own pack: over warp_group's lanes they ran ahead of the
/// peeled warp at every width measured, 49-101 columns (bf16 65536 x 77: 10.1 us against 13.1;
/// f16 3000000 x 68: 272 against 410). Padded and offset rows, whose outputs start elsewhere on
/// the grid than their inputs, are peeled only where block_regs holds them only peeled
/// (peeled_wide_rows).
std::optional<KernelConfig> peeled_pick(const RowwiseProblem& p) {
  if (!p.dense || !misaligned_rows(p) || fit_peeled(p, Algorithm::kWarp)) return std::nullopt;
  return fit_peeled(p, Algorithm::kBlockRegs);
}

/// Padded and offset rows off the alignment that a block holds only peeled (at their own pack its
/// threads' shares pass the register target, so the pick would read them twice in block_online):
/// a block's registers at the widest pack, with threads doubled up to 1024 until its share stores
/// realigned (share_realigns). On the H100, over one seed of the shape sweep, all 7 such rows
/// (18617-41425 columns, 16-bit or fp32 out) ran 12-35 points of copy faster than in
/// block_online; 18 padded 16-bit rows of 24999-30001 columns that only 1024 threads realign ran
/// 10-23 points faster. Rows that block_regs holds at their own pack keep it: peeled, 27 of 30 such
/// rows (1061-14731 columns) ran slower, by up to 57 points, issue-bound on the peel's work a row
/// (docs/experiments/narrow-and-misaligned-rows.md).
std::optional<KernelConfig> peeled_wide_rows(const RowwiseProblem& p) {
  if (p.dense || !misaligned_rows(p)) return std::nullopt;
  // More threads shrink each share under the limit its realigned stores need.
  const std::optional<KernelConfig> regs = fit_peeled(p, Algorithm::kBlockRegs);
  return regs ? realigning_threads(p, *regs) : std::nullopt;
}

/// Rows of narrow gaps that flat_tile takes by kFlatTileGappedPickMaxCols: narrow, and input enough
/// for a tile of kFlatTileTargetBytes on every SM (smaller calls ran faster in the warp kernel).
bool gapped_rows_tile(const RowwiseProblem& p, const DeviceProps& d) {
  return p.cols < kFlatTileGappedPickMaxCols &&
         p.rows * p.cols * size_of(p.in_dtype) >= static_cast<std::int64_t>(d.sm_count) * kFlatTileTargetBytes;
}

/// Dense 16-bit rows off the alignment that block_online would read twice (peels_online), held
/// once by block_split peeled at the widest pack where two blocks or more share an SM
/// (kSplitPickRowBytes and up). On the H100, dense bf16 436 x 67802 ran 51.4 us against
/// block_online's 62.3, and f16 -> fp32 264 x 93511 57.8 against 65.0; padded rows whose output
/// lies off the input's grid ran 1.2-2x slower than block_online, their staged shares stored
/// element by element (docs/experiments/wide-row-kernels.md).
std::optional<KernelConfig> peeled_split(const RowwiseProblem& p, const DeviceProps& d) {
  // 16-bit only: the fp32 rows peels_online takes are too wide for block_regs, so two of them never
  // fit an SM's shared memory, and block_split peeled is unmeasured for fp32.
  if (!p.dense || !half_input(p) || !peels_online(p) || row_bytes(p) < kSplitPickRowBytes) return std::nullopt;
  const int pack = widest_pack(p);
  const RowwiseProblem span = peeled_span(p, pack);
  KernelConfig split = fit_split(span, d, pack);
  split.peel = true;
  if (!why_not_rowwise(p, d, split).empty() || split_fit(span, d, split).blocks_per_sm < 2) return std::nullopt;
  return split;
}

/// Dense 16-bit rows past tile_narrow as flat tiles of small blocks, where the call is large
/// (kFlatTileWidePickMinInputBytes and the constants beside it).
std::optional<KernelConfig> wide_flat_tile_pick(const RowwiseProblem& p) {
  if (!p.dense || !half_input(p) || p.rows * row_bytes(p) < kFlatTileWidePickMinInputBytes) return std::nullopt;
  KernelConfig tile = fit_flat_tile(p, kFlatTileWidePickThreads, kFlatTileWidePickValues);
  tile.group = std::max(tile.group, kFlatTileWidePickMinLanes);
  if (!why_not_flat_tile(p, tile).empty()) return std::nullopt;
  return tile;
}

/// Narrow rows off the alignment, dense or of narrow gaps, as flat tiles (kFlatTilePickMaxRowBytes);
/// aligned rows keep whole vectors in the warp kernel (on the H100, 49152 x 64 fp32 ran at 0.73x
/// torch as tiles).
std::optional<KernelConfig> flat_tile_pick(const RowwiseProblem& p, const DeviceProps& d) {
  if ((!p.dense && !p.narrow_gaps) || !misaligned_rows(p)) return std::nullopt;
  if (!tile_narrow(p)) return wide_flat_tile_pick(p);
  const KernelConfig tile = fit_flat_tile(p, kFlatTilePickThreads, kFlatTilePickValues);
  if (!why_not_flat_tile(p, tile).empty()) return std::nullopt;
  if (!p.dense && !gapped_rows_tile(p, d)) return std::nullopt;
  return tile;
}

/// The warp kernel's block: kWarpWideBlockThreads for narrow rows where the blocks stay many.
KernelConfig warp_block(const RowwiseProblem& p, const DeviceProps& d, KernelConfig warp) {
  const std::int64_t rows_a_block = kWarpWideBlockThreads / warp.group;
  if (p.cols < kWarpWideBlockMaxCols && p.rows / rows_a_block >= kWarpWideBlockMinBlocksPerSm * d.sm_count)
    warp.threads = kWarpWideBlockThreads;
  return warp;
}

/// block_online a block a row, fitted to the row; peeled at the widest pack where peels_online
/// (every whole vector one access, the outputs realigned).
KernelConfig online_block(const RowwiseProblem& p) {
  if (!peels_online(p)) return fit_block(Algorithm::kBlockOnline, p, p.max_pack);
  const int pack = widest_pack(p);
  KernelConfig online = fit_block(Algorithm::kBlockOnline, peeled_span(p, pack), pack);
  online.peel = true;
  return online;
}

}  // namespace

KernelConfig choose_rowwise_config(const RowwiseProblem& p, const DeviceProps& d) {
  if (const std::optional<KernelConfig> tile = flat_tile_pick(p, d)) return *tile;
  if (const std::optional<KernelConfig> peeled = peeled_pick(p)) return *peeled;
  const int pack = p.max_pack;
  // Rows a warp (or part of one) holds in registers.
  if (KernelConfig warp = fit_warp(p, pack); fits_registers(p, warp, p.cols, kTargetHeldRegisters))
    return warp_block(p, d, warp);
  const bool clusters = has_clusters(d);
  // Few wide rows: spread each row over a cluster's SMs (slices in registers), or most SMs
  // sit idle.
  if (clusters && few_rows(p, d) && p.cols >= kClusterMinCols) {
    if (const std::optional<KernelConfig> ring = few_rows_ring(p, d)) return *ring;
    KernelConfig cluster = fit_cluster(p, d, pack);
    if (why_not_rowwise(p, d, cluster).empty() &&
        fits_registers(p, cluster, pack_slice_cols(p.cols, pack, cluster.cluster), kTargetHeldRegisters))
      return cluster;
  }
  // Rows of 32 KB or more that block_split holds with every thread slot of an SM resident.
  if (row_bytes(p) >= kSplitPickRowBytes) {
    const KernelConfig split = fit_split(p, d, pack);
    if (why_not_rowwise(p, d, split).empty() && fills_sm(p, d, split)) return split;
  }
  // Many rows that one block holds in registers, but 16-bit rows that need all 1024 threads:
  // the wide-row kernels run those faster.
  if (KernelConfig regs = fit_block(Algorithm::kBlockRegs, p, pack);
      fits_registers(p, regs, p.cols, kTargetHeldRegisters) && !(clusters && half_input(p) && regs.threads == 1024))
    return regs;
  if (const std::optional<KernelConfig> peeled = peeled_wide_rows(p)) return *peeled;
  if (const std::optional<KernelConfig> split = peeled_split(p, d)) return *split;
  if (const std::optional<KernelConfig> cluster = cluster_rows_to_fp32(p, d)) return *cluster;
  if (clusters) {
    KernelConfig wide = wide_row_config(p, d, pack);
    if (why_not_rowwise(p, d, wide).empty()) return wide;
  }
  if (KernelConfig smem = fit_smem(p, pack, clusters); why_not_rowwise(p, d, smem).empty()) return smem;
  return online_block(p);
}

KernelConfig complete_rowwise_config(const RowwiseProblem& p, const DeviceProps& d, KernelConfig partial) {
  if (partial.algorithm == Algorithm::kAuto) return choose_rowwise_config(p, d);
  const int pack = partial.pack > 0 ? partial.pack : partial.peel ? widest_pack(p) : p.max_pack;
  // A peeled row's threads hold its span at the worst shift.
  const RowwiseProblem share = partial.peel ? peeled_span(p, pack) : p;
  KernelConfig fitted;
  switch (partial.algorithm) {
    case Algorithm::kWarp: fitted = fit_warp(share, pack); break;
    case Algorithm::kCluster: fitted = fit_cluster(p, d, pack); break;
    case Algorithm::kStream: fitted = fit_stream(p, d, pack); break;
    case Algorithm::kRing: fitted = ring_config(p); break;
    case Algorithm::kBlockSplit:
      fitted = partial.threads > 0 ? fit_split(share, d, pack, partial.threads) : fit_split(share, d, pack);
      break;
    case Algorithm::kFlatTile:
      fitted = fit_flat_tile(p);
      if (partial.pack > 0) fitted.pack = partial.pack;  // refused by validity unless 1
      break;
    case Algorithm::kClusterSmem:
      fitted = fit_smem(p, pack, true);
      fitted.algorithm = Algorithm::kClusterSmem;
      fitted.cluster = std::max(fitted.cluster, 2);
      break;
    default: fitted = fit_block(partial.algorithm, share, pack); break;
  }
  if (partial.threads > 0) fitted.threads = partial.threads;
  if (partial.group > 0)
    fitted.group = partial.group;
  else if (!takes_row_groups(partial.algorithm))
    fitted.group = fitted.threads;
  else if (partial.algorithm == Algorithm::kStream && fitted.group > 32)
    fitted.group = fitted.threads;
  if (partial.cluster > 0) fitted.cluster = partial.cluster;
  if (partial.staged > 0) fitted.staged = partial.staged;
  fitted.cluster_grid = partial.cluster_grid;
  fitted.peel = partial.peel;
  return fitted;
}

}  // namespace kjit
