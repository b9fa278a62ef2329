// SPDX-License-Identifier: Apache-2.0
// Views that are not plain contiguous arrays: padded rows, odd strides, pointers off the
// vector alignment, and in-place calls. Each must give the reference result through every
// algorithm, pick a pack the alignment allows, and write nothing outside its rows.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "kjit/kjit.hpp"
#include "row_batch.h"
#include "row_inputs.h"
#include "runtime/ops/rowwise/rowwise_heuristics.h"
#include "runtime/ops/rowwise/rowwise_problem.h"

using namespace kjit;
using namespace kjit::test;

namespace {

const std::int64_t kCols[] = {33, 1000, 4097, 50257};
const Algorithm kAlgorithms[] = {Algorithm::kAuto,        Algorithm::kWarp,    Algorithm::kBlockRegs,
                                 Algorithm::kBlockSmem,   Algorithm::kBlockOnline,
                                 Algorithm::kCluster,     Algorithm::kClusterSmem,
                                 Algorithm::kStream,      Algorithm::kRing,    Algorithm::kBlockSplit};

std::int64_t round_up(std::int64_t value, std::int64_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

std::int64_t odd_above(std::int64_t cols) { return cols % 2 == 0 ? cols + 1 : cols + 2; }

// Runs `op` with every algorithm the device accepts for the batch; returns the failures.
std::vector<std::string> run_all_algorithms(Runtime& rt, RowBatch& batch, RowOp op,
                                            const DeviceProps& device, CUstream stream) {
  std::vector<std::string> failures;
  const RowwiseArgs args = batch.args();
  const RowwiseProblem problem{op, args.in_dtype, args.out_dtype, args.rows, args.cols, max_pack_for(args)};
  const std::vector<std::int64_t> rows = rows_to_check(args.rows, test_seed());
  float* scale = op == RowOp::kReduceScale ? batch.scale_out() : nullptr;
  for (Algorithm algorithm : kAlgorithms) {
    if (algorithm != Algorithm::kAuto) {
      const KernelConfig config = complete_rowwise_config(problem, device, KernelConfig{algorithm});
      if (!why_not_rowwise(problem, device, config).empty()) continue;
    }
    const std::string where = std::string(to_string(op)) + " " + describe(batch.layout()) + " " +
                              to_string(algorithm) + ": ";
    batch.reset(stream);
    try {
      if (algorithm == Algorithm::kAuto) run_auto(rt, op, args, scale, stream);
      else rt.run_with_config(op, args, scale, KernelConfig{algorithm}, stream);
      synchronize(stream);
    } catch (const Error& error) {
      failures.push_back(where + "threw " + error.what());
      continue;
    }
    if (std::string why = batch.check(op, rows); !why.empty()) failures.push_back(where + why);
  }
  return failures;
}

void run_layouts(const std::vector<BatchLayout>& layouts, const std::vector<RowOp>& ops) {
  const DeviceProps device = current_device();
  Runtime rt;
  Stream stream = create_stream();
  std::vector<std::string> failures;
  for (const BatchLayout& layout : layouts) {
    RowBatch batch(layout, test_seed());
    for (RowOp op : ops)
      for (std::string& failure : run_all_algorithms(rt, batch, op, device, stream.get()))
        failures.push_back(std::move(failure));
  }
  for (std::size_t i = 0; i < failures.size() && i < 20; ++i) FAIL_CHECK(failures[i]);
  CHECK_MESSAGE(failures.empty(), failures.size() << " calls failed (seed " << test_seed() << ")");
}

int widest_pack(DType a, DType b) { return 16 / std::max(size_of(a), size_of(b)); }

}  // namespace

TEST_CASE("padded rows keep the widest pack and stay inside their rows") {
  KJIT_REQUIRE_GPU();
  std::vector<BatchLayout> layouts;
  for (DType dtype : {DType::kF32, DType::kBF16})
    for (std::int64_t cols : kCols) {
      BatchLayout l{dtype, dtype, 7, cols};
      l.in_stride = round_up(cols, 8) + 64;
      l.out_stride = round_up(cols, 8) + 128;
      layouts.push_back(l);
    }
  for (const BatchLayout& l : layouts) {
    RowBatch batch(l, test_seed());
    CAPTURE(describe(l));
    CHECK(max_pack_for(batch.args()) == widest_pack(l.in_dtype, l.out_dtype));
  }
  run_layouts(layouts, {RowOp::kSoftmax, RowOp::kReduceScale});
}

TEST_CASE("odd strides and misaligned pointers fall back to scalar packs or peel the rows") {
  KJIT_REQUIRE_GPU();
  std::vector<BatchLayout> layouts;
  for (DType dtype : {DType::kF32, DType::kF16})
    for (std::int64_t cols : kCols) {
      BatchLayout odd{dtype, dtype, 7, cols};
      odd.in_stride = odd_above(cols);
      odd.out_stride = odd_above(cols + 2);
      layouts.push_back(odd);

      BatchLayout shifted{dtype, dtype, 7, cols};
      shifted.in_offset = 1;
      shifted.out_offset = 1;
      layouts.push_back(shifted);

      BatchLayout out_only{dtype, DType::kF32, 3, cols};
      out_only.out_offset = 1;
      layouts.push_back(out_only);
    }
  Runtime rt;
  for (const BatchLayout& l : layouts) {
    RowBatch batch(l, test_seed());
    CAPTURE(describe(l));
    CHECK(max_pack_for(batch.args()) == 1);
    // The kernel the automatic path picks must use the pack the view allows, or peel the rows.
    const KernelConfig picked = rt.explain(RowOp::kSoftmax, batch.args()).config;
    CAPTURE(picked.to_string());
    CHECK((picked.pack == 1 || picked.peel));
  }
  run_layouts(layouts, {RowOp::kSoftmax, RowOp::kLogSoftmax});
}

TEST_CASE("a view one element off with an even stride gets an intermediate pack") {
  KJIT_REQUIRE_GPU();
  // f16 shifted by 2 elements is 4-byte aligned: pack 2, with strides to match.
  BatchLayout l{DType::kF16, DType::kF16, 7, 1000};
  l.in_offset = 2;
  l.out_offset = 2;
  l.in_stride = 1002;
  l.out_stride = 1010;
  {
    RowBatch batch(l, test_seed());
    CHECK(max_pack_for(batch.args()) == 2);
  }
  run_layouts({l}, {RowOp::kSoftmax});
}

TEST_CASE("in place works for every algorithm") {
  KJIT_REQUIRE_GPU();
  std::vector<BatchLayout> layouts;
  for (DType dtype : {DType::kF32, DType::kBF16})
    for (std::int64_t cols : kCols) {
      BatchLayout dense{dtype, dtype, 64, cols};
      dense.in_place = true;
      layouts.push_back(dense);
      BatchLayout padded{dtype, dtype, 7, cols};
      padded.in_place = true;
      padded.in_stride = round_up(cols, 8) + 8;
      layouts.push_back(padded);
    }
  BatchLayout shifted{DType::kF32, DType::kF32, 7, 1000};
  shifted.in_place = true;
  shifted.in_offset = 1;
  layouts.push_back(shifted);
  run_layouts(layouts, {RowOp::kSoftmax, RowOp::kLogSoftmax, RowOp::kReduceScale});
}
