// SPDX-License-Identifier: Apache-2.0
#include "runtime/ops/rowwise_heuristics.h"

#include <algorithm>
#include <cstdint>
#include <optional>

#include "kjit/error.hpp"
#include "runtime/ops/rowwise_kernels.h"

namespace kjit {
namespace {

// Registers a thread of the row-in-registers kernels spends on its values (see
// held_registers): up to this many they run without spilling at 1024 threads (64 registers
// each); the kernels accept up to 64.
constexpr int kMaxHeldRegisters = 32;
constexpr int kHardMaxHeldRegisters = 64;
// The heuristics aim at this many bytes of input per thread: enough loads in flight to cover
// the memory latency, few enough registers for two or more blocks per SM.
constexpr int kTargetBytesPerThread = 64;
// Cluster blocks of at most this many threads, so that an SM holds two or more and one block's
// cluster barriers overlap another's loads.
constexpr int kMaxClusterThreads = 512;
constexpr int kOneRowAnSmThreads = 256;  // the cluster kernel's blocks where clusters of 16 take the rows
// Below this many columns a cluster's cross-block exchange costs more than it brings.
constexpr std::int64_t kClusterMinCols = 4096;
constexpr int kSmemReserve = 2048;       // static shared memory of the block reductions
// Shared-memory slices of at most this many bytes: three blocks fit an SM's 227 KB, so their
// loads, barriers and stores overlap.
constexpr std::int64_t kTargetSliceBytes = 64 * 1024;
// Stream kernel: rows up to this many bytes go several to a tile, one per group of lanes;
// longer rows are split over a cluster until a slice is at most kStreamSliceBytes, so that two
// double-buffered blocks fit an SM.
constexpr std::int64_t kStreamShortRowBytes = 4096;
constexpr std::int64_t kStreamTileBytes = 32 * 1024;
constexpr std::int64_t kStreamSliceBytes = 48 * 1024;
constexpr int kStreamThreads = 512;
// Rows read twice (block_online) are tuning candidates from this many bytes on, each block of
// a cluster with a slice of at least kOnlineMinSliceBytes.
constexpr std::int64_t kOnlineMinRowBytes = 32 * 1024;
constexpr std::int64_t kOnlineMinSliceBytes = 16 * 1024;
// Ring kernel: 512 consumer threads, slices of at most two 32 KB chunks (64 bf16 or 32 fp32
// values a thread; fp32 slices of four chunks spilled and ran slower on the H100).
constexpr int kRingThreads = 512;
constexpr int kRingGroupThreads = 256;  // a group of the two-group layout (add_ring_candidate)
constexpr std::int64_t kRingMaxSliceBytes = 2 * kRingChunkBytes;
constexpr std::int64_t kFewRowsRingMinRowBytes = 128 * 1024;  // few_rows_ring: rows wider than this

// block_split: the block reductions' static shared memory (rounded up), and rows from this
// many bytes on, below which a warp or a small block holds the row in registers anyway.
constexpr std::int64_t kSplitStaticSmem = 512;
constexpr std::int64_t kSplitMinRowBytes = 8 * 1024;
// The heuristic picks block_split for rows from this many bytes on (narrower ones measured
// level with a block of registers: bf16 8192x4096 on the H100, 47.0 us both).
constexpr std::int64_t kSplitPickRowBytes = 32 * 1024;

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

int pow2_ceil(std::int64_t value) {
  int p = 1;
  while (p < value && p < (1 << 30)) p *= 2;
  return p;
}

bool is_pow2(int value) { return value > 0 && (value & (value - 1)) == 0; }

std::int64_t values_per_thread(std::int64_t cols, int pack, int threads) {
  return ceil_div(cols, std::int64_t{threads} * pack) * pack;
}

std::int64_t cluster_slice(std::int64_t cols, int pack, int cluster) {
  return ceil_div(ceil_div(cols, cluster), pack) * pack;
}

int target_values(const RowwiseProblem& p, int pack) {
  return std::max(kTargetBytesPerThread / size_of(p.in_dtype), pack);
}

/// Mirrors holds_input_words in kernel_sources/held_row.cuh: 16-bit inputs in packs of whole
/// 32-bit words, a row over more than a warp, stay as loaded, two values a register.
bool holds_input_words(const RowwiseProblem& p, int pack, int group) {
  return size_of(p.in_dtype) == 2 && pack % 2 == 0 && group > 32;
}

/// Registers a thread spends holding `values` of the row.
std::int64_t held_registers(const RowwiseProblem& p, int pack, int group, std::int64_t values) {
  return holds_input_words(p, pack, group) ? ceil_div(values, 2) : values;
}

/// Registers a thread of `threads` (each its own share of `cols`) spends on its values.
std::int64_t held_registers_for(const RowwiseProblem& p, std::int64_t cols, int pack, int threads) {
  return held_registers(p, pack, threads, values_per_thread(cols, pack, threads));
}

/// How a block_split config sits on an SM: a thread's packs, the registers its held ones take,
/// and the blocks an SM holds at once by registers (as block_split.cuh's SplitShape tells the
/// compiler), threads and shared memory.
struct SplitFit {
  std::int64_t packs = 0;
  std::int64_t held_registers = 0;
  std::int64_t blocks_per_sm = 0;
};

/// Registers a thread of block_split needs beside its held values: split_other_registers in
/// block_split.cuh.
int split_other_registers(RowOp op) { return op == RowOp::kReduceScale ? 32 : 24; }

SplitFit split_fit(const RowwiseProblem& p, const DeviceProps& d, const KernelConfig& c) {
  SplitFit fit;
  fit.packs = split_thread_packs(p.cols, c.pack, c.threads);
  fit.held_registers = held_registers(p, c.pack, c.threads, (fit.packs - c.staged) * c.pack);
  const std::int64_t by_registers =
      65536 / (std::int64_t{c.threads} * (fit.held_registers + split_other_registers(p.op)));
  const std::int64_t by_threads = d.max_threads_per_sm / c.threads;
  const std::int64_t block_smem = split_smem_bytes(p, c) + d.reserved_smem_per_block + kSplitStaticSmem;
  const std::int64_t by_smem = d.max_smem_per_sm / block_smem;
  fit.blocks_per_sm = std::min({by_registers, by_threads, by_smem});
  return fit;
}

/// block_split over `threads`, staging the most packs that still keep the most blocks resident:
/// every pack staged in shared memory frees registers, every pack held frees shared memory.
/// Measured on the H100 (bf16, softmax): 1024x32000 over 512 threads 46.0 us with 6 of 8 packs
/// staged (four blocks an SM) against 47.5 with 3 (three blocks); 512x65536 over 1024 threads
/// level with 6 or 7 of 8 (two blocks).
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

/// block_split at 256, 512 and 1024 threads, each fitted, the most threads resident on an SM
/// first; the fewer threads first on a tie (their barriers wait on fewer warps).
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

/// Whether block_split's config keeps every thread slot of an SM resident.
bool fills_sm(const RowwiseProblem& p, const DeviceProps& d, const KernelConfig& c) {
  return split_fit(p, d, c).blocks_per_sm * c.threads >= d.max_threads_per_sm;
}

/// The fewest blocks per row (a power of two, at most 16) whose slices hold at most
/// `max_slice_bytes` of the row.
int smallest_cluster(std::int64_t row_bytes, std::int64_t max_slice_bytes) {
  int cluster = 1;
  while (cluster < 16 && ceil_div(row_bytes, cluster) > max_slice_bytes) cluster *= 2;
  return cluster;
}

/// Lanes per row of a stream tile of short rows: a pack each, 8 to 32.
int stream_group(const RowwiseProblem& p, int pack) {
  return std::clamp(pow2_ceil(ceil_div(p.cols, pack)), 8, 32);
}

/// Threads for a block that holds `values` in registers: aim at `target` values per thread,
/// stay within [min_threads, max_threads] unless the values would not fit, then go up to 1024.
int block_threads_for(const RowwiseProblem& p, std::int64_t values, int pack, int min_threads, int max_threads,
                      int target) {
  int threads = std::clamp(pow2_ceil(ceil_div(values, target)), min_threads, max_threads);
  while (threads < 1024 && held_registers_for(p, values, pack, threads) > kMaxHeldRegisters)
    threads *= 2;
  return threads;
}

/// The ring kernel over the fewest blocks per row whose slices fit two chunks.
KernelConfig ring_config(const RowwiseProblem& p) {
  const int cluster = smallest_cluster(p.cols * size_of(p.in_dtype), kRingMaxSliceBytes);
  return {Algorithm::kRing, 16 / size_of(p.in_dtype), kRingThreads, kRingThreads, cluster};
}

/// The ring as the heuristic takes it: over fp32 rows in two consumer groups of 256, which
/// measured ahead of one group of 512 or level on the H100 (64x262144 over clusters of 16: 51.0
/// against 52.2 us, log_softmax 49.9-50.7 against 51.9-52.2; 64x128256 over clusters of 8:
/// 27.0-27.3 both); over 16-bit rows, more than twice as many as SMs, in one group.
KernelConfig ring_pick(const RowwiseProblem& p) {
  KernelConfig ring = ring_config(p);
  if (size_of(p.in_dtype) == 4) ring.group = kRingGroupThreads;
  return ring;
}

/// The ring's two consumer groups of 256 over the fewest blocks per row whose slices are one
/// chunk (a cluster of up to 16).
KernelConfig two_group_ring(const RowwiseProblem& p) {
  const int cluster = smallest_cluster(p.cols * size_of(p.in_dtype), kRingChunkBytes);
  return {Algorithm::kRing, 16 / size_of(p.in_dtype), 2 * kRingGroupThreads, kRingGroupThreads, cluster};
}

/// Whether the rows' blocks, `cluster` a row, fill at least half the SMs.
bool fills_half_the_sms(const RowwiseProblem& p, const DeviceProps& d, int cluster) {
  return p.rows * cluster * 2 >= d.sm_count;
}

/// Whether `ring` is valid and each block's slice is at most `max_chunks` chunks.
bool ring_within(const RowwiseProblem& p, const DeviceProps& d, const KernelConfig& ring, int max_chunks) {
  return why_not_rowwise(p, d, ring).empty() && ring_shape(p, ring).chunks <= max_chunks;
}

/// ring_within, and the ring's blocks fill at least half the SMs.
bool ring_fits(const RowwiseProblem& p, const DeviceProps& d, const KernelConfig& ring, int max_chunks) {
  return ring_within(p, d, ring, max_chunks) && fills_half_the_sms(p, d, ring.cluster);
}

/// The ring for rows few enough for the cluster kernel, where it measured ahead of it: the
/// dispatcher plans a call for the top of its power-of-two bucket, so a rule on planned rows
/// covers every row count of the bucket. The ring's resident clusters then walk two or more rows
/// each, overlapping one row's writes with the next rows' reads, where the cluster kernel takes
/// its rows in rounds of blocks that read, then write. Over fp32 rows the ring's pick (two
/// groups, slices of up to two chunks), over 16-bit rows its two groups over slices of one chunk:
///  - rows wider than 128 KB (16-bit past 65536 columns, fp32 past 32768), planned as 32 (calls
///    of 17-32 rows). Measured on the H100 (graph medians, us, softmax unless named): 32 rows
///    0.74-1.00x the cluster kernel's time (bf16 32x151936 11.75 against 15.75, 32x262144 16.6
///    against 21.2; fp32 32x131072 14.6 against 19.7, 32x40000 7.9 against 9.8; log_softmax
///    0.73-1.01x); 17-28 rows 0.78-1.04x, but 1.03-1.14x at 17-20 rows of bf16 100000-128256
///    and fp32 65536 columns.
///  - fp32 rows so wide that the ring needs clusters of 16, planned as 16 or more (calls of 9-32
///    rows): 12-32 rows of 151936-262144 columns 0.75-0.96x (the tuner's medians; 16x151936
///    11.97 against 15.20). 16-bit rows planned as 16 keep the cluster kernel: the ring 0.95-1.25x
///    at 16 rows, 1.04-1.30x at 9-12.
std::optional<KernelConfig> few_rows_ring(const RowwiseProblem& p, const DeviceProps& d) {
  const bool fp32 = size_of(p.in_dtype) == 4;
  const KernelConfig ring = fp32 ? ring_pick(p) : two_group_ring(p);
  if (!ring_within(p, d, ring, fp32 ? 2 : 1)) return std::nullopt;
  if (p.rows >= 32 && p.cols * size_of(p.in_dtype) > kFewRowsRingMinRowBytes) return ring;
  if (fp32 && ring.cluster == 16 && p.rows >= 16) return ring;
  return std::nullopt;
}

/// Where the ring kernel measured ahead of the other wide-row kernels, or level, on the H100:
/// 16-bit rows more than twice as many as SMs, fp32 rows no more than that.
bool ring_measured_ahead(const RowwiseProblem& p, const DeviceProps& d) {
  const bool many_rows = p.rows > 2 * std::int64_t{d.sm_count};
  return size_of(p.in_dtype) == 2 ? many_rows : !many_rows;
}

/// block_online over `cluster` blocks per row: 1024 threads for 1 or 2 blocks, 256 for more
/// (measured best on the H100 at 64x262144 and 512x65536).
KernelConfig online_config(int pack, int cluster) {
  const int threads = cluster <= 2 ? 1024 : 256;
  return {Algorithm::kBlockOnline, pack, threads, threads, cluster};
}

/// Rows too wide for one block's registers, on sm_90 (measured on the H100 at 512x65536,
/// 64x262144 and 64x128256, us for softmax unless named):
///  - 16-bit rows, more than twice as many as SMs: the ring kernel (bf16 512x65536: 49.1
///    against 54.2 read twice);
///  - fewer 16-bit rows: the ring's two consumer groups over slices of one chunk, launched as
///    dependents (bf16 64x262144: 29.7-30.0 against 33.4 read twice; 64x131072 17.4 against
///    19.0; 128x131072 29.2 against 31.3; 128x262144 51.7 against 69.6; 256x131072 51.6
///    against 59.3; 256x262144 103.4 against 135.4), where its blocks fill half the SMs; else
///    two passes, the second read from L2, a block per row or a cluster (33, against 48
///    streamed);
///  - fp32 rows, while they are few: the ring kernel (64x262144 over clusters of 16: 47.7
///    against 58.9 read twice; 64x128256 over clusters of 8: 26.1 against 33.6), else two
///    passes over clusters of 8;
///  - more fp32 rows: slices of up to 64 KB in shared memory over a cluster of 512-thread
///    blocks, a cluster a row (f32 512x65536, clusters of 4: 93.8 against 102.3 on resident
///    clusters walking the rows; 100.3 for slices of 32 KB over 8 blocks, resident; 96.8 with
///    slices in registers over 4 blocks, a cluster a row; 103-108 for the ring kernel).
KernelConfig wide_row_config(const RowwiseProblem& p, const DeviceProps& d, int pack) {
  const KernelConfig ring = ring_pick(p);
  if (ring_measured_ahead(p, d) && ring_within(p, d, ring, 2)) return ring;
  if (size_of(p.in_dtype) == 2) {
    if (const KernelConfig two_groups = two_group_ring(p); ring_fits(p, d, two_groups, 1)) return two_groups;
    int cluster = 1;  // enough blocks for half the SMs
    while (cluster < 16 && !fills_half_the_sms(p, d, cluster)) cluster *= 2;
    return online_config(pack, cluster);
  }
  if (p.rows <= 2 * std::int64_t{d.sm_count}) return online_config(pack, 8);
  const int cluster = std::max(2, smallest_cluster(p.cols * size_of(p.in_dtype), kTargetSliceBytes));
  return {Algorithm::kClusterSmem, pack, 512, 512, cluster, ClusterGrid::kPerRow};
}

KernelConfig fit_warp(const RowwiseProblem& p, int pack) {
  const int group = std::min(32, pow2_ceil(ceil_div(p.cols, pack)));
  return {Algorithm::kWarp, pack, 128, group, 1};
}

/// Whether a block of 16-bit words takes 256 to 512 threads rather than floats' 128 to 1024: once
/// 128 threads would hold more than 16 values each, fewer registers alone not being the aim.
/// Measured on the H100 (two machines, softmax, us): bf16 8192x4096 46.9 at 256 threads against
/// 49.5 at 128; bf16 2048x16384 47.4 at 512 against 49.2 at 256 (the other machine had 256
/// ahead by 0.6%); bf16 1024x32000 49.3 at 512 (64 values, two blocks an SM) against 49.9 at
/// 1024 (one block an SM; 46.9 against 50.0 on the other machine).
bool narrows_word_blocks(const RowwiseProblem& p, int pack) {
  return holds_input_words(p, pack, 1024) && values_per_thread(p.cols, pack, 128) > 16;
}

KernelConfig fit_block(Algorithm algorithm, const RowwiseProblem& p, int pack) {
  if (algorithm != Algorithm::kBlockRegs) return {algorithm, pack, 1024, 1024, 1};
  const bool narrow = narrows_word_blocks(p, pack);
  const int threads =
      block_threads_for(p, p.cols, pack, narrow ? 256 : 128, narrow ? 512 : 1024, target_values(p, pack));
  return {algorithm, pack, threads, threads, 1};
}

KernelConfig fit_cluster(const RowwiseProblem& p, const DeviceProps& device, int pack) {
  // The smallest cluster whose slices fit the target and whose blocks fill the device, but no
  // more than 8 blocks where the rows would take clusters of 16 past one round: such a cluster
  // needs one GPC (up to 18 SMs), so an H100 holds only 7 at once. Measured there (softmax, us,
  // the tuner's medians) at 8-32 rows of 32000-262144 columns, where clusters of 16 had been the
  // pick: 1.02-1.64x faster on all 25 shapes it changed (bf16 8x151936 9.12 -> 6.34, 16x151936
  // 15.05 -> 9.17, fp32 8x128256 10.33 -> 7.35), and the tuner's winner at 14 of them.
  const int max_cluster = p.rows * 18 > device.sm_count ? 8 : 16;
  int cluster = 2;
  while (cluster < max_cluster) {
    const bool slice_small =
        cluster_slice(p.cols, pack, cluster) <= kMaxClusterThreads * target_values(p, pack);
    const bool fills_device = p.rows * cluster >= device.sm_count;
    if (slice_small && fills_device) break;
    cluster *= 2;
  }
  // Clusters of 16 hold one row an SM: 256 threads, more where the values would not fit 32
  // registers. Measured there at 1-4 rows (softmax, the tuner's medians, us): bf16 1x151936 4.87
  // against 5.63 at 512 threads, 1x262144 5.78 against 6.30, fp32 1x128256 5.31 against 5.92;
  // 128 threads were slower (bf16 1x128256 6.10 against 4.67 at 256).
  const int max_threads = cluster == 16 ? kOneRowAnSmThreads : kMaxClusterThreads;
  const int threads = block_threads_for(p, cluster_slice(p.cols, pack, cluster), pack, 128, max_threads,
                                        target_values(p, pack));
  return {Algorithm::kCluster, pack, threads, threads, cluster};
}

/// A row slice per block in shared memory: one block per row when the row fits the target
/// slice, else the smallest cluster whose slices do.
KernelConfig fit_smem(const RowwiseProblem& p, int pack, bool allow_cluster) {
  const int cluster = allow_cluster ? smallest_cluster(p.cols * size_of(p.in_dtype), kTargetSliceBytes) : 1;
  const Algorithm algorithm = cluster == 1 ? Algorithm::kBlockSmem : Algorithm::kClusterSmem;
  return {algorithm, pack, 512, 512, cluster};
}

KernelConfig fit_stream(const RowwiseProblem& p, const DeviceProps& d, int pack) {
  const std::int64_t row_bytes = p.cols * size_of(p.in_dtype);
  if (row_bytes <= kStreamShortRowBytes) {
    const int group = stream_group(p, pack);
    const std::int64_t slice_bytes = stream_slice_cols(p.cols, p.in_dtype, 1) * size_of(p.in_dtype);
    int rows_per_tile = kStreamThreads / group;
    while (rows_per_tile * group > 32 && rows_per_tile * slice_bytes > kStreamTileBytes) rows_per_tile /= 2;
    return {Algorithm::kStream, pack, rows_per_tile * group, group, 1};
  }
  // Split while a slice is over the target or the rows leave SMs idle, as long as every thread
  // of the smaller slice still has a pack to work on.
  int cluster = 1;
  while (cluster < 16 &&
         (ceil_div(row_bytes, cluster) > kStreamSliceBytes || p.rows * cluster < d.sm_count) &&
         stream_slice_cols(p.cols, p.in_dtype, cluster * 2) >= std::int64_t{kStreamThreads} * pack)
    cluster *= 2;
  return {Algorithm::kStream, pack, kStreamThreads, kStreamThreads, cluster};
}

/// Whether a thread of `c` holds its share of `cols` in at most `limit` registers.
bool fits_registers(const RowwiseProblem& p, const KernelConfig& c, std::int64_t cols, int limit) {
  return held_registers_for(p, cols, c.pack, c.group) <= limit;
}

std::string why_not_threads(const KernelConfig& c) {
  if (c.threads < 32 || c.threads > 1024 || c.threads % 32 != 0)
    return "threads must be a multiple of 32 in [32, 1024]";
  if (!takes_row_groups(c.algorithm) && c.algorithm != Algorithm::kRing && c.group != c.threads)
    return "group must equal threads for block algorithms";
  if (!takes_cluster_size(c.algorithm) && c.cluster != 1) return "cluster must be 1";
  if (c.cluster_grid != ClusterGrid::kResident && !takes_cluster_grid(c.algorithm))
    return "cluster_grid per_row applies to the cluster and cluster_smem algorithms only";
  if (c.staged != 0 && c.algorithm != Algorithm::kBlockSplit) return "staged applies to block_split only";
  return {};
}

std::string why_not_stream(const RowwiseProblem& p, const DeviceProps& d, const KernelConfig& c) {
  if (d.arch < 90) return "stream: needs sm_90 or newer (bulk async copies)";
  if (c.cluster < 1 || c.cluster > 16) return "stream: 1..16 blocks per row";
  const bool row_per_block = c.group == c.threads;
  if (!row_per_block && (!is_pow2(c.group) || c.group < 8 || c.group > 32))
    return "stream: group must be threads, or a power of two in [8, 32]";
  if (!row_per_block && c.cluster != 1) return "stream: a cluster takes one row per block";
  if (p.max_pack * size_of(p.in_dtype) < 16)
    return "stream: input rows must start on 16-byte boundaries (pointer and stride)";
  if ((c.cluster - 1) * stream_slice_cols(p.cols, p.in_dtype, c.cluster) >= p.cols)
    return "stream: too many blocks per row for " + std::to_string(p.cols) + " columns";
  const std::int64_t bytes = stream_smem_bytes(p, c);
  if (bytes + kSmemReserve > d.max_smem_per_block)
    return "stream: two stages need " + std::to_string(bytes) +
           " bytes of shared memory; the device has " + std::to_string(d.max_smem_per_block);
  return {};
}

std::string why_not_ring(const RowwiseProblem& p, const DeviceProps& d, const KernelConfig& c) {
  if (d.arch < 90) return "ring: needs sm_90 or newer (bulk async copies)";
  if (c.pack * size_of(p.in_dtype) != 16) return "ring: pack must be 16 bytes (bulk copies move 16-byte units)";
  if (c.cluster < 1 || c.cluster > 16) return "ring: 1..16 blocks per row";
  if (size_of(p.in_dtype) != size_of(p.out_dtype))
    return "ring: input and output elements must have the same size (outputs take the inputs' places)";
  if (p.max_pack * size_of(p.in_dtype) < 16)
    return "ring: rows must start on 16-byte boundaries (pointers and strides)";
  if (c.group != c.threads && c.group * 2 != c.threads)
    return "ring: group must be threads (one consumer group) or threads / 2 (two taking turns)";
  if (c.group < 64 || c.group > 512 || kRingChunkBytes / 16 % c.group != 0)
    return "ring: group must be 64, 128, 256 or 512 threads (a chunk holds 2048 packs)";
  if (c.threads + kRingProducerThreads > 1024)
    return "ring: threads plus the producer warp must be at most 1024";
  const RingShape shape = ring_shape(p, c);
  if ((c.cluster - 1) * shape.slice_cols >= p.cols)
    return "ring: too many blocks per row for " + std::to_string(p.cols) + " columns";
  // 16-bit values beyond 64 a thread are held two to a register (row_ring.cuh).
  const int max_values = size_of(p.in_dtype) == 2 ? 2 * kHardMaxHeldRegisters : kHardMaxHeldRegisters;
  if (shape.values_per_thread > max_values)
    return "ring: more than " + std::to_string(max_values) + " values per thread (" +
           std::to_string(shape.values_per_thread) + ")";
  if (shape.ring_bytes + kSmemReserve > d.max_smem_per_block)
    return "ring: the ring needs " + std::to_string(shape.ring_bytes) +
           " bytes of shared memory; the device has " + std::to_string(d.max_smem_per_block);
  return {};
}

std::string why_not_split(const RowwiseProblem& p, const DeviceProps& d, const KernelConfig& c) {
  if (c.pack * size_of(p.in_dtype) < 4)
    return "block_split: an input pack must be at least 4 bytes (asynchronous copies move 4, 8 or 16)";
  const SplitFit fit = split_fit(p, d, c);
  if (c.staged < 1 || c.staged > fit.packs)
    return "block_split: staged must be 1.." + std::to_string(fit.packs) + " (a thread's packs)";
  const std::int64_t max_held = std::min<std::int64_t>(kHardMaxHeldRegisters,
                                                        65536 / c.threads - split_other_registers(p.op));
  if (fit.held_registers > max_held)
    return "block_split: the held packs take " + std::to_string(fit.held_registers) +
           " registers a thread; at most " + std::to_string(max_held) + " fit (stage more packs)";
  const std::int64_t bytes = split_smem_bytes(p, c);
  if (bytes + kSmemReserve > d.max_smem_per_block)
    return "block_split: the staged packs need " + std::to_string(bytes) +
           " bytes of shared memory; the device has " + std::to_string(d.max_smem_per_block);
  return {};
}

std::string why_not_algorithm(const RowwiseProblem& p, const DeviceProps& d,
                              const KernelConfig& c) {
  switch (c.algorithm) {
    case Algorithm::kWarp:
      if (!is_pow2(c.group) || c.group > 32) return "warp: group must be a power of two <= 32";
      if (c.threads % c.group != 0) return "warp: threads must be a multiple of group";
      if (!fits_registers(p, c, p.cols, kHardMaxHeldRegisters))
        return "warp: more than 64 values per thread";
      return {};
    case Algorithm::kBlockRegs:
      if (!fits_registers(p, c, p.cols, kHardMaxHeldRegisters))
        return "block_regs: more than 64 values per thread (128 of 16 bits, held two to a register)";
      return {};
    case Algorithm::kBlockSmem:
    case Algorithm::kClusterSmem: {
      if (c.algorithm == Algorithm::kClusterSmem) {
        if (d.arch < 90) return "cluster_smem: needs sm_90 or newer";
        if (c.cluster < 2 || c.cluster > 16) return "cluster_smem: 2..16 blocks per row";
        if (p.rows * c.cluster > 0x7fffffff) return "cluster_smem: too many rows for one grid";
      }
      const auto bytes = smem_slice_cols(p.cols, c.pack, c.cluster) * size_of(p.in_dtype);
      if (bytes + kSmemReserve > d.max_smem_per_block)
        return std::string(to_string(c.algorithm)) + ": a slice needs " + std::to_string(bytes) +
               " bytes of shared memory; the device has " + std::to_string(d.max_smem_per_block);
      return {};
    }
    case Algorithm::kBlockOnline:
      if (c.cluster < 1 || c.cluster > 16) return "block_online: 1..16 blocks per row";
      if (c.cluster > 1 && d.arch < 90) return "block_online: more than one block per row needs sm_90 or newer";
      if ((c.cluster - 1) * smem_slice_cols(p.cols, c.pack, c.cluster) >= p.cols)
        return "block_online: too many blocks per row for " + std::to_string(p.cols) + " columns";
      return {};
    case Algorithm::kCluster:
      if (d.arch < 90) return "cluster: needs sm_90 or newer";
      if (c.cluster < 2 || c.cluster > 16) return "cluster: 2..16 blocks per row";
      if (p.rows * c.cluster > 0x7fffffff) return "cluster: too many rows for one grid";
      if (!fits_registers(p, c, cluster_slice(p.cols, c.pack, c.cluster), kHardMaxHeldRegisters))
        return "cluster: more than 64 values per thread (128 of 16 bits, held two to a register)";
      return {};
    case Algorithm::kStream: return why_not_stream(p, d, c);
    case Algorithm::kRing: return why_not_ring(p, d, c);
    case Algorithm::kBlockSplit: return why_not_split(p, d, c);
    case Algorithm::kAuto: return "algorithm must be concrete";
  }
  return "unknown algorithm";
}

}  // namespace

std::string why_not_rowwise(const RowwiseProblem& p, const DeviceProps& d, const KernelConfig& c) {
  if (!is_pow2(c.pack) || c.pack > p.max_pack)
    return "pack " + std::to_string(c.pack) + " is not a power of two <= the alignment allows (" +
           std::to_string(p.max_pack) + ")";
  if (c.pack * std::max(size_of(p.in_dtype), size_of(p.out_dtype)) > 16)
    return "a pack is at most 16 bytes";
  if (std::string why = why_not_threads(c); !why.empty()) return why;
  return why_not_algorithm(p, d, c);
}

KernelConfig complete_rowwise_config(const RowwiseProblem& p, const DeviceProps& d,
                                     KernelConfig partial) {
  if (partial.algorithm == Algorithm::kAuto) return choose_rowwise_config(p, d);
  const int pack = partial.pack > 0 ? partial.pack : p.max_pack;
  KernelConfig fitted;
  switch (partial.algorithm) {
    case Algorithm::kWarp: fitted = fit_warp(p, pack); break;
    case Algorithm::kCluster: fitted = fit_cluster(p, d, pack); break;
    case Algorithm::kStream: fitted = fit_stream(p, d, pack); break;
    case Algorithm::kRing: fitted = ring_config(p); break;
    case Algorithm::kBlockSplit:
      fitted = partial.threads > 0 ? fit_split(p, d, pack, partial.threads) : fit_split(p, d, pack);
      break;
    case Algorithm::kClusterSmem:
      fitted = fit_smem(p, pack, true);
      fitted.algorithm = Algorithm::kClusterSmem;
      fitted.cluster = std::max(fitted.cluster, 2);
      break;
    default: fitted = fit_block(partial.algorithm, p, pack); break;
  }
  if (partial.threads > 0) fitted.threads = partial.threads;
  if (partial.group > 0) fitted.group = partial.group;
  else if (!takes_row_groups(partial.algorithm))
    fitted.group = fitted.threads;
  else if (partial.algorithm == Algorithm::kStream && fitted.group > 32)
    fitted.group = fitted.threads;
  if (partial.cluster > 0) fitted.cluster = partial.cluster;
  if (partial.staged > 0) fitted.staged = partial.staged;
  fitted.cluster_grid = partial.cluster_grid;
  return fitted;
}

KernelConfig choose_rowwise_config(const RowwiseProblem& p, const DeviceProps& d) {
  const int pack = p.max_pack;
  if (KernelConfig warp = fit_warp(p, pack); fits_registers(p, warp, p.cols, kMaxHeldRegisters))
    return warp;
  const bool few_rows = p.rows * 4 <= d.sm_count;
  const bool clusters = d.arch >= 90;
  const bool half_input = size_of(p.in_dtype) == 2;
  // Few wide rows: spread each row over a cluster's SMs (slices in registers), or most SMs
  // sit idle.
  if (clusters && few_rows && p.cols >= kClusterMinCols) {
    if (const std::optional<KernelConfig> ring = few_rows_ring(p, d)) return *ring;
    KernelConfig cluster = fit_cluster(p, d, pack);
    if (why_not_rowwise(p, d, cluster).empty() &&
        fits_registers(p, cluster, cluster_slice(p.cols, pack, cluster.cluster), kMaxHeldRegisters))
      return cluster;
  }
  // Rows of 32 KB or more that block_split holds with every thread slot of an SM resident.
  // Measured on the H100 (softmax, us): bf16 1024x32000 46.1 against 49.3 for a block of
  // registers, bf16 512x65536 48.3 against 51.7 for the ring kernel, bf16 2048x16384 46.8
  // against 47.3, fp32 2048x16384 91.2 against 92.5, fp32 1024x32000 91.4 against 91.9.
  if (p.cols * size_of(p.in_dtype) >= kSplitPickRowBytes) {
    const KernelConfig split = fit_split(p, d, pack);
    if (why_not_rowwise(p, d, split).empty() && fills_sm(p, d, split)) return split;
  }
  // Many rows that one block holds in registers. Measured on the H100: a block per row beats
  // a cluster per row up to 32K f32 columns (93 vs 105 us at 1024x32000). 16-bit rows that
  // need all 1024 threads (past 32K columns) went faster on the wide-row kernels (bf16
  // 512x65536: the ring kernel 51.5 us, 52.5 here).
  if (KernelConfig regs = fit_block(Algorithm::kBlockRegs, p, pack);
      fits_registers(p, regs, p.cols, kMaxHeldRegisters) && !(clusters && half_input && regs.threads == 1024))
    return regs;
  // Rows too wide for one block's registers, measured on the H100 at 512x65536 and 64x262144.
  if (clusters) {
    KernelConfig wide = wide_row_config(p, d, pack);
    if (why_not_rowwise(p, d, wide).empty()) return wide;
  }
  if (KernelConfig smem = fit_smem(p, pack, clusters); why_not_rowwise(p, d, smem).empty())
    return smem;
  return fit_block(Algorithm::kBlockOnline, p, pack);
}

namespace {

// The tuner's candidates: per algorithm, the few configs that measured runs (H100, H200) show
// can win, so that tuning a shape stays near a second. Packs come in two sizes because 8-byte
// accesses often beat 16-byte ones on wide rows (fewer bank conflicts, more loads per thread).

std::vector<int> candidate_packs(const RowwiseProblem& p) {
  if (p.max_pack >= 2) return {p.max_pack, p.max_pack / 2};
  return {p.max_pack};
}

/// Threads whose share of the row (or slice) is at least 8 values in at most 32 registers:
/// enough loads in flight, no spills.
std::vector<int> register_threads(const RowwiseProblem& p, std::int64_t cols, int pack) {
  std::vector<int> threads;
  for (int t : {128, 256, 512, 1024}) {
    const bool enough = values_per_thread(cols, pack, t) >= 8 || t == 128;
    if (enough && held_registers_for(p, cols, pack, t) <= kMaxHeldRegisters) threads.push_back(t);
  }
  return threads;
}

void add_register_candidates(const RowwiseProblem& p, int pack, std::vector<KernelConfig>& out) {
  if (KernelConfig warp = fit_warp(p, pack); fits_registers(p, warp, p.cols, kMaxHeldRegisters)) {
    out.push_back(warp);
    out.push_back({Algorithm::kWarp, pack, 256, warp.group, 1});
  }
  if (p.cols <= 32 * pack) return;  // narrower rows leave most of a block idle
  for (int threads : register_threads(p, p.cols, pack))
    out.push_back({Algorithm::kBlockRegs, pack, threads, threads, 1});
  // Up to 64 floats a thread at 256 threads: three blocks an SM still fit (80 registers).
  // Measured on the H100 at bf16 2048x16384 held as floats: 45 us against 50 at 512 threads.
  const std::int64_t registers = held_registers_for(p, p.cols, pack, 256);
  if (!holds_input_words(p, pack, 256) && registers > kMaxHeldRegisters && registers <= kHardMaxHeldRegisters)
    out.push_back({Algorithm::kBlockRegs, pack, 256, 256, 1});
}

/// With more rows than SMs, cluster kernels at the widest pack go on both grids (the second
/// runs the same compiled kernel, so it costs a timing, not a compile); with fewer, the resident
/// clusters take the rows in one or two rounds and the grids hardly differ. Which grid wins
/// varies: at f32 512x65536 a cluster a row took cluster over 4 blocks of 512 threads from
/// 101.7 to 96.8 us and cluster_smem over 8 blocks of 256 from 100.3 to 98.6, but cluster_smem
/// over 4 blocks of 256 from 100.3 to 103.3; at bf16 2048x16384 every cluster kernel lost 1-3%.
/// (The heuristic's pick for many fp32 rows, first among the candidates, is cluster_smem over
/// 512-thread blocks a cluster a row: 93.8 us there.)
void add_cluster_candidates(const RowwiseProblem& p, const DeviceProps& d, int pack,
                            std::vector<KernelConfig>& out) {
  const std::int64_t row_bytes = p.cols * size_of(p.in_dtype);
  auto add_both_grids = [&](KernelConfig config) {
    out.push_back(config);
    if (pack != p.max_pack || p.rows <= d.sm_count) return;
    config.cluster_grid = ClusterGrid::kPerRow;
    out.push_back(config);
  };
  for (int cluster : {2, 4, 8, 16}) {
    // Clusters of 16 fit the device a few at a time: measured behind with more rows than SMs.
    if (cluster == 16 && p.rows > d.sm_count) break;
    const std::int64_t slice = cluster_slice(p.cols, pack, cluster);
    for (int threads : register_threads(p, slice, pack)) {  // the fewest threads that hold it
      add_both_grids({Algorithm::kCluster, pack, threads, threads, cluster});
      break;
    }
    const std::int64_t slice_bytes = row_bytes / cluster;  // smaller ones measured far behind
    if (slice_bytes >= 32 * 1024 && slice_bytes <= 96 * 1024)
      add_both_grids({Algorithm::kClusterSmem, pack, 256, 256, cluster});
  }
}

void add_stream_candidates(const RowwiseProblem& p, int pack, std::vector<KernelConfig>& out) {
  const std::int64_t row_bytes = p.cols * size_of(p.in_dtype);
  if (row_bytes <= kStreamShortRowBytes) {
    const int group = stream_group(p, pack);
    for (int threads : {128, 256}) out.push_back({Algorithm::kStream, pack, threads, group, 1});
    return;
  }
  // The smallest cluster whose slice fits two stages in an SM's shared memory, and twice that.
  const int cluster = smallest_cluster(row_bytes, 96 * 1024);
  for (int c : {cluster, cluster * 2})
    if (c <= 16) out.push_back({Algorithm::kStream, pack, 256, 256, c});
}

/// The ring kernel over the fewest blocks per row whose slices fit two chunks, for the rows where
/// it measured ahead or level on the H100: 16-bit rows more than twice as many as SMs (bf16
/// 512x65536: 51.8 against 52.2 us for a block of words), fewer fp32 rows whose blocks fill at least
/// half the SMs; over fp32 rows in both layouts, the pick's two consumer groups and one group.
/// Twice as many blocks a row always measured behind (bf16 512x65536: 57.8 against 49.1 us; fp32
/// 64x128256: 31.1 against 26.1), and one more candidate takes some shapes' compiles past one
/// round on 16 cores.
///
/// 16-bit rows no more than twice as many as SMs get the two groups of 256 taking turns, over
/// blocks whose slices are one chunk (two_group_ring; where they fill half the SMs and the
/// heuristic reaches wide_row_config, its pick too). A single group waits on every row's
/// exchange there (bf16 64x262144 over clusters of 16: 29.5 us against 36.4 for one group of
/// 256, 35.4 for one of 512; launched as a dependent 29.6-30.0, against 31.8-32.1 for the
/// cluster kernel that tuning picked before). Where the cluster kernel is the pick (rows no more
/// than a quarter of the SMs) the ring is only a candidate: bf16 32x262144 17.1 against 24.7,
/// but 32x131072 15.4 against 11.9.
///
/// Where the two groups need clusters of 16, clusters of 15 and 14 whose slices still fit one
/// chunk are candidates too: an H100 holds 8 of them where it holds 7 of 16, and each width fills
/// its chunks differently, so which wins depends on the width (softmax, 64 rows, us, 16 / 15 /
/// 14 blocks: bf16 180000 20.5 / 18.9 / 20.2, 200000 22.4 / 22.5 / 20.7, 151936 17.9 / 18.0 /
/// 18.4, 229376 21.3 / 23.2 / 23.3).
void add_ring_candidate(const RowwiseProblem& p, const DeviceProps& d, std::vector<KernelConfig>& out) {
  const std::int64_t row_bytes = p.cols * size_of(p.in_dtype);
  if (row_bytes < kOnlineMinRowBytes) return;
  const KernelConfig ring = ring_config(p);
  if (fills_half_the_sms(p, d, ring.cluster) && ring_measured_ahead(p, d)) {
    out.push_back(ring_pick(p));
    out.push_back(ring);  // one group, where the pick has two
  }
  if (size_of(p.in_dtype) != 2 || p.rows > 2 * std::int64_t{d.sm_count}) return;
  const KernelConfig two_groups = two_group_ring(p);
  if (!fills_half_the_sms(p, d, two_groups.cluster)) return;
  out.push_back(two_groups);
  if (two_groups.cluster != 16) return;
  for (int cluster : {15, 14}) {
    KernelConfig narrower = two_groups;
    narrower.cluster = cluster;
    if (ring_within(p, d, narrower, 1)) out.push_back(narrower);
  }
}

/// block_split at the two thread counts that keep the most threads resident (fit_split), for
/// rows wider than a small block holds in registers. One block an SM never paid: its barriers
/// leave the SM without loads in flight (bf16 512x65536 over 512 threads: 54.6 us against 50.2
/// at two blocks an SM).
void add_split_candidates(const RowwiseProblem& p, const DeviceProps& d, std::vector<KernelConfig>& out) {
  if (p.cols * size_of(p.in_dtype) < kSplitMinRowBytes) return;
  int added = 0;
  for (const KernelConfig& c : ranked_splits(p, d, p.max_pack))
    if (added < 2 && split_fit(p, d, c).blocks_per_sm >= 2) out.push_back(c), ++added;
}

/// Rows read twice, the second time from L2: a block per row and, with no more rows than SMs,
/// clusters of 2 and 8 (online_config; clusters of 4 never won on the H100).
void add_online_candidates(const RowwiseProblem& p, const DeviceProps& d,
                           std::vector<KernelConfig>& out) {
  const std::int64_t row_bytes = p.cols * size_of(p.in_dtype);
  if (row_bytes < kOnlineMinRowBytes) return;
  out.push_back(online_config(p.max_pack, 1));
  if (d.arch < 90 || p.rows > d.sm_count) return;
  for (int cluster : {2, 8})
    if (row_bytes / cluster >= kOnlineMinSliceBytes) out.push_back(online_config(p.max_pack, cluster));
}

}  // namespace

std::vector<KernelConfig> rowwise_candidates(const RowwiseProblem& p, const DeviceProps& d) {
  // The heuristic's pick always comes first; the rest in a fixed order, invalid ones dropped.
  std::vector<KernelConfig> candidates;
  auto consider = [&](const KernelConfig& c) {
    if (why_not_rowwise(p, d, c).empty() &&
        std::find(candidates.begin(), candidates.end(), c) == candidates.end())
      candidates.push_back(c);
  };
  consider(choose_rowwise_config(p, d));
  const bool fits_one_block = held_registers_for(p, p.cols, p.max_pack, 1024) <= kMaxHeldRegisters;
  const bool few_rows = p.rows * 4 <= d.sm_count;
  std::vector<KernelConfig> configs;
  for (int pack : candidate_packs(p)) {
    add_register_candidates(p, pack, configs);
    if (d.arch >= 90 && p.cols >= kClusterMinCols && (!fits_one_block || few_rows))
      add_cluster_candidates(p, d, pack, configs);
    // The stream kernel overlaps one tile's loads with the last one's work: with fewer rows
    // than SMs there is no next tile (64x262144 on the H100: 49-81 us against 33-52).
    if (d.arch >= 90 && p.rows >= d.sm_count) add_stream_candidates(p, pack, configs);
  }
  add_split_candidates(p, d, configs);
  add_online_candidates(p, d, configs);
  if (d.arch >= 90) add_ring_candidate(p, d, configs);
  // Without clusters, a row in shared memory is the other way to hold rows too wide for one
  // block's registers (with clusters it measured far behind the cluster kernels).
  if (!fits_one_block && d.arch < 90) configs.push_back({Algorithm::kBlockSmem, p.max_pack, 512, 512, 1});
  for (const KernelConfig& c : configs) consider(c);
  return candidates;
}

DeviceProps nominal_device(int arch) {
  DeviceProps props;
  props.arch = arch;
  props.name = "nominal sm_" + std::to_string(arch);
  props.sm_count = arch >= 90 ? 132 : 108;
  props.max_smem_per_block = arch >= 90 ? 227 * 1024 : (arch == 80 ? 163 * 1024 : 99 * 1024);
  props.reserved_smem_per_block = 1024;
  props.max_smem_per_sm = props.max_smem_per_block + props.reserved_smem_per_block;
  props.max_threads_per_sm = arch == 86 || arch == 89 ? 1536 : 2048;
  props.l2_bytes = arch >= 90 ? 50 << 20 : 40 << 20;
  return props;
}

}  // namespace kjit
