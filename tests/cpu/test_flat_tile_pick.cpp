// SPDX-License-Identifier: Apache-2.0
// The pick and the tuner's candidates for narrow rows: flat_tile for dense rows off the alignment
// under kFlatTilePickMaxHalfRowBytes (16-bit) or kFlatTilePickMaxFloatRowBytes (fp32), for wider
// dense 16-bit rows in calls of kFlatTileWidePickMinInputBytes or more, and for rows of narrow gaps
// where narrow and many, as measured; candidates of it up to its width, valid wherever they are
// offered.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "kernel_sources/flat_tile_layout.cuh"
#include "kjit/kjit.hpp"
#include "runtime/driver/nominal_device.h"
#include "runtime/ops/rowwise/rowwise_flat_tile.h"
#include "runtime/ops/rowwise/rowwise_heuristics.h"
#include "runtime/ops/rowwise/rowwise_kernels.h"
#include "runtime/ops/rowwise/rowwise_rules.h"
#include "support/flat_tile_problems.h"

using namespace kjit;
using test::dense_problem;

namespace {

constexpr auto& kOps = test::kFlatTileOps;
constexpr auto& kPairs = test::kFlatTilePairs;

/// Dense 16-bit rows off the alignment past tile_narrow, up to flat_tile's width, in calls of
/// kFlatTileWidePickMinInputBytes or more.
bool wide_tile_rows(const RowwiseProblem& p) {
  return p.dense && size_of(p.in_dtype) == 2 && rowwise::misaligned_rows(p) && !rowwise::tile_narrow(p) &&
         p.cols <= kFlatTileMaxCols && p.rows * p.cols * 2 >= rowwise::kFlatTileWidePickMinInputBytes;
}

}  // namespace

TEST_CASE("dense rows and rows of narrow gaps off the alignment under 128 bytes of 16-bit input or 64 of fp32 "
          "take flat_tile, eight values a lane; wider dense 16-bit rows of large calls take it in small blocks; "
          "the tuner's candidates hold it to 256 columns") {
  int with_tiles = 0, picked = 0, picked_wide = 0;
  for (int arch : {80, 90}) {
    const DeviceProps d = nominal_device(arch);
    for (RowOp op : kOps)
      for (const auto& pair : kPairs)
        for (std::int64_t cols : {1, 2, 3, 7, 8, 9, 49, 64, 65, 77, 96, 100, 127, 128, 255, 256, 257, 1000})
          for (std::int64_t rows : {1, 100, 65536, 100000, 200000}) {
            const RowwiseProblem dense = dense_problem(op, pair[0], pair[1], rows, cols);
            RowwiseProblem padded = dense;
            padded.dense = false;
            RowwiseProblem gaps = padded;
            gaps.narrow_gaps = rows > 1;
            CAPTURE(arch);
            CAPTURE(cols);
            CAPTURE(rows);
            const KernelConfig pick = choose_rowwise_config(dense, d);
            if (rowwise::tile_narrow(dense) && rowwise::misaligned_rows(dense)) {
              CHECK(pick.algorithm == Algorithm::kFlatTile);
              CHECK(pick.threads == rowwise::kFlatTilePickThreads);
              // The fewest lanes (a power of two) that hold the row at eight values or fewer each.
              CHECK(pick.group * rowwise::kFlatTilePickValues >= cols);
              CHECK((pick.group == 1 || (pick.group / 2) * rowwise::kFlatTilePickValues < cols));
              ++picked;
            } else if (wide_tile_rows(dense)) {
              CHECK(pick.algorithm == Algorithm::kFlatTile);
              CHECK(pick.threads == rowwise::kFlatTileWidePickThreads);
              // The fewest lanes, kFlatTileWidePickMinLanes or more, that hold the row at 15 values or fewer each.
              CHECK(pick.group * rowwise::kFlatTileWidePickValues >= cols);
              CHECK((pick.group == rowwise::kFlatTileWidePickMinLanes ||
                     (pick.group / 2) * rowwise::kFlatTileWidePickValues < cols));
              ++picked_wide;
            } else {
              CHECK(pick.algorithm != Algorithm::kFlatTile);
              CHECK(pick == choose_rowwise_config(padded, d));
            }
            CHECK(choose_rowwise_config(padded, d).algorithm != Algorithm::kFlatTile);
            // Rows with gaps: narrower than kFlatTileGappedPickMaxCols, and a full tile for every SM.
            const bool gapped_tile = gaps.narrow_gaps && pick.algorithm == Algorithm::kFlatTile &&
                                     cols < rowwise::kFlatTileGappedPickMaxCols &&
                                     rows * cols * size_of(pair[0]) >= d.sm_count * kFlatTileTargetBytes;
            if (gaps.narrow_gaps)
              CHECK(choose_rowwise_config(gaps, d) == (gapped_tile ? pick : choose_rowwise_config(padded, d)));
            const std::vector<KernelConfig> candidates = rowwise_candidates(dense, d);
            REQUIRE(!candidates.empty());
            CHECK(candidates.front() == pick);
            const auto tiles = std::count_if(candidates.begin(), candidates.end(), [](const KernelConfig& c) {
              return c.algorithm == Algorithm::kFlatTile;
            });
            if (cols <= kFlatTileMaxCols) {
              CHECK(tiles >= 2);
              ++with_tiles;
            } else {
              CHECK(tiles == 0);
            }
            for (const KernelConfig& c : rowwise_candidates(padded, d)) CHECK(c.algorithm != Algorithm::kFlatTile);
            for (const KernelConfig& c : candidates) CHECK(why_not_rowwise(dense, d, c) == "");
            if (gaps.narrow_gaps && cols <= kFlatTileMaxCols) {
              const std::vector<KernelConfig> gapped = rowwise_candidates(gaps, d);
              CHECK(std::count_if(gapped.begin(), gapped.end(),
                                  [](const KernelConfig& c) { return c.algorithm == Algorithm::kFlatTile; }) >= 2);
              for (const KernelConfig& c : gapped) CHECK(why_not_rowwise(gaps, d, c) == "");
            }
          }
  }
  CHECK(picked > 0);
  CHECK(picked_wide > 0);
  MESSAGE(with_tiles << " dense narrow problems with flat_tile candidates; picked: " << picked << " narrow, "
                     << picked_wide << " past 128 bytes");
}

