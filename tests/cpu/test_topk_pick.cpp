// SPDX-License-Identifier: Apache-2.0
// What the softmax + top-K heuristic promises for every call, checked over a broad sweep (each
// input and index type, max_pack, K bucket and rows bucket, widths log-spaced from 1 to 2^30, the
// nominal sm_80 and sm_90 devices), each call planned as the dispatcher plans it: the pick can
// run and fits the device, the resident kernel only where every row's blocks run at once, it
// heads the tuner's candidates, every candidate can run, and a config named by its algorithm
// alone completes to one that can run, the stream kernel always.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/ops/topk/topk_heuristics.h"
#include "runtime/driver/nominal_device.h"
#include "kjit/kjit.hpp"
#include "runtime/ops/rowwise/rowwise_heuristics.h"
#include "runtime/ops/topk/topk_kernels.h"
#include "support/heuristic_sweep.h"
#include "runtime/parallel_for.h"

using namespace kjit;
using namespace kjit::test;

namespace {

constexpr int kLastRowsBucket = 34;
/// The most values a resident thread holds (32 registers of the row).
constexpr int kResidentValuesPerThread = 32;

std::string describe(const TopkProblem& p, const DeviceProps& device) {
  return std::string(to_string(p.in_dtype)) + "/" + to_string(p.idx_dtype) + " rows=" + std::to_string(p.rows) +
         " cols=" + std::to_string(p.cols) + " k=" + std::to_string(p.k) + " max_pack=" +
         std::to_string(p.max_pack) + " on " + device.name;
}

/// Empty when `c`'s launch fits `device`; otherwise which limit it breaks.
std::string why_not_fits(const TopkProblem& p, const DeviceProps& device, const TopkConfig& c) {
  const LaunchShape shape = topk_launch_shape(p, c);
  if (shape.block < 32 || shape.block > 1024 || shape.block % 32 != 0)
    return "a block of " + std::to_string(shape.block) + " threads";
  if (shape.cluster < 1 || shape.cluster > 16) return "a cluster of " + std::to_string(shape.cluster);
  if (shape.cluster > 1 && device.arch < 90) return "a cluster below sm_90";
  if (shape.dynamic_smem < 0 || shape.dynamic_smem > device.max_smem_per_block)
    return std::to_string(shape.dynamic_smem) + " bytes of dynamic shared memory";
  const std::int64_t rows = std::min(p.rows, topk_rows_per_launch(shape));
  const std::int64_t grid = topk_grid(shape, rows);
  if (rows < 1 || grid < shape.cluster || grid > 0x7fffffff || grid % shape.cluster != 0)
    return "a grid of " + std::to_string(grid) + " blocks";
  if (c.algorithm == TopkAlgorithm::kResident && c.unroll * c.pack > kResidentValuesPerThread)
    return std::to_string(c.unroll * c.pack) + " values a resident thread";
  return {};
}

std::string check_problem(const TopkProblem& p, const DeviceProps& d) {
  const TopkConfig pick = choose_topk_config(p, d);
  const std::string where = describe(p, d) + ", pick " + pick.to_string() + ": ";
  if (pick.algorithm == TopkAlgorithm::kAuto) return where + "algorithm left at auto";
  if (std::string why = why_not_topk(p, d, pick); !why.empty()) return where + why;
  if (std::string fit = why_not_fits(p, d, pick); !fit.empty()) return where + fit;
  // Its clusters wait on each other at every step: one round of them or none.
  if (pick.algorithm == TopkAlgorithm::kResident && p.rows * pick.cluster > d.sm_count)
    return where + "resident, but the rows' blocks do not all fit the SMs";
  if (complete_topk_config(p, d, TopkConfig{}) != pick) return where + "the completion of auto differs";

  const std::vector<TopkConfig> candidates = topk_candidates(p, d);
  if (candidates.empty() || candidates.front() != pick) return where + "not the first candidate";
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const TopkConfig& c = candidates[i];
    if (std::string why = why_not_topk(p, d, c); !why.empty()) return where + "candidate " + c.to_string() + ": " + why;
    if (std::string fit = why_not_fits(p, d, c); !fit.empty()) return where + "candidate " + c.to_string() + ": " + fit;
    if (std::find(candidates.begin(), candidates.begin() + i, c) != candidates.begin() + i)
      return where + "candidate " + c.to_string() + " twice";
  }
  for (TopkAlgorithm algorithm : {TopkAlgorithm::kStream, TopkAlgorithm::kResident}) {
    TopkConfig partial;
    partial.algorithm = algorithm;
    const TopkConfig completed = complete_topk_config(p, d, partial);
    const std::string name = to_string(algorithm);
    if (completed.algorithm != algorithm) return where + name + " completed as " + completed.to_string();
    const std::string why = why_not_topk(p, d, completed);
    // The stream kernel takes any row; the resident one only rows its threads can hold, and
    // says so in the terms of the values a thread or a block holds.
    const bool holding_reason = why.find("hold") != std::string::npos || why.find("register") != std::string::npos ||
                                why.rfind("packs times pack", 0) == 0;
    if (!why.empty() && (algorithm == TopkAlgorithm::kStream || !holding_reason))
      return where + name + " completed as " + completed.to_string() + ": " + why;
    if (why.empty())
      if (std::string fit = why_not_fits(p, d, completed); !fit.empty()) return where + name + ": " + fit;
  }
  return {};
}

