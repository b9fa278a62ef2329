// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <string>

namespace kjit {

/// How a row-wise kernel holds and reduces a row.
enum class Algorithm : int {
  kAuto = 0,        ///< let the dispatcher choose
  kWarp = 1,        ///< a warp or part of one per row, the row in registers
  kBlockRegs = 2,   ///< a block per row, the row in registers
  kBlockSmem = 3,   ///< a block per row, the row in shared memory
  kBlockOnline = 4, ///< a block (or, sm_90+, a cluster) per row, online (max, sum), the row read
                    ///< twice, the second time from L2
  kCluster = 5,     ///< a thread-block cluster per row (sm_90+), slices in registers
  kClusterSmem = 6, ///< a thread-block cluster per row (sm_90+), slices in shared memory
  kStream = 7,      ///< resident blocks (sm_90+) stream tiles of rows through shared memory by
                    ///< bulk async copies, the next tile in flight; a cluster per row if cluster > 1
  kRing = 8,        ///< resident blocks (sm_90+): a producer warp keeps a ring of 32 KB chunks of
                    ///< the next rows in flight by bulk copies while `threads` consumer threads
                    ///< hold the current row slice in registers, in one group or two taking
                    ///< turns over the rows (`group`); a cluster per row if cluster > 1
  kBlockSplit = 9,  ///< a block per row: `staged` packs a thread copied to shared memory
                    ///< asynchronously, the rest of its share in registers
  kFlatTile = 10,   ///< dense rows of up to 256 columns: a block's consecutive rows as one span
                    ///< moved in 16-byte units, split into rows on chip, `group` lanes a row
};

/// "auto", "warp", "block_regs", "block_smem", "block_online", "cluster", "cluster_smem",
/// "stream", "ring", "block_split", "flat_tile".
const char* to_string(Algorithm algorithm) noexcept;
/// Parses the names above; throws Error(kErrorInvalidArgument) otherwise.
Algorithm parse_algorithm(const std::string& text);

/// How the grid of a cluster kernel (kCluster, kClusterSmem) covers the rows.
enum class ClusterGrid : int {
  kResident = 0,  ///< the clusters that fit at once, each walking the rows in a fixed order
  kPerRow = 1,    ///< one cluster a row: the hardware hands rows to SMs as they free up
};

/// "resident", "per_row".
const char* to_string(ClusterGrid grid) noexcept;
/// Parses the names above; throws Error(kErrorInvalidArgument) otherwise.
ClusterGrid parse_cluster_grid(const std::string& text);

/// One point of a kernel's configuration space: a value type, the unit of tuning and caching.
/// Zero fields mean "choose for me" when a config is handed to the runtime to force a variant.
struct KernelConfig {
  Algorithm algorithm = Algorithm::kAuto;
  int pack = 0;     ///< elements per vector access (up to 16 bytes; kFlatTile: 1, its spans move
                    ///< in 16-byte units whatever the width)
  int threads = 0;  ///< threads per block (kRing: consumer threads; the block has a producer warp more)
  int group = 0;    ///< threads per row (kWarp, kFlatTile: 1..32; kStream: 8..32 or threads; kRing:
                    ///< threads, or threads / 2 for two consumer groups; else == threads)
  int cluster = 0;  ///< blocks per row (kCluster, kClusterSmem: 2..16; kStream, kBlockOnline,
                    ///< kRing: 1..16; else 1)
  /// kCluster, kClusterSmem only; the other algorithms' grids are fixed by their design. Not a
  /// template argument: both grids run the same compiled kernel.
  ClusterGrid cluster_grid = ClusterGrid::kResident;
  /// kBlockSplit only: packs of a thread's share staged in shared memory (the rest are held in
  /// registers); 0 elsewhere, or "choose for me".
  int staged = 0;
  /// kWarp, kBlockRegs, kBlockSplit, kBlockOnline only: each row (or cluster slice) is laid over
  /// its own grid of vectors from its address at run time, whole vectors moved as one aligned
  /// access and the head and tail element by element, so that `pack` is not bound by the
  /// alignment of the pointers and strides.
  bool peel = false;

  bool operator==(const KernelConfig& other) const noexcept;
  bool operator!=(const KernelConfig& other) const noexcept { return !(*this == other); }
  /// e.g. "warp pack=4 threads=128 group=32 cluster=1"; " grid=per_row" follows for kPerRow,
  /// " staged=N" for kBlockSplit, " peel" for peeled rows.
  std::string to_string() const;
  /// Compact JSON object text, e.g. {"algorithm":"warp","pack":4,...}.
  std::string to_json() const;
  /// Inverse of to_json; throws Error(kErrorInvalidArgument) on malformed text.
  static KernelConfig from_json(const std::string& text);
};

/// Hash for unordered containers.
struct KernelConfigHash {
  std::size_t operator()(const KernelConfig& config) const noexcept;
};

/// How a fused softmax + top-K kernel holds a row.
enum class TopkAlgorithm : int {
  kAuto = 0,      ///< let the dispatcher choose
  kStream = 1,    ///< tiles stream through; shared memory keeps the keys above a rising threshold
  kResident = 2,  ///< the row in registers over a block or cluster: a radix select, then one sort
};

/// "auto", "stream", "resident".
const char* to_string(TopkAlgorithm algorithm) noexcept;
/// Parses the names above; throws Error(kErrorInvalidArgument) otherwise.
TopkAlgorithm parse_topk_algorithm(const std::string& text);

/// One point of the fused softmax + top-K configuration space. Zero fields (and kAuto) mean
/// "choose for me".
struct TopkConfig {
  int pack = 0;     ///< elements per vector load (up to 16 bytes)
  int threads = 0;  ///< threads per block
  int unroll = 0;   ///< packs each thread loads per step (kStream: bytes in flight) or holds
                    ///< (kResident: its whole share of the row)
  int cluster = 0;  ///< blocks per row: 1, or 2..16 as a thread-block cluster (sm_90+)
  TopkAlgorithm algorithm = TopkAlgorithm::kAuto;

  bool operator==(const TopkConfig& other) const noexcept;
  bool operator!=(const TopkConfig& other) const noexcept { return !(*this == other); }
  /// e.g. "topk stream pack=4 threads=512 unroll=4 cluster=16".
  std::string to_string() const;
  /// Compact JSON object text, e.g. {"algorithm":"stream","pack":4,"threads":512,"unroll":4,
  /// "cluster":8}. A text without "algorithm" (a record from before kResident) reads as kStream.
  std::string to_json() const;
  /// Inverse of to_json; throws Error(kErrorInvalidArgument) on malformed text.
  static TopkConfig from_json(const std::string& text);
};

/// One point of the attention configuration space (one kernel, kjit::attention_tile). Zero
/// fields mean "choose for me".
struct AttentionConfig {
  int warps = 0;     ///< warps a problem: they share its 16-row query strips
  int problems = 0;  ///< problems a block holds at once, each with its own warps and buffers
  int stages = 0;    ///< buffers a problem group cycles: 2 loads the next problem's K and V
                     ///< while the current one computes, 1 does not

  bool operator==(const AttentionConfig& other) const noexcept;
  bool operator!=(const AttentionConfig& other) const noexcept { return !(*this == other); }
  /// e.g. "attention warps=4 problems=2 stages=2".
  std::string to_string() const;
  /// Compact JSON object text, e.g. {"warps":4,"problems":2,"stages":2}.
  std::string to_json() const;
  /// Inverse of to_json; throws Error(kErrorInvalidArgument) on malformed text.
  static AttentionConfig from_json(const std::string& text);
};

}  // namespace kjit