TEST_CASE("rows of narrow gaps take flat_tile where narrow and many, as measured") {
  const DeviceProps d = nominal_device(90);
  const auto gapped = [](DType in, DType out, std::int64_t rows, std::int64_t cols) {
    RowwiseProblem p = dense_problem(RowOp::kSoftmax, in, out, rows, cols);
    p.dense = false;
    p.narrow_gaps = true;
    return p;
  };
  const auto tile = [&](const RowwiseProblem& p) {
    return choose_rowwise_config(p, d).algorithm == Algorithm::kFlatTile;
  };
  // Shapes of the sweep that ran faster as tiles: bf16 2082935 x 15 (21 -> 63% of copy), f16 -> fp32 8761058 x 5.
  CHECK(tile(gapped(DType::kBF16, DType::kBF16, 2082935, 15)));
  CHECK(tile(gapped(DType::kF16, DType::kF32, 8761058, 5)));
  // Slower as tiles: fp32 819214 x 76 (70 -> 60%), bf16 7298 x 24 (1.9 -> 3.8 us), fp32 1491 x 7.
  CHECK_FALSE(tile(gapped(DType::kF32, DType::kF32, 819214, 76)));
  CHECK_FALSE(tile(gapped(DType::kBF16, DType::kF16, 7298, 24)));
  CHECK_FALSE(tile(gapped(DType::kF32, DType::kBF16, 1491, 7)));
}

TEST_CASE("wider dense 16-bit rows take flat_tile in small blocks where the call is large, as measured") {
  const DeviceProps d = nominal_device(90);
  const auto pick = [&](DType in, DType out, std::int64_t rows, std::int64_t cols) {
    return choose_rowwise_config(dense_problem(RowOp::kSoftmax, in, out, rows, cols), d);
  };
  const auto is_tile = [](const KernelConfig& c, int group) {
    return c.algorithm == Algorithm::kFlatTile && c.threads == 128 && c.group == group;
  };
  // Faster as tiles on the H200: bf16 151296 x 197 (34.8 us against 39.8), 120000 x 255 (33.0 against 43.6),
  // 131072 x 67, f16 -> fp32 65536 x 151.
  CHECK(is_tile(pick(DType::kBF16, DType::kBF16, 151296, 197), 16));
  CHECK(is_tile(pick(DType::kBF16, DType::kBF16, 120000, 255), 32));
  CHECK(is_tile(pick(DType::kBF16, DType::kBF16, 131072, 67), 16));
  CHECK(is_tile(pick(DType::kF16, DType::kF32, 65536, 151), 16));
  // Slower or level as tiles: bf16 8192 x 197 and 32768 x 97 (small calls), fp32 100000 x 197, and aligned rows.
  CHECK(pick(DType::kBF16, DType::kBF16, 8192, 197).algorithm != Algorithm::kFlatTile);
  CHECK(pick(DType::kBF16, DType::kBF16, 32768, 97).algorithm != Algorithm::kFlatTile);
  CHECK(pick(DType::kF32, DType::kF32, 100000, 197).algorithm != Algorithm::kFlatTile);
  RowwiseProblem aligned = dense_problem(RowOp::kSoftmax, DType::kBF16, DType::kBF16, 151296, 200);
  aligned.max_pack = 8;
  CHECK(choose_rowwise_config(aligned, d).algorithm != Algorithm::kFlatTile);
}
