// SPDX-License-Identifier: Apache-2.0
// What the row-wise heuristic promises for every problem, checked over a broad sweep (every op,
// dtype pair, max_pack and rows bucket, widths log-spaced from 1 to 2^30, the nominal sm_80 and
// sm_90 devices): its pick can run and fits the device, it heads the tuner's candidates, every
// candidate can run, and completing a config named by its algorithm alone gives one that can
// run or says why not in that algorithm's own terms.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_set>
#include <vector>

#include "runtime/driver/nominal_device.h"
#include "kjit/kjit.hpp"
#include "rowwise_fit.h"
#include "runtime/ops/rowwise/rowwise_heuristics.h"
#include "support/heuristic_sweep.h"
#include "runtime/parallel_for.h"

using namespace kjit;
using namespace kjit::test;

namespace {

constexpr Algorithm kConcreteAlgorithms[] = {
    Algorithm::kWarp,    Algorithm::kBlockRegs,   Algorithm::kBlockSmem, Algorithm::kBlockOnline,
    Algorithm::kCluster, Algorithm::kClusterSmem, Algorithm::kStream,    Algorithm::kRing,
    Algorithm::kBlockSplit};
constexpr RowOp kOps[] = {RowOp::kSoftmax, RowOp::kLogSoftmax, RowOp::kReduceScale};
// Rows up to 2^34: past 2^31 blocks every per-row grid is refused, and nothing changes after.
constexpr int kLastRowsBucket = 34;

/// Why the algorithm-only completion of `algorithm` is a defect, or empty. A completion may be
/// refused only for a reason of that algorithm's own ("ring: ...") or for the alignment's pack.
std::string check_completion(const RowwiseProblem& p, const DeviceProps& d, Algorithm algorithm) {
  const KernelConfig completed = complete_rowwise_config(p, d, KernelConfig{algorithm});
  const std::string name = to_string(algorithm);
  if (completed.algorithm != algorithm) return name + " completed as " + completed.to_string();
  const std::string why = why_not_rowwise(p, d, completed);
  if (why.empty()) {
    if (std::string fit = why_not_fits(p, d, completed); !fit.empty())
      return name + " completed as " + completed.to_string() + ", valid but " + fit;
    return {};
  }
  const bool own_reason = why.rfind(name + ": ", 0) == 0;
  const bool pack_reason = why.rfind("pack ", 0) == 0 || why.rfind("a pack ", 0) == 0;
  if (!own_reason && !pack_reason) return name + " completed as " + completed.to_string() + ": " + why;
  // block_online reads the row twice, so it runs every width and every alignment.
  if (algorithm == Algorithm::kBlockOnline) return "block_online refused: " + why;
  return {};
}

/// Every promise about one problem; empty when all hold.
std::string check_problem(const RowwiseProblem& p, const DeviceProps& d) {
  const KernelConfig pick = choose_rowwise_config(p, d);
  const std::string where = describe(p, d) + ", pick " + pick.to_string() + ": ";
  if (pick.algorithm == Algorithm::kAuto) return where + "algorithm left at auto";
  if (std::string why = why_not_rowwise(p, d, pick); !why.empty()) return where + why;
  if (std::string fit = why_not_fits(p, d, pick); !fit.empty()) return where + fit;
  const bool in_registers = pick.algorithm == Algorithm::kWarp || pick.algorithm == Algorithm::kBlockRegs ||
                            pick.algorithm == Algorithm::kCluster;
  if (in_registers && row_registers(p, pick) > kPickHeldRegisters)
    return where + std::to_string(row_registers(p, pick)) + " registers of held values";
  if (complete_rowwise_config(p, d, KernelConfig{}) != pick) return where + "the completion of auto differs";

  const std::vector<KernelConfig> candidates = rowwise_candidates(p, d);
  if (candidates.empty() || candidates.front() != pick) return where + "not the first candidate";
  std::unordered_set<KernelConfig, KernelConfigHash> seen;
  for (const KernelConfig& c : candidates) {
    if (std::string why = why_not_rowwise(p, d, c); !why.empty())
      return where + "candidate " + c.to_string() + ": " + why;
    if (std::string fit = why_not_fits(p, d, c); !fit.empty())
      return where + "candidate " + c.to_string() + ": " + fit;
    if (!seen.insert(c).second) return where + "candidate " + c.to_string() + " twice";
  }
  for (Algorithm algorithm : kConcreteAlgorithms)
    if (std::string why = check_completion(p, d, algorithm); !why.empty()) return where + why;
  return {};
}

struct Case {
  RowwiseProblem problem;
  DeviceProps device;
};

/// Widths up to 2^18 meet every op, dtype pair, max_pack, rows bucket and device. The heuristic's
/// cost grows with the width (block_split's fitting tries every staged count), so each wider
/// width meets two of them, taken in turn, so that every op, pair, pack, bucket and device still
/// comes up among the wide widths.
std::vector<Case> make_sweep() {
  constexpr std::int64_t kDenseCols = std::int64_t{1} << 18;
  const DeviceProps devices[] = {nominal_device(80), nominal_device(90)};
  const std::vector<std::int64_t> rows = swept_bucket_rows(kLastRowsBucket);
  const std::vector<std::int64_t> widths = swept_widths();
  std::vector<Case> dense, all_wide;
  for (const DeviceProps& device : devices)
    for (DTypePair d : float_dtype_pairs())
      for (int max_pack : swept_packs(d.in, d.out))
        for (RowOp op : kOps)
          for (std::int64_t r : rows)
            for (std::int64_t cols : widths) {
              const RowwiseProblem p{op, d.in, d.out, r, cols, max_pack};
              (cols <= kDenseCols ? dense : all_wide).push_back({p, device});
            }
  // all_wide holds every combination for each wide width in the same order; take two of each
  // width's, stepping through the combinations with a stride prime to their count.
  std::vector<Case> cases = std::move(dense);
  const auto wide = static_cast<std::size_t>(
      std::count_if(widths.begin(), widths.end(), [](std::int64_t c) { return c > kDenseCols; }));
  if (wide == 0) return cases;
  const std::size_t combos = all_wide.size() / wide;
  std::size_t next = 0;
  for (std::size_t w = 0; w < wide; ++w)
    for (int k = 0; k < 2; ++k, next += 7919) cases.push_back(all_wide[(next % combos) * wide + w]);
  return cases;
}

}  // namespace

