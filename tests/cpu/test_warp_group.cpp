// SPDX-License-Identifier: Apache-2.0
// The warp kernel's group of lanes a row (warp_group): the fewest lanes whose load of a row spans a
// sector and whose lanes hold at most their bound, a whole row's lanes where those hold whole
// 16-byte packs of a row of 256 bytes or more; and the measured shapes that set the bounds.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>

#include "kjit/kjit.hpp"
#include "runtime/driver/nominal_device.h"
#include "runtime/ops/rowwise/rowwise_fit.h"
#include "runtime/ops/rowwise/rowwise_heuristics.h"

using namespace kjit;

namespace {

constexpr DType kPairs[][2] = {{DType::kF32, DType::kF32},  {DType::kBF16, DType::kBF16}, {DType::kF16, DType::kF32},
                               {DType::kF32, DType::kBF16}, {DType::kBF16, DType::kF32}};

RowwiseProblem rows_of(DType in, DType out, std::int64_t cols, int pack) {
  return RowwiseProblem{RowOp::kSoftmax, in, out, 65536, cols, pack};
}

/// Whether `group` lanes qualify: a sector a load, and the lane's bytes (of the wider type) within
/// the bound for its access size.
bool qualifies(const RowwiseProblem& p, int group) {
  const std::int64_t in_bytes = p.max_pack * size_of(p.in_dtype);
  const std::int64_t wide_bytes = p.max_pack * std::max(size_of(p.in_dtype), size_of(p.out_dtype));
  const std::int64_t bound = wide_bytes == 4 ? rowwise::kWarpGroupMaxWordLaneBytes : rowwise::kWarpGroupMaxLaneBytes;
  return group * in_bytes >= rowwise::kWarpGroupMinSpanBytes &&
         rowwise::ceil_div(rowwise::ceil_div(p.cols, p.max_pack), group) * wide_bytes <= bound;
}

}  // namespace

TEST_CASE("a warp's group is the fewest lanes that qualify, or a whole row's lanes") {
  int smaller = 0;
  for (const auto& pair : kPairs)
    for (int pack = 1; pack * std::max(size_of(pair[0]), size_of(pair[1])) <= 16; pack *= 2)
      for (std::int64_t cols = 1; cols <= 1100; cols += cols < 300 ? 1 : 7) {
        const RowwiseProblem p = rows_of(pair[0], pair[1], cols, pack);
        CAPTURE(cols);
        CAPTURE(pack);
        const int whole = rowwise::whole_row_group(p, pack);
        const int group = rowwise::warp_group(p, pack);
        REQUIRE(group >= 1);
        CHECK((group & (group - 1)) == 0);
        CHECK(group <= whole);
        // A whole row's lanes: the fewest (a power of two, up to a warp) with a pack each.
        CHECK((whole == 32 || whole >= rowwise::ceil_div(cols, pack)));
        CHECK((whole == 1 || whole / 2 < rowwise::ceil_div(cols, pack)));
        const bool full_vectors = rowwise::ceil_div(cols, pack) % whole == 0 && pack * size_of(p.in_dtype) == 16 &&
                                  rowwise::row_bytes(p) >= rowwise::kWarpWholeGroupMinRowBytes;
        if (full_vectors) {
          CHECK(group == whole);
          continue;
        }
        if (group < whole) {
          ++smaller;
          CHECK(qualifies(p, group));
          if (group > 1) CHECK_FALSE(qualifies(p, group / 2));
        } else {
          for (int g = 1; g < whole; g *= 2) CHECK_FALSE(qualifies(p, g));
        }
        CHECK(rowwise::fit_warp(p, pack).group == group);
        CHECK(rowwise::fit_whole_row_warp(p, pack).group == whole);
      }
  CHECK(smaller > 100);
}

TEST_CASE("the groups of the measured shapes") {
  const auto group = [](DType in, DType out, std::int64_t cols, int pack) {
    return rowwise::warp_group(rows_of(in, out, cols, pack), pack);
  };
  constexpr DType f32 = DType::kF32, bf16 = DType::kBF16, f16 = DType::kF16;
  CHECK(group(bf16, bf16, 160, 8) == 8);    // 20 packs: 16 lanes left 12 idle (61.5 -> 45.4 us)
  CHECK(group(bf16, bf16, 257, 1) == 16);   // 2-byte loads: 16 lanes span a sector (89 -> 76 us)
  CHECK(group(f32, f32, 197, 1) == 32);     // 8 lanes would hold 100 bytes each (98 against 81 us)
  CHECK(group(f32, f32, 77, 1) == 16);      // 4-byte words: 32 bytes a lane at most
  CHECK(group(f32, f32, 96, 4) == 8);       // 24 packs, 3 a lane
  CHECK(group(bf16, bf16, 128, 8) == 16);   // whole 16-byte packs on every lane of a 256-byte row
  CHECK(group(bf16, bf16, 64, 8) == 4);     // a 128-byte row: two packs a lane (5.3 -> 4.8 us)
  CHECK(group(f16, f16, 68, 4) == 4);       // 17 packs of 8 bytes, 5 a lane
  CHECK(group(f16, f16, 84, 2) == 8);       // 42 packs of 4 bytes, 6 a lane
  CHECK(group(bf16, f32, 216, 4) == 32);    // 16 lanes would hold 64 output bytes each
  CHECK(group(bf16, f32, 201, 1) == 32);    // 4-byte output words: 16 lanes would hold 52 bytes
}

TEST_CASE("the pick takes warp_group's lanes, and the tuner a whole row's and smaller groups too") {
  const DeviceProps d = nominal_device(90);
  const RowwiseProblem p = rows_of(DType::kBF16, DType::kBF16, 160, 8);
  const KernelConfig pick = choose_rowwise_config(p, d);
  CHECK(pick.algorithm == Algorithm::kWarp);
  CHECK(pick.group == 8);
  int groups = 0;
  bool whole = false;
  for (const KernelConfig& c : rowwise_candidates(p, d)) {
    if (c.algorithm != Algorithm::kWarp || c.pack != 8) continue;
    ++groups;
    whole = whole || c.group == 32;
  }
  CHECK(whole);
  CHECK(groups >= 3);
}
