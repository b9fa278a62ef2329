// SPDX-License-Identifier: Apache-2.0
// The warp kernel at every group of lanes a row (1-32, blocks of 128 and 256 threads) against the
// float64 reference, over dense, padded and offset rows: the pick's warp_group takes any of them.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "kjit/kjit.hpp"
#include "row_batch.h"
#include "row_inputs.h"
#include "runtime/ops/rowwise/rowwise_heuristics.h"
#include "runtime/ops/rowwise/rowwise_kernels.h"
#include "runtime/ops/rowwise/rowwise_problem.h"

using namespace kjit;
using namespace kjit::test;

TEST_CASE("the warp kernel at every group of lanes a row matches the reference, rows padded and offset too") {
  KJIT_REQUIRE_GPU();
  const DeviceProps device = current_device();
  const std::uint64_t seed = test_seed();
  Runtime rt;
  // Widths a group of 1-32 lanes holds within the register limit; row counts that no group's
  // rows a block divide; dense, padded (stride + 3) and offset rows of each side on its own.
  std::vector<BatchLayout> layouts;
  for (const auto& [in, out, cols] : {std::tuple{DType::kF32, DType::kF32, std::int64_t{29}},
                                      std::tuple{DType::kF32, DType::kF32, std::int64_t{96}},
                                      std::tuple{DType::kBF16, DType::kBF16, std::int64_t{77}},
                                      std::tuple{DType::kBF16, DType::kBF16, std::int64_t{160}},
                                      std::tuple{DType::kF16, DType::kF32, std::int64_t{123}},
                                      std::tuple{DType::kF32, DType::kBF16, std::int64_t{257}}})
    for (std::int64_t rows : {5, 1001}) {
      layouts.push_back({in, out, rows, cols});
      layouts.push_back({in, out, rows, cols, cols + 3, cols, 1, 0});
      layouts.push_back({in, out, rows, cols, cols, cols + 3, 0, 3});
    }
  std::vector<std::string> failures;
  int checked = 0;
  for (const BatchLayout& layout : layouts) {
    RowBatch batch(layout, seed);
    const RowwiseArgs args = batch.args();
    for (RowOp op : {RowOp::kSoftmax, RowOp::kLogSoftmax, RowOp::kReduceScale})
      for (int group = 1; group <= 32; group *= 2)
        for (int threads : {128, 256}) {
          const RowwiseProblem problem{op, args.in_dtype, args.out_dtype, args.rows, args.cols, max_pack_for(args)};
          const KernelConfig config{Algorithm::kWarp, problem.max_pack, threads, group, 1};
          if (!why_not_rowwise(problem, device, config).empty()) continue;
          const std::string where = std::string(to_string(op)) + " " + describe(layout) + " " + config.to_string();
          float* scale = op == RowOp::kReduceScale ? batch.scale_out() : nullptr;
          try {
            batch.reset(nullptr);
            rt.run_with_config(op, args, scale, config, nullptr);
            synchronize(nullptr);
          } catch (const Error& error) {
            failures.push_back(where + ": threw " + error.what());
            continue;
          }
          if (std::string why = batch.check(op, rows_to_check(args.rows, seed)); !why.empty())
            failures.push_back(where + ": " + why);
          else ++checked;
        }
  }
  MESSAGE(checked << " warp calls checked at groups of 1-32 lanes (seed " << seed << ")");
  for (std::size_t i = 0; i < failures.size() && i < 25; ++i) FAIL_CHECK(failures[i]);
  CHECK(failures.empty());
  CHECK(checked > 200);
}