TEST_CASE("the pick can run, fits the device and heads the candidates, which all can run") {
  const std::vector<Case> cases = make_sweep();
  std::mutex mutex;
  std::vector<std::string> failures;
  std::unordered_set<int> picked;
  kjit::parallel_for(cases.size(), std::min(4, kjit::hardware_threads()), [&](std::size_t i) {
    const Case& c = cases[i];
    std::string why = check_problem(c.problem, c.device);
    const Algorithm algorithm = choose_rowwise_config(c.problem, c.device).algorithm;
    std::lock_guard<std::mutex> lock(mutex);
    picked.insert(static_cast<int>(algorithm));
    if (!why.empty()) failures.push_back(std::move(why));
  });
  std::sort(failures.begin(), failures.end());
  for (std::size_t i = 0; i < failures.size() && i < 20; ++i) FAIL_CHECK(failures[i]);
  CHECK_MESSAGE(failures.empty(), failures.size() << " of " << cases.size() << " problems broke a promise");
  // A sweep that missed an algorithm would leave its picks untested.
  for (Algorithm algorithm : kConcreteAlgorithms) {
    if (algorithm == Algorithm::kStream) continue;  // a tuning candidate only (README)
    CHECK_MESSAGE(picked.count(static_cast<int>(algorithm)), "never picked: " << std::string(to_string(algorithm)));
  }
  MESSAGE(cases.size() << " problems checked");
}

TEST_CASE("the device checks above refuse what does not fit") {
  // The fit check must be able to fail: configs just past each limit.
  const DeviceProps h100 = nominal_device(90), a100 = nominal_device(80);
  const RowwiseProblem p{RowOp::kSoftmax, DType::kF32, DType::kF32, 64, 262144, 4};
  CHECK(why_not_fits(p, h100, {Algorithm::kRing, 4, 1024, 1024, 16}).find("block") != std::string::npos);
  CHECK(why_not_fits(p, h100, {Algorithm::kBlockSmem, 4, 512, 512, 1}).find("shared memory") != std::string::npos);
  CHECK(why_not_fits(p, a100, {Algorithm::kCluster, 4, 1024, 1024, 2}).find("cluster") != std::string::npos);
  CHECK(why_not_fits(p, h100, {Algorithm::kCluster, 4, 1024, 1024, 2}).find("registers") != std::string::npos);
  CHECK(why_not_fits(p, h100, {Algorithm::kCluster, 4, 1024, 1024, 32}).find("cluster") != std::string::npos);
  const RowwiseProblem many{RowOp::kSoftmax, DType::kF32, DType::kF32, std::int64_t{1} << 30, 4096, 4};
  CHECK(why_not_fits(many, h100, {Algorithm::kCluster, 4, 128, 128, 4, ClusterGrid::kPerRow}).find("grid") !=
        std::string::npos);
  CHECK(why_not_fits(p, h100, {Algorithm::kWarp, 4, 128, 48, 1}).find("groups") != std::string::npos);
  const RowwiseProblem bf16{RowOp::kSoftmax, DType::kBF16, DType::kBF16, 64, 16384, 8};
  CHECK(why_not_fits(bf16, h100, {Algorithm::kBlockRegs, 8, 128, 128, 1}).empty());  // 64 registers of words
  CHECK(why_not_fits(bf16, h100, {Algorithm::kBlockRegs, 1, 128, 128, 1}).find("registers") != std::string::npos);
  // 15 of 16 packs held: 60 registers of words, 84 with the rest, at 1024 threads.
  const RowwiseProblem wide{RowOp::kSoftmax, DType::kBF16, DType::kBF16, 64, 131072, 8};
  CHECK(why_not_fits(wide, h100, {Algorithm::kBlockSplit, 8, 1024, 1024, 1, ClusterGrid::kResident, 1})
            .find("more registers than an SM has") != std::string::npos);
  CHECK(why_not_fits(p, h100, {Algorithm::kRing, 4, 512, 512, 2}).find("ring values") != std::string::npos);
}
