// SPDX-License-Identifier: Apache-2.0
// attention against the float64 reference: M and N over {1, 7, 16, 49, 64, 100, 128, 197, 256},
// every (d, dv), every bias and mask kind with fully masked rows, causal, [B, H, N, D] and
// [B, N, H, D] layouts with padded rows, odd batch counts, large input scales, large batches,
// and every tuning candidate forced. Outputs are poisoned before each call; bytes of o outside
// its rows must stay poisoned and inputs are surrounded by NaN, so stray reads and writes show.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "attention_batch.h"
#include "autotune/output_check.h"
#include "kjit/kjit.hpp"
#include "row_inputs.h"
#include "runtime/driver/context.h"
#include "runtime/ops/attention/attention_heuristics.h"
#include "runtime/parallel_for.h"

using namespace kjit;
using namespace kjit::test;

namespace {

const std::int64_t kTokens[] = {1, 7, 16, 49, 64, 100, 128, 197, 256};
const std::int64_t kDims[] = {16, 32, 64, 128};

/// One batch and the configs it runs with (none: the dispatcher's choice).
struct Unit {
  AttentionCase c;
  std::vector<std::optional<AttentionConfig>> configs{std::nullopt};
  std::int64_t most_checked = 0;  ///< 0: every problem
};

struct Failures {
  std::mutex mutex;
  std::vector<std::string> lines;
  int calls = 0;
  void add(const std::string& line) {
    std::lock_guard<std::mutex> lock(mutex);
    lines.push_back(line);
  }
  void count() {
    std::lock_guard<std::mutex> lock(mutex);
    ++calls;
  }
};

void run_unit(Runtime& rt, const Unit& unit, std::uint64_t seed, Failures& failures) {
  AttentionBatch batch(unit.c, seed);
  for (const auto& config : unit.configs) {
    const std::string what = describe(unit.c) + (config ? " " + config->to_string() : " (dispatcher)");
    try {
      batch.poison(nullptr);
      if (config) rt.attention_with_config(batch.args(), *config, nullptr);
      else rt.attention(batch.args(), nullptr);
      synchronize(nullptr);
      const std::string why = batch.check(unit.most_checked);
      if (!why.empty()) failures.add(what + ": " + why);
      failures.count();
    } catch (const std::exception& error) {
      failures.add(what + ": threw " + error.what());
    }
  }
}

void run_units(const std::vector<Unit>& units) {
  const std::uint64_t seed = test_seed();
  Runtime rt;
  Failures failures;
  parallel_for(units.size(), std::min(8, hardware_threads()), [&](std::size_t i) {
    try {
      run_unit(rt, units[i], seed + 17 * i, failures);
    } catch (const std::exception& error) {
      failures.add(describe(units[i].c) + ": setup failed: " + error.what());
    }
  });
  MESSAGE(failures.calls << " calls checked on " << units.size() << " batches");
  for (std::size_t i = 0; i < failures.lines.size() && i < 25; ++i) FAIL_CHECK(failures.lines[i]);
  CHECK_MESSAGE(failures.lines.empty(), failures.lines.size() << " calls failed (seed " << seed << ")");
}

AttentionCase shape(DType dtype, std::int64_t batch, std::int64_t heads, std::int64_t m, std::int64_t n,
                    std::int64_t d, std::int64_t dv) {
  AttentionCase c;
  c.dtype = dtype;
  c.batch = batch;
  c.heads = heads;
  c.m = m;
  c.n = n;
  c.d = d;
  c.dv = dv;
  return c;
}

std::vector<std::optional<AttentionConfig>> every_candidate(const AttentionCase& c) {
  AttentionArgs args;
  args.batch = c.batch;
  args.heads = c.heads;
  args.m = c.m;
  args.n = c.n;
  args.d = c.d;
  args.dv = c.dv;
  args.dtype = c.dtype;
  args.causal = c.causal;
  AttentionProblem problem;
  problem.dtype = c.dtype;
  problem.bias_kind = c.bias ? attention_addend_kind(&args, c.bias_dtype) : 0;
  problem.mask_kind = c.mask ? attention_addend_kind(&args, c.mask_dtype) : 0;
  problem.causal = c.causal;
  problem.m = static_cast<int>(c.m);
  problem.n = static_cast<int>(c.n);
  problem.d = static_cast<int>(c.d);
  problem.dv = static_cast<int>(c.dv);
  problem.batch = c.batch;
  problem.heads = c.heads;
  problem.rows = c.batch * c.heads;
  std::vector<std::optional<AttentionConfig>> configs;
  for (const AttentionConfig& config : attention_candidates(planned_attention(problem), current_device_props()))
    configs.emplace_back(config);
  return configs;
}

}  // namespace

