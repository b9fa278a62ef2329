// SPDX-License-Identifier: Apache-2.0
// The tuner on a real GPU: a verified winner at least as fast as the heuristic's pick, a
// candidate that computes a wrong answer never wins, and without the probe's cutoff (`kjit tune
// --time-all`) every candidate is timed in full.
#include <doctest/doctest.h>

#include <limits>

#include "kjit/runtime.hpp"
#include "quick_tuning.h"
#include "support/device_buffer.h"

using namespace kjit;

TEST_CASE("tuning picks a verified winner no slower than the heuristic") {
  KJIT_REQUIRE_GPU();
  Runtime runtime;
  Stream stream = create_stream();
  const TuneReport<KernelConfig> report = runtime.tune(
      RowOp::kSoftmax, DType::kF32, DType::kF32, 512, 4096, test::quick_tune_options(), stream.get());
  REQUIRE(report.candidates.size() >= 2);
  CHECK(report.candidates.front().config == report.heuristic);
  const TuneCandidate<KernelConfig>* winner = report.find(report.winner);
  const TuneCandidate<KernelConfig>* heuristic = report.find(report.heuristic);
  REQUIRE(winner != nullptr);
  REQUIRE(heuristic != nullptr);
  CHECK(winner->status == "ok");
  CHECK(heuristic->status == "ok");
  // The winner is the fastest within noise; the heuristic is always among the candidates.
  CHECK(winner->timing.median_us <= heuristic->timing.median_us * 1.05);
  for (const auto& c : report.candidates)
    if (c.status == "ok") CHECK(winner->timing.median_us <= c.timing.median_us * 1.05);
  MESSAGE("winner " << report.winner.to_string() << " " << winner->timing.median_us
                    << " us; heuristic " << heuristic->timing.median_us << " us");
}

TEST_CASE("a candidate with a wrong answer is rejected and never wins") {
  KJIT_REQUIRE_GPU();
  Runtime runtime;
  Stream stream = create_stream();
  const TuneReport<KernelConfig> first = runtime.tune(
      RowOp::kLogSoftmax, DType::kBF16, DType::kBF16, 64, 2048, test::quick_tune_options(), stream.get());
  TuneOptions<KernelConfig> options = test::quick_tune_options();
  options.sabotage = first.winner;  // the fastest config now writes a wrong element
  const TuneReport<KernelConfig> second = runtime.tune(
      RowOp::kLogSoftmax, DType::kBF16, DType::kBF16, 64, 2048, options, stream.get());
  const TuneCandidate<KernelConfig>* sabotaged = second.find(first.winner);
  REQUIRE(sabotaged != nullptr);
  CHECK(sabotaged->status.rfind("wrong", 0) == 0);
  CHECK(second.winner != first.winner);
  CHECK(second.find(second.winner)->status == "ok");
}

TEST_CASE("without the probe's cutoff every candidate is timed in full") {
  KJIT_REQUIRE_GPU();
  Runtime runtime;
  Stream stream = create_stream();
  TuneOptions<KernelConfig> options = test::quick_tune_options();
  options.probe_cutoff = std::numeric_limits<double>::infinity();  // what `kjit tune --time-all` sets
  const TuneReport<KernelConfig> report =
      runtime.tune(RowOp::kSoftmax, DType::kF32, DType::kF32, 512, 4096, options, stream.get());
  int timed = 0;
  for (const auto& c : report.candidates) {
    if (c.status != "ok") continue;
    CAPTURE(c.config.to_string());
    CHECK(c.timing.samples == options.timing.samples);  // the probe alone takes one sample
    ++timed;
  }
  CHECK(timed >= 2);
}