struct Case {
  TopkProblem problem;
  DeviceProps device;
};

std::vector<Case> make_sweep() {
  const DeviceProps devices[] = {nominal_device(80), nominal_device(90)};
  const std::vector<std::int64_t> widths = swept_widths();
  const std::vector<std::int64_t> rows = swept_bucket_rows(kLastRowsBucket);
  std::vector<Case> cases;
  std::size_t turn = 0;  // the index type alternates: it changes the kernel, not the choice
  for (const DeviceProps& device : devices)
    for (DType in : {DType::kF32, DType::kF16, DType::kBF16})
      for (int max_pack = 1; max_pack * size_of(in) <= 16; max_pack *= 2)
        for (int k : {1, 32, 33, 64, 128, 256, 512, 1024, 2048, 4096})
          for (std::int64_t cols : widths) {
            if (k > cols) continue;
            for (std::int64_t r : rows) {
              const DType idx = ++turn % 2 ? DType::kI32 : DType::kI64;
              cases.push_back({planned_topk({in, idx, r, cols, k, max_pack}), device});
            }
          }
  return cases;
}

}  // namespace

TEST_CASE("the top-K pick can run, fits the device and heads the candidates, which all can run") {
  const std::vector<Case> cases = make_sweep();
  std::mutex mutex;
  std::vector<std::string> failures;
  std::size_t resident = 0;
  kjit::parallel_for(cases.size(), std::min(4, kjit::hardware_threads()), [&](std::size_t i) {
    std::string why = check_problem(cases[i].problem, cases[i].device);
    const bool held = choose_topk_config(cases[i].problem, cases[i].device).algorithm == TopkAlgorithm::kResident;
    std::lock_guard<std::mutex> lock(mutex);
    resident += held ? 1 : 0;
    if (!why.empty()) failures.push_back(std::move(why));
  });
  std::sort(failures.begin(), failures.end());
  for (std::size_t i = 0; i < failures.size() && i < 20; ++i) FAIL_CHECK(failures[i]);
  CHECK_MESSAGE(failures.empty(), failures.size() << " of " << cases.size() << " calls broke a promise");
  // Both kernels must come up, or half the picks went untested.
  CHECK(resident > 0);
  CHECK(resident < cases.size());
  MESSAGE(cases.size() << " calls checked, " << resident << " resident");
}

TEST_CASE("the top-K device check refuses what does not fit") {
  const DeviceProps h100 = nominal_device(90), a100 = nominal_device(80);
  const TopkProblem p{DType::kF32, DType::kI64, 8, 128256, 50, 4};
  CHECK(why_not_fits(p, h100, {4, 1024, 4, 8, TopkAlgorithm::kResident}).empty());
  CHECK(why_not_fits(p, h100, {4, 2048, 4, 8, TopkAlgorithm::kResident}).find("block") != std::string::npos);
  CHECK(why_not_fits(p, a100, {4, 512, 4, 2, TopkAlgorithm::kStream}).find("cluster") != std::string::npos);
  CHECK(why_not_fits(p, h100, {4, 512, 4, 32, TopkAlgorithm::kStream}).find("cluster") != std::string::npos);
  CHECK(why_not_fits(p, h100, {4, 1024, 16, 8, TopkAlgorithm::kResident}).find("values") != std::string::npos);
  const TopkProblem big_k{DType::kF32, DType::kI64, 8, 128256, 4096, 4};
  CHECK(why_not_fits(big_k, a100, {4, 1024, 8, 1, TopkAlgorithm::kStream}).find("shared memory") !=
        std::string::npos);
}