TEST_CASE("every M and N of 1, 7, 16, 49, 64, 100, 128, 197, 256 in both dtypes") {
  KJIT_REQUIRE_GPU();
  std::vector<Unit> units;
  int n_index = 0;
  for (std::int64_t m : kTokens)
    for (int step = 0; step < 3; ++step) {
      const std::int64_t n = kTokens[(n_index++ * 4 + step) % 9];
      const DType dtype = (m + n) % 2 ? DType::kF16 : DType::kBF16;
      units.push_back({shape(dtype, 3, 5, m, n, 64, 64)});
      units.push_back({shape(dtype == DType::kF16 ? DType::kBF16 : DType::kF16, 1, 3, m, m, 32, 32)});
    }
  run_units(units);
}

TEST_CASE("every d and dv") {
  KJIT_REQUIRE_GPU();
  std::vector<Unit> units;
  for (std::int64_t d : kDims)
    for (std::int64_t dv : kDims) {
      units.push_back({shape(DType::kF16, 5, 3, 49, 49, d, dv)});
      units.push_back({shape(DType::kBF16, 3, 1, 7, 100, d, dv)});
      units.push_back({shape(DType::kBF16, 1, 2, 200, 256, d, dv)});
    }
  run_units(units);
}

TEST_CASE("bias and mask of every kind, shifted-window masks, fully masked rows give zeros") {
  KJIT_REQUIRE_GPU();
  std::vector<Unit> units;
  const DType kinds[] = {DType::kF32, DType::kF16, DType::kBF16};
  int i = 0;
  for (int bias = 0; bias <= 3; ++bias)
    for (int mask = 0; mask <= 3; ++mask) {
      AttentionCase c = shape(i % 2 ? DType::kBF16 : DType::kF16, 9, 4, 49, 49, 32, 32);
      c.bias = bias > 0;
      c.bias_dtype = kinds[(bias + 2) % 3];
      c.mask = mask > 0;
      c.mask_dtype = kinds[(mask + 2) % 3];
      c.mask_windows = 4;
      c.masked_fraction = 0.3;
      c.masked_rows = 0.1;
      units.push_back({c});
      c.m = 100;
      c.n = 197;
      c.d = 64;
      c.dv = 64;
      c.mask_windows = 3;
      c.causal = i % 2 == 1;
      units.push_back({c});
      ++i;
    }
  run_units(units);
}

TEST_CASE("causal, square and not, with and without a mask") {
  KJIT_REQUIRE_GPU();
  std::vector<Unit> units;
  for (std::int64_t m : {1, 16, 49, 64, 100, 197, 256})
    for (std::int64_t n : {m, std::int64_t{128}, std::int64_t{7}}) {
      AttentionCase c = shape(m % 2 ? DType::kF16 : DType::kBF16, 3, 3, m, n, 64, 32);
      c.causal = true;
      units.push_back({c});
      c.mask = true;
      c.mask_windows = 2;
      c.masked_fraction = 0.2;
      c.masked_rows = 0.05;
      units.push_back({c});
    }
  run_units(units);
}

TEST_CASE("[B, N, H, D] layouts, padded rows and odd batch counts") {
  KJIT_REQUIRE_GPU();
  std::vector<Unit> units;
  for (bool interleaved : {false, true})
    for (std::int64_t pad : {0, 8, 24})
      for (std::int64_t batch : {1, 7, 33}) {
        AttentionCase c = shape(batch % 2 ? DType::kBF16 : DType::kF16, batch, 3, 49, 64, 32, 64);
        c.interleaved = interleaved;
        c.row_pad = pad;
        c.bias = true;
        c.bias_dtype = DType::kF16;
        units.push_back({c});
        c = shape(DType::kF16, batch, 12, 197, 197, 64, 64);
        c.interleaved = interleaved;
        c.row_pad = pad;
        units.push_back({c});
      }
  run_units(units);
}

TEST_CASE("large input scales: logits far from zero, sharp and flat softmax rows") {
  KJIT_REQUIRE_GPU();
  std::vector<Unit> units;
  for (double std : {0.05, 4.0, 12.0})
    for (DType dtype : {DType::kF16, DType::kBF16}) {
      AttentionCase c = shape(dtype, 5, 2, 64, 100, 64, 64);
      c.input_std = std;
      units.push_back({c});
      c.scale = 1.0f;  // no 1/sqrt(d): logits of hundreds
      c.d = c.dv = 16;
      units.push_back({c});
    }
  run_units(units);
}

TEST_CASE("large batches: the seed's 16x16 tiles and Swin windows with bias and mask") {
  KJIT_REQUIRE_GPU();
  AttentionCase tiles = shape(DType::kF16, 65536, 1, 16, 16, 16, 16);
  AttentionCase windows = shape(DType::kBF16, 4096, 4, 49, 49, 32, 32);
  windows.bias = windows.mask = true;
  windows.mask_windows = 64;
  windows.masked_fraction = 0.25;
  AttentionCase vit = shape(DType::kBF16, 256, 12, 197, 197, 64, 64);
  run_units({{tiles, {std::nullopt}, 300}, {windows, {std::nullopt}, 200}, {vit, {std::nullopt}, 60}});
}

