// SPDX-License-Identifier: Apache-2.0
// Peeled rows (KernelConfig::peel) forced on warp, block_regs, block_split, block_online (a block a
// row at 1024 and 256 threads, and clusters of 4 blocks a row on sm_90), and for rows of a thousand
// columns and more block_smem and, on sm_90, cluster, cluster_smem and the ring (one consumer group
// and two; same-size types), over views off the vector alignment: every shift of the input with the
// output aligned and every shift of the output with the input aligned, odd strides (each row its
// own shift, both sides together or apart, and in place), every op, fp32 and 16-bit, against the
// float64 reference. Outputs start poisoned and every row of a separate output has guard elements
// before and after it (padded strides, views offset by at least a pack), which must come back
// untouched; inputs' guards are NaN, so a read outside a row shows too.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "kjit/kjit.hpp"
#include "quick_tuning.h"
#include "row_batch.h"
#include "row_inputs.h"
#include "runtime/ops/rowwise/rowwise_heuristics.h"
#include "runtime/ops/rowwise/rowwise_problem.h"

using namespace kjit;
using namespace kjit::test;

namespace {

struct Pair {
  DType in, out;
};
constexpr Pair kPairs[] = {{DType::kF32, DType::kF32},
                           {DType::kBF16, DType::kBF16},
                           {DType::kF16, DType::kF16},
                           {DType::kBF16, DType::kF32},
                           {DType::kF32, DType::kBF16}};
constexpr RowOp kOps[] = {RowOp::kSoftmax, RowOp::kLogSoftmax, RowOp::kReduceScale};
// A warp's row, a row a warp holds at its last pack, and rows for a block (16-bit held as words).
constexpr std::int64_t kCols[] = {49, 1000, 4097};

// The peeled configs tried at each layout: algorithm, threads and cluster (0: the fit's), and the
// narrowest rows they take (slices of rows under a thousand columns are a few vectors).
struct PeeledConfig {
  Algorithm algorithm;
  int threads = 0;
  int cluster = 0;
  std::int64_t min_cols = 0;
  int group = 0;
};
constexpr PeeledConfig kConfigs[] = {{Algorithm::kWarp},
                                     {Algorithm::kBlockRegs},
                                     {Algorithm::kBlockSplit},
                                     {Algorithm::kBlockOnline, 1024, 1},
                                     {Algorithm::kBlockOnline, 256, 1},
                                     {Algorithm::kBlockOnline, 256, 4},
                                     {Algorithm::kBlockSmem, 256, 1, 1000},
                                     {Algorithm::kCluster, 128, 2, 1000},
                                     {Algorithm::kClusterSmem, 128, 4, 1000},
                                     {Algorithm::kRing, 512, 2, 1000, 512},
                                     {Algorithm::kRing, 512, 1, 1000, 256}};

int widest(const Pair& p) { return 16 / std::max(size_of(p.in), size_of(p.out)); }

std::int64_t round_up(std::int64_t value, std::int64_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

std::int64_t odd_above(std::int64_t value) { return value % 2 == 0 ? value + 1 : value + 2; }

// Layouts of one width: each side's shift on its own (strides whole packs, so every row keeps
// its shift), then odd strides on both sides, equal (the shifts move together) and apart.
std::vector<BatchLayout> layouts(const Pair& pair, std::int64_t cols) {
  const int pack = widest(pair);
  const std::int64_t padded = round_up(cols, pack) + pack;
  const std::int64_t rows = 2 * pack + 1;  // odd strides walk every shift
  std::vector<BatchLayout> out;
  for (int shift = 0; shift < pack; ++shift)
    for (bool input : {true, false}) {
      if (!input && shift == 0) continue;  // the same as the input's shift 0
      BatchLayout l{pair.in, pair.out, rows, cols, padded, padded, pack, pack};
      (input ? l.in_offset : l.out_offset) += shift;
      out.push_back(l);
    }
  BatchLayout together{pair.in, pair.out, rows, cols, odd_above(cols + 2), odd_above(cols + 2), 1, 1};
  out.push_back(together);
  BatchLayout apart{pair.in, pair.out, rows, cols, odd_above(cols + 2), odd_above(cols + 4) + 2, 3, 1};
  out.push_back(apart);
  if (pair.in == pair.out) {  // in place: one view, so the shifts are the same
    BatchLayout in_place{pair.in, pair.out, rows, cols, odd_above(cols + 2), 0, 1, 0, true};
    out.push_back(in_place);
  }
  return out;
}

// Runs `op` over the batch with each peeled kernel that can hold the row; returns the
// failures and counts the calls made.
std::vector<std::string> run_peeled(Runtime& rt, RowBatch& batch, RowOp op, const DeviceProps& device,
                                    CUstream stream, int& calls) {
  std::vector<std::string> failures;
  const RowwiseArgs args = batch.args();
  const RowwiseProblem problem{op, args.in_dtype, args.out_dtype, args.rows, args.cols, max_pack_for(args)};
  float* scale = op == RowOp::kReduceScale ? batch.scale_out() : nullptr;
  for (const PeeledConfig& each : kConfigs) {
    if (args.cols < each.min_cols) continue;
    KernelConfig partial{each.algorithm};
    partial.threads = each.threads;
    partial.cluster = each.cluster;
    partial.group = each.group;
    partial.peel = true;
    const KernelConfig config = complete_rowwise_config(problem, device, partial);
    if (!why_not_rowwise(problem, device, config).empty()) continue;
    const std::string where = std::string(to_string(op)) + " " + describe(batch.layout()) + " " +
                              config.to_string() + ": ";
    batch.reset(stream);
    try {
      rt.run_with_config(op, args, scale, config, stream);
      synchronize(stream);
      ++calls;
    } catch (const Error& error) {
      failures.push_back(where + "threw " + error.what());
      continue;
    }
    if (std::string why = batch.check(op, rows_to_check(args.rows, test_seed())); !why.empty())
      failures.push_back(where + why);
  }
  return failures;
}

void run_pairs(const std::vector<Pair>& pairs) {
  const DeviceProps device = current_device();
  Runtime rt;
  Stream stream = create_stream();
  std::vector<std::string> failures;
  int calls = 0;
  for (const Pair& pair : pairs)
    for (std::int64_t cols : kCols)
      for (const BatchLayout& layout : layouts(pair, cols)) {
        RowBatch batch(layout, test_seed());
        for (RowOp op : kOps)
          for (std::string& failure : run_peeled(rt, batch, op, device, stream.get(), calls))
            failures.push_back(std::move(failure));
      }
  for (std::size_t i = 0; i < failures.size() && i < 20; ++i) FAIL_CHECK(failures[i]);
  CHECK_MESSAGE(failures.empty(), failures.size() << " calls failed (seed " << test_seed() << ")");
  CHECK(calls > 0);
  MESSAGE(calls << " peeled calls checked");
}

}  // namespace

TEST_CASE("the layouts shift each side on its own and keep guards around every row") {
  // Host-side: what the GPU cases below rely on.
  for (const Pair& pair : kPairs)
    for (std::int64_t cols : kCols)
      for (const BatchLayout& l : layouts(pair, cols)) {
        CAPTURE(describe(l));
        CHECK(l.in_stride > cols);
        CHECK(l.in_offset >= 1);
        if (l.in_place) continue;
        CHECK(l.out_stride > cols);
        CHECK(l.out_offset >= 1);
      }
}

TEST_CASE("peeled fp32 rows match the reference at every shift of each side") {
  KJIT_REQUIRE_GPU();
  run_pairs({kPairs[0]});
}

TEST_CASE("peeled 16-bit rows match the reference at every shift of each side") {
  KJIT_REQUIRE_GPU();
  run_pairs({kPairs[1], kPairs[2]});
}

TEST_CASE("peeled rows of mixed types match the reference at every shift of each side") {
  KJIT_REQUIRE_GPU();
  run_pairs({kPairs[3], kPairs[4]});
}

TEST_CASE("the tuner's peeled candidates give the reference on a dense odd batch") {
  KJIT_REQUIRE_GPU();
  // What tuning a dense batch of an odd width runs: every candidate, the peeled ones included.
  const DeviceProps device = current_device();
  Runtime rt;
  Stream stream = create_stream();
  int peeled = 0;
  for (const Pair& pair : {kPairs[0], kPairs[1]})
    for (std::int64_t cols : {std::int64_t{49}, std::int64_t{4095}, std::int64_t{32001}}) {
      RowBatch batch({pair.in, pair.out, 33, cols}, test_seed());
      const RowwiseArgs args = batch.args();
      const RowwiseProblem problem{RowOp::kSoftmax, args.in_dtype, args.out_dtype, args.rows, args.cols,
                                   max_pack_for(args)};
      for (const KernelConfig& config : rowwise_candidates(problem, device)) {
        if (!config.peel) continue;
        ++peeled;
        CAPTURE(config.to_string());
        CAPTURE(describe(batch.layout()));
        batch.reset(stream.get());
        rt.run_with_config(RowOp::kSoftmax, args, nullptr, config, stream.get());
        synchronize(stream.get());
        CHECK(batch.check(RowOp::kSoftmax, rows_to_check(args.rows, test_seed())) == "");
      }
    }
  CHECK(peeled > 0);
}

TEST_CASE("tuning a dense odd width checks its peeled candidates and reports them right") {
  KJIT_REQUIRE_GPU();
  Runtime runtime;
  Stream stream = create_stream();
  // Dense rows of an odd width: the tuner's scratch rows each start at their own shift.
  for (DType dtype : {DType::kF32, DType::kBF16}) {
    const TuneReport<KernelConfig> report = runtime.tune(RowOp::kSoftmax, dtype, dtype, 4096, 1001,
                                                         test::quick_tune_options(), stream.get());
    int peeled = 0;
    for (const auto& c : report.candidates) {
      if (!c.config.peel) continue;
      ++peeled;
      CAPTURE(c.config.to_string());
      CHECK(c.status == "ok");
    }
    CHECK(peeled > 0);
    MESSAGE(to_string(dtype) << " 4096x1001: winner " << report.winner.to_string());
  }
}
