// SPDX-License-Identifier: Apache-2.0
// Every fused softmax + top-K variant compiles under NVRTC for sm_80 (one block per row) and
// sm_90 (clusters too): both algorithms, each input and index type, each K bucket, the
// heuristic's picks at the benchmark's shapes and every candidate of one shape. Needs NVRTC
// only, no GPU.
#include <doctest/doctest.h>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "kjit/kjit.hpp"
#include "support/compile_pool.h"
#include "runtime/compiler/kernel_compiler.h"
#include "runtime/driver/cuda_api.h"
#include "runtime/driver/nominal_device.h"
#include "runtime/ops/rowwise/rowwise_heuristics.h"
#include "runtime/ops/topk/topk_heuristics.h"
#include "runtime/ops/topk/topk_kernels.h"

using namespace kjit;

namespace {

constexpr int kPoolThreads = 2;

struct Variant {
  TopkProblem problem;
  TopkConfig config;
  int arch = 0;
  std::string error;
  CompiledKernel kernel;
};

std::string describe(const Variant& v) {
  return std::string(to_string(v.problem.in_dtype)) + "/" + to_string(v.problem.idx_dtype) +
         " rows=" + std::to_string(v.problem.rows) + " cols=" + std::to_string(v.problem.cols) +
         " k=" + std::to_string(v.problem.k) + " " + v.config.to_string() + " sm_" +
         std::to_string(v.arch);
}

TopkProblem problem_of(DType in, DType idx, std::int64_t rows, std::int64_t cols, int k) {
  return {in, idx, rows, cols, k, 16 / size_of(in)};
}

// The heuristic's pick, and its completion of the other algorithm where that can run.
void add_heuristic(std::vector<Variant>& variants, int arch, const TopkProblem& problem) {
  const DeviceProps device = nominal_device(arch);
  const TopkConfig config = choose_topk_config(problem, device);
  REQUIRE_MESSAGE(why_not_topk(problem, device, config).empty(), config.to_string());
  variants.push_back({problem, config, arch, {}, {}});
  for (TopkAlgorithm algorithm : {TopkAlgorithm::kStream, TopkAlgorithm::kResident}) {
    if (algorithm == config.algorithm) continue;
    TopkConfig other;
    other.algorithm = algorithm;
    other = complete_topk_config(problem, device, other);
    if (why_not_topk(problem, device, other).empty()) variants.push_back({problem, other, arch, {}, {}});
  }
}

std::vector<Variant> all_variants() {
  std::vector<Variant> variants;
  for (int arch : {80, 90}) {
    for (DType in : {DType::kF32, DType::kF16, DType::kBF16})
      for (DType idx : {DType::kI32, DType::kI64})
        add_heuristic(variants, arch, problem_of(in, idx, 8, 50257, 50));
    for (int k : {1, 2, 50, 256, 1000, 1024, 2048, 4096})
      add_heuristic(variants, arch, problem_of(DType::kF32, DType::kI64, 1, 151936, k));
    for (std::int64_t rows : {1, 8, 64, 256})
      add_heuristic(variants, arch, problem_of(DType::kF32, DType::kI64, rows, 128256, 50));
    add_heuristic(variants, arch, problem_of(DType::kBF16, DType::kI64, 64, 32000, 256));
    add_heuristic(variants, arch, problem_of(DType::kF16, DType::kI32, 64, 50257, 50));
    for (int k : {256, 1024})  // over 13 blocks on sm_90
      add_heuristic(variants, arch, problem_of(DType::kF32, DType::kI64, 1, 50257, k));
    for (std::int64_t cols : {1, 7, 1000})
      add_heuristic(variants, arch, problem_of(DType::kF32, DType::kI32, 3, cols, static_cast<int>(cols)));
    // Rows off the alignment: the stream kernel shifted, at small and large k buckets.
    for (DType in : {DType::kF32, DType::kF16, DType::kBF16})
      for (int k : {50, 1024}) {
        TopkProblem odd = problem_of(in, DType::kI64, 256, 50257, k);
        odd.max_pack = 1;
        add_heuristic(variants, arch, odd);
      }
  }
  // Every tuning candidate of one wide shape on sm_90.
  const TopkProblem wide = problem_of(DType::kF32, DType::kI64, 8, 128256, 50);
  for (const TopkConfig& config : topk_candidates(wide, nominal_device(90)))
    variants.push_back({wide, config, 90, {}, {}});
  return variants;
}

std::string check_compiled(const Variant& v) {
  if (!v.error.empty()) return "compile failed: " + v.error;
  const CompiledKernel& k = v.kernel;
  if (k.cubin.size() < 4 || std::string(k.cubin.data(), 4) != "\x7f" "ELF") return "cubin is not an ELF image";
  if (!k.usage.found) return driver_available() ? std::string() : "no ptxas resource report";
  if (k.usage.registers * v.config.threads > 65536)
    return std::to_string(k.usage.registers) + " registers x " + std::to_string(v.config.threads) +
           " threads exceed the register file";
  const int smem = k.usage.static_smem + topk_launch_shape(v.problem, v.config).dynamic_smem;
  if (smem > nominal_device(v.arch).max_smem_per_block)
    return "needs " + std::to_string(smem) + " bytes of shared memory";
  return {};
}

}  // namespace

TEST_CASE("every top-K variant compiles for sm_80 and sm_90") {
  std::vector<Variant> variants = all_variants();
  test::compile_variants(variants, kPoolThreads,
                         [](const Variant& v) { return topk_kernel_spec(v.problem, v.config); });
  std::set<std::pair<TopkAlgorithm, int>> clusters_seen;
  for (const Variant& v : variants) {
    const std::string why = check_compiled(v);
    CHECK_MESSAGE(why.empty(), describe(v) << ": " << why);
    if (why.empty()) clusters_seen.insert({v.config.algorithm, v.config.cluster});
    if (v.kernel.usage.spill_stores + v.kernel.usage.spill_loads > 0)
      MESSAGE("spills: " << describe(v));
  }
  MESSAGE(variants.size() << " top-K kernels compiled");
  for (TopkAlgorithm algorithm : {TopkAlgorithm::kStream, TopkAlgorithm::kResident})
    for (int cluster : {1, 2, 4, 8, 16})
      CHECK_MESSAGE(clusters_seen.count({algorithm, cluster}),
                    "no " << std::string(to_string(algorithm)) << " kernel with cluster=" << cluster);
  CHECK_MESSAGE(clusters_seen.count({TopkAlgorithm::kResident, 13}),
                "no resident kernel over a cluster of 13 (not a power of two)");
}

TEST_CASE("top-K grids give every row a cluster, a launch at most 2^31 - 1 blocks") {
  LaunchShape shape;
  shape.cluster = 16;
  CHECK(topk_rows_per_launch(shape) == 0x7fffffff / 16);
  CHECK(topk_grid(shape, 3) == 3u * 16);
  CHECK(topk_grid(shape, topk_rows_per_launch(shape)) <= 0x7fffffffu);
  shape.cluster = 1;
  CHECK(topk_rows_per_launch(shape) == 0x7fffffff);
  CHECK(topk_grid(shape, 300) == 300u);
}