TEST_CASE("every tuning candidate, forced, matches the reference") {
  KJIT_REQUIRE_GPU();
  std::vector<AttentionCase> cases;
  AttentionCase c = shape(DType::kF16, 37, 4, 49, 49, 32, 32);
  c.bias = c.mask = true;
  c.mask_windows = 5;
  c.masked_rows = 0.1;
  cases.push_back(c);
  cases.push_back(shape(DType::kF16, 301, 1, 16, 16, 16, 16));
  cases.push_back(shape(DType::kBF16, 9, 3, 64, 64, 64, 64));
  cases.push_back(shape(DType::kBF16, 5, 2, 128, 128, 128, 128));
  c = shape(DType::kBF16, 4, 3, 197, 197, 64, 64);
  c.causal = true;
  cases.push_back(c);
  cases.push_back(shape(DType::kF16, 3, 2, 256, 256, 128, 128));
  cases.push_back(shape(DType::kF16, 11, 1, 7, 100, 16, 128));
  std::vector<Unit> units;
  for (const AttentionCase& each : cases) units.push_back({each, every_candidate(each)});
  // Bias and mask held in registers over many rounds: more problems than resident groups, a
  // batch no window count divides, a head count the period multiplies; and the same with bias
  // alone (a period of the heads). A group reading another head's or window's addends fails.
  c = shape(DType::kBF16, 2003, 3, 49, 49, 32, 32);
  c.bias = c.mask = true;
  c.bias_dtype = DType::kF32;
  c.mask_dtype = DType::kBF16;
  c.mask_windows = 7;
  c.masked_rows = 0.05;
  units.push_back({c, every_candidate(c), 700});
  c.mask = false;
  c.causal = true;
  c.batch = 4001;
  units.push_back({c, every_candidate(c), 700});
  // Rows of 7 keys with a bias over many rounds, held: they once failed the tuner's per-element
  // check by a 16-bit probability's rounding, and agree with float64 (compare_output_rows).
  c = shape(DType::kBF16, 4001, 1, 64, 7, 16, 16);
  c.bias = true;
  units.push_back({c, every_candidate(c), 700});
  run_units(units);
}

TEST_CASE("every candidate writes what the reference config writes, as the tuner checks it") {
  // Each query strip goes through the same operations whatever the warps, problems and stages,
  // so the outputs should agree to the byte; the tuner's check (compare_output_rows) allows
  // rounding, and a byte difference is only reported.
  KJIT_REQUIRE_GPU();
  Runtime rt;
  AttentionCase windows = shape(DType::kBF16, 21, 4, 49, 49, 32, 32);
  windows.bias = windows.mask = true;
  windows.mask_windows = 3;
  windows.masked_rows = 0.1;
  AttentionCase long_rows = shape(DType::kF16, 7, 2, 128, 197, 64, 128);
  long_rows.causal = true;
  for (const AttentionCase& c : {windows, long_rows}) {
    AttentionBatch batch(c, test_seed());
    batch.poison(nullptr);
    rt.attention_with_config(batch.args(), AttentionConfig{1, 1, 1}, nullptr);
    synchronize(nullptr);
    const std::vector<unsigned char> reference = batch.output();
    for (const auto& config : every_candidate(c)) {
      CAPTURE(describe(c) + " " + config->to_string());
      batch.poison(nullptr);
      rt.attention_with_config(batch.args(), *config, nullptr);
      synchronize(nullptr);
      const std::vector<unsigned char> got = batch.output();
      CHECK(compare_output_rows(got, reference, c.dtype, static_cast<std::size_t>(c.dv)) == "");
      if (got != reference) MESSAGE("not byte for byte the reference config's output");
    }
  }
}

TEST_CASE("explain names the specialized kernel; a tuning picks a correct candidate") {
  KJIT_REQUIRE_GPU();
  Runtime rt;
  AttentionCase c = shape(DType::kF16, 64, 4, 49, 49, 32, 32);
  c.bias = c.mask = true;
  c.mask_windows = 8;
  AttentionBatch batch(c, test_seed());
  const AttentionKernelReport report = rt.explain_attention(batch.args());
  CHECK(report.name_expression.find("kjit::attention_tile<kjit::f16, 49, 49, 32, 32, 1, 1, false") == 0);
  CHECK(report.spill_bytes == 0);
  const TuneReport<AttentionConfig> tuned = rt.tune_attention(batch.args());
  CHECK(tuned.candidates.size() >= 2);
  for (const auto& candidate : tuned.candidates) CHECK_MESSAGE(candidate.status == "ok", candidate.config.to_string());
  batch.poison(nullptr);
  rt.attention_with_config(batch.args(), tuned.winner, nullptr);
  synchronize(nullptr);
  CHECK(batch.check() == "");
}
