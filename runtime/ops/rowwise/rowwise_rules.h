// SPDX-License-Identifier: Apache-2.0
// The named rules of the row-wise heuristics that the pick, the candidates and the validity
// check share: device traits and thresholds, each with the reason it holds. The measurements
// behind them are in bench/RESULTS.md and docs/experiments/.
#pragma once

#include <algorithm>
#include <cstdint>

#include "kernel_sources/row_layout.cuh"
#include "kjit/types.hpp"
#include "runtime/driver/context.h"
#include "runtime/ops/rowwise/rowwise_problem.h"

namespace kjit::rowwise {

/// Static shared memory of the block reductions, kept free beside a kernel's dynamic share.
constexpr std::int64_t kSmemReserve = 2048;
/// Below this many columns a cluster's cross-block exchange costs more than it brings.
constexpr std::int64_t kClusterMinCols = 4096;
/// Rows read twice (block_online) are candidates from this many bytes on, each block of a
/// cluster with a slice of at least kOnlineMinSliceBytes.
constexpr std::int64_t kOnlineMinRowBytes = 32 * 1024;
constexpr std::int64_t kOnlineMinSliceBytes = 16 * 1024;
/// block_online's slices: the pick's hold at most kOnlineMaxSliceCols; a block takes 1024 threads
/// for slices of kOnlineFullBlockSliceBytes or more, else 256. On the H100, over 1-16 blocks a row
/// at 256, 512 and 1024 threads (seven shapes, 53 KB to 3.2 MB rows, 16-bit and fp32):
///  - at 1024 threads the fewest blocks whose slices hold 128K columns ran fastest at every shape,
///    and half as many blocks 7-20% slower;
///  - fewer rows take more blocks until they fill half the SMs (fills_half_the_sms): at the 7 sweep
///    shapes (9-81 rows) where filling all the SMs took twice the blocks, half ran 4-18 points of
///    copy faster at 6 and 2 points slower at 1;
///  - 1024 threads (about 64 registers: one block an SM) ran ahead of 256 from slices of about
///    32K 16-bit columns on (256 for every cluster of 4 or more, the earlier rule, ran 10-20% slower
///    at the block counts picked), and behind it below; dense fp32 rows peeled, slices of 25K
///    columns (100 KB), ran 5-8% faster at 1024 (40 and 64 x 50257), so the rule counts bytes;
///  - 512 threads take about 72 registers, so one block an SM, half the threads of 1024 (256 take
///    105, two blocks an SM): up to 19% slower than 1024 over fp32 rows at 1 and 2 blocks a row,
///    12 points of copy at bf16 -> fp32 488 x 55793 (docs/experiments/wide-row-kernels.md).
constexpr std::int64_t kOnlineMaxSliceCols = 128 * 1024;
constexpr std::int64_t kOnlineFullBlockSliceBytes = 64 * 1024;
/// Rows per SM past which block_online, a block a row, kept 16-bit rows to fp32 that the peeled
/// cluster kernel takes below (cluster_rows_to_fp32 in rowwise_pick.cpp).
constexpr std::int64_t kOnlineRowABlockRows = 16;
/// block_split is a candidate from this many bytes a row on (a warp or a small block holds
/// narrower rows in registers anyway), and the pick from kSplitPickRowBytes on (narrower rows
/// run level with a block of registers).
constexpr std::int64_t kSplitMinRowBytes = 8 * 1024;
constexpr std::int64_t kSplitPickRowBytes = 32 * 1024;
/// Few rows wider than this take the ring rather than the cluster kernel (few_rows_ring).
constexpr std::int64_t kFewRowsRingMinRowBytes = 128 * 1024;
/// Clusters just under 16 blocks whose slices still fit one chunk: the H100's GPCs hold one more
/// of them at once than of 16 (8 against 7), and each width fills its chunks differently.
constexpr int kNearlyFullClusters[] = {15, 14};

/// The warp kernel's group of lanes a row (warp_group): the fewest whose load of a row spans a
/// 32-byte sector, with at most kWarpGroupMaxLaneBytes of the row a lane, so that a warp takes
/// several narrow rows at once. On the H100 (`kjit tune --full`, 49 calls of 8-1000 columns), a
/// whole warp a row ran up to 1.35x the time of the best smaller group: bf16 200000 x 160 61.5 us
/// against 45.4 (16 lanes left 12 idle), bf16 197376 x 257 at pack 1 89.2 against 76.4; narrower
/// spans than a sector ran up to 2.6x slower (f16 65536 x 49, 4 lanes of pack 1: 19.1 against 7.7)
/// and more bytes a lane up to 2x (fp32 151296 x 197, 8 lanes: 98 against 81). A lane's bytes
/// count the wider of the input and output types (bf16 772260 x 216 to fp32, over the shape sweep:
/// 96 -> 89% of copy on 16 lanes of 64 output bytes).
constexpr int kWarpGroupMinSpanBytes = 32;
constexpr int kWarpGroupMaxLaneBytes = 48;
/// Lanes whose accesses (of the wider side) are single 4-byte words hold at most this many bytes:
/// fp32 rows at pack 1 ran slowest of the groups at 40 bytes a lane (fp32 59136 x 77, 8 lanes:
/// 14.7 us against 13.7 at 16; over the shape sweep fp32 819214 x 76 of odd strides, 69 -> 59% of
/// copy), and bf16 rows to fp32 at pack 1 lost at 52 (25770 x 201: 83 -> 77%).
constexpr int kWarpGroupMaxWordLaneBytes = 32;
/// Rows of whole 16-byte packs on every lane keep a whole row's lanes from this many bytes on
/// (bf16 65536 x 128: 12.2 us at 16 lanes, 12.4 at 8).
constexpr std::int64_t kWarpWholeGroupMinRowBytes = 256;

/// The widest pack the element sizes allow (16 bytes of the wider type), whatever the alignment.
inline int widest_pack(const RowwiseProblem& p) {
  return kMaxPackBytes / std::max(size_of(p.in_dtype), size_of(p.out_dtype));
}

/// Rows whose pointers or strides keep them off the widest pack's alignment.
inline bool misaligned_rows(const RowwiseProblem& p) { return p.max_pack < widest_pack(p); }

/// Rows off the alignment that block_online reads twice are peeled (KernelConfig::peel) where
/// their inputs are 16-bit and their own pack moves under 8 bytes, or where they are dense fp32.
/// On the H100 (shape sweep, one seed), 30 of 33 16-bit calls of pack 1 ran 3-32 points of copy
/// faster peeled at the widest pack, the others within a point, and 80 bf16 rows of pack 4 ran 15
/// points slower at pack 8. Dense fp32 rows of 50257-250001 columns at 40-256 rows ran 1.25-2.07x
/// the fastest candidate's time at pack 1 and 1.0-1.38x peeled; padded fp32 rows, whose outputs
/// lie off the input's grid, ran up to 15 points slower peeled
/// (docs/experiments/narrow-and-misaligned-rows.md).
inline bool peels_online(const RowwiseProblem& p) {
  if (!misaligned_rows(p)) return false;
  return size_of(p.in_dtype) == 2 ? p.max_pack * size_of(p.in_dtype) < 8 : p.dense;
}

/// Rows off the alignment narrower than this many bytes of 16-bit or fp32 input take flat_tile:
/// the flat spans move at 16 bytes whatever the width. On the H100, 16-bit rows of 9-55 columns
/// ran 1.04-4.6x faster as tiles than in the warp kernel at warp_group's lanes and their own pack
/// (bf16 2000000 x 17: 59 us against 185), 63 columns 3% slower, and from 68 columns on 3-23%
/// slower (f16 3000000 x 68: 354 against 272); fp32 rows of 17-61 columns ran 1-20% slower as
/// tiles (fp32 500000 x 17: 30.2 against 26.4). fp32 rows under 16 columns, where a group of lanes
/// is mostly idle, keep the tile.
constexpr std::int64_t kFlatTilePickMaxHalfRowBytes = 128;
constexpr std::int64_t kFlatTilePickMaxFloatRowBytes = 64;

/// Values a lane of the picked flat_tile holds, and its block: 8 and 256 ran best or within 5% of
/// the best candidate at 7 to 100 columns.
constexpr int kFlatTilePickValues = 8;
constexpr int kFlatTilePickThreads = 256;
/// Dense 16-bit rows off the alignment from kFlatTilePickMaxHalfRowBytes up to kFlatTileMaxCols
/// columns take flat_tile too, in blocks of kFlatTileWidePickThreads with at least
/// kFlatTileWidePickMinLanes lanes a row and at most kFlatTileWidePickValues values a lane, where
/// the input is kFlatTileWidePickMinInputBytes or more. On the H200 (`kjit tune --full`), 22 such
/// calls of 67-255 columns and 17-189 MiB ran 1.06-1.42x faster than in the warp kernel (bf16 151296
/// x 197: 34.8 us against 39.8), blocks of 256 threads 6-30% behind those of 128; at 10-16 MiB the
/// tile ran 0.93-1.00x the warp kernel's time, and at 3-6 MiB 1.04-1.13x, where a block's few
/// tiles leave the staging's latency bare; fp32 rows ran level with the warp kernel (within 3%) and
/// keep it.
constexpr std::int64_t kFlatTileWidePickMinInputBytes = 16 << 20;
constexpr int kFlatTileWidePickThreads = 128;
constexpr int kFlatTileWidePickMinLanes = 16;
constexpr int kFlatTileWidePickValues = 15;
/// Rows with narrow gaps take flat_tile narrower than this, and only where the tiles are at least
/// one an SM. On the H100 (shape sweep, one seed, 56 shapes) such rows of 2-51 columns and 1M or
/// more elements ran up to 3x faster as tiles (bf16 2082935 x 15: 21 -> 63% of copy), all but one
/// within a point or better; from 68 columns on, 4 of 5 ran 4-14 points slower (the warp kernel's
/// lanes are busier there, and tiles store each unit that holds a gap element by element); and
/// calls of under 0.4M elements ran 1-3 us slower, the tiles' staging costing more than it saves.
constexpr std::int64_t kFlatTileGappedPickMaxCols = 64;

/// The warp kernel's blocks take 256 threads rather than 128 for rows narrower than this, where
/// the blocks still number kWarpWideBlockMinBlocksPerSm an SM: a block's few short rows are
/// little work, and half as many blocks ran up to 2x faster at 17-100 columns on the H100 (fp32
/// 100000 x 96: 30.8 -> 28.1 us; docs/experiments/narrow-and-misaligned-rows.md).
constexpr std::int64_t kWarpWideBlockMaxCols = 128;
constexpr int kWarpWideBlockThreads = 256;
constexpr std::int64_t kWarpWideBlockMinBlocksPerSm = 4;

/// Bytes of one row's input.
inline std::int64_t row_bytes(const RowwiseProblem& p) { return p.cols * size_of(p.in_dtype); }

/// Whether rows are narrow enough for the flat_tile pick (kFlatTilePickMaxHalfRowBytes,
/// kFlatTilePickMaxFloatRowBytes).
inline bool tile_narrow(const RowwiseProblem& p) {
  return row_bytes(p) < (size_of(p.in_dtype) == 2 ? kFlatTilePickMaxHalfRowBytes : kFlatTilePickMaxFloatRowBytes);
}

/// Whether inputs are 16-bit (bf16, f16).
inline bool half_input(const RowwiseProblem& p) { return size_of(p.in_dtype) == 2; }

/// Thread-block clusters and bulk async copies (TMA): sm_90 and later.
inline bool has_clusters(const DeviceProps& d) { return d.arch >= 90; }

/// Rows no more than a quarter of the SMs: a row a block would leave most SMs idle.
inline bool few_rows(const RowwiseProblem& p, const DeviceProps& d) { return p.rows * 4 <= d.sm_count; }

/// Rows more than twice the SMs: persistent kernels walk several rows each.
inline bool many_rows(const RowwiseProblem& p, const DeviceProps& d) {
  return p.rows > 2 * std::int64_t{d.sm_count};
}

/// Whether the rows' blocks, `cluster` a row, fill at least half the SMs.
inline bool fills_half_the_sms(const RowwiseProblem& p, const DeviceProps& d, int cluster) {
  return p.rows * cluster * 2 >= d.sm_count;
}

/// More rows than clusters of 16 run at once (a GPC each): clusters of 16 would take them in
/// rounds, so clusters of 8, two to a GPC, take them instead.
inline bool rows_past_wide_clusters(const RowwiseProblem& p, const DeviceProps& d) {
  return p.rows > d.clusters_of_16_at_once;
}

/// Where the ring kernel measured ahead of the other wide-row kernels, or level, on the H100:
/// 16-bit rows more than twice the SMs, fp32 rows no more than that.
inline bool ring_ahead(const RowwiseProblem& p, const DeviceProps& d) {
  return half_input(p) ? many_rows(p, d) : !many_rows(p, d);
}

}  // namespace kjit::rowwise
