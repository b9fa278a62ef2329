// SPDX-License-Identifier: Apache-2.0
// Fitting: the config of one algorithm sized for a problem (threads, blocks per row, staged
// packs), as the pick, the completion of partial configs and the candidates all take it.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "kjit/config.hpp"
#include "runtime/driver/context.h"
#include "runtime/ops/rowwise/rowwise_kernels.h"
#include "runtime/ops/rowwise/rowwise_rules.h"
#include "runtime/ops/rowwise/rowwise_problem.h"

namespace kjit::rowwise {

/// Registers a thread aims to spend on its values: up to this many a row in registers runs
/// without spilling at 1024 threads (64 registers each).
constexpr int kTargetHeldRegisters = 32;
/// Bytes of input a thread aims at: enough loads in flight to cover the memory latency, few
/// enough registers for two or more blocks an SM.
constexpr int kTargetBytesPerThread = 64;
/// Cluster blocks of at most this many threads, so that an SM holds two or more and one block's
/// cluster barriers overlap another's loads.
constexpr int kMaxClusterThreads = 512;
/// Blocks of the cluster kernel where clusters of 16 hold one row an SM.
constexpr int kOneRowAnSmThreads = 256;
/// Shared-memory slices of at most this many bytes: three blocks fit an SM's 227 KB, so their
/// loads, barriers and stores overlap.
constexpr std::int64_t kTargetSliceBytes = 64 * 1024;
/// Stream kernel: rows up to this many bytes go several to a tile, one per group of lanes, a
/// tile at most kStreamTileBytes; longer rows split over a cluster until a slice is at most
/// kStreamSliceBytes, so that two double-buffered blocks fit an SM.
constexpr std::int64_t kStreamShortRowBytes = 4096;
constexpr std::int64_t kStreamTileBytes = 32 * 1024;
constexpr std::int64_t kStreamSliceBytes = 48 * 1024;
constexpr int kStreamThreads = 512;
/// Ring kernel: 512 consumer threads (or two groups of 256), slices of at most two chunks (64
/// 16-bit or 32 fp32 values a thread; fp32 slices of four chunks spilled).
constexpr int kRingThreads = 512;
constexpr int kRingGroupThreads = 256;
constexpr std::int64_t kRingMaxSliceBytes = 2 * kRingMaxChunkBytes;
/// block_split: the block reductions' static shared memory, rounded up.
constexpr std::int64_t kSplitStaticSmem = 512;

std::int64_t ceil_div(std::int64_t a, std::int64_t b);
/// The smallest power of two >= value (at most 2^30).
int pow2_ceil(std::int64_t value);
bool is_pow2(int value);

/// Values a thread aims to hold: kTargetBytesPerThread of input, at least a pack.
int target_values(const RowwiseProblem& p, int pack);
/// Registers a thread of `threads` (each its own share of `cols`) spends on its values.
std::int64_t held_registers_for(const RowwiseProblem& p, std::int64_t cols, int pack, int threads);
/// Whether a thread of `c` holds its share of `cols` in at most `limit` registers.
bool fits_registers(const RowwiseProblem& p, const KernelConfig& c, std::int64_t cols, int limit);

/// How a block_split config sits on an SM: a thread's packs, the registers its held ones take,
/// and the blocks an SM holds at once by registers, threads and shared memory.
struct SplitFit {
  std::int64_t packs = 0;
  std::int64_t held_registers = 0;
  std::int64_t blocks_per_sm = 0;
};
SplitFit split_fit(const RowwiseProblem& p, const DeviceProps& d, const KernelConfig& c);
/// block_split over `threads`, staging the most packs that still keep the most blocks resident:
/// every pack staged frees registers, every pack held frees shared memory.
KernelConfig fit_split(const RowwiseProblem& p, const DeviceProps& d, int pack, int threads);
/// block_split at 256, 512 and 1024 threads, each fitted, the most threads resident on an SM
/// first; the fewer threads first on a tie (their barriers wait on fewer warps).
std::vector<KernelConfig> ranked_splits(const RowwiseProblem& p, const DeviceProps& d, int pack);
/// The first of ranked_splits.
KernelConfig fit_split(const RowwiseProblem& p, const DeviceProps& d, int pack);
/// Whether block_split's config keeps every thread slot of an SM resident.
bool fills_sm(const RowwiseProblem& p, const DeviceProps& d, const KernelConfig& c);

/// The fewest blocks per row (a power of two, at most 16) whose slices hold at most
/// `max_slice_bytes` of a row of `row_bytes`.
int smallest_cluster(std::int64_t row_bytes, std::int64_t max_slice_bytes);
/// Threads for a block that holds `values` in registers: aim at `target` values per thread,
/// stay within [min_threads, max_threads] unless the values would not fit, then go up to 1024.
int block_threads_for(const RowwiseProblem& p, std::int64_t values, int pack, int min_threads, int max_threads,
                      int target);

/// Lanes enough for every pack of the row, up to a warp.
int whole_row_group(const RowwiseProblem& p, int pack);
/// The warp kernel's lanes a row (kWarpGroupMinSpanBytes, kWarpGroupMaxLaneBytes): the fewest
/// whose loads of a row span a sector and hold at most kWarpGroupMaxLaneBytes a lane (of the
/// wider type; kWarpGroupMaxWordLaneBytes where its accesses are 4-byte words), so that a
/// warp takes several narrow rows at once; whole_row_group where every lane holds whole 16-byte
/// packs and the row is kWarpWholeGroupMinRowBytes or more, or where no smaller group qualifies.
int warp_group(const RowwiseProblem& p, int pack);
/// A group of warp_group lanes per row, 128 threads a block.
KernelConfig fit_warp(const RowwiseProblem& p, int pack);
/// A group of whole_row_group lanes per row, 128 threads a block (the peeled warp: smaller groups
/// ran slower peeled).
KernelConfig fit_whole_row_warp(const RowwiseProblem& p, int pack);
/// A block per row: block_regs sized by block_threads_for, the others at 1024 threads.
KernelConfig fit_block(Algorithm algorithm, const RowwiseProblem& p, int pack);
/// The cluster kernel: the smallest cluster whose slices fit the target and whose blocks fill
/// the device, at most 8 blocks where the rows outnumber the clusters of 16 that run at once
/// (rows_past_wide_clusters); the fewest threads that hold a slice.
KernelConfig fit_cluster(const RowwiseProblem& p, const DeviceProps& d, int pack);
/// A row slice per block in shared memory: one block per row when the row fits the target
/// slice, else (allow_cluster) the smallest cluster whose slices do.
KernelConfig fit_smem(const RowwiseProblem& p, int pack, bool allow_cluster);
/// The stream kernel: short rows several to a tile, long ones split over a cluster.
KernelConfig fit_stream(const RowwiseProblem& p, const DeviceProps& d, int pack);
/// Lanes per row of a stream tile of short rows: a pack each, 8 to 32.
int stream_group(const RowwiseProblem& p, int pack);

/// The ring kernel, one group of 512, over the fewest blocks per row whose slices fit two chunks;
/// the ring configs are peeled for rows off the 16-byte alignment whose outputs lie on their
/// inputs' grid, where a thread then holds fewer values than the most (else unpeeled: no ring).
KernelConfig ring_config(const RowwiseProblem& p);
/// The ring as the pick takes it: over fp32 rows in two consumer groups, over 16-bit rows in one.
KernelConfig ring_pick(const RowwiseProblem& p);
/// The ring's two consumer groups of 256 over the fewest blocks per row whose slices are one
/// chunk (a cluster of up to 16).
KernelConfig two_group_ring(const RowwiseProblem& p);
/// Whether `ring` is valid and each block's slice is at most `max_chunks` chunks.
bool ring_within(const RowwiseProblem& p, const DeviceProps& d, const KernelConfig& ring, int max_chunks);

/// block_online over `cluster` blocks per row: 1024 threads for slices of kOnlineFullBlockSliceBytes
/// or more, else 256.
KernelConfig online_config(const RowwiseProblem& p, int pack, int cluster);
/// block_online's blocks per row: the fewest whose slices hold at most kOnlineMaxSliceCols and
/// whose rows' blocks fill at least half the SMs.
int online_cluster(const RowwiseProblem& p, const DeviceProps& d);
/// online_config for a problem: its rows' pack, or, where peels_online, peeled
/// (KernelConfig::peel) at the widest pack, every whole vector one access.
KernelConfig online_for(const RowwiseProblem& p, int cluster);

/// The problem as the threads of a peeled config of `pack` size their shares: the row's span at
/// its worst shift (peeled_cols).
RowwiseProblem peeled_span(const RowwiseProblem& p, int pack);
/// Whether the register kernel (warp, block_regs, cluster) of peeled config `c` stores realigned
/// where a row's output starts elsewhere on the grid than its input (realigns_share,
/// row_layout.cuh), as the kernel decides.
bool share_realigns(const RowwiseProblem& p, const KernelConfig& c);
/// `c` (a block a row or a cluster's slice) with its threads doubled, up to 1024, until its share
/// stores realigned; none where 1024 threads do not.
std::optional<KernelConfig> realigning_threads(const RowwiseProblem& p, KernelConfig c);
/// A peeled warp or block_regs config (`algorithm`) at the widest pack, fitted to the row's span
/// as the pick fits aligned rows; none where a thread's share would pass kTargetHeldRegisters.
std::optional<KernelConfig> fit_peeled(const RowwiseProblem& p, Algorithm algorithm);

}  // namespace kjit::rowwise
