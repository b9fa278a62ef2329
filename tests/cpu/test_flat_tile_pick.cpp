// SPDX-License-Identifier: Apache-2.0
// The pick and the tuner's candidates for narrow rows: flat_tile for dense rows off the alignment
// under kFlatTilePickMaxHalfRowBytes (16-bit) or kFlatTilePickMaxFloatRowBytes (fp32), and for
// rows of narrow gaps where narrow and many, as measured; candidates of it up to its width, valid
// wherever they are offered.
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

}  // namespace

TEST_CASE("dense rows and rows of narrow gaps off the alignment under 128 bytes of 16-bit input or 64 of fp32 "
          "take flat_tile, eight values a lane; the tuner's candidates hold it to 256 columns") {
  int with_tiles = 0, picked = 0;
  for (int arch : {80, 90}) {
    const DeviceProps d = nominal_device(arch);
    for (RowOp op : kOps)
      for (const auto& pair : kPairs)
        for (std::int64_t cols : {1, 2, 3, 7, 8, 9, 49, 64, 65, 77, 96, 100, 127, 128, 255, 256, 257, 1000})
          for (std::int64_t rows : {1, 100, 65536, 100000}) {
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
  MESSAGE(with_tiles << " dense narrow problems with flat_tile candidates, " << picked << " picked");
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
